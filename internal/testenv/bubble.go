package testenv

import (
	"runtime"
	"testing"
	"testing/synctest"
)

// Bubble runs f in a synctest bubble with the sync.Pools emptied before
// and after: a pooled frame keeps the channel and timer it was made with,
// which belong to the bubble that made them, and a frame reused in
// another bubble crashes the test binary ("receive on synctest channel
// from outside bubble"). Two collections empty a pool.
func Bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	runtime.GC()
	runtime.GC()
	defer func() {
		runtime.GC()
		runtime.GC()
	}()
	synctest.Test(t, f)
}
