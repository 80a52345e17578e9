package wire

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// TestProtocolReset proves that a malformed, oversized or unsolicited
// reply resets the connection with Reason Protocol: the frame the bad
// reply answered fails with Reason Protocol, every other frame in flight
// with Reason Lost (both PossiblyExecuted: their bytes were written),
// later Submits are refused as Unwritten, nothing panics, and the reader
// never allocates what a hostile header announces.
func TestProtocolReset(t *testing.T) {
	tests := []struct {
		name     string
		maxBulk  int64
		inFlight int // frames submitted and written before the bad bytes
		reply    string
	}{
		{"bulk above MaxBulk", 1 << 20, 2, "$2000000\r\n"},
		{"bulk above the default MaxBulk", 0, 1, "$1000000000000\r\n"},
		{"garbage type byte", 0, 2, "@garbage\r\n"},
		{"malformed length", 0, 1, "$abc\r\n"},
		{"negative array length", 0, 1, "*-7\r\n"},
		{"reply with no pending command", 0, 0, "+OK\r\n"},
		{"extra reply after the pending ones", 0, 1, "+OK\r\n+OK\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeConn()
			c := startOn(fc, 3, Config{MaxBulk: tt.maxBulk})
			defer c.Close()

			var frames []*Frame
			for i := range tt.inFlight {
				f := newFrame(WantBytes, "GET", string(rune('a'+i)))
				submit(t, c, f)
				frames = append(frames, f)
			}
			for _, f := range frames {
				fc.waitWritten(t, f.Buf)
			}
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			fc.reply([]byte(tt.reply))
			<-c.Dead()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("reader allocated %d bytes on a hostile reply, want a bounded amount", grew)
			}

			for i, f := range frames {
				waitOK(t, f)
				if tt.name == "extra reply after the pending ones" {
					// The first reply was legitimate.
					if f.Err != nil || string(f.Bytes) != "OK" {
						t.Errorf("frame %d: got Err %v Bytes %q, want OK", i, f.Err, f.Bytes)
					}
					f.Release()
					continue
				}
				want := Lost
				if i == 0 {
					want = Protocol // the bad reply was the first frame's
				}
				var ce *ConnError
				if !errors.As(f.Err, &ce) || ce.Reason != want || ce.Evidence != PossiblyExecuted {
					t.Errorf("frame %d: got %v (reason %d), want *ConnError reason %d PossiblyExecuted", i, f.Err, reasonOf(f.Err), want)
				}
				f.Release()
			}
			g := newFrame(WantBytes, "GET", "k")
			var ce *ConnError
			if err := c.Submit(context.Background(), time.Time{}, g); !errors.As(err, &ce) || ce.Evidence != Unwritten {
				t.Errorf("Submit after reset: got %v, want *ConnError Unwritten", err)
			}
			g.Release()
			c.mu.Lock()
			reason, cause := c.reason, c.cause
			c.mu.Unlock()
			if reason != Protocol || cause == nil {
				t.Errorf("connection closed with reason %d cause %v, want Protocol", reason, cause)
			}
		})
	}
}

// TestProtocolErrorIsIdentifiable proves that the cause of a protocol reset
// matches resp.ErrProtocol and the limit error with errors.Is.
func TestProtocolErrorIsIdentifiable(t *testing.T) {
	fc := newFakeConn()
	c := startOn(fc, 3, Config{MaxBulk: 16})
	defer c.Close()
	f := newFrame(WantBytes, "GET", "k")
	submit(t, c, f)
	fc.waitWritten(t, f.Buf)
	fc.reply([]byte("$17\r\n"))
	waitOK(t, f)
	if !errors.Is(f.Err, resp.ErrProtocol) || !errors.Is(f.Err, resp.ErrBulkTooLarge) {
		t.Fatalf("got %v, want an error matching resp.ErrProtocol and resp.ErrBulkTooLarge", f.Err)
	}
	f.Release()
}

// TestHugeAnnouncedLengthsThenHangUp proves that headers announcing huge
// (but allowed) sizes followed by a hang-up cost memory proportional to
// the bytes received, and fail the frame as Lost.
func TestHugeAnnouncedLengthsThenHangUp(t *testing.T) {
	for _, hdr := range []string{"$500000000\r\nabc", "*1000000000\r\n:1\r\n", "%1000000000\r\n"} {
		t.Run(hdr[:1], func(t *testing.T) {
			c, fc := startFake(t, 3, nil)
			f := newFrame(WantValue, "GET", "k")
			submit(t, c, f)
			fc.waitWritten(t, f.Buf)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			fc.reply([]byte(hdr))
			_ = fc.Close()
			waitOK(t, f)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("allocated %d bytes for a %q header, want a bounded amount", grew, hdr)
			}
			if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != PossiblyExecuted {
				t.Errorf("got %v, want Lost PossiblyExecuted", f.Err)
			}
			f.Release()
		})
	}
}

