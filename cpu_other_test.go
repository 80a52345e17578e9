//go:build !unix

package respire

// processCPU cannot read the process's CPU time on this system.
func processCPU() (ns int64, ok bool) { return 0, false }
