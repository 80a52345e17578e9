package respire

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// gapMap is a Cluster client whose slot map has gaps: every node is
// reached through a proxy whose CLUSTER SHARDS reply leaves slot 0 and
// the slot of key gap unserved, as after a primary failed under
// cluster-require-full-coverage no. The servers' own slot assignment is
// not changed: they still serve those slots.
type gapMap struct {
	c       *Client
	proxies map[string]*respiretest.Proxy
	// gap is in an unserved slot; onOwner in a served slot of the same
	// server; elsewhere on another primary. Each holds "before".
	gap, onOwner, elsewhere string
	owner                   map[string]string // key -> the server that really serves it
}

// gappedCluster builds a [gapMap], with the keys set before the gaps are
// installed and deleted (on the servers themselves) when the test ends.
func gappedCluster(t *testing.T, opts Options) *gapMap {
	t.Helper()
	c, proxies := proxiedClusterNodes(t, opts, true)
	ctx := testCtx(t)
	a, b := ownerAndOther(t, c, 0)
	g := &gapMap{c: c, proxies: proxies, owner: map[string]string{}}
	g.gap, _ = keyOn(t, c, a.Addr)
	g.elsewhere, _ = keyOn(t, c, b)
	for i := 0; g.onOwner == ""; i++ {
		k := keyPrefix(t) + "o" + strconv.Itoa(i)
		if n, _ := c.topo.Pick(route.Slot(k), false); n == a && route.Slot(k) != route.Slot(g.gap) && route.Slot(k) != 0 {
			g.onOwner = k
		}
	}
	holes := []int{0, route.Slot(g.gap)}
	if route.Slot(g.elsewhere) == 0 {
		t.Fatal("the key on another primary is in slot 0")
	}
	for _, k := range []string{g.gap, g.onOwner, g.elsewhere} {
		if err := c.Set(ctx, k, "before"); err != nil {
			t.Fatal(err)
		}
		n, _ := c.topo.Pick(route.Slot(k), false)
		g.owner[k] = n.Addr
		t.Cleanup(func() { admin(t, n.Addr, "DEL", k) })
	}
	shards, err := route.ParseShards(admin(t, a.Addr, "CLUSTER", "SHARDS").Value(), "127.0.0.1", false)
	if err != nil {
		t.Fatal(err)
	}
	raw := encode(shardsReply(withoutSlots(shards, holes...)))
	for _, px := range proxies {
		t.Cleanup(px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Reply(raw)}).Remove)
	}
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatalf("refresh with the gapped map: %v", err)
	}
	for _, s := range holes {
		if _, err := c.topo.Pick(s, false); !errors.Is(err, route.ErrNoRoute) {
			t.Fatalf("slot %d after the gapped map: %v, want no route", s, err)
		}
	}
	// Those picks asked for a refresh: wait for it, so that none is
	// pending when the test begins.
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	return g
}

// withoutSlots returns shards with holes taken out of their ranges.
func withoutSlots(shards []route.Shard, holes ...int) []route.Shard {
	out := make([]route.Shard, 0, len(shards))
	for _, sh := range shards {
		var ranges [][2]int
		for _, r := range sh.Ranges {
			start := r[0]
			for s := r[0]; s <= r[1]; s++ {
				if slices.Contains(holes, s) {
					if start < s {
						ranges = append(ranges, [2]int{start, s - 1})
					}
					start = s + 1
				}
			}
			if start <= r[1] {
				ranges = append(ranges, [2]int{start, r[1]})
			}
		}
		sh.Ranges = ranges
		out = append(out, sh)
	}
	return out
}

// forwarded returns how many frames of command the proxies forwarded in
// all.
func (g *gapMap) forwarded(command string) int {
	n := 0
	for _, px := range g.proxies {
		n += px.Forwarded(command)
	}
	return n
}

// value returns key's value on the server that really serves it,
// "(none)" when it does not exist.
func (g *gapMap) value(t *testing.T, key string) string {
	t.Helper()
	r := admin(t, g.owner[key], "GET", key)
	if r.Value().IsNull() {
		return "(none)"
	}
	s, _ := r.String()
	return s
}

// TestClusterUnservedSlotFailsWithNoRoute: a single-key command whose
// slot no node of the map serves fails with a *RouteError naming the
// slot and matching ErrNoRoute, sends nothing, and asks for a new map.
func TestClusterUnservedSlotFailsWithNoRoute(t *testing.T) {
	g := gappedCluster(t, Options{Cluster: &ClusterOptions{RefreshInterval: NoTimeout}})
	ctx := testCtx(t)
	asked := awaitAsked(t, g.proxies)
	before := g.forwarded("GET")
	_, err := g.c.Get(ctx, g.gap)
	var re *RouteError
	if !errors.As(err, &re) || !errors.Is(err, ErrNoRoute) || re.Slot != route.Slot(g.gap) || MayHaveExecuted(err) {
		t.Fatalf("GET of a key in an unserved slot = %v, want a *RouteError for slot %d matching ErrNoRoute, not executed", err, route.Slot(g.gap))
	}
	if got := g.forwarded("GET") - before; got != 0 {
		t.Errorf("%d GETs reached a server, want none", got)
	}
	if !asked(ctx) {
		t.Error("no node was asked for the slot map after the unserved slot")
	}
}

