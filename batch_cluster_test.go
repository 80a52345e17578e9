package respire

// Batches on a real Cluster, through fault proxies: the servers' own INFO
// commandstats say where, and how many times, each member ran; the proxy
// rules' Received channels say the fault fired. Nothing here changes the
// topology.

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// getrangeRO is GETRANGE declared ReadOnly, as the other retry tests use it.
var getrangeRO = NewCommand("GETRANGE").WithRetryCategory(ReadOnly)

// bcTagOn returns a key prefix of the test ending in a hash tag whose slot
// the primary addr serves: every key made from it shares that slot.
func bcTagOn(t *testing.T, c *Client, addr string) string {
	t.Helper()
	for i := range 100000 {
		tag := "{bc" + strconv.Itoa(i) + "}"
		n, err := c.topo.Pick(route.Slot(tag), false)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr == addr {
			return keyPrefix(t) + tag
		}
	}
	t.Fatalf("no hash tag is served by %s", addr)
	return ""
}

// bcFired reports whether rule has applied (its Received channel is
// closed): the fault happened.
func bcFired(rule *respiretest.RuleHandle) bool {
	select {
	case <-rule.Received():
		return true
	default:
		return false
	}
}

// bcCalls returns the commandstats calls of each of names on addr.
func bcCalls(t *testing.T, addr string, names ...string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, n := range names {
		m[n] = commandCalls(t, addr, n)
	}
	return m
}

// bcDelta checks that each command of before ran want more times on addr.
func bcDelta(t *testing.T, what, addr string, before map[string]int, want int) {
	t.Helper()
	for _, n := range slices.Sorted(maps.Keys(before)) {
		if got := commandCalls(t, addr, n) - before[n]; got != want {
			t.Errorf("%s %s ran %s %d times, want %d", what, addr, n, got, want)
		}
	}
}

// bcSeedReplicated sets pairs (keys of one slot) on their primary and
// waits, on the same connection, until its replica has them (WAIT 1):
// a replica read afterwards sees them.
func bcSeedReplicated(t *testing.T, c *Client, pairs ...string) {
	t.Helper()
	ctx := testCtx(t)
	err := c.Dedicated(ctx, func(conn *Conn) error {
		if _, err := conn.Do(ctx, NewCommand("MSET"), anys(pairs)...); err != nil {
			return err
		}
		r, err := conn.Do(ctx, NewCommand("WAIT"), "1", "5000")
		if err != nil {
			return err
		}
		if n, err := r.Int64(); err != nil || n < 1 {
			return errors.New("WAIT: the replica did not acknowledge the writes: " + strconv.FormatInt(n, 10))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seeding %v: %v", pairs, err)
	}
	t.Cleanup(func() {
		var keys []string
		for i := 0; i < len(pairs); i += 2 {
			keys = append(keys, pairs[i])
		}
		_, _ = c.Del(testCtx(t), keys...)
	})
}

// TestClusterBatchReplicaGroupRetriesOnReplica: under ReadReplica a
// Cluster batch group of reads only is sent to the slot's replica, and a
// lost reply resends the whole group there (every member ran twice on the
// replica, none on the primary) under a permitting policy; a single read
// the replica served is still never resent.
func TestClusterBatchReplicaGroupRetriesOnReplica(t *testing.T) {
	countsCommands(t)
	seed := clusterClient(t, Options{})
	c, proxies := proxiedClusterNodes(t, Options{
		ReadFrom:    ReadReplica,
		RetryPolicy: &RetryPolicy{MaxAttempts: 3, InitialBackoff: NoBackoff},
	}, true)
	p := keyPrefix(t) + "{r}"
	ka, kb, kc := p+"a", p+"b", p+"c"
	slot := route.Slot(ka)
	replica, primary := readReplica(t, c, slot)
	bcSeedReplicated(t, seed, ka, "va", kb, "vbb", kc, "vccc")
	px := proxies[replica.Addr]
	rule := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
	defer rule.Remove()

	names := []string{"get", "strlen", "getrange"}
	onReplica, onPrimary := bcCalls(t, replica.Addr, names...), bcCalls(t, primary.Addr, names...)
	ctx := testCtx(t) // after the count's wait for the servers (testenv.CountCommands)
	b := c.NewBatch()
	ga := b.Get(ka)
	lb := b.StrLen(kb)
	rc := b.Do(getrangeRO, kc, "0", "-1") // last: every member reached the replica before the drop
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute = %v, want the group's resend to succeed", err)
	}
	if !bcFired(rule) {
		t.Fatal("the GETRANGE reply was never dropped")
	}
	bcDelta(t, "the replica", replica.Addr, onReplica, 2) // the whole group, twice, on the replica
	bcDelta(t, "the primary", primary.Addr, onPrimary, 0)
	if n := rule.Applied(); n != 1 {
		t.Errorf("the fault applied %d times, want 1 (the resend passed)", n)
	}
	if n := px.Forwarded("GETRANGE"); n != 2 {
		t.Errorf("the replica's proxy forwarded GETRANGE %d times, want 2", n)
	}
	if v, err := ga.Result(); v != "va" || err != nil {
		t.Errorf("GET = %q, %v; want va", v, err)
	}
	if v, err := lb.Result(); v != 3 || err != nil {
		t.Errorf("STRLEN = %d, %v; want 3", v, err)
	}
	if r, err := rc.Result(); err != nil || string(r.v.Str) != "vccc" {
		t.Errorf("GETRANGE = %v, %v; want vccc", r.v, err)
	}

	// Contrast: one GET the replica served, with the same fault, is not
	// resent.
	single := px.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropAfterForward})
	defer single.Remove()
	gets := commandCalls(t, replica.Addr, "get")
	_, err := c.Get(ctx, ka)
	var re *RetryError
	if !errors.Is(err, ErrConnectionLost) || errors.As(err, &re) {
		t.Errorf("single replica GET = %v, want the lost reply, not retried", err)
	}
	if got := commandCalls(t, replica.Addr, "get") - gets; got != 1 || !bcFired(single) {
		t.Errorf("the replica ran the single GET %d times (fault fired: %v), want 1", got, bcFired(single))
	}
}

