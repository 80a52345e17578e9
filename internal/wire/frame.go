package wire

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/resp"
)

// Evidence says whether a failed frame may have reached the server.
type Evidence uint8

const (
	// Unknown is the zero value: the frame has not failed.
	Unknown Evidence = iota
	// Unwritten means the frame definitely never reached the server.
	Unwritten
	// PossiblyExecuted means the server may have run the frame.
	PossiblyExecuted
)

// String returns "unwritten", "possibly executed" or "unknown".
func (e Evidence) String() string {
	switch e {
	case Unwritten:
		return "unwritten"
	case PossiblyExecuted:
		return "possibly executed"
	}
	return "unknown"
}

// Want selects how the reader converts a reply while it still owns the
// borrowed bytes, so that common replies need no allocation.
type Want uint8

const (
	// WantValue clones the whole reply into Frame.Value (allocates).
	WantValue Want = iota
	// WantBytes appends a string-like reply to Frame.Bytes; null sets Null.
	WantBytes
	// WantInt stores an integer reply in Frame.Int; null sets Null.
	WantInt
	// WantNone discards the content of a status reply such as OK; a reply
	// of another type (but null, which sets Null) is kept in Frame.Value
	// for the caller's error.
	WantNone
	// WantString stores a string-like reply in Frame.Str, the one
	// allocation made while the reader still holds the bytes; null sets
	// Null.
	WantString
)

// frame states; transitions are CASes so that exactly one side releases.
const (
	stateIdle      uint32 = iota
	stateQueued           // submitted, not yet taken by the writer
	stateSent             // taken by the writer, in the FIFO
	stateDecoding         // the reader is filling the result
	stateDone             // result ready; the caller owns the frame
	stateAbandoned        // the caller left; the connection owns the frame
	// stateExpired: the connection's alarm ended the wait (the deadline
	// passed) and sent the caller its token; the reply is still owed.
	// Whichever of the caller and the connection is done with the frame
	// second releases it: the caller acknowledges with Expired→Abandoned,
	// the connection, once the reply is drained or failed, with
	// Expired→Drained.
	stateExpired
	// stateDrained: the connection is done with an expired frame whose
	// caller has not yet acknowledged; the caller releases it.
	stateDrained
)

// frameState is a frame's state in the low 8 bits of one word and, above
// them, a generation that changes every time the frame is renewed
// (recycled or reset). The connection's alarm holds frame pointers that
// may be stale (the frame completed and was reused since); it expires a
// frame only with a compare-and-swap of the whole word it read, so it
// can never end a later use of the frame. Only the frame's owner of the
// moment calls Store and renew, from states the alarm does not touch.
type frameState struct{ w atomic.Uint32 }

const stateMask = 0xff

// Load returns the state.
func (s *frameState) Load() uint32 { return s.w.Load() & stateMask }

// Store sets the state and keeps the generation.
func (s *frameState) Store(v uint32) { s.w.Store(s.w.Load()&^stateMask | v) }

// CompareAndSwap sets the state to to if it is from.
func (s *frameState) CompareAndSwap(from, to uint32) bool {
	for {
		w := s.w.Load()
		if w&stateMask != from {
			return false
		}
		if s.w.CompareAndSwap(w, w&^stateMask|to) {
			return true
		}
	}
}

// renew starts a new generation in stateIdle.
func (s *frameState) renew() { s.w.Store(s.w.Load()&^stateMask + stateMask + 1) }

// Frame is one command (or a pipeline of Replies commands written as one
// unit) and its result. Frames come from [GetFrame] and go back with
// [Frame.Release]; a frame is owned by one caller at a time.
type Frame struct {
	// Buf holds the encoded command bytes. The caller fills it before
	// Submit and must not change it until the frame completes.
	Buf []byte
	// Want selects the reply conversion.
	Want Want
	// Replies is how many replies the frame expects; 0 means 1.
	Replies int
	// Prelude is how many leading replies (of Replies) belong to commands
	// sent ahead of the caller's own, such as ASKING: their content is
	// dropped, an error among them still sets IsErr and ErrIndex.
	Prelude int

	// Results, valid after a successful Wait.
	Bytes  []byte       // WantBytes: the string reply, appended to the initial Bytes
	Str    string       // WantString
	Int    int64        // WantInt
	Null   bool         // the (last) reply was null
	Value  resp.Value   // WantValue: an owned copy of the reply (the last one when Replies > 1)
	Values []resp.Value // WantValue with Replies > 1: owned copies of every reply
	// Arena, optional, receives the bytes of Values (WantValue with
	// Replies > 1) in its free capacity, a new arena being started when it
	// is full (see [resp.Value.CloneAppend]): a caller that keeps Values
	// beyond Release sets it to memory of its own and takes it back after
	// the frame completed. A resend rewinds it. Release drops it.
	Arena []byte
	// ErrReply holds the error text of the first error reply ("ERR ...");
	// the frame still completes normally.
	ErrReply []byte
	// IsErr reports whether ErrReply is set.
	IsErr bool
	// ErrIndex is the index of the first error reply when Replies > 1.
	ErrIndex int

	// Err is the connection failure that ended the frame, if any.
	Err *ConnError

	// Scratch is a buffer owned by the frame and kept across reuse (up to
	// 64 KiB), for callers that want WantBytes without their own buffer.
	Scratch []byte

	// bytesBase is len(Bytes) when the frame was first submitted: a
	// resend appends its reply after the caller's original content.
	bytesBase int

	state   frameState
	pending int // replies still expected (reader-owned)
	seq     uint64
	// done receives one token per submission: from the reader (or a
	// failing connection) when the frame completes, or from the alarm
	// when it expired the frame.
	done chan struct{}
	// deadline is the caller's deadline as a stamp while it waits with
	// one (0: none); an alarm expires the frame once it passes.
	deadline atomic.Int64
	alarm    *alarm // the connection's, set when the frame is admitted
	pool     *FramePool
}

