package respire

// Client-side caching against the real server, through a fault proxy
// whose counters say how many reads reached the server: CLIENT TRACKING
// ON OPTIN on the shared connection, CLIENT CACHING YES ahead of each
// cached read, and the server's invalidation pushes.

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// cachedClient is a client with a client-side cache, through a proxy in
// front of the standalone server.
func cachedClient(t *testing.T, opts Options) (*Client, *respiretest.Proxy) {
	t.Helper()
	if opts.ClientCache == nil {
		opts.ClientCache = &CacheOptions{}
	}
	return proxiedStandalone(t, opts)
}

// waitCache spins until cond holds on c's cache (under its lock), or
// fails the test after 10 seconds. cond observes the state the test waits
// for; nothing here sleeps.
func waitCache(t *testing.T, c *Client, what string, cond func(cc *clientCache) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.cache.mu.Lock()
		ok := cond(c.cache)
		c.cache.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// len returns the number of entries.
func (cc *clientCache) len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.entries)
}

// waiters counts the callers waiting on reads in flight.
func waiters(cc *clientCache) int {
	n := 0
	for _, fl := range cc.flights {
		n += fl.waiters
	}
	return n
}

// mustHoldNoReads fails the test unless c's cache holds no read in
// flight, nor any reference to one from the keys it reads.
func mustHoldNoReads(t *testing.T, c *Client) {
	t.Helper()
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	if n, m := len(c.cache.flights), len(c.cache.reading); n != 0 || m != 0 {
		t.Fatalf("%d reads in flight and %d keys referring to them, want none once every read ended", n, m)
	}
}

func mustGetCached(t *testing.T, c *Client, k, want string) {
	t.Helper()
	got, err := c.GetCached(testCtx(t), k)
	if err != nil || got != want {
		t.Fatalf("GetCached(%s) = %q, %v; want %q", k, got, err, want)
	}
}

// TestCachedReadIsServedLocallyUntilInvalidated: a cached GET reaches the
// server once, behind CLIENT CACHING YES, and is then served without I/O;
// a write by another client, or by this one, invalidates it, and the
// next read sees the new value. The receipt that an invalidation has
// arrived is a PING on the tracked connection: the server queued the push
// before the PONG.
func TestCachedReadIsServedLocallyUntilInvalidated(t *testing.T) {
	c, px := cachedClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	other := newAdmin(t, standaloneAddr(t))
	defer other.Close()
	must(t, c.Set(ctx, k, "v1"))
	gets, caching := px.Forwarded("GET"), px.Forwarded("CLIENT")
	for range 3 {
		mustGetCached(t, c, k, "v1")
	}
	if n := px.Forwarded("GET") - gets; n != 1 {
		t.Fatalf("3 cached reads sent %d GETs, want 1", n)
	}
	if n := px.Forwarded("CLIENT") - caching; n != 1 {
		t.Fatalf("CLIENT CACHING sent %d times, want 1", n)
	}

	must(t, other.Set(ctx, k, "v2"))
	must(t, c.Ping(ctx))
	mustGetCached(t, c, k, "v2")
	mustGetCached(t, c, k, "v2")
	if n := px.Forwarded("GET") - gets; n != 2 {
		t.Fatalf("after another client's write: %d GETs in all, want 2", n)
	}

	// Its own writes: Redis sends their invalidations after their
	// replies, so the client drops the entries itself before the write
	// returns, whatever path the write took.
	must(t, c.Set(ctx, k, "v3"))
	mustGetCached(t, c, k, "v3")
	batch := c.NewBatch()
	batch.Set(k, "v4")
	must(t, batch.Execute(ctx))
	mustGetCached(t, c, k, "v4")
	tx := c.NewTransaction()
	tx.Set(k, "v5")
	must(t, tx.Execute(ctx))
	mustGetCached(t, c, k, "v5")
	must(t, c.Dedicated(ctx, func(conn *Conn) error {
		_, err := conn.Do(ctx, NewCommand("SET"), k, "v6")
		return err
	}))
	mustGetCached(t, c, k, "v6")
	if _, err := c.Do(ctx, NewCommand("APPEND"), k, "+"); err != nil {
		t.Fatal(err)
	}
	mustGetCached(t, c, k, "v6+")
	// A SET queued in MULTI on a dedicated connection writes at EXEC; a
	// read between them caches the old value, which EXEC drops.
	must(t, c.Dedicated(ctx, func(conn *Conn) error {
		for _, cmd := range [][]any{{"MULTI"}, {"SET", k, "v7"}} {
			if _, err := conn.Do(ctx, NewCommand(cmd[0].(string)), cmd[1:]...); err != nil {
				return err
			}
		}
		mustGetCached(t, c, k, "v6+")
		_, err := conn.Do(ctx, NewCommand("EXEC"))
		return err
	}))
	mustGetCached(t, c, k, "v7")

	if _, err := other.Del(ctx, k); err != nil {
		t.Fatal(err)
	}
	must(t, c.Ping(ctx))
	if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrNil) {
		t.Fatalf("GetCached after DEL = %v, want ErrNil", err)
	}
	if n := px.Forwarded("GET") - gets; n != 10 {
		t.Fatalf("%d GETs in all, want 10", n)
	}

	// DoCached with a multi-key read depends on every key.
	a, b := key(t, "a"), key(t, "b")
	must(t, c.Set(ctx, a, "1"))
	must(t, c.Set(ctx, b, "2"))
	mgets := px.Forwarded("MGET")
	for range 2 {
		r, err := c.DoCached(ctx, NewCommand("MGET"), a, b)
		if got, _ := r.Strings(); err != nil || len(got) != 2 || got[1] != "2" {
			t.Fatalf("MGET = %v, %v", got, err)
		}
	}
	must(t, other.Set(ctx, b, "3"))
	must(t, c.Ping(ctx))
	r, err := c.DoCached(ctx, NewCommand("MGET"), a, b)
	if got, _ := r.Strings(); err != nil || len(got) != 2 || got[1] != "3" {
		t.Fatalf("MGET after a write to its second key = %v, %v; want [1 3]", got, err)
	}
	if n := px.Forwarded("MGET") - mgets; n != 2 {
		t.Fatalf("%d MGETs reached the server, want 2", n)
	}

	// LCS reads two keys, and the server tracks both: a write to the
	// second ends the entry. (New keys: a write to a and b, which the
	// MGET entries tracked, would be invalidated under the first LCS read.)
	a, b = key(t, "la"), key(t, "lb")
	must(t, c.Set(ctx, a, "ohmytext"))
	must(t, c.Set(ctx, b, "mynewtext"))
	lcss := px.Forwarded("LCS")
	for range 2 {
		r, err := c.DoCached(ctx, NewCommand("LCS"), a, b)
		if got, _ := r.String(); err != nil || got != "mytext" {
			t.Fatalf("LCS = %q, %v; want mytext", got, err)
		}
	}
	must(t, other.Set(ctx, b, "ohtext"))
	must(t, c.Ping(ctx))
	r, err = c.DoCached(ctx, NewCommand("LCS"), a, b)
	if got, _ := r.String(); err != nil || got != "ohtext" {
		t.Fatalf("LCS after a write to its second key = %q, %v; want ohtext", got, err)
	}
	if n := px.Forwarded("LCS") - lcss; n != 2 {
		t.Fatalf("%d LCS reached the server, want 2", n)
	}
}

