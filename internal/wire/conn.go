package wire

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

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
	// Addr is the server a dial or handshake failed with, when known.
	Addr string
}

// Error describes the reason, the evidence (but for a connection that was
// never made, whose frames are always unwritten) and the cause.
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
	if e.Reason != DialFailed && e.Reason != Handshake {
		s += " (" + e.Evidence.String() + ")"
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Cause }

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
	// draining: closed by stopWriting, the socket still open for the
	// reader.
	draining bool

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
	// crowdPeak is a slower peakOwed, in 1/64 frames (guarded by mu): it
	// follows the most frames owed at an admission and decays by a 256th
	// of its excess per admission, so that a connection shared by more
	// than a few callers keeps it high between the bursts of its replies.
	crowdPeak int64
	// crowd is the client's sum of its connections' crowdPeak
	// (Config.Crowd; nil: none), to which this connection adds crowdShare
	// (guarded by mu; see shareLocked).
	crowd      *Crowd
	crowdShare int64
	// used is set by [Endpoint.For] when it gives a caller this solo
	// lane's connection, and cleared by the health monitor's tick;
	// idling is set by closeIdle (see there).
	used, idling atomic.Bool

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
		crowd:     cfg.Crowd,
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
		if o := owed << 6; o >= c.crowdPeak {
			c.crowdPeak = o
		} else {
			c.crowdPeak -= (c.crowdPeak - o) >> 8
		}
		c.shareLocked(false)
		if !c.writing && c.peakOwed <= ownWriteMaxPeak && c.nc.canTryWrite() {
			// Nobody is writing and nothing is queued, and few callers
			// share the connection: the caller writes its own frame,
			// which saves waking the writer goroutine. While many share
			// it, the writer goroutine gathers the next callers' frames
			// into one write instead, even when nothing is owed: when
			// the replies of many callers drain the connection, the
			// first of them to come back would otherwise write alone,
			// ahead of the others (GET at 64 goroutines: 0.085 writes
			// per command against 0.067, and 7% more client CPU).
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
func (c *Conn) shutdown(reason Reason, cause error) { c.close(reason, cause, true) }

// stopWriting is shutdown for the writer's role when the server closed
// the connection during a write, but for the socket: it stays open for
// the reader, which reads what the server sent before it closed, then
// fails (EOF or reset) and shuts the connection down, closing it (Close
// and Retire close it too). A peer that sends nothing more and does not
// end the stream either is given up after drainWait.
func (c *Conn) stopWriting(cause error) {
	c.close(Lost, cause, false)
	_ = c.nc.SetReadDeadline(time.Now().Add(drainWait))
}

// drainWait bounds the reads after stopWriting: what a server sent
// before it closed is already on its way.
const drainWait = time.Second

// close is shutdown; the socket is closed when socket is set, also when
// stopWriting closed the connection and left it open.
func (c *Conn) close(reason Reason, cause error, socket bool) {
	c.mu.Lock()
	if c.closed {
		open := socket && c.draining
		if open {
			c.draining = false
		}
		c.mu.Unlock()
		if open {
			_ = c.nc.Close()
		}
		return
	}
	c.draining = !socket
	c.closed, c.reason, c.cause = true, reason, cause
	c.alive.Store(false)
	c.shareLocked(true)
	close(c.stop) // waiting Submits and the health monitor leave
	idle := !c.writing
	c.writing = true
	c.wakeReaderLocked()
	c.mu.Unlock()
	if socket {
		_ = c.nc.Close()
	}
	if idle {
		c.wake <- struct{}{}
	}
	if c.onLost != nil {
		c.onLost()
	}
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
	draining := c.draining
	c.draining = false
	c.mu.Unlock()
	if draining {
		// The reader left (nothing was owed) before the stream ended.
		_ = c.nc.Close()
	}
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