// TestClusterBatchGroupsRetryIndependently: a lost reply in one group of a
// Cluster batch resends that group in full (each of its members ran twice
// on its primary, writes included under a permitting policy, and only the
// final attempt's results are published), while the group on the other
// primary ran once and keeps its results.
func TestClusterBatchGroupsRetryIndependently(t *testing.T) {
	countsCommands(t)
	c, proxies := proxiedCluster(t, Options{RetryPolicy: &RetryPolicy{
		MaxAttempts: 3, MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff,
	}})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	pa, pb := bcTagOn(t, c, a), bcTagOn(t, c, b)
	ks, kn, kg := pa+"s", pa+"n", pb+"g"
	if err := c.Set(ctx, kg, "vb"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), ks, kn, kg) })
	rule := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
	defer rule.Remove()

	onA := bcCalls(t, a, "set", "incr", "getrange")
	onB := bcCalls(t, b, "get", "strlen")
	notOnA := bcCalls(t, a, "get", "strlen")
	notOnB := bcCalls(t, b, "set", "incr", "getrange")
	batch := c.NewBatch()
	set := batch.Set(ks, "new")                // group a
	get := batch.Get(kg)                       // group b
	incr := batch.Incr(kn)                     // group a
	strlen := batch.StrLen(kg)                 // group b
	rng := batch.Do(getrangeRO, ks, "0", "-1") // group a, last: its drop comes after every member of a ran
	if err := batch.Execute(ctx); err != nil {
		t.Fatalf("Execute = %v, want the faulted group's resend to succeed", err)
	}
	if !bcFired(rule) {
		t.Fatal("the GETRANGE reply was never dropped")
	}
	bcDelta(t, "the faulted group's primary", a, onA, 2)
	bcDelta(t, "the other group's primary", b, onB, 1)
	bcDelta(t, "the faulted group's primary", a, notOnA, 0)
	bcDelta(t, "the other group's primary", b, notOnB, 0)
	// The other group travelled apart: its members reached only their
	// own primary, once (not the faulted unit, answered MOVED there).
	for _, cmd := range []string{"GET", "STRLEN"} {
		if n := proxies[b].Forwarded(cmd); n != 1 {
			t.Errorf("the other group's %s reached its primary's proxy %d times, want 1", cmd, n)
		}
		if n := proxies[a].Forwarded(cmd); n != 0 {
			t.Errorf("the other group's %s reached the faulted group's proxy %d times, want 0", cmd, n)
		}
	}
	if err := set.Err(); err != nil {
		t.Errorf("SET = %v", err)
	}
	if v, err := incr.Result(); v != 2 || err != nil {
		t.Errorf("INCR = %d, %v; want 2 (the final attempt's reply)", v, err)
	}
	if r, err := rng.Result(); err != nil || string(r.v.Str) != "new" {
		t.Errorf("GETRANGE = %v, %v; want new", r.v, err)
	}
	if v, err := get.Result(); v != "vb" || err != nil {
		t.Errorf("GET (other group) = %q, %v; want vb", v, err)
	}
	if v, err := strlen.Result(); v != 2 || err != nil {
		t.Errorf("STRLEN (other group) = %d, %v; want 2", v, err)
	}
}

