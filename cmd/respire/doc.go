// Command respire is the command-line program of respire-go.
//
// Usage:
//
//	respire [flags]
//	respire [flags] COMMAND [ARG...]
//	respire [flags] -- COMMAND [ARG...]
//	respire demo [flags] [--topology standalone|sentinel|cluster] [--primary-name name]
//	respire ping [flags]
//	respire do [flags] COMMAND [ARG...]
//	respire scan [flags] [--match pattern] [--count n] [--type t]
//	respire subscribe [flags] [--pattern] [--count n] CHANNEL...
//	respire help [COMMAND]
//
// The first word that is neither a flag nor a flag's value picks what
// runs: one of the subcommands demo, ping, do, scan, subscribe and help
// (matched exactly, in lower case), or else a Redis command, sent as do
// sends it ("respire GET k" is "respire do GET k"). A word after "--" is
// never a subcommand: "respire -- scan 0" sends SCAN 0. Without such a
// word, respire starts the interactive mode.
//
// # Interactive mode
//
// Without a command, respire connects and reads commands from standard
// input, one a line, always (whether or not standard input is a
// terminal), so that commands can be piped in too. When standard input is
// a terminal it writes a prompt before each line: the server's address,
// the database in brackets when it is not 0, and "> ", as in
//
//	127.0.0.1:6379> SET greeting "hello\x21 world"
//	OK
//	127.0.0.1:6379> GET greeting
//	"hello! world"
//
// A line is split into words at spaces and tabs. Within double quotes,
// spaces are kept and \n \r \t \b \a \\ \" and \xHH (two hex digits) are
// escapes (another backslashed character stands for itself); within
// single quotes everything is kept as is except \' for a quote. A closing
// quote must end its word, and a quote without its closing quote is an
// error ("(error) unbalanced quotes"; nothing is sent). Each command goes
// through [respire.Client.Do] like do's, and its reply is printed like
// redis-cli prints it, on standard output, errors included ("(error) ERR
// ..."). Empty lines are skipped. "quit" or "exit" (any case), the end of
// input (Ctrl-D) or an interrupt (Ctrl-C) ends the mode.
//
// The first command that the shared connection refuses but a connection
// of one's own serves (MULTI, WATCH, SELECT, CLIENT SETNAME, AUTH, ...)
// moves the session to such a connection ([respire.Client.Dedicated]):
// that command and every later one run there, in order, so that a
// transaction typed line by line and the selected database last, as in
// redis-cli, and the prompt shows the database. Commands there are never
// retried. If that connection fails, the mode says that its state is gone
// and sends the next commands on the shared connection again. Commands
// refused on both (SUBSCRIBE, MONITOR, HELLO, ...) print the refusal, and
// for SUBSCRIBE, PSUBSCRIBE and HELLO the command line's way: subscribe
// and --resp.
//
// There is no line editor: lines are read as the terminal delivers them,
// with its own editing (backspace), and there is no history or completion
// (a line editor would need a dependency the module does not take; run
// respire under rlwrap for both).
//
// A connection that cannot be made at the start ends the mode with exit
// status 1. Once connected, the exit status is 0 when standard input is a
// terminal; otherwise it is 1 when any command failed, so that a script
// piping commands in can tell.
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
// Each row shows the command, its retry category, the policy, the fault,
// SENDS (frames of the command the proxy received), EXECUTED (how many
// times the server ran it), the call's duration and CHECK; indented lines
// under the row give the caller's result (value or error text), the
// retries (the respire.command.retries counter by outcome, read from an
// OpenTelemetry ManualReader), a note, and why a check failed. Every line
// fits in 120 columns. The demo checks itself: CHECK is "ok" when the
// scenario behaved as specified, and the exit status is 1 when any did
// not.
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
// fault at the proxy of its key's server: the primary the sentinels name,
// or the Cluster primary owning the key's slot. A "node" line under each
// row names that server; EXECUTED is the delta of its INFO commandstats.
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
// standard error as "(error) ..." with exit status 1. Flags may come
// before or after COMMAND (see Flags); "do" itself may be left out.
// Commands the shared connection refuses (SUBSCRIBE, MULTI, SELECT, ...)
// print the refusal (and the command line's way, as in the interactive
// mode) and exit with status 1; blocking commands (BLPOP k 1)
// run on a connection of their own.
//
// # scan
//
// scan prints the keys [respire.Client.Scan] returns, one per line:
// --match filters by glob pattern, --count is the page-size hint, --type
// keeps one key type. SCAN may return a key more than once. A key that
// could be misread (a control character such as a newline, invalid UTF-8
// or a leading quote) is quoted and escaped like a bulk string, so each
// key is one line.
//
// # subscribe
//
// subscribe prints the messages published to the channels (patterns with
// --pattern) as "channel: payload" lines until interrupted, or until
// --count messages. A channel or payload that could be misread (one with
// a control character such as a newline, invalid UTF-8 or a leading
// quote; a channel also with ": ") is quoted and escaped like a bulk
// string, so each message is one line. When the connection is lost it reconnects, subscribes
// again and reports on standard error that messages may have been lost.
//
// # Flags
//
// Every subcommand takes these connection flags, before or after the
// command word and its arguments; "--" ends the flags, and every word
// after it is an argument. After the Redis command a word that starts with
// "-" but names no flag is an argument ("respire LRANGE k 0 -1"); one that
// names a flag needs "--" before it ("respire SET k -- -p"). A
// subcommand's own flags (demo's --topology, scan's --match, ...) come
// after the subcommand.
//
//	-h host            server host; defaults to 127.0.0.1
//	-p port            server port; defaults to 6379
//	--addr host:port   server address, instead of -h and -p; defaults to
//	                   127.0.0.1:6379 (demo: the embedded server; demo
//	                   --topology sentinel or cluster: a comma-separated
//	                   list of sentinels or seed nodes)
//	-u URL             the server as a URL, parsed by [respire.ParseURL]:
//	                   redis://[[user]:password@]host[:port][/db], rediss://
//	                   for TLS, also redis+sentinel:// and redis+cluster://
//	                   (not for demo). It gives the address, user, password,
//	                   database and TLS, so it refuses -h, -p, --addr,
//	                   --user, -a/--password, -n/--db and --tls; --resp and
//	                   --timeout apply over it.
//	--user name        ACL user name; defaults to the server's default user
//	-a, --password pw  password for AUTH; when none is given (here or in
//	                   -u's URL) the environment variable RESPIRE_PASSWORD
//	                   is used. It is never printed. A password on the
//	                   command line (-a, --password, -u) prints a warning
//	                   on standard error: other users of the machine may
//	                   see it in the process list.
//	--no-auth-warning  no such warning
//	-n, --db n         database index; defaults to 0
//	--tls              connect with TLS; the server's certificate is
//	                   verified against the system's roots, for the host
//	                   of the address
//	--resp 2|3         protocol version; defaults to RESP3 with a fallback
//	                   to RESP2 for servers without HELLO
//	--timeout d        dial and command timeout; defaults to 5s
//	--help             print the subcommand's flags
//
// -h is the host, as in redis-cli; help is --help or "respire help".
//
// The embedded demo server has no users: demo ignores --user and
// --password without an address. demo does not run over TLS.
//
// # Errors
//
// A connection that cannot be made says why and where: "respire: could
// not connect to 127.0.0.1:6380: connection refused", "... cannot resolve
// host", "... no answer within 5s", "... the server's TLS certificate did
// not verify"; credentials the server refuses print
// "respire: authentication failed at 127.0.0.1:6379: WRONGPASS ...", a
// database it lacks "respire: could not select database 99 at
// 127.0.0.1:6379: ERR DB index is out of range". An
// error reply prints like redis-cli's, "(error) ERR ...", on standard
// error (standard output in the interactive mode).
//
// # Exit status
//
// 0 on success; 1 when a command fails (connection error, error reply) or
// a demo scenario does not behave as specified; 2 on a usage error.
package main
