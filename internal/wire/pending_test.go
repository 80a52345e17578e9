package wire

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// submitAsync submits f from a new goroutine and returns the channel that
// receives Submit's result.
func submitAsync(c *Conn, ctx context.Context, deadline time.Time, f *Frame) chan error {
	out := make(chan error, 1)
	go func() { out <- c.Submit(ctx, deadline, f) }()
	return out
}

// stillWaiting fails the test if Submit has returned.
func stillWaiting(t *testing.T, name string, res chan error) {
	t.Helper()
	select {
	case err := <-res:
		t.Fatalf("%s: Submit returned %v, want it still waiting for room", name, err)
	default:
	}
}

// TestSubmitWaitsForRoom proves, in virtual time, that with
// MaxPendingFrames 2 a third Submit waits: it returns
// context.DeadlineExceeded exactly at its deadline, ctx.Err() when its
// context ends, leaving the frame owned by the caller (idle, reusable) and
// unwritten; and a waiter is admitted (and written) as soon as a reply
// frees a slot.
func TestSubmitWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		c, fc := startFakeConfig(t, 3, Config{MaxPendingFrames: 2})
		a, b := frameIn(fp, WantBytes, "GET", "a"), frameIn(fp, WantBytes, "GET", "b")
		submit(t, c, a)
		submit(t, c, b)
		fc.waitWritten(t, b.Buf)

		x := frameIn(fp, WantBytes, "GET", "x")
		start := time.Now()
		if err := c.Submit(context.Background(), start.Add(100*time.Millisecond), x); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Submit beyond the bound: got %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 100*time.Millisecond {
			t.Errorf("Submit gave up after %v, want 100ms (its deadline)", got)
		}
		if err := c.Submit(context.Background(), start, x); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Submit with a past deadline: got %v, want context.DeadlineExceeded", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		res := submitAsync(c, ctx, time.Time{}, x)
		synctest.Wait()
		stillWaiting(t, "x", res)
		cancel()
		if err := <-res; !errors.Is(err, context.Canceled) {
			t.Fatalf("Submit after cancel: got %v, want context.Canceled", err)
		}
		if s := x.state.Load(); s != stateIdle {
			t.Errorf("refused frame in state %d, want stateIdle (still the caller's)", s)
		}
		synctest.Wait()
		if got := fc.writtenBytes(); bytes.Contains(got, x.Buf) {
			t.Fatalf("a refused frame was written: %q", got)
		}
		if n, _ := c.pending(); n != 2 {
			t.Fatalf("pending = %d after refusals, want 2", n)
		}

		// The same frame waits again and is admitted by a's reply.
		res = submitAsync(c, context.Background(), time.Time{}, x)
		synctest.Wait()
		stillWaiting(t, "x", res)
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("av"))
		waitOK(t, a)
		if err := <-res; err != nil {
			t.Fatalf("Submit after a reply freed a slot: %v", err)
		}
		fc.waitWritten(t, x.Buf)
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("bv"))
		fc.reply(bulk("xv"))
		waitOK(t, b)
		waitOK(t, x)
		for _, f := range []*Frame{a, b, x} {
			if f.Err != nil {
				t.Errorf("frame %q: %v", f.Buf, f.Err)
			}
			f.Release()
		}
		if n, _ := c.pending(); n != 0 {
			t.Errorf("pending = %d after every reply, want 0", n)
		}
	})
}

