package respire

// Chaos on a real server for multi-command units: batches, unwatched
// transactions, single calls and watched transactions share one client
// while network partitions, a sleeping server and callers that give up at
// random moments happen around them. Whatever fails, every member gets
// its own reply or an error, never another command's reply, and every
// INCR ran at most once, and surely when it reported success.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
)

// counterBase separates the per-goroutine INCR counters: counter g starts
// at g*counterBase, so that a reply of another counter is out of range.
const counterBase = 1_000_000_000

// TestChaosUnitsKeepTheirOwnReplies runs, for chaosDuration on one client
// through the fault proxy: batches (1 to 50 members, new or reused) and
// transactions (1 to 20) of GET, ECHO and INCR of a counter per
// goroutine; single GET and ECHO calls; and Watch calls that read a
// shared counter and queue its INCR. Units and single calls run under a
// context that cannot end, ends 0.1 to 5 ms later, or is cancelled by a
// timer goroutine; Watch calls under one that always ends. It checks:
//
//  1. a member or call that succeeded got its own value (GET its key's
//     value, ECHO its token, INCR an integer of its own counter), also
//     when its unit's Execute failed; a failure is a context's end or a
//     lost connection, never a conversion error of another reply;
//  2. the INCRs of one transaction are consecutive (EXEC's array in queue
//     order, atomic);
//  3. a goroutine's successful INCR replies strictly increase, and its
//     counter moved by at least the successful INCRs and at most those
//     plus the failed ones that may have run (MayHaveExecuted);
//  4. the watched counter moved likewise by the committed Watch calls,
//     each of whose INCR returned the value it read plus one;
//  5. afterwards, 1000 concurrent GETs and a batch of 100 ECHOs get their
//     own replies;
//  6. every kind of success and failure happened often enough to count.
func TestChaosUnitsKeepTheirOwnReplies(t *testing.T) {
	const (
		batchers = 6
		txers    = 4
		singles  = 12
		watchers = 3
		nkeys    = 64
	)
	addr, proxy, client := chaosClient(t)
	ctx := testCtx(t)
	keys, values := make([]string, nkeys), make([]string, nkeys)
	for i := range keys {
		keys[i], values[i] = key(t, "get", strconv.Itoa(i)), "value-"+strconv.Itoa(i)
		if err := client.Set(ctx, keys[i], values[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Counters 1..batchers for the batch goroutines, then one per
	// transaction goroutine; each starts at its base.
	counters := make([]*unitCounter, 1+batchers+txers)
	for g := 1; g < len(counters); g++ {
		counters[g] = &unitCounter{key: key(t, "counter", strconv.Itoa(g)), base: int64(g) * counterBase}
		if err := client.Set(ctx, counters[g].key, strconv.FormatInt(counters[g].base, 10)); err != nil {
			t.Fatal(err)
		}
	}
	watched := key(t, "watched")
	if err := client.Set(ctx, watched, "0"); err != nil {
		t.Fatal(err)
	}

	var bad violations
	var batches, txs, single, watches outcomes
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Quiet periods: the first goroutine of each kind is lone, the others
	// pause while quiet is locked, so that the connection is often idle
	// and a call whose context cannot end writes and reads its own frame
	// while the lone callers' cancellable calls go through the reader
	// goroutine.
	var quiet sync.RWMutex
	enter := func(lone bool) func() {
		if lone {
			return func() {}
		}
		quiet.RLock()
		return quiet.RUnlock
	}
	wg.Go(func() {
		for !stopped(stop) {
			select { // pacing: busy, then quiet
			case <-time.After(200 * time.Millisecond):
			case <-stop:
				return
			}
			quiet.Lock()
			select {
			case <-time.After(200 * time.Millisecond):
			case <-stop:
			}
			quiet.Unlock()
		}
	})
	unitLoop := func(g int, tx, lone bool, res *outcomes) {
		r := rand.New(rand.NewPCG(uint64(g), 0x6368616f73)) // fixed seed per goroutine
		c := counters[g]
		unit, prefix, maxSize := "batch", "b", 50
		if tx {
			unit, prefix, maxSize = "transaction", "t", 20
		}
		var b *Batch
		var ms []unitMember
		for n := 0; !stopped(stop); n++ {
			switch {
			case tx:
				b = client.NewTransaction()
			case b == nil || r.IntN(2) == 0:
				b = client.NewBatch()
			default:
				b.Reset() // a reused batch keeps its reply memory
			}
			ms = ms[:0]
			for i := range 1 + r.IntN(maxSize) {
				switch r.IntN(3) {
				case 0:
					k := r.IntN(nkeys)
					ms = append(ms, unitMember{kind: memberGet, name: "GET " + keys[k], want: values[k], str: b.Get(keys[k])})
				case 1:
					tok := fmt.Sprintf("%s%d-%d-%d", prefix, g, n, i)
					ms = append(ms, unitMember{kind: memberEcho, name: "ECHO " + tok, want: tok, echo: b.Do(catalog.Conn.ECHO(), tok)})
				default:
					ms = append(ms, unitMember{kind: memberIncr, name: "INCR " + c.key, ctr: c, num: b.Incr(c.key)})
				}
			}
			leave := enter(lone)
			cctx, cancel := chaosCtx(r)
			err := b.Execute(cctx)
			cancel()
			leave()
			res.record(&bad, unit, err)
			checkUnit(&bad, unit, tx, ms, err, nil)
		}
	}
	for g := 1; g <= batchers; g++ {
		wg.Go(func() { unitLoop(g, false, g == 1, &batches) })
	}
	for g := batchers + 1; g <= batchers+txers; g++ {
		wg.Go(func() { unitLoop(g, true, g == batchers+1, &txs) })
	}

	for g := range singles {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(100+g), 0x6368616f73))
			for n := 0; !stopped(stop); n++ {
				leave := enter(g == 0)
				cctx, cancel := chaosCtx(r)
				var got, want, name string
				var err error
				if r.IntN(2) == 0 {
					k := r.IntN(nkeys)
					name, want = "GET "+keys[k], values[k]
					got, err = client.Get(cctx, keys[k])
				} else {
					want = fmt.Sprintf("s%d-%d", g, n)
					name = "ECHO " + want
					// The raw command is never resent; the catalog's is.
					cmd := catalog.Conn.ECHO()
					if n%2 == 0 {
						cmd = NewCommand("ECHO")
					}
					var rep Reply
					if rep, err = client.Do(cctx, cmd, want); err == nil {
						got, err = rep.String()
					}
				}
				cancel()
				leave()
				single.record(&bad, "single call", err)
				if err == nil && got != want {
					bad.add("single call: another command's reply", "%s = %q, want %q", name, got, want)
				}
			}
		})
	}

	var watchOK, watchUnsure atomic.Int64
	for g := range watchers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(200+g), 0x6368616f73))
			for !stopped(stop) {
				// Always cancellable: a dedicated connection caught in a
				// partition waits for its context.
				cctx, cancel := context.WithTimeout(context.Background(), randDuration(r, 2*time.Millisecond, 300*time.Millisecond))
				if r.IntN(2) == 0 {
					// Cancelled by a timer goroutine, before the deadline.
					time.AfterFunc(randDuration(r, time.Millisecond, 100*time.Millisecond), cancel)
				}
				var read int64
				var incr Future[int64]
				err := client.Watch(cctx, func(tx *Tx) error {
					incr = Future[int64]{} // of this run of the callback only
					s, err := tx.Get(cctx, watched)
					if err != nil {
						return err
					}
					if read, err = strconv.ParseInt(s, 10, 64); err != nil {
						bad.add("watch: another command's reply", "GET %s = %q, want an integer", watched, s)
						return err
					}
					incr = tx.Queue().Incr(watched)
					return nil
				}, watched)
				cancel()
				switch {
				case err == nil:
					watchOK.Add(1)
					if v, ierr := incr.Result(); ierr != nil || v != read+1 {
						bad.add("watch: committed INCR not its own reply", "INCR %s = %d, %v after GET = %d; want %d", watched, v, ierr, read, read+1)
					}
				case errors.Is(err, ErrTxConflict), errors.Is(incr.Err(), ErrNotExecuted):
					// Nothing was applied: Watch gives the queue's members
					// a result only once it sent MULTI ... EXEC (watch.go).
				case MayHaveExecuted(err):
					watchUnsure.Add(1)
				}
				watches.record(&bad, "watch", err)
			}
		})
	}

	faultsDone := make(chan error, 1)
	go func() { faultsDone <- chaosFaults(t, proxy, addr, client, keys[0], values[0]) }()
	if err := <-faultsDone; err != nil {
		t.Errorf("fault injection: %v", err)
	}
	close(stop)
	wg.Wait()

	// Invariant 3: each counter moved by its successful INCRs plus at
	// most the ones that may have run.
	for g := 1; g < len(counters); g++ {
		c := counters[g]
		got, err := client.Get(ctx, c.key)
		if err != nil {
			t.Fatalf("GET %s: %v", c.key, err)
		}
		n, err := strconv.ParseInt(got, 10, 64)
		if err != nil {
			t.Fatalf("GET %s = %q: %v", c.key, got, err)
		}
		if d, ok, unsure := n-c.base, c.ok.Load(), c.unsure.Load(); d < ok || d > ok+unsure {
			bad.add("INCR applied a wrong number of times", "%s moved by %d; %d INCRs succeeded, %d may have run", c.key, d, ok, unsure)
		}
	}
	// Invariant 4: the watched counter moved by the committed Watch calls
	// plus at most those that failed after their EXEC may have been sent.
	if got, err := client.Get(ctx, watched); err != nil {
		t.Fatalf("GET %s: %v", watched, err)
	} else if n, err := strconv.ParseInt(got, 10, 64); err != nil {
		t.Fatalf("GET %s = %q: %v", watched, got, err)
	} else if ok, unsure := watchOK.Load(), watchUnsure.Load(); n < ok || n > ok+unsure {
		bad.add("watched INCR applied a wrong number of times", "%s = %d; %d Watch calls committed, %d may have", watched, n, ok, unsure)
	}
	bad.report(t)

	t.Logf("batches %v; transactions %v; single calls %v; watches %v", &batches, &txs, &single, &watches)
	var incrOK, incrUnsure int64
	for _, c := range counters[1:] {
		incrOK, incrUnsure = incrOK+c.ok.Load(), incrUnsure+c.unsure.Load()
	}
	t.Logf("INCR members ok %d, may have run %d; Watch committed %d, may have %d", incrOK, incrUnsure, watchOK.Load(), watchUnsure.Load())

	// Invariant 6: the run exercised every path it claims to prove.
	for _, m := range []struct {
		what string
		got  int64
		min  int64
	}{
		{"successful batches", batches.ok.Load(), 20},
		{"batches ended by their deadline", batches.fail[failDeadline].Load(), 5},
		{"batches cancelled", batches.fail[failCanceled].Load(), 5},
		{"batches abandoned in flight", batches.inFlight.Load(), 5},
		{"successful transactions", txs.ok.Load(), 20},
		{"transactions ended by their deadline", txs.fail[failDeadline].Load(), 5},
		{"transactions cancelled", txs.fail[failCanceled].Load(), 5},
		{"transactions abandoned in flight", txs.inFlight.Load(), 5},
		{"units that lost their connection", batches.fail[failConn].Load() + txs.fail[failConn].Load(), 1},
		{"successful single calls", single.ok.Load(), 100},
		{"failed single calls", single.failed(), 10},
		{"committed Watch calls", watchOK.Load(), 3},
		{"failed Watch calls", watches.failed(), 1},
		{"successful INCR members", incrOK, 20},
	} {
		if m.got < m.min {
			t.Errorf("%d %s, want at least %d: the run proved too little", m.got, m.what, m.min)
		}
	}

	// Invariant 5: the client serves its own replies after the chaos.
	concurrentOwnReplies(t, client, 1000)
	b := client.NewBatch()
	echoes := make([]Future[Reply], 100)
	for i := range echoes {
		echoes[i] = b.Do(catalog.Conn.ECHO(), "after-"+strconv.Itoa(i))
	}
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("batch of 100 ECHOs after the chaos: %v", err)
	}
	for i, f := range echoes {
		rep, err := f.Result()
		got, cerr := rep.String()
		if want := "after-" + strconv.Itoa(i); err != nil || cerr != nil || got != want {
			t.Fatalf("ECHO member %d after the chaos = %q, %v, %v; want %q", i, got, err, cerr, want)
		}
	}
}