// holdHook holds every GET the client runs (the cache's read, which runs
// through the process hooks once for all its waiters) before it is sent
// (before) or after its reply has arrived and before it is published
// (after), until release is closed; entered receives one value per call.
type holdHook struct {
	before, after bool
	entered       chan context.Context
	release       chan struct{}
}

func newHoldHook(before, after bool) *holdHook {
	return &holdHook{before: before, after: after, entered: make(chan context.Context, 8), release: make(chan struct{})}
}

func (h *holdHook) DialHook(next DialHook) DialHook { return next }
func (h *holdHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return next
}
func (h *holdHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if cmd.Name != "GET" {
			return next(ctx, cmd)
		}
		if h.before {
			h.entered <- ctx
			select {
			case <-h.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := next(ctx, cmd)
		if h.after {
			h.entered <- ctx
			<-h.release
		}
		return err
	}
}

// TestCachedReadInvalidatedInFlightIsNotPublished: an invalidation that
// arrives after the read's reply but before its publication (the reader
// goroutine applies the push while the read's goroutine is still on its
// way to the cache) keeps the stale reply out of the cache: the caller
// gets the reply it read, and the next read goes to the server.
func TestCachedReadInvalidatedInFlightIsNotPublished(t *testing.T) {
	h := newHoldHook(false, true)
	c, px := cachedClient(t, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	k := key(t, "k")
	other := newAdmin(t, standaloneAddr(t))
	defer other.Close()
	must(t, c.Set(ctx, k, "old"))
	gets := px.Forwarded("GET")
	got := make(chan string, 1)
	go func() {
		v, _ := c.GetCached(ctx, k)
		got <- v
	}()
	<-h.entered // the reply has arrived, the entry is not published yet
	must(t, other.Set(ctx, k, "new"))
	must(t, c.Ping(ctx)) // the invalidation has been applied
	close(h.release)
	if v := <-got; v != "old" {
		t.Fatalf("the in-flight read returned %q, want the value it read (old)", v)
	}
	if n := c.cache.len(); n != 0 {
		t.Fatalf("%d entries cached, want none: the read was invalidated in flight", n)
	}
	mustGetCached(t, c, k, "new")
	if n := px.Forwarded("GET") - gets; n != 2 {
		t.Fatalf("%d GETs, want 2", n)
	}
}

// TestCachedReadInvalidatedBeforeItsReplyIsNotPublished: the proxy holds
// the read's reply while the server's invalidation of its key reaches
// the client first (pushes pass at once): the flight is dirty, and the
// reply is returned but not cached.
func TestCachedReadInvalidatedBeforeItsReplyIsNotPublished(t *testing.T) {
	countsCommands(t)
	c, px := cachedClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "old"))
	other := newAdmin(t, standaloneAddr(t))
	defer other.Close()
	release := holdCachedRead(t, c, px, standaloneAddr(t), k)
	must(t, other.Set(ctx, k, "new"))
	waitCache(t, c, "the invalidation", func(cc *clientCache) bool {
		for _, fl := range cc.flights {
			return fl.dirty
		}
		return false
	})
	release()
	mustGetCached(t, c, k, "new")
}

// holdCachedRead starts a cached read of k, whose value is "old", with
// its reply held by px, and returns once the server at addr has run it
// (and so tracks k). release lets the reply through and fails the test
// unless the read returns what it read, uncached.
func holdCachedRead(t *testing.T, c *Client, px *respiretest.Proxy, addr, k string) (release func()) {
	t.Helper()
	ctx := testCtx(t)
	gets := commandCalls(t, addr, "get")
	hold := px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Hold})
	got := make(chan string, 1)
	go func() {
		v, _ := c.GetCached(ctx, k)
		got <- v
	}()
	for commandCalls(t, addr, "get") == gets {
		runtime.Gosched()
	}
	return func() {
		t.Helper()
		hold.Release()
		if v := <-got; v != "old" {
			t.Fatalf("the held read returned %q, want old (what it read)", v)
		}
		if n := c.cache.len(); n != 0 {
			t.Fatalf("%d entries cached, want none: the held read was published", n)
		}
	}
}

