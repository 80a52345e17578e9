package respire

// Shared test helpers of package respire. They are used by several test
// files (commands, errors, retries, metrics): keep their signatures stable.
//
// Every helper that talks to a server uses the real standalone server
// named by RESPIRE_STANDALONE_ADDR. Tests must not depend on each other's
// keys: name keys with key(t, ...), which prefixes them with the test's
// name.

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// standaloneAddr returns the address of the real standalone server
// (testenv.Standalone: RESPIRE_STANDALONE_ADDR). When it is unset the test
// is skipped, or fails when RESPIRE_REQUIRE_SERVERS=1.
func standaloneAddr(t testing.TB) string {
	t.Helper()
	return testenv.Standalone(t)
}

// newClient connects with opts and closes the client when the test ends.
// When opts.Endpoints is empty it is set to the standalone server; when
// opts.DialTimeout is zero it is set to 2 s. The test fails if Connect
// fails.
func newClient(t testing.TB, opts Options) *Client {
	t.Helper()
	if len(opts.Endpoints) == 0 {
		opts.Endpoints = []string{standaloneAddr(t)}
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Connect(ctx, opts)
	if err != nil {
		t.Fatalf("Connect(%v): %v", opts.Endpoints, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// key returns a key name unique to the test and to this run of the test
// binary: keyPrefix(t) followed by parts joined with ":". The first call
// in a test registers a cleanup that deletes the test's keys (flush).
func key(t testing.TB, parts ...string) string {
	if _, loaded := flushed.LoadOrStore(t, true); !loaded {
		addr := standaloneAddr(t)
		t.Cleanup(func() {
			flushed.Delete(t)
			flush(t, addr)
		})
	}
	return keyPrefix(t) + strings.Join(parts, ":")
}

// flushed records the tests whose keys are deleted at cleanup.
var flushed sync.Map

// runID makes keys of different runs of the test binary distinct.
var runID = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

// keyPrefix is the prefix of every key made by key(t, ...):
// "respire-test:<run>:<t.Name()>:".
func keyPrefix(t testing.TB) string { return "respire-test:" + runID + ":" + t.Name() + ":" }

// admin sends one command to addr on a fresh RESP2 connection (not the
// client under test) and returns the reply. The test fails on any error,
// error replies included.
func admin(t testing.TB, addr string, name string, args ...string) Reply {
	t.Helper()
	c := newAdmin(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Do(ctx, NewCommand(name), anys(args)...)
	if err != nil {
		t.Fatalf("admin %s %v: %v", name, args, err)
	}
	return r
}

func newAdmin(t testing.TB, addr string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Connect(ctx, Options{Endpoints: []string{addr}, Protocol: 2, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("admin connection to %s: %v", addr, err)
	}
	return c
}

// countsCommands holds the shared servers exclusively for the rest of
// the test (testenv.UseTopology): a test that counts commands on them
// (commandCalls, commandSeen, commandStat) calls it first, before any
// address lookup and before testCtx, so that its lock is never turned
// from shared to exclusive mid-test and its deadline does not run while
// it waits for other packages' tests.
func countsCommands(t testing.TB) {
	t.Helper()
	testenv.UseTopology(t, true)
}

// commandCalls returns the "calls" count of command name in addr's INFO
// commandstats (0 when the command never ran). name is case-insensitive;
// a subcommand is written "client|kill". Compare counts taken before and
// after an action: the counts are server-wide.
func commandCalls(t testing.TB, addr, name string) int {
	t.Helper()
	return commandStat(t, addr, name, "calls")
}

// commandSeen returns how many times command name reached addr: its
// calls and its rejected calls (a Cluster node counts a command it
// answers with MOVED or ASK as rejected, not as a call).
func commandSeen(t testing.TB, addr, name string) int {
	t.Helper()
	return commandStat(t, addr, name, "calls") + commandStat(t, addr, name, "rejected_calls")
}

// commandStat returns field ("calls", "rejected_calls", "failed_calls")
// of command name in addr's INFO commandstats, 0 when the command never
// ran.
func commandStat(t testing.TB, addr, name, field string) int {
	t.Helper()
	testenv.CountCommands(t, addr)
	info, err := admin(t, addr, "INFO", "commandstats").String()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	want := "cmdstat_" + strings.ToLower(name) + ":"
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(line, want)
		if !ok {
			continue
		}
		for f := range strings.SplitSeq(strings.TrimSpace(rest), ",") {
			if v, ok := strings.CutPrefix(f, field+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("INFO commandstats: bad %s in %q", field, line)
				}
				return n
			}
		}
	}
	return 0
}

// flush deletes every key of the test (those made with key(t, ...)) in
// database 0 of addr. It never touches other tests' keys, so it is safe
// while other packages use the same server.
func flush(t testing.TB, addr string) {
	t.Helper()
	c := newAdmin(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cursor := "0"
	for {
		r, err := c.Do(ctx, NewCommand("SCAN"), cursor, "MATCH", escapeGlob(keyPrefix(t))+"*", "COUNT", "1000")
		if err != nil {
			t.Fatalf("flush: SCAN: %v", err)
		}
		el := r.Elements()
		if len(el) != 2 {
			t.Fatalf("flush: SCAN reply has %d elements", len(el))
		}
		keys, err := el[1].Strings()
		if err != nil {
			t.Fatalf("flush: SCAN keys: %v", err)
		}
		if len(keys) > 0 {
			if _, err := c.Do(ctx, NewCommand("UNLINK"), anys(keys)...); err != nil {
				t.Fatalf("flush: UNLINK: %v", err)
			}
		}
		if cursor, err = el[0].String(); err != nil {
			t.Fatalf("flush: SCAN cursor: %v", err)
		}
		if cursor == "0" {
			return
		}
	}
}

// escapeGlob escapes the glob metacharacters of a MATCH pattern.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clientID returns the server's id of c's current connection (CLIENT ID).
func clientID(t testing.TB, c *Client) string {
	t.Helper()
	r, err := c.Do(context.Background(), NewCommand("CLIENT ID"))
	if err != nil {
		t.Fatalf("CLIENT ID: %v", err)
	}
	n, err := r.Int64()
	if err != nil {
		t.Fatalf("CLIENT ID: %v", err)
	}
	return strconv.FormatInt(n, 10)
}

// killClient kills the server connection with the given id from another
// connection (CLIENT KILL ID id) and fails the test unless exactly one
// connection was killed.
func killClient(t testing.TB, addr, id string) {
	t.Helper()
	n, err := admin(t, addr, "CLIENT", "KILL", "ID", id).Int64()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID %s: got %d, %v; want 1 killed", id, n, err)
	}
}

// protocols are the RESP versions every command test runs under.
var protocols = []int{2, 3}

// forEachProtocol runs body as a subtest "RESP2" and "RESP3", each with a
// client forced to that protocol (opts.Protocol is overridden). Keys made
// with key(t, ...) inside body are unique per subtest.
func forEachProtocol(t *testing.T, opts Options, body func(t *testing.T, c *Client)) {
	t.Helper()
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			o := opts
			o.Protocol = p
			body(t, newClient(t, o))
		})
	}
}

// testCtx returns a context that ends after 10 s or with the test. It
// holds the shared servers (testenv.UseTopology) first, so the 10 s run
// after any wait for another package's test that holds them exclusively:
// a test that counts commands or changes roles calls countsCommands (or
// testenv.UseTopology(t, true)) before testCtx.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	testenv.UseTopology(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// realProxy starts a fault proxy in front of addr and closes it when the
// test ends.
func realProxy(t testing.TB, addr string) *respiretest.Proxy {
	t.Helper()
	p, err := respiretest.NewProxy(addr)
	if err != nil {
		t.Fatalf("NewProxy(%s): %v", addr, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// anys converts string arguments for Do.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// wordsOf converts string arguments to dispatch words.
func wordsOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// beforeHook runs its armed function, once, inside the process hook of
// the next command named name, before the command is sent.
type beforeHook struct {
	name string
	mu   sync.Mutex
	fn   func()
}

func (h *beforeHook) arm(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fn = fn
}

func (h *beforeHook) armed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fn != nil
}

func (h *beforeHook) DialHook(next DialHook) DialHook { return next }
func (h *beforeHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return next
}
func (h *beforeHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if cmd.Name == h.name {
			h.fire()
		}
		return next(ctx, cmd)
	}
}

// fire calls the armed function, once, and disarms the hook.
func (h *beforeHook) fire() {
	h.mu.Lock()
	fn := h.fn
	h.fn = nil
	h.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// allStacks returns the stacks of every goroutine, separated by blank
// lines.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
