package clock

import (
	"testing"
	"testing/synctest"
	"time"
)

// Now lies between two time.Now readings taken around it, by the monotonic
// clock and by the wall clock (the system clock is not set during a test).
func TestNowIsBetweenTimeNowReadings(t *testing.T) {
	for range 1000 {
		before := time.Now()
		now := Now()
		after := time.Now()
		if now.Before(before) || now.After(after) {
			t.Fatalf("Now() = %v, outside [%v, %v]", now, before, after)
		}
		if d := now.Sub(before); d < 0 || d > after.Sub(before) {
			t.Fatalf("Now() - before = %v, outside [0, %v]", d, after.Sub(before))
		}
		if w := now.Round(0); w.Before(before.Round(0).Add(-time.Millisecond)) || w.After(after.Round(0).Add(time.Millisecond)) {
			t.Fatalf("wall reading %v far from [%v, %v]", w, before.Round(0), after.Round(0))
		}
	}
}

// Inside a synctest bubble, Now follows the fake clock: deadlines built
// from it expire exactly when the bubble's time reaches them.
func TestNowFollowsSynctestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := Now()
		if !start.Equal(time.Now()) {
			t.Fatalf("Now() = %v, bubble's time.Now() = %v", start, time.Now())
		}
		deadline := Now().Add(5 * time.Second)
		time.Sleep(5*time.Second - time.Nanosecond)
		if !Now().Before(deadline) || !time.Now().Before(deadline) {
			t.Fatal("deadline passed a nanosecond early")
		}
		time.Sleep(time.Nanosecond)
		if Now().Before(deadline) || time.Now().Before(deadline) {
			t.Fatal("deadline not reached at the bubble's time")
		}
		if d := time.Until(deadline); d != 0 {
			t.Fatalf("time.Until(deadline) = %v, want 0", d)
		}
		if got := Now().Sub(start); got != 5*time.Second {
			t.Fatalf("Now().Sub(start) = %v, want 5s", got)
		}
	})
}

func BenchmarkNow(b *testing.B) {
	b.Run("clock.Now", func(b *testing.B) {
		for b.Loop() {
			_ = Now()
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
}
