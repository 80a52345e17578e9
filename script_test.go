package respire

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

const readScriptSrc = "return redis.call('GET', KEYS[1])"

// uniqueScript returns a read script whose digest no other test, and no
// earlier run of this one (-count), shares, so that the server's script
// cache starts without it.
func uniqueScript(t *testing.T, opt ScriptOptions) *Script {
	return NewScript(readScriptSrc+" -- "+scriptNonce(t), opt)
}

// scriptNonce returns a comment text unique to this run of t.
func scriptNonce(t *testing.T) string {
	return keyPrefix(t) + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// TestScriptRetries: a lost reply of a script declared ReadOnly is resent
// (the server ran EVALSHA twice); an undeclared script, read-only or not,
// is not (once, possibly executed); raw EVALSHA through Do never is.
func TestScriptRetries(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	for _, tc := range []struct {
		name    string
		script  func(*Script) *Script
		resends bool
	}{
		{"DeclaredReadOnly", func(s *Script) *Script { return s.WithRetryCategory(ReadOnly) }, true},
		{"UndeclaredReadOnlyScript", func(s *Script) *Script { return s }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
			ctx := testCtx(t)
			k := keyPrefix(t) + "k"
			if err := c.Set(ctx, k, "v"); err != nil {
				t.Fatal(err)
			}
			s := tc.script(uniqueScript(t, ScriptOptions{ReadOnly: true}))
			if err := s.Load(ctx, c); err != nil {
				t.Fatalf("Load: %v", err)
			}
			px.MustAddRule(t, respiretest.Rule{Command: "EVALSHA_RO", Times: 1, Action: respiretest.DropAfterForward})
			before := commandCalls(t, addr, "evalsha_ro")
			r, err := s.Run(ctx, c, []string{k})
			ran := commandCalls(t, addr, "evalsha_ro") - before
			if !tc.resends {
				if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) || ran != 1 {
					t.Fatalf("Run = %v after %d EVALSHA_RO; want the lost reply, possibly executed, not resent", err, ran)
				}
				return
			}
			if v, _ := r.String(); err != nil || v != "v" || ran != 2 {
				t.Fatalf("Run = %q, %v after %d EVALSHA_RO; want \"v\" from the resend (2 runs)", v, err, ran)
			}
		})
	}
	t.Run("RawEVALSHA", func(t *testing.T) {
		c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}})
		ctx := testCtx(t)
		s := uniqueScript(t, ScriptOptions{})
		if err := s.Load(ctx, c); err != nil {
			t.Fatal(err)
		}
		px.MustAddRule(t, respiretest.Rule{Command: "EVALSHA", Times: 1, Action: respiretest.DropAfterForward})
		before := commandCalls(t, addr, "evalsha")
		_, err := c.Do(ctx, catalog.Scripting.EVALSHA().WithRetryCategory(ReadOnly), s.SHA(), "1", keyPrefix(t)+"k")
		if ran := commandCalls(t, addr, "evalsha") - before; !errors.Is(err, ErrConnectionLost) || ran != 1 {
			t.Fatalf("Do(EVALSHA) = %v after %d runs; want the lost reply, never resent", err, ran)
		}
	})
}

// TestScriptFallback: a script the server does not know runs with exactly
// one EVAL fallback; the next call needs none; after SCRIPT FLUSH exactly
// one fallback again. The fallback is part of the call's retried exchange:
// a lost EVAL reply resends EVALSHA (then EVAL again).
func TestScriptFallback(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	ctx := testCtx(t)
	k := keyPrefix(t) + "k"
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	s := uniqueScript(t, ScriptOptions{}).WithRetryCategory(ReadOnly)
	run := func(wantEvals int) {
		t.Helper()
		sha, eval := commandCalls(t, addr, "evalsha"), commandCalls(t, addr, "eval")
		r, err := s.Run(ctx, c, []string{k})
		if v, _ := r.String(); err != nil || v != "v" {
			t.Fatalf("Run = %q, %v", v, err)
		}
		if got := commandCalls(t, addr, "evalsha") - sha; got != 1 {
			t.Errorf("EVALSHA ran %d times, want 1", got)
		}
		if got := commandCalls(t, addr, "eval") - eval; got != wantEvals {
			t.Errorf("EVAL ran %d times, want %d", got, wantEvals)
		}
	}
	run(1) // unknown: NOSCRIPT, then EVAL
	run(0) // cached by the EVAL
	if _, err := admin(t, addr, "SCRIPT", "FLUSH").String(); err != nil {
		t.Fatal(err)
	}
	run(1)

	// A lost EVAL reply: the whole exchange is resent.
	if _, err := admin(t, addr, "SCRIPT", "FLUSH").String(); err != nil {
		t.Fatal(err)
	}
	px.MustAddRule(t, respiretest.Rule{Command: "EVAL", Times: 1, Action: respiretest.DropAfterForward})
	sha, eval := commandCalls(t, addr, "evalsha"), commandCalls(t, addr, "eval")
	if _, err := s.Run(ctx, c, []string{k}); err != nil {
		t.Fatalf("Run after a lost EVAL reply = %v", err)
	}
	// Attempt 1: EVALSHA (NOSCRIPT), EVAL (ran, reply lost); attempt 2:
	// EVALSHA (the first EVAL cached the script).
	if gs, ge := commandCalls(t, addr, "evalsha")-sha, commandCalls(t, addr, "eval")-eval; gs != 2 || ge != 1 {
		t.Errorf("EVALSHA ran %d times, EVAL %d; want 2 and 1", gs, ge)
	}
}

