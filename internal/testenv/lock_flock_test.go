//go:build unix && !aix && (!solaris || illumos)

package testenv

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// lockState reports how another open file description of the lock file
// could take it now: whether shared, whether exclusively (without
// waiting). ok is true: the file lock is there to witness.
func lockState(t *testing.T) (sharedFree, exclusiveFree, ok bool) {
	t.Helper()
	try := func(how int) bool {
		f, err := os.Open(topologyLockFile)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err != nil && !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatal(err)
		}
		return err == nil
	}
	return try(syscall.LOCK_SH), try(syscall.LOCK_EX), true
}
