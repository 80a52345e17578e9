package respire

// Pub/sub against the real server: order and completeness under load,
// reconnection with a reported gap, confirmations and PINGs kept inside,
// isolation between subscriptions, and bad input sending nothing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// publishPipelined publishes n messages "0".."n-1" to channel (SPUBLISH
// when shard) on a raw connection of its own, pipelined, and checks every
// reply.
func publishPipelined(t *testing.T, addr, channel string, n int, shard bool) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	cmd := "PUBLISH"
	if shard {
		cmd = "SPUBLISH"
	}
	errs := make(chan error, 1)
	go func() {
		var b []byte
		for i := range n {
			b = append(b, encodeCommand(cmd, []string{channel, strconv.Itoa(i)})...)
			if len(b) > 64<<10 || i == n-1 {
				if _, err := nc.Write(b); err != nil {
					errs <- err
					return
				}
				b = b[:0]
			}
		}
		errs <- nil
	}()
	rd := resp.NewReader(nc)
	for i := range n {
		v, err := rd.ReadValue()
		if err != nil || v.IsError() {
			return fmt.Errorf("reply %d to %s: %v %s", i, cmd, err, v.Text())
		}
	}
	return <-errs
}

// receiveInOrder reads n messages and checks that payloads count up from 0.
func receiveInOrder(s *Subscription, n int) error {
	for want := range n {
		m, ok := <-s.Channel()
		switch {
		case !ok:
			return fmt.Errorf("channel closed after %d messages", want)
		case m.Gap:
			return fmt.Errorf("gap after %d messages: %v", want, m.Err)
		case m.Payload != strconv.Itoa(want):
			return fmt.Errorf("message %d: payload %q on %s (pattern %q), want %d", want, m.Payload, m.Channel, m.Pattern, want)
		}
	}
	return nil
}

func TestSubscriptionsReceiveEveryMessageInOrderUnderLoad(t *testing.T) {
	addr := standaloneAddr(t)
	const n = 100_000
	c := newClient(t, Options{})
	ctx := testCtx(t)
	prefix := key(t)
	subs := []struct {
		name    string
		open    func() (*Subscription, error)
		publish string
		shard   bool
	}{
		{"channel A", func() (*Subscription, error) { return c.Subscribe(ctx, prefix+"a") }, prefix + "a", false},
		{"channel B", func() (*Subscription, error) { return c.Subscribe(ctx, prefix+"b") }, prefix + "b", false},
		{"pattern", func() (*Subscription, error) { return c.PSubscribe(ctx, escapeGlob(prefix)+"p:*") }, prefix + "p:x", false},
		{"shard", func() (*Subscription, error) { return c.SSubscribe(ctx, prefix+"s") }, prefix + "s", true},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	for i, sc := range subs {
		s, err := sc.open()
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		wg.Go(func() { errs[i] = receiveInOrder(s, n) })
		wg.Go(func() {
			if err := publishPipelined(t, addr, sc.publish, n, sc.shard); err != nil && errs[i] == nil {
				errs[i] = err
			}
		})
	}
	// 64 goroutines use the same client's shared connection meanwhile,
	// with a context that only the end of the subscriptions' work ends:
	// how long that work takes depends on the machine's load, not on
	// the client.
	loadCtx, endLoad := context.WithCancel(context.Background())
	defer endLoad()
	stop := make(chan struct{})
	var load sync.WaitGroup
	var bad atomic.Int64
	var firstBad atomic.Pointer[string]
	fail := func(what string) {
		bad.Add(1)
		firstBad.CompareAndSwap(nil, &what)
	}
	for g := range 64 {
		load.Go(func() {
			k, v := key(t, "load", strconv.Itoa(g)), "v"+strconv.Itoa(g)
			for !stopped(stop) {
				if err := c.Set(loadCtx, k, v); err != nil {
					fail(fmt.Sprintf("SET: %v", err))
				}
				if got, err := c.Get(loadCtx, k); err != nil || got != v {
					fail(fmt.Sprintf("GET = %q, %v; want %q", got, err, v))
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	load.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", subs[i].name, err)
		}
	}
	if bad.Load() > 0 {
		t.Errorf("%d GET/SET calls failed or got a wrong value alongside the subscriptions, the first: %s", bad.Load(), *firstBad.Load())
	}
}

// waitSubscribers polls PUBSUB NUMSUB until channel has n subscribers.
func waitSubscribers(t *testing.T, c *Client, channel string, n int64) {
	t.Helper()
	ctx := testCtx(t)
	for {
		m, err := c.PubSubNumSub(ctx, channel)
		if err != nil {
			t.Fatal(err)
		}
		if m[channel] == n {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never had %d subscribers", channel, n)
		}
	}
}

func TestSubscriptionReconnectsReportsGapAndResumes(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			addr := standaloneAddr(t)
			c := newClient(t, Options{Protocol: p})
			ctx := testCtx(t)
			ch, pat := key(t, "ch"), key(t, "pat")+":*"
			s, err := c.Subscribe(ctx, ch)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.PSubscribe(ctx, escapeGlob(pat[:len(pat)-2])+":*"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Publish(ctx, ch, "before"); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); m.Payload != "before" || m.Channel != ch {
				t.Fatalf("first message %+v", m)
			}
			s.mu.Lock()
			id := s.id
			s.mu.Unlock()
			if n, err := admin(t, addr, "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10)).Int64(); err != nil || n != 1 {
				t.Fatalf("CLIENT KILL ID %d = %d, %v", id, n, err)
			}
			m := <-s.Channel()
			if !m.Gap || m.Err == nil || m.Payload != "" {
				t.Fatalf("after the kill: %+v, want one gap event with its cause", m)
			}
			waitSubscribers(t, c, ch, 1)
			if _, err := c.Publish(ctx, ch, "after"); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); m.Payload != "after" || m.Gap {
				t.Fatalf("after resubscribing: %+v, want the message published after", m)
			}
			// The pattern was resubscribed too.
			if _, err := c.Publish(ctx, pat[:len(pat)-2]+":x", "via pattern"); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); m.Payload != "via pattern" || m.Pattern == "" {
				t.Fatalf("pattern after resubscribing: %+v", m)
			}
		})
	}
}

