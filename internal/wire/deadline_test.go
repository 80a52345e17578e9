package wire

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestDeadlineExpiryWindow proves that a deadline's channel closes no
// earlier than the deadline and at most deadlineGranularity after it, and
// that deadlines in the same window share one channel (one timer).
func TestDeadlineExpiryWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d deadlines
		start := time.Now()
		tests := []struct {
			after time.Duration // deadline, from start
			fires time.Duration // when its channel closes, from start
		}{
			{5 * time.Second, 5 * time.Second},
			{5*time.Second + 300*time.Microsecond, 5*time.Second + time.Millisecond},
			{5*time.Second + time.Millisecond, 5*time.Second + time.Millisecond},
			{2*time.Second + 1, 2*time.Second + time.Millisecond},
		}
		for _, tt := range tests {
			ch := d.expiry(start.Add(tt.after))
			go func() {
				<-ch
				if got := time.Since(start); got != tt.fires {
					t.Errorf("deadline +%v closed at +%v; want +%v", tt.after, got, tt.fires)
				}
			}()
		}
		a := d.expiry(start.Add(7*time.Second + 100*time.Microsecond))
		b := d.expiry(start.Add(7*time.Second + 900*time.Microsecond))
		if a != b {
			t.Error("deadlines in one window got different channels; want one shared")
		}
		c := d.expiry(start.Add(7*time.Second + 1100*time.Microsecond))
		if c == b {
			t.Error("deadlines in different windows share a channel")
		}
		time.Sleep(8 * time.Second)
		synctest.Wait()
		for _, ch := range []<-chan struct{}{a, c} {
			select {
			case <-ch:
			default:
				t.Error("a window's channel is still open after its end")
			}
		}
	})
}
