package wire

import (
	"errors"
	"syscall"
)

// peerClosed reports whether a write failed because the server closed
// the connection; Windows reports it as WSAECONNRESET or WSAECONNABORTED.
func peerClosed(err error) bool {
	return errors.Is(err, syscall.WSAECONNRESET) || errors.Is(err, syscall.WSAECONNABORTED) ||
		errors.Is(err, syscall.ECONNRESET)
}
