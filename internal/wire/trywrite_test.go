package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// tryRule scripts one tryWrite call of a tryFake: accept bytes are taken
// (-1: all of them), then err is returned.
type tryRule struct {
	accept int
	err    error
}

// tryFake is a fakeConn with a scripted non-blocking write: call i follows
// rules[i] (default: accept everything) and records the bytes it was given.
type tryFake struct {
	*fakeConn
	tmu   sync.Mutex
	rules map[int]tryRule
	tried [][]byte
}

func (tf *tryFake) tryWrite(p []byte) (int, error) {
	tf.tmu.Lock()
	r, ok := tf.rules[len(tf.tried)]
	tf.tried = append(tf.tried, bytes.Clone(p))
	tf.tmu.Unlock()
	n := len(p)
	if ok && r.accept >= 0 {
		n = r.accept
	}
	tf.fakeConn.mu.Lock()
	tf.fakeConn.written.Write(p[:n])
	tf.fakeConn.cond.Broadcast()
	tf.fakeConn.mu.Unlock()
	return n, r.err
}

func (tf *tryFake) tries() [][]byte {
	tf.tmu.Lock()
	defer tf.tmu.Unlock()
	return append([][]byte(nil), tf.tried...)
}

func startTryFake(t *testing.T, rules map[int]tryRule) (*Conn, *tryFake) {
	t.Helper()
	tf := &tryFake{fakeConn: newFakeConn(), rules: rules}
	c := startOn(tf, 3, Config{})
	t.Cleanup(func() { _ = c.Close() })
	return c, tf
}

// TestIdleConnectionCallerWritesOwnFrame proves that a frame submitted on
// an idle connection is written by Submit itself, through the socket's
// non-blocking write: its bytes are on the socket when Submit returns and
// the writer goroutine made no Write call.
func TestIdleConnectionCallerWritesOwnFrame(t *testing.T) {
	c, tf := startTryFake(t, nil)
	for i, key := range []string{"a", "b"} {
		f := newFrame(WantBytes, "GET", key)
		want := bytes.Clone(f.Buf)
		submit(t, c, f)
		if got := tf.tries(); len(got) != i+1 || !bytes.Equal(got[i], want) {
			t.Fatalf("after Submit of %s: non-blocking writes %q, want call %d to carry %q", key, got, i, want)
		}
		if got := tf.writtenBytes(); !bytes.HasSuffix(got, want) {
			t.Fatalf("after Submit of %s the socket holds %q, want it to end with the frame", key, got)
		}
		tf.reply(bulk("v" + key))
		waitOK(t, f)
		if string(f.Bytes) != "v"+key {
			t.Fatalf("GET %s: got %q, want %q", key, f.Bytes, "v"+key)
		}
		f.Release()
	}
	tf.fakeConn.mu.Lock()
	calls := tf.fakeConn.calls
	tf.fakeConn.mu.Unlock()
	if calls != 0 {
		t.Fatalf("the writer goroutine made %d Write calls, want 0", calls)
	}
}

// TestFewCallersWriteOwnFramesWhileOthersAreOwed proves that on a
// connection few callers share (its recent peak of frames owed is at most
// ownWriteMaxPeak), a caller that finds the writer idle writes its own
// frame even while other replies are owed: commands leave at once instead
// of waiting in waves for the writer goroutine.
func TestFewCallersWriteOwnFramesWhileOthersAreOwed(t *testing.T) {
	c, tf := startTryFake(t, nil)
	frames := make([]*Frame, ownWriteMaxPeak+1)
	for i := range frames {
		frames[i] = newFrame(WantBytes, "GET", "k"+strconv.Itoa(i))
		want := bytes.Clone(frames[i].Buf)
		submit(t, c, frames[i]) // i frames are owed
		if got := tf.tries(); len(got) != i+1 || !bytes.Equal(got[i], want) {
			t.Fatalf("frame %d (%d owed): %d non-blocking writes, want its caller's write %q", i, i, len(got), want)
		}
	}
	answerInOrder(t, tf, frames, "v")
	tf.fakeConn.mu.Lock()
	calls := tf.fakeConn.calls
	tf.fakeConn.mu.Unlock()
	if calls != 0 {
		t.Fatalf("the writer goroutine made %d Write calls, want 0", calls)
	}
}

