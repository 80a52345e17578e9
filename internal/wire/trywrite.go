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

// peerCloseChecker is a connection that can tell, without waiting and
// without consuming a byte, whether its peer has closed it.
type peerCloseChecker interface {
	// peerClosed returns io.EOF when the peer closed the connection, the
	// socket's error when it failed, and nil when it is open (bytes may
	// be waiting) or when that cannot be known.
	peerClosed() error
}

// newMeteredConn wraps nc, with its non-blocking write and its check of
// the peer's close when it has them.
func newMeteredConn(nc net.Conn) *meteredConn {
	m := &meteredConn{Conn: nc}
	if w, ok := nc.(nonBlockingWriter); ok {
		m.try = w
	} else if w := rawWriter(nc); w != nil {
		m.try = w
	}
	if p, ok := nc.(peerCloseChecker); ok {
		m.peer = p
	} else if p, ok := m.try.(peerCloseChecker); ok {
		m.peer = p
	}
	return m
}

// peerClosed reports the peer's close of the connection, when it can be
// known without waiting (see [peerCloseChecker]); nil otherwise. Only the
// holder of the reader's role calls it, while nothing is owed.
func (m *meteredConn) peerClosed() error {
	if m.peer == nil {
		return nil
	}
	return m.peer.peerClosed()
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
