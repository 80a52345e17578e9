package route

import (
	"strconv"
	"testing"
)

// TestSentinelInstallBoundsReplicas: the replicas a sentinel lists are
// installed once each, without the primary, and at most MaxReplicas of
// them: a sentinel that lists thousands (or one address many times)
// neither makes a node per entry nor weighs one replica over the others
// in replica reads.
func TestSentinelInstallBoundsReplicas(t *testing.T) {
	cfg := addrConfig()
	s := &Sentinel{nodes: newNodes(cfg, nil)}
	defer func() { _ = s.nodes.close() }()
	const primary = "127.0.0.1:1"
	replicas := []string{primary, "127.0.0.1:2", "127.0.0.1:2", "127.0.0.1:3"}
	for p := 10; p < 10+2*MaxReplicas; p++ {
		replicas = append(replicas, "127.0.0.1:"+strconv.Itoa(p))
	}
	if err := s.install(primary, replicas); err != nil {
		t.Fatal(err)
	}
	got := s.snap.Load().replicas
	if len(got) != MaxReplicas {
		t.Errorf("%d replicas installed, want MaxReplicas (%d)", len(got), MaxReplicas)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if n.Addr == primary || seen[n.Addr] {
			t.Errorf("replica %s installed twice or as the primary", n.Addr)
		}
		seen[n.Addr] = true
	}
	if !seen["127.0.0.1:2"] || !seen["127.0.0.1:3"] {
		t.Errorf("the first replicas listed were not kept: %v", seen)
	}
}
