package respiretest

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// FaultConn is a net.Conn whose n-th Write fails after writing a chosen
// number of bytes; see [FailWrites]. Its methods are safe for concurrent
// use as far as the wrapped connection's are.
type FaultConn struct {
	net.Conn
	n, offset int

	mu     sync.Mutex // serialises writes
	writes atomic.Int64
	failed chan struct{}
	// written counts the bytes that reached the wrapped connection.
	written atomic.Int64
}

// FailWrites wraps conn so that its n-th call to Write (counting every call
// on the returned connection from 1, handshake writes included) writes
// only the first offset bytes of its buffer to conn, then closes conn and
// returns (bytes written, [ErrInjectedWrite]).
//
// The bytes before offset are written completely (looping over short
// writes), so a frame that ends at or before offset is fully written and a
// frame that straddles offset is partially written, deterministically. An
// offset of 0 writes nothing of that buffer (definitely unwritten); an
// offset at or beyond the buffer's length writes all of it and still fails.
// A negative offset counts as 0. Writes before the n-th pass through;
// writes after it fail with [ErrInjectedWrite] without touching conn. An n
// below 1 injects nothing (FailWrites then only counts).
func FailWrites(conn net.Conn, n, offset int) *FaultConn {
	return &FaultConn{Conn: conn, n: n, offset: max(offset, 0), failed: make(chan struct{})}
}

// Write implements net.Conn.
func (c *FaultConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := int(c.writes.Add(1))
	switch {
	case c.n < 1 || w < c.n:
		n, err := c.Conn.Write(p)
		c.written.Add(int64(n))
		return n, err
	case w > c.n:
		return 0, ErrInjectedWrite
	}
	part := p[:min(c.offset, len(p))]
	written := 0
	for written < len(part) {
		n, err := c.Conn.Write(part[written:])
		written += n
		if err != nil {
			break
		}
	}
	c.written.Add(int64(written))
	c.Conn.Close()
	close(c.failed)
	return written, ErrInjectedWrite
}

// Writes returns how many times Write has been called.
func (c *FaultConn) Writes() int { return int(c.writes.Load()) }

// Written returns how many bytes reached the wrapped connection.
func (c *FaultConn) Written() int64 { return c.written.Load() }

// Failed returns a channel closed when the injected failure has happened.
func (c *FaultConn) Failed() <-chan struct{} { return c.failed }

// FailWritesDialer wraps dial so that the conn-th connection it returns
// (counting successful dials from 1) is wrapped by [FailWrites] with write
// and offset; other connections are returned unchanged (all of them for a
// conn below 1). It is safe for concurrent use.
func FailWritesDialer(dial DialFunc, conn, write, offset int) DialFunc {
	var dials atomic.Int64
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if int(dials.Add(1)) == conn {
			return FailWrites(c, write, offset), nil
		}
		return c, nil
	}
}
