package route

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Kind names a topology.
type Kind uint8

// Topology kinds.
const (
	KindCluster Kind = iota + 1
	KindSentinel
)

// ReadPolicy selects the nodes that serve read-only commands.
type ReadPolicy uint8

// Read policies; see respire.ReadPolicy.
const (
	ReadPrimary ReadPolicy = iota
	ReadReplica
	ReadPrimaryPreferred
	ReadReplicaPreferred
)

// Errors of routing, reported to the command that could not be routed.
var (
	// ErrNoRoute: no node serves the command's slot (the cluster lost it,
	// or the map has not been learnt).
	ErrNoRoute = errors.New("no node serves the slot")
	// ErrNoReplica: ReadReplica found no replica for the command.
	ErrNoReplica = errors.New("no replica is known")
)

// Topology routes commands to the nodes of a Sentinel group or a Cluster.
// Pick never blocks: it reads the current immutable snapshot. Refreshes
// build a new snapshot and swap it in.
type Topology interface {
	// Kind reports the topology's kind.
	Kind() Kind
	// Pick returns the node for one attempt of a command whose keys hash
	// to slot (-1: no keys, any primary). read marks a read-only command
	// the read policy may send to a replica.
	Pick(slot int, read bool) (*Node, error)
	// Primaries returns every primary of the current snapshot.
	Primaries() []*Node
	// Replicas returns every replica of the current snapshot.
	Replicas() []*Node
	// Moved records a MOVED redirect (slot now served by addr) and
	// returns the new owner; it also asks for a refresh.
	Moved(slot int, addr string) (*Node, error)
	// Ask returns the primary node at addr, the target of an ASK redirect.
	Ask(addr string) (*Node, error)
	// At returns the known node at addr in whatever role the topology
	// knows it (a replica keeps its replica connection), or, for an
	// address it does not know, a primary node there.
	At(addr string) (*Node, error)
	// Refresh asks for a refresh of the topology. With wait it returns
	// once a refresh that started after the call has ended (its error),
	// or when ctx ends (ctx.Err()).
	Refresh(ctx context.Context, wait bool) error
	// Close stops the background work and closes every node.
	Close() error
}

// refresher runs one topology's refreshes on a goroutine of its own: on
// request (debounced: at most one start per minGap) and every interval,
// jittered. Requests never block.
type refresher struct {
	do       func(ctx context.Context) error
	interval time.Duration // 0: no periodic refresh
	minGap   time.Duration

	kick   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	next *round // completes with the next refresh to start

	// noReplicaAt is when (Unix nanoseconds) a read that found no replica
	// last asked for a refresh.
	noReplicaAt atomic.Int64
}

// round is one refresh; done closes when it ends, with err set.
type round struct {
	done chan struct{}
	err  error
}

func newRefresher(do func(ctx context.Context) error, interval, minGap time.Duration) *refresher {
	r := &refresher{do: do, interval: interval, minGap: minGap, kick: make(chan struct{}, 1), next: &round{done: make(chan struct{})}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// start runs the loop; the first refresh (Connect's) has already been done.
func (r *refresher) start() {
	r.wg.Add(1)
	go r.loop()
}

func (r *refresher) request(ctx context.Context, wait bool) error {
	r.mu.Lock()
	next := r.next
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
	if !wait {
		return nil
	}
	select {
	case <-next.done:
		return next.err
	case <-ctx.Done():
		return ctx.Err()
	case <-r.ctx.Done():
		return errClosed
	}
}

var errClosed = errors.New("the client is closed")

// noReplicaGap spaces the refreshes that reads finding no replica ask for.
const noReplicaGap = time.Second

// refusedReplicasGap replaces noReplicaGap while the sentinel refuses
// SENTINEL REPLICAS by ACL (NOPERM): the refusal does not pass by itself,
// and asking once a second would only repeat it (as the watch's
// refusedWatchBackoffMax).
const refusedReplicasGap = 30 * time.Second

// wantsReplica reports whether a read (read) under p found no replica it
// would have used: ReadReplica fails, ReadReplicaPreferred reads from the
// primary. The topology may list one again: see refresher.noReplica.
func wantsReplica(replicas []*Node, read bool, p ReadPolicy) bool {
	return read && len(replicas) == 0 && (p == ReadReplica || p == ReadReplicaPreferred)
}

// noReplica asks for a refresh for a read that found no replica, at most
// once per gap (noReplicaGap, unless the topology knows that asking again
// soon would not help): a shard or group without replicas must not have
// every read start one.
func (r *refresher) noReplica(gap time.Duration) {
	now := time.Now().UnixNano()
	if last := r.noReplicaAt.Load(); now-last >= int64(gap) && r.noReplicaAt.CompareAndSwap(last, now) {
		_ = r.request(context.Background(), false)
	}
}

func (r *refresher) loop() {
	defer r.wg.Done()
	last := time.Now()
	for {
		var tick <-chan time.Time
		var t *time.Timer
		if r.interval > 0 {
			t = time.NewTimer(jitter(r.interval))
			tick = t.C
		}
		select {
		case <-r.kick:
		case <-tick:
		case <-r.ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
		if gap := r.minGap - time.Since(last); gap > 0 && r.ctx.Err() == nil {
			w := time.NewTimer(gap)
			select {
			case <-w.C:
			case <-r.ctx.Done():
				w.Stop()
			}
		}
		r.mu.Lock()
		cur := r.next
		r.next = &round{done: make(chan struct{})}
		r.mu.Unlock()
		if r.ctx.Err() != nil {
			cur.err = errClosed
			close(cur.done)
			return
		}
		last = time.Now()
		cur.err = r.do(r.ctx)
		close(cur.done)
	}
}

func (r *refresher) stop() {
	r.cancel()
	r.wg.Wait()
}
