package respire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// TestClusterCachedReadRedirects: a cached read that a node redirects is
// one operation. After MOVED the whole frame, CLIENT CACHING YES and the
// read, goes to the node of the redirect, and the reply is cached. After
// ASK the prelude gives way to ASKING (the server clears the one's flag
// on the other), so the reply the asked node serves is returned but not
// cached (its proxy answers the read and its PTTL, as a node importing
// the slot would). An asked node that does not serve the slot answers
// MOVED back to the owner, and the frame goes there whole again: that
// reply is tracked and cached (it used to be returned uncached, the
// ASK's mark kept). None uses retry budget.
func TestClusterCachedReadRedirects(t *testing.T) {
	cases := []struct {
		name     string
		redirect func(slot int, addr string) string
		served   bool // the asked node's proxy answers the read
		// how many times the owner and the redirect's node get CLIENT
		// CACHING, and the redirect's node ASKING
		clientA, clientB, asking int
		cached                   bool
	}{
		{"Moved", respiretest.Moved, false, 2, 1, 0, true}, // b sends it back: MOVED
		{"Ask", respiretest.Ask, true, 1, 0, 1, false},
		{"AskThenMoved", respiretest.Ask, false, 2, 0, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, reader := withRetryMetrics(t, Options{RetryPolicy: redirectPolicy, ClientCache: &CacheOptions{}})
			c, proxies := frozenMapCluster(t, opts)
			ctx := testCtx(t)
			primaries := c.topo.Primaries()
			a, b := primaries[0].Addr, primaries[1].Addr
			k := bcTagOn(t, c, a) + "k"
			must(t, c.Set(ctx, k, "v"))
			// Open b's shared connection now: its handshake's CLIENT
			// TRACKING is not what the counts below are about.
			if _, err := c.Exists(ctx, bcTagOn(t, c, b)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
			pxA, pxB := proxies[a], proxies[b]
			rule := pxA.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1,
				Action: respiretest.Inject(tc.redirect(route.Slot(k), b))})
			defer rule.Remove()
			if tc.served {
				for cmd, reply := range map[string]string{"GET": "$1\r\nv\r\n", "PTTL": ":-1\r\n"} {
					h := pxB.MustAddRule(t, respiretest.Rule{Command: cmd, Times: 1, Action: respiretest.Reply([]byte(reply))})
					defer h.Remove()
				}
			}
			clientA, clientB, askingB := pxA.Forwarded("CLIENT"), pxB.Forwarded("CLIENT"), pxB.Forwarded("ASKING")

			mustGetCached(t, c, k, "v")
			if n := rule.Applied(); n != 1 {
				t.Fatalf("the redirect applied %d times, want 1", n)
			}
			if n := pxB.Forwarded("CLIENT") - clientB; n != tc.clientB {
				t.Errorf("the redirect's node got CLIENT CACHING %d times, want %d", n, tc.clientB)
			}
			if n := pxB.Forwarded("ASKING") - askingB; n != tc.asking {
				t.Errorf("the redirect's node got ASKING %d times, want %d", n, tc.asking)
			}
			if n := pxA.Forwarded("CLIENT") - clientA; n != tc.clientA {
				t.Errorf("the owner got CLIENT CACHING %d times, want %d (every send of the whole frame)", n, tc.clientA)
			}
			gets := pxA.Forwarded("GET")
			mustGetCached(t, c, k, "v")
			want := 0
			if !tc.cached {
				want = 1
			}
			if n := pxA.Forwarded("GET") - gets; n != want {
				t.Errorf("the second read sent %d GETs, want %d (cached: %v)", n, want, tc.cached)
			}
			noRetries(t, reader)
		})
	}
}

// TestTopologyCachedReadIsInvalidated: on every topology a cached read
// is served locally until another client's write to its key reaches the
// server, which then invalidates it on the tracking connection (the
// client's own writes drop their keys locally, so the write comes from a
// separate client, straight to the key's primary).
func TestTopologyCachedReadIsInvalidated(t *testing.T) {
	topologies(t, Options{ClientCache: &CacheOptions{}}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := key(t, "k")
		must(t, c.Set(ctx, k, "v1"))
		mustGetCached(t, c, k, "v1")
		mustGetCached(t, c, k, "v1")
		if n := c.cache.len(); n != 1 {
			t.Fatalf("%d entries, want 1", n)
		}
		addr := standaloneAddr(t)
		if c.topo != nil {
			n, err := c.topo.Pick(route.Slot(k), false)
			if err != nil {
				t.Fatal(err)
			}
			addr = n.Addr
		}
		admin(t, addr, "SET", k, "v2")
		waitCache(t, c, "the server's invalidation", func(cc *clientCache) bool { return len(cc.entries) == 0 })
		mustGetCached(t, c, k, "v2")
		if _, err := c.Del(ctx, k); err != nil {
			t.Fatal(err)
		}
	})
}

