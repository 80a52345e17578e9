package wire

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
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