// FramePool recycles frames. Each client owns one, so that a frame (whose
// channel belongs to the goroutine group that created them, such
// as a testing/synctest bubble) never moves to another client. The zero
// value is ready to use; a FramePool is safe for concurrent use.
type FramePool struct{ p sync.Pool }

// Get returns an empty frame.
func (fp *FramePool) Get() *Frame {
	if f, ok := fp.p.Get().(*Frame); ok {
		return f
	}
	return &Frame{done: make(chan struct{}, 1), pool: fp}
}

var defaultPool FramePool

// GetFrame returns an empty frame from a package-wide pool.
func GetFrame() *Frame { return defaultPool.Get() }

// maxRetainedBuf bounds the command buffer a pooled frame keeps.
const maxRetainedBuf = 64 << 10

// Release returns f to the pool. Call it only while the caller owns the
// frame: before Submit, after a failed Submit, or after Wait returned nil.
// After Wait returned an error the frame is no longer the caller's. It
// clears every result so no caller memory is retained.
func (f *Frame) Release() { f.recycle() }

func (f *Frame) recycle() {
	if cap(f.Buf) > maxRetainedBuf {
		f.Buf = nil
	}
	if cap(f.Scratch) > maxRetainedBuf {
		f.Scratch = nil
	}
	f.Buf = f.Buf[:0]
	f.Want, f.Replies, f.Prelude = WantValue, 0, 0
	f.Bytes, f.Str, f.Int, f.Null, f.Value, f.Values, f.Arena = nil, "", 0, false, resp.Value{}, nil, nil
	f.ErrReply, f.IsErr, f.ErrIndex, f.Err = f.ErrReply[:0], false, 0, nil
	f.pending, f.seq, f.bytesBase = 0, 0, 0
	f.alarm = nil
	f.startOver()
	f.pool.p.Put(f)
}

// startOver ends the frame's current use: no deadline, no token, and a new
// generation in stateIdle. The deadline is cleared before the generation
// changes (see Conn.expireDue).
func (f *Frame) startOver() {
	f.deadline.Store(0)
	select {
	case <-f.done:
	default:
	}
	f.state.renew()
}

// Reset makes a completed frame ready to be submitted again with the same
// Buf, Want and Replies (a resend). Results are cleared.
func (f *Frame) Reset() {
	f.Str, f.Int, f.Null, f.Value, f.Values, f.Arena = "", 0, false, resp.Value{}, f.Values[:0], f.Arena[:0]
	f.Bytes = f.Bytes[:f.bytesBase] // the caller's prefix stays; only this frame's reply goes
	f.ErrReply, f.IsErr, f.ErrIndex, f.Err = f.ErrReply[:0], false, 0, nil
	f.startOver()
}

// Wait blocks until the frame completes, ctx is done or deadline passes
// (a zero deadline adds no limit beyond ctx). It returns nil when the frame
// completed (check Err and IsErr), ctx.Err() or context.DeadlineExceeded
// otherwise. When it gives up, the frame stays owned by the connection,
// which drains its reply and releases it: the caller must not touch it
// again. A reply already being decoded when the caller gives up is waited
// for (it takes microseconds) and discarded, so a late reply never
// completes a call that has ended.
func (f *Frame) Wait(ctx context.Context, deadline time.Time) error {
	if !deadline.IsZero() {
		a := f.alarm
		if a == nil { // never submitted to a connection
			return f.waitTimer(ctx, deadline)
		}
		// The connection's alarm stands in for a timer per call: it finds
		// the frame among the connection's and sends its token when the
		// deadline passes, so the wait is on the frame's channel alone.
		dl := toStamp(deadline)
		f.deadline.Store(dl)
		if !a.arm(dl) {
			return f.giveUp(context.DeadlineExceeded)
		}
	}
	if cancel := ctx.Done(); cancel == nil {
		<-f.done
	} else {
		select {
		case <-f.done:
		case <-cancel:
			return f.giveUp(ctx.Err())
		}
	}
	if f.state.Load() == stateDone {
		return nil
	}
	f.leaveExpired() // the alarm's token: the deadline passed
	return context.DeadlineExceeded
}

