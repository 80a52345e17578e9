package wire

import (
	"errors"
	"os"
	"time"

	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/resp"
)

func (c *Conn) readLoop() {
	defer c.loopDone()
	for {
		if !c.readOne() {
			return
		}
		if c.syncOK && c.owed.Load() == 0 && c.readerIdle() && !c.park() {
			return
		}
	}
}

// readerIdle reports whether the reader's role holds no frame and no
// buffered byte: it may be parked or passed to a caller.
func (c *Conn) readerIdle() bool {
	return c.cur == nil && c.next == len(c.took) && c.rd.Buffered() == 0
}

// park parks the reader goroutine while the connection owes nothing, so
// that the next caller can read its own reply ([Conn.Do]). It returns
// false when the connection closed. Whoever admits a frame while the
// reader is parked wakes it, and so do shutdown and the health monitor's
// tick (an idle connection is read again, and a server's close seen,
// within a tick).
func (c *Conn) park() bool {
	// The buffers grown for a large reply are not kept while the
	// connection idles (the next read would let go of them only then).
	c.rd.Shrink()
	c.mu.Lock()
	if c.closed || c.owed.Load() != 0 {
		closed := c.closed
		c.mu.Unlock()
		return !closed
	}
	c.reader = readerParked
	c.parkedAt = clock.NowStamp()
	c.mu.Unlock()
	<-c.readWake
	if c.rdDeadline {
		_ = c.nc.SetReadDeadline(time.Time{}) // a caller's, left when it parked the reader
		c.rdDeadline = false
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	return !closed
}

// wakeReaderLocked gives the reader's role back to the reader goroutine
// if it is parked; the caller holds mu.
func (c *Conn) wakeReaderLocked() {
	if c.reader == readerParked {
		c.reader = readerGoroutine
		c.readWake <- struct{}{}
	}
}

// readOne reads one reply and hands it to its frame; false when the
// connection failed (it is shut down) or the read deadline of a caller
// reading its own reply passed (the connection lives on). Only the holder of
// the reader's role calls it.
func (c *Conn) readOne() bool {
	if c.next >= tookKeepMax && c.cur == nil && c.next == len(c.took) && c.rd.Buffered() == 0 {
		// Every frame taken has been answered and the read may block:
		// let go of them (they are back in their pools or with their
		// callers), so that an idle connection keeps few frames alive.
		c.fifoMu.Lock()
		clear(c.took)
		c.took, c.next = c.took[:0], 0
		c.fifoMu.Unlock()
	}
	v, err := c.rd.ReadValue()
	if err != nil {
		if c.held {
			// Only a malformed buffered reply can fail while cur is held.
			c.held = false
			c.cur.state.Store(stateSent)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && c.reader == readerCaller {
			return false
		}
		if errors.Is(err, resp.ErrProtocol) {
			// The malformed reply belongs to the frame being answered,
			// else to the next one waiting; the others only lose
			// their connection.
			if c.cur == nil && c.next == len(c.took) {
				c.takeFIFO()
			}
			c.blamed = c.cur
			if c.blamed == nil && c.next < len(c.took) {
				c.blamed = c.took[c.next]
			}
			c.shutdown(Protocol, err)
		} else {
			c.shutdown(Lost, err)
		}
		return false
	}
	if v.Type == resp.Push && c.proto == 3 {
		if c.onPush != nil {
			c.onPush(v)
		}
		return true
	}
	cur := c.cur
	if cur == nil {
		if c.next == len(c.took) {
			c.takeFIFO()
		}
		if c.next < len(c.took) {
			// took keeps the frame until the next takeFIFO or the
			// release before a blocking read: the alarm looks at took
			// under fifoMu and skips frames it finds done.
			cur = c.took[c.next]
			c.next++
		}
		if cur == nil {
			// Nobody's reply: no frame is blamed.
			c.shutdown(Protocol, errors.New("reply without a pending command"))
			return false
		}
	}
	idx := max(cur.Replies, 1) - cur.pending
	cur.pending--
	last := cur.pending == 0
	if c.held || cur.state.CompareAndSwap(stateSent, stateDecoding) {
		decode(cur, v, idx)
		c.held = false
		switch {
		case last:
			c.settle(cur)
			cur.finish()
		case c.rd.NextBuffered():
			// cur's next reply is in the buffer: it stays in
			// stateDecoding, which saves two atomic operations per
			// reply of a batch. A caller giving up waits for that
			// decode only, never for I/O.
			c.held = true
		default:
			cur.state.Store(stateSent)
		}
	} else if last {
		c.settle(cur)
		cur.drop() // its caller left: every reply drained, the slot is free
	}
	if last {
		cur = nil
	}
	c.cur = cur
	return true
}

// tookKeepMax: the reader lets go of the frames it took and answered
// before a read that may block once there are this many; fewer stay until
// the next takeFIFO. A lock per read would cost connections that few
// callers share about 2% (GET at 8 goroutines, alternating pairs).
const tookKeepMax = 16

// takeFIFO moves every frame of the FIFO to took in one locked step, so
// the reader locks once per batch of replies, not once per reply.
func (c *Conn) takeFIFO() {
	c.fifoMu.Lock()
	clear(c.took)
	c.took = c.fifo.drain(c.took[:0])
	c.fifoMu.Unlock()
	c.next = 0
}

func decode(f *Frame, v resp.Value, idx int) {
	if v.IsError() {
		if !f.IsErr {
			f.IsErr = true
			f.ErrIndex = idx
			f.ErrReply = append(f.ErrReply[:0], v.Str...)
		}
		if f.Want == WantValue && f.Replies > 1 && idx >= f.Prelude {
			var c resp.Value
			c, f.Arena = v.CloneAppend(f.Arena)
			f.Values = append(f.Values, c)
		}
		return
	}
	if idx < f.Prelude {
		return
	}
	f.Null = v.IsNull()
	switch f.Want {
	case WantBytes, WantString:
		switch {
		case f.Null:
		case v.Type.Aggregate():
			f.Value = v.Clone() // unexpected shape: keep it for the caller's error
		case f.Want == WantBytes:
			f.Bytes = append(f.Bytes, v.TextBytes()...)
		default:
			f.Str = string(v.TextBytes())
		}
	case WantInt:
		switch v.Type {
		case resp.Integer, resp.Boolean:
			f.Int = v.Int
		case resp.Null:
		default:
			f.Value = v.Clone() // unexpected shape: keep it for the caller's error
		}
	case WantNone:
		if v.Type != resp.SimpleString && !f.Null {
			f.Value = v.Clone() // unexpected shape: keep it for the caller's error
		}
	case WantValue:
		if f.Replies > 1 {
			var c resp.Value
			c, f.Arena = v.CloneAppend(f.Arena)
			f.Values = append(f.Values, c)
			f.Value = c
			return
		}
		f.Value = v.Clone()
	}
}
