package wire

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/resp"
)

// Reason says why a connection failed a frame.
type Reason uint8

const (
	// Lost means the connection broke (I/O error, EOF, reset).
	Lost Reason = iota + 1
	// Protocol means the server sent malformed or oversized data in reply
	// to this frame; the connection was reset. Never retried. Only the
	// frame whose reply was being read gets it: the other frames of the
	// reset connection fail as Lost, with their own evidence.
	Protocol
	// Closed means the client closed the connection or endpoint.
	Closed
	// DialFailed means no connection could be established; nothing was sent.
	DialFailed
	// Handshake means the connection could not be prepared (HELLO, AUTH,
	// SELECT, CLIENT SETNAME failed); Cause says why.
	Handshake
)

// ConnError is the failure of a frame that did not get its reply. Evidence
// is a fact recorded by the writer, not derived from Cause.
type ConnError struct {
	Reason   Reason
	Evidence Evidence
	Cause    error
}

// Error describes the reason, the evidence and the cause.
func (e *ConnError) Error() string {
	var s string
	switch e.Reason {
	case Protocol:
		s = "connection reset after a protocol error"
	case Closed:
		s = "connection closed"
	case DialFailed:
		s = "could not connect"
	case Handshake:
		s = "connection handshake failed"
	default:
		s = "connection lost"
	}
	s += " (" + e.Evidence.String() + ")"
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Cause }

// maxRetainedWriteBuf bounds the write buffer the writer keeps between
// batches: large enough for 512 callers' 4 KiB commands, so a busy
// connection does not allocate a new buffer per batch.
const maxRetainedWriteBuf = 4 << 20

// ErrEmptyFrame is the cause of a refused frame with no command bytes.
var ErrEmptyFrame = errors.New("frame has no command bytes")

// ErrClosed is the cause of frames failed because the client closed.
var ErrClosed = errors.New("connection closed by the client")

// Conn is one established, multiplexed connection. It is safe for
// concurrent use. Once dead it never comes back; an [Endpoint] replaces it.
type Conn struct {
	nc    *meteredConn
	id    int64 // the server's id of the connection, or 0
	rd    *resp.Reader
	proto int

	mu      sync.Mutex
	queue   []*Frame // submitted, not yet taken by the writer
	spare   []*Frame
	closed  bool  // no more submissions
	cause   error // why it closed
	reason  Reason
	wake    chan struct{}
	writing bool          // the writer goroutine is busy or awake
	waiters []*waiter     // Submits waiting for room, oldest first
	stop    chan struct{} // closed by shutdown
	// idleHeld: the idle PING is not sent (see HoldIdlePing).
	idleHeld bool

	// owed counts the frames the connection holds: admitted by Submit and
	// not yet completed (queued, in the FIFO, partially answered, and
	// abandoned ones until their reply is drained or the connection dies).
	// Increments happen under mu; decrements anywhere.
	owed atomic.Int64
	// owedBytes is the sum of len(Buf) of the owed frames; kept only when
	// maxBytes is set.
	owedBytes atomic.Int64
	// nwait mirrors len(waiters), so that completing a frame looks for
	// waiters without taking mu.
	nwait               atomic.Int32
	maxFrames, maxBytes int64 // 0: unlimited
	peakOwed            int64 // guarded by mu: see Submit and ownWriteMaxPeak

	fifoMu sync.Mutex
	fifo   ring

	// alarm wakes the frames' callers whose deadlines pass (Frame.Wait).
	alarm alarm

	seq       uint64    // writer-owned: sequence of the next frame pushed to the FIFO
	firstLost uint64    // writer-owned: first sequence whose last byte was not accepted (0: none)
	rest      restWrite // writer-owned: what a caller's own write left unwritten
	restBuf   []byte    // writer-owned: holds rest.rest when copied (see writeOwn)

	// The reader's role: the reader goroutine, or a caller reading its
	// own reply ([Conn.Do]), holds it; these fields belong to its holder.
	// cur is the frame popped from the FIFO that has received some but
	// not all of its replies; took[next:] are frames moved out of the
	// FIFO that got no reply yet; blamed is the frame whose reply was
	// malformed, the only one that fails with Reason Protocol (nil: none).
	cur    *Frame
	held   bool // cur stays in stateDecoding: its next reply is buffered
	took   []*Frame
	next   int
	blamed *Frame
	// rdDeadline: a caller's read deadline is still set on the socket.
	rdDeadline bool

	// reader says who holds the reader's role; guarded by mu.
	reader   readerRole
	readWake chan struct{} // wakes the parked reader goroutine
	// parkedAt is when the reader's role was last parked (a clock.NowStamp
	// reading), set under mu by whoever parked it: the next caller that
	// reads its own reply checks for the server's close first when the
	// connection sat unread for long (see [Conn.exchange]).
	parkedAt int64
	// syncOK: callers may read their own replies (the connection has a
	// non-blocking write, no push handler and a health monitor, and not
	// Config.NoOwnRead).
	syncOK bool
	// ownWait is Config.OwnReadWait, or its default.
	ownWait time.Duration
	// checkAfter is Config.CloseCheckAfter, or its default, in
	// nanoseconds.
	checkAfter int64

	loops  atomic.Int32
	dead   chan struct{} // closed after cleanup: every frame has completed
	alive  atomic.Bool
	onPush func(resp.Value)
	onLost func() // Config.OnTrackingLost of a tracking connection
	onDead func(*Conn)
	cfg    *Config // for events; nil when there is no OnEvent
}

