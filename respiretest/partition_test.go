package respiretest

import (
	"context"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// silent asserts that no reply arrives within a short window (absence can
// only be shown by waiting), then readies c for further reads.
func (c *client) silent(what string) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	if v, err := c.read(); err == nil {
		c.t.Fatalf("%s: got %q through a partition", what, text(v))
	}
	_ = c.conn.SetReadDeadline(time.Time{})
	c.rd.Reset(c.conn)
}

// waitBlocked polls CLIENT LIST until the connection named name is blocked
// in cmd at the server.
func waitBlocked(t *testing.T, direct *client, name, cmd string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range lines(direct.do("CLIENT", "LIST")) {
			if strings.Contains(l, " name="+name+" ") && strings.Contains(l, " cmd="+cmd+" ") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("connection %s never blocked in %s", name, cmd)
}

func TestPartitionHoldsBothDirectionsAndNewConnectionsUntilHeal(t *testing.T) {
	p, addr := realProxy(t)
	direct := dialTCP(t, addr)
	counter, list := key(t, "counter"), key(t, "list")
	direct.do("DEL", counter, list)

	writer := dialProxy(t, p)
	if got := writer.do("SET", counter, "0"); got != "OK" {
		t.Fatalf("SET = %q", got)
	}
	popper := dialProxy(t, p)
	name := "partition-popper-" + strings.ReplaceAll(t.Name(), "/", "-")
	popper.do("CLIENT", "SETNAME", name)
	popper.send([]string{"BLPOP", list, "0"})
	waitBlocked(t, direct, name, "blpop")

	pt := p.Partition()
	if again := p.Partition(); again != pt {
		t.Fatal("Partition() during a partition must return the one in force")
	}

	// Client to server: the INCR is held, the server never runs it.
	writer.send([]string{"INCR", counter})
	writer.silent("INCR")
	if got := direct.do("GET", counter); got != "0" {
		t.Fatalf("counter = %q during the partition, want 0 (the INCR must be held)", got)
	}
	// Server to client: the pop happens at the server, its reply is held.
	direct.do("RPUSH", list, "x")
	popper.silent("BLPOP reply")
	if got := direct.do("LLEN", list); got != "0" {
		t.Fatalf("LLEN = %q, want 0: the server popped the element", got)
	}
	// New connections: connected, never served.
	late := dialProxy(t, p)
	late.send([]string{"PING"})
	late.silent("PING on a new connection")

	select {
	case <-pt.Healed():
		t.Fatal("Healed() closed before Heal")
	default:
	}
	pt.Heal()
	pt.Heal() // no-op
	<-pt.Healed()

	if got := text(writer.mustRead()); got != "1" {
		t.Fatalf("INCR after heal = %q, want 1", got)
	}
	if got := text(popper.mustRead()); got != "["+list+" x]" {
		t.Fatalf("BLPOP after heal = %q", got)
	}
	if got := text(late.mustRead()); got != "PONG" {
		t.Fatalf("PING after heal = %q", got)
	}
	if got := direct.do("GET", counter); got != "1" {
		t.Fatalf("counter = %q after heal, want 1 (the INCR ran once)", got)
	}
	next := p.Partition()
	if next == pt {
		t.Fatal("Partition() after Heal must start a new partition")
	}
	next.Heal()
	if got := writer.do("PING"); got != "PONG" {
		t.Fatalf("PING after the second heal = %q", got)
	}
}

func TestPartitionClientCloseEndsSessionAtHeal(t *testing.T) {
	p, _ := realProxy(t)
	c := dialProxy(t, p)
	c.do("PING")
	pt := p.Partition()
	c.send([]string{"PING"})
	c.conn.Close()
	pt.Heal()
	deadline := time.Now().Add(10 * time.Second)
	for p.Sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Sessions() = %d after the heal, want 0", p.Sessions())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCloseEndsPartitionedSessionsAndDials(t *testing.T) {
	addr := standalone(t)
	p, err := NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	c := dialProxy(t, p)
	c.do("PING")
	p.Partition()
	c.send([]string{"PING"})
	late := dialProxy(t, p)
	late.send([]string{"PING"})
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	<-done // goleak (TestMain) proves no session or dial outlives Close
	c.expectClosed()
	late.expectClosed()
}

// A connection that either side closes during a partition ends at the
// heal, never before: the client sees silence, not a close, and the server
// learns nothing of the client's close until the link returns.
func TestPartitionCloseEitherSideEndsAtHeal(t *testing.T) {
	for _, closer := range []string{"server", "client"} {
		t.Run(closer, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				backends := make(chan net.Conn, 1)
				p, err := NewProxy("", InMemory(), WithBackendDialer(func(context.Context, string, string) (net.Conn, error) {
					proxySide, serverSide := net.Pipe()
					backends <- serverSide
					return proxySide, nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				c, err := p.Dial(context.Background(), "tcp", MemoryAddr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				srv := <-backends
				defer srv.Close()

				pt := p.Partition()
				// The side that did not close watches for the close.
				watched := c
				if closer == "server" {
					srv.Close()
				} else {
					watched = srv
					c.Close()
				}
				ended := make(chan error, 1)
				go func() {
					_, err := watched.Read(make([]byte, 1))
					ended <- err
				}()
				synctest.Wait()
				select {
				case err := <-ended:
					t.Fatalf("the %s's close crossed the partition: read returned %v", closer, err)
				default:
				}
				if p.Sessions() != 1 {
					t.Fatalf("Sessions() = %d during the partition, want 1", p.Sessions())
				}
				pt.Heal()
				if err := <-ended; err == nil {
					t.Fatal("read after the heal returned no error, want the close")
				}
				synctest.Wait()
				if p.Sessions() != 0 {
					t.Fatalf("Sessions() = %d after the heal, want 0", p.Sessions())
				}
			})
		})
	}
}

// A frame held by a partition has not reached the server, and the counts
// say so: Forwarded (and a Server's Executed) count it at the heal.
func TestPartitionHeldFrameIsNotCountedForwarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t, InMemory())
		r := s.MustAddRule(t, Rule{Command: "INCR", Times: Always, Action: Pass})
		c := dialProxy(t, s.Proxy)
		wantReply(t, "PING", c.do("PING"), "PONG")
		pt := s.Partition()
		c.send([]string{"INCR", "n"})
		synctest.Wait()
		if got := s.Executed("INCR"); got != 0 {
			t.Errorf("Executed(INCR) = %d during the partition, want 0", got)
		}
		if got := r.Forwarded(); got != 0 {
			t.Errorf("rule Forwarded() = %d during the partition, want 0", got)
		}
		pt.Heal()
		wantReply(t, "INCR after the heal", text(c.mustRead()), "1")
		if got, rf := s.Executed("INCR"), r.Forwarded(); got != 1 || rf != 1 {
			t.Errorf("after the heal Executed(INCR) = %d, rule Forwarded() = %d; want 1 and 1", got, rf)
		}
	})
}