// TestClusterBatchScanContinuationIsPinnedAndNotRetried: a first SCAN page
// given a server runs there (not where keyless members go) and tells it
// in its page; a continuation runs on its page's server even beside a
// group on another primary (SCAN is keyless), and with its reply lost it
// is not resent under a permitting policy, while the other group
// succeeds. A first page, by contrast, is resent on its server.
func TestClusterBatchScanContinuationIsPinnedAndNotRetried(t *testing.T) {
	countsCommands(t)
	c, proxies := proxiedCluster(t, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 3, InitialBackoff: NoBackoff}})
	ctx := testCtx(t)
	// other serves slot 0: keyless members without a pin go there, or
	// with the first group. home is another primary.
	zero, home := ownerAndOther(t, c, -1) // zero: where a keyless unit goes
	other := zero.Addr
	_, keys := bcScanKeys(t, c, home)
	kOther := bcTagOn(t, c, other) + "g"
	if err := c.Set(ctx, kOther, "vo"); err != nil {
		t.Fatal(err)
	}
	keys = append(keys, kOther)
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), keys...) })
	opts := ScanOptions{Count: 1}
	scans := func() (int, int) { return commandCalls(t, home, "scan"), commandCalls(t, other, "scan") }

	// The first page goes to the server it names.
	h0, o0 := scans()
	page := bcFirstPage(t, c, home, opts)
	if h, o := scans(); h-h0 != 1 || o-o0 != 0 {
		t.Errorf("first page: SCAN ran %d times on its server, %d on slot 0's; want 1 and 0", h-h0, o-o0)
	}

	// The continuation runs on page.Server, though the GET's group (on
	// another primary) comes first and keyless members join it.
	h0, o0 = scans()
	gets := commandCalls(t, other, "get")
	b := c.NewBatch()
	g := b.Get(kOther)
	next := b.Scan(page, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("continuation: Execute = %v", err)
	}
	if np, err := next.Result(); err != nil || np.Server != home {
		t.Errorf("continuation = %+v, %v; want a page from %s", np, err, home)
	}
	if v, err := g.Result(); v != "vo" || err != nil {
		t.Errorf("GET = %q, %v; want vo", v, err)
	}
	if h, o := scans(); h-h0 != 1 || o-o0 != 0 {
		t.Errorf("continuation: SCAN ran %d times on the cursor's server, %d on the other group's; want 1 and 0", h-h0, o-o0)
	}
	if got := commandCalls(t, other, "get") - gets; got != 1 {
		t.Errorf("GET ran %d times on its primary, want 1", got)
	}

	// With its reply lost the continuation is not resent; the other
	// group keeps its result.
	rule := proxies[home].MustAddRule(t, respiretest.Rule{Command: "SCAN", Action: respiretest.DropAfterForward})
	h0, o0 = scans()
	gets = commandCalls(t, other, "get")
	b = c.NewBatch()
	g = b.Get(kOther)
	lost := b.Scan(page, opts)
	err := b.Execute(ctx)
	rule.Remove()
	if !bcFired(rule) {
		t.Fatal("the SCAN reply was never dropped")
	}
	if !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Execute = %v, want the continuation's group's lost connection", err)
	}
	var re *RetryError
	if err := lost.Err(); !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) || errors.As(err, &re) {
		t.Errorf("continuation = %v, want a lost connection that may have executed, not retried", err)
	}
	if h, o := scans(); h-h0 != 1 || o-o0 != 0 {
		t.Errorf("lost continuation: SCAN ran %d times on its server, %d elsewhere; want 1 and 0 (not resent)", h-h0, o-o0)
	}
	if n := rule.Matched(); n != 1 {
		t.Errorf("the continuation reached its server's proxy %d times, want 1", n)
	}
	if v, err := g.Result(); v != "vo" || err != nil {
		t.Errorf("GET beside the lost continuation = %q, %v; want vo", v, err)
	}
	if got := commandCalls(t, other, "get") - gets; got != 1 {
		t.Errorf("GET ran %d times on its primary, want 1", got)
	}

	// Contrast: a first page (cursor 0) is an ordinary read, resent on
	// the server it names, which its page then reports.
	rule = proxies[home].MustAddRule(t, respiretest.Rule{Command: "SCAN", Action: respiretest.DropAfterForward})
	defer rule.Remove()
	h0, o0 = scans()
	b = c.NewBatch()
	first := b.Scan(ScanPage[string]{Server: home}, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("first page with a lost reply: Execute = %v, want its resend to succeed", err)
	}
	if !bcFired(rule) {
		t.Fatal("the first page's reply was never dropped")
	}
	if p, err := first.Result(); err != nil || p.Server != home {
		t.Errorf("resent first page = %+v, %v; want a page from %s", p, err, home)
	}
	if h, o := scans(); h-h0 != 2 || o-o0 != 0 {
		t.Errorf("first page with a lost reply: SCAN ran %d times on its server, %d elsewhere; want 2 and 0", h-h0, o-o0)
	}
}

