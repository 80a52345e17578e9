package respire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// writeGate is an Options.Dialer to the standalone server whose
// connections record the first argument of each command they write and,
// once armed, stand for a server that stopped reading: the write of a
// command whose first argument is the armed one blocks until the release.
// Armed for dials, it holds new dials until the release instead.
type writeGate struct {
	mu      sync.Mutex
	arg     string        // the argument whose write blocks
	dials   bool          // hold dials instead
	release chan struct{} // closed by the release
	written []string      // first arguments written, in order
	stuck   chan struct{} // receives when a write or dial starts to wait
}

func newWriteGate() *writeGate { return &writeGate{stuck: make(chan struct{}, 1)} }

// arm makes the writes of arg (or, with arg "", the dials) wait until
// the returned release (idempotent) is called.
func (g *writeGate) arm(arg string, dials bool) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := make(chan struct{})
	g.arg, g.dials, g.release = arg, dials, ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// wait blocks while held says the gate holds, signalling stuck.
func (g *writeGate) wait(held func() bool) {
	g.mu.Lock()
	ch := g.release
	hold := ch != nil && held()
	g.mu.Unlock()
	if !hold {
		return
	}
	select {
	case <-ch:
		return // released
	default:
	}
	select {
	case g.stuck <- struct{}{}:
	default: // a signal not yet taken says as much
	}
	<-ch
}

func (g *writeGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.wait(func() bool { return g.dials })
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &writeGatedConn{Conn: nc, g: g}, nil
}

// wrote reports whether a command with the first argument arg was
// written.
func (g *writeGate) wrote(arg string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.written, arg)
}

// commandsIn returns the commands encoded in p that have an argument,
// each as its name and arguments.
func commandsIn(p []byte) [][]string {
	var cmds [][]string
	rd := resp.NewReader(bytes.NewReader(p))
	for {
		args, _, err := rd.ReadCommand(nil)
		if err != nil {
			return cmds
		}
		if len(args) < 2 {
			continue
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		cmds = append(cmds, cmd)
	}
}

type writeGatedConn struct {
	net.Conn
	g *writeGate
}

func (c *writeGatedConn) Write(p []byte) (int, error) {
	var args []string
	for _, cmd := range commandsIn(p) {
		args = append(args, cmd[1])
	}
	c.g.wait(func() bool { return !c.g.dials && slices.Contains(args, c.g.arg) })
	c.g.mu.Lock()
	c.g.written = append(c.g.written, args...)
	c.g.mu.Unlock()
	return c.Conn.Write(p)
}

// doneAsked is a context that signals when its Done channel is first
// asked for: a call that selects on it is about to wait.
type doneAsked struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *doneAsked) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// subscribeWaiting starts sub.Subscribe of name with a context of its
// own and returns once the call asked for the context's Done channel
// (it is about to wait on it): with its result and the context's cancel.
func subscribeWaiting(t *testing.T, ctx context.Context, sub *Subscription, name string) (<-chan error, context.CancelFunc) {
	t.Helper()
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	dctx := &doneAsked{Context: cctx, asked: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- sub.Subscribe(dctx, name) }()
	select {
	case <-dctx.asked:
	case err := <-errc:
		t.Fatalf("Subscribe of %s returned %v before its context ended", name, err)
	case <-time.After(10 * time.Second): // a failsafe, not a synchronisation
		t.Fatalf("Subscribe of %s never watched its context", name)
	}
	return errc, cancel
}

