package respire

// Functions on topologies: the library reload of a read served by a
// replica goes to the primary, Function.Load reaches every Cluster
// primary, and a lost reply after a reload resends the whole exchange.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// deleteLibrary registers a cleanup that deletes library on every addr
// that holds it.
func deleteLibrary(t *testing.T, library string, addrs ...string) {
	t.Cleanup(func() {
		for _, addr := range addrs {
			c := newAdmin(t, addr)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = c.Do(ctx, NewCommand("FUNCTION"), "DELETE", library) // absent: nothing to delete
			cancel()
			_ = c.Close()
		}
	})
}

// functionFixture is a proxied standalone client whose retry policy
// resends ReadOnly without delay, key k set to "v", and a library no
// server holds yet, deleted when the test ends.
type functionFixture struct {
	c              *Client
	px             *respiretest.Proxy
	ctx            context.Context
	addr, k        string
	lib, name, src string
}

func newFunctionFixture(t *testing.T) *functionFixture {
	t.Helper()
	fx := &functionFixture{addr: standaloneAddr(t), ctx: testCtx(t), k: keyPrefix(t) + "k"}
	fx.c, fx.px = proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	if err := fx.c.Set(fx.ctx, fx.k, "v"); err != nil {
		t.Fatal(err)
	}
	fx.lib, fx.name, fx.src = testLibrary(t)
	deleteLibrary(t, fx.lib, fx.addr)
	return fx
}

// nodeAddrs returns the addresses of nodes.
func nodeAddrs(nodes []*route.Node) []string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// hasLibrary reports whether the server at addr holds library.
func hasLibrary(t *testing.T, addr, library string) bool {
	t.Helper()
	return len(admin(t, addr, "FUNCTION", "LIST", "LIBRARYNAME", library).Elements()) == 1
}

// TestFunctionReloadFromReplicaRead: a read-only function with a Source,
// routed to a replica (ReadReplica) that lacks its library, loads the
// library on the primary (a replica refuses FUNCTION LOAD) and calls
// again there, within the call. The servers' commandstats witness each
// step: FCALL_RO once on the replica ("Function not found") and once on
// the primary, FUNCTION LOAD once on the primary.
func TestFunctionReloadFromReplicaRead(t *testing.T) {
	countsCommands(t)
	replicaTopologies(t, Options{ReadFrom: ReadReplica}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "k"
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		replica, primary := readReplica(t, c, route.Slot(k))
		lib, name, src := testLibrary(t)
		deleteLibrary(t, lib, nodeAddrs(c.topo.Primaries())...)
		fn := NewFunction(lib, name, FunctionOptions{ReadOnly: true, Source: src})

		loads := commandCalls(t, primary.Addr, "function|load")
		replicaLoads := commandCalls(t, replica.Addr, "function|load")
		onReplica, onPrimary := commandCalls(t, replica.Addr, "fcall_ro"), commandCalls(t, primary.Addr, "fcall_ro")
		r, err := fn.Call(ctx, c, []string{k})
		if v, _ := r.String(); err != nil || v != "v" {
			t.Fatalf("Call = %q, %v; want \"v\"", v, err)
		}
		if got := commandCalls(t, primary.Addr, "function|load") - loads; got != 1 {
			t.Errorf("the primary ran FUNCTION LOAD %d times, want 1", got)
		}
		if got := commandCalls(t, replica.Addr, "fcall_ro") - onReplica; got != 1 {
			t.Errorf("the replica ran FCALL_RO %d times, want 1 (Function not found)", got)
		}
		if got := commandCalls(t, primary.Addr, "fcall_ro") - onPrimary; got != 1 {
			t.Errorf("the primary ran FCALL_RO %d times, want 1 (after the reload)", got)
		}
		if !hasLibrary(t, primary.Addr, lib) {
			t.Errorf("the primary %s lacks %s after the reload", primary.Addr, lib)
		}
		// The replica gets the library only by replication: the client
		// never sent it FUNCTION LOAD (a replicated load may count at
		// most once).
		if got := commandCalls(t, replica.Addr, "function|load") - replicaLoads; got > 1 {
			t.Errorf("the replica ran FUNCTION LOAD %d times, want at most the replicated one", got)
		}
	})
}

// TestClusterFunctionLoad: Function.Load installs the library on every
// primary of a Cluster, and a call then needs no reload.
func TestClusterFunctionLoad(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	lib, name, src := testLibrary(t)
	primaries := nodeAddrs(c.topo.Primaries())
	deleteLibrary(t, lib, primaries...)
	fn := NewFunction(lib, name, FunctionOptions{ReadOnly: true, Source: src})
	if err := fn.Load(ctx, c); err != nil {
		t.Fatalf("Load = %v", err)
	}
	for _, addr := range primaries {
		if !hasLibrary(t, addr, lib) {
			t.Errorf("primary %s lacks %s after Load", addr, lib)
		}
	}
	k := keyPrefix(t) + "k"
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	owner := slotPrimary(t, c, route.Slot(k))
	loads := commandCalls(t, owner.Addr, "function|load")
	if r, err := fn.Call(ctx, c, []string{k}); err != nil {
		t.Fatalf("Call = %v", err)
	} else if v, _ := r.String(); v != "v" {
		t.Errorf("Call = %q, want v", v)
	}
	if got := commandCalls(t, owner.Addr, "function|load") - loads; got != 0 {
		t.Errorf("Call after Load ran FUNCTION LOAD %d times, want 0", got)
	}
}

