package respire

// The retry matrix of retry_real_test.go, run against the Sentinel
// primary and against every Cluster primary through fault proxies: the
// rules hold on every topology, and the servers' commandstats prove how
// many times each command ran.

import (
	"context"
	"net"
	"slices"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// rewriteDialer dials the proxy named in via for an address found there,
// the address itself otherwise.
func rewriteDialer(via map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := via[addr]; ok {
			addr = to
		}
		return d.DialContext(ctx, network, addr)
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
	countsCommands(t)
	t.Run("Sentinel", func(t *testing.T) {
		primary := sentinelPrimary(t)
		proxy := realProxy(t, primary)
		runRetryMatrix(t, &matrixEnv{
			proxies: []*respiretest.Proxy{proxy},
			servers: []string{primary},
			connect: func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) *Client {
				opts.Dialer = fault(rewriteDialer(map[string]string{primary: proxy.Addr()}))
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
			connect: func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) *Client {
				opts.Endpoints = replicas
				opts.Dialer = fault(rewriteDialer(via))
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