// TestCachedReadInFlightAcrossAnotherClientsFlushAll: another client's
// FLUSHALL (on a server of the test's own) reaches the tracking
// connection as an invalidation of everything (a null key list): it
// drops every entry, and a read whose reply the proxy holds across it is
// returned but not cached, though its key was not named.
func TestCachedReadInFlightAcrossAnotherClientsFlushAll(t *testing.T) {
	addr := privateServer(t)
	px := realProxy(t, addr)
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	held, kept := key(t, "held"), key(t, "kept")
	must(t, c.Set(ctx, held, "old"))
	must(t, c.Set(ctx, kept, "old"))
	mustGetCached(t, c, kept, "old")
	release := holdCachedRead(t, c, px, addr, held)
	c.cache.mu.Lock()
	gen := c.cache.gen
	c.cache.mu.Unlock()
	admin(t, addr, "FLUSHALL")
	waitCache(t, c, "the invalidation of everything", func(cc *clientCache) bool { return cc.gen != gen && len(cc.entries) == 0 })
	admin(t, addr, "SET", held, "new")
	admin(t, addr, "SET", kept, "new")
	release()
	mustGetCached(t, c, held, "new")
	mustGetCached(t, c, kept, "new")
}

// TestCachedReadCoalescesCallersAndRetriesOnce: concurrent callers of one
// missing entry share one read; its connection is lost before the server
// sees it, and the read is resent once under the retry policy: one
// process-hook call, one resend in the metrics, one GET on the server,
// whatever the number of callers.
func TestCachedReadCoalescesCallersAndRetriesOnce(t *testing.T) {
	const callers = 8
	h := newHoldHook(true, false)
	opts, reader := withRetryMetrics(t, Options{Hooks: []Hook{h}, RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	c, px := cachedClient(t, opts)
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	drop := px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.DropBeforeForward})
	defer drop.Remove()
	gets := px.Forwarded("GET")
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			v, err := c.GetCached(ctx, k)
			if err == nil && v != "v" {
				err = errors.New("got " + v)
			}
			errs <- err
		})
	}
	<-h.entered
	waitCache(t, c, "every caller to join the read", func(cc *clientCache) bool { return waiters(cc) == callers })
	close(h.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a caller: %v", err)
		}
	}
	if len(h.entered) != 0 {
		t.Fatalf("the process hook ran %d more times, want once for every caller", len(h.entered))
	}
	if n := drop.Applied(); n != 1 {
		t.Fatalf("the drop applied %d times, want 1", n)
	}
	if n := px.Forwarded("GET") - gets; n != 1 {
		t.Fatalf("%d GETs ran, want 1", n)
	}
	want := retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}
	if got := retryCollect(t, reader); !got.equal(want) {
		t.Fatalf("retry counts %v, want %v (one operation, whatever its callers)", got, want)
	}
	// The read began before its connection was lost: it may have been
	// tracked by a connection whose invalidations are gone, so it was
	// returned but not cached. The next read is, and then serves.
	for range 2 {
		mustGetCached(t, c, k, "v")
	}
	if n := px.Forwarded("GET") - gets; n != 2 {
		t.Fatalf("%d GETs in all, want 2", n)
	}
}

// TestCachedReadWaiterLifetimes: a waiter whose context ends leaves the
// read running for the others; the last one to leave cancels it, and the
// next caller starts a read of its own while the old one is still held.
func TestCachedReadWaiterLifetimes(t *testing.T) {
	h := newHoldHook(true, false)
	c, _ := cachedClient(t, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))

	leaving, leave := context.WithCancel(ctx)
	first := make(chan error, 1)
	go func() { _, err := c.GetCached(leaving, k); first <- err }()
	readCtx := <-h.entered
	second := make(chan string, 1)
	go func() { v, _ := c.GetCached(ctx, k); second <- v }()
	waitCache(t, c, "two waiters", func(cc *clientCache) bool { return waiters(cc) == 2 })
	leave()
	var ce *ContextError
	if err := <-first; !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving waiter got %v, want a ContextError", err)
	}
	if readCtx.Err() != nil {
		t.Fatal("one waiter leaving cancelled the shared read")
	}
	close(h.release)
	if v := <-second; v != "v" {
		t.Fatalf("the remaining waiter got %q, want v", v)
	}

	// The last waiter leaving cancels the read.
	h2 := newHoldHook(true, false)
	c2, _ := cachedClient(t, Options{Hooks: []Hook{h2}})
	must(t, c2.Set(ctx, k, "w"))
	only, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c2.GetCached(only, k); done <- err }()
	oldRead := <-h2.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the only waiter got %v, want context.Canceled", err)
	}
	select {
	case <-oldRead.Done(): // the read was cancelled with its last waiter
	case <-ctx.Done():
		t.Fatal("the last waiter left and the read was not cancelled")
	}
	next := make(chan string, 1)
	go func() { v, _ := c2.GetCached(ctx, k); next <- v }()
	<-h2.entered // a new read started
	close(h2.release)
	if v := <-next; v != "w" {
		t.Fatalf("the new caller got %q, want w", v)
	}
	mustHoldNoReads(t, c)
	mustHoldNoReads(t, c2)
}

// TestCacheDroppedWhenTrackingConnectionEnds: the invalidations of a
// connection that ended are lost with it, so every entry goes; a write
// made while the client was reconnecting is then read from the server.
func TestCacheDroppedWhenTrackingConnectionEnds(t *testing.T) {
	c, px := cachedClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "before"))
	mustGetCached(t, c, k, "before")
	if n := c.cache.len(); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
	killClient(t, standaloneAddr(t), clientID(t, c))
	waitCache(t, c, "the cache to be dropped", func(cc *clientCache) bool { return len(cc.entries) == 0 })
	other := newAdmin(t, standaloneAddr(t))
	defer other.Close()
	must(t, other.Set(ctx, k, "after"))
	gets := px.Forwarded("GET")
	mustGetCached(t, c, k, "after")
	if n := px.Forwarded("GET") - gets; n != 1 {
		t.Fatalf("%d GETs, want 1", n)
	}
}

