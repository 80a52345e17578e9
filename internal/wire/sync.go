package wire

import (
	"context"
	"time"

	"github.com/respire-go/respire/internal/clock"
)

// readerRole says who reads the connection's replies.
type readerRole uint8

const (
	// readerGoroutine: the reader goroutine reads (or is about to).
	readerGoroutine readerRole = iota
	// readerParked: nobody reads; the connection owes nothing.
	readerParked
	// readerCaller: a caller reads its own reply (Do).
	readerCaller
)

// Do submits f and waits for it, as [Conn.Submit] then [Frame.Wait] do. On
// an idle connection (nothing owed, the reader goroutine parked) that few
// callers share, the caller writes its frame and reads its own reply
// itself, as a client with one connection per caller does: no goroutine
// hands the frame over in either direction. deadline then becomes the
// socket's read deadline; when it passes, the reader goroutine takes over
// the reply and the call gives up as Wait does. A blocked read cannot
// watch a context, so a caller whose ctx can be cancelled reads for at
// most Config.OwnReadWait (or until ctx's own deadline): then the reader
// goroutine takes over the reply and the caller waits for it, and for
// ctx, as Wait does. sent reports whether f was admitted: when it is
// false, err is Submit's; otherwise err is Wait's.
func (c *Conn) Do(ctx context.Context, deadline time.Time, f *Frame) (sent bool, err error) {
	// owed is read without the lock first: a connection that owes
	// replies is not idle, and its callers (many, when it is busy) skip
	// the second acquisition of mu that beginSync would cost them.
	if c.syncOK && len(f.Buf) > 0 && c.owed.Load() == 0 {
		own := deadline
		if ctx.Done() != nil {
			own = ownReadDeadline(ctx, deadline, c.ownWait)
		}
		if c.beginSync(f) {
			c.exchange(f, own)
			if f.state.Load() == stateDone {
				<-f.done // completed: no timer needed
				return true, nil
			}
			return true, f.Wait(ctx, deadline)
		}
	}
	if err := c.Submit(ctx, deadline, f); err != nil {
		return false, err
	}
	return true, f.Wait(ctx, deadline)
}

// DefaultCloseCheckAfter is the default [Config.CloseCheckAfter]: a
// caller that reads its own reply on a connection nobody has read for
// this long first checks whether the server closed it. A server's close
// in the shorter gap between one reply and the next caller's write is a
// race that the reader goroutine would mostly lose as well.
const DefaultCloseCheckAfter = time.Millisecond

// DefaultOwnReadWait is the default [Config.OwnReadWait]: a reply of an
// idle server takes tens of microseconds, so nearly every caller reads
// its own, and a caller whose context ends sees it within a millisecond.
const DefaultOwnReadWait = time.Millisecond

// ownReadDeadline is the read deadline of a caller with a cancellable ctx
// reading its own reply: wait from now, or deadline or ctx's deadline
// when earlier.
func ownReadDeadline(ctx context.Context, deadline time.Time, wait time.Duration) time.Time {
	own := clock.Now().Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(own) {
		own = d
	}
	if !deadline.IsZero() && deadline.Before(own) {
		own = deadline
	}
	return own
}

// beginSync takes the writer's and the reader's roles for f when the
// connection is idle and few callers share it (see Submit), and admits f.
func (c *Conn) beginSync(f *Frame) bool {
	c.mu.Lock()
	if c.closed || c.writing || c.reader != readerParked || len(c.waiters) > 0 || c.owed.Load() != 0 || c.peakOwed > ownWriteMaxPeak {
		c.mu.Unlock()
		return false
	}
	c.reserve(int64(len(f.Buf)))
	c.writing = true
	c.reader = readerCaller
	c.mu.Unlock()
	f.bytesBase = len(f.Bytes)
	f.alarm = &c.alarm
	return true
}

// exchange writes f and reads replies until f's last one, holding the
// reader's role, then hands the role back: parked when nothing is owed,
// else to the reader goroutine (which also exits when the connection
// failed meanwhile).
func (c *Conn) exchange(f *Frame, deadline time.Time) {
	if !deadline.IsZero() || c.rdDeadline {
		// A deadline left by an earlier exchange is replaced (or cleared):
		// the reader goroutine clears it only when it takes over.
		_ = c.nc.SetReadDeadline(deadline)
		c.rdDeadline = !deadline.IsZero()
	}
	// Nobody has read the socket since the connection went idle: a close
	// by the server meanwhile (a restart, CLIENT KILL, its idle timeout)
	// is seen now, before f is written, so that f fails as never sent
	// rather than as possibly executed. The check costs a system call
	// (about 1.5 µs here); a caller that follows the last reply closely,
	// as a loop of calls does, skips it.
	var closed error
	if clock.NowStamp()-c.parkedAt >= c.checkAfter {
		closed = c.nc.peerClosed()
	}
	c.writeOwn(f, closed)
	for f.state.Load() != stateDone && c.readOne() {
	}
	c.rd.Shrink() // a large reply's buffers are not kept while idle
	c.mu.Lock()
	if !c.closed && c.owed.Load() == 0 && c.readerIdle() {
		c.reader = readerParked
		c.parkedAt = clock.NowStamp()
	} else {
		c.reader = readerGoroutine
		c.readWake <- struct{}{}
	}
	c.mu.Unlock()
}

// resumeReader gives an idle connection's reads back to the reader
// goroutine (the health monitor's tick), so that a close or a push from
// the server is seen while no caller reads.
func (c *Conn) resumeReader() {
	c.mu.Lock()
	c.wakeReaderLocked()
	c.mu.Unlock()
}
