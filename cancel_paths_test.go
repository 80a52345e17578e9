package respire

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// endedPathOps are the public paths of a client, each called with ctx.
// They are the paths a caller reaches with a context of its own: the
// commands, units, callbacks, iterators, blocking commands, scripts,
// functions, cached reads and subscriptions.
func endedPathOps(t *testing.T, c *Client, sub *Subscription) map[string]func(ctx context.Context) error {
	k := key(t, "k")
	first := func(seq func(func(string, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return errors.New("no value")
	}
	return map[string]func(ctx context.Context) error{
		"Get":       func(ctx context.Context) error { _, err := c.Get(ctx, k); return err },
		"Set":       func(ctx context.Context) error { return c.Set(ctx, k, "v") },
		"Do":        func(ctx context.Context) error { _, err := c.Do(ctx, NewCommand("ECHO"), "x"); return err },
		"Ping":      func(ctx context.Context) error { return c.Ping(ctx) },
		"Publish":   func(ctx context.Context) error { _, err := c.Publish(ctx, k, "m"); return err },
		"GetCached": func(ctx context.Context) error { _, err := c.GetCached(ctx, k); return err },
		"DoCached":  func(ctx context.Context) error { _, err := c.DoCached(ctx, NewCommand("GET"), k); return err },
		"Batch":     func(ctx context.Context) error { b := c.NewBatch(); b.Get(k); return b.Execute(ctx) },
		"Tx":        func(ctx context.Context) error { b := c.NewTransaction(); b.Incr(k); return b.Execute(ctx) },
		"Watch":     func(ctx context.Context) error { return c.Watch(ctx, func(*Tx) error { return nil }, k) },
		"Dedicated": func(ctx context.Context) error { return c.Dedicated(ctx, func(*Conn) error { return nil }) },
		"BLPop":     func(ctx context.Context) error { _, _, err := c.BLPop(ctx, 0, k); return err },
		"BLMove": func(ctx context.Context) error {
			_, err := c.BLMove(ctx, k, k, ListLeft, ListRight, 0)
			return err
		},
		"BZPopMin": func(ctx context.Context) error { _, _, err := c.BZPopMin(ctx, 0, k); return err },
		"XRead": func(ctx context.Context) error {
			_, err := c.XRead(ctx, XReadOptions{BlockForever: true}, k, "$")
			return err
		},
		"Do BLPOP": func(ctx context.Context) error { _, err := c.Do(ctx, catalog.List.BLPOP(), k, "0"); return err },
		"Scan":     func(ctx context.Context) error { return first(c.Scan(ctx, ScanOptions{})) },
		"SScan":    func(ctx context.Context) error { return first(c.SScan(ctx, k, ScanOptions{})) },
		"Script.Run": func(ctx context.Context) error {
			_, err := NewScript("return 1", ScriptOptions{}).Run(ctx, c, []string{k})
			return err
		},
		"Script.Load": func(ctx context.Context) error { return NewScript("return 2", ScriptOptions{}).Load(ctx, c) },
		"Function.Call": func(ctx context.Context) error {
			_, err := NewFunction("respirecancel", "f", FunctionOptions{
				Source: "#!lua name=respirecancel\nredis.register_function('f', function() return 1 end)",
			}).Call(ctx, c, []string{k})
			return err
		},
		"Subscribe":       func(ctx context.Context) error { _, err := c.Subscribe(ctx, k); return err },
		"sub.Subscribe":   func(ctx context.Context) error { return sub.Subscribe(ctx, k+":other") },
		"sub.Unsubscribe": func(ctx context.Context) error { return sub.Unsubscribe(ctx, k) },
	}
}

// TestEveryPathWithEndedContextSendsNothing: a context that has already
// ended, cancelled or past its deadline, sends nothing and dials nothing
// on every public path, and the error matches the context's. The client
// goes on serving each caller its own reply afterwards.
func TestEveryPathWithEndedContextSendsNothing(t *testing.T) {
	c, px := proxiedStandalone(t, Options{ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, key(t, "ch"))
	must(t, err)
	defer sub.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	ends := []struct {
		name string
		ctx  context.Context
		want error
	}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}}
	for _, end := range ends {
		for name, op := range endedPathOps(t, c, sub) {
			sessions, sent := px.Sessions(), framesSent(px)
			err := op(end.ctx)
			if !errors.Is(err, end.want) {
				t.Errorf("%s with a %s context = %v, want an error matching %v", name, end.name, err, end.want)
			}
			if got := framesSent(px); got != sent {
				t.Errorf("%s with a %s context sent %d frames, want none", name, end.name, got-sent)
			}
			if got := px.Sessions(); got != sessions {
				t.Errorf("%s with a %s context opened %d connections, want none", name, end.name, got-sessions)
			}
		}
	}
	checkOwnReplies(t, c, 8)
}

// checkOwnReplies runs n goroutines that each set and read back a value of
// their own through the shared connection, a batch and a transaction: every
// reply must be its caller's.
func checkOwnReplies(t *testing.T, c *Client, n int) {
	t.Helper()
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Go(func() {
			k, v := key(t, "own", strconv.Itoa(i)), "value-"+strconv.Itoa(i)
			if err := c.Set(ctx, k, v); err != nil {
				errs <- err
				return
			}
			if got, err := c.Get(ctx, k); err != nil || got != v {
				errs <- errors.New("Get " + k + " = " + got + ", want " + v + " (" + errOrNil(err) + ")")
			}
			msg := "echo-" + strconv.Itoa(i)
			b := c.NewBatch()
			e := b.Echo(msg)
			g := b.Get(k)
			if err := b.Execute(ctx); err != nil {
				errs <- err
				return
			}
			if got, err := e.Result(); err != nil || got != msg {
				errs <- errors.New("batch ECHO = " + got + ", want " + msg + " (" + errOrNil(err) + ")")
			}
			if got, err := g.Result(); err != nil || got != v {
				errs <- errors.New("batch GET = " + got + ", want " + v + " (" + errOrNil(err) + ")")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func errOrNil(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// holdNext makes px hold the reply of the next frame of command (and
// every reply after it on that connection) until the returned release
// runs; arrived is closed when the frame reached the proxy.
func holdNext(t *testing.T, px *respiretest.Proxy, command, arg string) (h *respiretest.RuleHandle) {
	t.Helper()
	h = px.MustAddRule(t, respiretest.Rule{Command: command, Arg: arg, Action: respiretest.Hold})
	t.Cleanup(h.Release)
	return h
}

// TestScriptFallbackCancelledBetweenCommands: a Script.Run whose context
// ends after its EVALSHA was answered NOSCRIPT never sends the EVAL; one
// whose context ends after the EVAL was written returns a ContextError
// that says it may have run, the script runs exactly once, and its late
// reply reaches nobody: the next callers get their own replies.
func TestScriptFallbackCancelledBetweenCommands(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	script := NewScript("redis.call('INCR', KEYS[1]) return ARGV[1] -- "+t.Name(), ScriptOptions{})
	t.Run("before EVAL", func(t *testing.T) {
		c, px := proxiedStandalone(t, Options{})
		k := key(t, "n")
		ctx, cancel := context.WithCancel(testCtx(t))
		px.MustAddRule(t, respiretest.Rule{Command: "EVALSHA", Action: respiretest.Inject("NOSCRIPT No matching script."),
			OnReceive: func([]string) { cancel() }})
		_, err := script.Run(ctx, c, []string{k}, "mine")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run cancelled at NOSCRIPT = %v, want an error matching context.Canceled", err)
		}
		if n := px.Stats("EVAL").Received; n != 0 {
			t.Errorf("the proxy received %d EVAL after the context ended, want none", n)
		}
		if _, err := c.Get(testCtx(t), k); !errors.Is(err, ErrNil) {
			t.Errorf("GET of the script's counter = %v, want ErrNil: the script ran", err)
		}
		checkOwnReplies(t, c, 4)
	})
	t.Run("after EVAL written", func(t *testing.T) {
		c, px := proxiedStandalone(t, Options{})
		k := key(t, "n")
		px.MustAddRule(t, respiretest.Rule{Command: "EVALSHA", Action: respiretest.Inject("NOSCRIPT No matching script.")})
		held := holdNext(t, px, "EVAL", "")
		evals := commandCalls(t, addr, "eval")
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() { _, err := script.Run(ctx, c, []string{k}, "mine"); errc <- err }()
		<-held.Received()
		cancel()
		err := <-errc
		var ce *ContextError
		if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || !MayHaveExecuted(err) {
			t.Fatalf("Run cancelled after EVAL was written = %v, want a *ContextError matching context.Canceled that may have run", err)
		}
		held.Release()
		checkOwnReplies(t, c, 4)
		if got, err := c.Get(testCtx(t), k); err != nil || got != "1" {
			t.Errorf("the script's counter = %q, %v; want 1: it ran once", got, err)
		}
		if n := commandCalls(t, addr, "eval") - evals; n != 1 {
			t.Errorf("the server ran EVAL %d times, want 1", n)
		}
	})
}

// TestWatchReadCancelledThenCallbackGoesOn: a Tx read whose context ends
// while its reply is owed breaks the watched connection; a callback that
// ignores that error and queues a write still gets an error matching the
// context's from Watch, and nothing is applied.
func TestWatchReadCancelledThenCallbackGoesOn(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	c, px := proxiedStandalone(t, Options{})
	k := key(t, "k")
	execs := commandCalls(t, addr, "exec")
	held := holdNext(t, px, "GET", k)
	ctx, cancel := context.WithCancel(testCtx(t))
	var readErr error
	err := c.Watch(ctx, func(tx *Tx) error {
		go func() { <-held.Received(); cancel() }()
		_, readErr = tx.Get(ctx, k)
		tx.Queue().Incr(k)
		return nil // the callback goes on as if the read had not failed
	}, k)
	held.Release()
	if !errors.Is(readErr, context.Canceled) {
		t.Fatalf("the cancelled Tx.Get = %v, want an error matching context.Canceled", readErr)
	}
	if !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
		t.Errorf("Watch after the cancelled read = %v, want an error matching context.Canceled that did not run", err)
	}
	if n := commandCalls(t, addr, "exec") - execs; n != 0 {
		t.Errorf("the server ran EXEC %d times, want none", n)
	}
	if s := c.blocking.Stats(); s.Lent != 0 {
		t.Errorf("dedicated connections after Watch: %+v, want none lent", s)
	}
	checkOwnReplies(t, c, 4)
}

// TestDedicatedHandshakeCancelled: a context that ends while a dedicated
// connection's handshake (HELLO) waits for its reply ends the call that
// dialed it (Dedicated, a blocking command) with an error matching
// context.Canceled before its own command is sent; the half-open
// connection is closed and its slot freed, and the next call dials afresh.
func TestDedicatedHandshakeCancelled(t *testing.T) {
	calls := map[string]func(ctx context.Context, c *Client, k string) error{
		"Dedicated": func(ctx context.Context, c *Client, k string) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Do(ctx, NewCommand("RPUSH"), k, "never")
				return err
			})
		},
		"BLPop": func(ctx context.Context, c *Client, k string) error { _, _, err := c.BLPop(ctx, 0, k); return err },
		"Watch": func(ctx context.Context, c *Client, k string) error {
			return c.Watch(ctx, func(tx *Tx) error { tx.Queue().RPush(k, "never"); return nil }, k)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{BlockingPoolSize: 1})
			k := key(t, "list")
			held := holdNext(t, px, "HELLO", "")
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() { errc <- call(ctx, c, k) }()
			<-held.Received()
			cancel()
			err := <-errc
			if !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
				t.Fatalf("%s cancelled in the handshake = %v, want an error matching context.Canceled that did not run", name, err)
			}
			held.Release()
			if s := c.blocking.Stats(); s.Open != 0 {
				t.Errorf("dedicated connections after the cancelled handshake: %+v, want none", s)
			}
			for _, cmd := range []string{"RPUSH", "BLPOP", "WATCH"} {
				if n := px.Stats(cmd).Received; n != 0 {
					t.Errorf("the proxy received %d %s, want none", n, cmd)
				}
			}
			// The slot is free: the next call dials and runs.
			must(t, c.Dedicated(testCtx(t), func(conn *Conn) error {
				r, err := conn.Do(testCtx(t), NewCommand("ECHO"), "after")
				if got, _ := r.String(); err == nil && got != "after" {
					t.Errorf("ECHO on the next dedicated connection = %q, want after", got)
				}
				return err
			}))
			checkOwnReplies(t, c, 4)
		})
	}
}

