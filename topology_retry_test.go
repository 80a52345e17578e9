package respire

// The retry matrix of retry_real_test.go, run against the Sentinel
// primary and against every Cluster primary through fault proxies: the
// rules hold on every topology, and the servers' commandstats prove how
// many times each command ran.

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// rewriteDialer dials the proxy named in via for an address found there,
// the address itself otherwise. With failFirst, the first connection to
// each rewritten address fails its write-th write before any byte.
func rewriteDialer(via map[string]string, failFirst bool, write int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, ok := via[addr]
		if !ok {
			return d.DialContext(ctx, network, addr)
		}
		nc, err := d.DialContext(ctx, network, to)
		if err != nil || !failFirst {
			return nc, err
		}
		mu.Lock()
		first := !seen[addr]
		seen[addr] = true
		mu.Unlock()
		if first {
			return respiretest.FailWrites(nc, write, 0), nil
		}
		return nc, nil
	}
}

// sentinelPrimary asks the first sentinel for the current primary.
func sentinelPrimary(t testing.TB) string {
	t.Helper()
	r := admin(t, testenv.SentinelAddrs(t)[0], "SENTINEL", "GET-MASTER-ADDR-BY-NAME", testenv.SentinelMaster(t))
	parts, err := r.Strings()
	if err != nil || len(parts) != 2 {
		t.Fatalf("SENTINEL GET-MASTER-ADDR-BY-NAME = %v, %v", r.Value(), err)
	}
	return net.JoinHostPort(parts[0], parts[1])
}

// clusterRoles returns the Cluster's primaries and replicas as a client
// sees them now.
func clusterRoles(t testing.TB) (primaries, replicas []string) {
	t.Helper()
	c := clusterClient(t, Options{})
	for _, n := range c.topo.Primaries() {
		primaries = append(primaries, n.Addr)
	}
	for _, a := range testenv.ClusterAddrs(t) {
		if !slices.Contains(primaries, a) {
			replicas = append(replicas, a)
		}
	}
	_ = c.Close()
	return primaries, replicas
}

func TestRetryTopologyMatrix(t *testing.T) {
	t.Run("Sentinel", func(t *testing.T) {
		primary := sentinelPrimary(t)
		proxy := realProxy(t, primary)
		runRetryMatrix(t, &matrixEnv{
			proxies: []*respiretest.Proxy{proxy},
			servers: []string{primary},
			connect: func(t *testing.T, opts Options, unwritten bool) *Client {
				// HELLO and ROLE come first on the primary's connection.
				opts.Dialer = rewriteDialer(map[string]string{primary: proxy.Addr()}, unwritten, 3)
				c := sentinelClient(t, opts)
				t.Cleanup(func() { flush(t, primary) })
				return c
			},
		})
	})
	t.Run("Cluster", func(t *testing.T) {
		primaries, replicas := clusterRoles(t)
		via := map[string]string{}
		var proxies []*respiretest.Proxy
		for _, p := range primaries {
			px := realProxy(t, p)
			via[p] = px.Addr()
			proxies = append(proxies, px)
		}
		runRetryMatrix(t, &matrixEnv{
			proxies: proxies,
			servers: primaries,
			connect: func(t *testing.T, opts Options, unwritten bool) *Client {
				// A replica seed answers CLUSTER SHARDS, so the first
				// command on each primary's connection is the test's.
				opts.Endpoints = replicas
				opts.Dialer = rewriteDialer(via, unwritten, 2)
				c := clusterClient(t, opts)
				t.Cleanup(func() {
					for _, p := range primaries {
						flush(t, p)
					}
				})
				return c
			},
		})
	})
}
