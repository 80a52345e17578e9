package testenv

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// topologyLockFile is shared by every test binary of one machine: the
// shared servers are machine-wide.
var topologyLockFile = filepath.Join(os.TempDir(), "respire-go-topology.lock")

// The process holds the file lock once, however many of its tests use it
// (a second flock on another descriptor of the same process would wait
// for the first).
var topo struct {
	sync.Mutex
	f         *os.File
	holders   int
	exclusive bool
}

// UseTopology holds the machine-wide lock of the shared servers for the
// rest of the test: shared by tests that only send commands (every
// address lookup of this package takes it), exclusive (changeRoles) by
// tests that fail over, kill or migrate, so that no test of another
// package (go test runs packages in parallel) sees a topology change it
// did not cause, and by tests that count server-wide counters
// ([CountCommands]). Within one test binary the lock is the process's:
// its tests run one at a time unless they are parallel, and parallel
// tests must not take it exclusively. The lock is released when the last
// test holding it ends.
func UseTopology(t testing.TB, changeRoles bool) {
	t.Helper()
	topo.Lock()
	defer topo.Unlock()
	if topo.f == nil {
		f, err := os.OpenFile(topologyLockFile, os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatalf("topology lock: %v", err)
		}
		topo.f = f
	}
	if topo.holders == 0 || (changeRoles && !topo.exclusive) {
		how := syscall.LOCK_SH
		if changeRoles {
			how = syscall.LOCK_EX
		}
		if err := syscall.Flock(int(topo.f.Fd()), how); err != nil {
			t.Fatalf("topology lock: %v", err)
		}
		topo.exclusive = changeRoles
	}
	topo.holders++
	t.Cleanup(func() {
		topo.Lock()
		defer topo.Unlock()
		if topo.holders--; topo.holders == 0 {
			_ = topo.f.Close() // closing releases the lock
			topo.f, topo.exclusive = nil, false
		}
	})
}

// CountCommands holds the shared servers exclusively for the rest of the
// test when addr is one of them ([IsShared]): a test that compares INFO
// commandstats before and after an action counts only its own commands,
// whatever other packages' tests send meanwhile. Call it before the
// first count.
func CountCommands(t testing.TB, addr string) {
	t.Helper()
	if IsShared(addr) {
		UseTopology(t, true)
	}
}