// TestSubscriptionChangeCancelledKeepsItsReplies: a Subscribe whose
// context ends while its confirmation is owed leaves the name in the set
// and its confirmation in its place: the Unsubscribe and Subscribe that
// follow on the same subscription are answered by their own
// confirmations, and messages arrive for exactly the names subscribed.
func TestSubscriptionChangeCancelledKeepsItsReplies(t *testing.T) {
	ctx := testCtx(t)
	a, b, d := key(t, "a"), key(t, "b"), key(t, "d")
	g := &replyGate{written: make(chan string, 16)}
	c := newClient(t, Options{Dialer: g.dial})
	sub, err := c.Subscribe(ctx, a)
	must(t, err)
	defer sub.Close()
	release := g.holdAfter("SUBSCRIBE", b)
	defer release()
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- sub.Subscribe(cctx, b) }()
	g.waitWritten(t, b)
	cancel()
	err = <-errc
	var ce *ContextError
	if !errors.As(err, &ce) || !ce.Sent || !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe cancelled before its confirmation = %v, want a *ContextError (Sent) matching context.Canceled", err)
	}
	// Both are written behind the held confirmation, and answered once
	// it comes, each by its own.
	unsub := make(chan error, 1)
	go func() { unsub <- sub.Unsubscribe(ctx, a) }()
	g.waitWritten(t, a)
	resub := make(chan error, 1)
	go func() { resub <- sub.Subscribe(ctx, d) }()
	g.waitWritten(t, d)
	release()
	must(t, <-unsub)
	must(t, <-resub)
	for _, ch := range []string{a, b, d} {
		if _, err := c.Publish(ctx, ch, "to "+ch); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case m := <-sub.Channel():
			if m.Gap || m.Channel == a {
				t.Fatalf("message %+v: want the messages of %s and %s only, no gap", m, b, d)
			}
			got[m.Channel] = true
		case <-ctx.Done():
			t.Fatalf("received %v, want the messages of %s and %s", got, b, d)
		}
	}
	checkOwnReplies(t, c, 4)
}

