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

// TestStampsAgreeWhateverTheTimeCameFrom proves that stamps of Now's
// readings, of time.Now's and the current stamp agree to the nanosecond,
// in a testing/synctest bubble (whose times carry no monotonic reading)
// as outside one, so that deadlines from either order correctly against
// the clock.
func TestStampsAgreeWhateverTheTimeCameFrom(t *testing.T) {
	check := func(t *testing.T) {
		now := NowStamp()
		if s := Stamp(Now()); s < now {
			t.Errorf("Stamp(Now()) = %d before NowStamp() %d", s, now)
		}
		if s := Stamp(time.Now().Add(time.Second)); s < now+int64(time.Second) {
			t.Errorf("Stamp(time.Now()+1s) = %d, want at least %d", s, now+int64(time.Second))
		}
	}
	t.Run("real clock", check)
	t.Run("bubble", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			check(t)
			// The bubble's clock stands still between blocking points:
			// every reading agrees exactly.
			now := NowStamp()
			if a, b := Stamp(Now()), Stamp(time.Now()); a != now || b != now {
				t.Errorf("Stamp(Now()) %d, Stamp(time.Now()) %d, NowStamp() %d: want equal", a, b, now)
			}
			time.Sleep(250 * time.Millisecond)
			if got := NowStamp() - now; got != int64(250*time.Millisecond) {
				t.Errorf("stamp advanced %d ns over a 250ms sleep", got)
			}
		})
	})
}