const libSrc = "#!lua name=%s\nredis.register_function{function_name='%s_get', callback=function(keys, args) return redis.call('GET', keys[1]) end, flags={'no-writes'}}"

// testLibrary returns a library with one read function, named for t and
// for this run of it (-count), so that no server, replicas included,
// holds it yet.
func testLibrary(t *testing.T) (library, function, src string) {
	// Every character a library name may not hold (test names have "/",
	// "=" and others) becomes "_".
	name := strings.Map(func(r rune) rune {
		if isFunctionName(string(r)) {
			return r
		}
		return '_'
	}, strings.Trim(keyPrefix(t), "{}:"))
	library = "lib_" + name + "_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	function = library + "_get"
	src = strings.ReplaceAll(strings.Replace(libSrc, "%s", library, 1), "%s", library)
	return
}

// TestFunctionReloadAndRetries: a function whose library the server lacks
// loads it (FUNCTION LOAD REPLACE) and is called again in the same call,
// exactly once after FUNCTION DELETE; a declared function's lost reply is
// resent, an undeclared one's is not; without a Source the error reaches
// the caller.
func TestFunctionReloadAndRetries(t *testing.T) {
	countsCommands(t)
	fx := newFunctionFixture(t)
	addr, c, px, ctx, k, lib, name, src := fx.addr, fx.c, fx.px, fx.ctx, fx.k, fx.lib, fx.name, fx.src
	fn := NewFunction(lib, name, FunctionOptions{ReadOnly: true, Source: src}).WithRetryCategory(ReadOnly)
	call := func(wantLoads int) {
		t.Helper()
		loads := commandCalls(t, addr, "function|load")
		r, err := fn.Call(ctx, c, []string{k})
		if v, _ := r.String(); err != nil || v != "v" {
			t.Fatalf("Call = %q, %v", v, err)
		}
		if got := commandCalls(t, addr, "function|load") - loads; got != wantLoads {
			t.Errorf("FUNCTION LOAD ran %d times, want %d", got, wantLoads)
		}
	}
	call(1) // the library is not loaded yet
	call(0)
	if _, err := admin(t, addr, "FUNCTION", "DELETE", lib).String(); err != nil {
		t.Fatal(err)
	}
	call(1)

	noSource := NewFunction(lib, name, FunctionOptions{ReadOnly: true})
	if _, err := admin(t, addr, "FUNCTION", "DELETE", lib).String(); err != nil {
		t.Fatal(err)
	}
	var se *ServerError
	if _, err := noSource.Call(ctx, c, []string{k}); !errors.As(err, &se) || se.Message != "ERR Function not found" {
		t.Errorf("Call without Source = %v, want the server's error", err)
	}
	if err := fn.Load(ctx, c); err != nil {
		t.Fatal(err)
	}

	for _, declared := range []bool{true, false} {
		f := noSource
		if declared {
			f = noSource.WithRetryCategory(ReadOnly)
		}
		rule := px.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Times: 1, Action: respiretest.DropAfterForward})
		before := commandCalls(t, addr, "fcall_ro")
		_, err := f.Call(ctx, c, []string{k})
		ran := commandCalls(t, addr, "fcall_ro") - before
		rule.Remove()
		if declared && (err != nil || ran != 2) {
			t.Errorf("declared: Call = %v after %d FCALL_RO; want success on the resend", err, ran)
		}
		if !declared && (!MayHaveExecuted(err) || ran != 1) {
			t.Errorf("undeclared: Call = %v after %d FCALL_RO; want the lost reply, not resent", err, ran)
		}
	}
}

