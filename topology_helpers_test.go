package respire

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// clusterClient connects to the test script's Cluster (every node as a
// seed) with opts and closes the client when the test ends.
func clusterClient(t testing.TB, opts Options) *Client {
	t.Helper()
	if len(opts.Endpoints) == 0 {
		opts.Endpoints = testenv.ClusterAddrs(t)
	}
	if opts.Cluster == nil {
		opts.Cluster = &ClusterOptions{}
	}
	return connectTopologyClient(t, opts)
}

// sentinelClient connects to the test script's Sentinel group with opts
// and closes the client when the test ends.
func sentinelClient(t testing.TB, opts Options) *Client {
	t.Helper()
	if opts.Sentinel == nil {
		opts.Sentinel = &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: testenv.SentinelAddrs(t)}
	}
	return connectTopologyClient(t, opts)
}

func connectTopologyClient(t testing.TB, opts Options) *Client {
	t.Helper()
	testenv.UseTopology(t, false)
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// topologies runs body against a client of each topology the test script
// starts: standalone, the Sentinel primary, and the Cluster.
func topologies(t *testing.T, opts Options, body func(t *testing.T, c *Client)) {
	t.Run("Standalone", func(t *testing.T) { body(t, newClient(t, opts)) })
	t.Run("Sentinel", func(t *testing.T) { body(t, sentinelClient(t, opts)) })
	t.Run("Cluster", func(t *testing.T) { body(t, clusterClient(t, opts)) })
}

// replicaTopologies runs body against a client of each topology with
// replicas: the Sentinel group and the Cluster.
func replicaTopologies(t *testing.T, opts Options, body func(t *testing.T, c *Client)) {
	t.Run("Sentinel", func(t *testing.T) { body(t, sentinelClient(t, opts)) })
	t.Run("Cluster", func(t *testing.T) { body(t, clusterClient(t, opts)) })
}

// awaitAsked watches every proxy of a Cluster's nodes for a CLUSTER SHARDS
// query from now on (the rules go when the test ends) and returns a wait
// that reports whether any proxy received one before ctx ended: the
// client asked for a new slot map.
func awaitAsked(t testing.TB, proxies map[string]*respiretest.Proxy) func(ctx context.Context) bool {
	t.Helper()
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv}}
	for _, px := range proxies {
		r := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Action: respiretest.Pass})
		t.Cleanup(r.Remove)
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.Received())})
	}
	return func(ctx context.Context) bool {
		cases[0].Chan = reflect.ValueOf(ctx.Done())
		i, _, _ := reflect.Select(cases)
		return i > 0
	}
}
