package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/ascii"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitFail  = 1 // a command failed, or the demo's self-check did
	exitUsage = 2 // bad command line
)

// Defaults: the server address, the dial and command timeout, and the
// environment variable that holds the password.
const (
	defaultAddr    = "127.0.0.1:6379"
	defaultTimeout = 5 * time.Second
	passwordEnv    = "RESPIRE_PASSWORD"
)

// main runs the program with the process's arguments, streams and
// environment; an interrupt cancels the context.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, invocation{os.Args[1:], os.Stdin, stdinIsTerminal(os.Stdin), os.Stdout, os.Stderr, os.Getenv})
	stop()
	os.Exit(code)
}

// stdinIsTerminal reports whether f, the standard input, is a terminal:
// a character device other than the null device (which services and cron
// give as standard input).
func stdinIsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// invocation is one run of the program: its command line (without the
// program name), standard streams and environment.
type invocation struct {
	line []string
	// stdin is read by the interactive mode; terminal reports that it is
	// a terminal, so the interactive mode prompts.
	stdin    io.Reader
	terminal bool
	stdout   io.Writer
	stderr   io.Writer
	// getenv reads the environment (RESPIRE_PASSWORD).
	getenv func(string) string
}

// run executes the command line of a and returns the exit code. The first
// word that is not a connection flag or a flag's value names a subcommand
// (demo, ping, do, scan, subscribe, help; matched exactly) or is a Redis
// command sent like do's; without one, run starts the interactive mode.
func run(ctx context.Context, a invocation) int {
	stdout, stderr, getenv := a.stdout, a.stderr, a.getenv
	i, afterDashes, err := findCommand(a.line)
	if errors.Is(err, errHelp) {
		usage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "respire: %v\n", err)
		fmt.Fprintln(stderr, "Run 'respire help' for usage.")
		return exitUsage
	}
	if i < 0 {
		return runInteractive(ctx, a)
	}
	name := a.line[i]
	if _, sub := subcommands[name]; afterDashes || name == "" || (name != "help" && !sub) {
		return runDo(ctx, "", a.line, stdout, stderr, getenv)
	}
	rest := append(append([]string{}, a.line[:i]...), a.line[i+1:]...)
	switch name {
	case "demo":
		return runDemoCommand(ctx, rest, stdout, stderr, getenv)
	case "ping":
		return runPing(ctx, rest, stdout, stderr, getenv)
	case "do":
		return runDo(ctx, "do", rest, stdout, stderr, getenv)
	case "scan":
		return runScan(ctx, rest, stdout, stderr, getenv)
	case "subscribe":
		return runSubscribe(ctx, rest, stdout, stderr, getenv)
	}
	// help [COMMAND], ignoring connection flags
	if j, _, _ := findCommand(rest); j >= 0 {
		topic := rest[j]
		if fs := subcommandFlags(topic, new(connFlags), stdout); fs != nil && topic != "" {
			if add := ownFlags[topic]; add != nil {
				add(fs)
			}
			fs.Usage()
			return exitOK
		}
		fmt.Fprintf(stderr, "respire: unknown command %q\n\n", topic)
		usage(stderr)
		return exitUsage
	}
	usage(stdout)
	return exitOK
}

// usageText is the program's help, printed by "respire help".
const usageText = `respire is the command-line program of respire-go, a Redis client whose
retry policy resends a command only when the failure was selected and the
caller accepted that command's risk.

Usage:

	respire [flags]                      interactive mode: read commands, print replies
	respire [flags] COMMAND [ARG...]     send a Redis command, print the reply like redis-cli
	respire [flags] -- COMMAND [ARG...]  the same; COMMAND may look like a flag or a subcommand
	respire demo [flags] [--topology T] [--primary-name N]
	                                     show the retry policy at work with injected faults
	                                     (T: standalone, sentinel or cluster)
	respire ping [flags]                 send PING, print PONG and the round-trip time
	respire do [flags] COMMAND [ARG...]  send any command (same as without do)
	respire scan [flags] [--match P] [--count N] [--type T]
	                                     print the keys SCAN returns, one per line
	respire subscribe [flags] [--pattern] [--count N] CHANNEL...
	                                     print messages until interrupted
	respire help [COMMAND]               print this help, or a command's flags

Connection flags (every command; before or after it; -- ends the flags):

	-h host            server host (default 127.0.0.1)
	-p port            server port (default 6379)
	--addr host:port   server address, instead of -h and -p
	                   (default 127.0.0.1:6379; demo: embedded server)
	-u URL             redis://[[user]:password@]host[:port][/db], rediss:// for TLS
	                   (also redis+sentinel:// and redis+cluster://); not with the
	                   address, user, password, database or TLS flags
	--user name        ACL user name (default: the server's default user)
	-a, --password pw  password; better: set RESPIRE_PASSWORD (never printed;
	                   a password on the command line prints a warning)
	--no-auth-warning  no warning about a password on the command line
	-n, --db n         database index (default 0)
	--tls              connect with TLS, verifying the server's certificate
	--resp 2|3         protocol version (default: RESP3, falling back to RESP2)
	--timeout d        dial and command timeout (default 5s)

After COMMAND, a word that starts with "-" but is no flag (LRANGE k 0 -1)
is an argument; put -- before arguments that are flags' names.

Exit status: 0 on success, 1 when a command fails or a demo check fails,
2 on a usage error.
`