// ID returns the server's id of the connection (CLIENT ID), learned during
// the handshake from HELLO or, with Config.WantID, CLIENT ID; 0 when
// unknown.
func (c *Conn) ID() int64 { return c.id }

// Proto returns the negotiated protocol version, 2 or 3.
func (c *Conn) Proto() int { return c.proto }

// Alive reports whether the connection accepts frames.
func (c *Conn) Alive() bool { return c.alive.Load() }

// Dead returns a channel closed once the connection has died and failed
// every frame it held.
func (c *Conn) Dead() <-chan struct{} { return c.dead }

// start launches the writer and reader loops, and the health monitor when
// cfg asks for one, on an established, prepared connection whose reads
// go through nc (rd reads from nc).
func start(nc *meteredConn, rd *resp.Reader, proto int, cfg Config, onDead func(*Conn)) *Conn {
	c := &Conn{
		nc: nc, rd: rd, proto: proto,
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		dead:      make(chan struct{}),
		onPush:    cfg.OnPush,
		onLost:    cfg.OnTrackingLost,
		onDead:    onDead,
		seq:       1,
		maxFrames: int64(max(cfg.MaxPendingFrames, 0)),
		maxBytes:  int64(max(cfg.MaxPendingBytes, 0)),
	}
	if cfg.OnEvent != nil {
		c.cfg = &cfg
	}
	c.alarm.init(c.expireDue)
	c.alive.Store(true)
	monitor := cfg.HealthTimeout > 0 || cfg.IdlePing > 0
	// A caller reading its own reply needs a write that never blocks it,
	// no push handler waiting for pushes while nobody reads, and the
	// monitor's tick, which gives an idle connection back to the reader
	// goroutine (so a server's close is seen before the next command).
	c.syncOK = nc.canTryWrite() && c.onPush == nil && monitor && !cfg.NoOwnRead
	c.ownWait = cfg.OwnReadWait
	if c.ownWait <= 0 {
		c.ownWait = DefaultOwnReadWait
	}
	c.checkAfter = int64(cfg.CloseCheckAfter)
	if c.checkAfter == 0 {
		c.checkAfter = int64(DefaultCloseCheckAfter)
	}
	c.readWake = make(chan struct{}, 1)
	loops := int32(2)
	if monitor {
		loops++
	}
	c.loops.Store(loops)
	go c.writeLoop()
	go c.readLoop()
	if monitor {
		go c.healthLoop(cfg)
	}
	return c
}

// Submit queues f for writing. When the connection already holds
// Config.MaxPendingFrames frames or Config.MaxPendingBytes bytes, it first
// waits for room, until ctx is done or deadline passes (a zero deadline
// adds no limit beyond ctx); then it returns ctx.Err() or
// context.DeadlineExceeded, nothing was written and the frame is still
// owned by the caller. Waiters are admitted oldest first. A frame larger
// than MaxPendingBytes is admitted when nothing else is pending. When the
// connection no longer accepts frames (or dies while Submit waits) it
// returns a *ConnError with Evidence Unwritten and the frame is still
// owned by the caller. On success the frame belongs to the connection
// until [Frame.Wait] returns.
func (c *Conn) Submit(ctx context.Context, deadline time.Time, f *Frame) error {
	if len(f.Buf) == 0 {
		// An empty frame would take a FIFO slot without a reply.
		return &ConnError{Reason: Protocol, Evidence: Unwritten, Cause: ErrEmptyFrame}
	}
	size := int64(len(f.Buf))
	f.bytesBase = len(f.Bytes)
	f.alarm = &c.alarm
	c.mu.Lock()
	if c.closed {
		return c.refuseLocked()
	}
	if len(c.waiters) == 0 && c.fitsLocked(size) {
		owed := c.owed.Load()
		// peakOwed follows the most frames owed at an admission and decays
		// by a 64th of its excess per admission: a connection that few
		// callers share keeps it low.
		if owed >= c.peakOwed {
			c.peakOwed = owed
		} else {
			c.peakOwed -= (c.peakOwed - owed + 63) >> 6
		}
		if !c.writing && (owed == 0 || c.peakOwed <= ownWriteMaxPeak) && c.nc.canTryWrite() {
			// Nobody is writing and nothing is queued, and either nothing
			// is owed or few callers share the connection: the caller
			// writes its own frame, which saves waking the writer
			// goroutine. While many frames are in flight the writer
			// goroutine gathers the next callers' frames into one write
			// instead.
			c.reserve(size)
			c.writing = true
			c.wakeReaderLocked()
			c.mu.Unlock()
			c.writeOwn(f, nil)
			return nil
		}
		c.admitLocked(f, size)
		c.mu.Unlock()
		return nil
	}
	return c.awaitRoomLocked(ctx, deadline, f, size)
}

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
	c.shutdown(Lost, err)
}

