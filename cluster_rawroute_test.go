package respire

import (
	"context"
	"errors"
	"testing"

	"github.com/respire-go/respire/respiretest"
)

// TestClusterNewCommandRoutesByTheCatalogsKeys: NewCommand for a name the
// catalog knows, in any case, routes by the catalog's key positions:
// straight to the key's node, not through the owner of slot 0 and its
// MOVED reply (docs/topologies.md).
func TestClusterNewCommandRoutesByTheCatalogsKeys(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{})
	ctx := testCtx(t)
	slot0, other := ownerAndOther(t, c, 0)
	k, _ := keyOn(t, c, other)
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Del(ctx, k) })
	before0, beforeK := proxies[slot0.Addr].Forwarded("GET"), proxies[other].Forwarded("GET")
	r, err := c.Do(ctx, NewCommand("get"), k)
	if s, _ := r.String(); err != nil || s != "v" {
		t.Fatalf("GET = %v, %v", r.Value(), err)
	}
	if got := proxies[slot0.Addr].Forwarded("GET") - before0; got != 0 {
		t.Errorf("the owner of slot 0 (%s) received %d GETs, want none: NewCommand(\"get\") routes by its key", slot0.Addr, got)
	}
	if got := proxies[other].Forwarded("GET") - beforeK; got != 1 {
		t.Errorf("the key's node %s received %d GETs, want 1", other, got)
	}
}

// TestClusterDownReplyAsksForARefresh: a node that answers CLUSTERDOWN
// ("Hash slot not served": its own map has no owner for the slot, which
// the client's map gives to it) makes the client ask for a new slot map,
// as a MOVED does, instead of sending there until the periodic refresh:
// for a command, and for a batch member. The reply itself is returned as
// it is, not retried.
func TestClusterDownReplyAsksForARefresh(t *testing.T) {
	for name, get := range map[string]func(ctx context.Context, c *Client, k string) error{
		"Command": func(ctx context.Context, c *Client, k string) error {
			_, err := c.Get(ctx, k)
			return err
		},
		"BatchMember": func(ctx context.Context, c *Client, k string) error {
			b := c.NewBatch()
			f := b.Get(k)
			if err := b.Execute(ctx); err != nil {
				t.Errorf("Execute = %v, want the member's reply alone", err)
			}
			return f.Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, proxies := proxiedCluster(t, Options{RetryPolicy: &RetryPolicy{}, Cluster: &ClusterOptions{RefreshInterval: NoTimeout}})
			ctx := testCtx(t)
			a := c.topo.Primaries()[0].Addr
			k, _ := keyOn(t, c, a)
			down := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject("CLUSTERDOWN Hash slot not served")})
			defer down.Remove()
			asked := awaitAsked(t, proxies)
			err := get(ctx, c, k)
			var se *ServerError
			if !errors.As(err, &se) || se.Code != "CLUSTERDOWN" {
				t.Fatalf("GET = %v, want the CLUSTERDOWN reply", err)
			}
			if got := down.Applied(); got != 1 {
				t.Errorf("the node answered CLUSTERDOWN %d times, want 1 (not retried)", got)
			}
			if !asked(ctx) {
				t.Fatal("no node was asked for the slot map after the CLUSTERDOWN reply")
			}
		})
	}
}
