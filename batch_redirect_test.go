package respire

// MOVED and ASK inside Cluster batches and transactions, through fault
// proxies in front of the primaries: the proxies' counters say where each
// command went; nothing here changes the shared Cluster's slots (a stale
// map is the client's own, set with topo.Moved).

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// redirectPolicy permits resending every unit of these tests: a redirect
// that used retry budget would show as an attempted resend.
var redirectPolicy = &RetryPolicy{MaxAttempts: 3, MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff}

// noRetries checks that reader recorded no retry (no attempted resend).
func noRetries(t *testing.T, reader *sdkmetric.ManualReader) {
	t.Helper()
	if got := retryCollect(t, reader); !got.equal(retryCounts{}) {
		t.Errorf("retry counts = %v, want none: a redirect is not a retry", got)
	}
}

// frozenMapCluster is proxiedCluster with every node behind a proxy that
// fails CLUSTER SHARDS and SLOTS: the client's map changes by redirects
// only, never back by a refresh the redirects ask for.
func frozenMapCluster(t *testing.T, opts Options) (*Client, map[string]*respiretest.Proxy) {
	t.Helper()
	c, proxies := proxiedClusterNodes(t, opts, true)
	for _, px := range proxies {
		h := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Times: respiretest.Always, Action: respiretest.Inject("ERR no refresh in this test")})
		t.Cleanup(h.Remove)
	}
	return c, proxies
}

// TestClusterBatchMemberRedirects: a batch member its group's node answers
// with MOVED (or ASK) is sent again on its own within the same Execute to
// the node of the redirect (after ASK, behind ASKING), and its Future holds
// the real reply; the other members ran once and keep their results; no
// retry budget is used (no attempted resend is recorded).
func TestClusterBatchMemberRedirects(t *testing.T) {
	cases := []struct {
		name     string
		redirect func(slot int, addr string) string
		times    int
	}{
		{"Moved", respiretest.Moved, 1},
		// A migrating node answers ASK for a key it no longer has every
		// time: the resend, routed by the map, gets it again and follows
		// it with ASKING.
		{"Ask", respiretest.Ask, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, reader := withRetryMetrics(t, Options{RetryPolicy: redirectPolicy})
			c, proxies := frozenMapCluster(t, opts)
			ctx := testCtx(t)
			primaries := c.topo.Primaries()
			a, b := primaries[0].Addr, primaries[1].Addr
			pa, pb := bcTagOn(t, c, a), bcTagOn(t, c, b)
			ks, kg, kb := pa+"s", pa+"g", pb+"b"
			for k, v := range map[string]string{kg: "vg", kb: "vbb"} {
				if err := c.Set(ctx, k, v); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), ks, kg, kb) })
			rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Times: tc.times,
				Action: respiretest.Inject(tc.redirect(route.Slot(kg), b))})
			defer rule.Remove()
			pxA, pxB := proxies[a], proxies[b]
			sets, strlens := pxA.Forwarded("SET"), pxB.Forwarded("STRLEN")

			batch := c.NewBatch()
			set := batch.Set(ks, "new") // group a
			get := batch.Get(kg)        // group a: redirected
			strlen := batch.StrLen(kb)  // group b
			if err := batch.Execute(ctx); err != nil {
				t.Fatalf("Execute = %v", err)
			}
			if n := rule.Applied(); n != tc.times {
				t.Fatalf("the redirect applied %d times, want %d", n, tc.times)
			}
			if v, err := get.Result(); v != "vg" || err != nil {
				t.Errorf("redirected GET = %q, %v; want vg", v, err)
			}
			if err := set.Err(); err != nil {
				t.Errorf("SET beside it = %v", err)
			}
			if v, err := strlen.Result(); v != 3 || err != nil {
				t.Errorf("STRLEN (other group) = %d, %v; want 3", v, err)
			}
			// The GET went to the redirect's node once, which sent it back
			// to its owner (it does not serve the slot), where it ran once.
			if n := pxB.Forwarded("GET"); n != 1 {
				t.Errorf("the redirect's node got the GET %d times, want 1", n)
			}
			if n := pxA.Forwarded("GET"); n != 1 {
				t.Errorf("the owner ran the GET %d times, want 1 (after the redirects)", n)
			}
			wantAsking := 0
			if tc.name == "Ask" {
				wantAsking = 1
			}
			if n := pxB.Forwarded("ASKING"); n != wantAsking {
				t.Errorf("the redirect's node got ASKING %d times, want %d", n, wantAsking)
			}
			if n := pxA.Forwarded("SET") - sets; n != 1 {
				t.Errorf("SET was sent %d times, want 1 (not resent with the GET)", n)
			}
			if n := pxB.Forwarded("STRLEN") - strlens; n != 1 {
				t.Errorf("STRLEN was sent %d times, want 1", n)
			}
			noRetries(t, reader)
		})
	}
}

