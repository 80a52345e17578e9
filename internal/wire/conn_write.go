package wire

import (
	"errors"
	"runtime"
)

// maxRetainedWriteBuf bounds the write buffer the writer keeps between
// batches: large enough for 512 callers' 4 KiB commands, so a busy
// connection does not allocate a new buffer per batch.
const maxRetainedWriteBuf = 4 << 20

// ownWriteMaxPeak: on a connection whose recent peak of frames owed is at
// most this, a caller that finds the writer idle writes its own frame even
// while others' replies are owed. With few callers, waiting for the writer
// goroutine to gather a batch makes them travel in waves of one round trip
// each (GET at 8 goroutines: 0.26 writes per command, 0.85 of rueidis);
// writing at once keeps commands in flight continuously (0.82 writes per
// command, 0.96-1.04 of rueidis), while a connection shared by more callers
// keeps its batching (at 64 and 512 goroutines the peak stays far above).
const ownWriteMaxPeak = 8

// writeOwn writes f, admitted and counted, on the caller's goroutine,
// without waiting for the socket. The caller holds the writer's role
// (writing was false and it set it), so it owns seq, firstLost, rest and
// the socket's write side until it hands the role back: to nobody when the
// write completed and nothing was queued meanwhile, else to the writer
// goroutine, which writes what the socket did not accept, then the queue,
// and exits when the connection closed (shutdown does not wake a busy
// writer). A non-nil closed is the connection's failure, known before
// the write: f is not written and fails as unwritten.
func (c *Conn) writeOwn(f *Frame, closed error) {
	f.pending = max(f.Replies, 1)
	f.state.Store(stateSent)
	seq := c.seq
	c.seq++
	c.fifoMu.Lock()
	f.seq = seq
	c.fifo.push(f)
	c.fifoMu.Unlock()
	// The reader may complete f once its last byte is written (or before,
	// if the server misbehaves); nothing of f is touched after the write.
	buf, replies := f.Buf, f.Replies
	w, err := 0, closed
	if err == nil {
		w, err = c.nc.tryWrite(buf)
	}
	switch {
	case err != nil:
		c.markLost(seq, []int{len(buf)}, []int{replies}, w, err)
	case w < len(buf):
		rest := buf[w:]
		if cap(buf) <= maxRetainedBuf {
			// A server that answers f before receiving all of it hands
			// f back to its caller, and a buffer this small goes back to
			// the frame pool with it, to carry another command: the rest
			// is copied, so that those bytes never reach the socket in
			// its place. A larger buffer is never reused (recycle drops
			// it). This runs only when the socket's buffer is full.
			c.restBuf = append(c.restBuf[:0], rest...)
			rest = c.restBuf
		}
		c.rest = restWrite{rest: rest, off: w, size: len(buf), seq: seq, replies: replies}
	}
	c.mu.Lock()
	if c.closed || len(c.queue) > 0 || c.rest.rest != nil {
		c.wake <- struct{}{} // writing stays true: the writer goroutine takes over
	} else {
		c.writing = false
	}
	c.mu.Unlock()
}

// restWrite is the part of a caller's own write that the socket did not
// accept at once; the writer goroutine writes it before anything else.
type restWrite struct {
	rest    []byte // the bytes not yet written (nil: none)
	off     int    // bytes of the frame already written
	size    int    // the frame's len(Buf)
	seq     uint64 // the frame's sequence
	replies int    // the frame's Replies
}

// writeRest writes the rest of a caller's own write, if any; false when
// the connection failed.
func (c *Conn) writeRest() bool {
	r := c.rest
	if r.rest == nil {
		return true
	}
	c.rest = restWrite{}
	w, err := c.nc.Write(r.rest)
	if err != nil || w < len(r.rest) {
		c.markLost(r.seq, []int{r.size}, []int{r.replies}, r.off+w, err)
		return false
	}
	return true
}

