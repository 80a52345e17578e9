package respiretest

// The kit's input and lifecycle edges: bad arguments, the listener's
// temporary errors, Server.Close's error, how rules and the embedded
// engine fold command names and arguments.

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBadArgumentsAreErrInvalidArgument(t *testing.T) {
	if p, err := NewProxy(""); !errors.Is(err, ErrInvalidArgument) {
		if p != nil {
			p.Close()
		}
		t.Errorf("NewProxy without a backend = %v, want ErrInvalidArgument", err)
	}
	s := NewServer(t, InMemory())
	if err := s.RefuseDials(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RefuseDials(-1) = %v, want ErrInvalidArgument", err)
	}
	if got := dialProxy(t, s.Proxy).do("PING"); got != "PONG" {
		t.Errorf("PING after RefuseDials(-1) = %q: a refused count must change nothing", got)
	}
}

// flakyListener fails Accept with a temporary error fails times, then
// accepts; with fails < 0 it fails every Accept until it is closed.
type flakyListener struct {
	net.Listener
	mu     sync.Mutex
	fails  int
	failed int
	closed bool
}

type temporaryError struct{}

func (temporaryError) Error() string   { return "accept: too many open files" }
func (temporaryError) Timeout() bool   { return false }
func (temporaryError) Temporary() bool { return true }

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.closed && l.fails != 0 {
		l.fails--
		l.failed++
		l.mu.Unlock()
		return nil, temporaryError{}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func (l *flakyListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Listener.Close()
}

// serveOn makes the in-memory server s accept TCP connections on ln, as a
// listening server does.
func serveOn(s *Server, ln net.Listener) {
	s.ln = ln
	s.wg.Add(1)
	go s.acceptLoop()
}

// TestAcceptLoopSurvivesTemporaryErrors: an Accept that fails with a
// temporary error (such as EMFILE) does not stop the proxy accepting:
// after a bounded backoff the next connection is served.
func TestAcceptLoopSurvivesTemporaryErrors(t *testing.T) {
	s := NewServer(t, InMemory())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &flakyListener{Listener: ln, fails: 3}
	serveOn(s, fl)
	c := dialTCP(t, ln.Addr().String())
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if got := c.do("PING"); got != "PONG" {
		t.Fatalf("PING after 3 failed accepts = %q", got)
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.failed != 3 {
		t.Errorf("%d accepts failed, want 3", fl.failed)
	}
}

// TestCloseEndsAcceptBackoff: Close returns while the accept loop is
// backing off after temporary errors, and the loop ends (goleak).
func TestCloseEndsAcceptBackoff(t *testing.T) {
	s, err := StartServer(InMemory())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(s, &flakyListener{Listener: ln, fails: -1})
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while the accept loop backs off")
	}
}

// TestServerCloseIsAnIOCloser: Server.Close reports an error, as
// Proxy.Close does, so a Server is an io.Closer; closing again is nil.
func TestServerCloseIsAnIOCloser(t *testing.T) {
	s, err := StartServer(InMemory())
	if err != nil {
		t.Fatal(err)
	}
	var c io.Closer = s
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestRuleArgFoldsForSubcommandsOnly: Rule.Arg is compared like Redis
// compares it: a subcommand (CLIENT SETNAME, CONFIG GET) folds ASCII
// case, any other first argument (a key) is exact.
func TestRuleArgFoldsForSubcommandsOnly(t *testing.T) {
	s := NewServer(t, InMemory())
	s.MustAddRule(t, Rule{Command: "client", Arg: "SetName", Times: Always, Action: Inject("ERR subcommand matched")})
	s.MustAddRule(t, Rule{Command: "GET", Arg: "Key", Times: Always, Action: Inject("ERR key matched")})
	c := dialProxy(t, s.Proxy)
	for _, sub := range []string{"setname", "SETNAME", "SetName"} {
		if got := c.do("CLIENT", sub, "x"); got != "-ERR subcommand matched" {
			t.Errorf("CLIENT %s = %q, want the rule's reply", sub, got)
		}
	}
	if got := c.do("GET", "Key"); got != "-ERR key matched" {
		t.Errorf("GET Key = %q, want the rule's reply", got)
	}
	for _, k := range []string{"key", "KEY"} {
		if got := c.do("GET", k); got != "(nil)" {
			t.Errorf("GET %s = %q, want the engine's (nil): a key is case-sensitive", k, got)
		}
	}
}

// TestEngineFoldsCommandNamesASCIIOnly: the embedded engine, like Redis,
// folds only a-z in command names: "pıng" (dotless i) and "ſet" (long s),
// which Unicode upper-casing turns into PING and SET, are unknown commands
// and run nothing.
func TestEngineFoldsCommandNamesASCIIOnly(t *testing.T) {
	s := NewServer(t, InMemory())
	c := dialProxy(t, s.Proxy)
	before := s.Engine().CommandCount()
	for _, args := range [][]string{{"pıng"}, {"ſet", "k", "v"}} {
		if got := c.do(args...); !strings.HasPrefix(got, "-ERR unknown command '"+args[0]+"'") {
			t.Errorf("%q = %q, want an unknown command error naming it", args, got)
		}
	}
	if n := s.Engine().CommandCount() - before; n != 0 {
		t.Errorf("the engine ran %d commands, want 0", n)
	}
	if got := c.do("GET", "k"); got != "(nil)" {
		t.Errorf("GET k = %q: a non-ASCII SET stored it", got)
	}
	if got := c.do("ping"); got != "PONG" {
		t.Errorf("ping = %q, want PONG", got)
	}
}

// TestEngineFoldsOptionWordsASCIIOnly: an option word with a non-ASCII
// letter that Unicode upper-casing turns into an option is not that
// option, as on Redis, which folds a-z only. XTRIM's "MıNID" (dotless i)
// is a syntax error, as Redis 7.0.15 answers (checked with redis-cli:
// XTRIM k MıNID 0 and XTRIM k MıNID =), and trims nothing; in XADD Redis
// takes it for an invalid entry ID and adds nothing; HEXPIRE's
// "FıELDS" is not FIELDS (Redis's "Mandatory argument FIELDS" error),
// not read as FIELDS with a count beyond the arguments.
func TestEngineFoldsOptionWordsASCIIOnly(t *testing.T) {
	c := withStream(t)
	for _, args := range [][]string{
		{"XTRIM", "s", "M\u0131NID", "2-0"},
		{"XTRIM", "s", "m\u0131n\u0131d", "="},
	} {
		if got := c.do(args...); got != "-ERR syntax error" {
			t.Errorf("%q = %q, want Redis's -ERR syntax error", args, got)
		}
	}
	// Redis takes "MıNID" in XADD for the entry ID, which it refuses.
	if got, want := c.do("XADD", "s", "M\u0131NID", "0", "*", "f", "v"), "-ERR Invalid stream ID specified as stream command argument"; got != want {
		t.Errorf("XADD with M\u0131NID = %q, want %q", got, want)
	}
	if got := c.do("XLEN", "s"); got != "1" {
		t.Errorf("XLEN = %q, want 1: a non-ASCII MINID trimmed or added", got)
	}
	if got := c.do("HSET", "h", "f", "v"); got != "1" {
		t.Fatalf("HSET = %q", got)
	}
	const noFields = "-ERR Mandatory argument FIELDS is missing or not at the right position"
	if got := c.do("HEXPIRE", "h", "10", "F\u0131ELDS", "9", "f"); got != noFields {
		t.Errorf("HEXPIRE with F\u0131ELDS = %q, want %q", got, noFields)
	}
}

// TestEngineReadsStreamsASCIIOnly: XREAD's and XREADGROUP's "ſTREAMS"
// (long s, which Unicode upper-casing turns into STREAMS) is not the
// STREAMS option but an unknown word, Redis's "ERR syntax error", and
// reads nothing (nor delivers to the group); the ASCII spelling, in any
// case, still reads.
func TestEngineReadsStreamsASCIIOnly(t *testing.T) {
	c := withStream(t)
	if got := c.do("XGROUP", "CREATE", "s", "g", "0"); got != "OK" {
		t.Fatalf("XGROUP CREATE = %q", got)
	}
	for _, args := range [][]string{
		{"XREAD", "\u017fTREAMS", "s", "0"},
		{"XREAD", "streams", "s", "0"}, // ASCII control: must not be refused
		{"XREAD", "\u017ftreams", "s", "0"},
		{"XREAD", "COUNT", "1", "\u017fTREAMS", "s", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "\u017fTREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "c", "NOACK", "\u017fTREAMS", "s", ">"},
	} {
		got := c.do(args...)
		if args[1] == "streams" {
			if strings.HasPrefix(got, "-") {
				t.Errorf("%q = %q, want the entry", args, got)
			}
			continue
		}
		if got != "-ERR syntax error" {
			t.Errorf("%q = %q, want Redis's -ERR syntax error", args, got)
		}
	}
	if got := c.do("XPENDING", "s", "g"); !strings.HasPrefix(got, "[0 ") {
		t.Errorf("XPENDING = %q, want nothing pending: a non-ASCII STREAMS read for the group", got)
	}
}

// TestEngineSubcommandsFoldASCIIOnly: a subcommand word with a byte
// outside ASCII is one Redis does not know, however Unicode folds it:
// "CLIENT ſetname" (long s) names no connection and XINFO's "ſTREAM"
// reads nothing; each gets Redis 7.0.15's own error (checked with
// redis-cli), and the ASCII spellings still run.
func TestEngineSubcommandsFoldASCIIOnly(t *testing.T) {
	c := withStream(t)
	for _, args := range [][]string{{"CLIENT", "\u017fetname", "x"}, {"XINFO", "\u017fTREAM", "s"}, {"OBJECT", "\u017f"}} {
		want := "-ERR unknown subcommand '" + args[1] + "'. Try " + args[0] + " HELP."
		if got := c.do(args...); got != want {
			t.Errorf("%q = %q, want %q", args, got, want)
		}
	}
	if got := c.do("CLIENT", "GETNAME"); got != "(nil)" {
		t.Errorf("CLIENT GETNAME = %q, want (nil): a non-ASCII SETNAME named the connection", got)
	}
	if got := c.do("client", "setname", "x"); got != "OK" {
		t.Errorf("client setname = %q, want OK", got)
	}
	if got := c.do("XINFO", "stream", "s"); strings.HasPrefix(got, "-") {
		t.Errorf("XINFO stream = %q, want the stream's info", got)
	}
}

// withStream dials a new embedded server holding stream s with entry 1-1.
func withStream(t *testing.T) *client {
	t.Helper()
	s := NewServer(t, InMemory())
	c := dialProxy(t, s.Proxy)
	if got := c.do("XADD", "s", "1-1", "f", "v"); got != "1-1" {
		t.Fatalf("XADD = %q", got)
	}
	return c
}
