package wire

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// alarm wakes the callers waiting on one connection's frames when a
// deadline may have passed, with one timer for the connection instead of
// one per call. The timer is armed for the earliest deadline a waiter
// registered; when it fires, the alarm's channel is closed (every waiter
// wakes and compares its own deadline with the clock) and replaced, and
// the waiters whose deadlines lie ahead register again. A waiter whose
// deadline is not earlier than the armed one registers with two atomic
// loads: with the client's CommandTimeout, deadlines grow with time, so
// the timer is armed about once per timeout, not once per command.
//
// Invariant: whenever at holds a deadline, the timer is armed for it (both
// change under mu), and a fire closes the channel current at that moment.
// So a waiter that loaded the channel before it saw at <= its deadline is
// woken at or before its deadline.
//
// The channel is sharded: waiters select on one of alarmShards channels,
// picked by their frame, because a channel that every caller selects on
// is a lock every caller takes twice per call.
type alarm struct {
	at  stamp // the deadline the timer is armed for; noAlarm when none
	chs [alarmShards]atomic.Pointer[chan struct{}]

	mu      sync.Mutex
	t       *time.Timer
	base    time.Time // origin of the stamps (monotonic)
	stopped bool
}

// stamp is a deadline as nanoseconds since the alarm's base, read from
// the monotonic clock, so that a change of the wall clock reorders nothing.
type stamp = atomic.Int64

const (
	noAlarm     = math.MaxInt64
	alarmShards = 32
)

func (a *alarm) init() {
	a.base = time.Now()
	a.at.Store(noAlarm)
	for i := range a.chs {
		ch := make(chan struct{})
		a.chs[i].Store(&ch)
	}
}

// watch returns the channel that is closed no later than deadline (not
// zero) passes; it may be closed earlier, for another waiter's deadline,
// and then the caller checks the clock and watches again.
// shard (any number) picks the channel.
func (a *alarm) watch(deadline time.Time, shard uint32) <-chan struct{} {
	sh := &a.chs[shard%alarmShards]
	ch := sh.Load() // before at: a fire between the two is then seen
	dl := int64(deadline.Sub(a.base))
	if a.at.Load() <= dl {
		return *ch
	}
	a.mu.Lock()
	if !a.stopped && a.at.Load() > dl {
		a.at.Store(dl)
		d := time.Until(deadline)
		if a.t == nil {
			a.t = time.AfterFunc(d, a.fire)
		} else {
			a.t.Reset(d)
		}
	}
	ch = sh.Load()
	a.mu.Unlock()
	return *ch
}

// fire wakes every waiter and disarms: the ones still waiting arm again.
func (a *alarm) fire() {
	var old [alarmShards]*chan struct{}
	a.mu.Lock()
	a.at.Store(noAlarm)
	for i := range a.chs {
		ch := make(chan struct{})
		old[i] = a.chs[i].Swap(&ch)
	}
	a.mu.Unlock()
	for _, ch := range old {
		close(*ch)
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