// replyGate is an Options.Dialer to the standalone server whose
// connections report each command name and first argument they write
// (on written) and, once holdAfter's command was written on one of them,
// hold what that connection reads until the release.
type replyGate struct {
	written chan string
	mu      sync.Mutex
	command string        // the command whose write starts the hold
	arg     string        // its first argument
	hold    chan struct{} // closed by the release
	on      net.Conn      // the connection that holds, once written
}

func (g *replyGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: nc, g: g}, nil
}

// holdAfter arms the gate; the returned release (idempotent) ends it.
func (g *replyGate) holdAfter(command, arg string) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.command, g.arg, g.hold = command, arg, make(chan struct{})
	var once sync.Once
	hold := g.hold
	return func() { once.Do(func() { close(hold) }) }
}

// waitWritten waits until a command whose first argument is arg was
// written on a gated connection.
func (g *replyGate) waitWritten(t *testing.T, arg string) {
	t.Helper()
	for {
		select {
		case got := <-g.written:
			if got == arg {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no command with argument %s was written", arg)
		}
	}
}

type gatedConn struct {
	net.Conn
	g *replyGate
}

func (c *gatedConn) Write(p []byte) (int, error) {
	// The hold starts before the bytes leave: a reply read between the
	// write and the hold's start would reach the client unheld.
	cmds := commandsIn(p)
	written := make([]string, len(cmds))
	for i, args := range cmds {
		g := c.g
		g.mu.Lock()
		if g.hold != nil && g.on == nil && strings.EqualFold(args[0], g.command) && args[1] == g.arg {
			g.on = c
		}
		g.mu.Unlock()
		written[i] = args[1]
	}
	n, err := c.Conn.Write(p)
	for _, arg := range written {
		select {
		case c.g.written <- arg:
		default:
		}
	}
	return n, err
}

func (c *gatedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.g.mu.Lock()
	hold := c.g.hold
	held := c.g.on == c
	c.g.mu.Unlock()
	if held {
		<-hold
	}
	return n, err
}

// TestScanCancelledMidIteration: an iterator whose context ends while a
// page's reply is owed yields an error matching context.Canceled and
// stops; the late page reaches nobody.
func TestScanCancelledMidIteration(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	for i := range 30 {
		must(t, c.Set(ctx, key(t, "s", strconv.Itoa(i)), "x"))
	}
	h := px.MustAddRule(t, respiretest.Rule{Command: "SCAN", Nth: 2, Action: respiretest.Hold})
	t.Cleanup(h.Release)
	sctx, cancel := context.WithCancel(ctx)
	go func() { <-h.Received(); cancel() }()
	var errs []error
	for _, err := range c.Scan(sctx, ScanOptions{Match: keyPrefix(t) + "*", Count: 2}) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	h.Release()
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("Scan's errors after its context ended = %v, want one matching context.Canceled", errs)
	}
	if n := px.Stats("SCAN").Received; n != 2 {
		t.Errorf("the proxy received %d SCAN, want 2: none after the context ended", n)
	}
	checkOwnReplies(t, c, 4)
}