// TestClusterBatchScanKeepsReplicaServer: under ReadReplica a fresh SCAN
// page (cursor 0) of a batch is a read the replica route serves, its page
// names that replica, and the continuation runs there.
func TestClusterBatchScanKeepsReplicaServer(t *testing.T) {
	countsCommands(t)
	seed := clusterClient(t, Options{})
	c := clusterClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	// Without keys, the batch's SCAN goes the way of slot 0.
	replica, primary := readReplica(t, c, 0)
	ph := bcTagOn(t, c, primary.Addr)
	var pairs []string
	for i := range 32 {
		pairs = append(pairs, ph+strconv.Itoa(i), "v")
	}
	bcSeedReplicated(t, seed, pairs...)
	opts := ScanOptions{Count: 1}
	onReplica, onPrimary := commandCalls(t, replica.Addr, "scan"), commandCalls(t, primary.Addr, "scan")
	b := c.NewBatch()
	first := b.Scan(ScanPage[string]{}, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("first page: Execute = %v", err)
	}
	page, err := first.Result()
	if err != nil || page.Server != replica.Addr || page.Cursor == "0" {
		t.Fatalf("first page = %+v, %v; want a continuation cursor from the replica %s", page, err, replica.Addr)
	}
	b = c.NewBatch()
	next := b.Scan(page, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("continuation: Execute = %v", err)
	}
	if np, err := next.Result(); err != nil || np.Server != replica.Addr {
		t.Errorf("continuation = %+v, %v; want a page from the replica %s", np, err, replica.Addr)
	}
	if got := commandCalls(t, replica.Addr, "scan") - onReplica; got != 2 {
		t.Errorf("the replica ran SCAN %d times, want 2 (the first page and its continuation)", got)
	}
	if got := commandCalls(t, primary.Addr, "scan") - onPrimary; got != 0 {
		t.Errorf("the primary ran SCAN %d times, want 0", got)
	}
}

// bcScanAll iterates with one batch per page from start until cursor 0.
// Every page must come from server (when not ""), and from the first
// page's server otherwise. It returns the keys and the number of
// continuation pages.
func bcScanAll(t *testing.T, c *Client, start ScanPage[string], opts ScanOptions, server string) (map[string]bool, int) {
	t.Helper()
	ctx := testCtx(t)
	got := map[string]bool{}
	page, continuations := start, 0
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("SCAN never returned cursor 0")
		}
		if page.Cursor != "" && page.Cursor != "0" {
			continuations++
		}
		b := c.NewBatch()
		f := b.Scan(page, opts)
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("page %d (cursor %q): Execute = %v", i, page.Cursor, err)
		}
		next, err := f.Result()
		if err != nil {
			t.Fatalf("page %d (cursor %q) = %v", i, page.Cursor, err)
		}
		if server == "" {
			server = next.Server
		}
		if next.Server != server {
			t.Fatalf("page %d came from %q, want %s (the cursor's server)", i, next.Server, server)
		}
		for _, k := range next.Items {
			got[k] = true
		}
		if next.Cursor == "0" {
			return got, continuations
		}
		page = next
	}
}

