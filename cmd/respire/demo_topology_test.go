package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
)

// runTopologyDemo runs the demo with args in RESP2 and RESP3 and checks
// the table like TestDemoRealServer; nodeOK checks each row's NODE.
func runTopologyDemo(t *testing.T, args []string, nodeOK func(string) bool) {
	t.Helper()
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, append(slices.Clone(args), "--resp", proto)...)
			if code != exitOK {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s\nstdout:\n%s", code, errs, out)
			}
			checkDemoTable(t, out)
			for id, row := range parseTable(t, out) {
				if !nodeOK(row["NODE"]) {
					t.Errorf("%s: NODE = %q, not a node of the topology", id, row["NODE"])
				}
			}
			if !strings.Contains(out, "all 6 scenarios behaved as specified") {
				t.Errorf("no success line in output:\n%s", out)
			}
		})
	}
}

// TestDemoSentinel runs the demo against the test script's Sentinel
// group: a Sentinel client whose primary connections go through a fault
// proxy shows the same table as a standalone server.
func TestDemoSentinel(t *testing.T) {
	// The demo counts commandstats: no other package's test meanwhile.
	// Exclusive first, before the lookups take the servers shared.
	testenv.UseTopology(t, true)
	addrs := testenv.SentinelAddrs(t)
	name := testenv.SentinelMaster(t)
	args := []string{"demo", "--topology", "sentinel", "--addr", strings.Join(addrs, ","), "--primary-name", name}
	runTopologyDemo(t, args, func(node string) bool {
		// An earlier failover test may have changed the primary: any
		// loopback data node that is not a sentinel will do.
		return checkLoopback(node) == nil && !slices.Contains(addrs, node)
	})
}

// TestDemoCluster runs the demo against the test script's Cluster: each
// scenario's key lives on some primary, whose proxy injects the fault.
func TestDemoCluster(t *testing.T) {
	testenv.UseTopology(t, true)
	addrs := testenv.ClusterAddrs(t)
	args := []string{"demo", "--topology", "cluster", "--addr", strings.Join(addrs, ",")}
	runTopologyDemo(t, args, func(node string) bool { return slices.Contains(addrs, node) })
}

// TestDemoTopologyUsage: command lines the demo refuses before touching a
// server exit with status 2.
func TestDemoTopologyUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown topology", []string{"--topology", "ring", "--addr", "127.0.0.1:1"}, `--topology must be standalone, sentinel or cluster, not "ring"`},
		{"sentinel without addr", []string{"--topology", "sentinel"}, "--topology sentinel needs --addr"},
		{"cluster without addr", []string{"--topology", "cluster"}, "--topology cluster needs --addr"},
		{"primary name without sentinel", []string{"--primary-name", "x", "--addr", "127.0.0.1:1"}, "--primary-name needs --topology sentinel"},
		{"primary name on a cluster", []string{"--topology", "cluster", "--primary-name", "x", "--addr", "127.0.0.1:1"}, "--primary-name needs --topology sentinel"},
		{"empty primary name", []string{"--topology", "sentinel", "--primary-name", "", "--addr", "127.0.0.1:1"}, "--primary-name must not be empty"},
		{"empty list", []string{"--topology", "cluster", "--addr", " , "}, "want host:port[,host:port...]"},
		{"remote sentinel", []string{"--topology", "sentinel", "--addr", "127.0.0.1:26379,192.0.2.1:26379"}, `"192.0.2.1:26379" is not a loopback address`},
		{"remote seed", []string{"--topology", "cluster", "--addr", "example.com:7000"}, `"example.com:7000" is not a loopback address`},
		{"bad seed", []string{"--topology", "cluster", "--addr", "127.0.0.1"}, `"127.0.0.1": want host:port`},
		// An address holding credentials is refused without repeating them.
		{"credentials in addr", []string{"--addr", "pw-2b7c@127.0.0.1:6379"}, "want host:port without user information"},
		{"URL in addr", []string{"--addr", "redis://:pw-2b7c@127.0.0.1:6379"}, "want host:port, not a URL"},
		{"credentials in a seed", []string{"--topology", "cluster", "--addr", "127.0.0.1:7000,pw-2b7c@127.0.0.1:7001"}, "want host:port without user information"},
		{"database on a cluster", []string{"--topology", "cluster", "--db", "1", "--addr", "127.0.0.1:1"}, "Options.DB: a cluster has only database 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, append([]string{"demo"}, tt.args...)...)
			if code != exitUsage {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitUsage, errs)
			}
			if !strings.Contains(errs, tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errs, tt.wantErr)
			}
			if out != "" {
				t.Errorf("stdout = %q, want empty", out)
			}
			if strings.Contains(errs, "pw-2b7c") {
				t.Errorf("stderr = %q shows the password", errs)
			}
		})
	}
}

// TestDemoUnknownPrimaryName: a name no sentinel monitors is a usage
// error naming the option.
func TestDemoUnknownPrimaryName(t *testing.T) {
	addrs := testenv.SentinelAddrs(t)
	testenv.UseTopology(t, false)
	code, _, errs := runCLI(t, nil, "demo", "--topology", "sentinel", "--addr", strings.Join(addrs, ","),
		"--primary-name", "respire-demo-no-such-primary", "--timeout", "2s")
	if code != exitUsage {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitUsage, errs)
	}
	if !strings.Contains(errs, "Options.Sentinel.PrimaryName") {
		t.Errorf("stderr = %q, want it to name Options.Sentinel.PrimaryName", errs)
	}
}