// usage writes usageText to w.
func usage(w io.Writer) { fmt.Fprint(w, usageText) }

// subcommands maps each subcommand to its synopsis and --addr default;
// "" is the interactive mode and the Redis command without do.
var subcommands = map[string]struct{ synopsis, addr string }{
	"":          {"respire [flags] [COMMAND [ARG...]]", defaultAddr},
	"demo":      {"respire demo [flags] [--topology standalone|sentinel|cluster] [--primary-name name]", ""},
	"ping":      {"respire ping [flags]", defaultAddr},
	"do":        {"respire do [flags] COMMAND [ARG...]", defaultAddr},
	"scan":      {"respire scan [flags] [--match pattern] [--count n] [--type t]", defaultAddr},
	"subscribe": {"respire subscribe [flags] [--pattern] [--count n] CHANNEL...", defaultAddr},
}

// ownFlags adds a subcommand's own flags, bound to values nobody reads,
// so that "help COMMAND" lists them as "COMMAND --help" does.
var ownFlags = map[string]func(*flag.FlagSet){
	"demo":      func(fs *flag.FlagSet) { newDemoFlags().register(fs) },
	"scan":      func(fs *flag.FlagSet) { scanFlags(fs, new(respire.ScanOptions)) },
	"subscribe": func(fs *flag.FlagSet) { subscribeFlags(fs, new(int), new(bool)) },
}

// subcommandFlags returns the flag set of subcommand name bound to f,
// writing its errors and usage to w, or nil for an unknown name.
func subcommandFlags(name string, f *connFlags, w io.Writer) *flag.FlagSet {
	sc, ok := subcommands[name]
	if !ok {
		return nil
	}
	return f.flagSet(name, sc.addr, sc.synopsis, w)
}

// parse parses args into a new flag set of the subcommand name, with the
// flags extra adds; it returns the positional arguments, or an exit code
// when the caller should stop. lenient is [parseArgs]'s. It warns on
// stderr about a password on the command line.
func parse(name string, f *connFlags, args []string, stderr io.Writer, lenient bool, extra ...func(*flag.FlagSet)) ([]string, int, bool) {
	fs := subcommandFlags(name, f, stderr)
	for _, add := range extra {
		add(fs)
	}
	rest, err := parseArgs(fs, args, lenient)
	if errors.Is(err, errHelp) {
		fs.SetOutput(stderr)
		fs.Usage()
		return nil, exitOK, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "respire: %v\n", err)
		fmt.Fprintf(stderr, "Usage: %s (%s lists the flags)\n", subcommands[name].synopsis, strings.TrimSpace("respire help "+name))
		return nil, exitUsage, false
	}
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	if f.passwordOnCommandLine() && !f.noAuthWarning {
		fmt.Fprintln(stderr, passwordWarning)
	}
	return rest, 0, true
}

// connect validates the flags and connects.
func connect(ctx context.Context, f *connFlags, getenv func(string) string, stderr io.Writer) (*respire.Client, respire.Options, int) {
	opts, err := f.options(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "respire: %v\n", err)
		return nil, opts, exitUsage
	}
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, describeConnectError(err, opts))
		if errors.Is(err, respire.ErrInvalidConfig) {
			return nil, opts, exitUsage
		}
		return nil, opts, exitFail
	}
	return c, opts, exitOK
}