// TestBatchScanIteratesEveryKey: a first Batch.Scan page and its
// continuations, each in a batch of its own, until cursor 0, return every
// seeded key, each page from the cursor's server: the standalone server,
// the Sentinel primary, and on a Cluster each primary in turn (its own
// keys).
func TestBatchScanIteratesEveryKey(t *testing.T) {
	const n = 60
	seed := func(t *testing.T, c *Client) (string, map[string]bool) {
		p := keyPrefix(t)
		want := map[string]bool{}
		b := c.NewBatch()
		for i := range n {
			k := p + "k" + strconv.Itoa(i)
			want[k] = true
			b.Set(k, "v")
		}
		if err := b.Execute(testCtx(t)); err != nil {
			t.Fatalf("seeding: %v", err)
		}
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), slices.Collect(maps.Keys(want))...) })
		return escapeGlob(p) + "*", want
	}
	check := func(t *testing.T, got, want map[string]bool, continuations int) {
		t.Helper()
		if !maps.Equal(got, want) {
			t.Errorf("SCAN returned %d keys, want the %d seeded: %v", len(got), len(want), got)
		}
		if continuations == 0 {
			t.Error("no continuation page was sent: the iteration proved nothing")
		}
	}
	t.Run("Standalone", func(t *testing.T) {
		c := newClient(t, Options{})
		match, want := seed(t, c)
		got, conts := bcScanAll(t, c, ScanPage[string]{}, ScanOptions{Match: match, Count: 5}, standaloneAddr(t))
		check(t, got, want, conts)
	})
	t.Run("Sentinel", func(t *testing.T) {
		c := sentinelClient(t, Options{})
		match, want := seed(t, c)
		got, conts := bcScanAll(t, c, ScanPage[string]{}, ScanOptions{Match: match, Count: 5}, sentinelPrimary(t))
		check(t, got, want, conts)
	})
	t.Run("Cluster", func(t *testing.T) {
		c := clusterClient(t, Options{})
		match, want := seed(t, c)
		got, conts := map[string]bool{}, 0
		for _, node := range c.topo.Primaries() {
			keys, k := bcScanAll(t, c, ScanPage[string]{Server: node.Addr}, ScanOptions{Match: match, Count: 5}, node.Addr)
			conts += k
			for key := range keys {
				if owner, _ := c.topo.Pick(route.Slot(key), false); owner == nil || owner.Addr != node.Addr {
					t.Errorf("%s returned %s, served by %s", node.Addr, key, owner.Addr)
				}
				got[key] = true
			}
		}
		check(t, got, want, conts)
	})
}

