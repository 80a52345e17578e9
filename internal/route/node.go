package route

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/pool"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Node is one server of a topology: its shared multiplexed connection and
// its pool of dedicated connections (blocking commands, Dedicated,
// transactions). A Node is safe for concurrent use.
type Node struct {
	// Addr is the node's "host:port".
	Addr string
	// Replica reports whether the node serves reads only.
	Replica bool
	// EP is the node's shared connection.
	EP *wire.Endpoint
	// Pool lends the node's dedicated connections.
	Pool *pool.Pool
	// Dedicated is the configuration of the node's dedicated connections,
	// for connections made outside the pool (subscriptions).
	Dedicated wire.Config
}

// Config builds the connections of the nodes a topology discovers.
type Config struct {
	// Shared returns the configuration of a node's shared connection.
	Shared func(addr string, replica bool) wire.Config
	// Dedicated returns the configuration of a node's dedicated ones.
	Dedicated func(addr string, replica bool) wire.Config
	// PoolMax and PoolIdle size each node's dedicated pool.
	PoolMax  int
	PoolIdle time.Duration
	// OnInstall, when set, is told of every topology a discovery installs
	// (changed reports whether the primaries differ from the previous
	// one): for logging rediscovery. It must not block.
	OnInstall func(summary string, changed bool)
}

// ErrRetired is the cause of the failures of commands in flight on a node
// the topology stopped routing to (a demoted primary, a removed node).
var ErrRetired = errors.New("the node left the topology")

// nodes is the registry of a topology's nodes, keyed by address and role,
// so that every snapshot naming a node shares its connections.
type nodes struct {
	cfg    Config
	onLost func(*Node)

	mu     sync.Mutex
	closed bool
	byKey  map[nodeKey]*Node
	// retiring counts the nodes being retired in the background: close
	// waits for them, so no goroutine outlives it.
	retiring sync.WaitGroup
}

type nodeKey struct {
	addr    string
	replica bool
}

func newNodes(cfg Config, onLost func(*Node)) *nodes {
	return &nodes{cfg: cfg, onLost: onLost, byKey: make(map[nodeKey]*Node)}
}

// get returns the node for addr and role, creating it (without dialing).
func (ns *nodes) get(addr string, replica bool) (*Node, error) {
	k := nodeKey{addr, replica}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return nil, &wire.ConnError{Reason: wire.Closed, Evidence: wire.Unwritten, Cause: wire.ErrClosed}
	}
	if n := ns.byKey[k]; n != nil {
		return n, nil
	}
	n := &Node{Addr: addr, Replica: replica, Dedicated: ns.cfg.Dedicated(addr, replica)}
	n.EP = wire.NewEndpointNotify(ns.cfg.Shared(addr, replica), func() {
		if ns.onLost != nil {
			ns.onLost(n)
		}
	})
	n.Pool = pool.New(pool.Config{Wire: n.Dedicated, Max: ns.cfg.PoolMax, IdleTimeout: ns.cfg.PoolIdle})
	ns.byKey[k] = n
	return n, nil
}

// lookup returns the existing node for addr and role, or nil.
func (ns *nodes) lookup(addr string, replica bool) *Node {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.byKey[nodeKey{addr, replica}]
}

// at returns the existing node at addr, a replica one first, or a new
// primary one.
func (ns *nodes) at(addr string) (*Node, error) {
	ns.mu.Lock()
	n := ns.byKey[nodeKey{addr, true}]
	if n == nil {
		n = ns.byKey[nodeKey{addr, false}]
	}
	ns.mu.Unlock()
	if n != nil {
		return n, nil
	}
	return ns.get(addr, false)
}

// retain retires every node not in keep: its commands in flight fail as
// connection loss (cause [ErrRetired]) and later lookups make a new one.
func (ns *nodes) retain(keep map[*Node]bool) {
	ns.retireIf(func(n *Node) bool { return !keep[n] })
}

// retireIf retires every node for which drop reports true, as retain
// does.
func (ns *nodes) retireIf(drop func(*Node) bool) {
	ns.mu.Lock()
	var gone []*Node
	for k, n := range ns.byKey {
		if drop(n) {
			gone = append(gone, n)
			delete(ns.byKey, k)
		}
	}
	ns.mu.Unlock()
	for _, n := range gone {
		ns.retiring.Go(func() { retire(n) }) // never block a refresh on a node's in-flight work
	}
}

func retire(n *Node) {
	n.EP.Retire(ErrRetired)
	n.Pool.Retire(ErrRetired)
}

// close closes every node and refuses new ones.
func (ns *nodes) close() error {
	ns.mu.Lock()
	ns.closed = true
	all := make([]*Node, 0, len(ns.byKey))
	for _, n := range ns.byKey {
		all = append(all, n)
	}
	clear(ns.byKey)
	ns.mu.Unlock()
	var errs []error
	for _, n := range all {
		errs = append(errs, n.EP.Close(), n.Pool.Close())
	}
	ns.retiring.Wait()
	return multierr.Join(errs...)
}

// call sends one command on ep's shared connection and returns its reply;
// an error reply is returned as a *wire.ReplyError.
func call(ctx context.Context, ep *wire.Endpoint, args ...string) (resp.Value, error) {
	conn, err := ep.Conn(ctx)
	if err != nil {
		return resp.Value{}, err
	}
	f := wire.GetFrame()
	f.Buf = resp.AppendArrayHeader(f.Buf, len(args))
	for _, a := range args {
		f.Buf = resp.AppendBulkString(f.Buf, a)
	}
	f.Want = wire.WantValue
	if err := conn.Submit(ctx, time.Time{}, f); err != nil {
		f.Release()
		return resp.Value{}, err
	}
	if err := f.Wait(ctx, time.Time{}); err != nil {
		return resp.Value{}, err
	}
	defer f.Release()
	if f.Err != nil {
		return resp.Value{}, f.Err
	}
	if f.IsErr {
		return resp.Value{}, &wire.ReplyError{Command: strings.Join(args[:min(2, len(args))], " "), Text: string(f.ErrReply)}
	}
	return f.Value, nil
}

// jitter returns d shortened by up to a fifth, at random.
func jitter(d time.Duration) time.Duration {
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}
