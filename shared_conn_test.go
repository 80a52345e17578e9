package respire

// The shared connection carries only commands that get one reply and leave
// the connection as they found it: Do refuses the others before any I/O,
// and blocking commands run on dedicated connections. Real server, through
// the fault proxy, whose receipt counts prove that nothing was written.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// refusedCalls are raw invocations of every command the shared connection
// refuses, in the forms a user may write them: catalog descriptors, names
// in any case, the subcommand as the first argument, and module commands
// declared stateful.
var refusedCalls = []struct {
	name string // the name the error must carry
	cmd  Command
	args []string
}{
	{"SUBSCRIBE", catalog.PubSub.SUBSCRIBE(), []string{"ch"}},
	{"SUBSCRIBE", NewCommand("subscribe"), []string{"ch"}},
	{"UNSUBSCRIBE", NewCommand("UNSUBSCRIBE"), nil},
	{"PSUBSCRIBE", catalog.PubSub.PSUBSCRIBE(), []string{"p*"}},
	{"PUNSUBSCRIBE", catalog.PubSub.PUNSUBSCRIBE(), nil},
	{"SSUBSCRIBE", catalog.PubSub.SSUBSCRIBE(), []string{"ch"}},
	{"SUNSUBSCRIBE", catalog.PubSub.SUNSUBSCRIBE(), nil},
	{"MONITOR", catalog.Server.MONITOR(), nil},
	{"SYNC", NewCommand("SYNC"), nil},
	{"PSYNC", NewCommand("PSYNC"), []string{"?", "-1"}},
	{"REPLCONF", NewCommand("REPLCONF"), []string{"listening-port", "1"}},
	// SCRIPT DEBUG turns every later EVAL on the connection into a
	// debugging session (and EVALSHA into an error); RESET does not undo it.
	{"SCRIPT DEBUG", catalog.Scripting.SCRIPT_DEBUG(), []string{"YES"}},
	{"SCRIPT DEBUG", NewCommand("SCRIPT"), []string{"debug", "sync"}},
	{"CLIENT REPLY", catalog.Conn.CLIENT_REPLY(), []string{"OFF"}},
	{"CLIENT REPLY", NewCommand("CLIENT"), []string{"reply", "off"}},
	{"CLIENT REPLY", NewCommand("client reply"), []string{"SKIP"}},
	{"CLIENT TRACKING", catalog.Conn.CLIENT_TRACKING(), []string{"ON"}},
	{"CLIENT CACHING", catalog.Conn.CLIENT_CACHING(), []string{"yes"}},
	{"CLIENT SETNAME", catalog.Conn.CLIENT_SETNAME(), []string{"x"}},
	{"CLIENT SETNAME", NewCommand("CLIENT"), []string{"SETNAME", "x"}},
	{"CLIENT SETINFO", catalog.Conn.CLIENT_SETINFO(), []string{"lib-name", "x"}},
	{"CLIENT NO-EVICT", catalog.Conn.CLIENT_NO_EVICT(), []string{"on"}},
	{"CLIENT NO-TOUCH", catalog.Conn.CLIENT_NO_TOUCH(), []string{"on"}},
	{"HELLO", catalog.Conn.HELLO(), []string{"3"}},
	{"AUTH", catalog.Conn.AUTH(), []string{"secret"}},
	{"SELECT", catalog.Conn.SELECT(), []string{"1"}},
	// WAIT through Do would run on a connection of its own, which made
	// no write: it would return at once, counting nothing of the caller's.
	{"WAIT", NewCommand("WAIT"), []string{"1", "100"}},
	{"WAITAOF", NewCommand("waitaof"), []string{"1", "0", "100"}},
	// An argument written into the name of a command without
	// subcommands reaches the server as that command's argument.
	{"WAIT", NewCommand("WAIT 1"), []string{"100"}},
	{"HELLO", NewCommand("hello 3"), nil},
	{"SELECT", NewCommand("select").WithRetryCategory(ReadOnly), []string{"1"}},
	{"RESET", catalog.Conn.RESET(), nil},
	{"QUIT", catalog.Conn.QUIT(), nil},
	{"READONLY", catalog.Cluster.READONLY(), nil},
	{"READWRITE", catalog.Cluster.READWRITE(), nil},
	{"ASKING", catalog.Cluster.ASKING(), nil},
	{"MULTI", catalog.Transactions.MULTI(), nil},
	{"EXEC", catalog.Transactions.EXEC(), nil},
	{"DISCARD", catalog.Transactions.DISCARD(), nil},
	{"WATCH", catalog.Transactions.WATCH(), []string{"k"}},
	{"UNWATCH", catalog.Transactions.UNWATCH(), nil},
	{"MYMODULE.STATE", NewCommand("MYMODULE.STATE").WithFlags(catalog.FlagConnectionState), nil},
	{"MYMODULE.SUB", NewCommand("MYMODULE.SUB").WithFlags(catalog.FlagPubSub), []string{"ch"}},
}

