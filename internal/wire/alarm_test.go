package wire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
)

// slowGets answers GET fast-* at once and never answers any other GET.
func slowGets(args []string) []byte {
	if strings.ToUpper(args[0]) == "GET" {
		if strings.HasPrefix(args[1], "fast") {
			return resp.AppendBulkString(nil, args[1])
		}
		return nil
	}
	return defaultReply(args)
}

// dialFake connects to a fake server answering with handle; the
// connection closes when the test ends.
func dialFake(t *testing.T, handle func(args []string) []byte) *Conn {
	t.Helper()
	s := newFakeServer(t, handle)
	c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: s.dial}, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitResult is what one Wait returned and how long after the start.
type waitResult struct {
	err     error
	elapsed time.Duration
}

// TestAlarmWakesEachWaiterAtItsOwnDeadline proves that the connection's one
// alarm ends every waiter exactly at its own deadline, whatever the order
// in which the deadlines were registered: a later registration with an
// earlier deadline re-arms it, and waiters woken for an earlier deadline
// keep waiting for theirs.
func TestAlarmWakesEachWaiterAtItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := dialFake(t, slowGets)
		fp := new(FramePool)
		timeouts := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}
		start := time.Now()
		results := make([]chan waitResult, len(timeouts))
		for i, d := range timeouts {
			f := frameIn(fp, WantBytes, "GET", "slow")
			submit(t, c, f)
			results[i] = make(chan waitResult, 1)
			go func() {
				err := f.Wait(context.Background(), start.Add(d))
				results[i] <- waitResult{err, time.Since(start)}
			}()
			synctest.Wait() // registered before the next one
		}
		for i, d := range timeouts {
			r := <-results[i]
			if !errors.Is(r.err, context.DeadlineExceeded) {
				t.Errorf("waiter %d (deadline %v): Wait = %v, want context.DeadlineExceeded", i, d, r.err)
			}
			if r.elapsed != d {
				t.Errorf("waiter %d gave up after %v, want exactly its deadline %v", i, r.elapsed, d)
			}
		}
	})
}

// TestAlarmOfCompletedCallKeepsOthersWaiting proves that when the alarm
// fires for the deadline of a call that completed long before, a waiter
// with a later deadline is not ended early, and its reply, when it comes
// before its own deadline, is delivered.
func TestAlarmOfCompletedCallKeepsOthersWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var release = make(chan struct{})
		c := dialFake(t, func(args []string) []byte {
			if strings.ToUpper(args[0]) == "GET" && args[1] == "late" {
				<-release
				return resp.AppendBulkString(nil, "late")
			}
			return slowGets(args)
		})
		fp := new(FramePool)
		start := time.Now()

		// The first call arms the alarm for its deadline (1 s), then completes.
		fast := frameIn(fp, WantBytes, "GET", "fast")
		submit(t, c, fast)
		if err := fast.Wait(context.Background(), start.Add(time.Second)); err != nil || string(fast.Bytes) != "fast" {
			t.Fatalf("fast call: %v %q", err, fast.Bytes)
		}
		fast.Release()

		late := frameIn(fp, WantBytes, "GET", "late")
		submit(t, c, late)
		done := make(chan waitResult, 1)
		go func() {
			err := late.Wait(context.Background(), start.Add(3*time.Second))
			done <- waitResult{err, time.Since(start)}
		}()
		time.Sleep(2 * time.Second) // virtual: the alarm fired at 1 s
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("the waiter ended at %v (%v) when the alarm of a completed call fired", r.elapsed, r.err)
		default:
		}
		close(release)
		r := <-done
		if r.err != nil || string(late.Bytes) != "late" {
			t.Fatalf("late call: Wait = %v, Bytes %q; want its reply", r.err, late.Bytes)
		}
		if r.elapsed != 2*time.Second {
			t.Errorf("reply delivered after %v, want 2s (when the server answered)", r.elapsed)
		}
		late.Release()
	})
}