// TestUnitRetryOnTopologies: on Sentinel and Cluster, a batch whose GET
// reply is lost (after the server ran every member) is not replayed under
// the default policy (each INCR ran once), and it and a transaction whose
// EXEC reply is lost are replayed as whole units under WriteAccumulating,
// on the primary that serves them: its commandstats show each INCR twice
// and EXEC twice.
func TestUnitRetryOnTopologies(t *testing.T) {
	countsCommands(t)
	policy := func(max RetryCategory) *RetryPolicy {
		return &RetryPolicy{MaxCommandRetryCategory: max, InitialBackoff: NoBackoff}
	}
	type setup struct {
		c       *Client
		px      *respiretest.Proxy
		primary string
		key     string
	}
	for _, topo := range []string{"Sentinel", "Cluster"} {
		t.Run(topo, func(t *testing.T) {
			get := func(t *testing.T, max RetryCategory) setup {
				if topo == "Sentinel" {
					primary := sentinelPrimary(t)
					px := realProxy(t, primary)
					c := sentinelClient(t, Options{RetryPolicy: policy(max),
						Dialer: rewriteDialer(map[string]string{primary: px.Addr()})})
					return setup{c, px, primary, keyPrefix(t) + "{u}"}
				}
				c, proxies := proxiedCluster(t, Options{RetryPolicy: policy(max)})
				primary := c.topo.Primaries()[0].Addr
				k, _ := keyOn(t, c, primary)
				return setup{c, proxies[primary], primary, "{" + k + "}"}
			}
			for _, replay := range []bool{false, true} {
				name, max := "BatchNotReplayed", RetryCategory(0) // the default: writes are not resent
				if replay {
					name, max = "Batch", WriteAccumulating
				}
				t.Run(name, func(t *testing.T) {
					s := get(t, max)
					t.Cleanup(func() { _, _ = s.c.Del(testCtx(t), s.key+"a", s.key+"c") })
					rule := s.px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.LoseReply})
					defer rule.Remove()
					before := commandCalls(t, s.primary, "incr")
					ctx := testCtx(t) // after the count's wait for the servers (testenv.CountCommands)
					b := s.c.NewBatch()
					a := b.Incr(s.key + "a")
					b.Get(s.key + "b")
					cc := b.Incr(s.key + "c")
					err := b.Execute(ctx)
					ran := commandCalls(t, s.primary, "incr") - before
					if !replay {
						if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
							t.Fatalf("Execute = %v, want the lost connection, possibly executed", err)
						}
						if ran != 2 {
							t.Errorf("INCR ran %d times on the primary, want 2 (each INCR once: no replay)", ran)
						}
						return
					}
					if err != nil {
						t.Fatalf("Execute = %v", err)
					}
					if ran != 4 {
						t.Errorf("INCR ran %d times on the primary, want 4 (the replay: each INCR twice)", ran)
					}
					if v, _ := a.Result(); v != 2 {
						t.Errorf("INCR a = %d, want 2 (the final attempt's)", v)
					}
					if v, err := cc.Result(); v != 2 || err != nil {
						t.Errorf("INCR c = %d, %v; want 2 (the final attempt's)", v, err)
					}
				})
			}
			t.Run("Transaction", func(t *testing.T) {
				s := get(t, WriteAccumulating)
				t.Cleanup(func() { _, _ = s.c.Del(testCtx(t), s.key+"x") })
				rule := s.px.MustAddRule(t, respiretest.Rule{Command: "EXEC", Times: 1, Action: respiretest.DropAfterForward})
				defer rule.Remove()
				execs := commandCalls(t, s.primary, "exec")
				ctx := testCtx(t) // after the count's wait for the servers (testenv.CountCommands)
				tx := s.c.NewTransaction()
				x := tx.Incr(s.key + "x")
				if err := tx.Execute(ctx); err != nil {
					t.Fatalf("Execute = %v", err)
				}
				if got := commandCalls(t, s.primary, "exec") - execs; got != 2 {
					t.Errorf("EXEC ran %d times on the primary, want 2", got)
				}
				if v, _ := x.Result(); v != 2 {
					t.Errorf("INCR x = %d, want 2 from the final EXEC", v)
				}
			})
		})
	}
}

// TestClusterBatchReuse: a Cluster batch reused with Reset keeps its
// grouping memory and each group's reply memory for the next execution.
// Whatever the next grouping (one node, two, three, one again), every
// member gets its own key's value, and a raw Reply read before Reset keeps
// its bytes while later executions decode into fresh memory.
func TestClusterBatchReuse(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	if len(primaries) < 3 {
		t.Fatalf("the test Cluster has %d primaries, want 3", len(primaries))
	}
	var keys []string
	for _, n := range primaries[:3] {
		keys = append(keys, bcTagOn(t, c, n.Addr)+"k")
	}
	t.Cleanup(func() {
		for _, k := range keys {
			_, _ = c.Del(testCtx(t), k)
		}
	})
	// Every round writes new values, so that a reply decoded over an
	// older one's memory shows in the older one's bytes.
	value := func(round, i int) string { return "r" + strconv.Itoa(round) + "-" + strconv.Itoa(i) }
	b := c.NewBatch()
	var kept Reply
	for round, nodes := range []int{1, 2, 3, 1, 3, 2} {
		for i, k := range keys {
			if err := c.Set(ctx, k, value(round, i)); err != nil {
				t.Fatal(err)
			}
		}
		b.Reset()
		var raw Future[Reply]
		if round == 1 {
			// First in its group: its bytes start the group's reply memory.
			raw = b.Do(NewCommand("GET"), keys[1])
		}
		var gets []Future[string]
		var want []string
		for rep := range 4 { // several members per node, interleaved
			for i := range nodes {
				k := (i + rep + round) % nodes
				gets = append(gets, b.Get(keys[k]))
				want = append(want, value(round, k))
			}
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("round %d (%d nodes): Execute = %v", round, nodes, err)
		}
		for i, g := range gets {
			if v, err := g.Result(); v != want[i] || err != nil {
				t.Errorf("round %d (%d nodes): member %d = %q, %v; want %q", round, nodes, i, v, err, want[i])
			}
		}
		if round == 1 {
			r, err := raw.Result()
			if err != nil || string(r.v.Str) != value(1, 1) {
				t.Fatalf("raw GET = %v, %v; want %s", r.v, err, value(1, 1))
			}
			kept = r
		}
		if round > 1 && string(kept.v.Str) != value(1, 1) {
			t.Errorf("round %d: a raw Reply of round 1 changed to %q", round, string(kept.v.Str))
		}
	}
}

