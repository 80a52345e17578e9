//go:build !unix || aix || (solaris && !illumos)

package testenv

import "os"

// lockFile does nothing: this platform's syscall package has no flock,
// so the topology lock is the process's only (see [UseTopology]). Test
// binaries of different packages must then not run at once against the
// shared servers: go test -p 1.
func lockFile(*os.File, bool) error { return nil }
