package pool

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// rawCommand sends one command to addr on a connection of its own and
// returns the reply's text.
func rawCommand(t *testing.T, addr string, args ...string) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	if _, err := nc.Write(b); err != nil {
		t.Fatalf("write %v: %v", args, err)
	}
	v, err := resp.NewReader(nc).ReadValue()
	if err != nil {
		t.Fatalf("read reply to %v: %v", args, err)
	}
	if v.IsError() {
		t.Fatalf("%v: %s", args, v.Str)
	}
	return v.Text()
}

// clientsNamed returns how many of the server's clients are named name.
func clientsNamed(t *testing.T, addr, name string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(rawCommand(t, addr, "CLIENT", "LIST"), "\n") {
		for _, field := range strings.Fields(line) {
			if field == "name="+name {
				n++
			}
		}
	}
	return n
}

// TestRealServer lends, reuses, skips a connection the server killed,
// discards and closes against the real standalone server, checking the
// server's own client list. It runs with and without an idle PING, the
// client's dedicated pools having one: an idle connection with a health
// monitor must see the server's close at once too, not at the monitor's
// next tick (which IdlePing of an hour puts a quarter of an hour away),
// or Get lends it and its first command fails as possibly executed.
func TestRealServer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		idlePing time.Duration
	}{{"no monitor", 0}, {"idle ping", time.Hour}} {
		t.Run(tc.name, func(t *testing.T) { testRealServer(t, tc.idlePing) })
	}
}

func testRealServer(t *testing.T, idlePing time.Duration) {
	addr := testenv.Standalone(t)
	name := "respire-pool-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var mu sync.Mutex
	var local []string // local address of each dialed connection, in order
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			local = append(local, nc.LocalAddr().String())
			mu.Unlock()
		}
		return nc, err
	}
	p := New(Config{
		Wire: wire.Config{Addr: addr, Dial: dial, DialTimeout: 5 * time.Second, ClientName: name, IdlePing: idlePing},
		Max:  2,
	})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mustGet := func() *wire.Conn {
		t.Helper()
		c, err := p.Get(ctx)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		return c
	}

	// ping runs one command on c, as a caller of a lent connection does
	// before handing it back.
	ping := func(c *wire.Conn) {
		t.Helper()
		f := wire.GetFrame()
		f.Buf = resp.AppendBulkString(resp.AppendArrayHeader(f.Buf[:0], 1), "PING")
		f.Want = wire.WantNone
		if err := c.Submit(ctx, time.Time{}, f); err != nil {
			t.Fatalf("PING: %v", err)
		}
		if err := f.Wait(ctx, time.Time{}); err != nil {
			t.Fatalf("PING: %v", err)
		}
		if f.IsErr {
			t.Fatal("PING: error reply")
		}
		f.Release()
	}

	a, b := mustGet(), mustGet()
	if got := clientsNamed(t, addr, name); got != 2 {
		t.Fatalf("server has %d clients named %s, want 2", got, name)
	}
	ping(a)
	ping(b)
	p.Put(a)
	p.Put(b)
	if got := mustGet(); got != b {
		t.Fatal("Get did not reuse the most recently returned connection")
	}
	ping(b)
	p.Put(b)

	// The server kills b while it is idle: Get skips it.
	mu.Lock()
	bAddr := local[1]
	mu.Unlock()
	if got := rawCommand(t, addr, "CLIENT", "KILL", "ADDR", bAddr, "SKIPME", "yes"); got != "1" {
		t.Fatalf("CLIENT KILL ADDR %s = %q, want 1 (client killed)", bAddr, got)
	}
	select {
	case <-b.Dead():
	case <-ctx.Done():
		t.Fatal("killed connection never died")
	}
	if got := mustGet(); got != a {
		t.Fatal("Get did not skip the connection the server killed")
	}
	if got := p.Stats(); got != (Stats{Open: 1, Lent: 1}) {
		t.Errorf("Stats() = %+v, want one lent", got)
	}

	p.Discard(a)
	c := mustGet()
	if c == a || c == b || !c.Alive() {
		t.Fatal("Get after Discard did not dial a new connection")
	}
	p.Put(c)
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The server notices closed sockets on its own schedule: wait for its
	// client list to catch up, within the test's budget.
	for clientsNamed(t, addr, name) != 0 {
		if ctx.Err() != nil {
			t.Fatalf("server still lists clients named %s after Close", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
