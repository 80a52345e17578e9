package respire

import (
	"time"
)

// health is one member's circuit. Closed, it counts consecutive failed
// probes and opens at the threshold; open, it is not probed until
// openUntil, after which one probe decides: success closes it, failure
// keeps it open for another open duration.
type health struct {
	open      bool
	failures  int       // consecutive failed probes while closed
	openUntil time.Time // open: no probe before this time
	since     time.Time // closed: healthy since this time (the failback grace starts here)
}

// observe applies one probe's result at now and reports whether the
// circuit opened or closed. A success while the circuit must stay open
// (before openUntil) changes nothing.
func (h *health) observe(ok bool, now time.Time, threshold int, openFor time.Duration) bool {
	switch {
	case ok && !h.open:
		h.failures = 0
		return false
	case ok:
		if now.Before(h.openUntil) {
			return false
		}
		*h = health{since: now}
		return true
	case h.open:
		// The probe after the open duration failed: stay open.
		h.openUntil = now.Add(openFor)
		return false
	}
	h.failures++
	if h.failures < threshold {
		return false
	}
	h.open, h.openUntil = true, now.Add(openFor)
	return true
}

// nextProbe returns when the probe after the one that started at last may
// start: an interval later, and never while the circuit must stay open.
func (h *health) nextProbe(last time.Time, interval time.Duration) time.Time {
	next := last.Add(interval)
	if h.open && h.openUntil.After(next) {
		next = h.openUntil
	}
	return next
}

// candidate is what the election knows of one member.
type candidate struct {
	priority int
	healthy  bool
	since    time.Time // healthy since
}

// elect returns the index of the member that should be active, given the
// current active index (-1: none), or -1 when no member is healthy:
//
//  1. a healthy active member stays active unless a member with a lower
//     priority has been healthy for at least grace (failback), in which
//     case the best such member takes over;
//  2. otherwise the healthy member with the lowest priority takes over
//     at once, without grace (failover).
//
// Ties in priority go to the lower index. elect does no I/O and reads no
// clock.
func elect(cs []candidate, active int, now time.Time, grace time.Duration) int {
	better := func(i, j int) bool { // i preferred to j
		return j < 0 || cs[i].priority < cs[j].priority || (cs[i].priority == cs[j].priority && i < j)
	}
	if active >= 0 && active < len(cs) && cs[active].healthy {
		best := active
		for i, c := range cs {
			if c.healthy && c.priority < cs[active].priority && !now.Before(c.since.Add(grace)) && better(i, best) {
				best = i
			}
		}
		return best
	}
	best := -1
	for i, c := range cs {
		if c.healthy && better(i, best) {
			best = i
		}
	}
	return best
}
