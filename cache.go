package respire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// CacheOptions configures server-assisted client-side caching
// ([Options.ClientCache]). It is copied when the client or group is made, so
// changing it afterwards has no effect, and one value may serve concurrent
// calls while nobody changes it.
type CacheOptions struct {
	// MaxEntries bounds the replies held; a new entry beyond it evicts
	// the least recently used of a few sampled entries (all of them up to
	// 5 entries), as Redis's own maxmemory LRU does. It counts replies, not
	// bytes: an entry holds its whole reply, however large (up to
	// [Options.MaxBulk] a bulk string). Must not be negative. Defaults to
	// 10000.
	MaxEntries int
	// TTL bounds how long a reply is served from the cache, whatever the
	// server says: a safety net for an invalidation that never arrives
	// (one lost with a connection is already handled: the whole cache,
	// or on a Cluster what that node served, is dropped once the client
	// learns the connection ended, which for a silent one, or one that
	// died alone, takes [Options.IdlePingInterval] plus
	// [Options.HealthTimeout] and the probe). At least 1 ms, or
	// [NoTimeout] to keep entries until the server invalidates them, one
	// of their keys expires (its PTTL is read with the entry) or they are
	// evicted. Defaults to 1 minute.
	TTL time.Duration
}

const (
	defaultCacheEntries = 10000
	defaultCacheTTL     = time.Minute
)

// validateCache checks o and fills in its defaults; nil: no cache.
func validateCache(o *CacheOptions, protocol int) (*CacheOptions, error) {
	if o == nil {
		return nil, nil
	}
	c := *o
	switch {
	case protocol == 2:
		return nil, &ConfigError{Field: "Options.ClientCache", Reason: "needs RESP3 (Protocol 0 or 3): invalidations arrive as RESP3 pushes"}
	case c.MaxEntries < 0:
		return nil, &ConfigError{Field: "Options.ClientCache.MaxEntries", Reason: "must not be negative"}
	case c.MaxEntries == 0:
		c.MaxEntries = defaultCacheEntries
	}
	switch {
	case c.TTL == 0:
		c.TTL = defaultCacheTTL
	case c.TTL == NoTimeout:
		c.TTL = 0
	case c.TTL < time.Millisecond:
		return nil, &ConfigError{Field: "Options.ClientCache.TTL", Reason: "must be at least 1ms (or NoTimeout)"}
	}
	return &c, nil
}

// cachingPrelude is CLIENT CACHING YES, sent in the same frame ahead of a
// cached read: in OPTIN mode it makes the server track that read's keys,
// and no other caller's command can come between the two. A PTTL of each
// key follows the read in the frame: a key that expires is deleted, and
// its invalidation sent, only when the server's expiry cycle or a later
// access finds it, while GET answers null from the moment it expires, so
// an entry must end with its keys' time to live.
var cachingPrelude = appendCommand(nil, NewCommand("CLIENT"), []string{"CACHING", "YES"})

// clientCache holds the replies of cached reads, keyed by the encoded
// command, until the server invalidates one of their keys, a tracking
// connection ends (on a Cluster: the node's that served them), their TTL
// passes or they are evicted. One read per missing entry is in flight at
// a time; concurrent callers of the same command wait for it.
//
// An entry is published only when nothing could have made it stale
// between the read's send and its publication: no invalidation of its
// keys (dirty), no tracking connection lost (gen), the flight still
// current (not retired by its last waiter leaving), and the read tracked
// (not served after an ASK redirect, which cannot carry the prelude).
type clientCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	byKey   map[string][]string // a Redis key: the entries that read it
	// slotHeads and nodeHeads: the first of the entries of a slot, and of
	// those a Cluster node served (cache_index.go).
	slotHeads map[int]*cacheEntry
	nodeHeads map[string]*cacheEntry
	flights   map[string]*cacheFlight
	// reading: a Redis key: the flights (of flights) that read it, so
	// that an invalidation or a write visits those only.
	reading map[string][]*cacheFlight
	gen     uint64 // advanced when every entry is dropped
	tick    uint64 // advanced by every use of an entry: its recency
	closed  bool
	wg      sync.WaitGroup // the reads' goroutines, waited for by Close
	max     int
	ttl     time.Duration // 0: no local expiry
}