// TestDedicatedCommandAfterCancelledOne: after a command whose context
// ended while its reply was owed, the next command of the callback with
// that same context fails with an error matching the context's, sending
// nothing, rather than with the broken connection's error; the callback's
// error ends the loan and the connection is never pooled.
func TestDedicatedCommandAfterCancelledOne(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	held := holdNext(t, px, "ECHO", "held")
	ctx, cancel := context.WithCancel(testCtx(t))
	var first, second error
	err := c.Dedicated(ctx, func(conn *Conn) error {
		go func() { <-held.Received(); cancel() }()
		_, first = conn.Do(ctx, NewCommand("ECHO"), "held")
		_, second = conn.Do(ctx, NewCommand("ECHO"), "next")
		return second
	})
	held.Release()
	if !errors.Is(first, context.Canceled) || !MayHaveExecuted(first) {
		t.Errorf("the cancelled ECHO = %v, want an error matching context.Canceled that may have run", first)
	}
	if !errors.Is(second, context.Canceled) || MayHaveExecuted(second) {
		t.Errorf("the ECHO after it = %v, want an error matching context.Canceled that did not run", second)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Dedicated = %v, want the callback's error", err)
	}
	if n := px.Stats("ECHO").Received; n != 1 {
		t.Errorf("the proxy received %d ECHO, want 1", n)
	}
	if s := c.blocking.Stats(); s.Open != 0 {
		t.Errorf("dedicated connections after the loan: %+v, want the broken one closed", s)
	}
	checkOwnReplies(t, c, 4)
}