// TestClusterBatchKeylessMemberKeepsQueueOrder: a keyless member runs in
// the first group in its queue position among that group's members, as
// on one server: SCRIPT LOAD queued before an EVALSHA of the script (whose
// key makes that group) loads it before the EVALSHA runs.
func TestClusterBatchKeylessMemberKeepsQueueOrder(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k := "htopo:" + keyPrefix(t) + "k"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
	// A script no server has seen: its digest is unknown until loaded.
	src := "return redis.call('SET', KEYS[1], ARGV[1]) -- " + runID + " " + strconv.FormatInt(time.Now().UnixNano(), 36)
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])

	b := c.NewBatch()
	load := b.Do(catalog.Scripting.SCRIPT_LOAD(), src)
	run := b.Do(catalog.Scripting.EVALSHA(), sha, 1, k, "v")
	get := b.Get(k)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute = %v", err)
	}
	if r, err := load.Result(); err != nil || string(r.v.Str) != sha {
		t.Errorf("SCRIPT LOAD = %v, %v; want %s", r.v, err, sha)
	}
	if _, err := run.Result(); err != nil {
		t.Errorf("EVALSHA after SCRIPT LOAD = %v, want it to find the script", err)
	}
	if v, err := get.Result(); err != nil || v != "v" {
		t.Errorf("GET = %q, %v; want v", v, err)
	}
}

// TestSentinelBatchScanContinuesOnReplica: under ReadReplica a Sentinel
// client's SCAN page comes from a replica; a batch continues its cursor
// there, as a Cluster batch does, rather than refusing it as if the
// replica were a primary that had been demoted.
func TestSentinelBatchScanContinuesOnReplica(t *testing.T) {
	c := sentinelClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	opts := ScanOptions{Count: 1}
	page := replicaScanPage(t, c, opts)
	b := c.NewBatch()
	next := b.Scan(page, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("continuation: Execute = %v", err)
	}
	if np, err := next.Result(); err != nil || np.Server != page.Server {
		t.Errorf("continuation = %+v, %v; want a page from the replica %s", np, err, page.Server)
	}
}

// TestClusterBatchRefusesFanOutCommands: on a Cluster, Client.Do sends a
// keyless command such as KEYS or CONFIG SET to every primary; a batch or
// transaction member would reach one node and answer or apply there
// alone, silently, so such a member fails with ErrInvalidArgument, the
// unit fails before any I/O, and no primary runs it. The same command on
// a standalone client's batch is one server's and runs.
func TestClusterBatchRefusesFanOutCommands(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	cases := []struct {
		cmd  Command
		args []any
		stat string
	}{
		{NewCommand("KEYS"), []any{keyPrefix(t) + "*"}, "keys"},
		// A value no server has: were it applied, it would fail anyway.
		{NewCommand("CONFIG"), []any{"SET", "no-such-parameter-" + runID, "1"}, "config|set"},
	}
	for _, tc := range cases {
		for _, tx := range []bool{false, true} {
			before := map[string]int{}
			for _, n := range c.topo.Primaries() {
				before[n.Addr] = commandCalls(t, n.Addr, tc.stat)
			}
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			set := b.Set(k, "v")
			fan := b.Do(tc.cmd, tc.args...)
			if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s (tx %v): Execute = %v, want ErrInvalidArgument", tc.cmd.FullName(), tx, err)
			}
			if _, err := fan.Result(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s (tx %v): member = %v, want ErrInvalidArgument", tc.cmd.FullName(), tx, err)
			}
			if err := set.Err(); err == nil {
				t.Errorf("%s (tx %v): the valid member ran", tc.cmd.FullName(), tx)
			}
			for addr, n := range before {
				if d := commandCalls(t, addr, tc.stat) - n; d != 0 {
					t.Errorf("%s (tx %v): %s ran it %d times", tc.cmd.FullName(), tx, addr, d)
				}
			}
		}
	}
	// A standalone batch has one server: the same member runs there.
	sc := newClient(t, Options{})
	b := sc.NewBatch()
	keys := b.Do(NewCommand("KEYS"), keyPrefix(t)+"*")
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("a standalone batch with KEYS: %v", err)
	}
	if _, err := keys.Result(); err != nil {
		t.Errorf("KEYS in a standalone batch = %v", err)
	}
}