// TestScriptAndFunctionBadInput: construction errors and undefined
// categories fail every use before any I/O.
func TestScriptAndFunctionBadInput(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	runs := map[string]func() error{
		"EmptyScript":     func() error { _, err := NewScript("  ", ScriptOptions{}).Run(ctx, c, nil); return err },
		"EmptyScriptLoad": func() error { return NewScript("", ScriptOptions{}).Load(ctx, c) },
		"UndefinedCategory": func() error {
			_, err := NewScript("return 1", ScriptOptions{}).WithRetryCategory(RetryCategory(99)).Run(ctx, c, nil)
			return err
		},
		"FunctionNameWithSpaces": func() error { _, err := NewFunction("lib", "my func", FunctionOptions{}).Call(ctx, c, nil); return err },
		"EmptyLibrary":           func() error { _, err := NewFunction("", "f", FunctionOptions{}).Call(ctx, c, nil); return err },
		"SourceOfAnotherLibrary": func() error {
			_, err := NewFunction("a", "f", FunctionOptions{Source: "#!lua name=b\n"}).Call(ctx, c, nil)
			return err
		},
		"LoadWithoutSource": func() error { return NewFunction("a", "f", FunctionOptions{}).Load(ctx, c) },
		// nil where a value is needed, which used to panic.
		"ScriptNilClient":       func() error { _, err := NewScript("return 1", ScriptOptions{}).Run(ctx, nil, nil); return err },
		"ScriptLoadNilClient":   func() error { return NewScript("return 1", ScriptOptions{}).Load(ctx, nil) },
		"FunctionNilClient":     func() error { _, err := NewFunction("a", "f", FunctionOptions{}).Call(ctx, nil, nil); return err },
		"FunctionLoadNilClient": func() error { return NewFunction("a", "f", FunctionOptions{Source: "#!lua name=a\n"}).Load(ctx, nil) },
		"BatchNilScript": func() error {
			b := c.NewBatch()
			f := b.Script(nil, nil)
			return errors.Join(b.Execute(ctx), f.Err())
		},
		"TransactionNilFunction": func() error {
			b := c.NewTransaction()
			f := b.Function(nil, nil)
			return errors.Join(b.Execute(ctx), f.Err())
		},
	}
	// A Script or Function not made by NewScript or NewFunction: the zero
	// Script ran an empty script (EVALSHA "", then EVAL ""), the zero
	// Function reached the server, a nil one of either panicked.
	for kind, s := range map[string]*Script{"Zero": new(Script), "Nil": nil} {
		runs[kind+"ScriptRun"] = func() error { _, err := s.Run(ctx, c, nil); return err }
		runs[kind+"ScriptLoad"] = func() error { return s.Load(ctx, c) }
		runs[kind+"ScriptDeclared"] = func() error { _, err := s.WithRetryCategory(ReadOnly).Run(ctx, c, nil); return err }
		runs["Batch"+kind+"Script"] = func() error {
			b := c.NewBatch()
			f := b.Script(s, nil)
			return errors.Join(b.Execute(ctx), f.Err())
		}
	}
	for kind, fn := range map[string]*Function{"Zero": new(Function), "Nil": nil} {
		runs[kind+"FunctionCall"] = func() error { _, err := fn.Call(ctx, c, nil); return err }
		runs[kind+"FunctionLoad"] = func() error { return fn.Load(ctx, c) }
		runs[kind+"FunctionDeclared"] = func() error { _, err := fn.WithRetryCategory(ReadOnly).Call(ctx, c, nil); return err }
		runs["Transaction"+kind+"Function"] = func() error {
			b := c.NewTransaction()
			f := b.Function(fn, nil)
			return errors.Join(b.Execute(ctx), f.Err())
		}
	}
	for name, run := range runs {
		before := framesSent(px)
		if err := catchPanic(run); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s = %v, want ErrInvalidArgument", name, err)
		}
		if n := framesSent(px) - before; n != 0 {
			t.Errorf("%s sent %d frames", name, n)
		}
	}
}

