package respire

// Pub/sub on a Cluster whose slots move.

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

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
	src, dst := ownerAndOther(t, c, slot)
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

// TestSUnsubscribeOtherSlotSendsNothing: on a Cluster client a
// subscription holds the shard channels of one slot, so a shard channel
// of another slot was never subscribed there. SUnsubscribe of it is
// refused before any I/O, as SSubscribe of it is (ErrCrossSlot): sent,
// the node's MOVED reply would drop the subscription's connection for
// nothing and deliver a Gap.
func TestSUnsubscribeOtherSlotSendsNothing(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	a, b := p+"{s}a", p+"x"
	if route.Slot(a) == route.Slot(b) {
		t.Fatal("test channels share a slot")
	}
	sub, err := c.SSubscribe(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.SUnsubscribe(ctx, b); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("SUnsubscribe of another slot's channel = %v, want ErrCrossSlot", err)
	}
	plain, err := c.Subscribe(ctx, p+"plain")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.SUnsubscribe(ctx, a); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SUnsubscribe on a Subscribe subscription = %v, want ErrInvalidArgument", err)
	}
	if n, err := c.SPublish(ctx, a, "one"); err != nil || n != 1 {
		t.Fatalf("SPUBLISH = %d, %v", n, err)
	}
	if m := <-sub.Channel(); m.Gap || m.Payload != "one" {
		t.Fatalf("next event %+v, want the message (no reconnection)", m)
	}
}

// TestSSubscribeReconnectLearnsNewOwnerAfterFailedDials: a shard
// subscription whose node cannot be reached asks for a new slot map
// after a failed dial, so it reaches the slot's new owner even when
// nothing else refreshes the map (no periodic refresh, no other traffic).
func TestSSubscribeReconnectLearnsNewOwnerAfterFailedDials(t *testing.T) {
	testenv.UseTopology(t, true)
	var refuse atomic.Pointer[string]
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if r := refuse.Load(); r != nil && *r == addr {
			return nil, errors.New("test: dial refused")
		}
		return d.DialContext(ctx, network, addr)
	}
	c := clusterClient(t, Options{Dialer: dial, Cluster: &ClusterOptions{RefreshInterval: NoTimeout}})
	ctx := testCtx(t)
	ch := keyPrefix(t) + "{f}ch"
	slot := route.Slot(ch)
	src, dst := ownerAndOther(t, c, slot)
	sub, err := c.SSubscribe(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ids := clusterNodeIDs(t)
	t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
	refuse.Store(&src.Addr)
	killClient(t, src.Addr, strconv.FormatInt(subID(sub), 10))
	migrateSlot(t, slot, src.Addr, dst, ids)
	eventually(t, 10*time.Second, "the subscription to reach the slot's new owner "+dst, func() bool {
		n, err := admin(t, dst, "SPUBLISH", ch, "x").Int64()
		return err == nil && n == 1
	})
}