// TestCacheInvalidationPushes: the push forms the server sends, applied
// to the cache directly: keys drop their entries and dirty the reads in
// flight on them; a null key list (FLUSHALL, FLUSHDB) drops everything
// and stops every read in flight from publishing; other pushes change
// nothing.
func TestCacheInvalidationPushes(t *testing.T) {
	cc := newClientCache(&CacheOptions{MaxEntries: 10})
	fill := func(key string, deps ...string) {
		fl := &cacheFlight{key: key, deps: deps, gen: cc.gen, r: Reply{v: resp.Value{Type: resp.BulkString, Str: []byte(key)}}, cancel: func(error) {}}
		cc.mu.Lock()
		cc.publishLocked(fl, true)
		cc.mu.Unlock()
	}
	bulk := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	push := func(keys resp.Value) resp.Value {
		return resp.Value{Type: resp.Push, Elems: []resp.Value{bulk("invalidate"), keys}}
	}
	fill("GET a", "a")
	fill("MGET a b", "a", "b")
	fill("GET b", "b")
	inFlight := &cacheFlight{key: "GET c", deps: []string{"c"}, gen: cc.gen, cancel: func(error) {}}
	cc.startLocked(inFlight)

	cc.onPush(resp.Value{Type: resp.Push, Elems: []resp.Value{bulk("message"), bulk("a")}})
	if n := cc.len(); n != 3 {
		t.Fatalf("a pub/sub push changed the cache: %d entries", n)
	}
	cc.onPush(push(resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("a")}}))
	if _, ok := cc.entries["GET b"]; !ok || cc.len() != 1 {
		t.Fatalf("after invalidating a: entries %v, want only GET b", cc.entries)
	}
	if len(cc.byKey["a"]) != 0 || len(cc.byKey["b"]) != 1 {
		t.Fatalf("key references %v", cc.byKey)
	}
	cc.onPush(push(resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("c")}}))
	if !inFlight.dirty {
		t.Fatal("an invalidation of a read in flight's key did not dirty it")
	}
	other := &cacheFlight{key: "GET d", deps: []string{"d"}, gen: cc.gen, r: Reply{v: bulk("d")}, cancel: func(error) {}}
	cc.onPush(push(resp.Value{Type: resp.Null}))
	if cc.len() != 0 || len(cc.byKey) != 0 {
		t.Fatalf("a null invalidation left %d entries", cc.len())
	}
	cc.mu.Lock()
	cc.publishLocked(other, true)
	cc.mu.Unlock()
	if cc.len() != 0 {
		t.Fatal("a read that began before a flush was published")
	}

	// Eviction keeps the bound, and its references with it.
	for i := range 25 {
		fill("GET "+string(rune('A'+i)), string(rune('A'+i)))
	}
	if cc.len() != 10 || len(cc.byKey) != 10 {
		t.Fatalf("%d entries and %d key references, want 10 and 10", cc.len(), len(cc.byKey))
	}
}

// TestCacheReadsInFlightByKey: the reads in flight are found by the keys
// they read (an invalidation or a write used to visit every read in
// flight, about 11 µs per write with 1000 of them): through random starts,
// replacements, ends and invalidations, each key refers to exactly the
// current reads of it, an invalidation dirties exactly those, and nothing
// is left once every read ended.
func TestCacheReadsInFlightByKey(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	keys := []string{"a", "b", "c", "d"}
	cc := newClientCache(&CacheOptions{MaxEntries: 10})
	var all []*cacheFlight
	check := func() {
		t.Helper()
		want := map[string]int{}
		for _, fl := range cc.flights {
			for _, d := range fl.deps {
				want[d]++
			}
		}
		got := map[string]int{}
		for k, fls := range cc.reading {
			for _, fl := range fls {
				if cc.flights[fl.key] != fl {
					t.Fatalf("key %s refers to a read that is not current", k)
				}
			}
			got[k] = len(fls)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("references by key %v, want %v", got, want)
		}
	}
	for i := range 5000 {
		switch r.IntN(4) {
		case 0, 1: // start, maybe in place of the current read of its command
			deps := []string{keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]}
			fl := &cacheFlight{key: "MGET " + deps[0] + " " + deps[1] + strconv.Itoa(r.IntN(2)), deps: deps, cancel: func(error) {}}
			cc.startLocked(fl)
			all = append(all, fl)
		case 2: // end
			if len(all) > 0 {
				cc.endLocked(all[r.IntN(len(all))])
			}
		case 3: // invalidate one key
			k := keys[r.IntN(len(keys))]
			before := map[*cacheFlight]bool{}
			for _, fl := range all {
				before[fl] = fl.dirty
			}
			cc.onPush(resp.Value{Type: resp.Push, Elems: []resp.Value{
				{Type: resp.BulkString, Str: []byte("invalidate")},
				{Type: resp.Array, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte(k)}}}}})
			for _, fl := range all {
				reads := cc.flights[fl.key] == fl && slices.Contains(fl.deps, k)
				if want := before[fl] || reads; fl.dirty != want {
					t.Fatalf("step %d: invalidating %s left the read %s (deps %v, current %v) dirty=%v", i, k, fl.key, fl.deps, cc.flights[fl.key] == fl, fl.dirty)
				}
			}
		}
		check()
	}
	for _, fl := range all {
		cc.endLocked(fl)
	}
	if len(cc.flights) != 0 || len(cc.reading) != 0 {
		t.Fatalf("%d reads and %d keys left after every read ended", len(cc.flights), len(cc.reading))
	}
}