// TestAlarmPastDeadlineEndsWaitAtOnce proves that a deadline already past
// ends Wait without waiting for anything.
func TestAlarmPastDeadlineEndsWaitAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := dialFake(t, slowGets)
		start := time.Now()
		// A later deadline arms the alarm first: the past one must not wait for it.
		f1 := frameIn(new(FramePool), WantBytes, "GET", "slow")
		submit(t, c, f1)
		go func() { _ = f1.Wait(context.Background(), start.Add(time.Hour)) }()
		synctest.Wait()
		f2 := frameIn(new(FramePool), WantBytes, "GET", "slow")
		submit(t, c, f2)
		if err := f2.Wait(context.Background(), start.Add(-time.Second)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("Wait with a past deadline returned after %v, want at once", got)
		}
	})
}

// TestAlarmExpiresFrameTheReaderHolds proves that a frame the reader
// goroutine has already taken from the FIFO (it holds the frames written
// with the reply it read) is still found and ended at its deadline when
// its own reply never comes.
func TestAlarmExpiresFrameTheReaderHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		c := dialFake(t, func(args []string) []byte {
			if strings.ToUpper(args[0]) == "GET" && args[1] == "fast" {
				<-gate // both frames are written before this reply
			}
			return slowGets(args)
		})
		fp := new(FramePool)
		start := time.Now()
		fast := frameIn(fp, WantBytes, "GET", "fast")
		submit(t, c, fast)
		slow := frameIn(fp, WantBytes, "GET", "slow")
		submit(t, c, slow)
		synctest.Wait()
		close(gate)
		if err := fast.Wait(context.Background(), time.Time{}); err != nil || string(fast.Bytes) != "fast" {
			t.Fatalf("fast call: %v %q", err, fast.Bytes)
		}
		synctest.Wait()
		if held := c.took[c.next:]; len(held) != 1 || held[0] != slow {
			t.Fatalf("the reader holds %d frames after the fast reply, want the slow frame only", len(held))
		}
		err := slow.Wait(context.Background(), start.Add(time.Second))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("slow call: Wait = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("slow call gave up after %v, want exactly its deadline 1s", got)
		}
	})
}

// generation is how many times f was renewed (recycled or reset).
func generation(f *Frame) uint32 { return f.state.w.Load() >> 8 }

// TestExpiredFrameReleasedOnce proves the hand-over of a frame the alarm
// expired: whichever of its caller and its connection is done with it
// last returns it to the pool, exactly once (its generation advances by
// one), in either order, and a caller that was cancelled at the moment
// it expired takes the alarm's token, so none is left for the frame's
// next use.
func TestExpiredFrameReleasedOnce(t *testing.T) {
	expire := func(f *Frame) {
		w := f.state.w.Load()
		if !f.state.w.CompareAndSwap(w, w&^stateMask|stateExpired) {
			t.Fatal("could not expire the frame")
		}
		f.done <- struct{}{}
	}
	type step func(f *Frame)
	callerWakes := func(f *Frame) {
		<-f.done
		if s := f.state.Load(); s != stateExpired && s != stateDrained {
			t.Fatalf("woken in state %d, want expired or drained", s)
		}
		f.leaveExpired()
	}
	callerCancelled := func(f *Frame) {
		if err := f.giveUp(context.Canceled); !errors.Is(err, context.Canceled) {
			t.Fatalf("giveUp = %v", err)
		}
	}
	connectionDone := func(f *Frame) { f.drop() }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"caller first", []step{callerWakes, connectionDone}},
		{"connection first", []step{connectionDone, callerWakes}},
		{"cancelled caller first", []step{callerCancelled, connectionDone}},
		{"connection first, then cancelled caller", []step{connectionDone, callerCancelled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := new(FramePool).Get()
			f.state.Store(stateSent)
			gen := generation(f)
			expire(f)
			for _, s := range tc.steps {
				s(f)
			}
			if s := f.state.Load(); s != stateIdle {
				t.Fatalf("state %d after both sides were done, want idle (released)", s)
			}
			if got := generation(f) - gen; got != 1 {
				t.Fatalf("frame released %d times, want once", got)
			}
			if len(f.done) != 0 {
				t.Fatal("a token was left in the released frame")
			}
		})
	}
}