// TestClusterSplitOverUnservedSlot: a multi-key command split by slot
// whose keys hash to served slots and to an unserved one runs the served
// parts, once each, and fails the unserved part with ErrNoRoute without
// sending it: a *PartialError counting one failed part of three, which
// may have executed (the others ran).
func TestClusterSplitOverUnservedSlot(t *testing.T) {
	g := gappedCluster(t, Options{})
	ctx := testCtx(t)
	for _, tc := range []struct {
		command string
		call    func(keys ...string) error
		after   string // the value of the served keys afterwards
	}{
		{"MGET", func(keys ...string) error { _, _, err := g.c.MGet(ctx, keys...); return err }, "before"},
		{"EXISTS", func(keys ...string) error { _, err := g.c.Exists(ctx, keys...); return err }, "before"},
		{"TOUCH", func(keys ...string) error { _, err := g.c.Touch(ctx, keys...); return err }, "before"},
		{"MSET", func(keys ...string) error {
			var pairs []string
			for _, k := range keys {
				pairs = append(pairs, k, "after")
			}
			return g.c.MSet(ctx, pairs...)
		}, "after"},
		{"DEL", func(keys ...string) error { _, err := g.c.Del(ctx, keys...); return err }, "(none)"},
		{"UNLINK", func(keys ...string) error {
			for _, k := range []string{g.onOwner, g.elsewhere} {
				admin(t, g.owner[k], "SET", k, "before")
			}
			_, err := g.c.Unlink(ctx, keys...)
			return err
		}, "(none)"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			before := g.forwarded(tc.command)
			err := tc.call(g.onOwner, g.gap, g.elsewhere)
			var pe *PartialError
			if !errors.As(err, &pe) || pe.Parts != 3 || pe.Failed != 1 || !errors.Is(err, ErrNoRoute) || !MayHaveExecuted(err) {
				t.Fatalf("%s over an unserved slot = %v (%+v), want a *PartialError with 1 of 3 parts failed, matching ErrNoRoute, executed", tc.command, err, pe)
			}
			var re *RouteError
			if !errors.As(pe.Err, &re) || re.Slot != route.Slot(g.gap) {
				t.Errorf("failed part = %v, want a *RouteError for slot %d", pe.Err, route.Slot(g.gap))
			}
			if got := g.forwarded(tc.command) - before; got != 2 {
				t.Errorf("%d %s parts reached a server, want the 2 served ones, once each", got, tc.command)
			}
			for _, k := range []string{g.onOwner, g.elsewhere} {
				if v := g.value(t, k); v != tc.after {
					t.Errorf("served key %s = %q, want %q", k, v, tc.after)
				}
			}
			if v := g.value(t, g.gap); v != "before" {
				t.Errorf("unserved key = %q, want it untouched", v)
			}
		})
	}
}

// TestClusterKeylessCommandsOverUnservedSlots: with slot 0 unserved,
// keyless commands still go to a primary, and the commands for every
// primary reach each one of the map (all of which serve a slot), once.
func TestClusterKeylessCommandsOverUnservedSlots(t *testing.T) {
	g := gappedCluster(t, Options{})
	ctx := testCtx(t)
	if err := g.c.Ping(ctx); err != nil {
		t.Errorf("PING = %v", err)
	}
	if _, err := g.c.RandomKey(ctx); err != nil && !errors.Is(err, ErrNil) {
		t.Errorf("RANDOMKEY = %v", err)
	}
	before := g.forwarded("DBSIZE")
	if n, err := g.c.DBSize(ctx); err != nil || n < 3 {
		t.Errorf("DBSIZE = %d, %v; want the sum over every primary", n, err)
	}
	if got, want := g.forwarded("DBSIZE")-before, len(g.c.topo.Primaries()); got != want {
		t.Errorf("DBSIZE reached %d primaries, want %d", got, want)
	}
	var found []string
	for k, err := range g.c.Scan(ctx, ScanOptions{Match: escapeGlob(keyPrefix(t)) + "*"}) {
		if err != nil {
			t.Fatalf("SCAN: %v", err)
		}
		found = append(found, k)
	}
	slices.Sort(found)
	want := []string{g.gap, g.onOwner, g.elsewhere}
	slices.Sort(want)
	if !slices.Equal(found, want) {
		t.Errorf("SCAN found %v, want %v (every primary's keys)", found, want)
	}
}