// totalReceived is the number of complete frames the proxy received.
func totalReceived(p *respiretest.Proxy) int64 {
	var n int64
	for _, s := range p.AllStats() {
		n += s.Received
	}
	return n
}

// Every refused command fails before any I/O with an error that matches
// ErrInvalidArgument, names the command and says where it belongs; the
// shared connection then still serves 1,000 concurrent callers each their
// own reply.
func TestDoRefusesStateCommandsWithoutWriting(t *testing.T) {
	addr := standaloneAddr(t)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			proxy, err := respiretest.NewProxy(addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = proxy.Close() })
			c := newClient(t, Options{Endpoints: []string{proxy.Addr()}, Protocol: p,
				RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: ServerAdmin}})
			ctx := testCtx(t)
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			for _, tt := range refusedCalls {
				before := totalReceived(proxy)
				_, err := c.Do(ctx, tt.cmd, anys(tt.args)...)
				if !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("Do(%s %v) = %v, want ErrInvalidArgument", tt.cmd.FullName(), tt.args, err)
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.name+":") || !strings.Contains(msg, "refused on the shared connection") ||
					!strings.ContainsAny(msg, ";") {
					t.Errorf("Do(%s %v) error %q: want it to name %s and say where it belongs", tt.cmd.FullName(), tt.args, msg, tt.name)
				}
				if MayHaveExecuted(err) {
					t.Errorf("MayHaveExecuted(%v) = true for a refused command", err)
				}
				if got := totalReceived(proxy); got != before {
					t.Errorf("Do(%s %v): the proxy received %d frames, want 0", tt.cmd.FullName(), tt.args, got-before)
				}
			}
			concurrentOwnReplies(t, c, 1000)
		})
	}
}

