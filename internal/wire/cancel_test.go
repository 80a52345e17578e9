package wire

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// fifoLen returns how many frames await a reply.
func fifoLen(c *Conn) int {
	c.fifoMu.Lock()
	defer c.fifoMu.Unlock()
	return c.fifo.size
}

// TestCancelKeepsFIFOSlot proves that a caller that cancels while its frame
// is in flight returns context.Canceled at once, keeps its FIFO slot until
// its late reply arrives (which is drained and dropped), and that the next
// caller gets its own reply, not the abandoned one's.
func TestCancelKeepsFIFOSlot(t *testing.T) {
	c, fc := startFake(t, 3, nil)

	f1 := newFrame(WantBytes, "GET", "k1")
	submit(t, c, f1)
	fc.waitWritten(t, f1.Buf)
	ctx1, cancel1 := context.WithCancel(context.Background())
	cancel1()
	if err := f1.Wait(ctx1, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("caller 1 Wait: got %v, want context.Canceled", err)
	}

	f2 := newFrame(WantBytes, "GET", "k2")
	submit(t, c, f2)
	fc.waitWritten(t, f2.Buf)
	if got := fifoLen(c); got != 2 {
		t.Fatalf("FIFO holds %d frames, want 2 (the abandoned slot is kept)", got)
	}
	if got := f1.state.Load(); got != stateAbandoned {
		t.Fatalf("abandoned frame state %d before its reply, want stateAbandoned (%d): recycled too early", got, stateAbandoned)
	}

	fc.reply(bulk("value-of-k1"))
	fc.reply(bulk("value-of-k2"))
	waitOK(t, f2)
	if f2.Err != nil || string(f2.Bytes) != "value-of-k2" {
		t.Fatalf("caller 2: got Err %v Bytes %q, want its own reply %q", f2.Err, f2.Bytes, "value-of-k2")
	}
	f2.Release()
	if got := fifoLen(c); got != 0 {
		t.Errorf("FIFO holds %d frames after both replies, want 0", got)
	}
	// f1 was recycled by the reader when its reply arrived, before f2's
	// reply was decoded.
	if got := f1.state.Load(); got != stateIdle {
		t.Errorf("abandoned frame state %d after its reply, want stateIdle (recycled)", got)
	}
}

// TestDeadline proves that Wait gives up with context.DeadlineExceeded for a
// deadline already past and for one that passes while the reply is held,
// and that those late replies complete nothing: the next caller gets its
// own reply.
func TestDeadline(t *testing.T) {
	tests := []struct {
		name     string
		deadline func() time.Time
	}{
		{"deadline in the past", func() time.Time { return time.Now().Add(-time.Second) }},
		{"deadline passes while waiting", func() time.Time { return time.Now().Add(5 * time.Millisecond) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fc := startFake(t, 3, nil)
			f := newFrame(WantBytes, "GET", "slow")
			submit(t, c, f)
			fc.waitWritten(t, f.Buf)
			if err := f.Wait(context.Background(), tt.deadline()); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Wait: got %v, want context.DeadlineExceeded", err)
			}
			next := newFrame(WantBytes, "GET", "next")
			submit(t, c, next)
			fc.waitWritten(t, next.Buf)
			fc.reply(bulk("late"))
			fc.reply(bulk("mine"))
			waitOK(t, next)
			if string(next.Bytes) != "mine" {
				t.Fatalf("next caller got %q, want its own reply %q", next.Bytes, "mine")
			}
			next.Release()
			if got := fifoLen(c); got != 0 {
				t.Errorf("FIFO holds %d frames, want 0", got)
			}
		})
	}
}

// TestAbandonedWhileQueuedIsNeverWritten proves that a frame whose caller
// gives up before the writer takes it is dropped: its bytes never reach
// the socket and it occupies no FIFO slot.
func TestAbandonedWhileQueuedIsNeverWritten(t *testing.T) {
	c, fc := startFake(t, 3, nil)
	gate := make(chan struct{})
	fc.rule(0, writeRule{gate: gate})
	x := newFrame(WantBytes, "GET", "x")
	submit(t, c, x)
	fc.awaitWrite(t, 0)

	y := newFrame(WantBytes, "GET", "never-sent")
	yBuf := bytes.Clone(y.Buf)
	submit(t, c, y)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := y.Wait(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: got %v, want context.Canceled", err)
	}
	close(gate)

	z := newFrame(WantBytes, "GET", "z")
	submit(t, c, z)
	fc.waitWritten(t, z.Buf)
	if got := fc.writtenBytes(); bytes.Contains(got, yBuf) {
		t.Fatalf("abandoned queued frame was written: %q", got)
	}
	if got := fifoLen(c); got != 2 {
		t.Fatalf("FIFO holds %d frames, want 2 (x and z only)", got)
	}
	fc.reply(bulk("xv"))
	fc.reply(bulk("zv"))
	waitOK(t, x)
	waitOK(t, z)
	if string(x.Bytes) != "xv" || string(z.Bytes) != "zv" {
		t.Fatalf("got x=%q z=%q, want xv and zv", x.Bytes, z.Bytes)
	}
	x.Release()
	z.Release()
}

