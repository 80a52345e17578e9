package respire

// Failover groups: the circuit and election rules (pure tables), and the
// probe state machine in testing/synctest bubbles over in-memory servers,
// with the bubble helpers the other failover_*_test.go files share.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// ---- pure rules ----

func TestFailoverCircuitObserve(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	const threshold, openFor = 3, time.Second
	tests := []struct {
		name    string
		start   health
		ok      bool
		now     int
		want    health
		changed bool
	}{
		{"FailureBelowThresholdOnlyCounts", health{failures: 1}, false, 10, health{failures: 2}, false},
		{"FailureAtThresholdOpens", health{failures: 2}, false, 10, health{open: true, failures: 3, openUntil: at(1010)}, true},
		{"SuccessResetsConsecutiveFailures", health{failures: 2, since: at(0)}, true, 10, health{since: at(0)}, false},
		{"SuccessBeforeOpenDurationChangesNothing", health{open: true, failures: 3, openUntil: at(1000)}, true, 999,
			health{open: true, failures: 3, openUntil: at(1000)}, false},
		{"SuccessAfterOpenDurationCloses", health{open: true, failures: 3, openUntil: at(1000)}, true, 1000,
			health{since: at(1000)}, true},
		{"FailureWhileOpenExtendsOpenDuration", health{open: true, failures: 3, openUntil: at(1000)}, false, 1000,
			health{open: true, failures: 3, openUntil: at(2000)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.start
			changed := h.observe(tt.ok, at(tt.now), threshold, openFor)
			if h != tt.want || changed != tt.changed {
				t.Errorf("got %+v changed %v, want %+v changed %v", h, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestFailoverCircuitNextProbe(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	closed := health{}
	if got, want := closed.nextProbe(t0, time.Second), t0.Add(time.Second); !got.Equal(want) {
		t.Errorf("closed: next probe %v, want %v", got, want)
	}
	open := health{open: true, openUntil: t0.Add(5 * time.Second)}
	if got, want := open.nextProbe(t0, time.Second), t0.Add(5*time.Second); !got.Equal(want) {
		t.Errorf("open: next probe %v, want the end of the open duration %v", got, want)
	}
}

func TestFailoverElect(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const grace = 10 * time.Second
	up := func(prio int, sinceSec int) candidate {
		return candidate{priority: prio, healthy: true, since: t0.Add(time.Duration(sinceSec) * time.Second)}
	}
	down := func(prio int) candidate { return candidate{priority: prio} }
	tests := []struct {
		name   string
		cs     []candidate
		active int
		now    int // seconds after t0
		want   int
	}{
		{"StartPicksLowestPriority", []candidate{up(2, 0), up(0, 0), up(1, 0)}, -1, 0, 1},
		{"EqualPriorityPrefersFirstGiven", []candidate{up(1, 0), up(1, 0)}, -1, 0, 0},
		{"NegativePriorityIsPreferred", []candidate{up(0, 0), up(-5, 0)}, -1, 0, 1},
		{"NoHealthyMember", []candidate{down(0), down(1)}, 0, 0, -1},
		{"FailoverToBestHealthyAtOnce", []candidate{down(0), up(2, 0), up(1, 100)}, 0, 100, 2},
		{"HealthyActiveStaysDuringGrace", []candidate{up(0, 100), up(1, 0)}, 1, 109, 1},
		{"FailbackAfterGrace", []candidate{up(0, 100), up(1, 0)}, 1, 110, 0},
		{"FailbackPicksBestServedGrace", []candidate{up(0, 105), up(1, 100), up(2, 0)}, 2, 111, 1},
		{"EqualPriorityNeverPreempts", []candidate{up(0, 0), up(0, 0)}, 1, 1000, 1},
		{"WorsePriorityNeverPreempts", []candidate{up(1, 0), up(0, 0)}, 1, 1000, 1},
		{"RecoveryFromNoneSkipsGrace", []candidate{up(1, 100), down(0)}, -1, 100, 0},
		{"FailedActiveTakesBestEvenWithinGrace", []candidate{up(0, 100), down(1)}, 1, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := elect(tt.cs, tt.active, t0.Add(time.Duration(tt.now)*time.Second), grace); got != tt.want {
				t.Errorf("elect = %d, want %d", got, tt.want)
			}
		})
	}
}

// ---- bubble helpers ----

var errProbeDown = errors.New("fake probe: member down")

// fakeProbes drives the circuits: member i's probes fail while down[i].
type fakeProbes struct {
	down  []atomic.Bool
	calls []atomic.Int64
}

func newFakeProbes(n int) *fakeProbes {
	return &fakeProbes{down: make([]atomic.Bool, n), calls: make([]atomic.Int64, n)}
}

func (f *fakeProbes) probe(_ context.Context, m *groupMember) error {
	f.calls[m.index].Add(1)
	if f.down[m.index].Load() {
		return errProbeDown
	}
	return nil
}

// switchLog records OnSwitch calls.
type switchLog struct {
	mu  sync.Mutex
	evs [][2]int
}

func (l *switchLog) on(from, to int) {
	l.mu.Lock()
	l.evs = append(l.evs, [2]int{from, to})
	l.mu.Unlock()
}

func (l *switchLog) get() [][2]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

// memMembers starts one in-memory server per priority and returns members
// reaching them, named member<i>.test:6379.
func memMembers(t *testing.T, prios ...int) ([]FailoverMember, []*respiretest.Server) {
	t.Helper()
	var out []FailoverMember
	var ss []*respiretest.Server
	for i, p := range prios {
		s := respiretest.NewServer(t, respiretest.InMemory())
		ss = append(ss, s)
		out = append(out, FailoverMember{Options: Options{
			Endpoints: []string{"member" + strconv.Itoa(i) + ".test:6379"}, Dialer: s.Dial}, Priority: p})
	}
	return out, ss
}

// bubbleOpts are the timings of the bubble tests: probes every 100 ms,
// three failures open a circuit for 1 s, failback after 2 s.
func bubbleOpts() FailoverGroupOptions {
	return FailoverGroupOptions{ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond,
		FailureThreshold: 3, CircuitOpenDuration: time.Second, FailbackGrace: 2 * time.Second}
}

// fakeGroup starts a group probed by probe (nil: PING) and closes it when
// the test ends.
func fakeGroup(t *testing.T, members []FailoverMember, opts FailoverGroupOptions, probe probeFunc) *FailoverGroup {
	t.Helper()
	g, err := newFailoverGroup(context.Background(), members, opts, probe)
	if err != nil {
		t.Fatalf("newFailoverGroup: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// activeIndex returns the active member's index, or -1.
func activeIndex(g *FailoverGroup) int {
	for _, m := range g.Members() {
		if m.Active {
			return m.Index
		}
	}
	return -1
}

// bubbleClock sleeps the bubble to start+d and lets every goroutine settle.
// Tests pick instants between probe ticks, so no two events coincide.
type bubbleClock struct{ start time.Time }

func (c bubbleClock) at(d time.Duration) {
	time.Sleep(time.Until(c.start.Add(d)))
	synctest.Wait()
}

const milli = time.Millisecond

// ---- the probe state machine ----

func TestFailoverThresholdOfConsecutiveProbeFailuresOpensCircuit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		var log switchLog
		var gp atomic.Pointer[FailoverGroup]
		var seenMu sync.Mutex
		var seen [][]FailoverMemberStatus
		opts := bubbleOpts()
		opts.OnSwitch = func(from, to int) {
			log.on(from, to)
			st := gp.Load().Members() // OnSwitch may read the group
			seenMu.Lock()
			seen = append(seen, st)
			seenMu.Unlock()
		}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		gp.Store(g)
		probes.down[0].Store(true) // probes at 100, 200, 300 ms fail
		c.at(250 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("after 2 failed probes: active %d, want 0 (threshold 3)", got)
		}
		c.at(350 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("after 3 failed probes: active %d, want 1", got)
		}
		if got, want := log.get(), [][2]int{{0, 1}}; !slices.Equal(got, want) {
			t.Errorf("switches %v, want %v", got, want)
		}
		seenMu.Lock()
		if len(seen) != 1 || seen[0][0].Healthy || !seen[0][1].Active {
			t.Errorf("OnSwitch saw %+v, want member 0 unhealthy and member 1 active", seen)
		}
		seenMu.Unlock()
		a, err := g.ActiveClient()
		if err != nil || a != g.Members()[1].Client {
			t.Errorf("ActiveClient = %p, %v; want member 1's client", a, err)
		}
	})
}

func TestFailoverSuccessfulProbeResetsConsecutiveFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), probes.probe)
		// Probes at 100 to 500 ms: fail, fail, succeed, fail, fail.
		for i, down := range []bool{true, true, false, true, true} {
			probes.down[0].Store(down)
			c.at(time.Duration(i+1)*100*milli + 50*milli)
		}
		c.at(550 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("active %d, want 0: the failures were not consecutive", got)
		}
		if !g.Members()[0].Healthy {
			t.Fatal("member 0 unhealthy after non-consecutive failures")
		}
	})
}