// txFake answers, on px, the next times transactions MULTI, SET, INCR,
// EXEC itself, nothing forwarded (the server's connection stays out of
// MULTI): the command at answers redirect, the others as Redis would
// around it. It returns the MULTI rule; every rule is removed at the end
// of the test.
func txFake(t *testing.T, px *respiretest.Proxy, at, redirect string, times int, onMulti func([]string)) *respiretest.RuleHandle {
	t.Helper()
	ok, queued := resp.AppendSimpleString(nil, "OK"), resp.AppendSimpleString(nil, "QUEUED")
	exec := respiretest.Inject("EXECABORT Transaction discarded because of previous errors.")
	if at == "MULTI" {
		exec = respiretest.Inject("ERR EXEC without MULTI")
	}
	actions := map[string]respiretest.Action{"MULTI": respiretest.Reply(ok), "SET": respiretest.Reply(queued),
		"INCR": respiretest.Reply(queued), "EXEC": exec}
	actions[at] = respiretest.Inject(redirect)
	var multi *respiretest.RuleHandle
	for _, cmd := range []string{"MULTI", "SET", "INCR", "EXEC"} {
		r := respiretest.Rule{Command: cmd, Times: times, Action: actions[cmd]}
		if cmd == "MULTI" {
			r.OnReceive = onMulti
		}
		h := px.MustAddRule(t, r)
		t.Cleanup(h.Remove)
		if cmd == "MULTI" {
			multi = h
		}
	}
	return multi
}