// TestDoCachedRefusesWhatItCannotCache: reads whose reply the cache
// could serve stale, writes, keyless and blocking commands, and a client
// without a cache fail with ErrInvalidArgument before any I/O; options
// the cache cannot work with fail Connect.
func TestDoCachedRefusesWhatItCannotCache(t *testing.T) {
	c, px := cachedClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	before := totalReceived(px)
	for _, call := range []struct {
		cmd  Command
		args []any
	}{
		{NewCommand("SET"), []any{k, "v"}},
		{NewCommand("INCR"), []any{k}},
		{NewCommand("SRANDMEMBER"), []any{k}},
		{NewCommand("TOUCH"), []any{k}},
		{NewCommand("TTL"), []any{k}},
		{NewCommand("HTTL"), []any{k, "FIELDS", 1, "f"}},
		{NewCommand("HPTTL"), []any{k, "FIELDS", 1, "f"}},
		{NewCommand("OBJECT"), []any{"IDLETIME", k}},
		{NewCommand("DBSIZE"), nil},
		{NewCommand("BLPOP"), []any{k, 1}},
		{NewCommand("SCAN"), []any{0}},
		{NewCommand("CLIENT"), []any{"CACHING", "YES"}},
		{NewCommand("EVAL_RO"), []any{"return 1", 0}},
		{NewCommand("MYMODULE.GET"), []any{k}},
	} {
		if _, err := c.DoCached(ctx, call.cmd, call.args...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("DoCached(%s %v) = %v, want ErrInvalidArgument", call.cmd.FullName(), call.args, err)
		}
	}
	if n := totalReceived(px) - before; n != 0 {
		t.Fatalf("refused reads sent %d frames", n)
	}
	plain := newClient(t, Options{Endpoints: []string{standaloneAddr(t)}})
	if _, err := plain.GetCached(ctx, k); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("GetCached without ClientCache = %v, want ErrInvalidArgument", err)
	}
	for _, o := range []Options{
		{Protocol: 2, ClientCache: &CacheOptions{}},
		{ClientCache: &CacheOptions{MaxEntries: -1}},
		{ClientCache: &CacheOptions{TTL: time.Microsecond}},
	} {
		o.Endpoints = []string{standaloneAddr(t)}
		var ce *ConfigError
		if _, err := Connect(ctx, o); !errors.As(err, &ce) {
			t.Errorf("Connect(%+v) = %v, want a ConfigError", o.ClientCache, err)
		}
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.GetCached(ended, k); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetCached with an ended context = %v", err)
	}
	must(t, c.Close())
	if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetCached after Close = %v, want ErrClosed", err)
	}
}

// TestDoCachedRefusesSortByPattern: SORT_RO's BY and GET patterns read
// keys that it does not declare, which the server does not track for it
// and no invalidation names. Cached, its reply stayed stale after a write
// to a weight key (the server sorted [b a], the cache kept [a b]); it is
// refused before any I/O.
func TestDoCachedRefusesSortByPattern(t *testing.T) {
	c, px := cachedClient(t, Options{})
	ctx := testCtx(t)
	l, wa, wb := key(t, "l"), key(t, "w_a"), key(t, "w_b")
	if _, err := c.Do(ctx, NewCommand("RPUSH"), l, "a", "b"); err != nil {
		t.Fatal(err)
	}
	must(t, c.Set(ctx, wa, "1"))
	must(t, c.Set(ctx, wb, "2"))
	pattern := key(t, "w_") + "*"
	before := totalReceived(px)
	if _, err := c.DoCached(ctx, NewCommand("SORT_RO"), l, "BY", pattern); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("DoCached(SORT_RO BY) = %v, want ErrInvalidArgument", err)
	}
	if n := totalReceived(px) - before; n != 0 {
		t.Fatalf("the refused read sent %d frames", n)
	}
}