// concurrentOwnReplies sets n distinct keys to distinct values, then GETs
// them all concurrently: every caller must get its own value.
func concurrentOwnReplies(t *testing.T, c *Client, n int) {
	t.Helper()
	ctx := testCtx(t)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(t, "own", strconv.Itoa(i))
		if err := c.Set(ctx, keys[i], "value-"+strconv.Itoa(i)); err != nil {
			t.Fatalf("Set: %v", err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i := range keys {
		wg.Go(func() {
			got, err := c.Get(ctx, keys[i])
			if want := "value-" + strconv.Itoa(i); err != nil || got != want {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("GET %s = %q, %v; want %q", keys[i], got, err, want))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d of %d callers got a wrong reply, first: %s", len(bad), n, bad[0])
	}
}

// The refused set is derived from the catalog's flags plus the documented
// exceptions: exactly the commands that break one reply per command or
// change connection state, and not PUBLISH, SPUBLISH or PUBSUB's
// introspection.
func TestRefusedCommandsList(t *testing.T) {
	got := RefusedCommands()
	want := []string{
		"ASKING", "AUTH", "CLIENT CACHING", "CLIENT CAPA", "CLIENT NO-EVICT", "CLIENT NO-TOUCH",
		"CLIENT REPLY", "CLIENT SETINFO", "CLIENT SETNAME", "CLIENT TRACKING", "DISCARD", "EXEC",
		"HELLO", "MONITOR", "MULTI", "PSUBSCRIBE", "PSYNC", "PUNSUBSCRIBE", "QUIT", "READONLY",
		"READWRITE", "REPLCONF", "RESET", "SCRIPT DEBUG", "SELECT", "SSUBSCRIBE", "SUBSCRIBE", "SUNSUBSCRIBE",
		"SYNC", "UNSUBSCRIBE", "UNWATCH", "WAIT", "WAITAOF", "WATCH",
	}
	if !slices.Equal(got, want) {
		t.Errorf("RefusedCommands() =\n%v\nwant\n%v", got, want)
	}
	for _, name := range []string{"PUBLISH", "SPUBLISH", "PUBSUB CHANNELS", "PUBSUB NUMSUB", "CLIENT KILL", "CLIENT ID", "DEBUG", "GET"} {
		if slices.Contains(got, name) {
			t.Errorf("%s is refused; it is an ordinary request/reply command", name)
		}
	}
}

// Commands that stay on the shared connection: publishing and pub/sub
// introspection, a module command without declared flags, and XREAD
// without BLOCK.
func TestDoAllowsRequestReplyCommands(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		for _, call := range []struct {
			cmd  Command
			args []string
		}{
			{catalog.PubSub.PUBLISH(), []string{key(t, "ch"), "hello"}},
			{catalog.PubSub.SPUBLISH(), []string{key(t, "ch"), "hello"}},
			{catalog.PubSub.PUBSUB_CHANNELS(), nil},
			{NewCommand("PUBSUB"), []string{"NUMSUB", key(t, "ch")}},
			{catalog.Stream.XREAD(), []string{"COUNT", "1", "STREAMS", key(t, "s"), "0"}},
		} {
			if _, err := c.Do(ctx, call.cmd, anys(call.args)...); err != nil {
				t.Errorf("Do(%s %v): %v", call.cmd.FullName(), call.args, err)
			}
		}
		_, err := c.Do(ctx, NewCommand("MYMODULE.NOSUCH"))
		var se *ServerError
		if !errors.As(err, &se) {
			t.Errorf("unknown module command: err = %v, want the server's own error reply", err)
		}
	})
}

// A blocking command runs on a dedicated connection: while BLPOP blocks,
// GETs on the shared connection keep answering, and the popped element is
// delivered to the caller that blocked.
func TestBlockingCommandsDoNotStallSharedConnection(t *testing.T) {
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		list := key(t, "list")
		type popped struct {
			k, v string
			err  error
		}
		done := make(chan popped, 1)
		go func() {
			k, v, err := c.BLPop(ctx, 0, list)
			done <- popped{k, v, err}
		}()
		waitNamedBlocked(t, name)
		k := key(t, "k")
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if got, err := c.Get(ctx, k); err != nil || got != "v" {
				t.Fatalf("GET while BLPOP blocks = %q, %v", got, err)
			}
		}
		if _, err := c.RPush(ctx, list, "element"); err != nil {
			t.Fatal(err)
		}
		p := <-done
		if p.err != nil || p.k != list || p.v != "element" {
			t.Errorf("BLPop = %q, %q, %v; want %q, element", p.k, p.v, p.err, list)
		}
	})
}

// blockingName returns a client name unique to this run, so that
// waitNamedBlocked finds the client's own connections on a server other tests
// share.
func blockingName(t *testing.T) string {
	blockingNames.Add(1)
	return "respire-blocking-" + runID + "-" + strconv.FormatInt(blockingNames.Load(), 10)
}

var blockingNames atomic.Int64

// waitNamedBlocked waits until a connection named name is blocked on the server
// (CLIENT LIST flag b) and returns its id.
func waitNamedBlocked(t *testing.T, name string) (id string) {
	t.Helper()
	return waitNamedClient(t, name, "blocked", func(line string) bool {
		return strings.Contains(infoField(line, "flags"), "b")
	})
}

