package wire

import (
	"errors"
	"runtime"
	"testing"

	"github.com/respire-go/respire/resp"
)

// TestProtocolReset proves that a malformed, oversized or unsolicited
// reply resets the connection with Reason Protocol: every frame in flight
// gets a *ConnError (PossiblyExecuted: its bytes were written), frames
// still queued get Unwritten, later Submits are refused, nothing panics,
// and the reader never allocates what a hostile header announces.
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
			rd := resp.NewReader(fc)
			rd.MaxBulk = tt.maxBulk
			c := start(fc, rd, 3, nil, nil)
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
				var ce *ConnError
				if !errors.As(f.Err, &ce) || ce.Reason != Protocol || ce.Evidence != PossiblyExecuted {
					t.Errorf("frame %d: got %v, want *ConnError Protocol PossiblyExecuted", i, f.Err)
				}
				f.Release()
			}
			g := newFrame(WantBytes, "GET", "k")
			var ce *ConnError
			if err := c.Submit(g); !errors.As(err, &ce) || ce.Evidence != Unwritten {
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
	rd := resp.NewReader(fc)
	rd.MaxBulk = 16
	c := start(fc, rd, 3, nil, nil)
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