// refusal is the error of a frame submitted to c now that it is closed.
func (c *Conn) refusal() error {
	c.mu.Lock()
	return c.refuseLocked()
}

// refuseLocked unlocks mu and returns the error of a frame refused by a
// dead connection.
func (c *Conn) refuseLocked() error {
	reason, cause := c.reason, c.cause
	c.mu.Unlock()
	if reason == Protocol {
		reason = Lost // the malformed reply was not this frame's
	}
	return &ConnError{Reason: reason, Evidence: Unwritten, Cause: cause}
}

// admitLocked counts f (size bytes) as pending and queues it for the
// writer, waking it if it sleeps. The wake-up never blocks: a token is
// sent only when writing turns true, and the writer takes it before it
// turns writing false again.
func (c *Conn) admitLocked(f *Frame, size int64) {
	c.reserve(size)
	f.pending = max(f.Replies, 1)
	f.state.Store(stateQueued)
	c.queue = append(c.queue, f)
	c.wakeReaderLocked()
	if !c.writing {
		c.writing = true
		c.wake <- struct{}{}
	}
}

// Close closes the connection; frames still pending fail with ErrClosed.
// It returns after every frame has completed and every goroutine of the
// connection (its health monitor and probe included) has exited.
func (c *Conn) Close() error {
	c.shutdown(Closed, ErrClosed)
	<-c.dead
	return nil
}

// Retire closes the connection because the topology no longer routes to
// its server: unlike Close, its frames fail as Lost, with their own
// write evidence and the given cause, so that a retry policy may send
// them elsewhere. It returns as Close does.
func (c *Conn) Retire(cause error) {
	c.shutdown(Lost, cause)
	<-c.dead
}

// shutdown stops submissions, wakes waiting Submits and the health
// monitor, and closes the socket so every loop exits.
func (c *Conn) shutdown(reason Reason, cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed, c.reason, c.cause = true, reason, cause
	c.alive.Store(false)
	close(c.stop) // waiting Submits and the health monitor leave
	idle := !c.writing
	c.writing = true
	c.wakeReaderLocked()
	c.mu.Unlock()
	_ = c.nc.Close()
	if idle {
		c.wake <- struct{}{}
	}
	if c.onLost != nil {
		c.onLost()
	}
}

func (c *Conn) writeLoop() {
	defer c.loopDone()
	var buf []byte
	var ends []int
	var batchReplies []int // Replies of each frame in buf, read before it is written
	var left []*Frame      // frames of a batch whose callers left before it was written
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
			buf, ends, batchReplies = buf[:0], ends[:0], batchReplies[:0]
			for _, f := range batch[:n] {
				buf = append(buf, f.Buf...)
				ends = append(ends, len(buf))
				batchReplies = append(batchReplies, f.Replies)
			}
			clear(batch)
			c.spare = batch[:0]
			if n == 0 {
				continue
			}
			w, err := c.nc.Write(buf)
			if err != nil || w < len(buf) {
				c.markLost(first, ends, batchReplies, w, err)
				return
			}
			if cap(buf) > maxRetainedWriteBuf {
				buf = nil
			}
		}
	}
}

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