// TestClusterTransactionRedirects: a Cluster transaction answered MOVED
// (to MULTI, to a queued member or to EXEC) updates the slot map and is
// sent again at once, without retry budget, to the new owner, whose
// results the members get (INCR ran once); an ASK ends it with that error,
// nothing resent; MOVED after MOVED ends it with ErrRedirectLoop (not the
// raw MOVED) after MaxRedirects redirects; and one CommandTimeout bounds
// the transaction with all its redirects.
func TestClusterTransactionRedirects(t *testing.T) {
	opts, reader := withRetryMetrics(t, Options{RetryPolicy: redirectPolicy, Cluster: &ClusterOptions{MaxRedirects: 4}})
	c, proxies := frozenMapCluster(t, opts)
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	pa := bcTagOn(t, c, a)
	slot := route.Slot(pa)
	ks, kn := pa+"s", pa+"n"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), ks, kn) })
	tx := func() (*Batch, Future[struct{}], Future[int64]) {
		_, _ = c.Del(ctx, kn)
		batch := c.NewTransaction()
		return batch, batch.Set(ks, "v"), batch.Incr(kn)
	}
	owner := func() string {
		n, err := c.topo.Pick(slot, false)
		if err != nil {
			t.Fatal(err)
		}
		return n.Addr
	}

	for _, at := range []string{"MULTI", "SET", "EXEC"} {
		t.Run("Moved"+at, func(t *testing.T) {
			batch, set, incr := tx()
			// The client believes b serves the slot; b says it moved to a.
			if _, err := c.topo.Moved(slot, b); err != nil {
				t.Fatal(err)
			}
			fake := txFake(t, proxies[b], at, respiretest.Moved(slot, a), 1, nil)
			multis, execs := proxies[a].Forwarded("MULTI"), proxies[a].Forwarded("EXEC")
			if err := batch.Execute(ctx); err != nil {
				t.Fatalf("Execute = %v, want the redirected transaction to run", err)
			}
			if n := fake.Applied(); n != 1 {
				t.Fatalf("the stale owner got MULTI %d times, want 1", n)
			}
			if got := owner(); got != a {
				t.Errorf("the slot is routed to %s, want the new owner %s", got, a)
			}
			if n, m := proxies[a].Forwarded("MULTI")-multis, proxies[a].Forwarded("EXEC")-execs; n != 1 || m != 1 {
				t.Errorf("the new owner got MULTI %d and EXEC %d times, want 1 each", n, m)
			}
			if err := set.Err(); err != nil {
				t.Errorf("SET = %v", err)
			}
			if v, err := incr.Result(); v != 1 || err != nil {
				t.Errorf("INCR = %d, %v; want 1 (the new owner's reply, run once)", v, err)
			}
			noRetries(t, reader)
		})
	}

	t.Run("Ask", func(t *testing.T) {
		fake := txFake(t, proxies[a], "SET", respiretest.Ask(slot, b), 1, nil)
		batch, set, incr := tx()
		err := batch.Execute(ctx)
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "ASK" {
			t.Fatalf("Execute = %v, want the ASK error", err)
		}
		for name, err := range map[string]error{"SET": set.Err(), "INCR": incr.Err()} {
			if !errors.As(err, &se) || se.Code != "ASK" {
				t.Errorf("%s = %v, want the ASK error", name, err)
			}
		}
		if n := fake.Matched(); n != 1 {
			t.Errorf("the owner got MULTI %d times, want 1 (not resent)", n)
		}
		if n, m := proxies[b].Forwarded("MULTI"), proxies[b].Forwarded("ASKING"); n != 0 || m != 0 {
			t.Errorf("the ASK target got MULTI %d and ASKING %d times, want none", n, m)
		}
		if got := owner(); got != a {
			t.Errorf("the slot is routed to %s after ASK, want %s (ASK changes nothing)", got, a)
		}
		noRetries(t, reader)
	})

	t.Run("RedirectLoop", func(t *testing.T) {
		fake := txFake(t, proxies[a], "SET", respiretest.Moved(slot, a), respiretest.Always, nil)
		batch, _, incr := tx()
		err := batch.Execute(ctx)
		var re *RetryError
		if !errors.Is(err, ErrRedirectLoop) || MayHaveExecuted(err) || errors.As(err, &re) {
			t.Fatalf("Execute = %v, want ErrRedirectLoop, not executed, not retried", err)
		}
		if err := incr.Err(); !errors.Is(err, ErrRedirectLoop) {
			t.Errorf("INCR = %v, want ErrRedirectLoop", err)
		}
		if n := fake.Applied(); n != 5 {
			t.Errorf("the transaction was sent %d times, want 5 (the first and 4 redirects)", n)
		}
		noRetries(t, reader)
	})

	t.Run("OneDeadline", func(t *testing.T) {
		c, proxies := proxiedCluster(t, Options{CommandTimeout: 300 * time.Millisecond, Cluster: &ClusterOptions{MaxRedirects: 100}})
		slow := make(chan struct{})
		defer close(slow)
		fake := txFake(t, proxies[a], "SET", respiretest.Moved(slot, a), respiretest.Always, func([]string) {
			select { // each redirect takes 20 ms: a slow server
			case <-slow:
			case <-time.After(20 * time.Millisecond):
			}
		})
		batch := c.NewTransaction()
		batch.Set(ks, "v")
		batch.Incr(kn)
		err := batch.Execute(context.Background()) // no deadline: CommandTimeout applies
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Execute = %v, want the CommandTimeout's deadline", err)
		}
		if n := fake.Applied(); n > 30 {
			t.Errorf("the transaction was sent %d times: each redirect had a fresh timeout", n)
		}
	})
}

