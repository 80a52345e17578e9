package respire

// SCAN-family iterators on a Cluster whose slots move, or a Sentinel
// group whose primary changes, during the iteration.

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestHScanContinuationIsNotRedirected: a continuation (a non-zero cursor)
// whose key's slot moved to another primary ends the iteration with the
// MOVED reply. Following the redirect would send the old server's cursor
// to a server whose hash table it does not describe, silently skipping or
// repeating fields; the new owner must never receive it.
func TestHScanContinuationIsNotRedirected(t *testing.T) {
	c, ctx, k, m := pagedHashToMove(t)
	slot, src, dst, ids := m.slot, m.src, m.dst, m.ids
	moved := false
	t.Cleanup(func() {
		if moved {
			migrateSlot(t, slot, dst, src, ids)
		}
	})
	before := 0
	iterErr := afterFirstPage(t, c.HScanPages(ctx, k, ScanOptions{Count: 10}), func() {
		migrateSlot(t, slot, src, dst, ids)
		moved = true
		before = commandCalls(t, dst, "hscan")
	})
	var se *ServerError
	if !errors.As(iterErr, &se) || se.Code != "MOVED" {
		t.Fatalf("continuation after the slot moved: %v, want the MOVED reply", iterErr)
	}
	if got := commandCalls(t, dst, "hscan") - before; got != 0 {
		t.Fatalf("the new owner ran HSCAN %d times with the old server's cursor, want 0", got)
	}
}

// TestRawHScanContinuationIsNotRedirected: the rule of the iterators
// holds for an HSCAN continuation sent raw, with Do or in a batch: when
// the key's slot moved, the old owner's MOVED is the caller's reply, and
// the new owner, which would read the cursor as a position in a table it
// does not have, never receives it.
func TestRawHScanContinuationIsNotRedirected(t *testing.T) {
	c, ctx, k, m := pagedHashToMove(t)
	first, err := c.Do(ctx, NewCommand("HSCAN"), k, "0", "COUNT", "10")
	if err != nil {
		t.Fatal(err)
	}
	next, _, err := splitScan(first)
	if err != nil || next == "0" {
		t.Fatalf("first page: cursor %q, %v; want a continuation", next, err)
	}
	migrateSlot(t, m.slot, m.src, m.dst, m.ids)
	t.Cleanup(func() { migrateSlot(t, m.slot, m.dst, m.src, m.ids) })
	before := commandCalls(t, m.dst, "hscan")
	wantMoved := func(how string, err error) {
		t.Helper()
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "MOVED" {
			t.Errorf("%s continuation after the slot moved: %v, want the MOVED reply", how, err)
		}
	}
	// The batch first: a followed MOVED, or one that Do returns, teaches
	// the client the new owner, where any later continuation of the
	// slot's keys goes (only the iterators pin theirs to the server).
	b := c.NewBatch()
	page := b.Do(NewCommand("HSCAN"), k, next, "COUNT", "10")
	_ = b.Execute(ctx)
	wantMoved("batch", page.Err())
	_, err = c.Do(ctx, NewCommand("HSCAN"), k, next, "COUNT", "10")
	wantMoved("Do", err)
	if got := commandCalls(t, m.dst, "hscan") - before; got != 0 {
		t.Fatalf("the new owner ran HSCAN %d times with the old server's cursor, want 0", got)
	}
}

// TestHScanOfAKeyMovedByAMigrationPagesOnTheImportingNode: while a slot
// migrates, a key already moved to the importing node is reached by an
// ASK redirect; its continuations go to that node with ASKING as well,
// where the cursor is a position, so the iteration returns every field,
// instead of ending after the first page with the importing node's
// MOVED back to the old owner.
func TestHScanOfAKeyMovedByAMigrationPagesOnTheImportingNode(t *testing.T) {
	c, ctx, k, m := pagedHashToMove(t)
	slot, src, dst, ids := m.slot, m.src, m.dst, m.ids
	t.Cleanup(func() { // finish the migration, then give the slot back
		migrateSlot(t, slot, src, dst, ids)
		migrateSlot(t, slot, dst, src, ids)
	})
	m.begin(t)
	m.migrate(t, k)
	before := commandCalls(t, dst, "hscan")
	fields := map[string]bool{}
	pages := 0
	for page, err := range c.HScanPages(ctx, k, ScanOptions{Count: 10}) {
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		for _, f := range page.Items {
			fields[f.Field] = true
		}
	}
	if len(fields) != 600 { // pagedHashToMove's fields
		t.Fatalf("the iteration returned %d distinct fields in %d pages, want 600", len(fields), pages)
	}
	if pages < 2 {
		t.Fatalf("%d page(s): nothing was paged", pages)
	}
	if got := commandCalls(t, dst, "hscan") - before; got != pages {
		t.Fatalf("the importing node ran HSCAN %d times for %d pages", got, pages)
	}
}

