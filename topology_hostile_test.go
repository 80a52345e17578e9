package respire

import (
	"errors"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// proxiedSentinels returns a fault proxy in front of every sentinel of the
// test script's group, and their addresses.
func proxiedSentinels(t *testing.T) ([]*respiretest.Proxy, []string) {
	t.Helper()
	var pxs []*respiretest.Proxy
	var addrs []string
	for _, a := range testenv.SentinelAddrs(t) {
		px := realProxy(t, a)
		pxs = append(pxs, px)
		addrs = append(addrs, px.Addr())
	}
	return pxs, addrs
}

// TestSentinelFailedReplicasQueryKeepsReplicas: a rediscovery whose
// SENTINEL REPLICAS query fails (the connection drops, or an error reply)
// still installs the primary the sentinel named, and keeps the replicas
// already known instead of forgetting them: reads under ReadReplica go on
// reaching the replica instead of failing with ErrNoRoute.
func TestSentinelFailedReplicasQueryKeepsReplicas(t *testing.T) {
	for name, action := range map[string]respiretest.Action{
		"Dropped":    respiretest.DropBeforeForward,
		"ErrorReply": respiretest.Inject("ERR boom"),
	} {
		t.Run(name, func(t *testing.T) {
			pxs, addrs := proxiedSentinels(t)
			c := sentinelClient(t, Options{ReadFrom: ReadReplica,
				Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
			ctx := testCtx(t)
			replica, _ := readReplica(t, c, -1)
			for _, px := range pxs {
				r := px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always, Action: action})
				defer r.Remove()
			}
			if err := c.topo.Refresh(ctx, true); err != nil {
				t.Fatalf("rediscovery = %v, want the primary installed", err)
			}
			n, err := c.topo.Pick(-1, true)
			if err != nil {
				t.Fatalf("replica read after the failed REPLICAS query: %v", err)
			}
			if n.Addr != replica.Addr || !n.Replica {
				t.Errorf("replica read goes to %s (replica %v), want the replica %s", n.Addr, n.Replica, replica.Addr)
			}
			k := keyPrefix(t) + "k"
			if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
				t.Errorf("GET under ReadReplica = %v", err)
			}
		})
	}
}
