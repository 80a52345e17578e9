package route

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/wire"
)

// ClusterConfig configures a [Cluster].
type ClusterConfig struct {
	Nodes Config
	// Seeds are asked, after the known primaries and replicas, for the
	// slot map.
	Seeds []string
	// Refresh is the periodic refresh interval; 0 disables it.
	Refresh time.Duration
	// Read is the read policy.
	Read ReadPolicy
	// TLS selects the nodes' tls-port from CLUSTER SHARDS.
	TLS bool
	// QueryTimeout bounds asking one node for the map.
	QueryTimeout time.Duration
	// OnMoved, when set, is told of the slots whose primary changed, once
	// the map that moves them is in use (a refresh, or a MOVED redirect);
	// the first map moves nothing. It must not block.
	OnMoved func(slots []int)
}

// Cluster routes by hash slot over a Redis Cluster's slot map, held as an
// immutable snapshot: picking is an array index and an atomic load.
type Cluster struct {
	cfg   ClusterConfig
	nodes *nodes
	snap  atomic.Pointer[clusterSnap]
	ref   *refresher
	// swap serializes the changes of snap that register or retire nodes
	// (Moved, install), so that a MOVED never installs a node that a
	// concurrent refresh has just retired.
	swap sync.Mutex
}

// clusterSnap is one immutable slot map.
type clusterSnap struct {
	owner  [Slots]int16 // index into shards, -1: uncovered
	shards []*shardNodes
}

type shardNodes struct {
	primary  *Node
	replicas []*Node
}

// minClusterRefreshGap debounces refreshes asked for by MOVED replies and
// lost nodes.
const minClusterRefreshGap = 100 * time.Millisecond

// errNoSlots rejects a slot map in which no node serves any slot.
var errNoSlots = fmt.Errorf("%w: no node serves any slot", ErrBadTopology)

// ErrNotCluster reports a seed that is not in cluster mode.
var ErrNotCluster = errors.New("the server is not in cluster mode")

// NewCluster learns the slot map from the seeds (within ctx) and starts
// the periodic refresh. It fails when no seed gives a valid map; an error
// wrapping [ErrNotCluster] means a seed answered that it is not a cluster.
func NewCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	c := &Cluster{cfg: cfg}
	c.nodes = newNodes(cfg.Nodes, func(*Node) { c.ref.request(context.Background(), false) })
	empty := &clusterSnap{}
	for i := range empty.owner {
		empty.owner[i] = -1
	}
	c.snap.Store(empty)
	c.ref = newRefresher(c.refresh, cfg.Refresh, minClusterRefreshGap)
	if err := c.refresh(ctx); err != nil {
		_ = c.nodes.close()
		return nil, err
	}
	c.ref.start()
	return c, nil
}

// Kind returns KindCluster.
func (c *Cluster) Kind() Kind { return KindCluster }

// Pick returns the owner of slot, or a replica of it for a read under a
// replica read policy. A read whose shard has no replica (ReadReplica,
// ReadReplicaPreferred) asks for a refresh, at most once a second: the
// cluster may list one again.
func (c *Cluster) Pick(slot int, read bool) (*Node, error) {
	s := c.snap.Load()
	if slot < 0 {
		// A command without keys goes to one stable primary (its reads
		// may follow the read policy), so that its retry reaches the
		// same node and its connection stays warm.
		if len(s.shards) == 0 {
			return nil, ErrNoRoute
		}
		sh := s.shards[0]
		if i := s.owner[0]; i >= 0 {
			sh = s.shards[i] // the owner of slot 0: the same node across refreshes
		}
		return c.pickIn(sh, read)
	}
	i := s.owner[slot]
	if i < 0 {
		c.ref.request(context.Background(), false)
		return nil, ErrNoRoute
	}
	return c.pickIn(s.shards[i], read)
}

// pickIn applies the read policy to sh; a read that finds no replica
// asks for a refresh.
func (c *Cluster) pickIn(sh *shardNodes, read bool) (*Node, error) {
	if wantsReplica(sh.replicas, read, c.cfg.Read) {
		c.ref.noReplica(noReplicaGap)
	}
	return pickIn(sh.primary, sh.replicas, read, c.cfg.Read)
}

// pickIn applies the read policy to one primary and its replicas. A
// replica the client cannot reach now (no live connection, last dial
// failed) is chosen only when every replica is so and the policy has no
// other node: ReadReplicaPreferred then reads from the primary.
func pickIn(primary *Node, replicas []*Node, read bool, p ReadPolicy) (*Node, error) {
	if !read || p == ReadPrimary {
		return primary, nil
	}
	switch p {
	case ReadReplica:
		if len(replicas) == 0 {
			return nil, ErrNoReplica
		}
		if n := upReplica(replicas); n != nil {
			return n, nil
		}
		return replicas[rand.IntN(len(replicas))], nil
	case ReadReplicaPreferred:
		if n := upReplica(replicas); n != nil {
			return n, nil
		}
	case ReadPrimaryPreferred:
		if len(replicas) > 0 && primary.EP.Down() {
			// Redialed in the background: a read-only workload would
			// otherwise never dial it again, and stay on the replicas.
			primary.EP.Redial()
			if n := upReplica(replicas); n != nil {
				return n, nil
			}
			return replicas[rand.IntN(len(replicas))], nil
		}
	}
	return primary, nil
}

