package wire

import "net"

// A caller that finds the writer idle writes its own frame (see
// [Conn.writeOwn]) without ever blocking: tryWrite moves what the socket
// accepts at once and the writer goroutine writes the rest. Connections
// without a non-blocking write (TLS, a custom Dial's connections) queue
// every frame for the writer goroutine.

// nonBlockingWriter is a connection that can write without waiting: it
// returns how many bytes it accepted at once (possibly none) and an error
// only when the connection failed.
type nonBlockingWriter interface {
	tryWrite(p []byte) (int, error)
}

// newMeteredConn wraps nc, with its non-blocking write when it has one.
func newMeteredConn(nc net.Conn) *meteredConn {
	m := &meteredConn{Conn: nc}
	if w, ok := nc.(nonBlockingWriter); ok {
		m.try = w
	} else {
		m.try = rawWriter(nc)
	}
	return m
}

// canTryWrite reports whether tryWrite is available.
func (m *meteredConn) canTryWrite() bool { return m.try != nil }

// tryWrite writes what the socket accepts without waiting and counts the
// call if it accepted bytes. Only the writer's role calls it.
func (m *meteredConn) tryWrite(p []byte) (int, error) {
	n, err := m.try.tryWrite(p)
	if n > 0 {
		m.writes.Add(1)
	}
	return n, err
}