func TestSubscriptionKeepsConfirmationsAndPingsInside(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Protocol: p})
			ctx := testCtx(t)
			a, b := key(t, "a"), key(t, "b")
			s, err := c.Subscribe(ctx, a, b)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Unsubscribe(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.Subscribe(ctx, b); err != nil { // confirmations again
				t.Fatal(err)
			}
			if err := s.Unsubscribe(ctx, b); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			nc := s.conn
			s.mu.Unlock()
			if err := s.ping(nc, encodeCommand("PING", nil), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Publish(ctx, b, "unsubscribed"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Publish(ctx, a, "one"); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); m.Payload != "one" || m.Channel != a {
				t.Fatalf("first event %+v: want a's message (no confirmation, PING reply, or unsubscribed channel)", m)
			}
		})
	}
}

func TestSubscriptionsAreIsolatedAndClose(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	a, b := key(t, "a"), key(t, "b")
	sa, err := c.Subscribe(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := c.Subscribe(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := c.Publish(ctx, a, "a"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Publish(ctx, b, "b"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if m := <-sa.Channel(); m.Channel != a || m.Payload != "a"+strconv.Itoa(i) {
			t.Fatalf("subscription a got %+v", m)
		}
		if m := <-sb.Channel(); m.Channel != b || m.Payload != "b"+strconv.Itoa(i) {
			t.Fatalf("subscription b got %+v", m)
		}
	}
	must(t, sa.Close())
	must(t, sa.Close())
	if _, ok := <-sa.Channel(); ok {
		t.Fatal("Channel still open after Close")
	}
	if err := sa.Subscribe(ctx, a); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
	must(t, c.Close())
	if _, ok := <-sb.Channel(); ok {
		t.Fatal("Channel still open after the client's Close")
	}
}

func TestSubscribeBadInputOrEndedContextSendsNothing(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}})
	ctx := testCtx(t)
	sessions := proxy.Sessions()
	before := totalReceived(proxy)
	for name, f := range map[string]func() error{
		"no channel":        func() error { _, err := c.Subscribe(ctx); return err },
		"empty channel":     func() error { _, err := c.Subscribe(ctx, "ok", ""); return err },
		"empty pattern":     func() error { _, err := c.PSubscribe(ctx, ""); return err },
		"no shard channel":  func() error { _, err := c.SSubscribe(ctx); return err },
		"NUMSUB no channel": func() error { _, err := c.PubSubNumSub(ctx); return err },
	} {
		if err := f(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	for name, f := range map[string]func() error{
		"Subscribe":  func() error { _, err := c.Subscribe(ended, "ok"); return err },
		"PSubscribe": func() error { _, err := c.PSubscribe(ended, "o*"); return err },
		"SSubscribe": func() error { _, err := c.SSubscribe(ended, "ok"); return err },
	} {
		err := f()
		var ce *ContextError
		if !errors.As(err, &ce) || ce.Sent || !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
			t.Errorf("%s with an ended context: %v (%T), want an unsent *ContextError matching context.Canceled", name, err, err)
		}
	}
	if got := totalReceived(proxy); got != before || proxy.Sessions() != sessions {
		t.Fatalf("bad input reached the proxy: %d frames, %d new connections", got-before, proxy.Sessions()-sessions)
	}
	s, err := c.Subscribe(ctx, "ok")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Subscribe(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Subscription.Subscribe() = %v, want ErrInvalidArgument", err)
	}
}

func TestPublishAndIntrospection(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	ch := key(t, "ch")
	if n, err := c.Publish(ctx, ch, "nobody"); err != nil || n != 0 {
		t.Fatalf("Publish with no subscriber = %d, %v", n, err)
	}
	s, err := c.Subscribe(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := c.Publish(ctx, ch, "hi"); err != nil || n != 1 {
		t.Fatalf("Publish = %d, %v; want 1", n, err)
	}
	if n, err := c.SPublish(ctx, ch, "shard"); err != nil || n != 0 {
		t.Fatalf("SPublish to a plain subscriber = %d, %v; want 0", n, err)
	}
	chans, err := c.PubSubChannels(ctx, escapeGlob(ch))
	if err != nil || len(chans) != 1 || chans[0] != ch {
		t.Fatalf("PubSubChannels = %v, %v", chans, err)
	}
	m, err := c.PubSubNumSub(ctx, ch, ch+":none")
	if err != nil || m[ch] != 1 || m[ch+":none"] != 0 || len(m) != 2 {
		t.Fatalf("PubSubNumSub = %v, %v", m, err)
	}
	if got := <-s.Channel(); got.Payload != "hi" {
		t.Fatalf("message %+v", got)
	}
}

// tapConn is a connection the test can watch and silence: it counts the
// PINGs written on it and, once frozen, swallows whatever the server
// sends (the socket's own deadlines still apply), like a link that went
// silently dead.
type tapConn struct {
	net.Conn
	pings  atomic.Int64
	pinged chan struct{} // signalled after each write holding a PING
	frozen atomic.Bool
}

var pingBytes = encodeCommand("PING", nil)

func (c *tapConn) Write(p []byte) (int, error) {
	n := bytes.Count(p, pingBytes)
	c.pings.Add(int64(n))
	if n > 0 {
		select {
		case c.pinged <- struct{}{}:
		default:
		}
	}
	return c.Conn.Write(p)
}

func (c *tapConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if err != nil || !c.frozen.Load() {
			return n, err
		}
	}
}

// tapDialer returns a dialer that wraps every connection in a tapConn and
// a function returning the newest one.
// tappedSubscription connects with opts through tapDialer and subscribes
// to one channel of the test's; newest returns the latest tapped
// connection.
func tappedSubscription(t *testing.T, opts Options) (c *Client, s *Subscription, ch string, newest func() *tapConn) {
	t.Helper()
	opts.Dialer, newest = tapDialer()
	c = newClient(t, opts)
	ch = key(t, "ch")
	s, err := c.Subscribe(testCtx(t), ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return c, s, ch, newest
}

func tapDialer() (func(ctx context.Context, network, addr string) (net.Conn, error), func() *tapConn) {
	var mu sync.Mutex
	var last *tapConn
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &tapConn{Conn: nc, pinged: make(chan struct{}, 1)}
		mu.Lock()
		last = tc
		mu.Unlock()
		return tc, nil
	}
	return dial, func() *tapConn { mu.Lock(); defer mu.Unlock(); return last }
}

// waitPings waits until tc has written n PINGs.
func waitPings(t *testing.T, ctx context.Context, tc *tapConn, n int64) {
	t.Helper()
	for tc.pings.Load() < n {
		select {
		case <-tc.pinged:
		case <-ctx.Done():
			t.Fatalf("the subscription sent %d PINGs, want %d", tc.pings.Load(), n)
		}
	}
}

// subID returns the server's id of s's current connection.
func subID(s *Subscription) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// TestSubscriptionKeepaliveStaysInside: an idle subscription PINGs every
// IdlePingInterval; with a HealthTimeout shorter than the interval the
// replies are never late (no reconnect, no gap) and never surface. (The
// HealthTimeout leaves a loaded machine most of a second to answer a
// PING on loopback: 150 ms was once exceeded with the test's two cores
// shared by five test runs.)
func TestSubscriptionKeepaliveStaysInside(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c, s, ch, newest := tappedSubscription(t, Options{Protocol: p, IdlePingInterval: time.Second, HealthTimeout: 900 * time.Millisecond})
			ctx := testCtx(t)
			tc, id := newest(), subID(s)
			waitPings(t, ctx, tc, 3)
			select {
			case m := <-s.Channel():
				t.Fatalf("idle subscription delivered %+v", m)
			default:
			}
			if got := subID(s); got != id {
				t.Fatalf("connection id %d, want %d: the idle subscription reconnected", got, id)
			}
			if _, err := c.Publish(ctx, ch, "one"); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); m.Payload != "one" || m.Gap {
				t.Fatalf("first event %+v, want the message", m)
			}
		})
	}
}