// upReplica returns a random replica that is not known to be down, or nil.
// A down replica it passes over is redialed in the background, so that it
// serves reads again once it answers.
func upReplica(replicas []*Node) *Node {
	if len(replicas) == 0 {
		return nil
	}
	start := rand.IntN(len(replicas))
	for i := range replicas {
		n := replicas[(start+i)%len(replicas)]
		if !n.EP.Down() {
			return n
		}
		n.EP.Redial()
	}
	return nil
}

// Replicas returns every replica of the current map.
func (c *Cluster) Replicas() []*Node {
	var out []*Node
	for _, sh := range c.snap.Load().shards {
		out = append(out, sh.replicas...)
	}
	return out
}

// Primaries returns every primary of the current map that serves a slot:
// a node a MOVED made a primary keeps its place in the map after its
// slots went elsewhere, until the next refresh, but is not listed.
func (c *Cluster) Primaries() []*Node {
	s := c.snap.Load()
	serves := make([]bool, len(s.shards))
	for _, o := range s.owner {
		if o >= 0 {
			serves[o] = true
		}
	}
	out := make([]*Node, 0, len(s.shards))
	for i, sh := range s.shards {
		if serves[i] {
			out = append(out, sh.primary)
		}
	}
	return out
}

// Moved makes addr the owner of slot in a new snapshot and asks for a
// refresh, which learns the rest of the change.
func (c *Cluster) Moved(slot int, addr string) (*Node, error) {
	if slot < 0 || slot >= Slots {
		return nil, ErrBadRedirect
	}
	c.swap.Lock()
	changed := true
	n, err := c.nodes.get(addr, false)
	if err != nil {
		c.swap.Unlock()
		return nil, err
	}
	for {
		old := c.snap.Load()
		if i := old.owner[slot]; i >= 0 && old.shards[i].primary == n {
			changed = false
			break // another caller recorded it already
		}
		s := &clusterSnap{owner: old.owner, shards: old.shards}
		idx := -1
		for i, sh := range old.shards {
			if sh.primary == n {
				idx = i
			}
		}
		if idx < 0 {
			s.shards = append(old.shards[:len(old.shards):len(old.shards)], &shardNodes{primary: n})
			idx = len(s.shards) - 1
		}
		s.owner[slot] = int16(idx)
		if c.snap.CompareAndSwap(old, s) {
			break
		}
	}
	c.swap.Unlock()
	if f := c.cfg.OnMoved; f != nil && changed {
		f([]int{slot})
	}
	c.ref.request(context.Background(), false)
	return n, nil
}

// Ask returns the primary node at addr.
func (c *Cluster) Ask(addr string) (*Node, error) { return c.nodes.get(addr, false) }

// At returns the known node at addr (a replica one first), or a primary one.
func (c *Cluster) At(addr string) (*Node, error) { return c.nodes.at(addr) }

// Refresh asks for a new slot map.
func (c *Cluster) Refresh(ctx context.Context, wait bool) error { return c.ref.request(ctx, wait) }

// Close stops refreshing and closes every node.
func (c *Cluster) Close() error {
	c.ref.stop()
	return c.nodes.close()
}

