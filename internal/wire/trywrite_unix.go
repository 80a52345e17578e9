//go:build unix

package wire

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// rawWriter returns the non-blocking writer of a plain TCP or Unix socket,
// nil for any other connection: a wrapper that happens to expose its
// file descriptor may transform what it writes (TLS, a tunnel), so only
// the standard library's own socket types qualify.
func rawWriter(nc net.Conn) nonBlockingWriter {
	var sc syscall.Conn
	switch c := nc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &fdWriter{rc: rc}
	w.fn = w.write // bound once: a closure per call would allocate
	w.peekFn = w.peek
	return w
}

// fdWriter writes to a socket's descriptor once, without waiting for it
// to become writable. Its fields belong to the writer's role.
type fdWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	p   []byte
	n   int
	err error

	// peekFn, peekBuf and peekErr serve peerClosed; they belong to the
	// reader's role.
	peekFn  func(fd uintptr) bool
	peekBuf [1]byte
	peekErr error
}

func (w *fdWriter) write(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), w.p)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN || err == syscall.EWOULDBLOCK {
			err = nil // the send buffer is full: nothing accepted
		}
		w.n, w.err = max(n, 0), err
		return true // never wait for writability
	}
}

func (w *fdWriter) tryWrite(p []byte) (int, error) {
	w.p, w.n, w.err = p, 0, nil
	if err := w.rc.Write(w.fn); err != nil {
		w.err = err // closed
	}
	n, err := w.n, w.err
	w.p = nil
	return n, err
}

// peerClosed looks at the socket's receive queue without waiting and
// without taking a byte from it: a queued end of stream (the peer closed)
// returns io.EOF, a failed socket its error; queued bytes, or none, nil.
func (w *fdWriter) peerClosed() error {
	w.peekErr = nil
	if err := w.rc.Read(w.peekFn); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil // the read deadline has passed: the peek did not run
	}
	err := w.peekErr
	w.peekErr = nil
	return err
}

func (w *fdWriter) peek(fd uintptr) bool {
	for {
		n, _, err := syscall.Recvfrom(int(fd), w.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			// Nothing queued: open.
		case err != nil:
			w.peekErr = err
		case n == 0:
			w.peekErr = io.EOF
		}
		return true // never wait for readability
	}
}