// During a partition the proxy keeps reading what the client writes, as
// the kernel buffers the bytes of a dead link: an in-memory client's
// writes complete (they do not block on the pipe), nothing reaches the
// server, and at the heal every frame runs in order.
func TestPartitionKeepsReadingInMemoryClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t, InMemory())
		c := dialProxy(t, s.Proxy)
		wantReply(t, "PING", c.do("PING"), "PONG")
		pt := s.Partition()
		writeDuringPartition(t, c, 3, "INCR", "n")
		if got := s.Executed("INCR"); got != 0 {
			t.Fatalf("Executed(INCR) = %d during the partition, want 0", got)
		}
		pt.Heal()
		for _, want := range []string{"1", "2", "3"} {
			wantReply(t, "INCR after the heal", text(c.mustRead()), want)
		}
	})
}

// A rule that applies to a frame during a partition waits for the heal
// (its earlier frames cannot reach the server before), but the proxy
// keeps reading the frames after it meanwhile: the in-memory client's
// writes complete, the rule fires only at the heal, and the replies come
// in order.
func TestPartitionKeepsReadingWhileARuleWaits(t *testing.T) {
	for _, tt := range []struct {
		action Action
		want   []string
	}{
		{Pass, []string{"1", "2", "3"}},
		{Inject("ERR injected"), []string{"1", "-ERR injected", "2"}},
	} {
		t.Run(tt.action.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(t, InMemory())
				r := s.MustAddRule(t, Rule{Command: "INCR", Nth: 2, Action: tt.action})
				c := dialProxy(t, s.Proxy)
				wantReply(t, "PING", c.do("PING"), "PONG")
				pt := s.Partition()
				writeDuringPartition(t, c, 3, "INCR", "n")
				select {
				case <-r.Received():
					t.Fatal("the rule fired during the partition, before the frame before it reached the server")
				default:
				}
				pt.Heal()
				for _, want := range tt.want {
					wantReply(t, "INCR after the heal", text(c.mustRead()), want)
				}
				if r.Applied() != 1 {
					t.Errorf("rule applied %d times, want 1", r.Applied())
				}
			})
		})
	}
}

// writeDuringPartition writes the command n times, one write each as a
// client sends them over time, inside a synctest bubble, and fails t if a
// write blocks: the proxy must read on during a partition.
func writeDuringPartition(t *testing.T, c *client, n int, args ...string) {
	t.Helper()
	for i := range n {
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			_, _ = c.conn.Write(encode(args...))
		}()
		synctest.Wait()
		select {
		case <-wrote:
		default:
			t.Fatalf("write %d blocked during the partition: the proxy stopped reading", i+1)
		}
	}
}