// TestClusterScanVisitsThePrimaryThatReplacedOne: a Cluster SCAN whose map
// changes after its first pages (here a failover: a primary not yet
// visited is replaced by its replica) visits the primaries of the current
// map, so it returns every key, instead of sending the first page to the
// primary the map no longer names, which ended the whole iteration with
// "the node left the topology".
func TestClusterScanVisitsThePrimaryThatReplacedOne(t *testing.T) {
	c, want, prefix, failover := scanFailoverSetup(t, nil)
	seen := map[string]bool{}
	changed := false
	for page, err := range c.ScanPages(testCtx(t), ScanOptions{Match: escapeGlob(prefix) + "*", Count: 10}) {
		if err != nil {
			t.Fatalf("SCAN after the map changed: %v, want every primary of the current map visited", err)
		}
		for _, k := range page.Items {
			seen[k] = true
		}
		if !changed {
			changed = true
			failover()
		}
	}
	for _, k := range want {
		if !seen[k] {
			t.Fatalf("SCAN never returned %s", k)
		}
	}
}

// TestClusterScanFirstPageOfARetiredPrimaryGoesToItsSuccessor: a Cluster
// SCAN whose map changes after it took the next primary from the map and
// before that primary's first page is sent (here a failover: the primary
// is replaced by its replica and its node retired) goes on with the
// primaries of the new map, the successor among them: the first page
// holds no position on the retired node, and none of its pages was
// yielded. The iteration used to end with "the node left the topology".
func TestClusterScanFirstPageOfARetiredPrimaryGoesToItsSuccessor(t *testing.T) {
	h := &beforeHook{name: "SCAN"}
	c, want, prefix, failover := scanFailoverSetup(t, h)
	prims := c.topo.Primaries()
	ctx := testCtx(t)
	seen, done := map[string]bool{}, map[string]bool{}
	for page, err := range c.ScanPages(ctx, ScanOptions{Match: escapeGlob(prefix) + "*", Count: 10}) {
		if err != nil {
			t.Fatalf("SCAN whose next primary was retired before its first page: %v, want its successor visited", err)
		}
		for _, k := range page.Items {
			seen[k] = true
		}
		if page.Cursor == "0" {
			if done[page.Server] = true; len(done) == len(prims)-1 {
				// The next page is the last primary's first, pinned to
				// it when the hook runs: the failover retires it then.
				old := prims[len(prims)-1]
				if done[old.Addr] {
					t.Fatalf("%s visited before the other primaries: the test expects the map's order", old.Addr)
				}
				h.arm(func() {
					failover()
					eventually(t, 10*time.Second, "the old primary's node to be retired", func() bool {
						_, err := old.EP.Conn(ctx)
						return errors.Is(err, route.ErrRetired)
					})
				})
			}
		}
	}
	if h.armed() {
		t.Fatal("the iteration ended before the last primary's turn")
	}
	for _, k := range want {
		if !seen[k] {
			t.Fatalf("SCAN never returned %s", k)
		}
	}
}

// scanFailoverSetup holds the Cluster's topology for the test and returns
// a client through a proxy per node (with hook h, if any), 300 keys set
// under prefix, and failover: it makes the proxies' CLUSTER SHARDS name
// the last primary's replica in its place (the primary a replica) and
// refreshes the map.
func scanFailoverSetup(t *testing.T, h Hook) (c *Client, want []string, prefix string, failover func()) {
	t.Helper()
	testenv.UseTopology(t, true)
	var opts Options
	if h != nil {
		opts.Hooks = []Hook{h}
	}
	c, proxies := proxiedClusterNodes(t, opts, true)
	ctx := testCtx(t)
	prefix = keyPrefix(t)
	prims := c.topo.Primaries()
	for i := range 300 { // about 100 a primary: several pages each
		k := prefix + strconv.Itoa(i)
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		want = append(want, k)
	}
	shards, err := route.ParseShards(admin(t, prims[0].Addr, "CLUSTER", "SHARDS").Value(), "127.0.0.1", false)
	if err != nil {
		t.Fatal(err)
	}
	last := prims[len(prims)-1].Addr
	for i, sh := range shards {
		if sh.Primary == last && len(sh.Replicas) > 0 {
			shards[i].Primary, shards[i].Replicas = sh.Replicas[0], append([]string{sh.Primary}, sh.Replicas[1:]...)
		}
	}
	raw := encode(shardsReply(shards))
	return c, want, prefix, func() {
		for _, px := range proxies {
			t.Cleanup(px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Reply(raw)}).Remove)
		}
		if err := c.topo.Refresh(ctx, true); err != nil {
			t.Fatal(err)
		}
		if got := addrs(c.topo.Primaries()); slices.Contains(got, last) {
			t.Fatalf("primaries after the refresh: %v, want %s replaced", got, last)
		}
	}
}