// TestClusterDoCachedCrossSlotIsRefused: a cached multi-key read on a
// Cluster must keep its keys in one slot; otherwise it fails with
// ErrCrossSlot before any I/O and caches nothing.
func TestClusterDoCachedCrossSlotIsRefused(t *testing.T) {
	c := clusterClient(t, Options{ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	a, b := key(t, "{a}x"), key(t, "{b}x")
	if route.Slot(a) == route.Slot(b) {
		t.Fatal("the two keys share a slot")
	}
	if _, err := c.DoCached(ctx, NewCommand("MGET"), a, b); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("cross-slot MGET through the cache = %v, want ErrCrossSlot", err)
	}
	if n := c.cache.len(); n != 0 || len(c.cache.flights) != 0 {
		t.Fatalf("%d entries and %d reads after a refused read", n, len(c.cache.flights))
	}
}

// TestClusterCachedMissingKeyIsDroppedWhenItsSlotMoves: a key read as
// missing is tracked only by the node that answered. After a real slot
// migration, another client's write to it reaches the new owner, which
// never tracked it, so no invalidation comes; the client drops the
// slot's entries when it learns of the move (here: a refresh), and the
// next cached read sees the write.
func TestClusterCachedMissingKeyIsDroppedWhenItsSlotMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("a real slot migration")
	}
	testenv.UseTopology(t, true)
	ids := clusterNodeIDs(t)
	c := clusterClient(t, Options{ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	k := key(t, "{cachemig}k")
	slot := route.Slot(k)
	src, dst := ownerAndOther(t, c, slot)
	if _, err := c.Del(ctx, k); err != nil { // left by an earlier run (-count)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		migrateSlot(t, slot, dst, src.Addr, ids)
		_, _ = c.Del(context.Background(), k)
	})
	for range 2 {
		if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrNil) {
			t.Fatalf("GetCached of a missing key = %v, want ErrNil", err)
		}
	}
	if n := c.cache.len(); n != 1 {
		t.Fatalf("%d entries, want the missing key's 1", n)
	}

	migrateSlot(t, slot, src.Addr, dst, ids)
	admin(t, dst, "SET", k, "v")
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	if n, err := c.topo.Pick(slot, false); err != nil || n.Addr != dst {
		t.Fatalf("after the refresh the slot routes to %v, %v; want %s", n, err, dst)
	}
	mustGetCached(t, c, k, "v")
}

// TestClusterMovedDropsTheSlotsCachedReads: a MOVED reply that moves a
// slot to another primary drops the cached entries of that slot's keys
// (and only those), and a cached read of the slot in flight when it
// moves returns its reply but does not publish it.
func TestClusterMovedDropsTheSlotsCachedReads(t *testing.T) {
	// movedKeys returns a key of a slot that a owns, to move to b, and a
	// key of another slot.
	setup := func(t *testing.T, c *Client) (moving, staying, b string) {
		ctx := testCtx(t)
		primaries := c.topo.Primaries()
		moving, staying = bcTagOn(t, c, primaries[0].Addr)+"k", key(t, "{cachestay}k")
		if route.Slot(moving) == route.Slot(staying) {
			t.Fatal("the two keys share a slot")
		}
		must(t, c.Set(ctx, moving, "m"))
		must(t, c.Set(ctx, staying, "s"))
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), moving, staying) })
		return moving, staying, primaries[1].Addr
	}
	t.Run("Cached", func(t *testing.T) {
		c, _ := frozenMapCluster(t, Options{ClientCache: &CacheOptions{}})
		moving, staying, b := setup(t, c)
		mustGetCached(t, c, moving, "m")
		mustGetCached(t, c, staying, "s")
		if n := c.cache.len(); n != 2 {
			t.Fatalf("%d entries, want 2", n)
		}
		if _, err := c.topo.Moved(route.Slot(moving), b); err != nil {
			t.Fatal(err)
		}
		if n := c.cache.len(); n != 1 {
			t.Fatalf("%d entries after the slot moved, want 1", n)
		}
		if _, ok := c.cache.hit(appendCommand(nil, specGET.desc, []string{staying})); !ok {
			t.Fatal("the entry of a slot that did not move was dropped")
		}
	})
	t.Run("InFlight", func(t *testing.T) {
		h := newHoldHook(false, true)
		c, _ := frozenMapCluster(t, Options{ClientCache: &CacheOptions{}, Hooks: []Hook{h}})
		moving, _, b := setup(t, c)
		got := make(chan error, 1)
		go func() {
			v, err := c.GetCached(testCtx(t), moving)
			if err == nil && v != "m" {
				err = fmt.Errorf("GetCached = %q, want %q", v, "m")
			}
			got <- err
		}()
		<-h.entered // the reply is in, not yet published
		if _, err := c.topo.Moved(route.Slot(moving), b); err != nil {
			t.Fatal(err)
		}
		close(h.release)
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if n := c.cache.len(); n != 0 {
			t.Fatalf("%d entries after a read whose slot moved while it was in flight, want 0", n)
		}
	})
}