type cacheEntry struct {
	key     string // its key in entries: the encoded command
	r       Reply
	deps    []string // the keys the read read
	expires int64    // clock stamp; 0: none
	used    uint64   // the cache's tick at its last use
	// node: the address of the Cluster node that served it, "" off a
	// Cluster; slot: its keys' slot there. They place it on its lists.
	node  string
	slot  int
	links [2]cacheLink
}

// evictSample is how many entries an eviction compares: more keeps hot
// entries better, fewer evicts faster.
const evictSample = 5

// cacheFlight is the one read of a missing entry, shared by its waiters.
type cacheFlight struct {
	key     string
	deps    []string
	gen     uint64
	node    string // Cluster: the node that answered, once it has
	slot    int    // Cluster: the keys' slot
	expires int64  // clock stamp by which a key of deps expires; 0: none
	dirty   bool   // a key of deps was invalidated while it was in flight
	retired bool   // its last waiter left: it publishes nothing
	waiters int
	cancel  context.CancelCauseFunc // the cause: why the last waiter left
	done    chan struct{}           // closed when r and err are set
	r       Reply
	err     error
	// panicked: a process hook's panic during the read, raised again in
	// each waiter, as [Client.Do] raises it in its caller.
	panicked any
}

// result is fl's outcome for a waiter, once done is closed.
func (fl *cacheFlight) result() (Reply, error) {
	if fl.panicked != nil {
		panic(fl.panicked)
	}
	return fl.r, fl.err
}

func newClientCache(o *CacheOptions) *clientCache {
	return &clientCache{
		entries:   map[string]*cacheEntry{},
		byKey:     map[string][]string{},
		flights:   map[string]*cacheFlight{},
		slotHeads: map[int]*cacheEntry{},
		nodeHeads: map[string]*cacheEntry{},
		reading:   map[string][]*cacheFlight{},
		max:       o.MaxEntries,
		ttl:       o.TTL,
	}
}

// onPush applies an invalidation push (["invalidate", keys or null]);
// other pushes are ignored. It runs on a connection's reader goroutine.
func (cc *clientCache) onPush(v resp.Value) { cc.push(v, cc.flush) }

