package wire

import (
	"context"
	"time"
)

// Backpressure. A connection holds at most maxFrames frames and maxBytes
// bytes of command (Config.MaxPendingFrames, Config.MaxPendingBytes; 0 is
// unlimited), counted from admission by Submit until the frame completes,
// its abandoned reply is drained, or the connection dies.
//
// Admission happens under mu, which Submit takes anyway, so checking and
// reserving cost two atomic loads when there is room; completion only
// subtracts, without a lock, and takes mu only when someone waits. A
// waiter is registered (nwait) before it checks the counters for the last
// time, and completion subtracts before it looks at nwait, so a wake-up is
// never lost: either the waiter sees the room or the completion sees the
// waiter.

// waiter is a Submit waiting for room; the fields are guarded by Conn.mu.
type waiter struct {
	f       *Frame
	size    int64
	ready   chan struct{} // closed when granted
	granted bool          // f was admitted and queued
}

// fitsLocked reports whether a frame of size bytes may be admitted now.
// A frame larger than maxBytes is admitted when nothing else is pending.
func (c *Conn) fitsLocked(size int64) bool {
	if c.maxFrames == 0 && c.maxBytes == 0 {
		return true
	}
	n := c.owed.Load()
	if n == 0 {
		return true
	}
	if c.maxFrames > 0 && n >= c.maxFrames {
		return false
	}
	return c.maxBytes == 0 || c.owedBytes.Load()+size <= c.maxBytes
}

// reserve counts an admitted frame of size bytes; the caller holds mu.
func (c *Conn) reserve(size int64) {
	if c.maxBytes > 0 {
		c.owedBytes.Add(size)
	}
	c.owed.Add(1)
}

// settle uncounts a frame the connection is done with (just before it is
// finished, failed or recycled) and admits waiters that now fit.
func (c *Conn) settle(f *Frame) {
	if c.maxBytes > 0 {
		c.owedBytes.Add(-int64(len(f.Buf)))
	}
	c.owed.Add(-1)
	if c.nwait.Load() != 0 {
		c.mu.Lock()
		c.grantLocked()
		c.mu.Unlock()
	}
}

// grantLocked admits waiters, oldest first, while the oldest fits. It
// queues their frames itself, so frames are written in admission order.
func (c *Conn) grantLocked() {
	for !c.closed && len(c.waiters) > 0 {
		w := c.waiters[0]
		if !c.fitsLocked(w.size) {
			return
		}
		c.admitLocked(w.f, w.size)
		w.granted = true
		close(w.ready)
		c.removeWaiterLocked(0)
	}
}

func (c *Conn) removeWaiterLocked(i int) {
	n := copy(c.waiters[i:], c.waiters[i+1:]) + i
	c.waiters[n] = nil
	c.waiters = c.waiters[:n]
	c.nwait.Add(-1)
}

// awaitRoomLocked waits, with mu held on entry and released on return,
// until f (size bytes) is admitted: then it returns nil and f belongs to
// the connection. Otherwise it returns ctx.Err(), context.DeadlineExceeded
// or, when the connection died, its *ConnError, and f is still the
// caller's.
func (c *Conn) awaitRoomLocked(ctx context.Context, deadline time.Time, f *Frame, size int64) error {
	w := &waiter{f: f, size: size, ready: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.nwait.Add(1)
	c.grantLocked() // completions may have made room before nwait was set
	if w.granted {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	err := w.wait(ctx, deadline, c.stop)
	c.mu.Lock()
	if w.granted {
		c.mu.Unlock()
		return nil // admitted, even if ctx ended at the same moment
	}
	for i, x := range c.waiters {
		if x == w {
			c.removeWaiterLocked(i)
			break
		}
	}
	// An oldest waiter that did not fit may have held back younger ones
	// that do.
	c.grantLocked()
	if c.closed {
		return c.refuseLocked()
	}
	c.mu.Unlock()
	return err
}

// wait blocks until w is granted or stop is closed (nil), or ctx or the
// deadline ends first.
func (w *waiter) wait(ctx context.Context, deadline time.Time, stop <-chan struct{}) error {
	timeout, stopTimer, expired := deadlineTimer(deadline)
	if expired {
		return context.DeadlineExceeded
	}
	defer stopTimer()
	select {
	case <-w.ready:
		return nil
	case <-stop:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return context.DeadlineExceeded
	}
}

// pending returns how many frames the connection holds and the sum of
// their len(Buf) (0 unless maxBytes is set).
func (c *Conn) pending() (frames, bytes int64) {
	return c.owed.Load(), c.owedBytes.Load()
}

// deadlineTimer returns a channel that receives at deadline (nil, never
// receiving, for the zero deadline) and the function that stops its
// timer, or expired when the deadline has passed already.
func deadlineTimer(deadline time.Time) (fire <-chan time.Time, stop func(), expired bool) {
	if deadline.IsZero() {
		return nil, func() {}, false
	}
	d := time.Until(deadline)
	if d <= 0 {
		return nil, nil, true
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }, false
}
