package respire

// The retry rules on every dispatch path (typed method, batch, transaction,
// Script.Run) of the Sentinel and Cluster clients, through fault proxies in
// front of the real primaries: the servers' commandstats count how many
// times each command ran, and the error and the retry metrics say what the
// spec says.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// retryPath is one way of running a command of a category.
type retryPath struct {
	name  string
	cat   RetryCategory // the riskiest category the path sends
	rule  string        // the command the proxy fault applies to
	stats string        // the INFO commandstats name counting executions
	run   func(ctx context.Context, c *Client, k string) error
	// unit: a batch or transaction. Its members run whatever a fault does
	// to another member, and a member's unselected error reply stays the
	// member's own (Execute returns nil).
	unit bool
	// replyFaults: the proxy may answer the faulted command with an error
	// reply. Not for EXEC: a real server ends MULTI with any EXEC reply,
	// while an injected one leaves the server's transaction open.
	replyFaults bool
}

// retryScript reads its key; loaded before the call, so EVALSHA runs it.
const retryScriptSrc = "return redis.call('GETRANGE', KEYS[1], 0, -1)"

var retryPaths = []retryPath{
	{"Typed/ReadOnly", ReadOnly, "GETRANGE", "getrange", func(ctx context.Context, c *Client, k string) error {
		_, err := c.GetRange(ctx, k, 0, -1)
		return err
	}, false, true},
	{"Typed/WriteAccumulating", WriteAccumulating, "HINCRBY", "hincrby", func(ctx context.Context, c *Client, k string) error {
		_, err := c.HIncrBy(ctx, k, "f", 1)
		return err
	}, false, true},
	{"Batch/ReadOnly", ReadOnly, "GETRANGE", "getrange", func(ctx context.Context, c *Client, k string) error {
		b := c.NewBatch()
		b.GetRange(k, 0, -1)
		return b.Execute(ctx)
	}, true, true},
	{"Batch/ReadBesideWrite", WriteAccumulating, "GETRANGE", "hincrby", func(ctx context.Context, c *Client, k string) error {
		b := c.NewBatch()
		b.HIncrBy(k, "f", 1)
		b.GetRange(k, 0, -1)
		return b.Execute(ctx)
	}, true, true},
	{"Transaction/ReadOnly", ReadOnly, "EXEC", "getrange", func(ctx context.Context, c *Client, k string) error {
		tx := c.NewTransaction()
		tx.GetRange(k, 0, -1)
		return tx.Execute(ctx)
	}, true, false},
	{"Transaction/ReadBesideWrite", WriteAccumulating, "EXEC", "hincrby", func(ctx context.Context, c *Client, k string) error {
		tx := c.NewTransaction()
		tx.GetRange(k, 0, -1)
		tx.HIncrBy(k, "f", 1)
		return tx.Execute(ctx)
	}, true, false},
	{"Script/Declared", ReadOnly, "EVALSHA", "evalsha", func(ctx context.Context, c *Client, k string) error {
		_, err := NewScript(retryScriptSrc, ScriptOptions{}).WithRetryCategory(ReadOnly).Run(ctx, c, []string{k})
		return err
	}, false, true},
	{"Script/Undeclared", Never, "EVALSHA", "evalsha", func(ctx context.Context, c *Client, k string) error {
		_, err := NewScript(retryScriptSrc, ScriptOptions{}).Run(ctx, c, []string{k})
		return err
	}, false, true},
}

// pathConnect connects a client whose connections are dialed through
// fault, and returns it with the proxy and the server that serve a key.
type pathConnect func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) (*Client, func(k string) (*respiretest.Proxy, string))

