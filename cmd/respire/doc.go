// Command respire is the command-line program of respire-go.
//
// Usage:
//
//	respire demo [flags] [--topology standalone|sentinel|cluster] [--primary-name name]
//	respire ping [flags]
//	respire do [flags] COMMAND [ARG...]
//	respire scan [flags] [--match pattern] [--count n] [--type t]
//	respire subscribe [flags] [--pattern] [--count n] CHANNEL...
//	respire help [COMMAND]
//
// # demo
//
// demo shows the retry policy at work. Each scenario makes one call with a
// fresh client through a fault proxy ([respiretest.Proxy]) that injects a
// fault into that call's frames, and prints one row of a table:
//
//	a  GET, default policy, reply lost (DropAfterForward): resent, succeeds.
//	b  INCR, default policy, reply lost: not resent; the error says the
//	   INCR may have been executed, and the server ran it once.
//	c  INCR, MaxCommandRetryCategory WriteAccumulating, reply lost: resent,
//	   succeeds, and the server ran it twice (the value grew by 2).
//	d  SET NX, MaxCommandRetryCategory WriteChecked, reply lost: resent,
//	   reports "not set" although the first attempt wrote the key.
//	e  GET, MaxAttempts 5, LOADING injected three times: backoff absorbs
//	   the burst; the fourth send succeeds.
//	f  GET, default policy, BUSY injected: not selectable, not resent.
//
// The columns are the command and its retry category, the policy, the
// fault, the caller's result (value or error text), SENDS (frames of the
// command the proxy received), EXECUTED (how many times the server ran
// it), RETRIES (the respire.command.retries counter by outcome, read from
// an OpenTelemetry ManualReader), the call's duration, CHECK and a note.
// The demo checks itself: CHECK is "ok" when the scenario behaved as
// specified, and the exit status is 1 when any did not.
//
// Without --addr, demo runs against the embedded server of package
// respiretest (miniredis behind the proxy) and counts executions at the
// proxy's hop to the engine. With --addr, which must be a loopback address
// such as 127.0.0.1:6379, it places a proxy in front of that server and
// counts executions with INFO commandstats deltas read directly from the
// server; it writes and deletes keys under "respire:demo:". Those counts
// are server-wide: when the server ran more of a command than the proxy
// forwarded for the scenario's key, other clients ran it meanwhile, and the
// scenario runs again (three tries at most; a scenario disturbed every time
// fails its check and says so).
//
// --topology (default standalone) runs the same scenarios against a
// Sentinel group or a Cluster, with a Sentinel or Cluster client
// ([respire.Options.Sentinel], [respire.Options.Cluster]):
//
//	respire demo --topology sentinel --addr 127.0.0.1:26380,127.0.0.1:26381 --primary-name respire-primary
//	respire demo --topology cluster --addr 127.0.0.1:17000,127.0.0.1:17001,127.0.0.1:17002
//
// For sentinel, --addr lists the sentinels and --primary-name (default
// "respire-primary") names the monitored primary; for cluster, --addr
// lists seed nodes. Every address, including the nodes the sentinels and
// the cluster report, must be a loopback address. Since those report the
// nodes' real addresses, the scenario clients' [respire.Options.Dialer]
// gives each data node a fault proxy of its own and dials the proxy
// instead (the sentinels are dialed directly). Each scenario injects its
// fault at the proxy of its key's server, shown in a NODE column: the
// primary the sentinels name, or the Cluster primary owning the key's
// slot. EXECUTED is the delta of that server's INFO commandstats.
//
// # ping
//
// ping connects, sends PING and prints the reply and the round-trip time
// of the PING (the connection's handshake excluded).
//
// # do
//
// do sends COMMAND with its arguments through [respire.Client.Do] with a
// descriptor from [respire.NewCommand] (never retried) and prints the reply
// like redis-cli: OK, "value", (integer) 5, (nil), numbered aggregate
// elements. The command name may hold a subcommand ("CLIENT INFO") or the
// subcommand may be the first argument. An error reply is printed to
// standard error as "(error) ..." with exit status 1. Flags must come
// before COMMAND. Commands the shared connection refuses (SUBSCRIBE,
// MULTI, SELECT, ...) print the refusal and exit with status 1; blocking
// commands (BLPOP k 1) run on a connection of their own.
//
// # scan
//
// scan prints the keys [respire.Client.Scan] returns, one per line:
// --match filters by glob pattern, --count is the page-size hint, --type
// keeps one key type. SCAN may return a key more than once.
//
// # subscribe
//
// subscribe prints the messages published to the channels (patterns with
// --pattern) as "channel: payload" lines until interrupted, or until
// --count messages. When the connection is lost it reconnects, subscribes
// again and reports on standard error that messages may have been lost.
//
// # Flags
//
// Every subcommand takes these flags:
//
//	--addr host:port   server address; defaults to 127.0.0.1:6379 (demo:
//	                   the embedded server; demo --topology sentinel or
//	                   cluster: a comma-separated list of sentinels or
//	                   seed nodes)
//	--user name        ACL user name; defaults to the server's default user
//	--password secret  password for AUTH; when empty the environment variable
//	                   RESPIRE_PASSWORD is used. It is never printed.
//	--db n             database index; defaults to 0
//	--resp 2|3         protocol version; defaults to RESP3 with a fallback
//	                   to RESP2 for servers without HELLO
//	--timeout d        dial and command timeout; defaults to 5s
//
// The embedded demo server has no users: demo ignores --user and
// --password without --addr.
//
// # Exit status
//
// 0 on success; 1 when a command fails (connection error, error reply) or
// a demo scenario does not behave as specified; 2 on a usage error.
package main
