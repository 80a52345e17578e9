package respire

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
)

// halfGate is a net.Conn whose first write larger than min writes half
// of its buffer, reports it on half, and waits for release before
// writing the rest.
type halfGate struct {
	net.Conn
	min     int
	once    *sync.Once
	half    chan struct{}
	release chan struct{}
}

func (g *halfGate) Write(p []byte) (int, error) {
	if len(p) <= g.min {
		return g.Conn.Write(p)
	}
	gated := false
	g.once.Do(func() { gated = true })
	if !gated {
		return g.Conn.Write(p)
	}
	n, err := g.Conn.Write(p[:len(p)/2])
	close(g.half)
	if err != nil {
		return n, err
	}
	<-g.release
	m, err := g.Conn.Write(p[n:])
	return n + m, err
}

// TestTransactionCancelledHalfWritten: a large transaction whose caller
// cancels while its frame is half written returns at once with the
// context's error (Sent: it may run), every member holding it; the
// connection finishes the frame, which then runs whole (MULTI ... EXEC
// cannot run in part), and its reply is drained, not given to the next
// unit on that connection, whose members get their own replies.
func TestTransactionCancelledHalfWritten(t *testing.T) {
	var once sync.Once
	half, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var d net.Dialer
	c := newClient(t, Options{BatchConnections: 1, Endpoints: []string{standaloneAddr(t)},
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The connection writes a long frame in parts of 256 KiB
			// (wire's writeChunk): the gate holds the first part of the
			// 2 MiB transaction, which the handshake's writes never reach.
			return &halfGate{Conn: nc, min: 128 << 10, once: &once, half: half, release: release}, nil
		}})
	k1, big, k2 := key(t, "n1"), key(t, "big"), key(t, "n2")
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), k1, big, k2) })
	value := strings.Repeat("v", 2<<20)

	ctx, cancel := context.WithCancel(testCtx(t))
	tx := c.NewTransaction()
	incr1 := tx.Incr(k1)
	set := tx.Set(big, value)
	incr2 := tx.Incr(k2)
	done := make(chan error, 1)
	go func() { done <- tx.Execute(ctx) }()
	select {
	case <-half:
	case err := <-done:
		t.Fatalf("Execute = %v before its frame was half written", err)
	}
	cancel()
	err := <-done // before the rest of the frame is written
	var ce *ContextError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || !ce.Sent {
		t.Fatalf("Execute = %v, want a *ContextError for the cancellation, Sent", err)
	}
	for name, e := range map[string]error{"INCR 1": incr1.Err(), "SET": set.Err(), "INCR 2": incr2.Err()} {
		if !errors.Is(e, context.Canceled) {
			t.Errorf("%s = %v, want the unit's cancellation", name, e)
		}
	}
	releaseOnce.Do(func() { close(release) })

	b := c.NewBatch() // large: the same batch connection
	get1 := b.Get(k1)
	strlen := b.StrLen(big)
	incr := b.Incr(k2)
	b.Set(key(t, "pad"), value)
	if err := b.Execute(testCtx(t)); err != nil {
		t.Fatalf("next unit: %v", err)
	}
	_, _ = c.Del(testCtx(t), key(t, "pad"))
	if v, err := get1.Result(); v != "1" || err != nil {
		t.Errorf("GET n1 = %q, %v; want 1 (the transaction ran once, whole)", v, err)
	}
	if n, err := strlen.Result(); n != int64(len(value)) || err != nil {
		t.Errorf("STRLEN big = %d, %v; want %d", n, err, len(value))
	}
	if n, err := incr.Result(); n != 2 || err != nil {
		t.Errorf("INCR n2 = %d, %v; want 2", n, err)
	}
}
