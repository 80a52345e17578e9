package testenv

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExclusiveLockComesFirst: a test that counts commands or changes
// roles must take the servers exclusively before it takes them shared; a
// later exclusive request fails the test, naming the rule, and leaves
// the lock shared (it is never converted, which would drop it before
// waiting).
func TestExclusiveLockComesFirst(t *testing.T) {
	saved := topologyLockFile
	topologyLockFile = filepath.Join(t.TempDir(), "topology.lock") // not the machine's: no wait for other binaries
	t.Cleanup(func() { topologyLockFile = saved })
	if topo.holders != 0 {
		t.Fatalf("%d holders before the test", topo.holders)
	}
	wantRule := func(t *testing.T, r *recorder) {
		t.Helper()
		if !strings.Contains(r.failed, "testenv.CountCommands or testenv.UseTopology(t, true) first") {
			t.Errorf("failure = %q, want the rule named", r.failed)
		}
	}
	wantShared := func(t *testing.T) {
		t.Helper()
		if shared, exclusive, ok := lockState(t); ok && (!shared || exclusive) {
			t.Errorf("lock free shared = %v, exclusively = %v; want it held shared", shared, exclusive)
		}
	}
	wantExclusive := func(t *testing.T) {
		t.Helper()
		if shared, _, ok := lockState(t); ok && shared {
			t.Error("lock free shared; want it held exclusively")
		}
	}

	t.Run("LookupThenCount", func(t *testing.T) {
		t.Setenv(EnvStandaloneAddr, "127.0.0.1:1")
		r := &recorder{TB: t}
		CountCommands(r, Standalone(r))
		wantRule(t, r)
		wantShared(t)
	})
	sharedThenExclusive := func(t *testing.T) *recorder {
		r := &recorder{TB: t}
		UseTopology(r, false)
		UseTopology(r, true)
		return r
	}
	wantNoFailure := func(t *testing.T, r *recorder) {
		t.Helper()
		if r.failed != "" {
			t.Errorf("failed: %s", r.failed)
		}
	}

	t.Run("SharedThenExclusive", func(t *testing.T) {
		wantRule(t, sharedThenExclusive(t))
		wantShared(t)
	})
	t.Run("ExclusiveFirst", func(t *testing.T) {
		t.Setenv(EnvStandaloneAddr, "127.0.0.1:1")
		r := &recorder{TB: t}
		CountCommands(r, "127.0.0.1:1")
		Standalone(r)
		UseTopology(r, true)
		wantNoFailure(t, r)
		wantExclusive(t)
	})
	t.Run("SubtestOfExclusiveHolder", func(t *testing.T) {
		UseTopology(t, true)
		t.Run("Sub", func(t *testing.T) { wantNoFailure(t, sharedThenExclusive(t)) })
		wantExclusive(t)
	})
	t.Run("SubtestOfSharedHolder", func(t *testing.T) {
		UseTopology(t, false)
		t.Run("Sub", func(t *testing.T) {
			r := &recorder{TB: t}
			UseTopology(r, true)
			wantRule(t, r)
		})
		wantShared(t)
	})
	t.Run("WhileAnotherTestHoldsIt", func(t *testing.T) {
		UseTopology(t, false)
		r := &recorder{TB: t, name: "TestSomeParallelTest"}
		UseTopology(r, true)
		if !strings.Contains(r.failed, "a parallel test must not") {
			t.Errorf("failure = %q, want the parallel rule named", r.failed)
		}
		wantShared(t)
	})
	if shared, exclusive, ok := lockState(t); ok && (!shared || !exclusive) {
		t.Errorf("lock free shared = %v, exclusively = %v after every holder ended; want free", shared, exclusive)
	}
}