// TestCachedEntryExpiresAfterTTL: an entry is served for TTL at most,
// even when no invalidation comes.
func TestCachedEntryExpiresAfterTTL(t *testing.T) {
	c, px := cachedClient(t, Options{ClientCache: &CacheOptions{TTL: time.Hour}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	gets := px.Forwarded("GET")
	mustGetCached(t, c, k, "v")
	mustGetCached(t, c, k, "v")
	if n := px.Forwarded("GET") - gets; n != 1 {
		t.Fatalf("%d GETs within the TTL, want 1", n)
	}
	c.cache.mu.Lock()
	for _, e := range c.cache.entries {
		e.expires -= int64(time.Hour) // as if the hour had passed
	}
	c.cache.mu.Unlock()
	mustGetCached(t, c, k, "v")
	if n := px.Forwarded("GET") - gets; n != 2 {
		t.Fatalf("%d GETs, want 2: the expired entry was served", n)
	}
}

// TestCachedEntryEndsWithItsKeysExpiry: a key that expires is deleted by
// the server only when its expiry cycle or a later access finds it, and
// only then is its invalidation sent; until that moment the server already
// answers GET with null. An entry is therefore served no longer than its
// keys' time to live as read with it, even without a local TTL; keys
// without one leave the entry to the cache's own bound.
func TestCachedEntryEndsWithItsKeysExpiry(t *testing.T) {
	c, px := cachedClient(t, Options{ClientCache: &CacheOptions{TTL: NoTimeout}})
	ctx := testCtx(t)
	volatile, lasting := key(t, "volatile"), key(t, "lasting")
	if _, err := c.Do(ctx, NewCommand("SET"), volatile, "v", "PX", 60000); err != nil {
		t.Fatal(err)
	}
	must(t, c.Set(ctx, lasting, "w"))
	gets, mgets := px.Forwarded("GET"), px.Forwarded("MGET")
	mget := func() {
		t.Helper()
		r, err := c.DoCached(ctx, NewCommand("MGET"), lasting, volatile)
		if got, _ := r.Strings(); err != nil || !slices.Equal(got, []string{"w", "v"}) {
			t.Fatalf("MGET = %v, %v; want [w v]", got, err)
		}
	}
	for range 2 {
		mustGetCached(t, c, volatile, "v")
		mustGetCached(t, c, lasting, "w")
		mget()
	}
	if n, m := px.Forwarded("GET")-gets, px.Forwarded("MGET")-mgets; n != 2 || m != 1 {
		t.Fatalf("%d GETs and %d MGETs, want 2 and 1: the reads were not cached", n, m)
	}
	c.cache.mu.Lock()
	for _, e := range c.cache.entries {
		if e.expires != 0 {
			e.expires -= int64(2 * time.Minute) // as if the key's minute had passed
		}
	}
	c.cache.mu.Unlock()
	mustGetCached(t, c, volatile, "v")
	mustGetCached(t, c, lasting, "w")
	mget()
	if n := px.Forwarded("GET") - gets; n != 3 {
		t.Fatalf("%d GETs, want 3: the entry of a key past its expiry was served, or one without expiry was not", n)
	}
	if n := px.Forwarded("MGET") - mgets; n != 2 {
		t.Fatalf("%d MGETs, want 2: a read of a key past its expiry was served", n)
	}

	// A user whose ACL refuses PTTL still reads through the cache: the
	// reply is returned, not cached, since its keys' expiry is unknown.
	addr := privateServer(t)
	admin(t, addr, "ACL", "SETUSER", "nopttl", "on", ">pw", "~*", "+@all", "-pttl")
	admin(t, addr, "SET", "k", "v")
	limited := newClient(t, Options{Endpoints: []string{addr}, Username: "nopttl", Password: "pw", ClientCache: &CacheOptions{}})
	for range 2 {
		mustGetCached(t, limited, "k", "v")
	}
	if n := limited.cache.len(); n != 0 {
		t.Fatalf("%d entries without the keys' expiry, want none", n)
	}
}

// TestCachedEntryWithTheLongestTTL: a TTL just short of NoTimeout is a
// valid bound; its expiry, past the clock's range, is no expiry (it
// wrapped around into the past, and no entry was ever served).
func TestCachedEntryWithTheLongestTTL(t *testing.T) {
	c, px := cachedClient(t, Options{ClientCache: &CacheOptions{TTL: NoTimeout - 1}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	gets := px.Forwarded("GET")
	for range 2 {
		mustGetCached(t, c, k, "v")
	}
	if n := px.Forwarded("GET") - gets; n != 1 {
		t.Fatalf("%d GETs, want 1", n)
	}
}

// TestCloseEndsCachedReads: Close wakes the waiters of a read in flight
// with ErrClosed, cancels the read and waits for it, and later calls fail
// with ErrClosed; no goroutine is left (goleak checks the package).
func TestCloseEndsCachedReads(t *testing.T) {
	h := newHoldHook(true, false)
	c, _ := cachedClient(t, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := c.GetCached(ctx, k); errs <- err }()
	}
	read := <-h.entered
	waitCache(t, c, "two waiters", func(cc *clientCache) bool { return waiters(cc) == 2 })
	must(t, c.Close())
	if read.Err() == nil {
		t.Fatal("Close returned with the read's context still live")
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("a waiter got %v, want ErrClosed", err)
		}
	}
	if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetCached after Close = %v, want ErrClosed", err)
	}
	mustHoldNoReads(t, c)
}

// TestCacheAfterWriteDropsWrittenKeys: the client's own writes drop the
// entries of the keys they write (Redis sends their invalidations only
// after their replies): one command by its descriptor, batches and
// transactions command by command, reads nothing, FLUSHDB everything.
func TestCacheAfterWriteDropsWrittenKeys(t *testing.T) {
	cc := newClientCache(&CacheOptions{MaxEntries: 100})
	fill := func(keys ...string) {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		for _, k := range keys {
			cc.publishLocked(&cacheFlight{key: "GET " + k, deps: []string{k}, gen: cc.gen, cancel: func(error) {}}, true)
		}
	}
	has := func(k string) bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return cc.entries["GET "+k] != nil
	}
	enc := func(words ...string) []byte { return appendCommand(nil, NewCommand(words[0]), words[1:]) }
	lookup := func(name string) Command {
		d, ok := catalog.Lookup(name, "")
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		return d
	}
	fill("a", "b", "c", "d")
	cc.afterWrite(enc("GET", "a"), lookup("GET"), true)
	cc.afterWrite(enc("MGET", "a", "b"), lookup("MGET"), true)
	if !has("a") || !has("b") {
		t.Fatal("a read dropped entries")
	}
	cc.afterWrite(enc("SET", "a", "1"), lookup("SET"), true)
	if has("a") || !has("b") {
		t.Fatal("SET a did not drop exactly a")
	}
	inFlight := &cacheFlight{key: "GET d", deps: []string{"d"}, gen: cc.gen, cancel: func(error) {}}
	cc.startLocked(inFlight)
	tx := append(append(append(enc("MULTI"), enc("INCR", "b")...), enc("DEL", "c", "d")...), enc("EXEC")...)
	cc.afterWrite(tx, Command{}, false)
	if has("b") || has("c") || has("d") || !inFlight.dirty {
		t.Fatal("a transaction's writes did not drop b, c and d and dirty the read of d")
	}
	fill("a", "b")
	cc.afterWrite(enc("FLUSHDB"), lookup("FLUSHDB"), true)
	if cc.len() != 0 {
		t.Fatal("FLUSHDB left entries")
	}
}

