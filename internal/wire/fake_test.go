package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// errScripted is the error a scripted Write returns.
var errScripted = errors.New("scripted write failure")

// writeRule scripts one Write call of a fakeConn.
type writeRule struct {
	gate   chan struct{} // if not nil, Write blocks until it is closed (or the conn closes)
	fail   bool          // accept only accept bytes, then return errScripted
	accept int           // with fail: bytes accepted; -1 accepts everything
}

// fakeConn is a scripted net.Conn. Write call i follows rules[i] (if any),
// announces its start on started and records the bytes it accepted. Read
// returns bytes the test released with reply, or blocks until Close.
type fakeConn struct {
	mu       sync.Mutex
	cond     *sync.Cond
	rules    map[int]writeRule
	calls    int
	written  bytes.Buffer // every byte accepted
	perCall  [][]byte     // bytes handed to each Write call
	incoming bytes.Buffer // replies released, not yet read
	closed   bool
	closedCh chan struct{}
	started  chan int // receives the index of each Write call as it starts
	// drained, when set, receives how many reply bytes have been read in
	// all each time a Read finds nothing to return and waits.
	drained   chan int
	readSoFar int
}

func newFakeConn() *fakeConn {
	fc := &fakeConn{
		rules:    map[int]writeRule{},
		closedCh: make(chan struct{}),
		started:  make(chan int, 64),
	}
	fc.cond = sync.NewCond(&fc.mu)
	return fc
}

// rule scripts Write call i; call it before that call can happen.
func (fc *fakeConn) rule(i int, r writeRule) {
	fc.mu.Lock()
	fc.rules[i] = r
	fc.mu.Unlock()
}

func (fc *fakeConn) Write(p []byte) (int, error) {
	fc.mu.Lock()
	i := fc.calls
	fc.calls++
	r := fc.rules[i]
	fc.perCall = append(fc.perCall, bytes.Clone(p))
	closed := fc.closed
	fc.mu.Unlock()
	fc.started <- i
	if closed {
		return 0, net.ErrClosed
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-fc.closedCh:
			return 0, net.ErrClosed
		}
	}
	n := len(p)
	var err error
	if r.fail {
		err = errScripted
		if r.accept >= 0 {
			n = r.accept
		}
	}
	fc.mu.Lock()
	fc.written.Write(p[:n])
	fc.cond.Broadcast()
	fc.mu.Unlock()
	return n, err
}

func (fc *fakeConn) Read(p []byte) (int, error) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for fc.incoming.Len() == 0 && !fc.closed {
		if fc.drained != nil {
			select {
			case fc.drained <- fc.readSoFar:
			default:
			}
		}
		fc.cond.Wait()
	}
	if fc.incoming.Len() > 0 {
		n, err := fc.incoming.Read(p)
		fc.readSoFar += n
		return n, err
	}
	return 0, net.ErrClosed
}

// reply releases bytes to the client's reader.
func (fc *fakeConn) reply(b []byte) {
	fc.mu.Lock()
	fc.incoming.Write(b)
	fc.cond.Broadcast()
	fc.mu.Unlock()
}

// Close unblocks Read (net.ErrClosed once the released bytes are read)
// and any gated Write.
func (fc *fakeConn) Close() error {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !fc.closed {
		fc.closed = true
		close(fc.closedCh)
		fc.cond.Broadcast()
	}
	return nil
}

// waitWritten blocks until the accepted bytes contain want.
func (fc *fakeConn) waitWritten(t *testing.T, want []byte) {
	t.Helper()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for !bytes.Contains(fc.written.Bytes(), want) {
		if fc.closed {
			t.Fatalf("connection closed before %q was written; written %q", want, fc.written.Bytes())
		}
		fc.cond.Wait()
	}
}

// writtenBytes returns a copy of every accepted byte.
func (fc *fakeConn) writtenBytes() []byte {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return bytes.Clone(fc.written.Bytes())
}

func (fc *fakeConn) call(i int) []byte {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.perCall[i]
}

// awaitWrite waits until Write call i has started.
func (fc *fakeConn) awaitWrite(t *testing.T, i int) {
	t.Helper()
	for {
		select {
		case got := <-fc.started:
			if got == i {
				return
			}
			if got > i {
				t.Fatalf("write call %d started while waiting for call %d", got, i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("write call %d never started", i)
		}
	}
}

func (fc *fakeConn) LocalAddr() net.Addr              { return fakeAddr{} }
func (fc *fakeConn) RemoteAddr() net.Addr             { return fakeAddr{} }
func (fc *fakeConn) SetDeadline(time.Time) error      { return nil }
func (fc *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (fc *fakeConn) SetWriteDeadline(time.Time) error { return nil }

type fakeAddr struct{}

func (fakeAddr) Network() string { return "fake" }
func (fakeAddr) String() string  { return "fake" }

// startOn starts a Conn over nc speaking proto, configured by cfg (OnPush,
// MaxBulk, health and bounds), as Dial does after the handshake.
func startOn(nc net.Conn, proto int, cfg Config) *Conn {
	mc := newMeteredConn(nc)
	rd := resp.NewReader(mc)
	rd.MaxBulk = cfg.MaxBulk
	return start(mc, rd, proto, cfg, nil)
}

// startFake starts a Conn over a new fakeConn speaking proto.
func startFake(t *testing.T, proto int, onPush func(resp.Value)) (*Conn, *fakeConn) {
	t.Helper()
	return startFakeConfig(t, proto, Config{OnPush: onPush})
}

// startFakeConfig starts a Conn configured by cfg over a new fakeConn.
func startFakeConfig(t *testing.T, proto int, cfg Config) (*Conn, *fakeConn) {
	t.Helper()
	fc := newFakeConn()
	c := startOn(fc, proto, cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c, fc
}

// cmd encodes a command.
func cmd(args ...string) []byte {
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// newFrame returns a pooled frame carrying the command args.
func newFrame(want Want, args ...string) *Frame { return frameIn(&defaultPool, want, args...) }

// frameIn returns a frame of fp carrying the command args. Tests in a
// synctest bubble use a pool of their own: a frame's channel belongs to
// the bubble that made it.
func frameIn(fp *FramePool, want Want, args ...string) *Frame {
	f := fp.Get()
	f.Buf = append(f.Buf[:0], cmd(args...)...)
	f.Want = want
	return f
}

// submit submits f and fails the test if the connection refuses it.
func submit(t *testing.T, c *Conn, f *Frame) {
	t.Helper()
	if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
		t.Fatalf("Submit: %v", err)
	}
}

// waitOK waits for f (bounded by a generous safety timeout, never used as
// synchronisation) and fails the test unless it completed.
func waitOK(t *testing.T, f *Frame) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Wait(ctx, time.Time{}); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func bulk(s string) []byte { return resp.AppendBulkString(nil, s) }

var _ io.ReadWriteCloser = (*fakeConn)(nil)