// describeConnectError says what failed when Connect returned err, and
// where (the server the error names, else the configured addresses): the
// dial was refused, timed out or could not resolve the host, the server's
// TLS certificate did not verify, the server refused the credentials, the
// database or another command of the connection's setup; otherwise (an
// invalid option among them) it is err's own text.
func describeConnectError(err error, opts respire.Options) string {
	where := strings.Join(opts.Endpoints, ",")
	if opts.Sentinel != nil {
		where = strings.Join(opts.Sentinel.Addrs, ",")
	}
	// The server the error names (a Sentinel's primary is not one of
	// the configured addresses) is the one that failed.
	var ce *respire.ConnError
	if errors.As(err, &ce) && ce.Addr() != "" {
		where = ce.Addr()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil && where == "" {
		where = op.Addr.String()
	}
	var se *respire.ServerError
	var dns *net.DNSError
	var cv *tls.CertificateVerificationError
	var ne net.Error
	switch {
	case errors.Is(err, respire.ErrInvalidConfig):
		// Its text names the option; a server reply it wraps (an
		// address that is not a sentinel) is not a refused setup.
		return err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("respire: could not connect to %s: connection refused (is a server listening there?)", where)
	case errors.As(err, &dns):
		return fmt.Sprintf("respire: could not connect to %s: cannot resolve host %q: %v", where, dns.Name, dns.Err)
	case errors.As(err, &cv):
		return fmt.Sprintf("respire: could not connect to %s: the server's TLS certificate did not verify: %v", where, cv.Err)
	case errors.As(err, &se) && se.IsAuth():
		return fmt.Sprintf("respire: authentication failed at %s: %s", where, se.Message)
	case errors.As(err, &se) && se.Command == "SELECT":
		return fmt.Sprintf("respire: could not select database %d at %s: %s", opts.DB, where, se.Message)
	case errors.As(err, &se):
		return fmt.Sprintf("respire: the server at %s refused the connection's %s: %s", where, se.Command, se.Message)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("respire: could not connect to %s: no answer within %v", where, opts.DialTimeout)
	}
	return err.Error()
}

// runPing connects, sends PING and prints the reply and its round trip.
func runPing(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	rest, code, ok := parse("ping", &f, args, stderr, false)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "respire ping: unexpected arguments %q\n", rest)
		return exitUsage
	}
	c, _, code := connect(ctx, &f, getenv, stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	start := time.Now()
	r, err := c.Do(ctx, catalog.Conn.PING())
	rtt := time.Since(start)
	if err != nil {
		printError(stderr, err)
		return exitFail
	}
	s, err := r.String()
	if err != nil {
		printError(stderr, err)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s (round trip %v)\n", s, rtt.Round(time.Microsecond))
	return exitOK
}

// runDo sends the Redis command in args (flags may come before and after
// it) and prints the reply. name is the subcommand ("do", or "" without).
func runDo(ctx context.Context, name string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	rest, code, ok := parse(name, &f, args, stderr, true)
	if !ok {
		return code
	}
	if len(rest) == 0 || strings.TrimSpace(rest[0]) == "" {
		fmt.Fprintln(stderr, "respire: missing COMMAND")
		fmt.Fprintln(stderr, "Usage: respire [do] [flags] COMMAND [ARG...]")
		return exitUsage
	}
	c, _, code := connect(ctx, &f, getenv, stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	reply, err := send(ctx, c, rest)
	if err != nil {
		printFailure(stderr, rest[0], err)
		return exitFail
	}
	io.WriteString(stdout, reply)
	return exitOK
}

// send sends the command args[0] with the arguments args[1:] through
// [respire.Client.Do] with a descriptor from [respire.NewCommand] (never
// retried) and returns the reply formatted by [formatReply].
func send(ctx context.Context, c *respire.Client, args []string) (string, error) {
	r, err := c.Do(ctx, respire.NewCommand(args[0]), wordArgs(args)...)
	if err != nil {
		return "", err
	}
	return formatReply(r.Value()), nil
}

// failed prints err and returns its exit code: usage for an argument the
// client rejected, failure otherwise.
func failed(w io.Writer, err error) int {
	printError(w, err)
	if errors.Is(err, respire.ErrInvalidArgument) {
		return exitUsage
	}
	return exitFail
}

// printFailure writes the failure err of the command name like
// [printError], then, when the shared connection refused a command whose
// purpose the command line serves otherwise, how.
func printFailure(w io.Writer, name string, err error) {
	printError(w, err)
	if !errors.Is(err, respire.ErrInvalidArgument) {
		return
	}
	if hint := refusalHints[ascii.Upper(name)]; hint != "" {
		fmt.Fprintf(w, "respire: %s\n", hint)
	}
}

// refusalHints says, per command the shared connection refuses, how the
// command line does what the command is for.
var refusalHints = map[string]string{
	"SUBSCRIBE":  `to print the messages of channels, run "respire subscribe CHANNEL..."`,
	"PSUBSCRIBE": `to print the messages of channel patterns, run "respire subscribe --pattern PATTERN..."`,
	"SELECT":     "to use another database, pass -n (respire -n 1 ...)",
	"AUTH":       "to authenticate, pass --user and -a, or set " + passwordEnv,
	"HELLO":      "to choose the protocol, pass --resp 2 or 3; to authenticate, --user and -a, or set " + passwordEnv,
}

// printError writes err like redis-cli: "(error) ERR ..." for an error
// reply, where a dial was refused for a refused dial, the client's error
// text otherwise.
func printError(w io.Writer, err error) {
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) && op.Addr != nil {
		fmt.Fprintf(w, "respire: could not connect to %s: connection refused\n", op.Addr)
		return
	}
	var se *respire.ServerError
	if errors.As(err, &se) && !errors.Is(err, respire.ErrConnectionLost) {
		fmt.Fprintf(w, "(error) %s\n", se.Message)
		return
	}
	fmt.Fprintln(w, err)
}