// TestSubmitByteBound proves MaxPendingBytes: frames are admitted while
// their summed len(Buf) fits; a frame larger than the bound is admitted
// when nothing else is pending (no deadlock) and holds back every other
// frame until its reply arrives.
func TestSubmitByteBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		small := func(k string) *Frame { return frameIn(fp, WantBytes, "GET", k) } // 18 bytes with a one-letter key
		limit := 2 * len(cmd("GET", "a"))
		c, fc := startFakeConfig(t, 3, Config{MaxPendingBytes: limit})
		a, b, x := small("a"), small("b"), small("x")
		submit(t, c, a)
		submit(t, c, b)
		res := submitAsync(c, context.Background(), time.Time{}, x)
		synctest.Wait()
		stillWaiting(t, "x", res)
		if _, n := c.pending(); n != int64(limit) {
			t.Fatalf("pending bytes = %d, want %d", n, limit)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("av"))
		if err := <-res; err != nil {
			t.Fatalf("Submit of x: %v", err)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("bv"))
		fc.reply(bulk("xv"))
		for _, f := range []*Frame{a, b, x} {
			waitOK(t, f)
			f.Release()
		}

		big := frameIn(fp, WantBytes, "SET", "big", strings.Repeat("v", 10*limit))
		submit(t, c, big) // alone: admitted although larger than the bound
		y := small("y")
		res = submitAsync(c, context.Background(), time.Time{}, y)
		synctest.Wait()
		stillWaiting(t, "y", res)
		synctest.Wait() // the writer has written every admitted frame
		fc.reply([]byte("+OK\r\n"))
		waitOK(t, big)
		big.Release()
		if err := <-res; err != nil {
			t.Fatalf("Submit of y after the big frame completed: %v", err)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("yv"))
		waitOK(t, y)
		y.Release()
		if n, nb := c.pending(); n != 0 || nb != 0 {
			t.Errorf("pending = %d frames, %d bytes, want 0, 0", n, nb)
		}
	})
}

// TestAbandonedFramesHoldRoom proves that a frame whose caller gave up
// keeps counting against MaxPendingFrames until its reply is drained, and
// that a frame abandoned while queued frees its room when the writer drops
// it.
func TestAbandonedFramesHoldRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()

		c, fc := startFakeConfig(t, 3, Config{MaxPendingFrames: 2})
		// a is written, then abandoned: its slot stays taken.
		a := frameIn(fp, WantBytes, "GET", "a")
		submit(t, c, a)
		fc.waitWritten(t, a.Buf)
		if err := a.Wait(cancelled, time.Time{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait: got %v, want context.Canceled", err)
		}
		// w fills the second slot and is held in write 1; x, queued
		// behind it, is abandoned there.
		gate := make(chan struct{})
		fc.rule(1, writeRule{gate: gate})
		w := frameIn(fp, WantBytes, "GET", "w")
		submit(t, c, w)
		fc.awaitWrite(t, 1)
		x := frameIn(fp, WantBytes, "GET", "x")
		xBuf := bytes.Clone(x.Buf) // x is recycled once dropped
		res := submitAsync(c, context.Background(), time.Time{}, x)
		synctest.Wait()
		stillWaiting(t, "x (behind an abandoned frame)", res)

		synctest.Wait()                   // the writer has written every admitted frame
		fc.reply(bulk("late reply of a")) // drained and dropped: a's slot is free
		if err := <-res; err != nil {
			t.Fatalf("Submit after the abandoned reply was drained: %v", err)
		}
		if err := x.Wait(cancelled, time.Time{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait: got %v, want context.Canceled", err)
		}
		y := frameIn(fp, WantBytes, "GET", "y")
		res = submitAsync(c, context.Background(), time.Time{}, y)
		synctest.Wait()
		stillWaiting(t, "y (behind a frame abandoned while queued)", res)
		close(gate) // the writer drops x, never written: y is admitted
		if err := <-res; err != nil {
			t.Fatalf("Submit after the queued abandoned frame was dropped: %v", err)
		}
		fc.waitWritten(t, y.Buf)
		if got := fc.writtenBytes(); bytes.Contains(got, xBuf) {
			t.Errorf("the frame abandoned while queued was written: %q", got)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply(bulk("wv"))
		fc.reply(bulk("yv"))
		waitOK(t, w)
		waitOK(t, y)
		w.Release()
		y.Release()
		if n, _ := c.pending(); n != 0 {
			t.Errorf("pending = %d, want 0", n)
		}
	})
}

