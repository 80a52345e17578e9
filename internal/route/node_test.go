package route

import (
	"testing"

	"github.com/respire-go/respire/internal/wire"
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
