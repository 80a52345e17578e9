package testenv

import (
	"os"
	"strings"
	"testing"
)

// Names of the environment variables written by scripts/servers.sh (to
// .servers/env) and read by this package.
const (
	// EnvRequireServers, when set to "1", makes a missing
	// server variable fail the test instead of skipping it.
	EnvRequireServers = "RESPIRE_REQUIRE_SERVERS"
	// EnvStandaloneAddr is the host:port of the standalone server.
	EnvStandaloneAddr = "RESPIRE_STANDALONE_ADDR"
	// EnvSentinelAddrs is the comma-separated host:port list of the sentinels.
	EnvSentinelAddrs = "RESPIRE_SENTINEL_ADDRS"
	// EnvSentinelMaster is the master name the sentinels monitor.
	EnvSentinelMaster = "RESPIRE_SENTINEL_MASTER"
	// EnvSentinelPrimaryAddr is the host:port of the Sentinel group's
	// primary when the servers started (a failover test may change roles).
	EnvSentinelPrimaryAddr = "RESPIRE_SENTINEL_PRIMARY_ADDR"
	// EnvSentinelReplicaAddr is the host:port of the Sentinel group's
	// replica when the servers started.
	EnvSentinelReplicaAddr = "RESPIRE_SENTINEL_REPLICA_ADDR"
	// EnvClusterAddrs is the comma-separated host:port list of every Cluster
	// node, primaries and replicas.
	EnvClusterAddrs = "RESPIRE_CLUSTER_ADDRS"
)

// RequireServers reports whether a missing server must fail the test rather
// than skip it, that is whether RESPIRE_REQUIRE_SERVERS is "1".
func RequireServers() bool {
	return os.Getenv(EnvRequireServers) == "1"
}

// Standalone returns the address (host:port) of the standalone server, from
// RESPIRE_STANDALONE_ADDR. See the package documentation for what happens
// when it is not set.
func Standalone(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvStandaloneAddr)
}

// SentinelAddrs returns the addresses of the sentinels, from
// RESPIRE_SENTINEL_ADDRS.
func SentinelAddrs(t testing.TB) []string {
	t.Helper()
	return lookupList(t, EnvSentinelAddrs)
}

// SentinelMaster returns the master name the sentinels monitor, from
// RESPIRE_SENTINEL_MASTER.
func SentinelMaster(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvSentinelMaster)
}

// SentinelPrimary returns the address of the Sentinel group's primary as
// started, from RESPIRE_SENTINEL_PRIMARY_ADDR.
func SentinelPrimary(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvSentinelPrimaryAddr)
}

// SentinelReplica returns the address of the Sentinel group's replica as
// started, from RESPIRE_SENTINEL_REPLICA_ADDR.
func SentinelReplica(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvSentinelReplicaAddr)
}

// ClusterAddrs returns the addresses of every Cluster node, from
// RESPIRE_CLUSTER_ADDRS.
func ClusterAddrs(t testing.TB) []string {
	t.Helper()
	return lookupList(t, EnvClusterAddrs)
}

// lookup returns the trimmed value of the variable name, or skips (or fails)
// t when it is empty. It returns "" if t's Skipf or Fatalf returns.
func lookup(t testing.TB, name string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		missing(t, name)
		return v
	}
	UseTopology(t, false)
	return v
}

// lookupList is lookup for a comma-separated list; empty elements are
// dropped.
func lookupList(t testing.TB, name string) []string {
	t.Helper()
	var list []string
	for _, v := range strings.Split(os.Getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			list = append(list, v)
		}
	}
	if len(list) == 0 {
		missing(t, name)
		return list
	}
	UseTopology(t, false)
	return list
}

// IsShared reports whether addr is one of the shared servers the
// environment names (standalone, Sentinel data nodes as started, Cluster
// nodes), rather than a server of the test's own.
func IsShared(addr string) bool {
	for _, name := range []string{EnvStandaloneAddr, EnvSentinelPrimaryAddr, EnvSentinelReplicaAddr, EnvClusterAddrs} {
		for v := range strings.SplitSeq(os.Getenv(name), ",") {
			if strings.TrimSpace(v) == addr {
				return true
			}
		}
	}
	return false
}

func missing(t testing.TB, name string) {
	t.Helper()
	if RequireServers() {
		t.Fatalf("%s is not set but %s=1: start the servers with scripts/servers.sh start and source .servers/env, or run scripts/test.sh", name, EnvRequireServers)
		return
	}
	t.Skipf("%s is not set: no real server (scripts/servers.sh start; . .servers/env)", name)
}