// TestSubscriptionSilentServerReconnectsWithGap: a connection whose
// server falls silent is given up after IdlePingInterval plus
// HealthTimeout; the subscription reconnects, reports the gap with
// ErrHealthTimeout, and receives what is published afterwards.
func TestSubscriptionSilentServerReconnectsWithGap(t *testing.T) {
	c, s, ch, newest := tappedSubscription(t, Options{IdlePingInterval: 100 * time.Millisecond, HealthTimeout: 100 * time.Millisecond})
	ctx := testCtx(t)
	old := newest()
	old.frozen.Store(true)
	var m Message
	select {
	case m = <-s.Channel():
	case <-ctx.Done():
		t.Fatal("no gap event after the server fell silent")
	}
	if !m.Gap || !errors.Is(m.Err, ErrHealthTimeout) || !errors.Is(m.Err, ErrConnectionLost) {
		t.Fatalf("event %+v (%v), want a gap caused by ErrHealthTimeout", m, m.Err)
	}
	if newest() == old {
		t.Fatal("the gap was reported without a new connection")
	}
	// Publish until a message arrives: the server confirms the new
	// subscription asynchronously, after the gap event.
	for i := 0; ; i++ {
		if _, err := c.Publish(ctx, ch, "after"); err != nil {
			t.Fatal(err)
		}
		select {
		case m = <-s.Channel():
		case <-ctx.Done():
			t.Fatal("nothing received after reconnecting")
		default:
			continue
		}
		break
	}
	if m.Gap || m.Payload != "after" {
		t.Fatalf("after reconnecting: %+v, want the message", m)
	}
}

// TestSlowConsumerLosesNothing: a consumer that does not read while more
// than SubscriptionBuffer messages arrive stalls only its subscription,
// which is not mistaken for a silent server (keepalive PINGs go on); the
// consumer then gets every message in order, without a gap, and the
// shared connection served commands meanwhile.
func TestSlowConsumerLosesNothing(t *testing.T) {
	const n = 3 * SubscriptionBuffer
	c, s, ch, newest := tappedSubscription(t, Options{IdlePingInterval: 100 * time.Millisecond, HealthTimeout: 100 * time.Millisecond})
	ctx := testCtx(t)
	tc, id := newest(), subID(s)
	if err := publishPipelined(t, standaloneAddr(t), ch, n, false); err != nil {
		t.Fatal(err)
	}
	before := tc.pings.Load()
	waitPings(t, ctx, tc, before+4) // longer than IdlePingInterval plus HealthTimeout
	if err := c.Set(ctx, key(t, "k"), "v"); err != nil {
		t.Fatalf("shared connection while a subscription stalls: %v", err)
	}
	if err := receiveInOrder(s, n); err != nil {
		t.Fatal(err)
	}
	if got := subID(s); got != id {
		t.Fatalf("connection id %d, want %d: the stalled subscription reconnected", got, id)
	}
}

