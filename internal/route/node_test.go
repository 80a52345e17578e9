package route

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestNodesAt: At finds a known node in the role the topology knows it
// (a replica keeps its replica connection) and makes a primary node only
// for an unknown address.
func TestNodesAt(t *testing.T) {
	cfg := addrConfig()
	ns := newNodes(cfg, nil)
	defer func() { _ = ns.close() }()
	replica, err := ns.get("127.0.0.1:1", true)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ns.at("127.0.0.1:1"); err != nil || n != replica {
		t.Errorf("at(replica address) = %v, %v; want the replica node", n, err)
	}
	n, err := ns.at("127.0.0.1:2")
	if err != nil || n.Replica {
		t.Fatalf("at(unknown) = %+v, %v; want a new primary node", n, err)
	}
	if again, _ := ns.get("127.0.0.1:2", false); again != n {
		t.Errorf("the new node is not registered")
	}
}

// addrConfig is a Config whose connections go to the node's address with
// the defaults; nothing is dialled until a node is used.
func addrConfig() Config {
	at := func(addr string, replica bool) wire.Config { return wire.Config{Addr: addr} }
	return Config{Shared: at, Dedicated: at}
}

// TestRetiredNodeFailsAsRetired: a node that left the topology, still
// reached through a stale snapshot, fails every way in as its shared
// endpoint does, with the cause ErrRetired (unwritten, dial failed: a
// retry goes to the node that replaced it), never as a closed client:
// its pool's Get, and a frame on a connection it had lent (Lost).
func TestRetiredNodeFailsAsRetired(t *testing.T) {
	testenv.Bubble(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		at := func(addr string, replica bool) wire.Config {
			return wire.Config{Addr: addr, Dial: s.Dial}
		}
		ns := newNodes(Config{Shared: at, Dedicated: at, PoolMax: 2}, nil)
		defer func() { _ = ns.close() }()
		n, err := ns.get("10.0.0.1:6379", false)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		lent, err := n.Pool.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ns.retain(nil)
		ns.retiring.Wait()
		check := func(what string, err error, reason wire.Reason) {
			t.Helper()
			var ce *wire.ConnError
			if !errors.As(err, &ce) || ce.Reason != reason || ce.Evidence != wire.Unwritten || !errors.Is(err, ErrRetired) || errors.Is(err, wire.ErrClosed) {
				t.Errorf("%s on a retired node: %v, want %v, unwritten, cause ErrRetired", what, err, reason)
			}
		}
		_, err = n.EP.Conn(ctx)
		check("EP.Conn", err, wire.DialFailed)
		_, err = n.Pool.Get(ctx)
		check("Pool.Get", err, wire.DialFailed)
		f := wire.GetFrame()
		f.Buf = resp.AppendArrayHeader(f.Buf, 1)
		f.Buf = resp.AppendBulkString(f.Buf, "PING")
		f.Want = wire.WantValue
		check("a lent connection's Submit", lent.Submit(ctx, time.Time{}, f), wire.Lost)
		f.Release()
		n.Pool.Discard(lent)
	})
}
