package retry

import (
	"math"
	"time"
)

// Ceiling returns the delay ceiling before resend number retry, where 1 is
// the first resend: InitialBackoff, doubling with each further resend,
// capped at MaxBackoff. It is zero when delays are disabled. Retry numbers
// below 1 count as 1; large ones never overflow. Ceiling does not allocate.
func (p Policy) Ceiling(retry int) time.Duration {
	if p.initial <= 0 {
		return 0
	}
	shift := max(retry, 1) - 1
	// initial<<shift > max, computed without overflow.
	if shift >= 63 || p.initial > p.max>>shift {
		return p.max
	}
	return p.initial << shift
}

// Delay returns the delay before resend number retry, given u drawn
// uniformly from [0, 1): a duration uniform in [c*(1-Jitter), c] for
// c = p.Ceiling(retry). With Jitter 0 it is exactly c. A u below 0 (or NaN)
// counts as 0 and a u of 1 or more as 1, so the result always stays in
// range. Delay does not allocate.
func (p Policy) Delay(retry int, u float64) time.Duration {
	c := p.Ceiling(retry)
	if c == 0 || p.jitter == 0 {
		return c
	}
	switch {
	case !(u >= 0): // negative or NaN
		u = 0
	case u > 1:
		u = 1
	}
	// Round the lower bound up so that it never falls below c*(1-Jitter).
	low := min(time.Duration(math.Ceil(float64(c)*(1-p.jitter))), c)
	return low + time.Duration(u*float64(c-low))
}

// Fits reports whether a delay starting at now ends strictly before
// deadline, leaving time to send; a delay ending exactly at the deadline
// does not fit. A zero deadline means none, and everything fits. A negative
// delay counts as zero. Fits does not allocate.
func Fits(now, deadline time.Time, delay time.Duration) bool {
	if deadline.IsZero() {
		return true
	}
	return now.Add(max(delay, 0)).Before(deadline)
}