// TestFunctionRetryMetrics: a function's resend that reloads its library
// (FCALL_RO "Function not found", FUNCTION LOAD, FCALL_RO) counts as one
// attempted resend; a resend that got no connection counts nothing. The
// kit's engine has no functions: rules answer for it.
func TestFunctionRetryMetrics(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 5, InitialBackoff: NoBackoff}})
		// Attempt 1: FCALL_RO is dropped with its connection. The
		// replacement dial and the next are refused, so one or two
		// resends get no connection. The next resend is the reload.
		s.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Action: respiretest.DropBeforeForward})
		notFound := s.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Nth: 2, Action: respiretest.Inject("ERR Function not found")})
		called := s.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Nth: 3, Times: respiretest.Always, Action: respiretest.Reply([]byte(":7\r\n"))})
		load := s.MustAddRule(t, respiretest.Rule{Command: "FUNCTION", Arg: "LOAD", Times: respiretest.Always, Action: respiretest.Reply([]byte("$3\r\nlib\r\n"))})
		if err := s.RefuseDials(2); err != nil {
			t.Fatal(err)
		}
		fn := NewFunction("lib", "f", FunctionOptions{ReadOnly: true, Source: "#!lua name=lib\n"}).WithRetryCategory(ReadOnly)
		r, err := fn.Call(bg, c, nil)
		if n, _ := r.Int64(); err != nil || n != 7 {
			t.Fatalf("Call = %d, %v; want 7", n, err)
		}
		if nf, l, cl := notFound.Applied(), load.Applied(), called.Applied(); nf != 1 || l != 1 || cl != 1 {
			t.Errorf("Function not found %d, FUNCTION LOAD %d, answered FCALL_RO %d times; want 1 each", nf, l, cl)
		}
		want := retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}
		if got := retryCollect(t, reader); !got.equal(want) {
			t.Errorf("counts = %v, want %v", got, want)
		}
	})
}

// TestFunctionLostReplyAfterReload: a reply lost after the library reload
// (FUNCTION LOAD's own, or that of the call after it) resends the whole
// exchange of a declared function, which then finds the library; an
// undeclared function is not resent.
func TestFunctionLostReplyAfterReload(t *testing.T) {
	countsCommands(t)
	for _, tc := range []struct {
		name     string
		declared bool
		rule     respiretest.Rule
		wantErr  bool
		fcalls   int // FCALL_RO runs: "Function not found", ..., the successful one
	}{
		{"LoadReplyLost", true, respiretest.Rule{Command: "FUNCTION", Arg: "LOAD", Action: respiretest.DropAfterForward}, false, 2},
		{"CallReplyLost", true, respiretest.Rule{Command: "FCALL_RO", Nth: 2, Action: respiretest.DropAfterForward}, false, 3},
		{"UndeclaredLoadReplyLost", false, respiretest.Rule{Command: "FUNCTION", Arg: "LOAD", Action: respiretest.DropAfterForward}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFunctionFixture(t)
			addr := fx.addr
			fn := NewFunction(fx.lib, fx.name, FunctionOptions{ReadOnly: true, Source: fx.src})
			if tc.declared {
				fn = fn.WithRetryCategory(ReadOnly)
			}
			lost := fx.px.MustAddRule(t, tc.rule)
			loads, fcalls := commandCalls(t, addr, "function|load"), commandCalls(t, addr, "fcall_ro")
			r, err := fn.Call(fx.ctx, fx.c, []string{fx.k})
			if lost.Applied() != 1 {
				t.Fatalf("the rule applied %d times, want 1", lost.Applied())
			}
			if tc.wantErr {
				if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
					t.Errorf("Call = %v; want the lost reply, possibly executed", err)
				}
			} else if v, _ := r.String(); err != nil || v != "v" {
				t.Errorf("Call = %q, %v; want \"v\" from the resend", v, err)
			}
			if got := commandCalls(t, addr, "function|load") - loads; got != 1 {
				t.Errorf("FUNCTION LOAD ran %d times, want 1", got)
			}
			if got := commandCalls(t, addr, "fcall_ro") - fcalls; got != tc.fcalls {
				t.Errorf("FCALL_RO ran %d times, want %d", got, tc.fcalls)
			}
		})
	}
}