// TestSentinelScanContinuationAfterFailoverFails: a Sentinel SCAN whose
// primary changes between two pages (rediscovery names another server)
// ends with an error that says the server left the topology, and the new
// primary never receives the old one's cursor.
func TestSentinelScanContinuationAfterFailoverFails(t *testing.T) {
	countsCommands(t)
	pxs, addrs := proxiedSentinels(t)
	c := sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	ctx := testCtx(t)
	prefix := keyPrefix(t)
	msetKeys(t, c, prefix, 100)
	other := testenv.SentinelReplica(t) // the server that is not the primary now
	if other == c.topo.Primaries()[0].Addr {
		other = testenv.SentinelPrimary(t)
	}
	// The new primary: that server behind a proxy that answers ROLE
	// master, as a promoted replica would (a discovery verifies the
	// address it installs), and that counts the SCANs it receives.
	promoted := realProxy(t, other)
	promoted.MustAddRule(t, respiretest.Rule{Command: "ROLE", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("master"), {Type: resp.Integer}, {Type: resp.Array}}}))})
	replica := promoted.Addr()
	before := 0
	iterErr := afterFirstPage(t, c.ScanPages(ctx, ScanOptions{Match: escapeGlob(prefix) + "*", Count: 10}), func() {
		old := c.topo.Primaries()[0]
		for _, px := range pxs {
			t.Cleanup(namePrimary(t, px, replica).Remove)
		}
		if err := c.topo.Refresh(ctx, true); err != nil {
			t.Fatal(err)
		}
		if got := c.topo.Primaries()[0].Addr; got != replica {
			t.Fatalf("primary after rediscovery = %s, want %s", got, replica)
		}
		// The old node is retired on a goroutine of its own (a refresh
		// never waits for a node's work in flight): until then the
		// continuation could still be written to it.
		eventually(t, 10*time.Second, "the old primary's node to be retired", func() bool {
			_, err := old.EP.Conn(ctx)
			return errors.Is(err, route.ErrRetired)
		})
		before = promoted.Forwarded("SCAN")
	})
	if iterErr == nil || MayHaveExecuted(iterErr) || !strings.Contains(iterErr.Error(), "left the topology") {
		t.Fatalf("continuation after the primary changed: %v, want an unsent failure naming the server's departure", iterErr)
	}
	if got := promoted.Forwarded("SCAN") - before; got != 0 {
		t.Fatalf("the new primary ran SCAN %d times with the old primary's cursor, want 0", got)
	}
}

// pagedHashToMove holds the Cluster's topology for the test, writes a
// hash of 600 fields (over hash-max-listpack-entries: a hash table, which
// HSCAN pages) and returns a Cluster client, the test's context, the key
// and a migration of its slot from its owner to another primary (not
// begun).
func pagedHashToMove(t *testing.T) (*Client, context.Context, string, slotMigration) {
	t.Helper()
	testenv.UseTopology(t, true)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k := keyPrefix(t) + "h"
	pairs := []any{k}
	for i := range 600 {
		pairs = append(pairs, "f"+strconv.Itoa(i), "v")
	}
	if _, err := c.Do(ctx, NewCommand("HSET"), pairs...); err != nil {
		t.Fatal(err)
	}
	src, dst := ownerAndOther(t, c, route.Slot(k))
	return c, ctx, k, slotMigration{slot: route.Slot(k), src: src.Addr, dst: dst, ids: clusterNodeIDs(t)}
}

// afterFirstPage ranges over pages, runs change after the first page
// (which must have a continuation), and returns the error that ends the
// iteration; a second page fails the test.
func afterFirstPage[T any](t *testing.T, pages iter.Seq2[ScanPage[T], error], change func()) error {
	t.Helper()
	n := 0
	for page, err := range pages {
		if err != nil {
			return err
		}
		if n++; n > 1 {
			t.Fatalf("page %d after the change: %+v, want the iteration to end", n, page)
		}
		if page.Cursor == "0" {
			t.Fatal("the first page ended the iteration: nothing is paged")
		}
		change()
	}
	return nil
}