// reasonOf returns e's Reason, or 0 for nil.
func reasonOf(e *ConnError) Reason {
	if e == nil {
		return 0
	}
	return e.Reason
}

// TestProtocolErrorBlamesOneFrame proves that a malformed reply fails only
// the frame it answered with Reason Protocol: with three pipelined frames
// A, B, C written, a fourth X in a write that never completes and a fifth
// Q still queued behind it, the bad reply to A (or to B after A's good
// reply, or inside the second reply of a two-reply A) blames exactly that
// frame; every other frame fails as Lost with its own evidence (B and C
// written: PossiblyExecuted; X cut before its last byte and Q never
// taken: Unwritten). A reply nobody waits for blames no frame.
func TestProtocolErrorBlamesOneFrame(t *testing.T) {
	const (
		U  = Unwritten
		PE = PossiblyExecuted
		L  = Lost
		P  = Protocol
	)
	type outcome struct {
		reason Reason
		ev     Evidence
		ok     bool // completed with a reply
	}
	tests := []struct {
		name   string
		multiA bool   // A expects two replies
		reply  string // bytes the server sends
		want   [5]outcome
	}{
		{"first frame's reply malformed", false, "$abc\r\n",
			[5]outcome{{P, PE, false}, {L, PE, false}, {L, PE, false}, {L, U, false}, {L, U, false}}},
		{"second frame's reply oversized", false, "+OK\r\n$2000000\r\n",
			[5]outcome{{ok: true}, {P, PE, false}, {L, PE, false}, {L, U, false}, {L, U, false}}},
		{"second reply of a two-reply frame garbage", true, "+OK\r\n@what\r\n",
			[5]outcome{{P, PE, false}, {L, PE, false}, {L, PE, false}, {L, U, false}, {L, U, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeConn()
			c := startOn(fc, 3, Config{MaxBulk: 1 << 20})
			defer c.Close()
			a := newFrame(WantBytes, "GET", "a")
			if tt.multiA {
				a.Buf = append(a.Buf, cmd("GET", "a2")...)
				a.Replies = 2
			}
			frames := []*Frame{a, newFrame(WantBytes, "GET", "b"), newFrame(WantBytes, "GET", "c")}
			// A, B and C go out in writes 0, 1 and 2, all accepted.
			for i, f := range frames {
				submit(t, c, f)
				fc.awaitWrite(t, i)
			}
			fc.waitWritten(t, frames[2].Buf)
			// X's write (call 3) hangs until the connection closes, so Q
			// stays queued behind it.
			fc.rule(3, writeRule{gate: make(chan struct{})})
			x := newFrame(WantBytes, "GET", "x")
			submit(t, c, x)
			fc.awaitWrite(t, 3)
			q := newFrame(WantBytes, "GET", "q")
			submit(t, c, q)
			frames = append(frames, x, q)

			fc.reply([]byte(tt.reply))
			<-c.Dead()
			for i, f := range frames {
				waitOK(t, f)
				w := tt.want[i]
				name := string("ABCXQ"[i])
				switch {
				case w.ok:
					if f.Err != nil {
						t.Errorf("%s: got %v, want its reply", name, f.Err)
					}
				case f.Err == nil:
					t.Errorf("%s: completed, want reason %d evidence %v", name, w.reason, w.ev)
				case f.Err.Reason != w.reason || f.Err.Evidence != w.ev:
					t.Errorf("%s: got reason %d evidence %v, want reason %d evidence %v", name, f.Err.Reason, f.Err.Evidence, w.reason, w.ev)
				case !errors.Is(f.Err, resp.ErrProtocol):
					t.Errorf("%s: cause %v, want the protocol error that reset the connection", name, f.Err.Cause)
				}
				f.Release()
			}
			if got, _ := c.pending(); got != 0 {
				t.Errorf("%d frames still counted as pending after death, want 0", got)
			}
		})
	}

	t.Run("reply without a pending command", func(t *testing.T) {
		fc := newFakeConn()
		c := startOn(fc, 3, Config{})
		defer c.Close()
		a := newFrame(WantBytes, "GET", "a")
		submit(t, c, a)
		fc.waitWritten(t, a.Buf)
		fc.reply([]byte("+OK\r\n+EXTRA\r\n")) // A's reply, then one nobody asked for
		waitOK(t, a)
		if a.Err != nil || string(a.Bytes) != "OK" {
			t.Errorf("A: got Err %v Bytes %q, want its reply OK", a.Err, a.Bytes)
		}
		a.Release()
		<-c.Dead()
		y := newFrame(WantBytes, "GET", "y")
		err := c.Submit(context.Background(), time.Time{}, y)
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Reason != Lost || ce.Evidence != Unwritten {
			t.Fatalf("Submit after the reset: got %v, want *ConnError Lost Unwritten", err)
		}
		y.Release()
		c.mu.Lock()
		reason := c.reason
		c.mu.Unlock()
		if reason != Protocol {
			t.Errorf("connection closed with reason %d, want Protocol", reason)
		}
	})
}
