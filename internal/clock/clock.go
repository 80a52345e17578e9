// Package clock reads the time for deadlines and durations on the command
// path more cheaply than [time.Now].
//
// time.Now reads two clocks, the wall clock and the monotonic one. A
// deadline or a duration needs only the monotonic reading, which is about
// a third cheaper to take (on the project's machine 30 ns against 44 ns).
package clock

import "time"

// base is the origin of every reading: the process's start, with both
// clocks.
var base = time.Now()

// Now returns the current time, as [time.Now] does, from a reading of the
// monotonic clock only: its wall clock part is the process start's plus
// the monotonic time elapsed since, so it ignores changes of the system's
// wall clock made since then. Comparing it with other times and
// subtracting them use the monotonic readings, as for time.Now's results.
// Inside a testing/synctest bubble it follows the bubble's fake clock.
func Now() time.Time {
	return base.Add(time.Since(base))
}

// Stamp returns t as nanoseconds since the process start, the origin of
// [Now]'s readings: stamps of times from Now, from [time.Now] and of a
// context's deadline order and subtract as the times do (inside a
// testing/synctest bubble too, where the bubble's times carry no
// monotonic reading and the process start's wall clock is then used).
func Stamp(t time.Time) int64 { return int64(t.Sub(base)) }

// NowStamp returns the current time as a [Stamp].
func NowStamp() int64 { return int64(time.Since(base)) }