// TestSubscriptionRefusedNameLeavesTheSet: a channel the server refuses
// (NOPERM under an ACL that restricts channels) fails that call with the
// server's error and does not stay in the set the subscription restores:
// a reconnection subscribes the other channels again instead of sending
// them in a command the server refuses as a whole.
func TestSubscriptionRefusedNameLeavesTheSet(t *testing.T) {
	addr := privateServer(t)
	admin(t, addr, "ACL", "SETUSER", "sub", "on", ">pw", "~*", "resetchannels", "&ok:*", "+@all")
	c := newClient(t, Options{Endpoints: []string{addr}, Username: "sub", Password: "pw"})
	ctx := testCtx(t)
	s, err := c.Subscribe(ctx, "ok:a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Subscribe(ctx, "no:b")
	var se *ServerError
	if !errors.As(err, &se) || !se.IsAuth() || se.Command != "SUBSCRIBE" {
		t.Fatalf("SUBSCRIBE of a refused channel = %v, want the server's NOPERM for SUBSCRIBE", err)
	}
	killClient(t, addr, strconv.FormatInt(subID(s), 10))
	if m := <-s.Channel(); !m.Gap {
		t.Fatalf("after the kill: %+v, want a gap", m)
	}
	// The server answers in order: once this is confirmed, it has run
	// the reconnection's subscriptions.
	if err := s.Subscribe(ctx, "ok:sync"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.PubSubNumSub(ctx, "ok:a"); err != nil || n["ok:a"] != 1 {
		t.Fatalf("subscribers of ok:a after the reconnection = %v, %v; want 1", n, err)
	}
	if _, err := c.Publish(ctx, "ok:a", "after"); err != nil {
		t.Fatal(err)
	}
	if m := <-s.Channel(); m.Channel != "ok:a" || m.Payload != "after" {
		t.Fatalf("after the reconnection: %+v, want the message on ok:a", m)
	}
}

// TestSubscriptionNameRefusedOnReconnectIsReported: a name the server
// refuses when the subscription reconnects (here its channel permission
// was revoked, which also makes Redis drop the connection) leaves the
// subscription with a gap event naming it and carrying the refusal, not
// silently: no caller waits for that SUBSCRIBE to hear the error.
func TestSubscriptionNameRefusedOnReconnectIsReported(t *testing.T) {
	addr := privateServer(t)
	admin(t, addr, "ACL", "SETUSER", "sub", "on", ">pw", "~*", "resetchannels", "&ok:*", "+@all")
	c := newClient(t, Options{Endpoints: []string{addr}, Username: "sub", Password: "pw"})
	ctx := testCtx(t)
	s, err := c.Subscribe(ctx, "ok:a", "ok:b")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := subID(s)
	// Revoking ok:b makes the server close the subscription's connection
	// (Redis 7); the kill covers a server that does not.
	admin(t, addr, "ACL", "SETUSER", "sub", "resetchannels", "&ok:a")
	_, _ = try(addr, "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10))
	m := <-s.Channel()
	if !m.Gap || m.Channel != "" || !errors.Is(m.Err, ErrConnectionLost) {
		t.Fatalf("first event after the revocation: %+v, want the connection's gap", m)
	}
	// The server answers in order: once this is confirmed, it has
	// answered the reconnection's subscriptions, and the event is queued.
	if err := s.Subscribe(ctx, "ok:a"); err != nil {
		t.Fatal(err)
	}
	select {
	case m = <-s.Channel():
	default:
		t.Fatal("no event reports that the server refused ok:b on the reconnection")
	}
	var se *ServerError
	if !m.Gap || m.Channel != "ok:b" || m.Pattern != "" || !errors.As(m.Err, &se) || !se.IsAuth() || se.Command != "SUBSCRIBE" {
		t.Fatalf("second event: %+v, want a gap naming ok:b with the server's NOPERM for SUBSCRIBE", m)
	}
	if _, err := c.Publish(ctx, "ok:a", "after"); err != nil {
		t.Fatal(err)
	}
	if m := <-s.Channel(); m.Gap || m.Channel != "ok:a" || m.Payload != "after" {
		t.Fatalf("after the reconnection: %+v, want the message on ok:a", m)
	}
}

// heldConn withholds what it reads while held: a reader blocked in Read
// gets nothing until release. Each write is reported on wrote.
type heldConn struct {
	net.Conn
	mu    sync.Mutex
	gate  chan struct{} // non-nil while held; closed by release
	wrote chan []byte
}

func (c *heldConn) hold() {
	c.mu.Lock()
	c.gate = make(chan struct{})
	c.mu.Unlock()
}

func (c *heldConn) release() {
	c.mu.Lock()
	close(c.gate)
	c.gate = nil
	c.mu.Unlock()
}

func (c *heldConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	gate := c.gate
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return n, err
}

func (c *heldConn) Write(p []byte) (int, error) {
	select {
	case c.wrote <- append([]byte(nil), p...):
	default:
	}
	return c.Conn.Write(p)
}

// TestSubscriptionErrorReachesOnlyItsCall: the server answers a
// subscription's commands in order, so an error reply belongs to one
// call: a refused channel fails its own Subscribe, never another call
// whose confirmation is still on the way.
func TestSubscriptionErrorReachesOnlyItsCall(t *testing.T) {
	addr := privateServer(t)
	admin(t, addr, "ACL", "SETUSER", "sub", "on", ">pw", "~*", "resetchannels", "&ok:*", "+@all")
	var mu sync.Mutex
	var last *heldConn
	var d net.Dialer
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, a)
		if err != nil {
			return nil, err
		}
		hc := &heldConn{Conn: nc, wrote: make(chan []byte, 16)}
		mu.Lock()
		last = hc
		mu.Unlock()
		return hc, nil
	}
	c := newClient(t, Options{Endpoints: []string{addr}, Username: "sub", Password: "pw", Dialer: dial})
	ctx := testCtx(t)
	s, err := c.Subscribe(ctx, "ok:a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mu.Lock()
	hc := last // the subscription's connection
	mu.Unlock()
	written := func(name string) {
		t.Helper()
		for {
			select {
			case b := <-hc.wrote:
				if bytes.Contains(b, []byte(name)) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("%s was never written", name)
			}
		}
	}
	hc.hold()
	refused, other := make(chan error, 1), make(chan error, 1)
	go func() { refused <- s.Subscribe(ctx, "no:x") }()
	written("no:x")
	go func() { other <- s.Subscribe(ctx, "ok:y") }()
	written("ok:y")
	hc.release()
	var se *ServerError
	if err := <-refused; !errors.As(err, &se) || se.Code != "NOPERM" {
		t.Errorf("the refused call: %v, want NOPERM", err)
	}
	if err := <-other; err != nil {
		t.Errorf("the call sent after it: %v, want its own confirmation", err)
	}
}

// TestSubscriptionOversizedMessageIsProtocolGap: a message larger than
// Options.MaxBulk resets the subscription's connection as it resets any
// connection, with an error matching ErrProtocol: the gap event's Err
// says so on one line (and still matches ErrConnectionLost), and the
// subscription goes on with the next message.
func TestSubscriptionOversizedMessageIsProtocolGap(t *testing.T) {
	forEachProtocol(t, Options{MaxBulk: 1024}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		ch := key(t, "ch")
		s, err := c.Subscribe(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := c.Publish(ctx, ch, string(make([]byte, 2048))); err != nil {
			t.Fatal(err)
		}
		m := <-s.Channel()
		if !m.Gap || !errors.Is(m.Err, ErrProtocol) || !errors.Is(m.Err, ErrConnectionLost) {
			t.Fatalf("after an oversized message: %+v, want a gap whose Err matches ErrProtocol and ErrConnectionLost", m)
		}
		wantText(t, "gap", m.Err, "respire: subscription connection lost: protocol error: bulk length exceeds the reader's limit (2048 bytes)")
		resumes(t, c, s, ch, "small")
	})
}

// oddPongConn rewrites the RESP3 PING reply into a shape the client does
// not know, as an unfamiliar server might answer.
type oddPongConn struct{ net.Conn }

func (c oddPongConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	copy(p[:n], bytes.ReplaceAll(p[:n], []byte("+PONG\r\n"), []byte("+PANG\r\n")))
	return n, err
}

// TestSubscriptionUnknownPingReplyKeepsOrder: a PING reply in a shape the
// subscription does not recognise must not stand between later calls and
// their confirmations.
func TestSubscriptionUnknownPingReplyKeepsOrder(t *testing.T) {
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return oddPongConn{nc}, nil
	}
	c := newClient(t, Options{Protocol: 3, Dialer: dial})
	ctx := testCtx(t)
	s, err := c.Subscribe(ctx, key(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mu.Lock()
	nc := s.conn
	s.mu.Unlock()
	if err := s.ping(nc, encodeCommand("PING", nil), nil); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Subscribe(wctx, key(t, "b")); err != nil {
		t.Fatalf("Subscribe after an unrecognised PING reply: %v, want its confirmation", err)
	}
}

// cuttingRelay forwards connections to addr and, when the server sends
// the marker, forwards only the bytes before the marker's middle and
// closes both sides: the connection ends in the middle of a message.
func cuttingRelay(t *testing.T, addr string, marker []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			sc, err := net.Dial("tcp", addr)
			if err != nil {
				_ = cc.Close()
				continue
			}
			track(cc)
			track(sc)
			wg.Go(func() {
				b := make([]byte, 64<<10)
				for {
					n, err := cc.Read(b)
					if n > 0 {
						if _, werr := sc.Write(b[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						_ = sc.Close()
						return
					}
				}
			})
			wg.Go(func() {
				defer cc.Close()
				defer sc.Close()
				b := make([]byte, 64<<10)
				for {
					n, err := sc.Read(b)
					if i := bytes.Index(b[:n], marker); i >= 0 {
						_, _ = cc.Write(b[:i+len(marker)/2])
						return
					}
					if n > 0 {
						if _, werr := cc.Write(b[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// TestSubscriptionCutMidMessageReportsGap: a connection that ends in the
// middle of a message delivers no part of it: the subscription reports a
// gap, subscribes again and receives the next message.
func TestSubscriptionCutMidMessageReportsGap(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			relay := cuttingRelay(t, standaloneAddr(t), []byte("CUT-HERE"))
			c := newClient(t, Options{Protocol: p, Endpoints: []string{relay}})
			ctx := testCtx(t)
			ch := key(t, "ch")
			s, err := c.Subscribe(ctx, ch)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			pub := newClient(t, Options{})
			if _, err := pub.Publish(ctx, ch, "before CUT-HERE after"); err != nil {
				t.Fatal(err)
			}
			m := <-s.Channel()
			if !m.Gap || !errors.Is(m.Err, ErrConnectionLost) {
				t.Fatalf("after the cut: %+v, want a gap (no part of the cut message)", m)
			}
			resumes(t, pub, s, ch, "next")
		})
	}
}

// resumes checks that s, after a gap, is subscribed to ch again: a
// message pub publishes there arrives next.
func resumes(t *testing.T, pub *Client, s *Subscription, ch, payload string) {
	t.Helper()
	waitSubscribers(t, pub, ch, 1)
	if _, err := pub.Publish(testCtx(t), ch, payload); err != nil {
		t.Fatal(err)
	}
	if m := <-s.Channel(); m.Payload != payload {
		t.Fatalf("after the gap: %+v, want the next message %q", m, payload)
	}
}

// stallConn is a connection whose writes can be made to block, as when
// the server stops reading and the socket's buffers are full: a stalled
// Write returns only when its write deadline passes or the connection is
// closed.
type stallConn struct {
	net.Conn
	mu       sync.Mutex
	stalled  bool
	closed   bool
	deadline time.Time
	changed  chan struct{} // closed and replaced when the deadline changes
	entered  chan struct{} // receives one value per stalled Write
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// stall makes the next writes block.
func (c *stallConn) stall() {
	c.mu.Lock()
	c.stalled = true
	c.mu.Unlock()
}

// stallingClient returns a standalone client with HealthTimeout off whose
// connections are stallConns; last returns the latest one dialed.
func stallingClient(t *testing.T) (c *Client, last func() *stallConn) {
	var (
		mu    sync.Mutex
		conns []*stallConn
	)
	c = newClient(t, Options{HealthTimeout: NoTimeout, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc := &stallConn{Conn: nc, changed: make(chan struct{}), entered: make(chan struct{}, 1)}
		mu.Lock()
		conns = append(conns, sc)
		mu.Unlock()
		return sc, nil
	}})
	return c, func() *stallConn {
		mu.Lock()
		defer mu.Unlock()
		return conns[len(conns)-1]
	}
}

func (c *stallConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

func (c *stallConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if !c.stalled {
		c.mu.Unlock()
		return c.Conn.Write(b)
	}
	c.mu.Unlock()
	c.entered <- struct{}{}
	for {
		c.mu.Lock()
		dl, changed, closed := c.deadline, c.changed, c.closed
		c.mu.Unlock()
		if closed {
			return 0, net.ErrClosed
		}
		if !dl.IsZero() && !time.Now().Before(dl) {
			return 0, os.ErrDeadlineExceeded
		}
		var expire <-chan time.Time
		var tm *time.Timer
		if !dl.IsZero() {
			tm = time.NewTimer(time.Until(dl))
			expire = tm.C
		}
		select {
		case <-changed:
		case <-expire:
		}
		if tm != nil {
			tm.Stop()
		}
	}
}

// TestSubscriptionWriteEndsWithItsContext: with HealthTimeout off, a
// Subscribe whose write cannot go out (the server stopped reading)
// returns when its context ends, as a *ContextError; the connection is
// replaced and the new one is subscribed to the whole set, the name of
// the abandoned call included.
func TestSubscriptionWriteEndsWithItsContext(t *testing.T) {
	c, last := stallingClient(t)
	ctx := testCtx(t)
	a, b := key(t, "a"), key(t, "b")
	s, err := c.Subscribe(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := last() // the subscription's own connection
	sc.stall()

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Subscribe(cctx, b) }()
	<-sc.entered // the write is blocked
	cancel()
	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(10 * time.Second): // a failsafe, not a synchronisation
		t.Fatal("Subscribe still blocked in its write 10 s after its context was cancelled")
	}
	var ce *ContextError
	if err := err2; !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe with a blocked write, cancelled = %v; want a *ContextError matching context.Canceled", err)
	}
	if m := <-s.Channel(); !m.Gap {
		t.Fatalf("after the abandoned write: %+v, want the gap of the replaced connection", m)
	}
	waitSubscribers(t, c, b, 1)
	for _, ch := range []string{a, b} {
		if _, err := c.Publish(ctx, ch, "to "+ch); err != nil {
			t.Fatal(err)
		}
		if m := <-s.Channel(); m.Channel != ch || m.Payload != "to "+ch {
			t.Fatalf("after reconnecting: %+v, want the message to %s", m, ch)
		}
	}
}

// TestSubscriptionCloseEndsAStuckWrite: with HealthTimeout off, a
// Subscribe without a deadline stuck in its write (the server stopped
// reading) holds the write lock, and a second Subscribe without a
// deadline waits for it; Close still returns, and ends both calls.
func TestSubscriptionCloseEndsAStuckWrite(t *testing.T) {
	c, last := stallingClient(t)
	ctx := testCtx(t)
	s, err := c.Subscribe(ctx, key(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	sc := last()
	sc.stall()

	done := make(chan error, 2)
	go func() { done <- s.Subscribe(context.Background(), key(t, "b")) }()
	<-sc.entered // the first holds the write lock
	second := &doneAsked{Context: context.Background(), asked: make(chan struct{})}
	go func() { done <- s.Subscribe(second, key(t, "c")) }()
	<-second.asked // the second waits for the write lock
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close = %v", err)
		}
	case <-time.After(10 * time.Second): // a failsafe, not a synchronisation
		t.Fatal("Close still blocked 10 s behind a stuck write")
	}
	for range 2 {
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("a Subscribe ended by Close = %v, want ErrClosed", err)
		}
	}
}

// TestSubscribeContextEndingDuringDial proves that a context ending while
// a subscription's connection is being prepared fails the call with a
// *ContextError (as every other call that never sent its command) naming
// the caller's own command, not a *ConnError naming SUBSCRIBE.
func TestSubscribeContextEndingDuringDial(t *testing.T) {
	px := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{px.Addr()}})
	for _, tc := range []struct {
		name string
		sub  func(ctx context.Context) (*Subscription, error)
	}{
		{"SUBSCRIBE", func(ctx context.Context) (*Subscription, error) { return c.Subscribe(ctx, "ch") }},
		{"PSUBSCRIBE", func(ctx context.Context) (*Subscription, error) { return c.PSubscribe(ctx, "ch*") }},
		{"SSUBSCRIBE", func(ctx context.Context) (*Subscription, error) { return c.SSubscribe(ctx, "ch") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The subscription's handshake reaches the server, whose
			// reply is held; the caller gives up meanwhile.
			h := px.MustAddRule(t, respiretest.Rule{Command: "HELLO", Action: respiretest.Hold,
				OnReceive: func([]string) { cancel() }})
			defer h.Release()
			s, err := tc.sub(ctx)
			if s != nil {
				_ = s.Close()
			}
			var ce *ContextError
			if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || ce.Command != tc.name || ce.Sent {
				t.Fatalf("%s with a context ending during the dial: %T %v, want an unsent *ContextError of %s matching context.Canceled", tc.name, err, err, tc.name)
			}
		})
	}
}

// TestSubscriptionReconnectDelayHasAFloor: a subscription whose server is
// gone redials after its retry policy's delays, but never less than
// minReconnectDelay apart. A policy of 1 ns delays is valid (a command's
// retries are bounded by MaxAttempts), but the reconnect loop has no
// attempt bound: with it, the loop dialled the dead server without pause.
func TestSubscriptionReconnectDelayHasAFloor(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		const dials = 20
		var down atomic.Bool
		var failed atomic.Int32
		enough := make(chan time.Time, 1)
		c := retryMemClient(t, s, Options{
			RetryPolicy: &RetryPolicy{InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond},
			Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if down.Load() {
					if failed.Add(1) == dials {
						enough <- time.Now()
					}
					return nil, errors.New("refused")
				}
				return s.Dial(ctx, network, addr)
			},
		})
		sub, err := c.Subscribe(bg, "ch")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		down.Store(true)
		start := time.Now()
		s.Close() // every connection ends; redials are refused
		end := <-enough
		if took, least := end.Sub(start), (dials-1)*minReconnectDelay; took < least {
			t.Fatalf("%d refused redials took %v, want at least %v (%v apart)", dials, took, least, minReconnectDelay)
		}
	})
}

// TestCloseWaitsWhileAnotherCloseRuns: a Close that finds the subscription
// already closing by another call (the client's Close, or the user's)
// still waits for its goroutine to end and its channel to close. It
// returned at once, so that Client.Close could return with the
// subscription's goroutine still running (in a dialer that ignores its
// context, here).
func TestCloseWaitsWhileAnotherCloseRuns(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		var hold atomic.Bool
		arrived, gate := make(chan struct{}), make(chan struct{})
		c := retryMemClient(t, s, Options{Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if hold.Load() {
				close(arrived)
				<-gate // ignores ctx
			}
			return s.Dial(ctx, network, addr)
		}})
		sub, err := c.Subscribe(bg, "ch")
		if err != nil {
			t.Fatal(err)
		}
		hold.Store(true)
		sub.mu.Lock()
		_ = sub.conn.Close() // the subscription reconnects: its dial waits at the gate
		sub.mu.Unlock()
		<-arrived
		go func() { _ = sub.Close() }()
		<-sub.done
		returned := make(chan struct{})
		go func() {
			_ = c.Close()
			close(returned)
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Error("Client.Close returned while the subscription's goroutine was still running")
		default:
		}
		close(gate)
		<-returned
		if _, ok := <-sub.Channel(); ok {
			t.Error("the subscription's channel is open after Close")
		}
	})
}