// push is onPush with all, which drops what a null invalidation makes
// stale: everything, or on a Cluster what the node that sent it served.
func (cc *clientCache) push(v resp.Value, all func()) {
	if len(v.Elems) < 2 || !strings.EqualFold(string(v.Elems[0].TextBytes()), "invalidate") {
		return
	}
	keys := v.Elems[1]
	if !keys.Type.Aggregate() {
		all() // FLUSHALL, FLUSHDB
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, k := range keys.Elems {
		cc.invalidateLocked(k.TextBytes())
	}
}

// invalidateLocked drops the entries that read key and dirties the reads
// in flight on it.
func (cc *clientCache) invalidateLocked(key []byte) {
	if refs := cc.byKey[string(key)]; refs != nil {
		delete(cc.byKey, string(key))
		cc.dropRefsLocked(refs)
	}
	for _, fl := range cc.reading[string(key)] {
		fl.dirty = true
	}
}

// startLocked makes fl the flight of its key, in place of any other (one
// that was invalidated or began before a flush, which can publish
// nothing and so needs no further invalidation).
func (cc *clientCache) startLocked(fl *cacheFlight) {
	if old := cc.flights[fl.key]; old != nil {
		cc.endLocked(old)
	}
	cc.flights[fl.key] = fl
	for _, d := range fl.deps {
		cc.reading[d] = append(cc.reading[d], fl)
	}
}

// endLocked removes fl, if it is still the flight of its key: nothing
// that happens to its keys from now on concerns it.
func (cc *clientCache) endLocked(fl *cacheFlight) {
	if cc.flights[fl.key] != fl {
		return
	}
	delete(cc.flights, fl.key)
	for _, d := range fl.deps {
		refs := cc.reading[d]
		if i := slices.Index(refs, fl); i >= 0 {
			refs[i] = refs[len(refs)-1]
			refs[len(refs)-1] = nil
			refs = refs[:len(refs)-1]
		}
		if len(refs) == 0 {
			delete(cc.reading, d)
		} else {
			cc.reading[d] = refs
		}
	}
}

// afterWrite drops the entries of the keys that the commands of frame
// buf may have written, once their replies are in and before the caller
// sees them: Redis sends a connection the invalidations of its own writes
// after their replies, so without this a read right after a write could
// be served what the write replaced (an entry read before the write,
// published or still in flight, is dropped or dirtied here; a read that
// begins after this sees the write).
// When single, buf is one command (maybe behind an ASKING prelude) that
// desc describes; otherwise (a batch, a transaction) each command is
// looked up by name.
func (cc *clientCache) afterWrite(buf []byte, desc catalog.Command, single bool) {
	var small [16][]byte
	for len(buf) > 0 {
		words, next := nextCommand(buf, small[:0])
		if words == nil {
			return
		}
		last := next == len(buf)
		buf = buf[next:]
		d := desc
		if !single || !last {
			var sub string
			if len(words) > 1 && catalog.HasSubcommands(string(words[0])) {
				sub = string(words[1])
			}
			var ok bool
			if d, ok = catalog.Lookup(string(words[0]), sub); !ok {
				continue
			}
		}
		if d.Flags().Has(catalog.FlagReadOnly) {
			continue
		}
		switch d.FullName() {
		case "FLUSHALL", "FLUSHDB", "SWAPDB":
			cc.flush()
			continue
		}
		cc.mu.Lock()
		visitKeys(d, words, cc.invalidateLocked)
		cc.mu.Unlock()
	}
}

// flush drops every entry, and the right to publish of every read in
// flight: a tracking connection ended, or the server invalidated all.
func (cc *clientCache) flush() {
	cc.mu.Lock()
	clear(cc.entries)
	clear(cc.byKey)
	clear(cc.slotHeads)
	clear(cc.nodeHeads)
	cc.gen++
	cc.mu.Unlock()
}

// close ends the cache: reads in flight are cancelled, nothing more is
// published.
func (cc *clientCache) close() {
	cc.mu.Lock()
	cc.closed = true
	for _, fl := range cc.flights {
		fl.retired = true
		fl.cancel(ErrClosed)
	}
	clear(cc.flights)
	clear(cc.reading)
	clear(cc.entries)
	clear(cc.byKey)
	clear(cc.slotHeads)
	clear(cc.nodeHeads)
	cc.mu.Unlock()
}

// dropRefsLocked drops the entries of refs, the list of a key that the
// caller has taken off byKey: each removal then leaves that list alone
// rather than search it, which for a key that many entries read (the
// pages of one sorted set) made dropping them all quadratic.
func (cc *clientCache) dropRefsLocked(refs []string) {
	for _, ek := range refs {
		if e := cc.entries[ek]; e != nil {
			cc.removeLocked(e)
		}
	}
}

// removeLocked drops entry e, its key references and its places on the
// lists.
func (cc *clientCache) removeLocked(e *cacheEntry) {
	ek := e.key
	delete(cc.entries, ek)
	cc.unindexLocked(e)
	for _, d := range e.deps {
		refs := cc.byKey[d]
		for i, r := range refs {
			if r == ek {
				refs[i] = refs[len(refs)-1]
				refs = refs[:len(refs)-1]
				break
			}
		}
		if len(refs) == 0 {
			delete(cc.byKey, d)
		} else {
			cc.byKey[d] = refs
		}
	}
}

// publishLocked stores fl's reply when nothing may have made it stale.
func (cc *clientCache) publishLocked(fl *cacheFlight, tracked bool) {
	if !tracked || fl.err != nil || fl.retired || fl.dirty || fl.gen != cc.gen || cc.closed {
		return
	}
	if old := cc.entries[fl.key]; old != nil {
		cc.removeLocked(old)
	}
	for len(cc.entries) >= cc.max {
		cc.evictLocked()
	}
	cc.tick++
	e := &cacheEntry{key: fl.key, r: fl.r, deps: fl.deps, used: cc.tick, node: fl.node, slot: fl.slot}
	if now := clock.NowStamp(); cc.ttl > 0 && int64(cc.ttl) <= math.MaxInt64-now {
		e.expires = now + int64(cc.ttl) // past the clock's range: none
	}
	if fl.expires != 0 && (e.expires == 0 || fl.expires < e.expires) {
		e.expires = fl.expires
	}
	cc.entries[fl.key] = e
	cc.indexLocked(e)
	for _, d := range fl.deps {
		cc.byKey[d] = append(cc.byKey[d], fl.key)
	}
}

// evictLocked removes the least recently used of up to evictSample
// entries; map iteration starts at a random place, so they are a sample.
func (cc *clientCache) evictLocked() {
	var (
		oldest *cacheEntry
		n      int
	)
	for _, e := range cc.entries {
		if oldest == nil || e.used < oldest.used {
			oldest = e
		}
		if n++; n == evictSample {
			break
		}
	}
	if oldest != nil {
		cc.removeLocked(oldest)
	}
}

// leave is a waiter of fl giving up for cause: the last one retires the
// flight and cancels its read with that cause, so that the next caller
// starts a read of its own.
func (cc *clientCache) leave(fl *cacheFlight, cause error) {
	cc.mu.Lock()
	fl.waiters--
	if fl.waiters == 0 && !fl.retired {
		fl.retired = true
		cc.endLocked(fl)
		fl.cancel(cause)
	}
	cc.mu.Unlock()
}

// cachedRead is a validated DoCached call.
type cachedRead struct {
	s     spec
	body  []byte   // the encoded command
	words [][]byte // its words
	deps  []string // its keys (produce)
	slot  int      // Cluster: the keys' slot
}

// DoCached is [Client.Do] for a read whose reply may come from the
// client-side cache ([Options.ClientCache]). A cached reply is returned
// without I/O until the server reports that one of the read's keys
// changed, the connection that tracked it ends, its TTL passes, or one of
// its keys expires (a miss reads each key's PTTL with the read).
// Concurrent callers of the same missing entry share one read (and its
// retries, counted once; its one [ProcessHook] call and duration record);
// a caller whose ctx ends leaves the others waiting, and the last one to
// leave cancels the read. A hit runs no hook, records nothing and does
// not look at ctx: it is returned even when ctx has ended.
//
// cmd must be a catalog command that only reads keys and whose reply
// depends on nothing else: GET, HGETALL, LRANGE, ZRANGE, SMEMBERS, MGET
// (one slot on a Cluster) and their kin. Commands with random or
// time-dependent replies (SRANDMEMBER, TTL, OBJECT IDLETIME, XPENDING...),
// blocking and cursor commands, and keyless commands fail with
// [ErrInvalidArgument] before any I/O. Error replies are returned, never
// cached. A hash field's expiry (Redis 7.4) does not end an entry: see
// docs/client-side-caching.md. The returned Reply may be shared with other callers: do not
// modify the slices of its Value.
func (c *Client) DoCached(ctx context.Context, cmd Command, args ...any) (Reply, error) {
	var stack [256]byte // a hit's encoded command stays here
	body, err := appendAnyCommand(stack[:0], cmd, args)
	if err != nil {
		return Reply{}, err
	}
	return c.doCached(ctx, cmd, body)
}

// GetCached is GET through the client-side cache ([Client.DoCached]): the
// value of key, or [ErrNil] when it does not exist.
func (c *Client) GetCached(ctx context.Context, key string) (string, error) {
	var stack [256]byte
	r, err := c.doCached(ctx, specGET.desc, appendCommand(stack[:0], specGET.desc, []string{key}))
	if err != nil {
		return "", err
	}
	return r.String()
}

// doCached is DoCached with the command encoded in body, which it does
// not keep.
func (c *Client) doCached(ctx context.Context, cmd Command, body []byte) (Reply, error) {
	switch {
	case c.cache == nil:
		return Reply{}, errInvalid("DoCached", "the client has no Options.ClientCache")
	case ctx == nil:
		return Reply{}, errNilContext(cmd.FullName())
	}
	if r, ok := c.cache.hit(body); ok {
		return r, nil // only validated reads are ever cached: body is one
	}
	// A miss keeps the command (and escape analysis would otherwise move
	// the caller's stack buffer to the heap on hits too).
	owned := bytes.Clone(body)
	var small [16][]byte
	d := dispatchOf(cmd, argWords(cmd, owned, small[:0]))
	if why := uncacheable(d); why != "" {
		return Reply{}, errInvalid(d.name, "not cacheable: "+why)
	}
	rd := cachedRead{s: spec{name: d.name, cat: d.category, desc: d.desc, tracked: true}, body: owned, slot: -1}
	rd.words = frameArgs(owned, small[:0])
	keys := 0
	visitKeys(d.desc, rd.words, func([]byte) { keys++ })
	if keys == 0 {
		return Reply{}, errInvalid(d.name, "not cacheable: it reads no key")
	}
	if c.isCluster() {
		slot, cross := keySlot(d.desc, rd.words)
		if cross {
			return Reply{}, &RouteError{Command: d.name, Slot: -1, Err: ErrCrossSlot}
		}
		rd.slot = slot
	}
	return c.cachedGet(ctx, &rd)
}

// uncacheable says why a command's reply cannot be cached, or "".
func uncacheable(d dispatch) string {
	switch {
	case d.refused != "":
		return "refused on the shared connection: " + d.refused
	case !d.known:
		return "the catalog does not know it"
	case d.flags.Has(catalog.FlagBlocking): // d.blocking implies it
		return "a blocking command"
	case !d.flags.Has(catalog.FlagReadOnly) || d.flags&(catalog.FlagWrite|catalog.FlagScripting|catalog.FlagCursor|catalog.FlagPubSub|catalog.FlagAdmin) != 0:
		return "not a plain read of keys"
	}
	switch d.name {
	case "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER", "TTL", "PTTL", "HTTL", "HPTTL", "XPENDING", "MEMORY USAGE", "DEBUG OBJECT":
		return "its reply changes without a write to its keys"
	case "TOUCH":
		return "what it is for is the server updating its keys' access time"
	case "SORT_RO":
		return "its BY and GET patterns read keys that are not tracked"
	}
	if strings.HasPrefix(d.name, "OBJECT ") || strings.HasPrefix(d.name, "XINFO ") {
		return "its reply changes without a write to its keys"
	}
	return ""
}

// hit returns the live entry of the encoded command body.
func (cc *clientCache) hit(body []byte) (Reply, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if e := cc.entries[string(body)]; e != nil && !cc.closed && (e.expires == 0 || clock.NowStamp() < e.expires) {
		cc.tick++
		e.used = cc.tick
		return e.r, true
	}
	return Reply{}, false
}

// cachedGet returns rd's entry, or waits for the one read of it.
func (c *Client) cachedGet(ctx context.Context, rd *cachedRead) (Reply, error) {
	cc := c.cache
	if err := ctx.Err(); err != nil {
		return Reply{}, &ContextError{Command: rd.s.name, Err: err}
	}
	cc.mu.Lock()
	if cc.closed || c.closed.Load() {
		cc.mu.Unlock()
		return Reply{}, &ConnError{Command: rd.s.name, Unwritten: true, Err: ErrClosed}
	}
	if e := cc.entries[string(rd.body)]; e != nil {
		if e.expires == 0 || clock.NowStamp() < e.expires {
			cc.tick++
			e.used = cc.tick
			r := e.r
			cc.mu.Unlock()
			return r, nil
		}
		cc.removeLocked(e)
	}
	fl := cc.flights[string(rd.body)]
	if fl != nil && (fl.dirty || fl.gen != cc.gen) {
		// Its reply may predate a write this caller has seen complete (an
		// invalidation, the caller's own write): a read of its own
		// replaces it for later callers; its waiters keep it.
		fl = nil
	}
	if fl == nil {
		fl = &cacheFlight{key: string(rd.body), gen: cc.gen, done: make(chan struct{})}
		visitKeys(rd.s.desc, rd.words, func(k []byte) { fl.deps = append(fl.deps, string(k)) })
		// The read belongs to every waiter: it keeps ctx's values (for
		// hooks) but not its cancellation or deadline, nor the
		// CommandTimeout (execResolved): only the last waiter leaving
		// ends it.
		var pctx context.Context
		pctx, fl.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
		cc.startLocked(fl)
		cc.wg.Add(1)
		// The read's goroutine gets its own copy of the command.
		go c.produce(pctx, fl, cachedRead{s: rd.s, body: []byte(fl.key), deps: fl.deps, slot: rd.slot})
	}
	fl.waiters++
	cc.mu.Unlock()
	// The read has no deadline of its own: each waiter waits until its
	// own, which is CommandTimeout when ctx has none, as for Do.
	var timeout <-chan time.Time
	if _, ok := ctx.Deadline(); !ok && c.cfg.commandTimeout > 0 {
		timer := time.NewTimer(c.cfg.commandTimeout)
		defer timer.Stop()
		timeout = timer.C
	}
	timedOut := false
	select {
	case <-fl.done:
		return fl.result()
	case <-ctx.Done():
	case <-c.done:
	case <-timeout:
		timedOut = true
	}
	select {
	case <-fl.done: // it completed as well: the reply is the caller's
		return fl.result()
	default:
	}
	var err error
	switch {
	case ctx.Err() != nil:
		err = &ContextError{Command: rd.s.name, Sent: true, Err: ctx.Err()}
	case timedOut:
		err = &ContextError{Command: rd.s.name, Sent: true, Err: context.DeadlineExceeded}
	default:
		err = &ConnError{Command: rd.s.name, Err: ErrClosed}
	}
	cc.leave(fl, err)
	return Reply{}, err
}

// produce runs fl's read, with its CLIENT CACHING prelude, under the retry
// policy (redirects and resends carry the prelude too), then publishes
// the reply and wakes the waiters.
func (c *Client) produce(ctx context.Context, fl *cacheFlight, rd cachedRead) {
	defer c.cache.wg.Done()
	defer fl.cancel(nil)
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var (
		r        Reply
		tracked  bool
		expires  int64
		from     *route.Node
		panicked any
	)
	err := func() (err error) {
		// A hook's panic here would end the process, out of its
		// callers' reach: it goes to the waiters instead.
		defer func() {
			if p := recover(); p != nil {
				panicked, err = p, fmt.Errorf("a process hook panicked: %v", p)
			}
		}()
		return c.processHooked(ctx, rd.s.name, rd.s.cat, func(ctx context.Context) error {
			var err error
			r, tracked, expires, from, err = c.execCached(ctx, &rd)
			return err
		})
	}()
	if err != nil && panicked == nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		// Its last waiter left at its deadline: the read timed out.
		err = &ContextError{Command: rd.s.name, Sent: true, Err: context.DeadlineExceeded}
	}
	if c.cmdMetrics != nil {
		c.recordCommand(&rd.s, began, err)
	}
	cc := c.cache
	cc.mu.Lock()
	cc.endLocked(fl)
	if err != nil && cc.closed {
		// Close cancelled the read: its waiters learn why.
		err = &ConnError{Command: rd.s.name, Err: ErrClosed}
	}
	fl.r, fl.err, fl.panicked, fl.expires = r, err, panicked, expires
	if tracked && c.isCluster() {
		// Only the node that answered tracks the read's keys: if the map
		// moved the slot away from it, nothing would report a write to
		// them (dropSlots).
		n, err := c.topo.Pick(rd.slot, false)
		tracked = err == nil && n == from
		if tracked {
			// Its entry goes with the node's tracking (dropNode) and
			// with its slot's move (dropSlots).
			fl.node, fl.slot = from.Addr, rd.slot
		}
	}
	cc.publishLocked(fl, tracked)
	close(fl.done)
	cc.mu.Unlock()
}