// refresh asks the known primaries, then the known replicas, then the
// seeds, in random order within each group, for the slot map, and installs
// the first valid one (a map that serves no slot is not). A rejected reply
// keeps the current map. The replicas matter when no primary answers: a
// shard whose primary (the only seed, often) died and whose replica was
// promoted is learnt from the replica, since no command reaches a live
// node to be told by a MOVED. Known nodes that are down (their last dial
// failed) are asked last, so that a dead host, whose dials may hang for
// the query timeout, does not delay learning its successor.
func (c *Cluster) refresh(ctx context.Context) error {
	var cands []string
	seen := map[string]bool{}
	add := func(addrs []string) {
		rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		for _, a := range addrs {
			if !seen[a] {
				seen[a] = true
				cands = append(cands, a)
			}
		}
	}
	var prims, reps, down []string
	for _, n := range c.Primaries() {
		if n.EP.Down() {
			down = append(down, n.Addr)
		} else {
			prims = append(prims, n.Addr)
		}
	}
	for _, n := range c.Replicas() {
		if n.EP.Down() {
			down = append(down, n.Addr)
		} else {
			reps = append(reps, n.Addr)
		}
	}
	for _, a := range down {
		seen[a] = true // not as a seed either, until the end
	}
	add(prims)
	add(reps)
	add(append([]string(nil), c.cfg.Seeds...))
	for _, a := range down {
		delete(seen, a)
	}
	add(down)
	var errs []error
	for _, addr := range cands {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := c.refreshFrom(ctx, addr)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return multierr.Join(errs...) // wraps ErrNotCluster when a seed said so
}

func (c *Cluster) refreshFrom(ctx context.Context, addr string) error {
	// A known node is asked on its own connection (a replica's too), not
	// on a new one that the map just learnt would retire.
	n, err := c.nodes.at(addr)
	if err != nil {
		return err
	}
	qctx := ctx
	if c.cfg.QueryTimeout > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, c.cfg.QueryTimeout)
		defer cancel()
	}
	host, _, _ := net.SplitHostPort(addr)
	var shards []Shard
	v, err := call(qctx, n.EP, "CLUSTER", "SHARDS")
	var re *wire.ReplyError
	if errors.As(err, &re) && strings.Contains(re.Text, "cluster support disabled") {
		return &topologyError{addr: addr, err: ErrNotCluster, text: re.Text, reply: re}
	}
	// CLUSTER SLOTS serves a server before 7.0, and a user whose ACL
	// allows only CLUSTER SLOTS (rules written for older clients).
	if errors.As(err, &re) && (strings.Contains(strings.ToLower(re.Text), "unknown subcommand") ||
		strings.HasPrefix(re.Text, "ERR unknown command") || strings.HasPrefix(re.Text, "NOPERM")) {
		v, err = call(qctx, n.EP, "CLUSTER", "SLOTS")
		if err == nil {
			shards, err = ParseSlots(v, host)
		}
	} else if err == nil {
		shards, err = ParseShards(v, host, c.cfg.TLS)
	}
	if err != nil {
		return &topologyError{addr: addr, err: err}
	}
	owners, err := Owners(shards)
	if err != nil {
		return &topologyError{addr: addr, err: err}
	}
	if !slices.ContainsFunc(shards, func(sh Shard) bool { return len(sh.Ranges) > 0 }) {
		// A node that has not joined the cluster (or was reset) knows
		// only itself, without slots: its map would replace a working
		// one with nothing.
		return &topologyError{addr: addr, err: errNoSlots}
	}
	return c.install(shards, owners)
}

// install builds and swaps in the snapshot of a validated map, then
// retires the nodes it no longer names. Shards that name the same primary
// become one, so that every primary is listed once (commands for every
// primary reach each node once).
func (c *Cluster) install(shards []Shard, owners *[Slots]int16) error {
	s := &clusterSnap{owner: *owners}
	keep := map[*Node]bool{}
	remap := make([]int16, len(shards))
	byPrimary := map[*Node]int16{}
	for i, sh := range shards {
		remap[i] = -1
		if len(sh.Ranges) == 0 {
			continue
		}
		p, err := c.nodes.get(sh.Primary, false)
		if err != nil {
			return err
		}
		keep[p] = true
		j, seen := byPrimary[p]
		if !seen {
			j = int16(len(s.shards))
			byPrimary[p] = j
			s.shards = append(s.shards, &shardNodes{primary: p})
		}
		sn := s.shards[j]
		for _, r := range sh.Replicas {
			rn, err := c.nodes.get(r, true)
			if err != nil {
				return err
			}
			keep[rn] = true
			if !slices.Contains(sn.replicas, rn) {
				sn.replicas = append(sn.replicas, rn)
			}
		}
		remap[i] = j
	}
	for i, o := range s.owner {
		if o >= 0 {
			s.owner[i] = remap[o]
		}
	}
	c.swap.Lock()
	old := c.snap.Swap(s)
	c.nodes.retain(keep)
	c.swap.Unlock()
	if f := c.cfg.OnMoved; f != nil {
		if moved := movedSlots(old, s); len(moved) > 0 {
			f(moved)
		}
	}
	if f := c.cfg.Nodes.OnInstall; f != nil {
		var prims []string
		for _, sh := range s.shards {
			prims = append(prims, sh.primary.Addr)
		}
		changed := old == nil || len(old.shards) != len(s.shards) || old.owner != s.owner
		if !changed {
			for i, sh := range s.shards {
				changed = changed || old.shards[i].primary != sh.primary
			}
		}
		f(fmt.Sprintf("cluster slot map: %d primaries (%s)", len(prims), strings.Join(prims, ", ")), changed)
	}
	return nil
}

// movedSlots returns the slots whose primary differs between the maps
// old and s; none when old is the empty map before the first.
func movedSlots(old, s *clusterSnap) []int {
	if len(old.shards) == 0 {
		return nil
	}
	var moved []int
	for i := range Slots {
		var was, is *Node
		if o := old.owner[i]; o >= 0 {
			was = old.shards[o].primary
		}
		if o := s.owner[i]; o >= 0 {
			is = s.shards[o].primary
		}
		if was != is {
			moved = append(moved, i)
		}
	}
	return moved
}

// topologyError reports a node whose topology reply was rejected.
type topologyError struct {
	addr  string
	err   error
	text  string
	reply *wire.ReplyError // the reply that showed err, if any
}

func (e *topologyError) Error() string {
	s := "cluster node " + e.addr + ": " + e.err.Error()
	if e.text != "" {
		s += " (" + e.text + ")"
	}
	return s
}

// NodeAddr is the address of the node that failed.
func (e *topologyError) NodeAddr() string { return e.addr }

func (e *topologyError) Unwrap() []error {
	if e.reply == nil {
		return []error{e.err}
	}
	return []error{e.err, e.reply}
}
