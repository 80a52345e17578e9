package route_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestClusterCloseWaitsForRetiringNodes: a node that left the map is
// retired in the background (a refresh never waits for its in-flight
// work), but Close waits for that too: no goroutine of the cluster
// outlives its Close. The retired node is held by a dial in progress
// that ends only when the test opens its gate.
func TestClusterCloseWaitsForRetiringNodes(t *testing.T) {
	testenv.Bubble(t, func(t *testing.T) {
		p1, p2 := respiretest.NewServer(t), respiretest.NewServer(t)
		const a1, a2 = "10.0.0.1:7000", "10.0.0.2:7000"
		both := tvArr(
			shardsEntry(false, []int64{0, 8191}, master("p1", "10.0.0.1", 7000)),
			shardsEntry(false, []int64{8192, 16383}, master("p2", "10.0.0.2", 7000)))
		alone := tvArr(shardsEntry(false, []int64{0, 16383}, master("p1", "10.0.0.1", 7000)))
		first := p1.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS",
			Action: respiretest.Reply(resp.AppendValue(nil, both, 2))})
		var hold atomic.Bool
		dialing, gate := make(chan struct{}, 1), make(chan struct{})
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == a2 {
				if hold.Load() {
					dialing <- struct{}{}
					<-gate // as a dialer that does not watch ctx
				}
				return p2.Dial(ctx, network, addr)
			}
			return p1.Dial(ctx, network, addr)
		}
		at := func(addr string, replica bool) wire.Config {
			return wire.Config{Addr: addr, ReadOnly: replica, DialTimeout: 5 * time.Second, Dial: dial}
		}
		c, err := route.NewCluster(context.Background(), route.ClusterConfig{
			Nodes: route.Config{Shared: at, Dedicated: at}, Seeds: []string{a1}, QueryTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		n2, err := c.Pick(16383, false)
		if err != nil || n2.Addr != a2 {
			t.Fatalf("Pick(16383) = %v, %v; want %s", n2, err, a2)
		}
		first.Remove()
		p1.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always,
			Action: respiretest.Reply(resp.AppendValue(nil, alone, 2))})
		hold.Store(true)
		go func() { _, _ = n2.EP.Conn(context.Background()) }()
		<-dialing
		if err := c.Refresh(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		synctest.Wait()
		select {
		case <-closed:
			t.Error("Close returned while a retired node's dial still runs")
		default:
		}
		close(gate)
		synctest.Wait()
	})
}
