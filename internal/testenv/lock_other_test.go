//go:build !unix || aix || (solaris && !illumos)

package testenv

import "testing"

// lockState reports ok false: this platform has no file lock to witness
// (lock_other.go), so only the rules of [UseTopology] are checked.
func lockState(*testing.T) (sharedFree, exclusiveFree, ok bool) { return false, false, false }
