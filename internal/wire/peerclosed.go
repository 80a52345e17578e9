//go:build !plan9 && !windows

package wire

import (
	"errors"
	"syscall"
)

// peerClosed reports whether a write failed because the server closed
// the connection (a reset or a broken pipe) rather than for another
// reason: what the server sent before its close is then still readable.
func peerClosed(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
