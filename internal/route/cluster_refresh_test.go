package route_test

import (
	"context"
	"errors"
	"net"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// fakeNode is an embedded server that answers CLUSTER SHARDS with a
// fabricated reply and READONLY (a replica connection's handshake) with
// OK; host and port are its address's parts.
type fakeNode struct {
	*respiretest.Server
	host string
	port int64
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	s := respiretest.NewServer(t)
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.ParseInt(port, 10, 64)
	s.MustAddRule(t, respiretest.Rule{Command: "READONLY", Times: respiretest.Always, Action: respiretest.Reply([]byte("+OK\r\n"))})
	return &fakeNode{Server: s, host: host, port: p}
}

// answerShards makes n answer every CLUSTER SHARDS with the shards (in the
// RESP2 shape).
func (n *fakeNode) answerShards(t *testing.T, shards ...resp.Value) *respiretest.RuleHandle {
	t.Helper()
	return n.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always,
		Action: respiretest.Reply(resp.AppendValue(nil, tvArr(shards...), 2))})
}

// newTestCluster learns a map from seeds; its nodes dial their address
// with the defaults, and it is closed when the test ends.
func newTestCluster(t *testing.T, seeds ...string) *route.Cluster {
	t.Helper()
	at := func(addr string, replica bool) wire.Config {
		return wire.Config{Addr: addr, ReadOnly: replica, DialTimeout: 5 * time.Second}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := route.NewCluster(ctx, route.ClusterConfig{
		Nodes: route.Config{Shared: at, Dedicated: at}, Seeds: seeds, QueryTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("NewCluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func nodeAddrs(ns []*route.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Addr)
	}
	return out
}

// TestClusterRefreshAsksReplicasWhenPrimariesAndSeedsAreDown: a shard
// whose primary (the only seed) died and whose replica was promoted is
// learnt from the replica: a refresh that reaches no primary and no seed
// asks the known replicas, instead of keeping the dead primary until it
// returns (no command reaches a live node, so no MOVED would ever say).
func TestClusterRefreshAsksReplicasWhenPrimariesAndSeedsAreDown(t *testing.T) {
	p, r := newFakeNode(t), newFakeNode(t)
	p.answerShards(t, shardsEntry(false, []int64{0, 16383},
		master("p", p.host, p.port), replica("r", r.host, r.port, "online")))
	// The replica's view after the failover: it is the primary.
	promoted := r.answerShards(t, shardsEntry(false, []int64{0, 16383}, master("r", r.host, r.port)))
	c := newTestCluster(t, p.Addr())
	if got := nodeAddrs(c.Primaries()); len(got) != 1 || got[0] != p.Addr() {
		t.Fatalf("primaries = %v, want [%s]", got, p.Addr())
	}
	p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Refresh(ctx, true); err != nil {
		t.Fatalf("refresh with the primary and the seed down = %v, want the replica's map", err)
	}
	if promoted.Applied() == 0 {
		t.Errorf("the replica was never asked for the map")
	}
	if got := nodeAddrs(c.Primaries()); len(got) != 1 || got[0] != r.Addr() {
		t.Errorf("primaries = %v, want the promoted replica [%s]", got, r.Addr())
	}
}

// TestClusterRefreshAsksDownNodesLast: a known node whose last dial failed
// is asked for the map only after the nodes that may answer: a host that
// died (whose dials hang for the query timeout on a real network) does not
// stall the refreshes that must learn its successor, while another
// primary can answer at once.
func TestClusterRefreshAsksDownNodesLast(t *testing.T) {
	p1, p2 := newFakeNode(t), newFakeNode(t)
	shards := []resp.Value{
		shardsEntry(false, []int64{0, 8191}, master("p1", p1.host, p1.port)),
		shardsEntry(false, []int64{8192, 16383}, master("p2", p2.host, p2.port)),
	}
	p1.answerShards(t, shards...)
	asked := p2.answerShards(t, shards...)
	c := newTestCluster(t, p1.Addr())
	var down *route.Node
	for _, n := range c.Primaries() {
		if n.Addr == p1.Addr() {
			down = n
		}
	}
	p1.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cur := down.EP.Current(); cur != nil {
		// The client learns of the close when its reader sees it.
		select {
		case <-cur.Dead():
		case <-ctx.Done():
			t.Fatal("the connection to the closed node never ended")
		}
	}
	if _, err := down.EP.Conn(ctx); err == nil || !down.EP.Down() {
		t.Fatalf("dial of the closed node = %v, down %v; want it down", err, down.EP.Down())
	}
	// Count the dials that reach the dead node's address from now on.
	ln, err := net.Listen("tcp", p1.Addr())
	if err != nil {
		t.Skipf("cannot listen on the closed node's address again: %v", err)
	}
	defer ln.Close()
	var dials atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			_ = conn.Close()
		}
	}()
	const rounds = 10
	before := asked.Applied()
	for range rounds {
		if err := c.Refresh(ctx, true); err != nil {
			t.Fatalf("refresh = %v", err)
		}
	}
	if got := dials.Load(); got != 0 {
		t.Errorf("%d refreshes dialed the down node %d times, while another primary answers", rounds, got)
	}
	if asked.Applied()-before < rounds {
		t.Errorf("the live primary answered %d of %d refreshes", asked.Applied()-before, rounds)
	}
}

// TestClusterMovedBurstCoalescesRefreshes: a burst of MOVED replies while
// a refresh is in flight asks for one more refresh, not one each: at most
// one refresh runs at a time and the requests made meanwhile share the
// next.
func TestClusterMovedBurstCoalescesRefreshes(t *testing.T) {
	p := newFakeNode(t)
	held := p.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Nth: 2, Action: respiretest.Hold})
	defer held.Release()
	answered := p.answerShards(t, shardsEntry(false, []int64{0, 16383}, master("p", p.host, p.port)))
	c := newTestCluster(t, p.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Refresh(ctx, false); err != nil {
		t.Fatal(err)
	}
	<-held.Received() // a refresh is in flight
	before := answered.Applied()
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Go(func() {
			if _, err := c.Moved(i, p.Addr()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	held.Release()
	if err := c.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	// The held refresh, then the one the burst asked for (which the
	// waited Refresh may join, or follow).
	if got := answered.Applied() - before; got < 1 || got > 2 {
		t.Errorf("500 MOVED during a refresh caused %d more refreshes, want 1 or 2", got)
	}
}

// TestClusterMapWithGaps: a map that leaves slots unserved (a primary
// failed under cluster-require-full-coverage no, a shard without slots)
// is installed: an unserved slot has no route and asks for a new map, a
// keyless command still reaches a primary though slot 0 is unserved,
// and only the primaries that serve a slot are listed.
func TestClusterMapWithGaps(t *testing.T) {
	p1, p2, idle := newFakeNode(t), newFakeNode(t), newFakeNode(t)
	shards := []resp.Value{
		shardsEntry(false, []int64{1, 99, 300, 400}, master("p1", p1.host, p1.port)),
		shardsEntry(false, []int64{500, 16382}, master("p2", p2.host, p2.port)),
		shardsEntry(false, nil, master("idle", idle.host, idle.port)),
	}
	for _, n := range []*fakeNode{p1, p2, idle} {
		n.answerShards(t, shards...)
	}
	c := newTestCluster(t, p1.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := nodeAddrs(c.Primaries()); len(got) != 2 || !slices.Contains(got, p1.Addr()) || !slices.Contains(got, p2.Addr()) {
		t.Fatalf("primaries = %v, want the two that serve a slot", got)
	}
	for slot, want := range map[int]string{1: p1.Addr(), 350: p1.Addr(), 500: p2.Addr(), 16382: p2.Addr()} {
		if n, err := c.Pick(slot, false); err != nil || n.Addr != want {
			t.Errorf("Pick(%d) = %v, %v; want %s", slot, n, err, want)
		}
	}
	if n, err := c.Pick(-1, false); err != nil || n.Addr != p1.Addr() {
		t.Errorf("keyless Pick with slot 0 unserved = %v, %v; want the first shard's primary %s", n, err, p1.Addr())
	}
	for _, slot := range []int{0, 100, 299, 401, 499, 16383} {
		var asked []reflect.SelectCase
		for _, n := range []*fakeNode{p1, p2} {
			r := n.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Action: respiretest.Pass})
			defer r.Remove()
			asked = append(asked, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.Received())})
		}
		if n, err := c.Pick(slot, false); !errors.Is(err, route.ErrNoRoute) {
			t.Errorf("Pick(%d) of an unserved slot = %v, %v; want ErrNoRoute", slot, n, err)
		}
		asked = append(asked, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		if i, _, _ := reflect.Select(asked); i == len(asked)-1 {
			t.Fatalf("Pick(%d) of an unserved slot asked no node for a new map", slot)
		}
	}
}

// TestClusterReadWithoutReplicaAsksForRefresh: under ReadReplica and
// ReadReplicaPreferred, a read whose shard has no replica in the map (its
// only replica was resynchronising at the latest refresh, or was added
// since) asks for a new map, as Sentinel does, instead of failing
// (ReadReplica) or reading from the primary (ReadReplicaPreferred) until
// the periodic refresh.
func TestClusterReadWithoutReplicaAsksForRefresh(t *testing.T) {
	for name, policy := range map[string]route.ReadPolicy{"ReadReplica": route.ReadReplica, "ReadReplicaPreferred": route.ReadReplicaPreferred} {
		t.Run(name, func(t *testing.T) {
			p, r := newFakeNode(t), newFakeNode(t)
			none := p.answerShards(t, shardsEntry(false, []int64{0, 16383}, master("p", p.host, p.port)))
			at := func(addr string, replica bool) wire.Config {
				return wire.Config{Addr: addr, ReadOnly: replica, DialTimeout: 5 * time.Second}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := route.NewCluster(ctx, route.ClusterConfig{Nodes: route.Config{Shared: at, Dedicated: at},
				Seeds: []string{p.Addr()}, QueryTimeout: 5 * time.Second, Read: policy})
			if err != nil {
				t.Fatalf("NewCluster: %v", err)
			}
			defer c.Close()
			// The cluster lists the replica now; nothing asks it again but
			// the read that finds none (there is no periodic refresh).
			none.Remove()
			asked := p.answerShards(t, shardsEntry(false, []int64{0, 16383},
				master("p", p.host, p.port), replica("r", r.host, r.port, "online")))
			n, err := c.Pick(100, true)
			if policy == route.ReadReplica && !errors.Is(err, route.ErrNoReplica) {
				t.Fatalf("read with no replica known = %v, %v; want ErrNoReplica", n, err)
			}
			if policy == route.ReadReplicaPreferred && (err != nil || n.Addr != p.Addr()) {
				t.Fatalf("read with no replica known = %v, %v; want the primary", n, err)
			}
			select {
			case <-asked.Received():
			case <-ctx.Done():
				t.Fatal("a read that found no replica asked no node for a new map")
			}
			if err := c.Refresh(ctx, true); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Pick(100, true); err != nil || n.Addr != r.Addr() {
				t.Errorf("read after the refresh = %v, %v; want the replica %s", n, err, r.Addr())
			}
		})
	}
}