// TestSubscriptionChangeLeavesWaitForStuckWrite: with no HealthTimeout,
// a Subscribe that waits for the write lock held by a write the server
// does not take (it stopped reading) returns once its context ends, while
// the write is still stuck, with a *ContextError matching context.Canceled
// that sent nothing; it changed nothing. Once the server reads again, the
// stuck Subscribe and later changes are answered by their own
// confirmations, and messages arrive for exactly the names subscribed.
func TestSubscriptionChangeLeavesWaitForStuckWrite(t *testing.T) {
	ctx := testCtx(t)
	a, b, d, e := key(t, "a"), key(t, "b"), key(t, "d"), key(t, "e")
	g := newWriteGate()
	c := newClient(t, Options{Dialer: g.dial, HealthTimeout: NoTimeout})
	sub, err := c.Subscribe(ctx, a)
	must(t, err)
	defer sub.Close()
	release := g.arm(b, false)
	defer release()
	stuck := make(chan error, 1)
	go func() { stuck <- sub.Subscribe(ctx, b) }()
	<-g.stuck // the Subscribe of b holds the write lock, its write stuck

	errc, cancel := subscribeWaiting(t, ctx, sub, d)
	cancel()
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("Subscribe behind a stuck write outlived its context")
	}
	var ce *ContextError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
		t.Fatalf("Subscribe cancelled behind a stuck write = %v, want a *ContextError matching context.Canceled, not sent", err)
	}
	select {
	case err := <-stuck:
		t.Fatalf("the stuck Subscribe returned %v before the server read again", err)
	default:
	}
	if sub.subscribed(kindChannel, d) {
		t.Errorf("%s is in the set after its Subscribe left before writing", d)
	}

	release()
	must(t, <-stuck)
	must(t, sub.Unsubscribe(ctx, a))
	must(t, sub.Subscribe(ctx, e))
	if g.wrote(d) {
		t.Errorf("SUBSCRIBE %s was written after its call left", d)
	}
	for _, ch := range []string{a, d} {
		n, err := c.Publish(ctx, ch, "to "+ch)
		must(t, err)
		if n != 0 {
			t.Errorf("PUBLISH %s reached %d subscribers, want none", ch, n)
		}
	}
	for _, ch := range []string{b, e} {
		_, err := c.Publish(ctx, ch, "to "+ch)
		must(t, err)
	}
	for _, want := range []string{b, e} {
		select {
		case m := <-sub.Channel():
			if m.Gap || m.Channel != want {
				t.Fatalf("event %+v, want the message of %s (published in that order, after those of %s and %s)", m, want, a, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no message of %s", want)
		}
	}
}

// TestSubscriptionChangeWithoutConnectionNotSent: a Subscribe made while
// the subscription has no connection (a redial in progress) writes
// nothing: its context ending reports a *ContextError that was not sent.
// The name is in the set at once, as documented, so the reconnection
// subscribes it.
func TestSubscriptionChangeWithoutConnectionNotSent(t *testing.T) {
	ctx := testCtx(t)
	a, b := key(t, "a"), key(t, "b")
	g := newWriteGate()
	c := newClient(t, Options{Dialer: g.dial})
	sub, err := c.Subscribe(ctx, a)
	must(t, err)
	defer sub.Close()
	release := g.arm("", true)
	defer release()
	sub.mu.Lock()
	nc := sub.conn
	sub.mu.Unlock()
	_ = nc.Close()
	<-g.stuck // the reconnection dials: no connection meanwhile

	errc, cancel := subscribeWaiting(t, ctx, sub, b)
	// Asked for Done, the call is waiting for the write lock (free) or
	// for the confirmation: cancelled in either place it sent nothing.
	cancel()
	err = <-errc
	var ce *ContextError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || ce.Sent || MayHaveExecuted(err) {
		t.Fatalf("Subscribe without a connection, cancelled = %v, want a *ContextError matching context.Canceled, not sent", err)
	}
	if g.wrote(b) {
		t.Fatalf("SUBSCRIBE %s was written with no connection", b)
	}
	release()
	must(t, sub.Subscribe(ctx, key(t, "c"))) // answered once the reconnection is up
	inSet := sub.subscribed(kindChannel, b)
	_, err = c.Publish(ctx, b, "to b")
	must(t, err)
	_, err = c.Publish(ctx, a, "to a")
	must(t, err)
	want := []string{a}
	if inSet {
		want = []string{b, a}
	}
	for i := 0; i <= len(want); i++ {
		select {
		case m := <-sub.Channel():
			if i == 0 {
				if !m.Gap {
					t.Fatalf("first event %+v, want the gap", m)
				}
				continue
			}
			if m.Gap || m.Channel != want[i-1] {
				t.Fatalf("event %+v, want the message of %s (%s in the set: %v)", m, want[i-1], b, inSet)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %d", i)
		}
	}
}

// goroutineIn reports whether a goroutine's stack holds every one of
// funcs (qualified function names).
func goroutineIn(funcs ...string) bool {
	for g := range strings.SplitSeq(allStacks(), "\n\n") {
		all := true
		for _, f := range funcs {
			all = all && strings.Contains(g, f+"(")
		}
		if all {
			return true
		}
	}
	return false
}

// awaitReconnectLocking returns once the subscription's reconnection
// waits for the write lock (a goroutine of reconnect is in lockWrite);
// failing, it calls release first.
func awaitReconnectLocking(t *testing.T, release func()) {
	t.Helper()
	end := time.Now().Add(10 * time.Second) // a failsafe, not a synchronisation
	for !goroutineIn("respire.(*Subscription).reconnect", "respire.(*Subscription).lockWrite") {
		if time.Now().After(end) {
			release()
			t.Fatal("the reconnection never waited for the write lock")
		}
		runtime.Gosched()
	}
}

// TestSubscriptionReconnectWaitForWriteLockEndsWithClose: a reconnection
// that dialed while a Subscribe holds the write lock (its write on the
// lost connection not yet returned) waits for it; once the write
// returns, the reconnection subscribes the whole set, the Subscribe
// included, and delivers the gap. A Close made while a reconnection
// waits so returns at once, with the write still held, and ends the
// reconnection (goleak in TestMain checks that nothing is left); the
// held Subscribe then returns ErrClosed.
func TestSubscriptionReconnectWaitForWriteLockEndsWithClose(t *testing.T) {
	ctx := testCtx(t)
	a, b, d := key(t, "a"), key(t, "b"), key(t, "d")
	g := newWriteGate()
	c := newClient(t, Options{Dialer: g.dial, HealthTimeout: NoTimeout})
	sub, err := c.Subscribe(ctx, a)
	must(t, err)
	defer sub.Close()
	// hold starts a Subscribe of name whose write the gate holds, then
	// closes the connection under it: the reconnection dials and waits
	// for the write lock.
	hold := func(name string) (<-chan error, func()) {
		release := g.arm(name, false)
		errc := make(chan error, 1)
		go func() { errc <- sub.Subscribe(ctx, name) }()
		<-g.stuck
		sub.mu.Lock()
		nc := sub.conn
		sub.mu.Unlock()
		_ = nc.Close()
		awaitReconnectLocking(t, release)
		return errc, release
	}

	errc, release := hold(b)
	release()
	if err := <-errc; err != nil {
		t.Fatalf("Subscribe of %s held across a reconnection = %v, want its confirmation on the new connection", b, err)
	}
	select {
	case m := <-sub.Channel():
		if !m.Gap {
			t.Fatalf("first event after the reconnection %+v, want the gap", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no gap after the reconnection")
	}
	_, err = c.Publish(ctx, b, "to b")
	must(t, err)
	select {
	case m := <-sub.Channel():
		if m.Gap || m.Channel != b {
			t.Fatalf("event %+v, want the message of %s", m, b)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no message of %s", b)
	}

	errc, release = hold(d)
	defer release()
	closed := make(chan error, 1)
	go func() { closed <- sub.Close() }()
	select {
	case err := <-closed:
		must(t, err)
	case <-time.After(10 * time.Second):
		release() // lets Close end, so that the failure is reported
		t.Fatal("Close waited for a reconnection waiting for the write lock")
	}
	release()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe held across Close = %v, want ErrClosed", err)
	}
	for range sub.Channel() { // closed by Close: this ends
	}
}
