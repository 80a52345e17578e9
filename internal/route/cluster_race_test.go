package route

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestClusterMovedRacingInstallKeepsLiveNode: a MOVED recorded while a
// refresh installs a map that does not name the redirect's node never
// leaves the slot routed to a node the refresh retired (whose every
// command would fail until the next refresh): the slot's node is always
// the registered, live one.
func TestClusterMovedRacingInstallKeepsLiveNode(t *testing.T) {
	cfg := addrConfig()
	c := &Cluster{}
	c.nodes = newNodes(cfg, nil)
	c.ref = newRefresher(func(context.Context) error { return nil }, 0, time.Hour)
	defer func() { _ = c.nodes.close() }()
	empty := &clusterSnap{}
	for i := range empty.owner {
		empty.owner[i] = -1
	}
	c.snap.Store(empty)
	shards := []Shard{{Ranges: [][2]int{{0, Slots - 1}}, Primary: "127.0.0.1:1"}}
	owners, err := Owners(shards)
	if err != nil {
		t.Fatal(err)
	}
	const moved = "127.0.0.1:2"
	for round := range 1000 {
		if err := c.install(shards, owners); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			_ = c.install(shards, owners)
		})
		wg.Go(func() {
			<-start
			_, _ = c.Moved(5, moved)
		})
		close(start)
		wg.Wait()
		s := c.snap.Load()
		n := s.shards[s.owner[5]].primary
		if n.Addr == moved && c.nodes.lookup(moved, false) != n {
			t.Fatalf("round %d: slot 5 is routed to a retired node %s", round, moved)
		}
	}
}
