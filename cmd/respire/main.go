package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitFail  = 1 // a command failed, or the demo's self-check did
	exitUsage = 2 // bad command line
)

const (
	defaultAddr    = "127.0.0.1:6379"
	defaultTimeout = 5 * time.Second
	passwordEnv    = "RESPIRE_PASSWORD"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes the command line args (without the program name) and
// returns the exit code. getenv reads the environment (RESPIRE_PASSWORD).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "demo":
		return runDemoCommand(ctx, args[1:], stdout, stderr, getenv)
	case "ping":
		return runPing(ctx, args[1:], stdout, stderr, getenv)
	case "do":
		return runDo(ctx, args[1:], stdout, stderr, getenv)
	case "scan":
		return runScan(ctx, args[1:], stdout, stderr, getenv)
	case "subscribe":
		return runSubscribe(ctx, args[1:], stdout, stderr, getenv)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if fs := subcommandFlags(args[1], new(connFlags), stdout); fs != nil {
				fs.Usage()
				return exitOK
			}
			fmt.Fprintf(stderr, "respire: unknown command %q\n\n", args[1])
			usage(stderr)
			return exitUsage
		}
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "respire: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

const usageText = `respire is the command-line program of respire-go, a Redis client whose
retry policy resends a command only when the failure was selected and the
caller accepted that command's risk.

Usage:

	respire demo [flags] [--topology T] [--primary-name N]
	                                     show the retry policy at work with injected faults
	                                     (T: standalone, sentinel or cluster)
	respire ping [flags]                 send PING, print PONG and the round-trip time
	respire do [flags] COMMAND [ARG...]  send any command, print the reply like redis-cli
	respire scan [flags] [--match P] [--count N] [--type T]
	                                     print the keys SCAN returns, one per line
	respire subscribe [flags] [--pattern] [--count N] CHANNEL...
	                                     print messages until interrupted
	respire help [COMMAND]               print this help, or a command's flags

Connection flags (every command):

	--addr host:port   server address (default 127.0.0.1:6379; demo: embedded server)
	--user name        ACL user name (default: the server's default user)
	--password secret  password, or set RESPIRE_PASSWORD (never printed)
	--db n             database index (default 0)
	--resp 2|3         protocol version (default: RESP3, falling back to RESP2)
	--timeout d        dial and command timeout (default 5s)

Exit status: 0 on success, 1 when a command fails or a demo check fails,
2 on a usage error.
`

func usage(w io.Writer) { fmt.Fprint(w, usageText) }

// subcommands maps each subcommand to its synopsis and --addr default.
var subcommands = map[string]struct{ synopsis, addr string }{
	"demo":      {"respire demo [flags] [--topology standalone|sentinel|cluster] [--primary-name name]", ""},
	"ping":      {"respire ping [flags]", defaultAddr},
	"do":        {"respire do [flags] COMMAND [ARG...]", defaultAddr},
	"scan":      {"respire scan [flags] [--match pattern] [--count n] [--type t]", defaultAddr},
	"subscribe": {"respire subscribe [flags] [--pattern] [--count n] CHANNEL...", defaultAddr},
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

// connFlags are the connection flags every subcommand takes.
type connFlags struct {
	addr     string
	user     string
	password string
	db       int
	resp     int
	timeout  time.Duration
}

// flagSet returns a flag set named name with the connection flags bound to
// f. addr is the --addr default.
func (f *connFlags) flagSet(name, addr, synopsis string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	addrHelp := "server address `host:port`"
	if addr == "" {
		addrHelp = "run against the real server at `host:port` (127.0.0.1 only) through a fault proxy; with --topology sentinel or cluster, a comma-separated list of sentinels or seed nodes; default: an embedded server"
	}
	fs.StringVar(&f.addr, "addr", addr, addrHelp)
	fs.StringVar(&f.user, "user", "", "ACL user `name` (default: the server's default user)")
	// The default stays empty so that usage never shows a password taken
	// from the environment.
	fs.StringVar(&f.password, "password", "", "`password` for AUTH; or set "+passwordEnv+" (never printed)")
	fs.IntVar(&f.db, "db", 0, "database `index`")
	fs.IntVar(&f.resp, "resp", 0, "protocol `version` 2 or 3 (default: RESP3, falling back to RESP2)")
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "dial and command `timeout`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// options validates the flags and returns the client options for addr.
func (f *connFlags) options(getenv func(string) string) (respire.Options, error) {
	if f.resp != 0 && f.resp != 2 && f.resp != 3 {
		return respire.Options{}, fmt.Errorf("--resp must be 2 or 3, not %d", f.resp)
	}
	if f.timeout <= 0 {
		return respire.Options{}, fmt.Errorf("--timeout must be positive, not %v", f.timeout)
	}
	if f.db < 0 {
		return respire.Options{}, fmt.Errorf("--db must not be negative, not %d", f.db)
	}
	pw := f.password
	if pw == "" && getenv != nil {
		pw = getenv(passwordEnv)
	}
	return respire.Options{
		Endpoints:      []string{f.addr},
		Username:       f.user,
		Password:       pw,
		DB:             f.db,
		Protocol:       f.resp,
		DialTimeout:    f.timeout,
		CommandTimeout: f.timeout,
	}, nil
}

// parse parses args into a new flag set of the subcommand name, with the
// flags extra adds; it returns the remaining arguments, or an exit code
// when the caller should stop.
func parse(name string, f *connFlags, args []string, stderr io.Writer, extra ...func(*flag.FlagSet)) ([]string, int, bool) {
	fs := subcommandFlags(name, f, stderr)
	for _, add := range extra {
		add(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK, false // -h: the flag package printed the usage
		}
		return nil, exitUsage, false
	}
	return fs.Args(), 0, true
}

// connect validates the flags and connects.
func connect(ctx context.Context, f *connFlags, getenv func(string) string, stderr io.Writer) (*respire.Client, int) {
	opts, err := f.options(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "respire: %v\n", err)
		return nil, exitUsage
	}
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		if errors.Is(err, respire.ErrInvalidConfig) {
			return nil, exitUsage
		}
		return nil, exitFail
	}
	return c, exitOK
}

func runPing(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	rest, code, ok := parse("ping", &f, args, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "respire ping: unexpected arguments %q\n", rest)
		return exitUsage
	}
	c, code := connect(ctx, &f, getenv, stderr)
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

func runDo(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	rest, code, ok := parse("do", &f, args, stderr)
	if !ok {
		return code
	}
	if len(rest) == 0 || strings.TrimSpace(rest[0]) == "" {
		fmt.Fprintln(stderr, "respire do: missing COMMAND")
		fmt.Fprintln(stderr, "Usage: respire do [flags] COMMAND [ARG...]")
		return exitUsage
	}
	c, code := connect(ctx, &f, getenv, stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	cmdArgs := make([]any, len(rest)-1)
	for i, a := range rest[1:] {
		cmdArgs[i] = a
	}
	r, err := c.Do(ctx, respire.NewCommand(rest[0]), cmdArgs...)
	if err != nil {
		printError(stderr, err)
		return exitFail
	}
	io.WriteString(stdout, formatReply(r.Value()))
	return exitOK
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

// printError writes err like redis-cli: "(error) ERR ..." for an error
// reply, the client's error text otherwise.
func printError(w io.Writer, err error) {
	var se *respire.ServerError
	if errors.As(err, &se) && !errors.Is(err, respire.ErrConnectionLost) {
		fmt.Fprintf(w, "(error) %s\n", se.Message)
		return
	}
	fmt.Fprintln(w, err)
}