// TestWatchCancelledAtEachStep: under a RetryPolicy, a Watch whose
// context ends while the reply of its WATCH, or of its MULTI ... EXEC, is
// owed ends with an error matching context.Canceled, is never rerun, and
// its connection is never pooled; a Watch cancelled after EXEC was written
// says it may have run, and ran exactly once. (One cancelled at its WATCH
// may say so too: WATCH itself was sent.)
func TestWatchCancelledAtEachStep(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	for _, step := range []string{"WATCH", "EXEC"} {
		t.Run(step, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating}})
			k := key(t, "n")
			held := holdNext(t, px, step, "")
			watches, execs := commandCalls(t, addr, "watch"), commandCalls(t, addr, "exec")
			ctx, cancel := context.WithCancel(testCtx(t))
			go func() { <-held.Received(); cancel() }()
			runs := 0
			err := c.Watch(ctx, func(tx *Tx) error {
				runs++
				tx.Queue().Incr(k)
				return nil
			}, k)
			held.Release()
			var ce *ContextError
			if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || (step == "EXEC" && !MayHaveExecuted(err)) {
				t.Errorf("Watch cancelled at its %s = %v, want a *ContextError matching context.Canceled", step, err)
			}
			if want := map[string]int{"WATCH": 0, "EXEC": 1}[step]; runs != want {
				t.Errorf("the callback ran %d times, want %d", runs, want)
			}
			if s := c.blocking.Stats(); s.Open != 0 {
				t.Errorf("dedicated connections after Watch: %+v, want the cancelled one closed", s)
			}
			checkOwnReplies(t, c, 4)
			if n := commandCalls(t, addr, "watch") - watches; n != 1 {
				t.Errorf("the server ran WATCH %d times, want 1", n)
			}
			wantExec := map[string]int{"WATCH": 0, "EXEC": 1}[step]
			if n := commandCalls(t, addr, "exec") - execs; n != wantExec {
				t.Errorf("the server ran EXEC %d times, want %d", n, wantExec)
			}
			want := map[string]string{"WATCH": "", "EXEC": "1"}[step]
			if got, err := c.Get(testCtx(t), k); got != want || (want == "" && !errors.Is(err, ErrNil)) {
				t.Errorf("the counter = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestClusterAskFollowedThenCancelled: a command that follows an ASK
// redirect travels with its ASKING in one frame; cancelled while that
// frame's replies are owed, it fails with a ContextError that says it may
// have run, both replies are drained, and the target's shared connection
// serves the next callers their own replies.
func TestClusterAskFollowedThenCancelled(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{})
	primaries := c.topo.Primaries()
	from, to := primaries[0].Addr, primaries[1].Addr
	k, slot := keyOn(t, c, from)
	t.Cleanup(func() { _, _ = c.Del(context.Background(), k) })
	must(t, c.Set(testCtx(t), k, "v"))
	proxies[from].MustAddRule(t, respiretest.Rule{Command: "GET", Arg: k, Action: respiretest.Inject(respiretest.Ask(slot, to))})
	held := holdNext(t, proxies[to], "GET", k)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() { <-held.Received(); cancel() }()
	_, err := c.Get(ctx, k)
	held.Release()
	var ce *ContextError
	if !errors.As(err, &ce) || !ce.Sent || !errors.Is(err, context.Canceled) {
		t.Fatalf("GET cancelled after its ASK was followed = %v, want a *ContextError (Sent) matching context.Canceled", err)
	}
	if n := proxies[to].Stats("ASKING").Received; n != 1 {
		t.Errorf("the ASK target received %d ASKING, want 1", n)
	}
	// The target's shared connection serves its keys' callers their own.
	kt, _ := keyOn(t, c, to)
	t.Cleanup(func() { _, _ = c.Del(context.Background(), kt) })
	must(t, c.Set(testCtx(t), kt, "w"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			msg := "m-" + strconv.Itoa(i)
			b := c.NewBatch()
			g := b.Get(kt)
			e := b.Do(NewCommand("ECHO"), msg)
			if err := b.Execute(testCtx(t)); err != nil {
				t.Error(err)
				return
			}
			r, err := e.Result()
			if got, _ := r.String(); err != nil || got != msg {
				t.Errorf("ECHO = %q, %v; want %q", got, err, msg)
			}
			if got, err := g.Result(); err != nil || got != "w" {
				t.Errorf("GET = %q, %v; want w", got, err)
			}
			if got, err := c.Get(testCtx(t), kt); err != nil || got != "w" {
				t.Errorf("Get = %q, %v; want w", got, err)
			}
		})
	}
	wg.Wait()
}

