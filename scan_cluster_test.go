package respire

// SCAN-family iterators on a Cluster whose slots move during the
// iteration.

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// TestHScanContinuationIsNotRedirected: a continuation (a non-zero cursor)
// whose key's slot moved to another primary ends the iteration with the
// MOVED reply. Following the redirect would send the old server's cursor
// to a server whose hash table it does not describe, silently skipping or
// repeating fields; the new owner must never receive it.
func TestHScanContinuationIsNotRedirected(t *testing.T) {
	testenv.UseTopology(t, true)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k := keyPrefix(t) + "h"
	var pairs []any
	for i := range 600 { // over hash-max-listpack-entries: a hash table, paged
		pairs = append(pairs, "f"+strconv.Itoa(i), "v")
	}
	if _, err := c.Do(ctx, NewCommand("HSET"), append([]any{k}, pairs...)...); err != nil {
		t.Fatal(err)
	}
	slot := route.Slot(k)
	src, dst := ownerAndOther(t, c, slot)
	ids := clusterNodeIDs(t)
	moved := false
	t.Cleanup(func() {
		if moved {
			migrateSlot(t, slot, dst, src.Addr, ids)
		}
	})
	pages, before := 0, 0
	var iterErr error
	for page, err := range c.HScanPages(ctx, k, ScanOptions{Count: 10}) {
		if err != nil {
			iterErr = err
			break
		}
		if pages++; pages > 1 {
			t.Fatalf("page %d after the slot moved: %+v, want the iteration to end", pages, page)
		}
		if page.Cursor == "0" {
			t.Fatal("the first page ended the iteration: the hash is not paged")
		}
		migrateSlot(t, slot, src.Addr, dst, ids)
		moved = true
		before = commandCalls(t, dst, "hscan")
	}
	var se *ServerError
	if !errors.As(iterErr, &se) || se.Code != "MOVED" {
		t.Fatalf("continuation after the slot moved: %v, want the MOVED reply", iterErr)
	}
	if got := commandCalls(t, dst, "hscan") - before; got != 0 {
		t.Fatalf("the new owner ran HSCAN %d times with the old server's cursor, want 0", got)
	}
}

// TestClusterScanVisitsThePrimaryThatReplacedOne: a Cluster SCAN whose map
// changes after its first pages (here a failover: a primary not yet
// visited is replaced by its replica) visits the primaries of the current
// map, so it returns every key, instead of sending the first page to the
// primary the map no longer names, which ended the whole iteration with
// "the node left the topology".
func TestClusterScanVisitsThePrimaryThatReplacedOne(t *testing.T) {
	testenv.UseTopology(t, true)
	c, proxies := proxiedClusterNodes(t, Options{}, true)
	ctx := testCtx(t)
	prefix := keyPrefix(t)
	prims := c.topo.Primaries()
	var want []string
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
	seen := map[string]bool{}
	changed := false
	for page, err := range c.ScanPages(ctx, ScanOptions{Match: escapeGlob(prefix) + "*", Count: 10}) {
		if err != nil {
			t.Fatalf("SCAN after the map changed: %v, want every primary of the current map visited", err)
		}
		for _, k := range page.Items {
			seen[k] = true
		}
		if !changed {
			changed = true
			for _, px := range proxies {
				r := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Reply(raw)})
				defer r.Remove()
			}
			if err := c.topo.Refresh(ctx, true); err != nil {
				t.Fatal(err)
			}
			if got := addrs(c.topo.Primaries()); slices.Contains(got, last) {
				t.Fatalf("primaries after the refresh: %v, want %s replaced", got, last)
			}
		}
	}
	for _, k := range want {
		if !seen[k] {
			t.Fatalf("SCAN never returned %s", k)
		}
	}
}
