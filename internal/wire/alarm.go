package wire

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// alarm ends the waits of one connection's callers whose deadlines pass,
// with one timer for the connection instead of one per call, and without
// a channel that every caller also waits on: a caller waits on its
// frame's channel alone ([Frame.Wait]). The timer is armed for the
// earliest deadline a waiter registered. When it fires, the connection
// looks at every frame it holds (Conn.expireDue): those whose deadline
// has passed are expired (their callers get their tokens), and the timer
// is armed again for the earliest deadline still ahead. A waiter whose
// deadline is not earlier than the armed one registers with two atomic
// loads: with the client's CommandTimeout, deadlines grow with time, so
// the timer is armed about once per timeout, not once per command.
//
// Invariant: a frame's deadline is stored before its waiter loads at, and
// the frame is among the connection's (queued, in the FIFO or held by the
// reader) from Submit until it completes. So either the waiter saw at
// <= its deadline, and the fire for at, which stores noAlarm before it
// looks, finds the frame and its deadline, or the waiter armed the timer
// for its deadline itself.
type alarm struct {
	at stamp // the deadline the timer is armed for; noAlarm when none

	mu      sync.Mutex
	t       *time.Timer
	base    time.Time // origin of the stamps (monotonic)
	stopped bool
	// expire expires the frames whose deadline is at or before now and
	// returns the earliest deadline still ahead (noAlarm: none).
	expire func(now int64) (next int64)
}

// stamp is a deadline as nanoseconds since the alarm's base, read from
// the monotonic clock, so that a change of the wall clock reorders nothing.
type stamp = atomic.Int64

const noAlarm = math.MaxInt64

func (a *alarm) init(expire func(now int64) int64) {
	a.base = time.Now()
	a.at.Store(noAlarm)
	a.expire = expire
}

// stamp converts a deadline to the alarm's stamps; deadlines before the
// alarm's start map to 0 or below.
func (a *alarm) stamp(deadline time.Time) int64 { return int64(deadline.Sub(a.base)) }

// now is the current time in the alarm's stamps.
func (a *alarm) now() int64 { return int64(time.Since(a.base)) }

// arm makes the timer fire no later than dl (a stamp). It returns false,
// and arms nothing, when it finds dl already past: the caller gives up at
// once. The clock is read only when the timer must be armed earlier, so
// the common call (dl not earlier than the armed deadline) costs one
// atomic load.
func (a *alarm) arm(dl int64) bool {
	if a.at.Load() <= dl {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped || a.at.Load() <= dl {
		return true
	}
	d := time.Duration(dl - a.now())
	if d <= 0 {
		return false
	}
	a.at.Store(dl)
	if a.t == nil {
		a.t = time.AfterFunc(d, a.fire)
	} else {
		a.t.Reset(d)
	}
	return true
}

// fire disarms, expires the frames whose deadline passed and arms for the
// earliest deadline still ahead.
func (a *alarm) fire() {
	a.mu.Lock()
	a.at.Store(noAlarm)
	a.mu.Unlock()
	if next := a.expire(a.now()); next != noAlarm && !a.arm(next) {
		a.fire() // passed while the frames were looked at
	}
}

// stop disarms the alarm of a dead connection (its frames have all
// completed) for good.
func (a *alarm) stop() {
	a.mu.Lock()
	a.stopped = true
	if a.t != nil {
		a.t.Stop()
	}
	a.mu.Unlock()
}