func TestFailoverOpenCircuitIsNotProbedUntilOpenDurationThenOneProbeCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), probes.probe)
		probes.down[0].Store(true)
		c.at(350 * milli) // opened at 300 ms, open until 1300 ms
		calls := probes.calls[0].Load()
		probes.down[0].Store(false)
		c.at(1250 * milli)
		if got := probes.calls[0].Load(); got != calls {
			t.Fatalf("open circuit probed %d times during its open duration", got-calls)
		}
		if g.Members()[0].Healthy {
			t.Fatal("member 0 healthy before its open duration ended")
		}
		c.at(1350 * milli)
		if got := probes.calls[0].Load(); got != calls+1 {
			t.Fatalf("probes after the open duration: %d, want 1", got-calls)
		}
		if !g.Members()[0].Healthy {
			t.Fatal("a successful probe after the open duration did not close the circuit")
		}
	})
}

func TestFailoverFailedProbeAfterOpenDurationKeepsCircuitOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), probes.probe)
		probes.down[0].Store(true)
		c.at(1350 * milli) // opened at 300, the probe at 1300 failed: open until 2300
		calls := probes.calls[0].Load()
		probes.down[0].Store(false)
		c.at(2250 * milli)
		if g.Members()[0].Healthy || probes.calls[0].Load() != calls {
			t.Fatal("the circuit did not stay open for another open duration after a failed probe")
		}
		c.at(2350 * milli)
		if !g.Members()[0].Healthy {
			t.Fatal("the circuit did not close at the probe after the second open duration")
		}
	})
}

func TestFailoverFailbackWaitsForGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		var log switchLog
		opts := bubbleOpts()
		opts.OnSwitch = log.on
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		c.at(350 * milli)
		probes.down[0].Store(false)
		c.at(1350 * milli) // member 0 closed at 1300: failback at 3300
		if !g.Members()[0].Healthy || activeIndex(g) != 1 {
			t.Fatalf("member 0 healthy %v, active %d; want healthy and 1 (grace running)", g.Members()[0].Healthy, activeIndex(g))
		}
		c.at(3250 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d before the grace ended, want 1", got)
		}
		c.at(3350 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("active %d after the grace, want 0", got)
		}
		if got, want := log.get(), [][2]int{{0, 1}, {1, 0}}; !slices.Equal(got, want) {
			t.Errorf("switches %v, want %v", got, want)
		}
	})
}

func TestFailoverFailbackGraceRestartsWhenMemberFailsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), probes.probe)
		probes.down[0].Store(true)
		c.at(350 * milli)
		probes.down[0].Store(false)
		c.at(1350 * milli) // closed at 1300
		probes.down[0].Store(true)
		c.at(1650 * milli) // failed at 1400, 1500, 1600: open until 2600
		probes.down[0].Store(false)
		c.at(3350 * milli) // the first grace would have ended at 3300
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1: member 0 failed during its grace", got)
		}
		c.at(4550 * milli) // closed again at 2600: failback at 4600
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d before the new grace ended, want 1", got)
		}
		c.at(4650 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("active %d after the new grace, want 0", got)
		}
	})
}

