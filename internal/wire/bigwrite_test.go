package wire

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// plainConn hides the socket's type, so that the connection has no
// non-blocking write (as over TLS) and the writer goroutine writes every
// frame.
type plainConn struct{ net.Conn }

// TestWriterSendsALargeFrameWithoutCopyingIt proves that the writer
// goroutine writes a 32 MiB command (a PUBLISH nobody receives) from the
// frame's own buffer, between the small commands queued around it: the
// call allocates under 4 MiB, and every command gets its own reply.
func TestWriterSendsALargeFrameWithoutCopyingIt(t *testing.T) {
	cfg := quiet
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := DefaultDial(ctx, network, addr)
		return plainConn{nc}, err
	}
	c := dialRealConfig(t, cfg)
	before := newFrame(WantBytes, "ECHO", "before")
	large := newFrame(WantInt, "PUBLISH", "wire:nobody", strings.Repeat("l", 32<<20))
	after := newFrame(WantBytes, "ECHO", "after")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for _, f := range []*Frame{before, large, after} {
		if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
			t.Fatalf("Submit: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, f := range []*Frame{before, large, after} {
		if err := f.Wait(ctx, time.Time{}); err != nil || f.Err != nil || f.IsErr {
			t.Fatalf("Wait: %v %v %q", err, f.Err, f.ErrReply)
		}
	}
	runtime.ReadMemStats(&m1)
	if string(before.Bytes) != "before" || large.Int != 0 || string(after.Bytes) != "after" {
		t.Fatalf("replies %q, %d, %q; want each command's own", before.Bytes, large.Int, after.Bytes)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > 4<<20 {
		t.Errorf("writing a 32 MiB command allocated %d MiB, want under 4", n>>20)
	}
}

// TestWriteCutInALargeFrameOfABatch proves that in a batch of a small
// command, a 2 MiB one and another small one, the small one before is
// written on its own (the large frame is not copied after it), and that
// a write cut inside the large frame leaves the evidence a single write
// would: the command before possibly executed, the large one and the one
// after it unwritten.
func TestWriteCutInALargeFrameOfABatch(t *testing.T) {
	c, fc := startFake(t, 2, nil)
	gate := make(chan struct{})
	fc.rule(0, writeRule{gate: gate})
	fc.rule(2, writeRule{fail: true, accept: 100})
	head := newFrame(WantBytes, "GET", "head")
	submit(t, c, head)
	<-fc.started // the writer holds head's write: the next three queue
	before := newFrame(WantBytes, "GET", "before")
	large := newFrame(WantNone, "SET", "large", strings.Repeat("l", 2<<20))
	after := newFrame(WantBytes, "GET", "after")
	for _, f := range []*Frame{before, large, after} {
		submit(t, c, f)
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := []Evidence{PossiblyExecuted, PossiblyExecuted, Unwritten, Unwritten}
	for i, f := range []*Frame{head, before, large, after} {
		if err := f.Wait(ctx, time.Time{}); err != nil {
			t.Fatalf("Wait %d: %v", i, err)
		}
		if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != want[i] {
			t.Errorf("frame %d: Err %v, want lost, %v", i, f.Err, want[i])
		}
	}
	if got := fc.call(1); string(got) != string(cmd("GET", "before")) {
		t.Errorf("the second write carried %d bytes, want only the command before the large one", len(got))
	}
}