// TestScriptOfUnicodeSpaceReachesTheServer: a script of only Unicode
// white space (no-break space, next line) is not empty to Redis, whose
// Lua reads ASCII white space only: the server compiles it and answers
// its own error, which Run returns, where NewScript used to call it empty
// and send nothing. ASCII white space alone is still refused before any
// I/O (TestScriptAndFunctionBadInput).
func TestScriptOfUnicodeSpaceReachesTheServer(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		for _, src := range []string{"\u00a0", " \u0085\t"} {
			_, err := NewScript(src, ScriptOptions{}).Run(ctx, c, nil)
			var se *ServerError
			if !errors.As(err, &se) || errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Run of %q = %v, want the server's error", src, err)
			}
		}
	})
}

// catchPanic runs fn and returns its error, or its panic as an error.
func catchPanic(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}

// TestScriptMetrics: a script retry counts as attempted each resend in
// which the transport accepted some command of the exchange (the EVAL
// fallback included), never a resend that could not get a connection,
// and one outcome, tagged with the declared category.
func TestScriptMetrics(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 6, InitialBackoff: NoBackoff}})
		// Attempt 1: EVALSHA is dropped with its connection. The
		// replacement dial and the next are refused, so one or two
		// resends get no connection (not attempted). Then a resend sends
		// EVALSHA (NOSCRIPT) and the EVAL fallback, answered LOADING
		// (attempted), and the next both again (attempted, succeeded).
		s.MustAddRule(t, respiretest.Rule{Command: "EVALSHA", Action: respiretest.DropBeforeForward})
		loading := s.MustAddRule(t, respiretest.Rule{Command: "EVAL", Action: respiretest.Inject(respiretest.ErrLoading)})
		if err := s.RefuseDials(2); err != nil {
			t.Fatal(err)
		}
		if _, err := NewScript("return 1", ScriptOptions{}).WithRetryCategory(ReadOnly).Run(bg, c, nil); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n, l := s.Executed("EVAL"), loading.Applied(); n != 1 || l != 1 {
			t.Errorf("EVAL ran %d times after %d LOADING, want 1 after 1", n, l)
		}
		if n := s.Executed("EVALSHA"); n != 2 {
			t.Errorf("EVALSHA ran %d times, want 2", n)
		}
		want := retryCounts{"read_only/attempted": 2, "read_only/succeeded": 1}
		if got := retryCollect(t, reader); !got.equal(want) {
			t.Errorf("counts = %v, want %v", got, want)
		}
	})
}

// TestExchangeOnClosedClientStartsNothing: an exchange attempt that finds
// the client closed sends nothing, so a resend that does is not counted
// as attempted; like every failed attempt of a script it still counts as
// possibly executed.
func TestExchangeOnClosedClientStartsNothing(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	c := retryMemClient(t, s, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	x := NewScript("return 1", ScriptOptions{}).WithRetryCategory(ReadOnly).exchange(c, nil, nil)
	x.ctx = bg
	r := x.attempt()
	if !errors.Is(r.err, ErrClosed) || !r.closed {
		t.Fatalf("attempt = %v (closed %v), want ErrClosed", r.err, r.closed)
	}
	if r.accepted || r.started {
		t.Errorf("accepted %v, started %v; want neither: nothing was sent", r.accepted, r.started)
	}
	if r.unwritten || !MayHaveExecuted(r.err) {
		t.Errorf("unwritten %v, MayHaveExecuted %v; want a possibly executed attempt", r.unwritten, MayHaveExecuted(r.err))
	}
}

// TestClusterScripts: on a Cluster a script is sent straight to its keys'
// slot owner (per-node commandstats: the owner runs EVALSHA and the EVAL
// fallback, no other node sees either, not even to answer MOVED), keys
// in two slots fail before any I/O, and Load reaches every primary.
func TestClusterScripts(t *testing.T) {
	// The counts hold the servers exclusively; wait for that before the
	// test's deadline starts, not inside it.
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	s := uniqueScript(t, ScriptOptions{}).WithRetryCategory(ReadOnly)
	k := keyPrefix(t) + "{s}k"
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	owner := slotPrimary(t, c, route.Slot(k))
	nodes := testenv.ClusterAddrs(t)
	seen := func() map[string][2]int {
		m := map[string][2]int{}
		for _, addr := range nodes {
			m[addr] = [2]int{commandSeen(t, addr, "evalsha"), commandSeen(t, addr, "eval")}
		}
		return m
	}
	before := seen()
	if r, err := s.Run(ctx, c, []string{k}); err != nil {
		t.Fatalf("Run = %v", err)
	} else if v, _ := r.String(); v != "v" {
		t.Errorf("Run = %q, want v", v)
	}
	for addr, n := range seen() {
		want := [2]int{}
		if addr == owner.Addr {
			want = [2]int{1, 1} // EVALSHA (NOSCRIPT), then EVAL
		}
		if got := [2]int{n[0] - before[addr][0], n[1] - before[addr][1]}; got != want {
			t.Errorf("%s saw EVALSHA and EVAL %v times, want %v (the owner is %s)", addr, got, want, owner.Addr)
		}
	}
	other := keyPrefix(t) + "{other}k"
	if route.Slot(other) == route.Slot(k) {
		t.Fatal("test keys share a slot")
	}
	if _, err := s.Run(ctx, c, []string{k, other}); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("Run across slots = %v, want ErrCrossSlot", err)
	}
	if err := s.Load(ctx, c); err != nil {
		t.Fatalf("Load = %v", err)
	}
	for _, n := range c.topo.Primaries() {
		parts := admin(t, n.Addr, "SCRIPT", "EXISTS", s.SHA()).Elements()
		if len(parts) != 1 {
			t.Fatalf("SCRIPT EXISTS on %s: %d elements", n.Addr, len(parts))
		}
		if r, err := parts[0].Int64(); err != nil || r != 1 {
			t.Errorf("SCRIPT EXISTS on %s = %v, %v; want 1 after Load", n.Addr, r, err)
		}
	}
}