// waitNamedClient waits until a connection named name on the standalone
// server has a CLIENT LIST line that is (what) and returns its id. It
// polls the server's state, which is what the test waits for, not one of
// our goroutines.
func waitNamedClient(t *testing.T, name, what string, is func(line string) bool) (id string) {
	t.Helper()
	addr := standaloneAddr(t)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list, _ := admin(t, addr, "CLIENT", "LIST").String()
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " name="+name+" ") && is(line) {
				return infoField(line, "id")
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no connection named %s %s on the server", name, what)
	return ""
}

// A caller whose context ends while the server still blocks for it gets a
// ContextError once the server has unblocked its command: an element
// pushed later is left in the list for the next consumer, never popped for
// nobody, and the connection, whose reply was read, serves again.
func TestBlockingCallerGoneClosesItsConnection(t *testing.T) {
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name}, func(t *testing.T, c *Client) {
		list := key(t, "list")
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() {
			_, _, err := c.BLPop(ctx, 0, list)
			errc <- err
		}()
		waitNamedBlocked(t, name)
		cancel()
		err := <-errc
		var ce *ContextError
		if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || !ce.Sent {
			t.Fatalf("BLPop after cancel: %v, want a *ContextError (Sent) matching context.Canceled", err)
		}
		if s := c.blocking.Stats(); s.Lent != 0 || s.Open > 1 {
			t.Errorf("dedicated connections after the stopped call: %+v, want none lent", s)
		}
		if _, err := c.RPush(testCtx(t), list, "later"); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Do(testCtx(t), catalog.List.LLEN(), list); err != nil {
			t.Fatal(err)
		} else if got, _ := n.Int64(); got != 1 {
			t.Errorf("LLEN = %d after the caller left, want 1: the element was popped for nobody", got)
		}
		if k, v, err := c.BLPop(testCtx(t), time.Second, list); err != nil || k != list || v != "later" {
			t.Errorf("BLPop after the stopped call = %q, %q, %v; want the element", k, v, err)
		}
	})
}

// A WAIT whose caller gives up is stopped on the server like a pop, but
// the count the stop makes it answer is no result: the call fails with
// the context's error, through Conn.Wait and Conn.Do alike (Client.Do
// refuses WAIT). (The standalone server has no replica: WAIT 1 0 waits
// until stopped.)
func TestBlockingWaitCallerGoneIsContextError(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	calls := map[string]func(ctx context.Context) error{
		"Conn.Do": func(ctx context.Context) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Do(ctx, catalog.Generic.WAIT(), "1", "0")
				return err
			})
		},
		"Conn.Wait": func(ctx context.Context) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Wait(ctx, 1, 0)
				return err
			})
		},
	}
	for what, call := range calls {
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() { errc <- call(ctx) }()
		waitNamedBlocked(t, name)
		cancel()
		var ce *ContextError
		if err := <-errc; !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s WAIT after cancel: %v, want a *ContextError matching context.Canceled", what, err)
		}
	}
}

