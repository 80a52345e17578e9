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
