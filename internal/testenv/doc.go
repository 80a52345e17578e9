// Package testenv tells tests where the real Redis servers are.
//
// scripts/servers.sh starts a standalone server, a Sentinel group and a
// Cluster on 127.0.0.1 and writes their addresses to .servers/env as
// environment variables; scripts/test.sh sources that file and sets
// RESPIRE_REQUIRE_SERVERS=1. Tests ask for an address with [Standalone],
// [SentinelAddrs], [SentinelMaster], [SentinelPrimary], [SentinelReplica] or
// [ClusterAddrs]. When the variable is not set the test is skipped, with a
// message naming the variable, unless [RequireServers] reports true, in which
// case the test fails: a test run that is meant to use the servers never
// passes by skipping them.
//
// To run one package's tests against the servers by hand:
//
//	scripts/servers.sh start
//	. .servers/env
//	go test ./internal/wire/
//	scripts/servers.sh stop
//
// Everything in this package is safe for concurrent use.
package testenv
