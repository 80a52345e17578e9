package respire

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// publishFrom publishes a read of key (its only dependency) that the
// Cluster node served, in slot; node "" is a read off a Cluster.
func publishFrom(cc *clientCache, key, node string, slot int) {
	publishCmd(cc, "GET", key, node, slot)
}

// publishCmd is publishFrom for a read named cmd.
func publishCmd(cc *clientCache, cmd, key, node string, slot int) {
	fl := &cacheFlight{key: cmd + " " + key, deps: []string{key}, gen: cc.gen, node: node, slot: slot,
		r: Reply{v: resp.Value{Type: resp.BulkString, Str: []byte(key)}}, cancel: func(error) {}}
	cc.mu.Lock()
	cc.publishLocked(fl, true)
	cc.mu.Unlock()
}

// checkCacheIndex fails the test unless the lists of slots and nodes hold
// exactly the Cluster entries, each on the lists of its own slot and node.
func checkCacheIndex(t *testing.T, cc *clientCache) {
	t.Helper()
	walk := func(heads map[int]*cacheEntry, nodes map[string]*cacheEntry) map[*cacheEntry]int {
		seen := map[*cacheEntry]int{}
		for s, h := range heads {
			var prev *cacheEntry
			for e := h; e != nil; prev, e = e, e.links[bySlot].next {
				if e.slot != s || e.links[bySlot].prev != prev || cc.entries[e.key] != e {
					t.Fatalf("slot %d lists %s (slot %d), or its links are broken, or it is not cached", s, e.key, e.slot)
				}
				seen[e]++
			}
		}
		for n, h := range nodes {
			var prev *cacheEntry
			for e := h; e != nil; prev, e = e, e.links[byNode].next {
				if e.node != n || e.links[byNode].prev != prev || cc.entries[e.key] != e {
					t.Fatalf("node %s lists %s (node %s), or its links are broken, or it is not cached", n, e.key, e.node)
				}
				seen[e] += 2
			}
		}
		return seen
	}
	for d, refs := range cc.byKey {
		for _, ek := range refs {
			if e := cc.entries[ek]; e == nil || !slices.Contains(e.deps, d) {
				t.Fatalf("key %s refers to %s, which is not cached or does not read it", d, ek)
			}
		}
	}
	seen := walk(cc.slotHeads, cc.nodeHeads)
	for ek, e := range cc.entries {
		want := 3 // on both lists
		if e.node == "" {
			want = 0
		}
		for _, d := range e.deps {
			if !slices.Contains(cc.byKey[d], ek) {
				t.Fatalf("entry %s is not among the entries of its key %s", ek, d)
			}
		}
		if seen[e] != want {
			t.Fatalf("entry %s (node %q) is on its lists %d (1: slot, 2: node, 3: both), want %d", ek, e.node, seen[e], want)
		}
	}
}

// TestCacheIndexBySlotAndNode: through random publications (several
// reads of one key, replacing entries, evicting at the bound),
// invalidations, moves of slots and losses of nodes, every Cluster entry
// is on the list of its slot and of its node and nothing else is; a move
// drops exactly the entries of the moved slots, a node's loss the entries
// that node served (whichever node owns their slot now) and of others
// only those that read one of their keys, and stops every read in flight
// from publishing.
func TestCacheIndexBySlotAndNode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	cc := newClientCache(&CacheOptions{MaxEntries: 40})
	nodes := []string{"a", "b", "c"}
	cached := func() map[string]*cacheEntry {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		m := map[string]*cacheEntry{}
		for ek, e := range cc.entries {
			m[ek] = e
		}
		return m
	}
	for i := range 5000 {
		before := cached()
		switch op := r.IntN(10); {
		case op < 5:
			n := r.IntN(60)
			publishCmd(cc, []string{"GET", "STRLEN", "GETRANGE"}[r.IntN(3)], "k"+strconv.Itoa(n), nodes[r.IntN(len(nodes))], n%8)
		case op < 7:
			k := "k" + strconv.Itoa(r.IntN(60))
			cc.onPush(resp.Value{Type: resp.Push, Elems: []resp.Value{
				{Type: resp.BulkString, Str: []byte("invalidate")},
				{Type: resp.Array, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte(k)}}}}})
			for ek, e := range before {
				if _, ok := cc.entries[ek]; ok == (e.deps[0] == k) {
					t.Fatalf("step %d: invalidating %s: entry %s reads it=%v cached=%v", i, k, ek, e.deps[0] == k, ok)
				}
			}
		case op < 9:
			moved := []int{r.IntN(8), r.IntN(8)}
			cc.dropSlots(moved)
			for ek, e := range before {
				gone := e.slot == moved[0] || e.slot == moved[1]
				if _, ok := cc.entries[ek]; ok == gone {
					t.Fatalf("step %d: moving slots %v: entry %s of slot %d cached=%v", i, moved, ek, e.slot, ok)
				}
			}
		default:
			n := nodes[r.IntN(len(nodes))]
			fl := &cacheFlight{key: "GET inflight", deps: []string{"inflight"}, gen: cc.gen, cancel: func(error) {}}
			cc.mu.Lock()
			cc.startLocked(fl)
			cc.mu.Unlock()
			_, onLost := cc.nodeHandlers(n)
			onLost()
			lostKeys := map[string]bool{}
			for _, e := range before {
				if e.node == n {
					lostKeys[e.deps[0]] = true
				}
			}
			for ek, e := range before {
				_, ok := cc.entries[ek]
				if e.node == n && ok || !lostKeys[e.deps[0]] && !ok {
					t.Fatalf("step %d: losing node %s: entry %s it served=%v cached=%v", i, n, ek, e.node == n, ok)
				}
			}
			cc.mu.Lock()
			cc.endLocked(fl)
			cc.publishLocked(fl, true)
			cc.mu.Unlock()
			if !fl.dirty || cc.entries[fl.key] != nil {
				t.Fatalf("step %d: a read in flight across node %s's loss was published", i, n)
			}
		}
		cc.mu.Lock()
		checkCacheIndex(t, cc)
		cc.mu.Unlock()
	}
}