// execCached sends the prelude, rd's read and the PTTL of each of its keys
// as one frame, to the primary that serves rd's keys. tracked is false
// when the reply was served without the prelude (after an ASK redirect,
// or refused by an ACL without CLIENT CACHING) or a key's time to live
// is unknown (a PTTL failed); expires is the
// clock stamp by which a key expires, 0 when none does; from is the node
// that answered (nil off a topology).
func (c *Client) execCached(ctx context.Context, rd *cachedRead) (r Reply, tracked bool, expires int64, from *route.Node, err error) {
	f := c.frames.Get()
	f.Buf = append(append(f.Buf, cachingPrelude...), rd.body...)
	for _, k := range rd.deps {
		f.Buf = appendCommand(f.Buf, specPTTL.desc, []string{k})
	}
	f.Want, f.Replies, f.Prelude = wire.WantValue, 2+len(rd.deps), 1
	s := rd.s
	var t *target
	if c.topo != nil {
		t = &target{slot: rd.slot} // never a replica: its tracking is the primary's
	}
	// Before the send: the times to live count from a moment no later
	// than the server's reading of them.
	sent := clock.NowStamp()
	if err := c.execResolved(ctx, f, &s, t); err != nil {
		return Reply{}, false, 0, nil, err
	}
	r = Reply{v: f.Values[0]} // owned: the frame's arena is not reused
	tracked = !f.IsErr        // a refused prelude (see refusedPrelude): untracked
	for _, v := range f.Values[1:] {
		switch {
		case v.Type != resp.Integer:
			tracked = false // a failed PTTL (an ACL without it): uncachable
		case v.Int >= 0 && v.Int <= (math.MaxInt64-sent)/int64(time.Millisecond):
			if at := sent + v.Int*int64(time.Millisecond); expires == 0 || at < expires {
				expires = max(at, 1)
			}
		}
		// -1: no expiry; -2: no key, whose creation is invalidated.
	}
	f.Release()
	if t == nil {
		return r, tracked, expires, nil, nil
	}
	return r, tracked && !t.untracked, expires, t.served, nil
}