// BenchmarkGetCachedHit measures a cache hit: no I/O, a map lookup under
// the cache's mutex and the encoding of the command it looks up.
func BenchmarkGetCachedHit(b *testing.B) {
	c := newClient(b, Options{ClientCache: &CacheOptions{}})
	ctx := context.Background()
	k := key(b, "k")
	if err := c.Set(ctx, k, benchValue); err != nil {
		b.Fatal(err)
	}
	if _, err := c.GetCached(ctx, k); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.GetCached(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCachedHitAllocatesOnlyTheString: a hit of GetCached allocates the
// returned string and nothing else (its command is encoded on the stack).
func TestCachedHitAllocatesOnlyTheString(t *testing.T) {
	c, _ := cachedClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "value"))
	mustGetCached(t, c, k, "value")
	if n := testing.AllocsPerRun(200, func() {
		if _, err := c.GetCached(ctx, k); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Fatalf("a hit allocates %v times, want 1 (the string)", n)
	}
}

// TestCachedReadsYourWritesUnderLoad: on every topology, writers each own
// a key and read it through the cache right after every write, while
// readers keep filling the cache with the same keys (their reads race with
// the writes) and, on the standalone server and a Cluster's primaries, the
// shared connection is killed now and then (its invalidations are lost
// with it; on a Cluster one node's entries go): a writer whose
// write and read both succeed always reads its own write, never an older
// value.
func TestCachedReadsYourWritesUnderLoad(t *testing.T) {
	topologies(t, Options{ClientCache: &CacheOptions{}}, func(t *testing.T, c *Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		const writers, readers, rounds = 8, 8, 300
		keys := make([]string, writers)
		for i := range keys {
			keys[i] = key(t, strconv.Itoa(i))
		}
		stop := make(chan struct{})
		var bg sync.WaitGroup
		for r := range readers {
			bg.Go(func() {
				for i := r; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = c.GetCached(ctx, keys[i%writers]) // a killed connection may fail it
				}
			})
		}
		kills := 0
		if c.topo == nil || c.isCluster() {
			// The shared connection's id, on the server that killer
			// reaches: on a Cluster each primary's in turn.
			var killers []*Client
			var id func(i int) (int64, error)
			if c.topo == nil {
				killers = []*Client{newAdmin(t, standaloneAddr(t))}
				id = func(int) (int64, error) {
					r, err := c.Do(ctx, NewCommand("CLIENT ID"))
					if err != nil {
						return 0, err
					}
					return r.Int64()
				}
			} else {
				primaries := c.topo.Primaries()
				for _, p := range primaries {
					killers = append(killers, newAdmin(t, p.Addr))
				}
				id = func(i int) (int64, error) {
					conn := primaries[i].EP.Current()
					if conn == nil {
						return 0, ErrNoRoute
					}
					return conn.ID(), nil
				}
			}
			defer func() {
				for _, k := range killers {
					_ = k.Close()
				}
			}()
			bg.Go(func() {
				for i := 0; kills < 5; i++ {
					select {
					case <-stop:
						return
					default:
					}
					n, err := id(i % len(killers))
					if err != nil {
						continue // the last kill is still being noticed
					}
					if r, err := killers[i%len(killers)].Do(ctx, NewCommand("CLIENT"), "KILL", "ID", n); err == nil {
						if k, _ := r.Int64(); k == 1 {
							kills++
						}
					}
				}
			})
		}
		var ww sync.WaitGroup
		checked := make([]int, writers)
		for w := range writers {
			ww.Go(func() {
				for i := range rounds {
					want := strconv.Itoa(i)
					if err := c.Set(ctx, keys[w], want); err != nil {
						continue // lost with a killed connection: no write to read
					}
					got, err := c.GetCached(ctx, keys[w])
					if err != nil {
						continue
					}
					if got != want {
						t.Errorf("writer %d read %q right after writing %q", w, got, want)
						return
					}
					checked[w]++
				}
			})
		}
		ww.Wait()
		close(stop)
		bg.Wait()
		for w, n := range checked {
			if n < rounds/2 {
				t.Errorf("writer %d checked only %d of %d rounds", w, n, rounds)
			}
		}
		t.Logf("%v rounds checked per writer, %d connection kills", checked, kills)
	})
}

// TestCachedReadDirtyFlightIsNotJoined: a caller that finds a read in
// flight whose key has since been written (here by the caller's own SET)
// starts a read of its own rather than sharing one that may return the
// value the write replaced.
func TestCachedReadDirtyFlightIsNotJoined(t *testing.T) {
	h := newHoldHook(true, false)
	c, _ := cachedClient(t, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "old"))
	first := make(chan string, 1)
	go func() { v, _ := c.GetCached(ctx, k); first <- v }()
	<-h.entered // the first read is held before it is sent
	must(t, c.Set(ctx, k, "new"))
	second := make(chan string, 1)
	go func() { v, _ := c.GetCached(ctx, k); second <- v }()
	select {
	case <-h.entered: // a second read started
	case <-ctx.Done():
		t.Fatal("the caller joined the read begun before the write")
	}
	close(h.release)
	if v := <-second; v != "new" {
		t.Fatalf("the caller after the write got %q, want new", v)
	}
	<-first
	mustHoldNoReads(t, c)
}

// panicHook panics in the process hook of the first command named name
// (GET when empty) it sees once armed.
type panicHook struct {
	name  string
	armed atomic.Bool
}

func (h *panicHook) DialHook(next DialHook) DialHook { return next }
func (h *panicHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return next
}
func (h *panicHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if (cmd.Name == h.name || h.name == "" && cmd.Name == "GET") && h.armed.CompareAndSwap(true, false) {
			panic("hook exploded")
		}
		return next(ctx, cmd)
	}
}

// TestCachedReadHookPanicReachesTheCaller: a process hook that panics
// during a cached read panics in the caller, as it would in Client.Do,
// where the caller can recover it; the read ran on a goroutine of its
// own, where the panic ended the whole process. The entry is not
// cached, and the next read works.
func TestCachedReadHookPanicReachesTheCaller(t *testing.T) {
	h := &panicHook{}
	c, _ := cachedClient(t, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	h.armed.Store(true)
	recovered := func() (p any) {
		defer func() { p = recover() }()
		_, _ = c.GetCached(ctx, k)
		return nil
	}()
	if recovered != "hook exploded" {
		t.Fatalf("the caller recovered %v, want the hook's panic", recovered)
	}
	if n := c.cache.len(); n != 0 {
		t.Fatalf("%d entries after a panicked read, want none", n)
	}
	mustGetCached(t, c, k, "v")
}

// TestCacheEvictsTheLeastRecentlyUsed: once MaxEntries are held, a new
// entry evicts the least recently used of the sampled entries (all of
// them in a cache of up to 5): a hit keeps an entry, and the server sees
// a read again only for what was evicted. With many entries a hot one,
// used between insertions, is never the oldest of a sample, so it
// outlives every eviction.
func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	t.Run("Small", func(t *testing.T) {
		c, px := cachedClient(t, Options{ClientCache: &CacheOptions{MaxEntries: 3}})
		ctx := testCtx(t)
		keys := make([]string, 5)
		for i := range keys {
			keys[i] = key(t, "k"+strconv.Itoa(i))
			must(t, c.Set(ctx, keys[i], "v"+strconv.Itoa(i)))
		}
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), keys...) })
		get := func(i int) { t.Helper(); mustGetCached(t, c, keys[i], "v"+strconv.Itoa(i)) }
		held := func(want ...int) {
			t.Helper()
			c.cache.mu.Lock()
			defer c.cache.mu.Unlock()
			var got []int
			for i, k := range keys {
				if c.cache.entries[string(appendCommand(nil, specGET.desc, []string{k}))] != nil {
					got = append(got, i)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("cached keys %v, want %v", got, want)
			}
		}
		gets := px.Forwarded("GET")
		get(0)
		get(1)
		get(2)
		get(0) // a hit: 0 is now the most recent
		get(3) // evicts 1, the least recently used
		held(0, 2, 3)
		get(0)
		get(4) // evicts 2
		held(0, 3, 4)
		if n := px.Forwarded("GET") - gets; n != 5 {
			t.Fatalf("the server got %d GETs, want 5 (one per key; the hits of key 0 stayed local)", n)
		}
	})
	t.Run("Sampled", func(t *testing.T) {
		cc := newClientCache(&CacheOptions{MaxEntries: 100})
		fill := func(key string) {
			fl := &cacheFlight{key: key, deps: []string{key}, gen: cc.gen, cancel: func(error) {}}
			cc.mu.Lock()
			cc.publishLocked(fl, true)
			cc.mu.Unlock()
		}
		fill("hot")
		for i := range 10000 {
			if _, ok := cc.hit([]byte("hot")); !ok {
				t.Fatalf("the hot entry was evicted after %d insertions", i)
			}
			fill("cold" + strconv.Itoa(i))
		}
		if n := cc.len(); n != 100 {
			t.Fatalf("%d entries, want MaxEntries 100", n)
		}
	})
}