// TestClusterBatchOverUnservedSlot: a batch whose members' keys hash to
// served slots and to an unserved one runs the served members' groups,
// and fails the unserved slot's members with ErrNoRoute without sending
// them, as a group whose node is unreachable would fail alone;
// Execute returns that failure.
func TestClusterBatchOverUnservedSlot(t *testing.T) {
	g := gappedCluster(t, Options{})
	ctx := testCtx(t)
	before := g.forwarded("GET") + g.forwarded("SET")
	b := g.c.NewBatch()
	onOwner := b.Get(g.onOwner)
	gapSet := b.Set(g.gap, "after")
	gapGet := b.Get(g.gap)
	elsewhere := b.Get(g.elsewhere)
	set := b.Set(g.elsewhere, "after")
	ping := b.Ping()
	err := b.Execute(ctx)
	if !errors.Is(err, ErrNoRoute) {
		t.Errorf("Execute = %v, want the unserved members' ErrNoRoute", err)
	}
	for name, f := range map[string]Future[string]{"GET onOwner": onOwner, "GET elsewhere": elsewhere} {
		if v, err := f.Result(); err != nil || v != "before" {
			t.Errorf("%s = %q, %v; want the served member's value", name, v, err)
		}
	}
	if err := set.Err(); err != nil {
		t.Errorf("SET elsewhere = %v", err)
	}
	if err := ping.Err(); err != nil {
		t.Errorf("keyless PING = %v, want it run with a served group", err)
	}
	for name, err := range map[string]error{"SET gap": gapSet.Err(), "GET gap": gapGet.Err()} {
		var re *RouteError
		if !errors.As(err, &re) || !errors.Is(err, ErrNoRoute) || re.Slot != route.Slot(g.gap) || MayHaveExecuted(err) {
			t.Errorf("%s = %v, want a *RouteError for slot %d matching ErrNoRoute, not executed", name, err, route.Slot(g.gap))
		}
	}
	if got := g.forwarded("GET") + g.forwarded("SET") - before; got != 3 {
		t.Errorf("%d GETs and SETs reached a server, want the 3 served ones", got)
	}
	if v := g.value(t, g.gap); v != "before" {
		t.Errorf("unserved key = %q, want it untouched", v)
	}
}

// TestClusterTransactionOnUnservedSlot: a transaction whose keys hash to
// an unserved slot fails every member with ErrNoRoute, sending nothing.
func TestClusterTransactionOnUnservedSlot(t *testing.T) {
	g := gappedCluster(t, Options{})
	ctx := testCtx(t)
	before := g.forwarded("MULTI")
	tx := g.c.NewTransaction()
	set := tx.Set(g.gap, "after")
	err := tx.Execute(ctx)
	if !errors.Is(err, ErrNoRoute) || !errors.Is(set.Err(), ErrNoRoute) || MayHaveExecuted(err) {
		t.Errorf("transaction on an unserved slot = %v (member: %v), want ErrNoRoute, not executed", err, set.Err())
	}
	if got := g.forwarded("MULTI") - before; got != 0 {
		t.Errorf("%d MULTIs reached a server, want none", got)
	}
	if v := g.value(t, g.gap); v != "before" {
		t.Errorf("unserved key = %q, want it untouched", v)
	}
}

// TestClusterOtherPathsOnUnservedSlot: the paths that pick a key's node
// themselves (a script's call, a dedicated connection, a watched
// transaction, a cached read) fail on an unserved slot with ErrNoRoute,
// unsent, and call no callback.
func TestClusterOtherPathsOnUnservedSlot(t *testing.T) {
	g := gappedCluster(t, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 3}, ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	noRoute := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoRoute) || MayHaveExecuted(err) {
			t.Errorf("%s on an unserved slot = %v (may have executed: %v), want ErrNoRoute, not executed", what, err, MayHaveExecuted(err))
		}
	}
	before := g.forwarded("EVALSHA_RO") + g.forwarded("EVAL_RO") + g.forwarded("GET") + g.forwarded("WATCH")
	_, err := NewScript("return redis.call('GET', KEYS[1])", ScriptOptions{ReadOnly: true}).WithRetryCategory(ReadOnly).Run(ctx, g.c, []string{g.gap})
	noRoute("a script", err)
	err = g.c.Dedicated(ctx, func(conn *Conn) error {
		_, err := conn.Do(ctx, catalog.String.GET(), g.gap)
		return err
	})
	noRoute("a dedicated connection's GET", err)
	_, err = g.c.GetCached(ctx, g.gap)
	noRoute("a cached read", err)
	called := false
	err = g.c.Watch(ctx, func(tx *Tx) error { called = true; return nil }, g.gap)
	noRoute("Watch", err)
	if called {
		t.Error("Watch called its callback for keys no node serves")
	}
	if got := g.forwarded("EVALSHA_RO") + g.forwarded("EVAL_RO") + g.forwarded("GET") + g.forwarded("WATCH") - before; got != 0 {
		t.Errorf("%d commands reached a server, want none", got)
	}
}