func TestRetryTopologyPaths(t *testing.T) {
	countsCommands(t)
	t.Run("Sentinel", func(t *testing.T) {
		primary := sentinelPrimary(t)
		px := realProxy(t, primary)
		runRetryPaths(t, func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) (*Client, func(k string) (*respiretest.Proxy, string)) {
			opts.Dialer = fault(rewriteDialer(map[string]string{primary: px.Addr()}))
			c := sentinelClient(t, opts)
			t.Cleanup(func() { flush(t, primary) })
			return c, func(string) (*respiretest.Proxy, string) { return px, primary }
		})
	})
	t.Run("Cluster", func(t *testing.T) {
		primaries, replicas := clusterRoles(t)
		via := map[string]string{}
		proxies := map[string]*respiretest.Proxy{}
		for _, p := range primaries {
			proxies[p] = realProxy(t, p)
			via[p] = proxies[p].Addr()
		}
		runRetryPaths(t, func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) (*Client, func(k string) (*respiretest.Proxy, string)) {
			opts.Endpoints = replicas
			opts.Dialer = fault(rewriteDialer(via))
			c := clusterClient(t, opts)
			return c, func(k string) (*respiretest.Proxy, string) {
				owner, err := c.topo.Pick(route.Slot(k), false)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { flush(t, owner.Addr) })
				return proxies[owner.Addr], owner.Addr
			}
		})
	})
}

// runRetryPaths runs every path under every failure once, with a policy
// of two attempts, no backoff and the default ReadOnly maximum.
func runRetryPaths(t *testing.T, connect pathConnect) {
	faults := []retryFault{faultUnwritten, faultDropBefore, faultLostReply, faultLoading, faultTryAgain, faultMasterDown, faultReadOnly, faultBusy, faultClusterDn}
	for _, p := range retryPaths {
		for _, f := range faults {
			if f.code != "" && !p.replyFaults {
				continue
			}
			for _, always := range []bool{false, true} {
				name := p.name + "/" + f.name
				if always {
					name += "/Always"
				}
				t.Run(name, func(t *testing.T) {
					retryPathCase(t, connect, p, f, always)
				})
			}
		}
	}
}

func retryPathCase(t *testing.T, connect pathConnect, p retryPath, f retryFault, always bool) {
	opts, reader := withRetryMetrics(t, Options{
		RetryPolicy: &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff},
	})
	fault := func(dial respiretest.DialFunc) respiretest.DialFunc { return dial }
	if f.unwritten {
		if always {
			t.Skip("the client-side write fault fails one write")
		}
		fault = failFirstWriteOf(NewCommand(p.rule))
	}
	c, owner := connect(t, opts, fault)
	k := keyPrefix(t) + "k"
	px, addr := owner(k)
	if strings.HasPrefix(p.name, "Script") {
		if err := NewScript(retryScriptSrc, ScriptOptions{}).Load(testCtx(t), c); err != nil {
			t.Fatal(err)
		}
	}
	// A frame that never left is resent whatever its (retryable)
	// category; a script's exchange counts every failure as possibly run.
	unwritten := f.unwritten && !strings.HasPrefix(p.name, "Script")
	retried := f.flag != 0 && p.cat.Retryable() && (unwritten || ReadOnly >= p.cat)
	times := 1
	if always {
		times = respiretest.Always
	}
	rule := px.MustAddRule(t, respiretest.Rule{Command: p.rule, Times: times, Action: respiretest.Pass})
	if f.action != nil {
		rule.Remove()
		rule = px.MustAddRule(t, respiretest.Rule{Command: p.rule, Times: times, Action: *f.action})
	}
	defer rule.Remove()

	before := commandCalls(t, addr, p.stats)
	err := p.run(testCtx(t), c, k)
	ran := commandCalls(t, addr, p.stats) - before
	rule.Remove()

	attempts := 1 + b2i(retried)
	// The faulted attempts that reached the server ran there; a resend
	// that the fault spared ran once more.
	wantRan := attempts * b2i(f.executed)
	if retried && !always {
		wantRan = b2i(f.executed) + 1
	}
	if p.unit && p.stats != strings.ToLower(p.rule) && p.rule != "EXEC" && !f.unwritten {
		wantRan = attempts // the unfaulted member runs in every attempt
	}
	unselectedMember := p.unit && f.code != "" && f.flag == 0
	if ran != wantRan {
		t.Errorf("server ran %s %d times, want %d", p.stats, ran, wantRan)
	}
	if (retried && !always) || unselectedMember {
		if err != nil {
			t.Errorf("err = %v, want the resend's success", err)
		}
	} else {
		retryWantAttempts(t, err, attempts)
		if !MayHaveExecuted(err) {
			t.Errorf("MayHaveExecuted(%v) = false; the server received the command", err)
		}
		if f.code != "" && !hasCode(err, f.code) {
			t.Errorf("err = %v, want the %s reply", err, f.code)
		}
		if f.code == "" {
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Unwritten {
				t.Errorf("err = %v, want a possibly executed *ConnError", err)
			}
		}
	}
	want := retryCounts{}
	if retried {
		tag := snakeCase(p.cat.String())
		want[tag+"/attempted"] = 1
		if always {
			want[tag+"/exhausted"] = 1
		} else {
			want[tag+"/succeeded"] = 1
		}
	}
	if got := retryCollect(t, reader); !got.equal(want) {
		t.Errorf("retry metrics = %v, want %v", got, want)
	}
}