// TestAlarmSkipsLaterUseOfFrame proves that the alarm cannot expire a
// frame's later use with what it read of an earlier one: its swap is of
// the whole state word, generation included.
func TestAlarmSkipsLaterUseOfFrame(t *testing.T) {
	f := new(FramePool).Get()
	f.state.Store(stateSent)
	seen := f.state.w.Load() // the alarm reads the earlier use
	f.Reset()                // the earlier use ended; the frame is sent again
	f.state.Store(stateSent)
	if f.state.w.CompareAndSwap(seen, seen&^stateMask|stateExpired) {
		t.Fatal("the alarm expired a later use of the frame with the state word of an earlier one")
	}
	if s := f.state.Load(); s != stateSent {
		t.Fatalf("state %d, want sent", s)
	}
}

// TestFrameSentAgainOnAnotherConnectionEndsAtItsDeadline proves that a
// frame one connection finished with and that was sent again (Reset) on
// another connection, which started later, is ended at its own deadline,
// never earlier: the first connection's alarm still sees the frame among
// those its reader took, and reads its deadline as the same instant the
// second connection's alarm does.
func TestFrameSentAgainOnAnotherConnectionEndsAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		start := time.Now()
		a := dialFake(t, slowGets)
		f := frameIn(fp, WantBytes, "GET", "fast")
		submit(t, a, f)
		if err := f.Wait(context.Background(), time.Time{}); err != nil || string(f.Bytes) != "fast" {
			t.Fatalf("fast call: %v %q", err, f.Bytes)
		}
		synctest.Wait() // a's reader still holds f among the frames it took

		time.Sleep(5 * time.Second)
		b := dialFake(t, slowGets) // b starts 5 s after a
		f.Reset()
		f.Buf = append(f.Buf[:0], cmd("GET", "slow")...)
		submit(t, b, f)
		done := make(chan waitResult, 1)
		go func() {
			err := f.Wait(context.Background(), start.Add(9*time.Second))
			done <- waitResult{err, time.Since(start)}
		}()
		synctest.Wait()

		// a's alarm fires at 6 s and finds f, due at 9 s, among the
		// frames a's reader took.
		g := frameIn(fp, WantBytes, "GET", "slow")
		submit(t, a, g)
		if err := g.Wait(context.Background(), start.Add(6*time.Second)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call on a: Wait = %v, want context.DeadlineExceeded", err)
		}
		r := <-done
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("call on b: Wait = %v, want context.DeadlineExceeded", r.err)
		}
		if r.elapsed != 9*time.Second {
			t.Errorf("call on b gave up after %v, want exactly its deadline 9s", r.elapsed)
		}
	})
}

// TestIdleReaderKeepsFewFrames proves that once the many frames the
// reader took with one read have all been answered, the connection keeps
// no pointer to them while it waits for more: an idle connection holds
// fewer than tookKeepMax frames (and their command buffers) alive.
func TestIdleReaderKeepsFewFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 2 * tookKeepMax
		gets := 0
		c := dialFake(t, func(args []string) []byte {
			if strings.ToUpper(args[0]) != "GET" {
				return defaultReply(args)
			}
			// Every reply comes after the last command: the reader
			// takes every frame with the first reply.
			if gets++; gets < n {
				return nil
			}
			var all []byte
			for range n {
				all = resp.AppendBulkString(all, "fast")
			}
			return all
		})
		fp := new(FramePool)
		frames := make([]*Frame, n)
		for i := range frames {
			frames[i] = frameIn(fp, WantBytes, "GET", "fast")
			submit(t, c, frames[i])
		}
		for _, f := range frames {
			if err := f.Wait(context.Background(), time.Time{}); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			f.Release()
		}
		synctest.Wait() // the reader waits for its next reply
		c.fifoMu.Lock()
		defer c.fifoMu.Unlock()
		if c.cur != nil || len(c.took) != 0 || c.fifo.size != 0 {
			t.Fatalf("idle connection holds frames: cur %v, took %d, FIFO %d", c.cur != nil, len(c.took), c.fifo.size)
		}
	})
}