// TestCacheKeptWhenAReplicaConnectionEnds: cached reads go to primaries
// only, so a replica's connection carries no tracking and its end drops
// nothing. It used to run CLIENT TRACKING like a primary's, and its end
// (a replica restarted, or left the topology) dropped every entry.
func TestCacheKeptWhenAReplicaConnectionEnds(t *testing.T) {
	replicaTopologies(t, Options{ClientCache: &CacheOptions{}, ReadFrom: ReadReplica}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := key(t, "k")
		must(t, c.Set(ctx, k, "v"))
		mustGetCached(t, c, k, "v")
		if _, err := c.Get(ctx, k); err != nil { // a read on the replica: its connection is up
			t.Fatal(err)
		}
		replica, err := c.topo.Pick(route.Slot(k), true)
		if err != nil || !replica.Replica {
			t.Fatalf("the replica of %s: %v, %v", k, replica, err)
		}
		killSharedConn(t, ctx, replica)
		if n := c.cache.len(); n != 1 {
			t.Fatalf("%d entries after a replica's connection ended, want 1", n)
		}
		if _, ok := c.cache.hit(appendCommand(nil, specGET.desc, []string{k})); !ok {
			t.Fatal("the entry read from the primary is no longer served")
		}
	})
}

// TestClusterNodeLossDropsOnlyItsEntries: when one node's tracking
// connection ends, the invalidations lost with it concern the keys that
// node served only: their entries are dropped, and a write made while the
// client reconnected is read from the server, while an entry another
// node served is still a hit (no GET reaches that node). The whole cache
// used to be dropped.
func TestClusterNodeLossDropsOnlyItsEntries(t *testing.T) {
	c, proxies := frozenMapCluster(t, Options{ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0], primaries[1]
	lost, kept := bcTagOn(t, c, a.Addr)+"k", bcTagOn(t, c, b.Addr)+"k"
	must(t, c.Set(ctx, lost, "before"))
	must(t, c.Set(ctx, kept, "kept"))
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), lost, kept) })
	mustGetCached(t, c, lost, "before")
	mustGetCached(t, c, kept, "kept")
	if n := c.cache.len(); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	killSharedConn(t, ctx, a)
	admin(t, a.Addr, "SET", lost, "after") // no tracking connection saw it
	getsA, getsB := proxies[a.Addr].Forwarded("GET"), proxies[b.Addr].Forwarded("GET")
	mustGetCached(t, c, lost, "after")
	mustGetCached(t, c, kept, "kept")
	if n := proxies[a.Addr].Forwarded("GET") - getsA; n != 1 {
		t.Errorf("the lost node's key was read %d times from the server, want 1", n)
	}
	if n := proxies[b.Addr].Forwarded("GET") - getsB; n != 0 {
		t.Errorf("the other node's key was read %d times from the server, want 0 (a hit)", n)
	}
}

// TestClusterNodeLossDuringACachedRead: a node's tracking connection
// that ends while a cached read's reply is in but not yet published
// keeps that reply out of the cache (the invalidation of a write right
// after the read may have been lost with it): the caller gets what it
// read, and the next read goes to the server. The node's new connection
// tracks again: a later write by another client invalidates the entry
// it fills.
func TestClusterNodeLossDuringACachedRead(t *testing.T) {
	h := newHoldHook(false, true)
	c, proxies := frozenMapCluster(t, Options{ClientCache: &CacheOptions{}, Hooks: []Hook{h}})
	ctx := testCtx(t)
	a := c.topo.Primaries()[0]
	k := bcTagOn(t, c, a.Addr) + "k"
	must(t, c.Set(ctx, k, "before"))
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
	got := make(chan string, 1)
	go func() {
		v, _ := c.GetCached(ctx, k)
		got <- v
	}()
	<-h.entered // the reply is in, not yet published
	killSharedConn(t, ctx, a)
	admin(t, a.Addr, "SET", k, "after")
	close(h.release)
	if v := <-got; v != "before" {
		t.Fatalf("the read in flight returned %q, want what it read (before)", v)
	}
	if n := c.cache.len(); n != 0 {
		t.Fatalf("%d entries, want none: the read's tracking was lost before it was published", n)
	}
	gets := proxies[a.Addr].Forwarded("GET")
	mustGetCached(t, c, k, "after")
	mustGetCached(t, c, k, "after")
	if n := proxies[a.Addr].Forwarded("GET") - gets; n != 1 {
		t.Fatalf("%d GETs reached the node, want 1 (then a hit)", n)
	}
	admin(t, a.Addr, "SET", k, "again")
	waitCache(t, c, "the new connection's invalidation", func(cc *clientCache) bool { return len(cc.entries) == 0 })
	mustGetCached(t, c, k, "again")
}

// killSharedConn kills node n's shared connection on the server and
// returns once the client has handled its end.
func killSharedConn(t *testing.T, ctx context.Context, n *route.Node) {
	t.Helper()
	conn := n.EP.Current()
	if conn == nil {
		t.Fatalf("no connection to %s", n.Addr)
	}
	killClient(t, n.Addr, strconv.FormatInt(conn.ID(), 10))
	select {
	case <-conn.Dead(): // its end has been handled
	case <-ctx.Done():
		t.Fatalf("the connection to %s did not end", n.Addr)
	}
}
