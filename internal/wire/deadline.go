package wire

import (
	"sync"
	"sync/atomic"
	"time"
)

// deadlineGranularity is how much later than its deadline a waiting caller
// may be woken: deadlines are grouped into windows of this width so that
// concurrent calls share one timer instead of arming one each.
const deadlineGranularity = time.Millisecond

// deadlines hands out channels closed when a deadline has passed. Calls
// with the same command timeout get deadlines in the same window and share
// its channel and its one timer, which costs a pointer load instead of a
// timer reset and stop per call. The zero value is ready to use; it is safe
// for concurrent use.
type deadlines struct {
	cur atomic.Pointer[deadlineWindow]
	mu  sync.Mutex
}

// deadlineWindow covers the deadlines in (end-deadlineGranularity, end];
// done is closed at end.
type deadlineWindow struct {
	end  time.Time
	done chan struct{}
}

func (w *deadlineWindow) covers(deadline time.Time) bool {
	return !deadline.After(w.end) && deadline.After(w.end.Add(-deadlineGranularity))
}

// expiry returns a channel closed no earlier than deadline and at most
// deadlineGranularity after it.
func (d *deadlines) expiry(deadline time.Time) <-chan struct{} {
	if w := d.cur.Load(); w != nil && w.covers(deadline) {
		return w.done
	}
	return d.window(deadline)
}

func (d *deadlines) window(deadline time.Time) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w := d.cur.Load(); w != nil && w.covers(deadline) {
		return w.done
	}
	// Round up to the window's end with Add, which keeps the monotonic
	// clock reading (Truncate would drop it).
	end := deadline
	if off := time.Duration(deadline.UnixNano() % int64(deadlineGranularity)); off != 0 {
		end = deadline.Add(deadlineGranularity - off)
	}
	w := &deadlineWindow{end: end, done: make(chan struct{})}
	time.AfterFunc(time.Until(end), func() { close(w.done) })
	d.cur.Store(w)
	return w.done
}
