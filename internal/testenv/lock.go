package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// topologyLockFile is shared by every test binary of one machine: the
// shared servers are machine-wide.
var topologyLockFile = filepath.Join(os.TempDir(), "respire-go-topology.lock")

// The process holds the file lock once, however many of its tests use it
// (a second flock on another descriptor of the same process would wait
// for the first). held records, per test name, how each test holding the
// lock took it (true: exclusively).
var topo struct {
	sync.Mutex
	f       *os.File
	holders int
	held    map[string]bool
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
//
// A test that takes the lock exclusively must do so first, before any
// address lookup and before its context's deadline starts: turning a
// shared flock into an exclusive one drops the shared lock before waiting
// (another package's test could change the topology under addresses the
// test already read), and the wait for the other holders would run on
// the test's deadline. UseTopology fails the test that asks for the lock
// exclusively after it (or the test it is a subtest of) took it shared,
// and one that asks while a parallel test holds it. A subtest of a
// test holding the lock exclusively holds it too.
//
// The machine-wide part is an flock(2) on a file in the temporary
// directory, on the Unix systems that have it (lock_flock.go). Elsewhere
// (Windows, Solaris, AIX, Plan 9, WebAssembly) the lock is the process's
// only (lock_other.go): the rules above still hold within one test
// binary, but test binaries of different packages do not wait for each
// other, so run the tests there with `go test -p 1` when they share
// servers.
func UseTopology(t testing.TB, changeRoles bool) {
	t.Helper()
	topo.Lock()
	defer topo.Unlock()
	name := t.Name()
	if exclusive, ok := heldBy(name); ok && (exclusive || !changeRoles) {
		take(t, name, exclusive)
		return
	} else if ok {
		t.Fatalf("testenv: %s asks for the shared servers exclusively after taking them shared (an address lookup, or the test's context): "+
			"a test that counts commands or changes roles must call testenv.CountCommands or testenv.UseTopology(t, true) first, "+
			"before any address lookup and before its context starts", name)
		return
	}
	if changeRoles && topo.holders > 0 {
		t.Fatalf("testenv: %s asks for the shared servers exclusively while another test of this binary holds them: "+
			"a parallel test must not count commands or change roles", name)
		return
	}
	if topo.holders == 0 {
		f, err := os.OpenFile(topologyLockFile, os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatalf("topology lock: %v", err)
			return
		}
		if err := lockFile(f, changeRoles); err != nil {
			_ = f.Close()
			t.Fatalf("topology lock: %v", err)
			return
		}
		topo.f = f
	}
	take(t, name, changeRoles)
}

// heldBy reports whether the test called name, or a test it is a subtest
// of, holds the lock, and whether exclusively (an exclusive holder wins
// over a shared one). topo must be locked.
func heldBy(name string) (exclusive, ok bool) {
	for n := name; ; {
		if ex, found := topo.held[n]; found {
			exclusive, ok = exclusive || ex, true
		}
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			return exclusive, ok
		}
		n = n[:i]
	}
}

// take counts t as a holder of the lock until it ends, recording how it
// first took it. topo must be locked.
func take(t testing.TB, name string, exclusive bool) {
	if _, ok := topo.held[name]; !ok {
		if topo.held == nil {
			topo.held = map[string]bool{}
		}
		topo.held[name] = exclusive
		t.Cleanup(func() {
			topo.Lock()
			defer topo.Unlock()
			delete(topo.held, name)
		})
	}
	topo.holders++
	t.Cleanup(func() {
		topo.Lock()
		defer topo.Unlock()
		if topo.holders--; topo.holders == 0 {
			_ = topo.f.Close() // closing releases the lock
			topo.f = nil
		}
	})
}

// CountCommands holds the shared servers exclusively for the rest of the
// test when addr is one of them ([IsShared]): a test that compares INFO
// commandstats before and after an action counts only its own commands,
// whatever other packages' tests send meanwhile. Call it (or
// UseTopology(t, true)) first in the test, before any address lookup and
// before the test's context starts: see [UseTopology].
func CountCommands(t testing.TB, addr string) {
	t.Helper()
	if IsShared(addr) {
		UseTopology(t, true)
	}
}
