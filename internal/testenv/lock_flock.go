//go:build unix && !aix && (!solaris || illumos)

package testenv

import (
	"os"
	"syscall"
)

// lockFile takes an flock(2) on f, shared or exclusive, waiting for it.
// Closing f releases it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	return syscall.Flock(int(f.Fd()), how)
}
