package respire

// Chaos on the real Cluster for multi-command units: batches that span
// every primary, transactions and single calls share one client while a
// slot they use migrates by hand (ASK, TRYAGAIN), a primary fails over to
// its replica (MOVED), and both are undone, and while callers give up at
// random moments. Whatever happens, every member gets its own reply or an
// error, and every INCR ran at most once, and surely when it reported
// success. The reusable checks are those of chaos_units_test.go.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// chaosSlot is one slot the Cluster chaos test uses: its hash tag, its
// value keys and their values, and one INCR counter per goroutine.
type chaosSlot struct {
	slot     int
	owner    string // its primary when the test starts
	keys     []string
	values   []string
	counters []*unitCounter // by goroutine
}

// TestClusterChaosUnitsKeepTheirOwnReplies runs, on one Cluster client
// through a proxy in front of every node: batches of 1 to 30 members
// over slots of all three primaries (GET, INCR of the goroutine's counter
// in that slot, keyless ECHO, MGET of two keys of one slot), unwatched
// transactions of 1 to 8 such members in one slot, and single GET, INCR
// and MGET calls, each under a context that cannot end, ends 0.1 to 5 ms
// later, or is cancelled by a timer goroutine (chaosCtx). Meanwhile the
// test goroutine migrates one slot key by key to another primary, makes a
// replica of a third primary take over (CLUSTER FAILOVER), then fails
// back and migrates the slot back, pacing each step by the load's
// progress; a cleanup restores the topology if the test stops midway. A
// third of the slots each unit picks are the migrating slot or the
// failing primary's. It checks the invariants of
// TestChaosUnitsKeepTheirOwnReplies (1 to 3, and afterwards every key
// holds its value and a batch over all keys gets its own values), with
// the failures a topology change adds (topologyFailure), and that the
// faults were seen: ASK followed, TRYAGAIN returned, retries made.
func TestClusterChaosUnitsKeepTheirOwnReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("a real slot migration and two failovers: about 15 s")
	}
	const (
		batchers = 4
		txers    = 3
		singles  = 6
		perOwner = 3 // slots per primary
		nvals    = 4 // value keys per slot
	)
	testenv.UseTopology(t, true)
	ids := clusterNodeIDs(t)
	primaries, replicas := clusterRoles(t)
	via := map[string]string{}
	var proxies []*respiretest.Proxy
	for _, a := range testenv.ClusterAddrs(t) {
		px := realProxy(t, a)
		via[a] = px.Addr()
		proxies = append(proxies, px)
	}
	opts, reader := withRetryMetrics(t, Options{
		Dialer:         rewriteDialer(via),
		CommandTimeout: 3 * time.Second,
		RetryPolicy:    &RetryPolicy{MaxAttempts: 50, MaxCommandRetryCategory: ReadOnly, MaxBackoff: 100 * time.Millisecond},
	})
	c := clusterClient(t, opts)
	ctx := testCtx(t)

	// The slots: perOwner of each primary. The first of src migrates to
	// dst and back; failed's replica promoted takes over and gives back.
	// The roles rotate from run to run (-count), so that a node's next
	// election is seldom within 4 × cluster-node-timeout of its last
	// (see failOverTo).
	order := slices.Sorted(slices.Values(primaries))
	run := int(clusterChaosRuns.Add(1))
	src, dst, failed := order[run%3], order[(run+1)%3], order[(run+2)%3]
	promoted := replicaOf(t, replicas, failed)
	goroutines := batchers + txers + singles
	var slots []*chaosSlot
	var all []string // every key of the test
	owned := map[string]int{}
	for i := 0; len(slots) < perOwner*len(primaries); i++ {
		tag := keyPrefix(t) + "{cc" + strconv.Itoa(i) + "}"
		n, err := c.topo.Pick(route.Slot(tag), false)
		if err != nil {
			t.Fatal(err)
		}
		if owned[n.Addr] == perOwner || slices.ContainsFunc(slots, func(s *chaosSlot) bool { return s.slot == route.Slot(tag) }) {
			continue
		}
		owned[n.Addr]++
		s := &chaosSlot{slot: route.Slot(tag), owner: n.Addr}
		for k := range nvals {
			s.keys = append(s.keys, tag+"v"+strconv.Itoa(k))
			s.values = append(s.values, "value-"+strconv.Itoa(len(slots))+"-"+strconv.Itoa(k))
		}
		for g := range goroutines {
			idx := int64(len(slots)*goroutines + g + 1)
			s.counters = append(s.counters, &unitCounter{key: tag + "c" + strconv.Itoa(g), base: idx * counterBase})
		}
		slots = append(slots, s)
	}
	var mig, onFailed *chaosSlot
	var risky []*chaosSlot // the migrating slot and the failing primary's
	for _, s := range slots {
		switch {
		case s.owner == src && mig == nil:
			mig = s
			risky = append(risky, s)
		case s.owner == failed:
			onFailed = s
			risky = append(risky, s)
		}
	}
	seed := c.NewBatch()
	for _, s := range slots {
		for k, key := range s.keys {
			seed.Set(key, s.values[k])
			all = append(all, key)
		}
		for _, ctr := range s.counters {
			seed.Set(ctr.key, strconv.FormatInt(ctr.base, 10))
			all = append(all, ctr.key)
		}
	}
	if err := seed.Execute(ctx); err != nil {
		t.Fatalf("seeding the keys: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Del(context.Background(), all...) })
	// Whatever happened, the slot goes back to src with every key, and
	// failed is a primary again (cleanups run last registered first: this
	// one after the load stops, before the keys are deleted).
	t.Cleanup(func() {
		migrateSlot(t, mig.slot, dst, src, ids)
		failOverTo(t, primaries, failed)
	})
	pick := func(r *rand.Rand) *chaosSlot {
		if r.IntN(3) == 0 {
			return risky[r.IntN(len(risky))]
		}
		return slots[r.IntN(len(slots))]
	}

	var bad violations
	var downs atomic.Int64 // units and calls ended by CLUSTERDOWN
	allowed := func(tx bool) func(error) bool {
		return func(err error) bool {
			if clusterDown(err) {
				downs.Add(1)
				return true
			}
			return topologyFailure(err, tx)
		}
	}
	batches := outcomes{also: allowed(false)}
	txs := outcomes{also: allowed(true)}
	single := outcomes{also: allowed(false)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopLoad)

	unitLoop := func(g int, tx bool, res *outcomes) {
		r := rand.New(rand.NewPCG(uint64(g), 0x63636861)) // fixed seed per goroutine
		unit, maxSize := "batch", 30
		if tx {
			unit, maxSize = "transaction", 8
		}
		also := func(kind memberKind, err error) bool {
			return clusterDown(err) || topologyFailure(err, tx || kind == memberMGet)
		}
		var ms []unitMember
		for n := 0; !stopped(stop); n++ {
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			ms = ms[:0]
			s := pick(r) // a transaction's one slot
			for i := range 1 + r.IntN(maxSize) {
				if !tx {
					s = pick(r)
				}
				switch k := r.IntN(len(s.keys)); r.IntN(6) {
				case 0, 1:
					ms = append(ms, unitMember{kind: memberGet, name: "GET " + s.keys[k], want: s.values[k], str: b.Get(s.keys[k])})
				case 2, 3:
					ctr := s.counters[g]
					ms = append(ms, unitMember{kind: memberIncr, name: "INCR " + ctr.key, ctr: ctr, num: b.Incr(ctr.key)})
				case 4:
					tok := fmt.Sprintf("%s%d-%d-%d", unit, g, n, i)
					ms = append(ms, unitMember{kind: memberEcho, name: "ECHO " + tok, want: tok, echo: b.Do(catalog.Conn.ECHO(), tok)})
				default:
					j := (k + 1) % len(s.keys)
					ms = append(ms, unitMember{kind: memberMGet, name: "MGET " + s.keys[k] + " " + s.keys[j],
						want: s.values[k] + " " + s.values[j], echo: b.Do(catalog.String.MGET(), s.keys[k], s.keys[j])})
				}
			}
			cctx, cancel := chaosCtx(r)
			err := b.Execute(cctx)
			cancel()
			res.record(&bad, unit, err)
			checkUnit(&bad, unit, tx, ms, err, also)
		}
	}
	for g := range batchers {
		wg.Go(func() { unitLoop(g, false, &batches) })
	}
	for g := batchers; g < batchers+txers; g++ {
		wg.Go(func() { unitLoop(g, true, &txs) })
	}
	for g := batchers + txers; g < goroutines; g++ {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 0x63636861))
			for !stopped(stop) {
				s := pick(r)
				k := r.IntN(len(s.keys))
				cctx, cancel := chaosCtx(r)
				var name, got, want string
				var err error
				switch r.IntN(3) {
				case 0:
					name, want = "GET "+s.keys[k], s.values[k]
					got, err = c.Get(cctx, s.keys[k])
				case 1:
					j := (k + 1) % len(s.keys)
					name, want = "MGET "+s.keys[k]+" "+s.keys[j], s.values[k]+" "+s.values[j]
					var vals []string
					if vals, _, err = c.MGet(cctx, s.keys[k], s.keys[j]); err == nil {
						got = strings.Join(vals, " ")
					}
				default:
					ctr := s.counters[g]
					var n int64
					n, err = c.Incr(cctx, ctr.key)
					checkIncr(&bad, ctr, n, err)
					name, got, want = "INCR "+ctr.key, "", ""
				}
				cancel()
				single.record(&bad, "single call", err)
				if err == nil && got != want {
					bad.add("single call: another command's reply", "%s = %q, want %q", name, got, want)
				}
			}
		})
	}

	// The faults, each step paced by the load's progress.
	progress := func() int64 { return batches.total() + txs.total() + single.total() }
	await := func(what string, n int64) {
		t.Helper()
		at := progress()
		eventually(t, 20*time.Second, what, func() bool { return progress() >= at+n })
	}
	routesTo := func(slot int, addr string) {
		t.Helper()
		eventually(t, 10*time.Second, "the client to route slot "+strconv.Itoa(slot)+" to "+addr, func() bool {
			n, err := c.topo.Pick(slot, false)
			return err == nil && n.Addr == addr
		})
	}
	// A resend by construction, not by the load's luck: an MGET over every
	// key of the half-moved slot gets TRYAGAIN (some of its keys moved,
	// some not) for as long as the migration waits, and is resent; the
	// proxies' receipt of its second copy ends it.
	var slotKeys []string
	for _, s := range slots {
		if s == mig {
			slotKeys = append(slotKeys, s.keys...)
			for _, ctr := range s.counters {
				slotKeys = append(slotKeys, ctr.key)
			}
		}
	}
	provokeResend := func() {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var seen atomic.Int64
		for _, px := range proxies {
			rule := px.MustAddRule(t, respiretest.Rule{Command: "MGET", Arg: slotKeys[0], Times: respiretest.Always, Action: respiretest.Pass, OnReceive: func(args []string) {
				if len(args) == 1+len(slotKeys) && seen.Add(1) == 2 {
					cancel()
				}
			}})
			defer rule.Remove()
		}
		if _, _, err := c.MGet(rctx, slotKeys...); err == nil {
			t.Errorf("MGET over a half-moved slot succeeded, want TRYAGAIN until cancelled")
		}
		if seen.Load() < 2 {
			t.Errorf("the MGET over a half-moved slot reached the servers %d times, want a resend", seen.Load())
		}
	}
	migrate := func(from, to string) {
		t.Helper()
		m := slotMigration{slot: mig.slot, src: from, dst: to, ids: ids}
		m.begin(t)
		// A key of the test first: the slot may hold other keys (other
		// tests', earlier runs'), which a step could move instead, and
		// the MGET would then find its keys whole on one node.
		m.migrate(t, slotKeys[0])
		provokeResend()
		for m.step(t, 1) > 0 {
			await("the load between two keys of the migration", 10)
		}
		migrateSlot(t, mig.slot, from, to, ids)
		routesTo(mig.slot, to)
	}
	var phases []string
	phase := func(name string, f func()) {
		start := time.Now()
		f()
		phases = append(phases, fmt.Sprintf("%s %v", name, time.Since(start).Round(time.Millisecond)))
	}
	phase("load", func() { await("the load before the faults", 100) })
	phase("migration", func() { migrate(src, dst); await("the load after the migration", 50) })
	phase("failover", func() {
		failOverTo(t, swapped(primaries, failed, promoted), promoted)
		routesTo(onFailed.slot, promoted)
		await("the load after the failover", 50)
	})
	phase("failback", func() { failOverTo(t, primaries, failed); routesTo(onFailed.slot, failed) })
	phase("migration back", func() { migrate(dst, src); await("the load after the restore", 50) })
	stopLoad()
	bad.report(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the faults may have outlasted testCtx
	defer cancel()

	// Afterwards one batch over every key gets its own values, and each
	// counter moved by its successful INCRs plus at most those that may
	// have run.
	after := c.NewBatch()
	gets := make([]Future[string], len(all))
	for i, k := range all {
		gets[i] = after.Get(k)
	}
	if err := after.Execute(ctx); err != nil {
		t.Fatalf("a batch over every key after the chaos: %v", err)
	}
	i := 0
	var incrOK, incrUnsure, migOK, failedOK int64
	for _, s := range slots {
		for k := range s.keys {
			if got, err := gets[i].Result(); err != nil || got != s.values[k] {
				t.Errorf("GET %s after the chaos = %q, %v; want %q", s.keys[k], got, err, s.values[k])
			}
			i++
		}
		for _, ctr := range s.counters {
			got, err := gets[i].Result()
			i++
			n, perr := strconv.ParseInt(got, 10, 64)
			if err != nil || perr != nil {
				t.Fatalf("GET %s after the chaos = %q, %v", ctr.key, got, err)
			}
			ok, unsure := ctr.ok.Load(), ctr.unsure.Load()
			if d := n - ctr.base; d < ok || d > ok+unsure {
				t.Errorf("INCR applied a wrong number of times: %s moved by %d; %d INCRs succeeded, %d may have run", ctr.key, d, ok, unsure)
			}
			incrOK, incrUnsure = incrOK+ok, incrUnsure+unsure
			switch {
			case s == mig:
				migOK += ok
			case s.owner == failed:
				failedOK += ok
			}
		}
	}
	// And single calls, all at once.
	var wrong atomic.Int64
	var first atomic.Value
	var cw sync.WaitGroup
	for _, s := range slots {
		for k := range s.keys {
			cw.Go(func() {
				if got, err := c.Get(ctx, s.keys[k]); err != nil || got != s.values[k] {
					wrong.Add(1)
					first.CompareAndSwap(nil, fmt.Sprintf("GET %s = %q, %v; want %q", s.keys[k], got, err, s.values[k]))
				}
			})
		}
	}
	cw.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d concurrent GETs after the chaos got a wrong reply, first: %s", n, first.Load())
	}

	asking := 0
	for _, px := range proxies {
		asking += px.Forwarded("ASKING")
	}
	var retries int64
	for k, v := range retryCollect(t, reader) {
		if strings.HasSuffix(k, "/attempted") {
			retries += v
		}
	}
	t.Logf("%s; batches %v; transactions %v; single calls %v", strings.Join(phases, ", "), &batches, &txs, &single)
	t.Logf("INCRs ok %d (migrating slot %d, failed-over primary %d), may have run %d; ASKING sent %d; resends %d; CLUSTERDOWN %d",
		incrOK, migOK, failedOK, incrUnsure, asking, retries, downs.Load())
	for _, m := range []struct {
		what     string
		got, min int64
	}{
		{"successful batches", batches.ok.Load(), 50},
		{"failed batches", batches.failed(), 10},
		{"successful transactions", txs.ok.Load(), 50},
		{"failed transactions", txs.failed(), 10},
		{"successful single calls", single.ok.Load(), 100},
		{"failed single calls", single.failed(), 10},
		{"successful INCRs", incrOK, 100},
		{"successful INCRs in the migrating slot", migOK, 20},
		{"successful INCRs on the primary that failed over", failedOK, 20},
		{"ASKs followed (ASKING sent)", int64(asking), 1},
		{"units and calls ended by TRYAGAIN or ASK", batches.other.Load() + txs.other.Load() + single.other.Load() - downs.Load(), 1},
		{"resends", retries, 1},
	} {
		if m.got < m.min {
			t.Errorf("%d %s, want at least %d: the run proved too little", m.got, m.what, m.min)
		}
	}
}

