//go:build unix

package wire

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestPeerClosedSeesTheServersCloseWithoutTakingBytes: the check of an
// idle connection reports nothing while the peer is open, with or without
// bytes waiting (and leaves those bytes for the reader), and io.EOF once
// the peer has closed it.
func TestPeerClosedSeesTheServersCloseWithoutTakingBytes(t *testing.T) {
	client, server := tcpPair(t)
	defer server.Close()
	m := newMeteredConn(client)
	if m.peer == nil {
		t.Fatal("a TCP connection has no peer-close check")
	}
	if err := m.peerClosed(); err != nil {
		t.Fatalf("open and quiet: %v, want nil", err)
	}
	if _, err := server.Write([]byte("+PONG\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(client, buf); err != nil { // the bytes have arrived
		t.Fatal(err)
	}
	if err := m.peerClosed(); err != nil {
		t.Fatalf("open with bytes waiting: %v, want nil", err)
	}
	rest := make([]byte, 6)
	if _, err := io.ReadFull(client, rest); err != nil || string(buf)+string(rest) != "+PONG\r\n" {
		t.Fatalf("the reader got %q, %v; want the bytes the check left", string(buf)+string(rest), err)
	}
	server.Close()
	// The close arrives asynchronously; a blocking read is the receipt.
	if n, err := client.(*net.TCPConn).Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read after the close: %d, %v; want EOF", n, err)
	}
	if err := m.peerClosed(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the peer's close: %v, want io.EOF", err)
	}
	client.Close()
	if err := m.peerClosed(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after our own close: %v, want net.ErrClosed", err)
	}
}

// BenchmarkPeerClosed is the cost the check adds to a caller that writes
// its own frame on an idle connection (one non-blocking peek).
func BenchmarkPeerClosed(b *testing.B) {
	client, server := tcpPair(b)
	defer client.Close()
	defer server.Close()
	m := newMeteredConn(client)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.peerClosed(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOwnReadChecksForTheServersCloseFirst: on a connection that sat
// unread for CloseCheckAfter, a caller reading its own reply sees the
// server's close before it writes, and its frame fails as never written;
// without the check (a gap shorter than CloseCheckAfter) the frame is
// written into the closed connection and may have executed.
func TestOwnReadChecksForTheServersCloseFirst(t *testing.T) {
	for _, tt := range []struct {
		name      string
		after     time.Duration
		unwritten bool
	}{
		{"checked", -1, true},
		{"within the gap", time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quiet
			cfg.CloseCheckAfter = tt.after
			c, p := startTCP(t, cfg)
			f := newFrame(WantNone, "PING")
			out := doAsync(c, context.Background(), time.Time{}, f)
			p.received(t)
			p.send(t, []byte("+PONG\r\n"))
			if err := <-out; err != nil || f.Err != nil {
				t.Fatalf("PING: %v, %v", err, f.Err)
			}
			awaitParked(t, c)
			_ = p.conn.Close()
			<-p.cmds // the peer's reader has ended: the close is on the wire
			g := newFrame(WantNone, "INCR", "k")
			sent, err := c.Do(context.Background(), time.Time{}, g)
			if err == nil {
				err = g.Err
			}
			var ce *ConnError
			if !sent || !errors.As(err, &ce) {
				t.Fatalf("INCR: sent %v, %v; want a *ConnError", sent, err)
			}
			if got := ce.Evidence == Unwritten; got != tt.unwritten {
				t.Errorf("INCR: evidence %v (%v); want unwritten: %v", ce.Evidence, err, tt.unwritten)
			}
		})
	}
}