// TestRetryClusterRedirectsAreNoAttempts: a MOVED or ASK reply on any path
// is followed within the attempt: the command runs once, the call
// succeeds, and no resend is counted, even with MaxAttempts 1.
func TestRetryClusterRedirectsAreNoAttempts(t *testing.T) {
	countsCommands(t)
	for _, ask := range []bool{false, true} {
		for _, p := range retryPaths {
			if !p.replyFaults {
				continue
			}
			name := p.name + "/MOVED"
			if ask {
				name = p.name + "/ASK"
			}
			t.Run(name, func(t *testing.T) {
				opts, reader := withRetryMetrics(t, Options{
					RetryPolicy: &RetryPolicy{MaxAttempts: 2, MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff},
				})
				c, proxies := proxiedCluster(t, opts)
				k := keyPrefix(t) + "k"
				owner, err := c.topo.Pick(route.Slot(k), false)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { flush(t, owner.Addr) })
				if strings.HasPrefix(p.name, "Script") {
					if err := NewScript(retryScriptSrc, ScriptOptions{}).Load(testCtx(t), c); err != nil {
						t.Fatal(err)
					}
				}
				text := respiretest.Moved(route.Slot(k), owner.Addr)
				if ask {
					text = respiretest.Ask(route.Slot(k), owner.Addr)
				}
				rule := proxies[owner.Addr].MustAddRule(t, respiretest.Rule{Command: p.rule, Times: 1, Action: respiretest.Inject(text)})
				defer rule.Remove()
				before := commandCalls(t, owner.Addr, p.stats)
				if err := p.run(testCtx(t), c, k); err != nil {
					t.Fatalf("err = %v, want the redirect followed", err)
				}
				if ran := commandCalls(t, owner.Addr, p.stats) - before; ran != 1 {
					t.Errorf("server ran %s %d times, want 1", p.stats, ran)
				}
				if rule.Applied() != 1 {
					t.Errorf("the redirect was injected %d times, want 1", rule.Applied())
				}
				if got := retryCollect(t, reader); !got.equal(retryCounts{}) {
					t.Errorf("retry metrics = %v, want none: a redirect is no attempt", got)
				}
			})
		}
	}
}

