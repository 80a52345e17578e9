//go:build unix

package respire

import "syscall"

// processCPU returns the CPU time (user and system) this process has used,
// in nanoseconds; ok is false when it cannot be read.
func processCPU() (ns int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