func TestFailoverPriorityOrdersMembersAndEqualPriorityNeverPreempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 2, 0, 1, 1)
		probes := newFakeProbes(4)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), probes.probe)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d at start, want 1 (priority 0)", got)
		}
		probes.down[1].Store(true)
		c.at(350 * milli)
		if got := activeIndex(g); got != 2 {
			t.Fatalf("active %d, want 2 (priority 1, given before 3)", got)
		}
		probes.down[2].Store(true)
		c.at(650 * milli) // 2 failed at 400, 500, 600
		if got := activeIndex(g); got != 3 {
			t.Fatalf("active %d, want 3 (priority 1)", got)
		}
		probes.down[2].Store(false)
		c.at(4000 * milli) // 2 closed at 1600 and served its grace: same priority as 3
		if got := activeIndex(g); got != 3 {
			t.Fatalf("active %d, want 3: an equal priority never preempts", got)
		}
		probes.down[1].Store(false)
		// 1 closed at the probe after its open duration; after its grace it preempts.
		c.at(8000 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1 (priority 0, grace served)", got)
		}
	})
}

func TestFailoverNoHealthyMemberThenRecoveryWithoutGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		var log switchLog
		opts := bubbleOpts()
		opts.OnSwitch = log.on
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[1].Store(true)
		c.at(350 * milli) // member 1 opened at 300 ms (open until 1300 ms)
		probes.down[0].Store(true)
		c.at(650 * milli) // member 0 opened at 600 ms
		_, err := g.ActiveClient()
		if !errors.Is(err, ErrNoHealthyMember) || !errors.Is(err, ErrConnectionLost) || MayHaveExecuted(err) {
			t.Fatalf("ActiveClient error %v: want ErrNoHealthyMember and ErrConnectionLost, nothing executed", err)
		}
		probes.down[1].Store(false)
		c.at(1350 * milli) // member 1 closed at 1300 ms: active at once, no grace from none
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1", got)
		}
		if got, want := log.get(), [][2]int{{0, -1}, {-1, 1}}; !slices.Equal(got, want) {
			t.Errorf("switches %v, want %v", got, want)
		}
	})
}

func TestFailoverMemberUnreachableAtStartJoinsThroughProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		if err := srv[0].RefuseDials(1); err != nil {
			t.Fatal(err)
		}
		var log switchLog
		opts := bubbleOpts()
		opts.OnSwitch = log.on
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, nil) // real PING probes
		st := g.Members()
		if st[0].Healthy || st[0].Client != nil || !st[1].Active {
			t.Fatalf("status at start %+v: want member 0 unhealthy and unconnected, member 1 active", st)
		}
		c.at(150 * milli) // the probe at 100 ms connected member 0
		if st := g.Members(); !st[0].Healthy || st[0].Client == nil || !st[1].Active {
			t.Fatalf("status %+v: want member 0 connected and healthy, member 1 still active (grace)", st)
		}
		c.at(2150 * milli)
		if got := activeIndex(g); got != 0 {
			t.Fatalf("active %d after the grace, want 0", got)
		}
		if got, want := log.get(), [][2]int{{1, 0}}; !slices.Equal(got, want) {
			t.Errorf("switches %v, want %v", got, want)
		}
	})
}

func TestFailoverRealPingProbesOpenCircuitOfUnreachableMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), nil)
		srv[0].Close() // the server is gone: PING fails, and so does redialing
		c.at(350 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1 after three failed PINGs", got)
		}
	})
}

// A member whose user may not run PING (the group's probe) answers the
// probe with NOPERM: the server is up and serves the user's commands, so
// its circuit stays closed and it stays active.
func TestFailoverProbeRefusedByACLKeepsMemberHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		refuse := srv[0].MustAddRule(t, respiretest.Rule{Command: "PING", Times: respiretest.Always,
			Action: respiretest.Inject("NOPERM this user has no permissions to run the 'ping' command")})
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), nil) // real PING probes
		c.at(550 * milli)                             // five probes
		if st := g.Members(); !st[0].Healthy || activeIndex(g) != 0 {
			t.Errorf("members %+v: want member 0 healthy and active after its probes were refused", st)
		}
		if n := refuse.Applied(); n != 5 {
			t.Errorf("%d PINGs refused, want the five probes", n)
		}
	})
}