// TestReadOnlyScriptOnReplica: under ReadReplica a read-only script
// (EVALSHA_RO) runs on a replica of its keys' slot; a writing one on the
// primary.
func TestReadOnlyScriptOnReplica(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	k := keyPrefix(t) + "{r}k"
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	replica, primary := readReplica(t, c, route.Slot(k))
	ro := uniqueScript(t, ScriptOptions{ReadOnly: true})
	onReplica, onPrimary := commandCalls(t, replica.Addr, "eval_ro"), commandCalls(t, primary.Addr, "eval_ro")
	// The replica has not seen the script: EVALSHA_RO, then EVAL_RO, there.
	if _, err := ro.Run(ctx, c, []string{k}); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := commandCalls(t, replica.Addr, "eval_ro") - onReplica; got != 1 {
		t.Errorf("the replica ran EVAL_RO %d times, want 1", got)
	}
	if got := commandCalls(t, primary.Addr, "eval_ro") - onPrimary; got != 0 {
		t.Errorf("the primary ran EVAL_RO %d times, want 0", got)
	}
	rw := NewScript("return redis.call('SET', KEYS[1], 'w') -- "+scriptNonce(t), ScriptOptions{})
	evals := commandCalls(t, primary.Addr, "eval")
	if _, err := rw.Run(ctx, c, []string{k}); err != nil {
		t.Fatalf("Run of a writing script = %v", err)
	}
	if got := commandCalls(t, primary.Addr, "eval") - evals; got != 1 {
		t.Errorf("the primary ran EVAL %d times, want 1", got)
	}
}

// TestScriptFailedAcquisitionCountsAsPossiblyExecuted: the spec's rule
// for scripts and functions is that every failed attempt counts as
// possibly executed, one that never reached a connection included. A
// script declared WriteAccumulating under the default maximum (ReadOnly)
// whose connection is lost and cannot be re-dialled runs one attempt and
// reports possible execution; one declared ReadOnly is retried up to the
// policy's attempts. Neither ever reaches the server.
func TestScriptFailedAcquisitionCountsAsPossiblyExecuted(t *testing.T) {
	for _, tc := range []struct {
		cat      RetryCategory
		attempts int
	}{{WriteAccumulating, 1}, {ReadOnly, 3}} {
		t.Run(tc.cat.String(), func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			var dials atomic.Int32
			dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
				if dials.Add(1) >= 2 {
					return nil, errors.New("test: dial refused")
				}
				return s.Dial(ctx, network, addr)
			}
			c := retryMemClient(t, s, Options{Dialer: dialer, RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff, MaxAttempts: 3}})
			// Lose the only connection: the ECHO's frame is dropped and
			// the connection with it.
			s.MustAddRule(t, respiretest.Rule{Command: "ECHO", Action: respiretest.DropBeforeForward})
			if _, err := c.Do(bg, NewCommand("ECHO"), "x"); err == nil {
				t.Fatal("ECHO through a dropped connection succeeded")
			}
			sent := s.MustAddRule(t, respiretest.Rule{Command: "EVALSHA", Times: respiretest.Always, Action: respiretest.Pass})
			_, err := NewScript("return 1", ScriptOptions{}).WithRetryCategory(tc.cat).Run(bg, c, nil)
			if err == nil {
				t.Fatal("script without a connection succeeded")
			}
			if !MayHaveExecuted(err) {
				t.Errorf("MayHaveExecuted = false for a failed script attempt: %v", err)
			}
			attempts := 1
			var re *RetryError
			if errors.As(err, &re) {
				attempts = re.Attempts
			}
			if attempts != tc.attempts {
				t.Errorf("attempts = %d, want %d (%v)", attempts, tc.attempts, err)
			}
			if n := sent.Matched(); n != 0 {
				t.Errorf("EVALSHA reached the server %d times, want 0", n)
			}
		})
	}
}