// TestBlockingCancelledWhileSharedConnectionHeld: a blocking call whose
// context ends while the shared connection (which carries its CLIENT
// UNBLOCK) owes another caller a held reply is still stopped on the
// server: it fails with a ContextError, pops nothing for nobody, and the
// other caller gets its own reply once it comes, the late UNBLOCK reply
// going to nobody.
func TestBlockingCancelledWhileSharedConnectionHeld(t *testing.T) {
	name := blockingName(t)
	c, px := proxiedStandalone(t, Options{ClientName: name})
	addr := standaloneAddr(t)
	list, other := key(t, "list"), key(t, "other")
	must(t, c.Set(testCtx(t), other, "mine"))
	held := holdNext(t, px, "GET", other)
	got := make(chan string, 1)
	go func() {
		v, err := c.Get(testCtx(t), other)
		if err != nil {
			v = err.Error()
		}
		got <- v
	}()
	<-held.Received()
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() { _, _, err := c.BLPop(ctx, 0, list); errc <- err }()
	waitNamedBlocked(t, name)
	cancel()
	err := <-errc
	var ce *ContextError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("BLPop cancelled while the shared connection is held = %v, want a *ContextError matching context.Canceled", err)
	}
	held.Release()
	if v := <-got; v != "mine" {
		t.Errorf("the held GET = %q, want its own value", v)
	}
	if _, err := admin(t, addr, "RPUSH", list, "later").Int64(); err != nil {
		t.Fatal(err)
	}
	if n, _ := admin(t, addr, "LLEN", list).Int64(); n != 1 {
		t.Errorf("LLEN = %d after the caller left, want 1: the element was popped for nobody", n)
	}
	if k, v, err := c.BLPop(testCtx(t), time.Second, list); err != nil || k != list || v != "later" {
		t.Errorf("BLPop after the stopped call = %q, %q, %v; want the element", k, v, err)
	}
	checkOwnReplies(t, c, 4)
}