// topologyFailure reports whether err is a failure that a topology change
// gives a unit, a member or a call, as documented (docs/batches.md,
// docs/topologies.md): TRYAGAIN (a multi-key command over a half-moved
// slot; for a transaction, any of its commands) that the policy did not
// resend, because the unit's category is not permitted or its attempts
// ran out; and, for a transaction (tx), the ASK that ends it.
func topologyFailure(err error, tx bool) bool {
	var se *ServerError
	return errors.As(err, &se) && (se.Code == "TRYAGAIN" || tx && se.Code == "ASK")
}

// clusterDown reports whether err is the CLUSTERDOWN a node answers to
// every command while it counts a slot's owner or a majority of the
// primaries as unreachable. A failover on this loaded 2-core machine can
// cause it: a node that misses its peers' pings for cluster-node-timeout
// marks them failing and refuses commands until it sees the cluster whole
// again (REDIS-FACTS; docs/topologies.md). No policy can select it, so the
// call gets it once and nothing is resent (the retry policy tests prove
// that part); the invariants on replies and counters still hold.
func clusterDown(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && se.Code == "CLUSTERDOWN"
}

// checkIncr checks one single INCR call's reply against invariant 3 of
// TestChaosUnitsKeepTheirOwnReplies and counts it on ctr.
func checkIncr(bad *violations, ctr *unitCounter, n int64, err error) {
	switch {
	case err != nil:
		if MayHaveExecuted(err) {
			ctr.unsure.Add(1)
		}
		return
	case n <= ctr.base || n >= ctr.base+counterBase:
		bad.add("single call: INCR got another command's reply", "INCR %s = %d, outside its counter's range", ctr.key, n)
	case n <= ctr.last:
		bad.add("single call: INCR replies not strictly increasing", "INCR %s = %d after %d", ctr.key, n, ctr.last)
	}
	ctr.ok.Add(1)
	ctr.last = max(ctr.last, n)
}

// clusterChaosRuns counts the runs of TestClusterChaosUnitsKeepTheirOwnReplies.
var clusterChaosRuns atomic.Int32

// swapped returns addrs with old replaced by new.
func swapped(addrs []string, old, new string) []string {
	out := slices.Clone(addrs)
	if i := slices.Index(out, old); i >= 0 {
		out[i] = new
	}
	return out
}