// The typed blocking commands and their raw forms: values, the timeout
// (ErrNil), and blocking XREAD through Do.
func TestTypedBlockingCommands(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		l1, l2, z := key(t, "l1"), key(t, "l2"), key(t, "z")
		if _, err := c.RPush(ctx, l2, "a", "b", "c"); err != nil {
			t.Fatal(err)
		}
		if k, v, err := c.BLPop(ctx, time.Second, l1, l2); err != nil || k != l2 || v != "a" {
			t.Errorf("BLPop = %q, %q, %v; want %q, a", k, v, err, l2)
		}
		if k, v, err := c.BRPop(ctx, time.Second, l1, l2); err != nil || k != l2 || v != "c" {
			t.Errorf("BRPop = %q, %q, %v; want %q, c", k, v, err, l2)
		}
		if v, err := c.BLMove(ctx, l2, l1, ListLeft, ListRight, time.Second); err != nil || v != "b" {
			t.Errorf("BLMove = %q, %v; want b", v, err)
		}
		if _, _, err := c.BLPop(ctx, 50*time.Millisecond, l2); !errors.Is(err, ErrNil) {
			t.Errorf("BLPop on an empty list = %v, want ErrNil after the timeout", err)
		}
		if _, err := c.BLMove(ctx, l2, l1, ListRight, ListLeft, 50*time.Millisecond); !errors.Is(err, ErrNil) {
			t.Errorf("BLMove from an empty list = %v, want ErrNil", err)
		}
		if _, err := c.ZAdd(ctx, z, ZAddOptions{}, Z{1, "one"}, Z{2, "two"}, Z{3, "three"}); err != nil {
			t.Fatal(err)
		}
		if k, m, err := c.BZPopMin(ctx, time.Second, z); err != nil || k != z || m != (Z{1, "one"}) {
			t.Errorf("BZPopMin = %q, %+v, %v", k, m, err)
		}
		if k, m, err := c.BZPopMax(ctx, time.Second, z); err != nil || k != z || m != (Z{3, "three"}) {
			t.Errorf("BZPopMax = %q, %+v, %v", k, m, err)
		}
		if _, _, err := c.BZPopMin(ctx, 50*time.Millisecond, key(t, "nothing")); !errors.Is(err, ErrNil) {
			t.Errorf("BZPopMin on a missing key = %v, want ErrNil", err)
		}
		s := key(t, "s")
		if _, err := c.Do(ctx, catalog.Stream.XADD(), s, "1-1", "f", "v"); err != nil {
			t.Fatal(err)
		}
		r, err := c.Do(ctx, catalog.Stream.XREAD(), "BLOCK", "1000", "STREAMS", s, "0")
		if err != nil || r.IsNull() {
			t.Errorf("XREAD BLOCK = %v, %v; want the entry", r, err)
		}
		r, err = c.Do(ctx, catalog.Stream.XREAD(), "BLOCK", "50", "STREAMS", s, "$")
		if err != nil || !r.IsNull() {
			t.Errorf("XREAD BLOCK 50 with nothing new = %v, %v; want a null reply", r, err)
		}
		if err := c.Dedicated(ctx, func(conn *Conn) error {
			r, err := conn.Do(ctx, catalog.Generic.WAIT(), "0", "10")
			if n, cerr := r.Int64(); err == nil && (cerr != nil || n != 0) {
				t.Errorf("WAIT 0 10 = %d, %v; want 0 replicas", n, cerr)
			}
			return err
		}); err != nil {
			t.Errorf("WAIT 0 10 on a dedicated connection: %v", err)
		}
	})
}