// unitCounter is the INCR counter of one goroutine: its successful
// INCRs, those that failed but may have run, and the last reply.
type unitCounter struct {
	key        string
	base       int64
	ok, unsure atomic.Int64
	last       int64 // only its goroutine touches it
}

// unitMember is one queued member and the reply it must get: want for a
// GET or ECHO, want's words for an MGET, an increasing integer of its
// counter ctr for an INCR.
type unitMember struct {
	kind memberKind
	name string
	want string
	ctr  *unitCounter   // memberIncr
	str  Future[string] // memberGet
	echo Future[Reply]  // memberEcho, memberMGet
	num  Future[int64]  // memberIncr
}

type memberKind int

const (
	memberGet memberKind = iota
	memberEcho
	memberIncr
	memberMGet
)

// checkUnit checks the members of one executed unit against invariants 1
// to 3 and counts its INCRs on their counters. A member may fail only as
// endedByFailure allows, or as also (when not nil) allows for its kind.
func checkUnit(bad *violations, unit string, tx bool, ms []unitMember, execErr error, also func(memberKind, error) bool) {
	var prevIncr map[*unitCounter]int64 // each counter's previous reply in this transaction
	for i := range ms {
		m := &ms[i]
		var got string
		var n int64
		var err error
		switch m.kind {
		case memberIncr:
			n, err = m.num.Result()
		case memberEcho, memberMGet:
			var rep Reply
			if rep, err = m.echo.Result(); err == nil && m.kind == memberEcho {
				got, err = rep.String()
			} else if err == nil {
				var words []string
				words, err = rep.Strings()
				got = strings.Join(words, " ")
			}
		default:
			got, err = m.str.Result()
		}
		switch {
		case err != nil && execErr == nil:
			bad.add(unit+": a member failed although its unit ran", "member %d %s: %v", i, m.name, err)
		case err != nil:
			if !endedByFailure(err) && (also == nil || !also(m.kind, err)) {
				bad.add(unit+": a member failed with an error of another command", "member %d %s: %v (Execute: %v)", i, m.name, err, execErr)
			}
			if m.kind == memberIncr && MayHaveExecuted(err) {
				m.ctr.unsure.Add(1)
			}
		case m.kind == memberIncr:
			c := m.ctr
			c.ok.Add(1)
			prev, inTx := prevIncr[c]
			switch {
			case n <= c.base || n >= c.base+counterBase:
				bad.add(unit+": INCR got another command's reply", "member %d %s = %d, outside its counter's range (Execute: %v)", i, m.name, n, execErr)
			case n <= c.last:
				bad.add(unit+": INCR replies not strictly increasing", "member %d %s = %d after %d (Execute: %v)", i, m.name, n, c.last, execErr)
			case tx && inTx && n != prev+1:
				bad.add(unit+": INCRs of one transaction not consecutive", "member %d %s = %d after %d in the same EXEC", i, m.name, n, prev)
			}
			if tx {
				if prevIncr == nil {
					prevIncr = map[*unitCounter]int64{}
				}
				prevIncr[c] = n
			}
			c.last = max(c.last, n)
		case got != m.want:
			bad.add(unit+": a member got another command's reply", "member %d %s = %q, want %q (Execute: %v)", i, m.name, got, m.want, execErr)
		}
	}
}