// TestClusterBatchMemberResendFailureFailsExecute: when the resend of a
// redirected member fails (a redirect loop, a lost reply), the member
// holds that failure and Execute returns it, while the other group keeps
// its result: Execute returns nil only when every member holds its reply
// or its own server error.
func TestClusterBatchMemberResendFailureFailsExecute(t *testing.T) {
	cases := []struct {
		name string
		// faults adds the rules on a (the key's owner) and b.
		faults func(t *testing.T, pa, pb *respiretest.Proxy, slot int, a, b string)
		want   error
	}{
		{"RedirectLoop", func(t *testing.T, pa, _ *respiretest.Proxy, slot int, a, _ string) {
			h := pa.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.Moved(slot, a))})
			t.Cleanup(h.Remove)
		}, ErrRedirectLoop},
		{"LostReply", func(t *testing.T, pa, pb *respiretest.Proxy, slot int, _, b string) {
			h := pa.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Inject(respiretest.Moved(slot, b))})
			t.Cleanup(h.Remove)
			h = pb.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.DropAfterForward})
			t.Cleanup(h.Remove)
		}, ErrConnectionLost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, proxies := frozenMapCluster(t, Options{Cluster: &ClusterOptions{MaxRedirects: 2}})
			ctx := testCtx(t)
			primaries := c.topo.Primaries()
			a, b := primaries[0].Addr, primaries[1].Addr
			kg, kb := bcTagOn(t, c, a)+"g", bcTagOn(t, c, b)+"b"
			if err := c.Set(ctx, kb, "vbb"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), kg, kb) })
			tc.faults(t, proxies[a], proxies[b], route.Slot(kg), a, b)

			batch := c.NewBatch()
			get := batch.Get(kg)       // group a: redirected, its resend fails
			strlen := batch.StrLen(kb) // group b
			err := batch.Execute(ctx)
			if !errors.Is(err, tc.want) {
				t.Errorf("Execute = %v, want %v: a member failed", err, tc.want)
			}
			if _, err := get.Result(); !errors.Is(err, tc.want) {
				t.Errorf("redirected GET = %v, want %v", err, tc.want)
			}
			if v, err := strlen.Result(); v != 3 || err != nil {
				t.Errorf("STRLEN (other group) = %d, %v; want 3", v, err)
			}
		})
	}
}

// TestClusterUnitRedirectWithoutHost: a MOVED that names no host
// ("MOVED 3999 :6381", a node announcing no endpoint) means the host of
// the node that sent it, for a transaction and for a redirected batch
// member as for a single command: the slot map records that host, and
// the resend reaches that node (here through its proxy), not an address
// without a host.
func TestClusterUnitRedirectWithoutHost(t *testing.T) {
	c, proxies := frozenMapCluster(t, Options{})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	_, portA, _ := net.SplitHostPort(a)
	pa := "htopo:" + bcTagOn(t, c, a)
	slot := route.Slot(pa)
	ks, kn := pa+"s", pa+"n"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), ks, kn) })
	owner := func() string {
		n, err := c.topo.Pick(slot, false)
		if err != nil {
			t.Fatal(err)
		}
		return n.Addr
	}

	t.Run("Transaction", func(t *testing.T) {
		if _, err := c.topo.Moved(slot, b); err != nil { // the client believes b serves the slot
			t.Fatal(err)
		}
		txFake(t, proxies[b], "SET", respiretest.Moved(slot, ":"+portA), 1, nil)
		execs := proxies[a].Forwarded("EXEC")
		tx := c.NewTransaction()
		tx.Set(ks, "v")
		incr := tx.Incr(kn)
		if err := tx.Execute(ctx); err != nil {
			t.Fatalf("Execute = %v", err)
		}
		if got := owner(); got != a {
			t.Errorf("the slot is routed to %q, want %q (the sender's host)", got, a)
		}
		if n := proxies[a].Forwarded("EXEC") - execs; n != 1 {
			t.Errorf("the new owner got EXEC %d times through its address, want 1", n)
		}
		if _, err := incr.Result(); err != nil {
			t.Errorf("INCR = %v", err)
		}
	})

	t.Run("BatchMember", func(t *testing.T) {
		if _, err := c.topo.Moved(slot, b); err != nil {
			t.Fatal(err)
		}
		rule := proxies[b].MustAddRule(t, respiretest.Rule{Command: "INCR", Times: 1,
			Action: respiretest.Inject(respiretest.Moved(slot, ":"+portA))})
		defer rule.Remove()
		incrs := proxies[a].Forwarded("INCR")
		batch := c.NewBatch()
		incr := batch.Incr(kn)
		if err := batch.Execute(ctx); err != nil {
			t.Fatalf("Execute = %v", err)
		}
		if _, err := incr.Result(); err != nil {
			t.Errorf("INCR = %v", err)
		}
		if got := owner(); got != a {
			t.Errorf("the slot is routed to %q, want %q (the sender's host)", got, a)
		}
		if n := proxies[a].Forwarded("INCR") - incrs; n != 1 {
			t.Errorf("the new owner got INCR %d times through its address, want 1", n)
		}
	})
}

