package respiretest

import (
	"bufio"
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// standalone returns the address of the real server the tests may use.
func standalone(t testing.TB) string { return testenv.Standalone(t) }

// client is a minimal RESP client for the tests.
type client struct {
	t    testing.TB
	conn net.Conn
	rd   *resp.Reader
}

func newClient(t testing.TB, conn net.Conn) *client {
	t.Helper()
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, rd: resp.NewReader(conn)}
}

func dialTCP(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return newClient(t, c)
}

func dialProxy(t testing.TB, p *Proxy) *client {
	t.Helper()
	if p.Addr() == MemoryAddr {
		c, err := p.Dial(context.Background(), "tcp", p.Addr())
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		return newClient(t, c)
	}
	return dialTCP(t, p.Addr())
}

func encode(args ...string) []byte {
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// send writes one or more commands without reading.
func (c *client) send(cmds ...[]string) {
	c.t.Helper()
	var b []byte
	for _, cmd := range cmds {
		b = append(b, encode(cmd...)...)
	}
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read reads one reply and returns it cloned.
func (c *client) read() (resp.Value, error) {
	v, err := c.rd.ReadValue()
	if err != nil {
		return resp.Value{}, err
	}
	return v.Clone(), nil
}

func (c *client) mustRead() resp.Value {
	c.t.Helper()
	v, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return v
}

// do sends a command and returns its reply as text ("-ERR ..." for errors,
// "(nil)" for null, integers in decimal).
func (c *client) do(args ...string) string {
	c.t.Helper()
	c.send(args)
	return text(c.mustRead())
}

func text(v resp.Value) string {
	switch {
	case v.IsError():
		return "-" + v.Text()
	case v.IsNull():
		return "(nil)"
	case v.Type.Aggregate():
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = text(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return v.Text()
}

// expectClosed asserts that the connection ends without another reply.
func (c *client) expectClosed() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := c.read()
	if err == nil {
		c.t.Fatalf("got reply %q, want the connection closed", text(v))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open: %v", err)
	}
}

var cmdstatRE = regexp.MustCompile(`(?m)^cmdstat_([a-z|_-]+):calls=(\d+)`)

// countsCommands holds the shared servers exclusively for the rest of
// the test (testenv.UseTopology): a test that compares commandstats
// calls it first, before any address lookup (realProxy, standalone)
// takes them shared.
func countsCommands(t testing.TB) {
	t.Helper()
	testenv.UseTopology(t, true)
}

// commandstats returns the calls per command of INFO commandstats. The
// test must have called countsCommands first.
func commandstats(t testing.TB, addr string) map[string]int {
	t.Helper()
	testenv.CountCommands(t, addr)
	c := dialTCP(t, addr)
	defer c.conn.Close()
	info := c.do("INFO", "commandstats")
	out := map[string]int{}
	for _, m := range cmdstatRE.FindAllStringSubmatch(info, -1) {
		n, _ := strconv.Atoi(m[2])
		out[strings.ToUpper(m[1])] = n
	}
	return out
}

// statsDelta returns, per command, calls after minus calls before.
func statsDelta(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// lines splits a bulk text into lines (INFO replies).
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// halfCloseThenExpect shuts the client's writing half, then asserts that
// the replies are want (as text) and that the connection then closes;
// target names the peer in failures.
func (c *client) halfCloseThenExpect(target string, want ...string) {
	c.t.Helper()
	if err := c.conn.(*net.TCPConn).CloseWrite(); err != nil {
		c.t.Fatalf("CloseWrite: %v", err)
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for _, w := range want {
		v, err := c.read()
		if err != nil {
			c.t.Fatalf("%s: after the half-close, read: %v; want %q", target, err, w)
		}
		wantReply(c.t, target, text(v), w)
	}
	c.expectClosed()
}
