package respire

import "testing"

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