// Bad blocking input is refused before anything is sent: negative, non-
// numeric and sub-millisecond timeouts, no keys, a bad list side.
func TestBlockingBadInputSendsNothing(t *testing.T) {
	addr := standaloneAddr(t)
	proxy, err := respiretest.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}})
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	before := totalReceived(proxy)
	calls := map[string]func() error{
		"BLPop negative":      func() error { _, _, err := c.BLPop(ctx, -time.Second, "k"); return err },
		"BLPop sub-ms":        func() error { _, _, err := c.BLPop(ctx, time.Microsecond, "k"); return err },
		"BLPop no keys":       func() error { _, _, err := c.BLPop(ctx, time.Second); return err },
		"BRPop negative":      func() error { _, _, err := c.BRPop(ctx, -1, "k"); return err },
		"BZPopMin negative":   func() error { _, _, err := c.BZPopMin(ctx, -1, "k"); return err },
		"BLMove bad side":     func() error { _, err := c.BLMove(ctx, "a", "b", ListSide(7), ListLeft, 0); return err },
		"BLMove negative":     func() error { _, err := c.BLMove(ctx, "a", "b", ListLeft, ListLeft, -1); return err },
		"Do BLPOP -1":         func() error { _, err := c.Do(ctx, catalog.List.BLPOP(), "k", "-1"); return err },
		"Do BLPOP abc":        func() error { _, err := c.Do(ctx, catalog.List.BLPOP(), "k", "abc"); return err },
		"Do BLPOP no timeout": func() error { _, err := c.Do(ctx, catalog.List.BLPOP()); return err },
		"Do BLMPOP NaN":       func() error { _, err := c.Do(ctx, catalog.List.BLMPOP(), "nan", "1", "k", "LEFT"); return err },
		"Do WAIT 1.5":         func() error { _, err := c.Do(ctx, catalog.Generic.WAIT(), "0", "1.5"); return err },
		"Do XREAD BLOCK -5": func() error {
			_, err := c.Do(ctx, catalog.Stream.XREAD(), "BLOCK", "-5", "STREAMS", "s", "$")
			return err
		},
		"Do XREAD BLOCK": func() error { _, err := c.Do(ctx, catalog.Stream.XREAD(), "BLOCK"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	if got := totalReceived(proxy); got != before {
		t.Errorf("the proxy received %d frames, want 0", got-before)
	}
	if s := c.blocking.Stats(); s.Open != 0 {
		t.Errorf("a dedicated connection was opened for bad input: %+v", s)
	}
}

// Out-of-range health and pool options fail Connect naming the field.
func TestSharedConnectionOptionsValidated(t *testing.T) {
	for _, tt := range []struct {
		field string
		opts  Options
	}{
		{"Options.HealthTimeout", Options{HealthTimeout: 50 * time.Millisecond}},
		{"Options.HealthTimeout", Options{HealthTimeout: -time.Second}},
		{"Options.IdlePingInterval", Options{IdlePingInterval: time.Millisecond}},
		{"Options.BlockingPoolSize", Options{BlockingPoolSize: -1}},
		{"Options.MaxPendingCommands", Options{MaxPendingCommands: -1}},
		{"Options.MaxPendingBytes", Options{MaxPendingBytes: -1}},
		{"Options.BatchConnections", Options{BatchConnections: -2}},
		{"Options.BatchConnections", Options{BatchConnections: 17}},
		{"Options.SoloConnections", Options{SoloConnections: -2}},
		{"Options.SoloConnections", Options{SoloConnections: 17}},
	} {
		tt.opts.Endpoints = []string{"127.0.0.1:1"}
		_, err := Connect(context.Background(), tt.opts)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("Connect(%+v) = %v, want a *ConfigError naming %s", tt.opts, err, tt.field)
		}
	}
}

// TestBlockingHugeTimeouts: a block time plus the command timeout that
// exceeds the largest Duration (a long CommandTimeout, or a BLPOP timeout
// of 1e10 seconds through Do) waits as long as it may, on Client.Do and on
// a dedicated Conn alike; the sum used to wrap into the past and fail
// every such call at once with a deadline error.
func TestBlockingHugeTimeouts(t *testing.T) {
	ctx := testCtx(t)
	long := newClient(t, Options{Endpoints: []string{standaloneAddr(t)}, CommandTimeout: NoTimeout - 1})
	if _, _, err := long.BLPop(ctx, 50*time.Millisecond, key(t, "empty")); !errors.Is(err, ErrNil) {
		t.Errorf("BLPop with CommandTimeout NoTimeout-1 = %v; want ErrNil after its 50ms", err)
	}
	c := newClient(t, Options{Endpoints: []string{standaloneAddr(t)}})
	blpop := catalog.List.BLPOP()
	for _, via := range []string{"Client.Do", "Conn.Do"} {
		k := key(t, via)
		got := make(chan error, 1)
		go func() {
			var r Reply
			var err error
			if via == "Client.Do" {
				r, err = c.Do(ctx, blpop, k, "1e10")
			} else {
				err = c.Dedicated(ctx, func(conn *Conn) error {
					r, err = conn.Do(ctx, blpop, k, "1e10")
					return err
				})
			}
			if s, _ := r.Strings(); err == nil && (len(s) != 2 || s[1] != "v") {
				err = fmt.Errorf("reply %q", s)
			}
			got <- err
		}()
		// Served at once if the push comes first, else when it arrives.
		if _, err := c.LPush(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Errorf("%s BLPOP %s 1e10 = %v; want [%s v]", via, k, err, k)
			_, _ = c.Del(ctx, k)
		}
	}
}

// A caller that gives up after its BLPOP was written but before the server
// read it: the first CLIENT UNBLOCK finds nothing blocked (0). The client
// asks again until the server has blocked and unblocked the command, and
// takes its null reply; an element pushed after the call returned stays in
// the list, never popped for nobody by a command still blocked on a
// connection being closed. Client.BLPop pools the connection again; a
// Conn, whose command failed, closes it when the callback returns.
func TestBlockingCallerGoneBeforeServerBlocked(t *testing.T) {
	calls := map[string]func(c *Client, ctx context.Context, list string) error{
		"Client.BLPop": func(c *Client, ctx context.Context, list string) error {
			_, _, err := c.BLPop(ctx, 0, list)
			return err
		},
		"Conn.Do": func(c *Client, ctx context.Context, list string) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Do(ctx, catalog.List.BLPOP(), list, "0")
				return err
			})
		},
	}
	for via, call := range calls {
		t.Run(via, func(t *testing.T) {
			name := blockingName(t)
			c, px := proxiedStandalone(t, Options{ClientName: name})
			addr := standaloneAddr(t)
			list := key(t, "list")
			arrived, release := make(chan struct{}), make(chan struct{})
			var releaseOnce sync.Once
			unhold := func() { releaseOnce.Do(func() { close(release) }) }
			defer unhold()
			px.MustAddRule(t, respiretest.Rule{Command: "BLPOP", Action: respiretest.Pass,
				OnReceive: func([]string) { close(arrived); <-release }})
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() { errc <- call(c, ctx, list) }()
			<-arrived // written by the client, not yet read by the server
			cancel()
			waitNamedClient(t, name, "ran CLIENT UNBLOCK last", func(line string) bool {
				return infoField(line, "cmd") == "client|unblock"
			})
			unhold() // the server reads the BLPOP after the CLIENT UNBLOCK
			err := <-errc
			var ce *ContextError
			if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
				t.Fatalf("BLPOP after cancel: %v, want a *ContextError matching context.Canceled", err)
			}
			if _, err := admin(t, addr, "RPUSH", list, "later").Int64(); err != nil {
				t.Fatal(err)
			}
			if n, _ := admin(t, addr, "LLEN", list).Int64(); n != 1 {
				t.Errorf("LLEN = %d after the caller left, want 1: the element was popped for nobody", n)
			}
			if s := c.blocking.Stats(); via == "Client.BLPop" && (s.Lent != 0 || s.Idle != 1) {
				t.Errorf("dedicated connections after the stopped call: %+v, want the connection pooled", s)
			}
		})
	}
}

