package respire

import (
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// readNode returns the node a read of slot goes to under the client's
// read policy.
func readNode(t *testing.T, c *Client, slot int) *route.Node {
	t.Helper()
	n, err := c.topo.Pick(slot, true)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadFromReplica: under ReadReplica, read-only commands go to a
// replica (READONLY on Cluster replica connections), writes to the
// primary; the replica's own commandstats witness where each ran.
func TestReadFromReplica(t *testing.T) {
	for _, tc := range []struct {
		name    string
		connect func(t *testing.T, opts Options) *Client
	}{
		{"Sentinel", func(t *testing.T, o Options) *Client { return sentinelClient(t, o) }},
		{"Cluster", func(t *testing.T, o Options) *Client { return clusterClient(t, o) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.connect(t, Options{ReadFrom: ReadReplica})
			ctx := testCtx(t)
			k := keyPrefix(t) + "k"
			replica := readNode(t, c, route.Slot(k))
			primary, _ := c.topo.Pick(route.Slot(k), false)
			if !replica.Replica || replica == primary {
				t.Fatalf("read node %s is not a replica", replica.Addr)
			}
			if err := c.Set(ctx, k, "v"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
			if _, err := c.Do(ctx, NewCommand("WAIT"), "1", "2000"); err != nil {
				t.Fatal(err)
			}
			getsBefore := commandCalls(t, replica.Addr, "get")
			primaryGets := commandCalls(t, primary.Addr, "get")
			for range 5 {
				if v, err := c.Get(ctx, k); err != nil || v != "v" {
					t.Fatalf("GET = %q, %v", v, err)
				}
			}
			if got := commandCalls(t, replica.Addr, "get") - getsBefore; got != 5 {
				t.Errorf("the replica ran GET %d times, want 5", got)
			}
			if got := commandCalls(t, primary.Addr, "get") - primaryGets; got != 0 {
				t.Errorf("the primary ran GET %d times, want 0", got)
			}
		})
	}
}

// TestReplicaReadsAreNeverRetried: a read a replica served is not resent,
// even when the policy would resend it on the primary.
func TestReplicaReadsAreNeverRetried(t *testing.T) {
	replicaAddr := testenv.SentinelReplica(t)
	if sentinelPrimary(t) == replicaAddr {
		replicaAddr = testenv.SentinelPrimary(t)
	}
	px := realProxy(t, replicaAddr)
	c := sentinelClient(t, Options{
		ReadFrom:    ReadReplica,
		Dialer:      rewriteDialer(map[string]string{replicaAddr: px.Addr()}, false, 0),
		RetryPolicy: &RetryPolicy{MaxAttempts: 3, InitialBackoff: NoBackoff},
	})
	ctx := testCtx(t)
	k := keyPrefix(t) + "k"
	rule := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
	defer rule.Remove()
	before := commandCalls(t, replicaAddr, "getrange")
	_, err := c.Do(ctx, NewCommand("GETRANGE").WithRetryCategory(ReadOnly), k, "0", "-1")
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("err = %v, want the lost reply", err)
	}
	var re *RetryError
	if errors.As(err, &re) {
		t.Errorf("err = %v: a replica read was retried", err)
	}
	if got := commandCalls(t, replicaAddr, "getrange") - before; got != 1 {
		t.Errorf("the replica ran GETRANGE %d times, want 1", got)
	}
}

// TestTopologyPubSub: subscriptions work on every topology; on a Cluster,
// shard channels of one subscription share a slot, and a subscription
// follows its slot when the slot moves (the server's SUNSUBSCRIBE starts a
// reconnection to the new owner, reported as a Gap).
func TestTopologyPubSub(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		ch := keyPrefix(t) + "ch"
		sub, err := c.Subscribe(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if n, err := c.Publish(ctx, ch, "hello"); err != nil || n != 1 {
			t.Fatalf("PUBLISH = %d, %v", n, err)
		}
		if m := <-sub.Channel(); m.Channel != ch || m.Payload != "hello" {
			t.Fatalf("message = %+v", m)
		}
	})
	t.Run("ClusterShard", func(t *testing.T) {
		testenv.UseTopology(t, true)
		c := clusterClient(t, Options{})
		ctx := testCtx(t)
		p := keyPrefix(t)
		a, b := p+"{s}a", p+"x"
		if route.Slot(a) == route.Slot(b) {
			t.Fatal("test channels share a slot")
		}
		if _, err := c.SSubscribe(ctx, a, b); !errors.Is(err, ErrCrossSlot) {
			t.Fatalf("SSUBSCRIBE across slots = %v, want ErrCrossSlot", err)
		}
		sub, err := c.SSubscribe(ctx, a, p+"{s}b")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if err := sub.SSubscribe(ctx, b); !errors.Is(err, ErrCrossSlot) {
			t.Errorf("adding a channel of another slot = %v, want ErrCrossSlot", err)
		}
		if n, err := c.SPublish(ctx, a, "one"); err != nil || n != 1 {
			t.Fatalf("SPUBLISH = %d, %v", n, err)
		}
		if m := <-sub.Channel(); m.Payload != "one" || !m.Shard {
			t.Fatalf("message = %+v", m)
		}
		// Move the slot to another primary and back.
		ids := clusterNodeIDs(t)
		slot := route.Slot(a)
		src, _ := c.topo.Pick(slot, false)
		var dst string
		for _, n := range c.topo.Primaries() {
			if n != src {
				dst = n.Addr
			}
		}
		t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
		migrateSlot(t, slot, src.Addr, dst, ids)
		select {
		case m := <-sub.Channel():
			if !m.Gap {
				t.Fatalf("after the slot moved: %+v, want a Gap", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no Gap after the slot moved")
		}
		// The reconnected subscription is on the new owner.
		eventually(t, 10*time.Second, "the shard channel to be served by "+dst, func() bool {
			n, err := c.SPublish(ctx, a, "two")
			return err == nil && n == 1
		})
		for m := range sub.Channel() {
			if m.Payload == "two" {
				break
			}
			if m.Gap {
				continue
			}
			t.Fatalf("unexpected %+v", m)
		}
	})
}