// TestBusyConnectionQueuesForWriter proves that once more than
// ownWriteMaxPeak frames were owed at once, a frame submitted goes to the
// writer goroutine (which gathers frames into one write) instead of being
// written by its caller, whether others are still owed or not.
func TestBusyConnectionQueuesForWriter(t *testing.T) {
	c, tf := startTryFake(t, nil)
	owed := make([]*Frame, ownWriteMaxPeak+1)
	for i := range owed {
		owed[i] = newFrame(WantBytes, "GET", "a"+strconv.Itoa(i))
		submit(t, c, owed[i])
	}
	b := newFrame(WantBytes, "GET", "b")
	bBuf := bytes.Clone(b.Buf)
	submit(t, c, b) // ownWriteMaxPeak+1 owed: the peak is above the bound
	tf.awaitWrite(t, 0)
	if got := tf.call(0); !bytes.Equal(got, bBuf) {
		t.Fatalf("writer goroutine wrote %q, want the last frame %q", got, bBuf)
	}
	if got := len(tf.tries()); got != len(owed) {
		t.Fatalf("%d non-blocking writes, want %d (the frames before the peak passed the bound)", got, len(owed))
	}
	e := newFrame(WantBytes, "GET", "e")
	submit(t, c, e) // the peak rises to ownWriteMaxPeak+2
	tf.awaitWrite(t, 1)
	answerInOrder(t, tf, append(owed, b, e), "v")
	// Nothing is owed now, and the peak, which decays by one at this
	// admission, is still above the bound: the next frame too goes to the
	// writer goroutine, to be gathered with the frames of the callers the
	// replies woke.
	d := newFrame(WantBytes, "GET", "d")
	dBuf := bytes.Clone(d.Buf)
	submit(t, c, d)
	tf.awaitWrite(t, 2)
	if got := tf.call(2); !bytes.Equal(got, dBuf) {
		t.Fatalf("writer goroutine wrote %q, want the frame submitted after the replies %q", got, dBuf)
	}
	if got := len(tf.tries()); got != len(owed) {
		t.Fatalf("%d non-blocking writes, want %d", got, len(owed))
	}
	answerInOrder(t, tf, []*Frame{d}, "w")
}

// answerInOrder replies prefix+i to frames[i], in order, and checks that
// each frame got its own reply.
func answerInOrder(t *testing.T, tf *tryFake, frames []*Frame, prefix string) {
	t.Helper()
	for i := range frames {
		tf.reply(bulk(prefix + strconv.Itoa(i)))
	}
	for i, f := range frames {
		waitOK(t, f)
		if want := prefix + strconv.Itoa(i); string(f.Bytes) != want {
			t.Fatalf("frame %d got %q, want %q", i, f.Bytes, want)
		}
		f.Release()
	}
}

// TestOwnWriteRestGoesToWriter proves that what the socket does not accept
// at once (part of the frame, or nothing) is written by the writer
// goroutine before any later frame, so the bytes on the socket stay whole
// and in order and every caller gets its own reply.
func TestOwnWriteRestGoesToWriter(t *testing.T) {
	for _, accept := range []int{0, 5} {
		c, tf := startTryFake(t, map[int]tryRule{0: {accept: accept}})
		gate := make(chan struct{})
		tf.rule(0, writeRule{gate: gate})
		a := newFrame(WantBytes, "GET", "first-key")
		aBuf := bytes.Clone(a.Buf)
		submit(t, c, a)
		tf.awaitWrite(t, 0)
		if got := tf.call(0); !bytes.Equal(got, aBuf[accept:]) {
			t.Fatalf("accept %d: writer goroutine wrote %q, want the rest %q", accept, got, aBuf[accept:])
		}
		b := newFrame(WantBytes, "GET", "second")
		bBuf := bytes.Clone(b.Buf)
		submit(t, c, b) // queued behind the held rest
		close(gate)
		tf.waitWritten(t, bBuf)
		if got, want := tf.writtenBytes(), append(bytes.Clone(aBuf), bBuf...); !bytes.Equal(got, want) {
			t.Fatalf("accept %d: socket holds %q, want %q", accept, got, want)
		}
		tf.reply(bulk("va"))
		tf.reply(bulk("vb"))
		waitOK(t, a)
		waitOK(t, b)
		if string(a.Bytes) != "va" || string(b.Bytes) != "vb" {
			t.Fatalf("accept %d: got a=%q b=%q, want va and vb", accept, a.Bytes, b.Bytes)
		}
		a.Release()
		b.Release()
	}
}

