package respire

// A Cluster node that leaves the slot map while a command, a batch group
// or a transaction waits for its connection: nothing was written, so the
// unit goes to the slot's owner in the new map within the same attempt
// (spec: "MOVED, ASK and node retirement are handled within an attempt"),
// even with no retry policy at all.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// parkedNode is a node address no server listens on. The test makes the
// client's map name it for one slot (a MOVED the client records); a dial
// to it waits until release, so a unit routed there waits for its
// connection, unwritten. It is also the client's log handler, to learn
// when the client retired the node.
type parkedNode struct {
	addr        string
	arriveOnce  sync.Once
	arrived     chan struct{} // closed at the first dial
	release     chan struct{} // ends every dial, with an error
	retireOnce  sync.Once
	retired     chan struct{} // closed when the client logs the node's retirement
	releaseOnce sync.Once
}

func newParkedNode() *parkedNode {
	return &parkedNode{addr: "127.0.0.1:17999", arrived: make(chan struct{}), release: make(chan struct{}), retired: make(chan struct{})}
}

func (p *parkedNode) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != p.addr {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	p.arriveOnce.Do(func() { close(p.arrived) })
	<-p.release
	return nil, errors.New("parked dial released")
}

func (p *parkedNode) Enabled(context.Context, slog.Level) bool { return true }
func (p *parkedNode) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *parkedNode) WithGroup(string) slog.Handler            { return p }

func (p *parkedNode) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "respire: endpoint retired" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "addr" && a.Value.String() == p.addr {
			p.retireOnce.Do(func() { close(p.retired) })
		}
		return true
	})
	return nil
}

// retireWhileWaiting runs run on a Cluster client (no retry policy) whose
// map names a parked node for slot, after run's unit is waiting for the
// parked node's connection: a refresh installs the real map, which
// retires the parked node, and only then is its dial released. It
// returns run's error and the proxies in front of the real nodes.
func retireWhileWaiting(t *testing.T, setup func(c *Client) (slot int), run func(ctx context.Context, c *Client) error) error {
	t.Helper()
	p := newParkedNode()
	t.Cleanup(func() { p.releaseOnce.Do(func() { close(p.release) }) })
	// DialTimeout also bounds a refresh's query to the parked node.
	c, proxies := proxiedClusterNodes(t, Options{Dialer: p.dial, DialTimeout: time.Second, Logger: slog.New(p)}, true)
	ctx := testCtx(t)
	slot := setup(c)

	// No refresh may undo the parked route before the unit waits on it.
	var frozen []*respiretest.RuleHandle
	for _, px := range proxies {
		frozen = append(frozen, px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Times: respiretest.Always,
			Action: respiretest.Inject("ERR no refresh yet")}))
	}
	if _, err := c.topo.Moved(slot, p.addr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, c) }()
	select {
	case <-p.arrived:
	case err := <-done:
		t.Fatalf("the unit ended (%v) without waiting for the parked node", err)
	case <-ctx.Done():
		t.Fatal("the unit never dialed the parked node")
	}
	for _, h := range frozen {
		h.Remove()
	}
	// A refresh already under way when the rules went may still fail.
	for c.topo.Refresh(ctx, true) != nil {
		if ctx.Err() != nil {
			t.Fatal("no refresh installed the real map")
		}
	}
	select {
	case <-p.retired:
	case <-ctx.Done():
		t.Fatal("the real map did not retire the parked node")
	}
	p.releaseOnce.Do(func() { close(p.release) })
	return <-done
}

// TestClusterRetiredNodeRoutedWithinAttempt: a command, a batch group and
// a transaction waiting for the connection of a node the topology then
// retires are sent, once, to the slot's owner in the new map, with no
// retry policy: the retirement is handled within the attempt.
func TestClusterRetiredNodeRoutedWithinAttempt(t *testing.T) {
	countsCommands(t)
	var (
		owner, other string // real primaries
		tag, otherK  string
		before       map[string]int
	)
	// setup picks a hash tag on the first primary (the slot the parked node
	// takes) and a key on the second, and reads the owner's counters.
	setup := func(t *testing.T) func(c *Client) int {
		return func(c *Client) int {
			primaries := c.topo.Primaries()
			owner, other = primaries[0].Addr, primaries[1].Addr
			tag = bcTagOn(t, c, owner)
			otherK = bcTagOn(t, c, other) + "b"
			ctx := testCtx(t)
			if _, err := c.Del(ctx, tag+"s", tag+"n"); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(ctx, otherK, "vb"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), tag+"s", tag+"n", otherK) })
			before = bcCalls(t, owner, "set", "incr", "exec")
			return route.Slot(tag)
		}
	}
	ran := func(t *testing.T, name string, want int) {
		t.Helper()
		if got := commandCalls(t, owner, name) - before[name]; got != want {
			t.Errorf("the slot's owner ran %s %d times, want %d", name, got, want)
		}
	}

	t.Run("Command", func(t *testing.T) {
		err := retireWhileWaiting(t, setup(t), func(ctx context.Context, c *Client) error {
			return c.Set(ctx, tag+"s", "v")
		})
		if err != nil {
			t.Fatalf("SET = %v, want it sent to the new owner", err)
		}
		ran(t, "set", 1)
	})

	t.Run("BatchGroup", func(t *testing.T) {
		var set Future[struct{}]
		var get Future[string]
		err := retireWhileWaiting(t, setup(t), func(ctx context.Context, c *Client) error {
			b := c.NewBatch()
			set = b.Set(tag+"s", "v") // the parked node's group
			get = b.Get(otherK)       // another group
			return b.Execute(ctx)
		})
		if err != nil {
			t.Fatalf("Execute = %v, want the group sent to the new owner", err)
		}
		if err := set.Err(); err != nil {
			t.Errorf("SET of the retired node's group = %v", err)
		}
		if v, err := get.Result(); v != "vb" || err != nil {
			t.Errorf("GET of the other group = %q, %v; want vb", v, err)
		}
		ran(t, "set", 1)
	})

	t.Run("Transaction", func(t *testing.T) {
		var incr Future[int64]
		err := retireWhileWaiting(t, setup(t), func(ctx context.Context, c *Client) error {
			tx := c.NewTransaction()
			tx.Set(tag+"s", "v")
			incr = tx.Incr(tag + "n")
			return tx.Execute(ctx)
		})
		if err != nil {
			t.Fatalf("Execute = %v, want the transaction sent to the new owner", err)
		}
		if n, err := incr.Result(); n != 1 || err != nil {
			t.Errorf("INCR in the transaction = %d, %v; want 1", n, err)
		}
		ran(t, "exec", 1)
		ran(t, "incr", 1)
	})
}
