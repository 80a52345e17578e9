package respire

// Pub/sub on a Cluster whose slots move.

import (
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
)

// TestSSubscribeStaleMapFollowsMoved: SSubscribe on a client whose slot
// map still names the old owner of the shard channel's slot gets MOVED
// from that node. The redirect is routing, not the caller's failure: the
// subscription reaches the new owner and receives the channel's messages.
func TestSSubscribeStaleMapFollowsMoved(t *testing.T) {
	testenv.UseTopology(t, true)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	ch := keyPrefix(t) + "{m}ch"
	slot := route.Slot(ch)
	src, err := c.topo.Pick(slot, false)
	if err != nil {
		t.Fatal(err)
	}
	var dst string
	for _, n := range c.topo.Primaries() {
		if n != src {
			dst = n.Addr
		}
	}
	ids := clusterNodeIDs(t)
	t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
	migrateSlot(t, slot, src.Addr, dst, ids)
	sub, err := c.SSubscribe(ctx, ch)
	if err != nil {
		t.Fatalf("SSubscribe with the slot map before the move: %v, want the subscription on the new owner", err)
	}
	defer sub.Close()
	if n, err := c.SPublish(ctx, ch, "hello"); err != nil || n != 1 {
		t.Fatalf("SPUBLISH = %d, %v, want 1 subscriber", n, err)
	}
	for m := range sub.Channel() {
		if m.Gap {
			continue
		}
		if m.Channel != ch || m.Payload != "hello" || !m.Shard {
			t.Fatalf("message = %+v", m)
		}
		break
	}
}