// leaveExpired acknowledges an expired frame whose token the caller has
// taken: the connection releases it after its reply, unless it is done
// with it already (stateDrained), in which case the caller does.
func (f *Frame) leaveExpired() {
	if !f.state.CompareAndSwap(stateExpired, stateAbandoned) {
		f.recycle() // stateDrained
	}
}

// waitTimer is Wait with a timer of its own.
func (f *Frame) waitTimer(ctx context.Context, deadline time.Time) error {
	timeout, stopTimer, expired := deadlineTimer(deadline)
	if expired {
		return f.giveUp(context.DeadlineExceeded)
	}
	defer stopTimer()
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return f.giveUp(ctx.Err())
	case <-timeout:
		return f.giveUp(context.DeadlineExceeded)
	}
}

// Abandon gives the frame to the connection if its reply has not arrived:
// the connection then drains the reply and releases the frame, and Abandon
// returns true. When the frame has already completed it returns false and
// the caller owns the result, as after a Wait that returned nil. Use it
// after a Wait that stopped waiting without giving up: [Frame.WaitFor].
func (f *Frame) Abandon() bool {
	for {
		switch s := f.state.Load(); s {
		case stateQueued, stateSent:
			if f.state.CompareAndSwap(s, stateAbandoned) {
				return true
			}
		case stateDecoding:
			runtime.Gosched()
		case stateExpired, stateDrained:
			<-f.done // the alarm's token, sent right after it expired f
			f.leaveExpired()
			return true
		default:
			<-f.done
			return false
		}
	}
}

// WaitFor is Wait without giving up: it returns nil when the frame
// completed, or the reason it stopped waiting, and the frame stays the
// caller's to wait for again or to [Frame.Abandon]. A caller that wants
// to act before the reply is given up (a blocking command it can still
// cancel on the server) uses it.
func (f *Frame) WaitFor(ctx context.Context, deadline time.Time) error {
	timeout, stopTimer, expired := deadlineTimer(deadline)
	if expired {
		return context.DeadlineExceeded
	}
	defer stopTimer()
	select {
	case <-f.done:
		f.done <- struct{}{} // keep the completion for Abandon or Wait
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return context.DeadlineExceeded
	}
}

// giveUp abandons the frame if the connection still owns its slot; if the
// result is done, it drops it and releases the frame. While the reader is
// decoding it waits for the replies already buffered only (CPU time, no
// I/O): a frame expecting more replies goes back to stateSent before the
// reader reads from the socket and is abandoned then, so a caller never
// waits for replies that may not come.
func (f *Frame) giveUp(err error) error {
	for {
		switch s := f.state.Load(); s {
		case stateQueued, stateSent:
			if f.state.CompareAndSwap(s, stateAbandoned) {
				return err
			}
		case stateDecoding:
			runtime.Gosched()
		case stateExpired, stateDrained:
			<-f.done // the alarm's token, sent right after it expired f
			f.leaveExpired()
			return err
		default: // done: the result is ours and must be dropped
			<-f.done
			f.recycle()
			return err
		}
	}
}

// finish hands a decoded frame to its caller. Only the connection calls it,
// with the frame in stateDecoding.
func (f *Frame) finish() {
	f.state.Store(stateDone)
	f.done <- struct{}{}
}

// fail completes f with a connection error, or releases it if its caller
// has left. Only the connection calls it.
func (f *Frame) fail(e *ConnError) {
	for {
		s := f.state.Load()
		if s == stateAbandoned || s == stateExpired {
			f.drop()
			return
		}
		if f.state.CompareAndSwap(s, stateDecoding) {
			break
		}
	}
	f.Err = e
	f.finish()
}

// drop is the connection being done with a frame its caller left (its
// reply drained, or its connection dead): an abandoned frame is recycled,
// an expired one is left for its caller to release (see stateExpired).
// Only the connection calls it.
func (f *Frame) drop() {
	for {
		switch f.state.Load() {
		case stateAbandoned:
			f.recycle()
			return
		case stateExpired:
			if f.state.CompareAndSwap(stateExpired, stateDrained) {
				return
			}
		default:
			return // not reached: only a left frame is dropped
		}
	}
}