// TestKillBusyScript: SCRIPT KILL and FUNCTION KILL through Client.Do
// stop a script or function that keeps the server busy, even one that the
// same client started. On the shared connection they would wait behind
// the busy call's own frame, which the server does not read past until
// the script ends: never, for this one. A private server, so that the
// busy script stalls no other test.
func TestKillBusyScript(t *testing.T) {
	r := testenv.StartRedis(t, testenv.RedisServerPath(t), 0)
	admin(t, r.Addr, "CONFIG", "SET", "busy-reply-threshold", "10")
	const lib = "#!lua name=busylib\nredis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}"
	admin(t, r.Addr, "FUNCTION", "LOAD", "REPLACE", lib)
	c := newClient(t, Options{Endpoints: []string{r.Addr}, CommandTimeout: NoTimeout})
	watcher := newAdmin(t, r.Addr)
	defer watcher.Close()
	for _, tc := range []struct {
		kill string
		run  func(ctx context.Context) error
	}{
		{"SCRIPT", func(ctx context.Context) error {
			_, err := NewScript("while true do end -- "+scriptNonce(t), ScriptOptions{}).Run(ctx, c, nil)
			return err
		}},
		{"FUNCTION", func(ctx context.Context) error {
			_, err := NewFunction("busylib", "spin", FunctionOptions{ReadOnly: true}).Call(ctx, c, nil)
			return err
		}},
	} {
		t.Run(tc.kill, func(t *testing.T) {
			ctx := testCtx(t)
			errc := make(chan error, 1)
			go func() { errc <- tc.run(ctx) }()
			awaitBusy(t, ctx, watcher)
			killCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			if _, err := c.Do(killCtx, NewCommand(tc.kill), "KILL"); err != nil {
				t.Errorf("%s KILL = %v, want OK", tc.kill, err)
				_, _ = watcher.Do(ctx, NewCommand(tc.kill), "KILL") // unblock the server
			}
			var se *ServerError
			if err := <-errc; !errors.As(err, &se) {
				t.Errorf("the killed call = %v, want the server's error", err)
			}
		})
	}
}

// awaitBusy returns once watcher's server answers BUSY: a call runs past
// its busy-reply-threshold (PONG until then).
func awaitBusy(t *testing.T, ctx context.Context, watcher *Client) {
	t.Helper()
	for {
		_, err := watcher.Do(ctx, NewCommand("PING"))
		var se *ServerError
		if errors.As(err, &se) && se.Code == "BUSY" {
			return
		}
		if err != nil {
			t.Fatalf("PING while waiting for BUSY = %v", err)
		}
	}
}