// replicaScanPage seeds 8 keys, replicated, and returns the first SCAN
// page of c (a Sentinel client under ReadReplica): a continuation cursor
// from a replica.
func replicaScanPage(t *testing.T, c *Client, opts ScanOptions) ScanPage[string] {
	t.Helper()
	p := "htopo:" + keyPrefix(t)
	var pairs []string
	for i := range 8 {
		pairs = append(pairs, p+strconv.Itoa(i), "v")
	}
	bcSeedReplicated(t, c, pairs...)
	var page ScanPage[string]
	for pg, err := range c.ScanPages(testCtx(t), opts) {
		if err != nil {
			t.Fatal(err)
		}
		page = pg
		break
	}
	if n, _ := c.topo.At(page.Server); n == nil || !n.Replica || page.Cursor == "0" {
		t.Fatalf("first page = %+v; want a continuation cursor from a replica", page)
	}
	return page
}

// TestSentinelBatchOfReadsRunsOnPrimary: a Sentinel batch runs on the
// primary whatever ReadFrom says, a batch of reads included (only a
// Cluster group of reads follows the read policy): its first SCAN page
// names the primary.
func TestSentinelBatchOfReadsRunsOnPrimary(t *testing.T) {
	c := sentinelClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	b := c.NewBatch()
	page := b.Scan(ScanPage[string]{}, ScanOptions{Count: 1})
	b.Get(keyPrefix(t) + "missing")
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute = %v", err)
	}
	primary := c.topo.Primaries()[0].Addr
	if p, err := page.Result(); err != nil || p.Server != primary {
		t.Errorf("first page = %+v, %v; want it served by the primary %s", p, err, primary)
	}
}

// TestSentinelUnitWithWritesRefusesReplicaScan: a Sentinel batch or
// transaction holding a SCAN page whose cursor a replica issued runs on
// that replica, which refuses writes (READONLY; EXECABORT for a
// transaction): a unit with a write fails before any I/O; one of reads
// only runs on the replica.
func TestSentinelUnitWithWritesRefusesReplicaScan(t *testing.T) {
	countsCommands(t)
	c := sentinelClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	opts := ScanOptions{Count: 1}
	page := replicaScanPage(t, c, opts)
	execs, sets := commandSeen(t, page.Server, "exec"), commandSeen(t, page.Server, "set")
	for _, b := range []*Batch{c.NewTransaction(), c.NewBatch()} {
		next := b.Scan(page, opts)
		set := b.Set(keyPrefix(t)+"w", "v")
		if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%s: Execute = %v, want ErrInvalidArgument before any I/O", b.unitName(), err)
		}
		if !errors.Is(next.Err(), ErrInvalidArgument) || !errors.Is(set.Err(), ErrInvalidArgument) {
			t.Errorf("%s: members = %v, %v; want the unit's ErrInvalidArgument", b.unitName(), next.Err(), set.Err())
		}
	}
	if n, m := commandSeen(t, page.Server, "exec")-execs, commandSeen(t, page.Server, "set")-sets; n != 0 || m != 0 {
		t.Errorf("the replica saw %d EXEC and %d SET, want 0", n, m)
	}
	reads := c.NewTransaction()
	next := reads.Scan(page, opts)
	reads.Get(keyPrefix(t) + "missing")
	if err := reads.Execute(ctx); err != nil {
		t.Fatalf("a transaction of reads: Execute = %v", err)
	}
	if np, err := next.Result(); err != nil || np.Server != page.Server {
		t.Errorf("continuation = %+v, %v; want a page from the replica %s", np, err, page.Server)
	}
}