// lagConn forwards its writes late once armed, as a slow link does: from
// the first write holding a SUBSCRIBE on, writes are accepted at once but
// reach the server only at release. The connection then goes on lagging,
// and reading is signalled while the connection is read with writes held.
type lagConn struct {
	net.Conn
	armed   *atomic.Bool
	lagging chan<- *lagConn
	reading chan<- struct{}
	mu      sync.Mutex
	holding bool
	queued  []byte
	reads   int // Reads in progress
}

func (c *lagConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holding && c.armed.Load() && bytes.Contains(p, []byte("SUBSCRIBE")) {
		c.holding = true
		c.lagging <- c
	}
	if c.holding {
		c.queued = append(c.queued, p...)
		c.signalLocked()
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *lagConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	c.reads++
	c.signalLocked()
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.reads--
		c.mu.Unlock()
	}()
	return c.Conn.Read(p)
}

// signalLocked signals reading when the connection is read with writes
// held.
func (c *lagConn) signalLocked() {
	if c.holding && c.reads > 0 {
		select {
		case c.reading <- struct{}{}:
		default:
		}
	}
}

// release sends the writes held so far, and the next ones at once.
func (c *lagConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	_, err := c.Conn.Write(c.queued)
	return err
}

// releaseFirst sends, of the writes held, the first of the commands
// given, which must start them, and returns the command's argument.
func (c *lagConn) releaseFirst(name string, args ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range args {
		b := encodeCommand(name, []string{a})
		if bytes.HasPrefix(c.queued, b) {
			c.queued = c.queued[len(b):]
			_, err := c.Conn.Write(b)
			return a, err
		}
	}
	return "", fmt.Errorf("the held writes start with none of %s %q", name, args)
}