// TestCachedHitRunsNoHookAndRecordsNoDuration: what the observers see of
// cached reads. The read of a missing entry is one operation: one
// ProcessHook call and one db.client.operation.duration record, named
// after the read, with no error. A hit sends nothing: it runs no hook and
// records no duration, however many there are.
func TestCachedHitRunsNoHookAndRecordsNoDuration(t *testing.T) {
	var events []string
	h := &recordingHook{tag: "h", events: &events}
	reader := sdkmetric.NewManualReader()
	c, _ := cachedClient(t, Options{
		Hooks:         []Hook{h},
		Metrics:       MetricsCommands,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	ctx := testCtx(t)
	k := key(t, "k")
	if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrNil) {
		t.Fatalf("GetCached of a missing key = %v, want ErrNil", err)
	}
	for range 3 {
		if _, err := c.GetCached(ctx, k); !errors.Is(err, ErrNil) {
			t.Fatalf("GetCached hit = %v, want ErrNil", err)
		}
	}
	if n := c.cache.len(); n != 1 {
		t.Fatalf("%d entries, want 1 (the hits were not hits)", n)
	}
	h.mu.Lock()
	got := slices.DeleteFunc(slices.Clone(events), func(e string) bool { return strings.HasPrefix(e, "h:dial ") })
	h.mu.Unlock()
	wantEvents := []string{"h:before GET read_only", "h:after GET ok"}
	if !slices.Equal(got, wantEvents) {
		t.Errorf("hook events = %q, want %q", got, wantEvents)
	}
	durations, _ := collectCommandMetrics(t, reader)
	if want := map[string]uint64{"GET/": 1}; !maps.Equal(durations, want) {
		t.Errorf("durations by operation/error.type = %v, want %v", durations, want)
	}
}

// TestCacheDroppedWhenTrackingConnectionFallsSilent: a tracking
// connection that dies silently (no byte crosses, nothing is closed) is
// found by the idle PING and the health timeout, and the whole cache goes
// with it: another client's write made meanwhile, whose invalidation the
// partition holds, is read once the link returns. Until then the entry
// was still served: IdlePingInterval plus HealthTimeout (and the probe)
// bound that time.
func TestCacheDroppedWhenTrackingConnectionFallsSilent(t *testing.T) {
	c, px := cachedClient(t, Options{IdlePingInterval: 100 * time.Millisecond, HealthTimeout: 100 * time.Millisecond})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "before"))
	mustGetCached(t, c, k, "before")
	pt := px.Partition()
	other := newAdmin(t, standaloneAddr(t))
	defer other.Close()
	must(t, other.Set(ctx, k, "after"))
	waitCache(t, c, "the cache to be dropped", func(cc *clientCache) bool { return len(cc.entries) == 0 })
	pt.Heal()
	mustGetCached(t, c, k, "after")
}

// TestCachedReadKeepsItsCallersDeadline: Options.CommandTimeout is the
// deadline of a call whose context has none. A cached read whose caller
// gave a longer deadline waits for it, as Do does, instead of failing at
// the CommandTimeout that the shared read would otherwise take. The
// receipt that the CommandTimeout has passed since the read was sent is
// a plain GET, sent after it and held behind it, that times out.
func TestCachedReadKeepsItsCallersDeadline(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	c, px := cachedClient(t, Options{CommandTimeout: 50 * time.Millisecond,
		Metrics: MetricsCommands, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	hold := px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Hold})
	got := make(chan error, 1)
	go func() {
		v, err := c.GetCached(ctx, k) // testCtx: a deadline seconds away
		if err == nil && v != "v" {
			err = errors.New("got " + v)
		}
		got <- err
	}()
	for hold.Applied() == 0 {
		runtime.Gosched()
	}
	if _, err := c.Get(context.Background(), k); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a GET held behind the cached read, without a deadline = %v, want its CommandTimeout", err)
	}
	hold.Release()
	if err := <-got; err != nil {
		t.Fatalf("the cached read with a deadline seconds away = %v, want v: CommandTimeout is not its deadline", err)
	}

	// A caller without a deadline still has the CommandTimeout.
	k2 := key(t, "k2")
	hold2 := px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Hold})
	if _, err := c.GetCached(context.Background(), k2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a cached read without a deadline = %v, want its CommandTimeout", err)
	}
	// Its read, abandoned by its only waiter at that deadline, is a
	// timeout in the metrics, not a cancellation. Close waits for it.
	hold2.Release()
	must(t, c.Close())
	durations, _ := collectCommandMetrics(t, reader)
	if want := map[string]uint64{"SET/": 1, "GET/": 1, "GET/timeout": 2}; !maps.Equal(durations, want) {
		t.Errorf("durations by operation/error.type = %v, want %v", durations, want)
	}
}
