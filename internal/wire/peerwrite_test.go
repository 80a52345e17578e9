//go:build !plan9

package wire

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// slowReadConn models a reader that has not yet taken in what the
// server sent when the writer learns that the server closed: once a write
// of armAt began, a read's bytes are held until the writer goroutine has
// exited (see hold), and are lost, as unread bytes of a socket are, if
// the connection was closed meanwhile.
type slowReadConn struct {
	net.Conn
	armAt  string
	armed  atomic.Bool
	closed atomic.Bool
	hold   func()
}

func (c *slowReadConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.armed.Load() {
		c.hold()
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
	}
	return n, err
}

func (c *slowReadConn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.armAt) {
		c.armed.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *slowReadConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// TestServersLastReplyReadAfterItClosedDuringAWrite proves, with the real
// server, that a command whose bulk is over proto-max-bulk-len gets the
// server's error reply ("ERR Protocol error: invalid bulk length"), which
// the server sends before it closes the connection, although the writer
// learns of the close (its write of the rest fails) before the reader has
// read that reply; the command queued behind it fails as never written,
// and the connection dies.
func TestServersLastReplyReadAfterItClosedDuringAWrite(t *testing.T) {
	const header = "$600000000\r\n"
	var c *Conn
	cfg := quiet
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := DefaultDial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		writerExited := func() {
			// The writer goroutine is one of the connection's three loops
			// (quiet has a health monitor); it exits once it has handled
			// its failed write.
			for end := time.Now().Add(10 * time.Second); c.loops.Load() == 3 && time.Now().Before(end); {
				runtime.Gosched()
			}
		}
		return &slowReadConn{Conn: nc, armAt: header, hold: writerExited}, nil
	}
	c = dialRealConfig(t, cfg)
	do(t, c, WantBytes, "ECHO", "a").Release()

	over := &Frame{Buf: []byte("*3\r\n$3\r\nSET\r\n$8\r\nwire:big\r\n" + header + strings.Repeat("x", 8<<20)), Want: WantNone, done: make(chan struct{}, 1)}
	behind := newFrame(WantBytes, "ECHO", "b")
	for _, f := range []*Frame{over, behind} {
		if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
			t.Fatalf("Submit: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, f := range []*Frame{over, behind} {
		if err := f.Wait(ctx, time.Time{}); err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
	if over.Err != nil || !over.IsErr || !strings.Contains(string(over.ErrReply), "invalid bulk length") {
		t.Errorf("the oversized SET: Err %v, reply %q; want the server's error reply", over.Err, over.ErrReply)
	}
	if behind.Err == nil || behind.Err.Reason != Lost || behind.Err.Evidence != Unwritten {
		t.Errorf("the command behind it: Err %v, want lost and unwritten", behind.Err)
	}
	<-c.Dead()
}

// resetWriteConn is one end of a pipe whose writes fail as a reset
// connection's do, while its reads, which honour deadlines, get nothing:
// a peer that never ends the stream.
type resetWriteConn struct{ net.Conn }

func (resetWriteConn) Write([]byte) (int, error) { return 0, syscall.ECONNRESET }

// TestDrainAfterAResetWriteEnds proves that a connection whose write
// failed with a reset, but whose reads neither return data nor end,
// still dies within seconds: the frame fails as lost and unwritten with
// the write's error, and Close returns.
func TestDrainAfterAResetWriteEnds(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := startOn(resetWriteConn{client}, 2, Config{})
	f := newFrame(WantBytes, "GET", "k")
	submit(t, c, f)
	select {
	case <-c.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection never died after its write was reset")
	}
	if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != Unwritten || !errors.Is(f.Err, syscall.ECONNRESET) {
		t.Errorf("Err %v, want lost, unwritten, the reset", f.Err)
	}
	_ = c.Close()
}

// TestOversizedBulkOwnReadClosesTheSocket proves, with the real server,
// that a caller reading its own reply to a command whose bulk is over
// proto-max-bulk-len gets the server's error reply, and that the
// connection, which the server closed, dies with its socket closed,
// although nothing was owed when the reader left.
func TestOversizedBulkOwnReadClosesTheSocket(t *testing.T) {
	c := dialRealConfig(t, quiet)
	do(t, c, WantBytes, "PING").Release()
	awaitParked(t, c)
	over := &Frame{Buf: []byte("*3\r\n$3\r\nSET\r\n$8\r\nwire:big\r\n$600000000\r\n" + strings.Repeat("x", 8<<20)), Want: WantNone, done: make(chan struct{}, 1)}
	if sent, err := c.Do(context.Background(), time.Time{}, over); !sent || err != nil {
		t.Fatalf("Do: %v %v", sent, err)
	}
	if over.Err != nil || !over.IsErr || !strings.Contains(string(over.ErrReply), "invalid bulk length") {
		t.Errorf("Err %v, reply %q; want the server's error reply", over.Err, over.ErrReply)
	}
	select {
	case <-c.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection the server closed never died")
	}
	if err := c.nc.Conn.SetReadDeadline(time.Time{}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the dead connection's socket: %v, want it closed", err)
	}
}