// laggingSubscription subscribes to one channel of the test's through
// lagConns; once armed is set, the next connection to write a SUBSCRIBE
// holds it and is sent on lagging, and reading is signalled while such a
// connection is read.
func laggingSubscription(t *testing.T, protocol int) (c *Client, s *Subscription, ch string, armed *atomic.Bool, lagging <-chan *lagConn, reading <-chan struct{}) {
	t.Helper()
	armed = new(atomic.Bool)
	lag, read := make(chan *lagConn, 1), make(chan struct{}, 1)
	var d net.Dialer
	c = newClient(t, Options{Protocol: protocol, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lagConn{Conn: nc, armed: armed, lagging: lag, reading: read}, nil
	}})
	ch = key(t, "ch")
	s, err := c.Subscribe(testCtx(t), ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return c, s, ch, armed, lag, read
}

// TestSubscriptionGapComesOnceResubscribed: after a reconnection the gap
// event comes only once the server has confirmed the subscription's set
// on the new connection, so a message published once the consumer has
// seen the gap (say, after reloading the state the gap made stale) is
// delivered. It came as soon as the SUBSCRIBE commands were written: on a
// slow link the server had not run them yet, and a message published
// after the gap was lost with no event to say so.
func TestSubscriptionGapComesOnceResubscribed(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c, s, ch, armed, lagging, reading := laggingSubscription(t, p)
			ctx := testCtx(t)
			armed.Store(true)
			killClient(t, standaloneAddr(t), strconv.FormatInt(subID(s), 10))
			lc := <-lagging // the reconnection's SUBSCRIBE, held
			<-reading       // and the subscription reads its new connection
			select {
			case m := <-s.Channel():
				t.Fatalf("event %+v before the server ran the resubscription: a message published now is lost", m)
			default:
			}
			if err := lc.release(); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); !m.Gap || !errors.Is(m.Err, ErrConnectionLost) {
				t.Fatalf("after the kill: %+v, want the gap", m)
			}
			if n, err := c.Publish(ctx, ch, "after the gap"); err != nil || n != 1 {
				t.Errorf("PUBLISH once the gap was received = %d, %v; want its 1 subscriber", n, err)
			}
			if m := <-s.Channel(); m.Gap || m.Payload != "after the gap" {
				t.Fatalf("next event %+v, want the message published after the gap", m)
			}
		})
	}
}