// TestClusterPathsWithEndedContextSendNothing: on a Cluster client the
// paths that split a command by slot, fan it out to every primary, group a
// batch by node or pin a subscription to a slot send nothing and dial
// nothing with a context that has already ended, and fail with its error.
func TestClusterPathsWithEndedContextSendNothing(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, keyPrefix(t)+"ch")
	must(t, err)
	defer sub.Close()
	ops := endedPathOps(t, c, sub)
	delete(ops, "Function.Call")               // its library would need loading on every primary
	a, b := keyPrefix(t)+"a", keyPrefix(t)+"b" // two slots
	ops["MGet"] = func(ctx context.Context) error { _, _, err := c.MGet(ctx, a, b); return err }
	ops["Del"] = func(ctx context.Context) error { _, err := c.Del(ctx, a, b); return err }
	ops["DBSize"] = func(ctx context.Context) error { _, err := c.DBSize(ctx); return err }
	ops["Keys"] = func(ctx context.Context) error { _, err := c.Keys(ctx, keyPrefix(t)+"*"); return err }
	ops["SPublish"] = func(ctx context.Context) error { _, err := c.SPublish(ctx, a, "m"); return err }
	ops["SSubscribe"] = func(ctx context.Context) error { _, err := c.SSubscribe(ctx, a); return err }
	ops["Batch of two slots"] = func(ctx context.Context) error {
		bt := c.NewBatch()
		bt.Get(a)
		bt.Get(b)
		bt.Do(NewCommand("ECHO"), "x")
		return bt.Execute(ctx)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	counts := func() (frames, sessions int) {
		for _, px := range proxies {
			frames += framesSent(px) - px.Forwarded("CLUSTER")
			sessions += px.Sessions()
		}
		return frames, sessions
	}
	for name, op := range ops {
		frames, sessions := counts()
		err := op(cancelled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error matching context.Canceled", name, err)
		}
		if f, s := counts(); f != frames || s != sessions {
			t.Errorf("%s with a cancelled context sent %d frames on %d new connections, want none", name, f-frames, s-sessions)
		}
	}
}

// TestContextEndedAsDedicatedDialCompletesSendsNothing: a context that
// ends after a dedicated connection's handshake succeeded but before the
// call got the connection (here: while the dial reports the connection
// opened) sends nothing: a blocking pop fails with the context's error and
// pops nothing, and a Dedicated callback's first command sends nothing.
// The connection is kept for the next caller.
func TestContextEndedAsDedicatedDialCompletesSendsNothing(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	calls := map[string]func(ctx context.Context, c *Client, list string) error{
		"BLPop": func(ctx context.Context, c *Client, list string) error {
			_, _, err := c.BLPop(ctx, 0, list)
			return err
		},
		"Do BLPOP": func(ctx context.Context, c *Client, list string) error {
			_, err := c.Do(ctx, catalog.List.BLPOP(), list, "0")
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var opened onOpened
			c := newClient(t, Options{Logger: slog.New(&opened)})
			list := key(t, "list")
			if _, err := c.RPush(testCtx(t), list, "x"); err != nil {
				t.Fatal(err)
			}
			pops := commandCalls(t, addr, "blpop")
			ctx, cancel := context.WithCancel(testCtx(t))
			opened.arm(cancel)
			err := call(ctx, c, list)
			if !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
				t.Errorf("%s whose context ended as its connection opened = %v, want an error matching context.Canceled that did not run", name, err)
			}
			if n, _ := admin(t, addr, "LLEN", list).Int64(); n != 1 {
				t.Errorf("LLEN = %d, want 1: the element was popped for a caller that had left", n)
			}
			if n := commandCalls(t, addr, "blpop") - pops; n != 0 {
				t.Errorf("the server ran BLPOP %d times, want none", n)
			}
			if s := c.blocking.Stats(); s.Lent != 0 || s.Idle != 1 {
				t.Errorf("dedicated connections: %+v, want the new one idle", s)
			}
		})
	}
}

// onOpened is a slog.Handler that, once armed (beforeHook.arm), calls
// its function when the client logs a connection opened.
type onOpened struct{ beforeHook }