// chaosCtx returns, at random, a context that is not cancellable, one
// whose deadline is 0.1 to 5 ms away (it ends mid-flight), or one that a
// timer goroutine cancels 0 to 5 ms from now.
func chaosCtx(r *rand.Rand) (context.Context, context.CancelFunc) {
	switch r.IntN(3) {
	case 0:
		return context.Background(), func() {}
	case 1:
		return context.WithTimeout(context.Background(), randDuration(r, 100*time.Microsecond, 5*time.Millisecond))
	}
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(randDuration(r, 0, 5*time.Millisecond), cancel)
	return ctx, func() { timer.Stop(); cancel() }
}

// randDuration returns a duration uniform in [lo, hi).
func randDuration(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// The kinds of failure a chaotic call may end with.
const (
	failDeadline = iota // its context's deadline (or CommandTimeout)
	failCanceled        // its context was cancelled
	failConn            // its connection was lost
	failKinds
)

// endedByFailure reports whether err is one of the failures chaos may
// cause: a context that ended, a lost connection, a conflict of a
// watched transaction. Anything else (a conversion error, a server error)
// would be another command's reply.
func endedByFailure(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrTxConflict)
}

// outcomes counts how the calls of one kind ended.
type outcomes struct {
	ok       atomic.Int64
	fail     [failKinds]atomic.Int64
	inFlight atomic.Int64 // failures after the unit may have been sent
	conflict atomic.Int64
	// also, when set before the calls start, allows further failures:
	// those a Cluster's topology change causes, counted as other.
	also  func(error) bool
	other atomic.Int64
}