// TestSubscriptionMessagesAmidResubscriptionFollowTheGap: a message that
// arrives between the confirmations of a reconnection (its channel was
// already subscribed again) is delivered after the gap event, not lost.
func TestSubscriptionMessagesAmidResubscriptionFollowTheGap(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c, s, ch, armed, lagging, _ := laggingSubscription(t, p)
			ctx := testCtx(t)
			other := key(t, "other")
			if err := s.Subscribe(ctx, other); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			killClient(t, standaloneAddr(t), strconv.FormatInt(subID(s), 10))
			lc := <-lagging
			first, err := lc.releaseFirst("SUBSCRIBE", ch, other)
			if err != nil {
				t.Fatal(err)
			}
			waitSubscribers(t, c, first, 1)
			if n, err := c.Publish(ctx, first, "amid"); err != nil || n != 1 {
				t.Fatalf("PUBLISH between the confirmations = %d, %v; want 1", n, err)
			}
			if err := lc.release(); err != nil {
				t.Fatal(err)
			}
			if m := <-s.Channel(); !m.Gap {
				t.Fatalf("first event %+v, want the gap", m)
			}
			if m := <-s.Channel(); m.Gap || m.Channel != first || m.Payload != "amid" {
				t.Fatalf("second event %+v, want the message published amid the resubscription", m)
			}
		})
	}
}