// TestClusterUnfollowedMovedUpdatesMap: a blocking command and a
// dedicated connection (Watch included) return a MOVED reply rather than
// follow it, but the client still learns the slot's owner from it, so
// that the next call goes there: with no map refresh succeeding (frozen
// map), a stale slot would otherwise answer MOVED to every such call
// until the periodic refresh.
func TestClusterUnfollowedMovedUpdatesMap(t *testing.T) {
	c, _ := frozenMapCluster(t, Options{})
	ctx := testCtx(t)
	k := "htopo:" + keyPrefix(t) + "list"
	slot := route.Slot(k)
	owner, wrong := ownerAndOther(t, c, slot)
	cases := []struct {
		name string
		call func() error
	}{
		{"Blocking", func() error { _, _, err := c.BLPop(ctx, 10*time.Millisecond, k); return err }},
		{"Dedicated", func() error {
			return c.Dedicated(ctx, func(conn *Conn) error { _, err := conn.Do(ctx, NewCommand("LLEN"), k); return err })
		}},
		{"Watch", func() error { return c.Watch(ctx, func(*Tx) error { return nil }, k) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.topo.Moved(slot, wrong); err != nil { // the client believes wrong serves the slot
				t.Fatal(err)
			}
			var se *ServerError
			if err := tc.call(); !errors.As(err, &se) || se.Code != "MOVED" {
				t.Fatalf("call on the stale node = %v, want its MOVED reply (not followed)", err)
			}
			if n, _ := c.topo.Pick(slot, false); n.Addr != owner.Addr {
				t.Errorf("after the MOVED the slot is routed to %s, want %s", n.Addr, owner.Addr)
			}
			if err := tc.call(); err != nil && !errors.Is(err, ErrNil) {
				t.Errorf("next call = %v, want it served by the owner", err)
			}
		})
	}
}

// mapChangeAfterFirstPick is the client's topology with one map change
// landing between two Picks of the same Execute, as a refresh or a MOVED
// of another goroutine can: the first Pick of slot sees the map as it
// was, and every later Pick sees slot served by owner again.
type mapChangeAfterFirstPick struct {
	route.Topology
	slot  int
	owner string
	picks atomic.Int32 // groups pick their node on goroutines of their own
}

func (m *mapChangeAfterFirstPick) Pick(slot int, read bool) (*route.Node, error) {
	if slot == m.slot {
		if m.picks.Add(1) == 2 {
			if _, err := m.Topology.Moved(slot, m.owner); err != nil {
				return nil, err
			}
		}
	}
	return m.Topology.Pick(slot, read)
}

// TestClusterBatchMembersOfOneSlotStayInQueueOrder: the members of one
// slot go in one group, in queue order, even when the map changes while
// the batch is grouped: two INCRs of one key, the first routed by a stale
// map, the second by the current one, must not land in two groups that
// run in parallel (either may run first: the replies could count
// backwards).
func TestClusterBatchMembersOfOneSlotStayInQueueOrder(t *testing.T) {
	c, _ := frozenMapCluster(t, Options{})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	owner, other := primaries[0].Addr, primaries[1].Addr
	k, slot := keyOn(t, c, owner)
	if _, err := c.topo.Moved(slot, other); err != nil { // the stale map
		t.Fatal(err)
	}
	real := c.topo
	c.topo = &mapChangeAfterFirstPick{Topology: real, slot: slot, owner: owner}
	defer func() { c.topo = real }()
	b := c.NewBatch()
	first, second := b.Incr(k), b.Incr(k)
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	groups := 0
	for _, g := range b.groups {
		if len(g.ms) > 0 {
			groups++
		}
	}
	if groups != 1 {
		t.Errorf("two members of one slot went in %d groups, which run in parallel: want 1", groups)
	}
	n1, err1 := first.Result()
	n2, err2 := second.Result()
	if err1 != nil || err2 != nil || n1 != 1 || n2 != 2 {
		t.Errorf("INCR, INCR of one key in one batch = %d (%v), %d (%v); want 1, 2", n1, err1, n2, err2)
	}
}