// TestBatchRefusesBusyScriptKill: a server busy with a script reads
// nothing more from the connection that runs it, and a small batch
// travels on the shared connection, where the client's own busy call may
// be: a SCRIPT KILL or FUNCTION KILL member waited there behind the very
// script it was meant to stop, until its context ended. Such a member is
// refused before any I/O, as a blocking one is, pointing to Client.Do
// (which runs it on a connection of its own); the batch sends nothing.
func TestBatchRefusesBusyScriptKill(t *testing.T) {
	r := testenv.StartRedis(t, testenv.RedisServerPath(t), 0)
	admin(t, r.Addr, "CONFIG", "SET", "busy-reply-threshold", "10")
	c := newClient(t, Options{Endpoints: []string{r.Addr}, CommandTimeout: NoTimeout})
	watcher := newAdmin(t, r.Addr)
	defer watcher.Close()
	ctx := testCtx(t)
	kills := commandSeen(t, r.Addr, "script|kill") + commandSeen(t, r.Addr, "function|kill")
	errc := make(chan error, 1)
	go func() {
		_, err := NewScript("while true do end -- "+scriptNonce(t), ScriptOptions{}).Run(ctx, c, nil)
		errc <- err
	}()
	awaitBusy(t, ctx, watcher)
	for _, kill := range []string{"SCRIPT", "FUNCTION"} {
		for _, tx := range []bool{false, true} {
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			f := b.Do(NewCommand(kill), "KILL")
			killCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := b.Execute(killCtx)
			cancel()
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(f.Err(), ErrInvalidArgument) || !strings.Contains(err.Error(), "Client.Do") {
				t.Errorf("%s KILL in a batch (transaction %v): Execute = %v, member = %v; want ErrInvalidArgument naming Client.Do", kill, tx, err, f.Err())
			}
		}
	}
	if _, err := watcher.Do(ctx, NewCommand("SCRIPT"), "KILL"); err != nil { // unblock the server
		t.Fatalf("SCRIPT KILL = %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("the killed script succeeded")
	}
	if n := commandSeen(t, r.Addr, "script|kill") + commandSeen(t, r.Addr, "function|kill") - kills; n != 1 {
		t.Errorf("the server ran %d kills, want 1 (the watcher's): the batches must send nothing", n)
	}
}

// TestReadOnlyScriptLoadReachesReplicas: Redis does not replicate SCRIPT
// LOAD, so Load of a read-only script under a replica read policy loads
// it on the replicas too: the next Run on a replica needs no EVAL_RO
// fallback there (the replica's commandstats witness it).
func TestReadOnlyScriptLoadReachesReplicas(t *testing.T) {
	countsCommands(t)
	replicaTopologies(t, Options{ReadFrom: ReadReplica}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "k"
		replica, _ := readReplica(t, c, route.Slot(k))
		s := uniqueScript(t, ScriptOptions{ReadOnly: true})
		if err := s.Load(ctx, c); err != nil {
			t.Fatalf("Load = %v", err)
		}
		evals, shas := commandCalls(t, replica.Addr, "eval_ro"), commandCalls(t, replica.Addr, "evalsha_ro")
		if _, err := s.Run(ctx, c, []string{k}); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if e, h := commandCalls(t, replica.Addr, "eval_ro")-evals, commandCalls(t, replica.Addr, "evalsha_ro")-shas; e != 0 || h != 1 {
			t.Errorf("the replica ran EVALSHA_RO %d times and EVAL_RO %d after Load; want 1 and 0", h, e)
		}
	})
}

// ownRedirect returns a key of the test and the text of a MOVED reply
// naming a slot that another primary than the key's serves: the error a
// script returns of its own in the tests of its redirects.
func ownRedirect(t *testing.T, c *Client) (k, redirect string) {
	t.Helper()
	k = keyPrefix(t) + "{own}n"
	var other string
	for i := 0; ; i++ {
		other = keyPrefix(t) + "{" + strconv.Itoa(i) + "}"
		if slotPrimary(t, c, route.Slot(other)).Addr != slotPrimary(t, c, route.Slot(k)).Addr {
			break
		}
	}
	return k, "MOVED " + strconv.Itoa(route.Slot(other)) + " " + slotPrimary(t, c, route.Slot(other)).Addr
}

// TestClusterScriptRedirectOfItsOwn: a server redirects a script call
// before running it, naming its keys' slot. A script that wrote and then
// returned an error of its own reading as a redirect to another slot has
// run: that error is its reply, not a redirect to follow (which ran it
// again on every return, up to MaxRedirects times). The counter the
// script increments witnesses each run.
func TestClusterScriptRedirectOfItsOwn(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k, redirect := ownRedirect(t, c)
	s := NewScript("redis.call('INCR', KEYS[1]) return redis.error_reply(ARGV[1]) -- "+scriptNonce(t), ScriptOptions{})
	_, err := s.Run(ctx, c, []string{k}, redirect)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "MOVED" || se.Command != "EVALSHA" && se.Command != "EVAL" {
		t.Errorf("Run = %v, want the script's own MOVED error", err)
	}
	if n, err := c.Get(ctx, k); err != nil || n != "1" {
		t.Errorf("the script ran %s times (%v), want once", n, err)
	}
}

