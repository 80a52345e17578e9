package respire

// Failover groups used wrongly: a nil or zero group, a member client the
// caller closed, and OnSwitch or probe hooks that panic.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A FailoverGroup not made by NewFailoverGroup (nil or its zero value):
// every method fails clearly with an ErrInvalidArgument naming
// NewFailoverGroup, instead of a nil-pointer or closed-channel panic or a
// misleading "no healthy member" (a connection failure, which a caller
// would retry).
func TestFailoverZeroOrNilGroupFailsClearly(t *testing.T) {
	for _, tt := range []struct {
		name string
		g    *FailoverGroup
	}{{"Nil", nil}, {"Zero", new(FailoverGroup)}} {
		t.Run(tt.name, func(t *testing.T) {
			call := func(method string, f func() error) {
				t.Helper()
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic: %v", p)
						}
					}()
					err = f()
				}()
				if !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "NewFailoverGroup") {
					t.Errorf("%s: %v, want an ErrInvalidArgument naming NewFailoverGroup", method, err)
				}
			}
			call("ActiveClient", func() error {
				c, err := tt.g.ActiveClient()
				if c != nil {
					return errors.New("a client")
				}
				return err
			})
			call("Execute", func() error {
				_, err := Execute(context.Background(), tt.g, ReadOnly, func(context.Context, *Client) (int, error) { return 1, nil })
				return err
			})
			call("Close", tt.g.Close)
			call("Close again", tt.g.Close)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("Members panicked: %v", p)
					}
				}()
				if ms := tt.g.Members(); len(ms) != 0 {
					t.Errorf("Members = %v, want none", ms)
				}
			}()
		})
	}
}

// A member's client closed by the caller (against the documentation, say
// a deferred Close of ActiveClient's result) while its server is fine: the
// group's probe connects the member a new client, so the member stays in
// the group instead of being lost for good, and Execute's next attempt
// runs on the new client.
func TestFailoverMemberClientClosedByCallerIsReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		var log switchLog
		opts := bubbleOpts()
		opts.OnSwitch = log.on
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5, InitialBackoff: 150 * milli, MaxBackoff: 150 * milli, Jitter: NoJitter}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, nil) // real PING probes
		old, err := g.ActiveClient()
		if err != nil {
			t.Fatal(err)
		}
		c.at(50 * milli)
		_ = old.Close()
		attempts := 0
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			attempts++
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m0" || attempts != 2 {
			t.Fatalf("Execute after the caller closed member 0's client: %q, %v after %d attempts; want m0 from its new client on the second", v, err, attempts)
		}
		c.at(10*time.Second + 50*milli) // long past any circuit or grace
		st := g.Members()
		if !st[0].Healthy || !st[0].Active || st[0].Client == old || st[0].Client == nil {
			t.Errorf("member 0 %+v: want healthy, active, with a new client", st[0])
		}
		if got := log.get(); len(got) != 0 {
			t.Errorf("switches %v, want none: the member's server never failed", got)
		}
	})
}

// An OnSwitch that panics runs on the group's probe goroutine: the panic
// must not crash the process nor stop the group; the switch stands, the
// probes go on, and later switches are delivered.
func TestFailoverPanickingOnSwitchChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		var log switchLog
		opts := bubbleOpts()
		opts.FailbackGrace = NoFailbackGrace
		opts.OnSwitch = func(from, to int) {
			log.on(from, to)
			panic("OnSwitch panics")
		}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true) // member 0's circuit opens at 300 ms
		c.at(350 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1", got)
		}
		probes.down[0].Store(false) // the probe at 1300 ms closes it: failback at once
		c.at(1350 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("active %d after member 0 recovered, want 0", got)
		}
		if got, want := log.get(), [][2]int{{0, 1}, {1, 0}}; !slices.Equal(got, want) {
			t.Errorf("switches %v, want %v", got, want)
		}
	})
}

// A member's process hooks run its PING probes on the group's probe
// goroutine: a hook that panics there must not crash the process. The
// probe fails instead, and the member's circuit opens as for any failed
// probe.
func TestFailoverPanickingProbeHookFailsTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		h := &panicHook{name: "PING"}
		members[0].Options.Hooks = []Hook{h}
		opts := bubbleOpts()
		opts.FailureThreshold = 1
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, nil)
		h.armed.Store(true) // the probe at 100 ms panics
		c.at(150 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d after member 0's probe panicked, want 1", got)
		}
		if h.armed.Load() {
			t.Fatal("the probe never ran the member's hook")
		}
	})
}