// TestOwnWriteFailureEvidence proves that a failed non-blocking write
// kills the connection with the writer's evidence rule: a frame whose
// bytes were not all accepted never ran (unwritten), except a frame of
// several commands cut after its first byte (possibly executed); and
// that later submissions are refused as unwritten.
func TestOwnWriteFailureEvidence(t *testing.T) {
	broken := errors.New("broken pipe")
	rows := []struct {
		name    string
		accept  int
		replies int
		want    Evidence
	}{
		{"nothing accepted", 0, 1, Unwritten},
		{"part of one command", 4, 1, Unwritten},
		{"part of a pipeline", 4, 2, PossiblyExecuted},
		{"pipeline untouched", 0, 2, Unwritten},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c, _ := startTryFake(t, map[int]tryRule{0: {accept: r.accept, err: broken}})
			f := GetFrame()
			f.Buf = append(append(f.Buf[:0], cmd("INCR", "a")...), cmd("INCR", "b")...)
			if r.replies == 1 {
				f.Buf = append(f.Buf[:0], cmd("INCR", "a")...)
			}
			f.Replies = r.replies
			f.Want = WantValue
			submit(t, c, f)
			waitOK(t, f)
			if f.Err == nil || f.Err.Evidence != r.want || f.Err.Reason != Lost || !errors.Is(f.Err, broken) {
				t.Fatalf("got Err %v, want Lost, %v, caused by %v", f.Err, r.want, broken)
			}
			<-c.Dead()
			g := newFrame(WantBytes, "GET", "x")
			var ce *ConnError
			if err := c.Submit(t.Context(), time.Time{}, g); !errors.As(err, &ce) || ce.Evidence != Unwritten {
				t.Fatalf("Submit on the dead connection: got %v, want an unwritten ConnError", err)
			}
			g.Release()
		})
	}
}

// TestRawWriterOnlyForStandardSockets proves that the non-blocking write
// is used for the standard library's TCP sockets and never for another
// connection type that could transform what it writes.
func TestRawWriterOnlyForStandardSockets(t *testing.T) {
	nc, srv := tcpPair(t)
	defer nc.Close()
	defer srv.Close()
	m := newMeteredConn(nc)
	if !m.canTryWrite() {
		t.Fatal("a *net.TCPConn has no non-blocking write")
	}
	msg := cmd("PING")
	if n, err := m.tryWrite(msg); n != len(msg) || err != nil {
		t.Fatalf("tryWrite: %d, %v; want %d, nil", n, err, len(msg))
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(srv, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("server read %q (%v), want %q", got, err, msg)
	}
	if newMeteredConn(wrappedConn{nc}).canTryWrite() {
		t.Fatal("a wrapping connection got the raw non-blocking write")
	}
	_ = nc.Close()
	if _, err := m.tryWrite(msg); err == nil {
		t.Fatal("tryWrite on a closed socket: no error")
	}
}

// wrappedConn is a net.Conn of another type around a TCP socket.
type wrappedConn struct{ net.Conn }

// TestOwnWriteRestSurvivesEarlyCompletion proves that the writer goroutine
// writes the bytes of a caller's own write that the socket did not accept
// as they were submitted, even when a misbehaving server answers the
// frame before receiving all of it and its caller, which owns the frame
// again, reuses the frame's buffer (as the next command from the frame
// pool does): another command's bytes are never spliced into the stream.
func TestOwnWriteRestSurvivesEarlyCompletion(t *testing.T) {
	c, tf := startTryFake(t, map[int]tryRule{0: {accept: 5}})
	gate := make(chan struct{})
	tf.rule(0, writeRule{gate: gate})
	a := newFrame(WantBytes, "SET", "first-key", "value")
	aBuf := bytes.Clone(a.Buf)
	submit(t, c, a)
	tf.awaitWrite(t, 0) // the rest is with the writer goroutine, held
	tf.reply([]byte("+OK\r\n"))
	waitOK(t, a)
	// The frame is its caller's again: the next command reuses its buffer.
	next := cmd("DEL", "other-key")
	a.Buf = append(a.Buf[:0], next...)
	close(gate)
	b := newFrame(WantBytes, "GET", "second")
	bBuf := bytes.Clone(b.Buf)
	submit(t, c, b)
	tf.waitWritten(t, bBuf)
	if got, want := tf.writtenBytes(), append(bytes.Clone(aBuf), bBuf...); !bytes.Equal(got, want) {
		t.Fatalf("socket holds %q, want the first frame as submitted then the second: %q", got, want)
	}
	a.Release()
	tf.reply(bulk("vb"))
	waitOK(t, b)
	b.Release()
}
