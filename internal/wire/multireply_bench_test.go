package wire

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// answeringConn answers every Write with one canned reply blob, read back
// in as many Reads as the reader's buffer needs; nothing goes to a socket,
// so the benchmark measures the connection's own work.
type answeringConn struct {
	mu     sync.Mutex
	cond   *sync.Cond
	reply  []byte
	owed   int // replies to deliver
	off    int // bytes of the current reply already read
	closed bool
}

func (a *answeringConn) Write(p []byte) (int, error) {
	a.mu.Lock()
	a.owed++
	a.cond.Signal()
	a.mu.Unlock()
	return len(p), nil
}

func (a *answeringConn) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.owed == 0 && !a.closed {
		a.cond.Wait()
	}
	if a.closed {
		return 0, net.ErrClosed
	}
	n := copy(p, a.reply[a.off:])
	if a.off += n; a.off == len(a.reply) {
		a.off, a.owed = 0, a.owed-1
	}
	return n, nil
}

func (a *answeringConn) Close() error {
	a.mu.Lock()
	a.closed = true
	a.cond.Broadcast()
	a.mu.Unlock()
	return nil
}

func (a *answeringConn) LocalAddr() net.Addr              { return fakeAddr{} }
func (a *answeringConn) RemoteAddr() net.Addr             { return fakeAddr{} }
func (a *answeringConn) SetDeadline(time.Time) error      { return nil }
func (a *answeringConn) SetReadDeadline(time.Time) error  { return nil }
func (a *answeringConn) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkMultiReplyFrame measures one frame of 100 commands (a batch)
// whose 100 "+OK" replies arrive together: the reader's cost per reply
// dominates.
func BenchmarkMultiReplyFrame(b *testing.B) {
	const members = 100
	ac := &answeringConn{reply: bytes.Repeat([]byte("+OK\r\n"), members)}
	ac.cond = sync.NewCond(&ac.mu)
	c := startOn(ac, 3, Config{})
	b.Cleanup(func() { _ = c.Close() })
	set := bytes.Repeat(cmd("SET", "k", "v"), members)
	var values []resp.Value
	var arena []byte
	b.ReportAllocs()
	for b.Loop() {
		f := GetFrame()
		f.Buf = append(f.Buf[:0], set...)
		f.Want, f.Replies = WantValue, members
		f.Values, f.Arena = values[:0], arena[:0] // reused, as a Batch does
		if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
			b.Fatal(err)
		}
		if err := f.Wait(context.Background(), time.Time{}); err != nil || f.Err != nil {
			b.Fatal(err, f.Err)
		}
		if len(f.Values) != members {
			b.Fatalf("got %d values, want %d", len(f.Values), members)
		}
		values, arena = f.Values, f.Arena
		f.Release()
	}
}