// TestSubscriptionGapOnceForReconnectionsLostUnanswered: a new connection
// lost before the server answered its resubscription received nothing,
// so the reconnection after it reports one gap for both.
func TestSubscriptionGapOnceForReconnectionsLostUnanswered(t *testing.T) {
	c, s, ch, armed, lagging, _ := laggingSubscription(t, 3)
	armed.Store(true)
	killClient(t, standaloneAddr(t), strconv.FormatInt(subID(s), 10))
	<-lagging // the reconnection's SUBSCRIBE, held
	armed.Store(false)
	killClient(t, standaloneAddr(t), strconv.FormatInt(subID(s), 10))
	if m := <-s.Channel(); !m.Gap || !errors.Is(m.Err, ErrConnectionLost) {
		t.Fatalf("after two kills: %+v, want a gap for the first", m)
	}
	if n, err := c.Publish(testCtx(t), ch, "next"); err != nil || n != 1 {
		t.Errorf("PUBLISH after the gap = %d, %v; want its 1 subscriber", n, err)
	}
	if m := <-s.Channel(); m.Gap || m.Payload != "next" {
		t.Fatalf("next event %+v, want the message (one gap only)", m)
	}
}

// TestSubscriptionLargeSetResubscribes: a reconnection subscribes a set
// whose commands and confirmations exceed what the link buffers. It wrote
// every command before reading any confirmation, so against a server that
// stops reading while its replies wait (here net.Pipe, which buffers
// nothing; a real server's output limit drops the connection instead) the
// resubscription never completed and no gap ever came.
func TestSubscriptionLargeSetResubscribes(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c := retryMemClient(t, s, Options{})
		names := make([]string, 2000)
		for i := range names {
			names[i] = "channel-" + strconv.Itoa(i)
		}
		sub, err := c.Subscribe(bg, names...)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		sub.mu.Lock()
		_ = sub.conn.Close() // the subscription reconnects
		sub.mu.Unlock()
		select {
		case m := <-sub.Channel():
			if !m.Gap {
				t.Fatalf("first event %+v, want the gap", m)
			}
		case <-time.After(time.Minute): // the bubble's clock
			t.Fatal("no gap a minute after the connection was lost: the resubscription never completed")
		}
		last := names[len(names)-1]
		if n, err := c.Publish(bg, last, "m"); err != nil || n != 1 {
			t.Fatalf("PUBLISH to the last channel = %d, %v; want its 1 subscriber", n, err)
		}
		if m := <-sub.Channel(); m.Channel != last || m.Payload != "m" {
			t.Fatalf("next event %+v, want the message on %s", m, last)
		}
	})
}