// TestWaitersOldestFirst proves that waiters are admitted in arrival
// order: a small frame that would fit does not overtake an older large
// one; and when the older one gives up, the younger one is admitted at
// once.
func TestWaitersOldestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		a := frameIn(fp, WantBytes, "SET", "a", strings.Repeat("v", 40))
		limit := len(a.Buf) + 30
		c, fc := startFakeConfig(t, 3, Config{MaxPendingBytes: limit})
		submit(t, c, a)
		fc.waitWritten(t, a.Buf)

		big := frameIn(fp, WantBytes, "SET", "big", strings.Repeat("w", 40))
		small := frameIn(fp, WantBytes, "GET", "s")
		// small fits beside a, big does not; big and small fit together.
		if len(a.Buf)+len(small.Buf) > limit || len(a.Buf)+len(big.Buf) <= limit || len(big.Buf)+len(small.Buf) > limit {
			t.Fatal("frame sizes do not exercise the bound")
		}
		bigRes := submitAsync(c, context.Background(), time.Time{}, big)
		synctest.Wait()
		smallRes := submitAsync(c, context.Background(), time.Time{}, small)
		synctest.Wait()
		stillWaiting(t, "big", bigRes)
		stillWaiting(t, "small (behind an older waiter)", smallRes)
		synctest.Wait()             // the writer has written every admitted frame
		fc.reply([]byte("+OK\r\n")) // a completes: big, then small
		if err := <-bigRes; err != nil {
			t.Fatalf("Submit of big: %v", err)
		}
		if err := <-smallRes; err != nil {
			t.Fatalf("Submit of small: %v", err)
		}
		fc.waitWritten(t, small.Buf)
		got := fc.writtenBytes()
		if i, j := bytes.Index(got, big.Buf), bytes.Index(got, small.Buf); i < 0 || i > j {
			t.Fatalf("write order: big at %d, small at %d; want big first", i, j)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply([]byte("+OK\r\n"))
		fc.reply(bulk("sv"))
		for _, f := range []*Frame{a, big, small} {
			waitOK(t, f)
			f.Release()
		}

		// An older waiter that gives up lets a younger one in at once.
		a = frameIn(fp, WantBytes, "SET", "a", strings.Repeat("v", 40))
		submit(t, c, a)
		big = frameIn(fp, WantBytes, "SET", "big", strings.Repeat("w", 40))
		small = frameIn(fp, WantBytes, "GET", "s")
		ctx, cancel := context.WithCancel(context.Background())
		bigRes = submitAsync(c, ctx, time.Time{}, big)
		synctest.Wait()
		smallRes = submitAsync(c, context.Background(), time.Time{}, small)
		synctest.Wait()
		stillWaiting(t, "small", smallRes)
		cancel()
		if err := <-bigRes; !errors.Is(err, context.Canceled) {
			t.Fatalf("big: got %v, want context.Canceled", err)
		}
		if err := <-smallRes; err != nil {
			t.Fatalf("small after the older waiter left: %v", err)
		}
		synctest.Wait() // the writer has written every admitted frame
		fc.reply([]byte("+OK\r\n"))
		fc.reply(bulk("sv"))
		waitOK(t, a)
		waitOK(t, small)
		a.Release()
		small.Release()
		big.Release()
	})
}

// TestWaiterOfDeadConn proves that a Submit waiting for room when the
// connection dies returns the usual *ConnError with Evidence Unwritten and
// leaves the frame to its caller, for a connection lost and one closed.
func TestWaiterOfDeadConn(t *testing.T) {
	for _, closeIt := range []bool{false, true} {
		name := "lost"
		if closeIt {
			name = "closed"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fp := new(FramePool)
				c, fc := startFakeConfig(t, 3, Config{MaxPendingFrames: 1})
				a := frameIn(fp, WantBytes, "GET", "a")
				submit(t, c, a)
				fc.waitWritten(t, a.Buf)
				x := frameIn(fp, WantBytes, "GET", "x")
				res := submitAsync(c, context.Background(), time.Time{}, x)
				synctest.Wait()
				stillWaiting(t, "x", res)
				want := Lost
				if closeIt {
					want = Closed
					_ = c.Close()
				} else {
					_ = fc.Close()
				}
				err := <-res
				var ce *ConnError
				if !errors.As(err, &ce) || ce.Reason != want || ce.Evidence != Unwritten {
					t.Fatalf("waiter: got %v, want *ConnError reason %d Unwritten", err, want)
				}
				if s := x.state.Load(); s != stateIdle {
					t.Errorf("frame state %d, want stateIdle (the caller's)", s)
				}
				x.Release()
				waitOK(t, a)
				if a.Err == nil || a.Err.Evidence != PossiblyExecuted {
					t.Errorf("in-flight frame: got %v, want PossiblyExecuted", a.Err)
				}
				a.Release()
				<-c.Dead()
				if n, _ := c.pending(); n != 0 {
					t.Errorf("pending = %d after death, want 0", n)
				}
			})
		})
	}
}