// record counts err; an error that chaos cannot cause is a violation.
func (o *outcomes) record(bad *violations, what string, err error) {
	switch {
	case err == nil:
		o.ok.Add(1)
		return
	case errors.Is(err, context.Canceled):
		o.fail[failCanceled].Add(1)
	case errors.Is(err, context.DeadlineExceeded):
		o.fail[failDeadline].Add(1)
	case errors.Is(err, ErrConnectionLost):
		o.fail[failConn].Add(1)
	case errors.Is(err, ErrTxConflict):
		o.conflict.Add(1)
	case o.also != nil && o.also(err):
		o.other.Add(1)
	default:
		bad.add(what+": failed with an error chaos cannot cause", "%v", err)
	}
	if MayHaveExecuted(err) {
		o.inFlight.Add(1)
	}
}

// total counts every call that ended.
func (o *outcomes) total() int64 { return o.ok.Load() + o.failed() }

func (o *outcomes) failed() int64 {
	var n int64
	for i := range o.fail {
		n += o.fail[i].Load()
	}
	return n + o.conflict.Load() + o.other.Load()
}

func (o *outcomes) String() string {
	s := fmt.Sprintf("ok %d, deadline %d, cancelled %d, connection lost %d, conflict %d",
		o.ok.Load(), o.fail[failDeadline].Load(), o.fail[failCanceled].Load(), o.fail[failConn].Load(), o.conflict.Load())
	if o.also != nil {
		s += fmt.Sprintf(", topology %d", o.other.Load())
	}
	return s + fmt.Sprintf(" (may have run %d)", o.inFlight.Load())
}

// violations records broken invariants: how often each, and its first
// example.
type violations struct {
	mu    sync.Mutex
	n     map[string]int
	first map[string]string
}

func (v *violations) add(invariant, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.n == nil {
		v.n, v.first = map[string]int{}, map[string]string{}
	}
	if v.n[invariant]++; v.n[invariant] == 1 {
		v.first[invariant] = fmt.Sprintf(format, args...)
	}
}

func (v *violations) report(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, inv := range slices.Sorted(maps.Keys(v.n)) {
		t.Errorf("%s: %d times, first: %s", inv, v.n[inv], v.first[inv])
	}
}