// TestGiveUpDuringDecodeOfMultiReply proves that a caller who gives up
// while the reader decodes one reply of a multi-reply frame does not wait
// for the remaining replies: it abandons the frame as soon as the reader
// puts it back to stateSent. (The reader's two transitions are simulated.)
func TestGiveUpDuringDecodeOfMultiReply(t *testing.T) {
	f := &Frame{done: make(chan struct{}, 1)}
	f.state.Store(stateDecoding)
	got := make(chan error, 1)
	go func() { got <- f.giveUp(context.Canceled) }()
	f.state.Store(stateSent) // the reader finished a non-last reply
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("giveUp: got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("giveUp waited for the frame's remaining replies")
	}
	if s := f.state.Load(); s != stateAbandoned {
		t.Fatalf("state %d, want stateAbandoned", s)
	}
}

// TestCancelledCallerOfFailedFrame proves that a frame abandoned in flight
// is recycled by the connection when it dies, not completed.
func TestCancelledCallerOfFailedFrame(t *testing.T) {
	c, fc := startFake(t, 3, nil)
	f := newFrame(WantBytes, "GET", "a")
	submit(t, c, f)
	fc.waitWritten(t, f.Buf)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Wait(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: got %v, want context.Canceled", err)
	}
	_ = c.Close()
	if got := f.state.Load(); got != stateIdle {
		t.Fatalf("abandoned frame state %d after Close, want stateIdle (recycled)", got)
	}
	if got := fifoLen(c); got != 0 {
		t.Fatalf("FIFO holds %d frames after Close, want 0", got)
	}
}

// TestGiveUpWhileLaterRepliesAreNotBuffered proves that the reader keeps a
// multi-reply frame in stateDecoding only across replies that are already
// buffered: once it has decoded the two replies that arrived and waits on
// the socket for the third, a caller giving up returns at once, the late
// reply is drained, and the next frame gets its own reply. A frame whose
// replies all arrive in one read completes with every one of them.
func TestGiveUpWhileLaterRepliesAreNotBuffered(t *testing.T) {
	c, fc := startFake(t, 3, nil)
	f := newFrame(WantValue, "GET", "a")
	f.Buf = append(f.Buf, cmd("GET", "b")...)
	f.Buf = append(f.Buf, cmd("GET", "c")...)
	f.Replies = 3
	submit(t, c, f)
	fc.waitWritten(t, f.Buf)

	drained := make(chan int, 16)
	fc.mu.Lock()
	fc.drained = drained
	fc.mu.Unlock()
	two := append(bulk("va"), bulk("vb")...)
	fc.reply(two)
	for n := range drained {
		if n == len(two) {
			break // both replies read and decoded; the reader waits for more
		}
	}
	if s := f.state.Load(); s != stateSent {
		t.Fatalf("frame state %d while the reader waits on the socket, want stateSent (%d)", s, stateSent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Wait(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: got %v, want context.Canceled", err)
	}

	g := newFrame(WantValue, "GET", "x")
	g.Buf = append(g.Buf, cmd("GET", "y")...)
	g.Replies = 2
	submit(t, c, g)
	fc.waitWritten(t, append(append([]byte{}, f.Buf...), g.Buf...))
	fc.reply(append(append(bulk("vc"), bulk("vx")...), bulk("vy")...)) // f's late reply, then g's two in one read
	waitOK(t, g)
	if g.Err != nil || len(g.Values) != 2 || string(g.Values[0].Str) != "vx" || string(g.Values[1].Str) != "vy" {
		t.Fatalf("next frame: Err %v, %d values %v, want its own [vx vy]", g.Err, len(g.Values), g.Values)
	}
	g.Release()
	if got := fifoLen(c); got != 0 {
		t.Errorf("FIFO holds %d frames, want 0", got)
	}
}
