package wire

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestWriteEvidence proves that when one coalesced write fails after k
// accepted bytes, every frame gets exactly one evidence computed from k:
// frames whose last byte was accepted (and earlier frames awaiting their
// reply) are PossiblyExecuted; the frame cut by k, every later frame and
// every frame still queued are Unwritten; a frame answered earlier
// completes normally; Submit after death is refused as Unwritten.
func TestWriteEvidence(t *testing.T) {
	const (
		U  = Unwritten
		PE = PossiblyExecuted
	)
	b, c1 := cmd("SET", "b", "1"), cmd("INCR", "c")
	type row struct {
		name   string
		multiC bool // C is a two-command frame (Replies 2)
		accept func(lenB, lenC, total int) int
		want   [5]Evidence // B, C, D, E, F (F is still queued)
	}
	rows := []row{
		{"before B's first byte", false, func(lb, lc, n int) int { return 0 }, [5]Evidence{U, U, U, U, U}},
		{"inside C", false, func(lb, lc, n int) int { return lb + 2 }, [5]Evidence{PE, U, U, U, U}},
		{"exactly after C's last byte", false, func(lb, lc, n int) int { return lb + lc }, [5]Evidence{PE, PE, U, U, U}},
		{"one byte before C's end", false, func(lb, lc, n int) int { return lb + lc - 1 }, [5]Evidence{PE, U, U, U, U}},
		{"all bytes accepted, error anyway", false, func(lb, lc, n int) int { return -1 }, [5]Evidence{PE, PE, PE, PE, U}},
		// A frame of two commands cut after its first command may have run
		// that command: possibly executed, its successors unwritten.
		{"inside multi-command C after its first command", true, func(lb, lc, n int) int { return lb + len(c1) + 1 }, [5]Evidence{PE, PE, U, U, U}},
		{"before multi-command C's first byte", true, func(lb, lc, n int) int { return lb }, [5]Evidence{PE, U, U, U, U}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c, fc := startFake(t, 3, nil)

			// Z: written and answered before anything fails.
			z := newFrame(WantBytes, "GET", "z")
			submit(t, c, z)
			fc.awaitWrite(t, 0)
			fc.reply(bulk("zval"))
			waitOK(t, z)
			if z.Err != nil || string(z.Bytes) != "zval" {
				t.Fatalf("Z: got Err %v Bytes %q, want nil and %q", z.Err, z.Bytes, "zval")
			}
			z.Release()

			// A: written alone in write 1 (held), then awaits its reply.
			gate1, gate2 := make(chan struct{}), make(chan struct{})
			fc.rule(1, writeRule{gate: gate1})
			a := newFrame(WantBytes, "GET", "a")
			submit(t, c, a)
			fc.awaitWrite(t, 1)

			// B..E queue up behind the held write and go out together.
			frames := map[string]*Frame{"A": a}
			cBuf := cmd("GET", "c")
			if r.multiC {
				cBuf = append(bytes.Clone(c1), cmd("GET", "c")...)
			}
			bufs := [][]byte{b, cBuf, cmd("GET", "d"), cmd("GET", "e")}
			var batch []byte
			for i, name := range []string{"B", "C", "D", "E"} {
				f := GetFrame()
				f.Buf = append(f.Buf[:0], bufs[i]...)
				f.Want = WantValue
				if name == "C" && r.multiC {
					f.Replies = 2
				}
				frames[name] = f
				batch = append(batch, bufs[i]...)
				submit(t, c, f)
			}
			k := r.accept(len(bufs[0]), len(bufs[1]), len(batch))
			fc.rule(2, writeRule{gate: gate2, fail: true, accept: k})
			close(gate1)
			fc.awaitWrite(t, 2)
			if got := fc.call(2); !bytes.Equal(got, batch) {
				t.Fatalf("write 2 carried %q, want B..E in one flush %q", got, batch)
			}

			// F is submitted while the failing write is in progress.
			f := newFrame(WantValue, "GET", "f")
			frames["F"] = f
			submit(t, c, f)
			close(gate2)

			want := map[string]Evidence{"A": PE}
			for i, name := range []string{"B", "C", "D", "E", "F"} {
				want[name] = r.want[i]
			}
			for _, name := range []string{"A", "B", "C", "D", "E", "F"} {
				fr := frames[name]
				waitOK(t, fr)
				if fr.Err == nil {
					t.Fatalf("%s: completed without error, want a connection error", name)
				}
				if got := fr.Err.Evidence; got != want[name] {
					t.Errorf("%s: got evidence %v, want %v", name, got, want[name])
				}
				if fr.Err.Reason != Lost || !errors.Is(fr.Err, errScripted) {
					t.Errorf("%s: got %v (reason %d), want Lost wrapping the write error", name, fr.Err, fr.Err.Reason)
				}
				fr.Release()
			}
			if want, got := batch, fc.writtenBytes(); k >= 0 && !bytes.HasSuffix(got, want[:k]) {
				t.Errorf("accepted bytes %q do not end with the first %d bytes of the batch", got, k)
			}

			<-c.Dead()
			if c.Alive() {
				t.Error("Alive() = true after death")
			}
			g := newFrame(WantValue, "GET", "g")
			err := c.Submit(context.Background(), time.Time{}, g)
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Evidence != Unwritten {
				t.Fatalf("Submit after death: got %v, want *ConnError with Evidence Unwritten", err)
			}
			g.Release()
		})
	}
}

// TestEvidenceOfPartiallyAnsweredFrame proves that a multi-reply frame
// whose first reply arrived before the connection died is failed (not
// lost) with PossiblyExecuted, and that its caller is released.
func TestEvidenceOfPartiallyAnsweredFrame(t *testing.T) {
	c, fc := startFake(t, 3, nil)
	f := GetFrame()
	f.Buf = append(append(f.Buf[:0], cmd("INCR", "x")...), cmd("INCR", "y")...)
	f.Replies = 2
	f.Want = WantValue
	submit(t, c, f)
	fc.awaitWrite(t, 0)
	fc.reply([]byte(":1\r\n"))
	_ = fc.Close() // the server goes away after one reply
	waitOK(t, f)
	if f.Err == nil || f.Err.Evidence != PossiblyExecuted {
		t.Fatalf("got Err %v, want a connection error with PossiblyExecuted", f.Err)
	}
	f.Release()
}

// TestEvidenceString proves the names Evidence prints.
func TestEvidenceString(t *testing.T) {
	for e, want := range map[Evidence]string{Unknown: "unknown", Unwritten: "unwritten", PossiblyExecuted: "possibly executed"} {
		if got := e.String(); got != want {
			t.Errorf("Evidence(%d).String() = %q, want %q", e, got, want)
		}
	}
}