// snakeCase turns a category's name into its metric attribute:
// "WriteAccumulating" reads "write_accumulating".
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestRetryClusterTransactionMovedKeepsBudget: a MOVED rejection of a
// Cluster transaction is routing, not an attempt, and following it does
// not start a new retry budget: LOADING, MOVED, then LOADING for good is
// two attempts under MaxAttempts 2 (three sends), one resend, one
// exhausted outcome and a RetryError that says 2.
func TestRetryClusterTransactionMovedKeepsBudget(t *testing.T) {
	opts, reader := withRetryMetrics(t, Options{
		RetryPolicy: &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff},
	})
	c, proxies := proxiedCluster(t, opts)
	k := keyPrefix(t) + "k"
	owner, err := c.topo.Pick(route.Slot(k), false)
	if err != nil {
		t.Fatal(err)
	}
	px := proxies[owner.Addr]
	loading := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Times: 1, Action: respiretest.Inject(respiretest.ErrLoading)})
	defer loading.Remove()
	moved := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Nth: 2, Times: 1,
		Action: respiretest.Inject(respiretest.Moved(route.Slot(k), owner.Addr))})
	defer moved.Remove()
	again := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Nth: 3, Times: respiretest.Always,
		Action: respiretest.Inject(respiretest.ErrLoading)})
	defer again.Remove()

	tx := c.NewTransaction()
	tx.GetRange(k, 0, -1)
	err = tx.Execute(testCtx(t))
	if sends := again.Matched(); sends != 3 {
		t.Errorf("the transaction was sent %d times, want 3 (LOADING, MOVED, LOADING)", sends)
	}
	retryWantAttempts(t, err, 2)
	if !hasCode(err, "LOADING") {
		t.Errorf("err = %v, want the last LOADING", err)
	}
	want := retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}
	if got := retryCollect(t, reader); !got.equal(want) {
		t.Errorf("retry metrics = %v, want %v", got, want)
	}
}

// TestRetryScriptFallbackOnTopologies: a lost reply of the EVAL fallback
// (after NOSCRIPT) resends the whole exchange only for a script whose
// category permits it; an undeclared one runs once and says it may have.
func TestRetryScriptFallbackOnTopologies(t *testing.T) {
	countsCommands(t)
	run := func(t *testing.T, c *Client, px *respiretest.Proxy, addr, k string) {
		for _, declared := range []bool{false, true} {
			t.Run(map[bool]string{false: "Undeclared", true: "Declared"}[declared], func(t *testing.T) {
				// A source no server has seen: EVALSHA gets NOSCRIPT.
				s := NewScript(retryScriptSrc+" -- "+keyPrefix(t), ScriptOptions{})
				if declared {
					s = s.WithRetryCategory(ReadOnly)
				}
				rule := px.MustAddRule(t, respiretest.Rule{Command: "EVAL", Times: 1, Action: respiretest.DropAfterForward})
				defer rule.Remove()
				before := commandCalls(t, addr, "eval")
				_, err := s.Run(testCtx(t), c, []string{k})
				if ran := commandCalls(t, addr, "eval") - before; ran != 1 {
					t.Errorf("server ran EVAL %d times, want 1 (the resend's EVALSHA finds the script)", ran)
				}
				if declared {
					if err != nil {
						t.Errorf("err = %v, want the resent exchange's reply", err)
					}
					return
				}
				retryWantAttempts(t, err, 1)
				if !MayHaveExecuted(err) {
					t.Errorf("MayHaveExecuted(%v) = false, want true", err)
				}
			})
		}
	}
	policy := &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}
	t.Run("Sentinel", func(t *testing.T) {
		primary := sentinelPrimary(t)
		px := realProxy(t, primary)
		c := sentinelClient(t, Options{RetryPolicy: policy, Dialer: rewriteDialer(map[string]string{primary: px.Addr()})})
		run(t, c, px, primary, keyPrefix(t)+"k")
	})
	t.Run("Cluster", func(t *testing.T) {
		c, proxies := proxiedCluster(t, Options{RetryPolicy: policy})
		k := keyPrefix(t) + "k"
		owner, err := c.topo.Pick(route.Slot(k), false)
		if err != nil {
			t.Fatal(err)
		}
		run(t, c, proxies[owner.Addr], owner.Addr, k)
	})
}