func (h *onOpened) Enabled(context.Context, slog.Level) bool { return true }

func (h *onOpened) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "respire: connection opened" {
		h.fire()
	}
	return nil
}

func (h *onOpened) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *onOpened) WithGroup(string) slog.Handler { return h }

// TestClusterDedicatedContextEndedAsBindDialCompletes: a Cluster Conn's
// first command, which dials the connection of its keys' node, is not
// sent when its context ended as that dial completed.
func TestClusterDedicatedContextEndedAsBindDialCompletes(t *testing.T) {
	var opened onOpened
	c := clusterClient(t, Options{Logger: slog.New(&opened)})
	k := keyPrefix(t) + "list"
	t.Cleanup(func() { _, _ = c.Del(context.Background(), k) })
	ctx, cancel := context.WithCancel(testCtx(t))
	opened.arm(cancel)
	var doErr error
	err := c.Dedicated(ctx, func(conn *Conn) error {
		_, doErr = conn.Do(ctx, NewCommand("RPUSH"), k, "x")
		return doErr
	})
	if !errors.Is(doErr, context.Canceled) || MayHaveExecuted(doErr) || !errors.Is(err, context.Canceled) {
		t.Errorf("RPUSH whose context ended as its connection opened = %v (Dedicated: %v), want an error matching context.Canceled that did not run", doErr, err)
	}
	if n, err := c.LLen(testCtx(t), k); err != nil || n != 0 {
		t.Errorf("LLEN = %d, %v; want 0: the command was sent", n, err)
	}
}

// TestSentinelPathsWithEndedContextSendNothing: on a Sentinel client every
// public path sends nothing to the primary and dials nothing with a
// context that has already ended, and fails with its error.
func TestSentinelPathsWithEndedContextSendNothing(t *testing.T) {
	primary := sentinelPrimary(t)
	px := realProxy(t, primary)
	c := sentinelClient(t, Options{ClientCache: &CacheOptions{}, Dialer: rewriteDialer(map[string]string{primary: px.Addr()})})
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, keyPrefix(t)+"ch")
	must(t, err)
	defer sub.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for name, op := range endedPathOps(t, c, sub) {
		frames, sessions := framesSent(px), px.Sessions()
		err := op(cancelled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error matching context.Canceled", name, err)
		}
		if f, s := framesSent(px), px.Sessions(); f != frames || s != sessions {
			t.Errorf("%s with a cancelled context sent %d frames on %d new connections, want none", name, f-frames, s-sessions)
		}
	}
}

// TestFunctionReloadCancelled: a Function.Call whose context ends when
// its FCALL found no function never loads the library; one whose context
// ends while the library load's reply is owed never sends the second
// FCALL; both fail with the context's error and, under a retry policy
// that would resend them, are not resent. The next callers get their own
// replies.
func TestFunctionReloadCancelled(t *testing.T) {
	for _, step := range []string{"at the missing function", "during the load"} {
		t.Run(step, func(t *testing.T) {
			fx := newFunctionFixture(t)
			fn := NewFunction(fx.lib, fx.name, FunctionOptions{ReadOnly: true, Source: fx.src}).WithRetryCategory(ReadOnly)
			ctx, cancel := context.WithCancel(fx.ctx)
			var held *respiretest.RuleHandle
			if step == "during the load" {
				held = holdNext(t, fx.px, "FUNCTION", "LOAD")
				go func() { <-held.Received(); cancel() }()
			} else {
				fx.px.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Action: respiretest.Inject("ERR Function not found"),
					OnReceive: func([]string) { cancel() }})
			}
			_, err := fn.Call(ctx, fx.c, []string{fx.k})
			if held != nil {
				held.Release()
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Call cancelled %s = %v, want an error matching context.Canceled", step, err)
			}
			wantLoads := map[string]int64{"at the missing function": 0, "during the load": 1}[step]
			if n := fx.px.Stats("FUNCTION").Received; n != wantLoads {
				t.Errorf("the proxy received %d FUNCTION LOAD, want %d", n, wantLoads)
			}
			if n := fx.px.Stats("FCALL_RO").Received; n != 1 {
				t.Errorf("the proxy received %d FCALL_RO, want 1: none after the context ended", n)
			}
			checkOwnReplies(t, fx.c, 4)
		})
	}
}