// markLost records which frames of a failed write never reached the server
// whole (first is the sequence of the write's first frame, ends the end
// offsets of its frames and replies their Replies, w the bytes accepted),
// then shuts the connection down. Only the writer's role calls it.
func (c *Conn) markLost(first uint64, ends, replies []int, w int, err error) {
	// Frames whose last byte was not accepted never reached the server
	// whole; the server ignores an incomplete frame on a connection that
	// is now closed.
	c.firstLost = c.seq
	for i, end := range ends {
		if end > w {
			c.firstLost = first + uint64(i)
			// A frame of several commands cut after its first byte may
			// have had whole commands before the cut executed: only its
			// untouched successors are definitely unwritten.
			start := 0
			if i > 0 {
				start = ends[i-1]
			}
			if w > start && replies[i] > 1 {
				c.firstLost++
			}
			break
		}
	}
	if err == nil {
		err = errors.New("short write")
	}
	if peerClosed(err) {
		// The server closed the connection: what it sent before, such as
		// its error reply to a bulk over proto-max-bulk-len, is still
		// readable, and belongs to frames written. Nothing more is
		// written; the reader reads to the end and shuts the connection
		// down.
		c.stopWriting(err)
		return
	}
	c.shutdown(Lost, err)
}

func (c *Conn) writeLoop() {
	defer c.loopDone()
	var buf []byte
	var ends []int
	var batchReplies []int // Replies of each frame in buf, read before it is written
	var left []*Frame      // frames of a batch whose callers left before it was written
	var parts []writePart  // the batch's bytes in order: buf's and large frames'
	var large [][]byte     // the Bufs of the batch's large frames, taken before any write
	for range c.wake {
		if !c.writeRest() {
			return
		}
		for {
			// Let callers that were just woken (by replies) queue their
			// next frames first: one write then carries many frames, which
			// saves a system call per command on both sides.
			runtime.Gosched()
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				return
			}
			batch := c.queue
			if len(batch) == 0 {
				c.writing = false
				c.mu.Unlock()
				break
			}
			c.queue = c.spare[:0]
			// The batch moves from the queue to the FIFO under fifoMu,
			// taken before mu is released: the alarm, which looks at both
			// under both locks, never misses a frame in between.
			c.fifoMu.Lock()
			c.mu.Unlock()

			first := c.seq
			n := 0
			for _, f := range batch {
				if !f.state.CompareAndSwap(stateQueued, stateSent) {
					// Left before it was written: never sent. It is
					// dropped once the locks are released.
					left = append(left, f)
					continue
				}
				f.seq = c.seq
				c.seq++
				c.fifo.push(f)
				batch[n] = f
				n++
			}
			c.fifoMu.Unlock()
			for _, f := range left {
				c.settle(f)
				f.drop()
			}
			clear(left)
			left = left[:0]
			buf, ends, batchReplies, parts = buf[:0], ends[:0], batchReplies[:0], parts[:0]
			total, from := 0, 0
			for _, f := range batch[:n] {
				if len(f.Buf) > largeFrame {
					// Written from its own buffer, which no other frame
					// reuses (recycle drops it), rather than copied; its
					// slice is taken now, before any write.
					parts = append(parts, writePart{start: from, end: len(buf), large: -1}, writePart{large: len(large)})
					large = append(large, f.Buf)
					from = len(buf)
				} else {
					buf = append(buf, f.Buf...)
				}
				total += len(f.Buf)
				ends = append(ends, total)
				batchReplies = append(batchReplies, f.Replies)
			}
			clear(batch)
			c.spare = batch[:0]
			if n == 0 {
				continue
			}
			var w int
			var err error
			if len(large) == 0 {
				w, err = c.nc.Write(buf)
			} else {
				parts = append(parts, writePart{start: from, end: len(buf), large: -1})
				w, err = c.writeParts(buf, parts, large)
				clear(large)
				large = large[:0]
			}
			if err != nil || w < total {
				c.markLost(first, ends, batchReplies, w, err)
				return
			}
			if cap(buf) > maxRetainedWriteBuf {
				buf = nil
			}
		}
	}
}

// largeFrame: the writer goroutine writes a frame longer than this from
// the frame's own buffer instead of copying it into its batch's.
const largeFrame = 1 << 20

// writePart is a part of a batch's bytes, in the order they are written:
// large[large], a large frame's buffer, or, when large is -1,
// buf[start:end], the small frames between two large ones.
type writePart struct {
	start, end int
	large      int
}

// writeParts writes the parts of a batch of small frames (copied into
// buf) and large ones, in order; it returns the bytes written, and stops
// at the first part not written whole.
func (c *Conn) writeParts(buf []byte, parts []writePart, large [][]byte) (int, error) {
	written := 0
	for _, p := range parts {
		b := buf[p.start:p.end]
		if p.large >= 0 {
			b = large[p.large]
		}
		if len(b) == 0 {
			continue
		}
		w, err := c.nc.Write(b)
		written += w
		if err != nil || w < len(b) {
			return written, err
		}
	}
	return written, nil
}
