package respire

// Cluster replica reads of a user whose ACL refuses READONLY, on the real
// cluster, with a user of a unique name on every node that the test
// deletes.

import (
	"strconv"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
)

// readonlyRefusedClient returns a Cluster client of the cluster at nodes
// that reads under policy, without periodic refreshes, as a new user
// whose ACL refuses READONLY on every node, and the user and password.
func readonlyRefusedClient(t *testing.T, nodes []string, policy ReadPolicy) (c *Client, user, password string) {
	t.Helper()
	user, password = aclUser(t, nodes, "~*", "&*", "+@all", "-readonly")
	c = clusterClient(t, Options{Endpoints: nodes, Cluster: &ClusterOptions{RefreshInterval: NoTimeout},
		Username: user, Password: password, ReadFrom: policy})
	return c, user, password
}

// Under ReadReplicaPreferred, a read routed to a replica whose handshake
// the ACL refuses (READONLY) was never sent: the primary serves it within
// the same call, and the caller does not see the refusal. INFO
// commandstats shows every read served by a primary, once, and every
// replica refusing READONLY.
func TestACLClusterReplicaRefusalReadServedByPrimary(t *testing.T) {
	countsCommands(t)
	nodes := testenv.ClusterAddrs(t)
	c, user, pw := readonlyRefusedClient(t, nodes, ReadReplicaPreferred)
	ctx := testCtx(t)
	const reads = 30
	keys := make([]string, reads)
	for i := range keys {
		keys[i] = keyPrefix(t) + strconv.Itoa(i)
		if err := c.Set(ctx, keys[i], strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Del(ctx, keys[i]) })
	}
	sum := func(addrs []string, name, field string) int {
		n := 0
		for _, a := range addrs {
			n += commandStat(t, a, name, field)
		}
		return n
	}
	var prims, reps []string
	for _, n := range c.topo.Primaries() {
		prims = append(prims, n.Addr)
	}
	for _, n := range c.topo.Replicas() {
		reps = append(reps, n.Addr)
	}
	gets, refused := sum(prims, "get", "calls"), sum(reps, "readonly", "rejected_calls")
	for i, k := range keys {
		if v, err := c.Get(ctx, k); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v; want %d from the primary", k, v, err, i)
		}
	}
	if n := sum(prims, "get", "calls") - gets; n != reads {
		t.Errorf("the primaries served %d GETs of %d, want every one once", n, reads)
	}
	if n := sum(reps, "readonly", "rejected_calls") - refused; n < len(reps) {
		t.Errorf("the replicas refused READONLY %d times, want each at least once", n)
	}

	// ReadReplica has no other node: the read fails with the refusal.
	strict := clusterClient(t, Options{Endpoints: nodes, Cluster: &ClusterOptions{RefreshInterval: NoTimeout},
		Username: user, Password: pw, ReadFrom: ReadReplica})
	for _, k := range keys[:3] {
		_, err := strict.Get(ctx, k)
		checkRefusal(t, err, "READONLY", pw)
	}
}
