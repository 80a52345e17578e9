package wire

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/clock"
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
	at atomic.Int64 // the stamp the timer is armed for; noAlarm when none

	mu      sync.Mutex
	t       *time.Timer
	stopped bool
	// expire expires the frames whose deadline is at or before now and
	// returns the earliest deadline still ahead (noAlarm: none).
	expire func(now int64) (next int64)
}

// A stamp is an instant as nanoseconds since the process started
// ([clock.Stamp]), from the monotonic clock, so that a change of the wall
// clock reorders nothing. Every connection's alarm reads the same stamps:
// a frame's deadline means the same instant to all of them. 0 stands for
// no deadline.
const noAlarm = math.MaxInt64

// toStamp converts a deadline to a stamp, never 0.
func toStamp(deadline time.Time) int64 {
	if s := clock.Stamp(deadline); s != 0 {
		return s
	}
	return 1
}

func (a *alarm) init(expire func(now int64) int64) {
	a.at.Store(noAlarm)
	a.expire = expire
}

// now is the current time as a stamp.
func (a *alarm) now() int64 { return clock.NowStamp() }

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