// TestCacheNodeFlushDropsWhatItServed: a Cluster node's invalidation of
// everything (a FLUSHALL or FLUSHDB there, which empties that node only)
// drops the entries that node served and keeps the others; a key's
// invalidation from any node drops that key's entry; off a Cluster the
// same push drops everything.
func TestCacheNodeFlushDropsWhatItServed(t *testing.T) {
	cc := newClientCache(&CacheOptions{MaxEntries: 10})
	publishFrom(cc, "a1", "a", 1)
	publishFrom(cc, "a2", "a", 2)
	publishFrom(cc, "b1", "b", 1) // slot 1 moved from a to b in between
	publishFrom(cc, "b3", "b", 3)
	bulk := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	onPushA, _ := cc.nodeHandlers("a")
	onPushB, _ := cc.nodeHandlers("b")
	onPushB(resp.Value{Type: resp.Push, Elems: []resp.Value{bulk("invalidate"), {Type: resp.Array, Elems: []resp.Value{bulk("b3")}}}})
	onPushA(resp.Value{Type: resp.Push, Elems: []resp.Value{bulk("invalidate"), {Type: resp.Null}}})
	cc.mu.Lock()
	if len(cc.entries) != 1 || cc.entries["GET b1"] == nil {
		t.Fatalf("entries %v, want only GET b1 (node b's, not invalidated)", cc.entries)
	}
	checkCacheIndex(t, cc)
	cc.mu.Unlock()
	publishFrom(cc, "s", "", -1)
	cc.onPush(resp.Value{Type: resp.Push, Elems: []resp.Value{bulk("invalidate"), {Type: resp.Null}}})
	if n := cc.len(); n != 0 {
		t.Fatalf("%d entries after a standalone server's invalidation of everything, want 0", n)
	}
}

// BenchmarkCacheDropSlots: a slot's move with one entry in it, in caches
// of different sizes. The moved slot's entries are found by its list, so
// the time per move stays flat as the cache grows (it used to hash every
// cached key on each move: linear in the cache's size).
func BenchmarkCacheDropSlots(b *testing.B) {
	for _, size := range []int{1000, 100000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			cc := newClientCache(&CacheOptions{MaxEntries: size + 1})
			for i := range size {
				publishFrom(cc, "k"+strconv.Itoa(i), "a", 1+i%100)
			}
			moved := []int{0}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				publishFrom(cc, "moving", "a", 0)
				cc.dropSlots(moved)
			}
		})
	}
}

// TestCacheServerRefusingTrackingFailsConnect: a server without CLIENT
// TRACKING (the in-memory test server, a proxy, an ACL that denies it)
// fails Connect with its refusal, a *ServerError that names the
// command, rather than running uncached or caching untracked reads.
func TestCacheServerRefusingTrackingFailsConnect(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	c, err := Connect(testCtx(t), Options{Endpoints: []string{"mem.test:6379"}, Dialer: s.Dial, ClientCache: &CacheOptions{}})
	if err == nil {
		c.Close()
		t.Fatal("Connect succeeded against a server without CLIENT TRACKING")
	}
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "CLIENT TRACKING") {
		t.Fatalf("Connect = %v, want the server's refusal of CLIENT TRACKING as a *ServerError", err)
	}
}

// BenchmarkCacheInvalidateHotKey: one key read by many entries (pages of
// one sorted set: ZRANGE k 0 9, ZRANGE k 10 19...) is invalidated, every
// entry dropped. The time per entry stays flat as their number grows
// (each removal used to search the key's whole list of entries:
// quadratic, 10000 entries took tens of milliseconds under the cache's
// lock, on the connection's reader goroutine).
func BenchmarkCacheInvalidateHotKey(b *testing.B) {
	push := resp.Value{Type: resp.Push, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte("invalidate")},
		{Type: resp.Array, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte("hot")}}}}}
	for _, size := range []int{1000, 10000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			cc := newClientCache(&CacheOptions{MaxEntries: size})
			for range b.N {
				b.StopTimer()
				cc.mu.Lock()
				for i := range size {
					cc.publishLocked(&cacheFlight{key: "ZRANGE hot " + strconv.Itoa(i), deps: []string{"hot"}, gen: cc.gen, cancel: func(error) {}}, true)
				}
				cc.mu.Unlock()
				b.StartTimer()
				cc.onPush(push)
			}
			if n := cc.len(); n != 0 {
				b.Fatalf("%d entries left", n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/entry")
		})
	}
}