// expireDue is the alarm's look at the connection's frames (see alarm):
// every frame queued, in the FIFO or held by the reader whose deadline is
// at or before now is expired, and its caller gets its token. It returns
// the earliest deadline still ahead, or noAlarm. The frames held by the
// reader include some it has finished with, and a finished frame may
// already serve another call: expiring compares and swaps the whole state
// word the deadline was read with, generation included, so only the use
// that registered the deadline can be expired (see frameState).
func (c *Conn) expireDue(now int64) (next int64) {
	next = noAlarm
	var due []*Frame
	look := func(f *Frame) {
		w := f.state.w.Load()
		if s := w & stateMask; s != stateQueued && s != stateSent {
			return
		}
		// Read after the state word: the deadline of a later use of the
		// frame comes with a new generation, and the swap fails. A frame
		// that this connection finished with and that was sent again
		// (Reset) on another one is seen with its current state and
		// deadline: stamps mean the same instant on every connection, so
		// expiring it here when it is due ends its wait on time, as its
		// own connection's alarm would.
		dl := f.deadline.Load()
		switch {
		case dl == 0:
		case dl > now:
			next = min(next, dl)
		case f.state.w.CompareAndSwap(w, w&^stateMask|stateExpired):
			due = append(due, f)
		}
	}
	c.mu.Lock()
	c.fifoMu.Lock()
	for _, f := range c.queue {
		look(f)
	}
	c.fifo.each(look)
	for _, f := range c.took {
		look(f)
	}
	c.fifoMu.Unlock()
	c.mu.Unlock()
	for _, f := range due {
		f.done <- struct{}{} // the only token of this use: it never blocks
	}
	return next
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
	case WantBytes:
		switch {
		case f.Null:
		case v.Type.Aggregate():
			f.Value = v.Clone() // unexpected shape: keep it for the caller's error
		default:
			f.Bytes = append(f.Bytes, v.TextBytes()...)
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

// evidence is the final write evidence of a frame that was pushed to the
// FIFO and got no reply: only frames at or after the writer's first lost
// sequence number never reached the server.
func (c *Conn) evidence(f *Frame) Evidence {
	if c.firstLost != 0 && f.seq >= c.firstLost {
		return Unwritten
	}
	return PossiblyExecuted
}

// loopDone runs cleanup once every loop has exited: no frame can move any
// more, so the evidence of each remaining frame is final.
func (c *Conn) loopDone() {
	if c.loops.Add(-1) != 0 {
		return
	}
	c.mu.Lock()
	reason, cause := c.reason, c.cause
	queued := c.queue
	c.queue = nil
	c.mu.Unlock()
	// fail settles f and fails it; only the blamed frame keeps Protocol.
	fail := func(f *Frame, ev Evidence) {
		r := lostReason(reason)
		if r == Protocol && f != c.blamed {
			r = Lost
		}
		c.settle(f)
		f.fail(&ConnError{Reason: r, Evidence: ev, Cause: cause})
	}
	for _, f := range queued {
		fail(f, Unwritten)
	}
	if f := c.cur; f != nil {
		// Some of its replies arrived: it reached the server.
		c.cur = nil
		fail(f, PossiblyExecuted)
	}
	c.fifoMu.Lock() // the alarm may be looking at took
	owed := c.took[c.next:]
	c.took = nil
	rest := c.fifo.drain(nil)
	c.fifoMu.Unlock()
	for _, f := range owed {
		fail(f, c.evidence(f))
	}
	for _, f := range rest {
		fail(f, c.evidence(f))
	}
	c.blamed = nil
	if c.cfg != nil {
		c.cfg.emit(Event{Kind: EventClosed, Reason: lostReason(reason), Err: cause})
	}
	// onDead runs before dead is closed so that Close, which waits for
	// dead, returns only after the callback (and no goroutine of the
	// connection is left running).
	c.alarm.stop()
	if c.onDead != nil {
		c.onDead(c)
	}
	close(c.dead)
}

func lostReason(r Reason) Reason {
	if r == 0 {
		return Lost
	}
	return r
}

// ring is a FIFO of frames.
type ring struct {
	buf        []*Frame
	head, size int
}

func (r *ring) push(f *Frame) {
	if r.size == len(r.buf) {
		nb := make([]*Frame, max(16, 2*len(r.buf)))
		for i := 0; i < r.size; i++ {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = f
	r.size++
}

// drain appends every frame, oldest first, to dst and empties the ring.
func (r *ring) drain(dst []*Frame) []*Frame {
	for f := r.pop(); f != nil; f = r.pop() {
		dst = append(dst, f)
	}
	return dst
}

// each calls fn for every frame, oldest first.
func (r *ring) each(fn func(*Frame)) {
	for i := 0; i < r.size; i++ {
		fn(r.buf[(r.head+i)%len(r.buf)])
	}
}

func (r *ring) pop() *Frame {
	if r.size == 0 {
		return nil
	}
	f := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return f
}