// TestBlockingArgumentWrittenIntoName: a word written into the name of a
// command without subcommands (NewCommand("XREAD BLOCK")) reaches the
// server as the command's first argument, and the blocking rules read it
// there: Client.Do runs XREAD BLOCK 0 on a connection of its own, never on
// the shared one, and a Conn whose caller gives up stops it on the server
// (CLIENT UNBLOCK) while the callback goes on.
func TestBlockingArgumentWrittenIntoName(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	ctx := testCtx(t)
	addr := standaloneAddr(t)
	s := key(t, "s")
	shared := clientID(t, c)
	got := make(chan error, 1)
	go func() {
		r, err := c.Do(ctx, NewCommand("xread block"), "0", "STREAMS", s, "$")
		if err == nil && r.IsNull() {
			err = errors.New("a null reply")
		}
		got <- err
	}()
	if id := waitNamedBlocked(t, name); id == shared {
		t.Errorf("XREAD BLOCK 0 blocks the shared connection (id %s)", id)
	}
	admin(t, addr, "XADD", s, "*", "f", "v")
	if err := <-got; err != nil {
		t.Errorf("Client.Do XREAD BLOCK 0 = %v, want the entry added", err)
	}

	err := c.Dedicated(ctx, func(conn *Conn) error {
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Do(cctx, NewCommand("XREAD BLOCK"), "0", "STREAMS", s, "$")
			errc <- err
		}()
		id := waitNamedBlocked(t, name)
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Conn.Do XREAD BLOCK 0 after cancel = %v, want context.Canceled", err)
		}
		line, _ := admin(t, addr, "CLIENT", "LIST", "ID", id).String()
		if strings.Contains(infoField(line, "flags"), "b") {
			t.Errorf("the cancelled XREAD still blocks on the server while the callback goes on: %s", line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