// TestClusterBatchScriptRedirectOfItsOwn: in a Cluster batch, a script
// member whose own error reads as a redirect naming another slot than its
// keys' (or any slot, for a keyless member: the server never redirects
// one) already ran; it is the member's reply, not a redirect to follow,
// which would run the script a second time.
func TestClusterBatchScriptRedirectOfItsOwn(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k, redirect := ownRedirect(t, c)
	// One counter on each primary: a keyless script counts its run on
	// the node that runs it (the others refuse the access).
	counters := map[string]string{}
	for i := 0; len(counters) < len(c.topo.Primaries()); i++ {
		key := keyPrefix(t) + "{c" + strconv.Itoa(i) + "}runs"
		if addr := slotPrimary(t, c, route.Slot(key)).Addr; counters[addr] == "" {
			counters[addr] = key
		}
	}
	keyed := NewScript("redis.call('INCR', KEYS[1]) return redis.error_reply(ARGV[1]) -- "+scriptNonce(t), ScriptOptions{})
	keyless := NewScript("for i = 2, #ARGV do redis.pcall('INCR', ARGV[i]) end return redis.error_reply(ARGV[1]) -- "+scriptNonce(t), ScriptOptions{})
	b := c.NewBatch()
	ownKeyed := b.Script(keyed, []string{k}, redirect)
	ownKeyless := b.Script(keyless, nil, append([]string{redirect}, slices.Collect(maps.Values(counters))...)...)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute = %v", err)
	}
	for name, f := range map[string]Future[Reply]{"keyed": ownKeyed, "keyless": ownKeyless} {
		var se *ServerError
		if _, err := f.Result(); !errors.As(err, &se) || se.Code != "MOVED" {
			t.Errorf("%s member = %v, want the script's own MOVED error", name, err)
		}
	}
	if n, err := c.Get(ctx, k); err != nil || n != "1" {
		t.Errorf("the keyed script ran %s times (%v), want once", n, err)
	}
	runs := 0
	for _, key := range counters {
		n, err := c.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNil) {
			t.Fatal(err)
		}
		if n != "" {
			m, _ := strconv.Atoi(n)
			runs += m
		}
	}
	if runs != 1 {
		t.Errorf("the keyless script ran %d times, want once", runs)
	}
}

// TestScriptErrorElementIsNotAString: a script's reply array may hold an
// error_reply among its values. Read through Elements, that element's
// String fails with ErrUnexpectedReply, as Strings, Int64 and the other
// converters fail on it; String returned its text as if it were data.
func TestScriptErrorElementIsNotAString(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		s := NewScript("return {'value', redis.error_reply('MYERR failed inside')}", ScriptOptions{})
		r, err := s.Run(ctx, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		els := r.Elements()
		if len(els) != 2 {
			t.Fatalf("reply = %v, want two elements", r)
		}
		if v, err := els[0].String(); err != nil || v != "value" {
			t.Errorf("element 0 = %q, %v; want \"value\"", v, err)
		}
		if v, err := els[1].String(); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("String of the error element = %q, %v; want ErrUnexpectedReply", v, err)
		}
		if _, err := els[1].Int64(); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("Int64 of the error element = %v; want ErrUnexpectedReply", err)
		}
	})
}

// TestScriptDeeplyNestedReplyKeepsTheConnection: a script may return a
// Lua table nested nearly 8000 levels deep (the Lua stack's limit). Such a
// reply reaches its caller whole, under RESP2 and RESP3, and the shared
// connection lives on: before, nesting over 128 levels read as a broken
// stream, which reset the connection and failed every other caller's
// command on it as possibly executed.
func TestScriptDeeplyNestedReplyKeepsTheConnection(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		idBefore, err := c.Do(ctx, catalog.Conn.CLIENT_ID())
		if err != nil {
			t.Fatal(err)
		}
		for _, levels := range []int{129, 1000, 7990} {
			script := "local t = 1 for i = 1, " + strconv.Itoa(levels) + " do t = {t} end return t"
			r, err := c.Do(ctx, catalog.Scripting.EVAL().WithRetryCategory(ReadOnly), script, 0)
			if err != nil {
				t.Fatalf("%d levels: %v", levels, err)
			}
			for i := range levels {
				el := r.Elements()
				if len(el) != 1 {
					t.Fatalf("%d levels: level %d has %d elements, want 1", levels, i, len(el))
				}
				r = el[0]
			}
			if n, err := r.Int64(); n != 1 || err != nil {
				t.Fatalf("%d levels: innermost = %d, %v; want 1", levels, n, err)
			}
		}
		idAfter, err := c.Do(ctx, catalog.Conn.CLIENT_ID())
		if err != nil {
			t.Fatal(err)
		}
		before, _ := idBefore.Int64()
		after, _ := idAfter.Int64()
		if before != after {
			t.Fatalf("CLIENT ID %d before the deep replies and %d after: the shared connection was replaced", before, after)
		}
	})
}
