package respire

// Failover groups: the circuit and election rules (pure tables), the
// probe state machine and Execute's retries in testing/synctest bubbles
// over in-memory servers, bad input, metrics, Close, and one proof on two
// real redis-server processes: kill -9 of the active member under load,
// switch, no replayed INCR, retried GETs, restart and failback.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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

// ---- NewFailoverGroup's input ----

func TestFailoverNewGroupRejectsBadInputBeforeDialing(t *testing.T) {
	var dials atomic.Int64
	dialer := func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dial expected")
	}
	m := func(addrs ...string) FailoverMember {
		return FailoverMember{Options: Options{Endpoints: addrs, Dialer: dialer}}
	}
	two := []FailoverMember{m("a.test:1"), m("b.test:1")}
	tests := []struct {
		name    string
		members []FailoverMember
		opts    FailoverGroupOptions
		field   string
	}{
		{"NoMembers", nil, FailoverGroupOptions{}, "members"},
		{"EmptyMembers", []FailoverMember{}, FailoverGroupOptions{}, "members"},
		{"DuplicateAddress", []FailoverMember{m("a.test:1"), m("a.test:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateAddressAnyCase", []FailoverMember{m("A.Test:1"), m("a.test:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateAddressPortWithZeros", []FailoverMember{m("a.test:6379"), m("a.test:06379")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateIPv6AddressWritten", []FailoverMember{m("[::1]:1"), m("[0:0::0:1]:1")}, FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateClusterSeed", []FailoverMember{m("a.test:1"),
			{Options: Options{Endpoints: []string{"c.test:1", "a.test:1"}, Cluster: &ClusterOptions{}, Dialer: dialer}}},
			FailoverGroupOptions{}, "members[1].Options"},
		{"DuplicateSentinel", []FailoverMember{
			{Options: Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"s.test:1"}}, Dialer: dialer}},
			{Options: Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"S.test:1"}}, Dialer: dialer}}},
			FailoverGroupOptions{}, "members[1].Options"},
		{"MemberWithoutEndpoint", []FailoverMember{m()}, FailoverGroupOptions{}, "members[0].Options.Endpoints"},
		{"InvalidMemberOption", []FailoverMember{m("a.test:1"),
			{Options: Options{Endpoints: []string{"b.test:1"}, DialTimeout: -1}}},
			FailoverGroupOptions{}, "members[1].Options.DialTimeout"},
		{"InvalidMemberRetryPolicy", []FailoverMember{{Options: Options{Endpoints: []string{"b.test:1"},
			RetryPolicy: &RetryPolicy{Jitter: 2}}}}, FailoverGroupOptions{}, "members[0].Options.RetryPolicy.Jitter"},
		{"NegativeThreshold", two, FailoverGroupOptions{FailureThreshold: -1}, "FailoverGroupOptions.FailureThreshold"},
		{"ThresholdTooLarge", two, FailoverGroupOptions{FailureThreshold: 101}, "FailoverGroupOptions.FailureThreshold"},
		{"ProbeIntervalTooShort", two, FailoverGroupOptions{ProbeInterval: 5 * milli}, "FailoverGroupOptions.ProbeInterval"},
		{"NegativeProbeInterval", two, FailoverGroupOptions{ProbeInterval: -time.Second}, "FailoverGroupOptions.ProbeInterval"},
		{"ProbeTimeoutOverInterval", two, FailoverGroupOptions{ProbeInterval: 100 * milli, ProbeTimeout: 101 * milli}, "FailoverGroupOptions.ProbeTimeout"},
		{"NegativeProbeTimeout", two, FailoverGroupOptions{ProbeTimeout: -1}, "FailoverGroupOptions.ProbeTimeout"},
		{"NegativeCircuitOpenDuration", two, FailoverGroupOptions{CircuitOpenDuration: -1}, "FailoverGroupOptions.CircuitOpenDuration"},
		{"NegativeFailbackGrace", two, FailoverGroupOptions{FailbackGrace: -2}, "FailoverGroupOptions.FailbackGrace"},
		{"GroupRetryPolicy", two, FailoverGroupOptions{RetryPolicy: &RetryPolicy{MaxAttempts: 101}}, "FailoverGroupOptions.RetryPolicy.MaxAttempts"},
		{"UnknownMetricGroup", two, FailoverGroupOptions{Metrics: 1 << 7}, "FailoverGroupOptions.Metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewFailoverGroup(context.Background(), tt.members, tt.opts)
			if g != nil {
				_ = g.Close()
				t.Fatal("got a group for invalid input")
			}
			var ce *ConfigError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field {
				t.Errorf("field %q, want %q (%v)", ce.Field, tt.field, err)
			}
			if MayHaveExecuted(err) {
				t.Error("MayHaveExecuted = true for a configuration error")
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("%d dials before validation failed", n)
			}
		})
	}
}

// A client's metric group in the group's options is refused with a
// reason that says which group applies, not as an unknown group.
func TestFailoverNewGroupRefusesClientMetricGroupsNamingTheGroupsOwn(t *testing.T) {
	for _, mg := range []MetricGroups{MetricsCommands, MetricsConnections, MetricsResiliency | MetricsCommands} {
		_, err := NewFailoverGroup(context.Background(), []FailoverMember{{Options: Options{Endpoints: []string{"a.test:1"}}}},
			FailoverGroupOptions{Metrics: mg})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "FailoverGroupOptions.Metrics" ||
			strings.Contains(ce.Reason, "unknown") || !strings.Contains(ce.Reason, "MetricsResiliency") {
			t.Errorf("Metrics %b: err = %v; want a ConfigError saying only MetricsResiliency applies", mg, err)
		}
	}
}

func TestFailoverNewGroupCopiesMemberOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		g := fakeGroup(t, members, bubbleOpts(), newFakeProbes(2).probe)
		members[0].Options.Endpoints[0] = "changed.test:1"
		if got := g.Members()[0].Addr; got != "member0.test:6379" {
			t.Errorf("member 0 is %q after the caller changed its slice", got)
		}
	})
}

// A member that could not connect at start is connected later by its
// probe, from the group's copy of its Options: the caller changing its
// Hooks slice or its ClientCache afterwards changes nothing.
func TestFailoverLateMemberConnectIgnoresCallersLaterChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		if err := srv[0].RefuseDials(1); err != nil {
			t.Fatal(err)
		}
		members[0].Options.Hooks = []Hook{swallowHook{}}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), nil) // real PING probes
		members[0].Options.Hooks[0] = nil             // would make Connect fail validation
		c.at(150 * milli)                             // the probe at 100 ms connects member 0
		if st := g.Members(); !st[0].Healthy || st[0].Client == nil {
			t.Fatalf("member 0 %+v: want it connected by its probe with the options it was given", st[0])
		}
	})
	// ClientCache needs CLIENT TRACKING, which the in-memory server lacks:
	// check the copy itself.
	o := Options{Endpoints: []string{"a.test:1"}, ClientCache: &CacheOptions{MaxEntries: 5}, Hooks: []Hook{swallowHook{}}}
	cp := copyOptions(o)
	o.ClientCache.MaxEntries = -1
	o.Hooks[0] = nil
	if cp.ClientCache.MaxEntries != 5 || cp.Hooks[0] == nil {
		t.Errorf("copy changed with the original: ClientCache %+v, Hooks %v", *cp.ClientCache, cp.Hooks)
	}
}

func TestFailoverNewGroupFailsWhenNoMemberConnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		for _, s := range srv {
			if err := s.RefuseDials(1); err != nil {
				t.Fatal(err)
			}
		}
		g, err := NewFailoverGroup(context.Background(), members, bubbleOpts())
		if g != nil {
			_ = g.Close()
			t.Fatal("got a group although no member connected")
		}
		if !errors.Is(err, ErrNoHealthyMember) || !errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("err = %v, want ErrNoHealthyMember and ErrConnectionLost", err)
		}
		for _, name := range []string{"member0.test:6379", "member1.test:6379"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
	})
}

func TestFailoverNewGroupFailsWhenMemberRejectsHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[1].Engine().RequireAuth("secret")
		members[1].Options.Password = "wrong"
		g, err := NewFailoverGroup(context.Background(), members, bubbleOpts())
		if g != nil {
			_ = g.Close()
			t.Fatal("got a group with a member whose server rejects its password")
		}
		var se *ServerError
		if !errors.As(err, &se) || !se.IsAuth() {
			t.Fatalf("err = %v, want the server's authentication rejection", err)
		}
		if !strings.Contains(err.Error(), "failover member 1 (member1.test:6379)") {
			t.Errorf("error %q does not name the member", err)
		}
		synctest.Wait()
		if n := srv[0].Sessions(); n != 0 {
			t.Errorf("member 0's server has %d sessions: its client was not closed", n)
		}
	})
}

// A member whose server's TLS certificate does not verify (an unknown
// authority, another name) will not heal by itself either: the group fails
// at once, naming the member, instead of starting it as unreachable.
func TestFailoverNewGroupFailsWhenMemberCertificateDoesNotVerify(t *testing.T) {
	tc := newTestCert(t, "127.0.0.1")
	addr := tlsListener(t, tc.cert)
	for name, cfg := range map[string]*tls.Config{
		"UnknownAuthority": {MinVersion: tls.VersionTLS12},
		"OtherName":        {RootCAs: tc.pool, ServerName: "other.test", MinVersion: tls.VersionTLS12},
	} {
		t.Run(name, func(t *testing.T) {
			members, _ := memMembers(t, 0, 1)
			members[1].Options = Options{Endpoints: []string{addr}, TLS: cfg}
			g, err := NewFailoverGroup(context.Background(), members, FailoverGroupOptions{})
			if g != nil {
				_ = g.Close()
				t.Fatal("got a group with a member whose certificate does not verify")
			}
			var cv *tls.CertificateVerificationError
			if !errors.As(err, &cv) || !strings.Contains(err.Error(), "failover member 1 ("+addr+")") {
				t.Fatalf("err = %v, want the member's certificate verification failure, naming it", err)
			}
		})
	}
}

// ---- Execute ----

// where marks each in-memory server with its member's name, so a GET of
// "where" tells which member answered.
func where(srv []*respiretest.Server) {
	for i, s := range srv {
		_ = s.Engine().Set("where", "m"+strconv.Itoa(i))
	}
}

// attemptLog records, for each call of an operation, the member it ran on.
type attemptLog struct {
	g  *FailoverGroup
	on []int
}

func (l *attemptLog) ran(c *Client) {
	for _, m := range l.g.Members() {
		if m.Client == c {
			l.on = append(l.on, m.Index)
			return
		}
	}
	l.on = append(l.on, -1)
}

func TestFailoverExecuteRequiresCategoryAndSendsNothingOnBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		calls := 0
		get := func(ctx context.Context, c *Client) (string, error) { calls++; return c.Get(ctx, "k") }
		for _, tt := range []struct {
			name string
			run  func() error
		}{
			{"NoCategory", func() error { _, err := Execute(context.Background(), g, 0, get); return err }},
			{"UndefinedCategory", func() error { _, err := Execute(context.Background(), g, RetryCategory(200), get); return err }},
			{"NilGroup", func() error { _, err := Execute(context.Background(), nil, ReadOnly, get); return err }},
			{"NilOperation", func() error {
				_, err := Execute[string](context.Background(), g, ReadOnly, nil)
				return err
			}},
		} {
			err := tt.run()
			if !errors.Is(err, ErrInvalidArgument) || MayHaveExecuted(err) {
				t.Errorf("%s: err = %v, want ErrInvalidArgument and nothing executed", tt.name, err)
			}
		}
		if calls != 0 {
			t.Errorf("the operation ran %d times", calls)
		}
		if n := srv[0].Stats("GET").Received + srv[1].Stats("GET").Received; n != 0 {
			t.Errorf("%d GETs reached the servers", n)
		}
	})
}

func TestFailoverExecuteHealthyRunsOnActiveMemberOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 1, 0)
		where(srv)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{1}) {
			t.Fatalf("got %q, %v on %v; want m1 from member 1 once", v, err, log.on)
		}
	})
}

func TestFailoverExecuteRetriesReadOnNewActiveMemberAfterSwitch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true) // member 0's circuit opens at 300 ms
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" {
			t.Fatalf("got %q, %v; want m1 from member 1", v, err)
		}
		// Attempts at 0, 70, ..., 280 ms on member 0 (still active), then 350 ms on member 1.
		if want := []int{0, 0, 0, 0, 0, 1}; !slices.Equal(log.on, want) {
			t.Errorf("attempts ran on %v, want %v", log.on, want)
		}
		if got, want := failoverCollect(t, reader).retries, (retryCounts{"read_only/attempted": 5, "read_only/succeeded": 1}); !got.equal(want) {
			t.Errorf("retries %v, want %v", got, want)
		}
	})
}

func TestFailoverExecuteNeverReplaysWriteAccumulatingUnderDefaultPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "INCR", Action: respiretest.DropAfterForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		calls := 0
		_, err := Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			calls++
			return c.Incr(ctx, "n")
		})
		if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
			t.Fatalf("err = %v, want the lost reply, possibly executed", err)
		}
		if calls != 1 || srv[0].Executed("INCR") != 1 || srv[1].Stats("INCR").Received != 0 {
			t.Errorf("calls %d, INCR executed on member 0 %d, received by member 1 %d; want 1, 1, 0",
				calls, srv[0].Executed("INCR"), srv[1].Stats("INCR").Received)
		}

		// An attempt that finds no healthy member counts as possibly
		// executed too: it is not retried for a WriteAccumulating operation.
		probes.down[1].Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		calls = 0
		_, err = Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			calls++
			return c.Incr(ctx, "n")
		})
		var re *RetryError
		if !errors.Is(err, ErrNoHealthyMember) || errors.As(err, &re) || calls != 0 {
			t.Errorf("no healthy member: err %v, calls %d; want ErrNoHealthyMember after one attempt, no call", err, calls)
		}
	})
}

func TestFailoverExecuteReplaysWriteAccumulatingOnOtherMemberOnlyWhenPermitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "INCR", Times: respiretest.Always, Action: respiretest.DropAfterForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, MaxCommandRetryCategory: WriteAccumulating,
			InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			log.ran(c)
			return c.Incr(ctx, "n")
		})
		if err != nil || v != 1 || log.on[len(log.on)-1] != 1 {
			t.Fatalf("got %d, %v on %v; want 1 from member 1", v, err, log.on)
		}
		if got := srv[0].Executed("INCR"); got != len(log.on)-1 {
			t.Errorf("member 0 executed INCR %d times, want %d: the accepted duplicates", got, len(log.on)-1)
		}
	})
}

func TestFailoverExecuteNeverOrNoPolicyRunsOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy *RetryPolicy
		cat    RetryCategory
	}{
		{"NoPolicy", nil, ReadOnly},
		{"NeverCategory", &RetryPolicy{MaxAttempts: 10, InitialBackoff: NoBackoff}, Never},
		{"PolicyMaxNever", &RetryPolicy{MaxAttempts: 10, MaxCommandRetryCategory: Never}, ReadOnly},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				members, srv := memMembers(t, 0, 1)
				srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
				opts := bubbleOpts()
				opts.RetryPolicy = tt.policy
				g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
				calls := 0
				_, err := Execute(context.Background(), g, tt.cat, func(ctx context.Context, c *Client) (string, error) {
					calls++
					return c.Get(ctx, "k")
				})
				var re *RetryError
				if !errors.Is(err, ErrConnectionLost) || errors.As(err, &re) || calls != 1 {
					t.Errorf("err %v after %d calls, want the member's connection loss after one call", err, calls)
				}
			})
		})
	}
}

func TestFailoverExecuteMemberPolicyRetriesInsideTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		members[0].Options.RetryPolicy = &RetryPolicy{InitialBackoff: NoBackoff}
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		calls := 0
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			calls++
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m0" || calls != 1 || srv[0].Stats("GET").Received != 2 {
			t.Fatalf("got %q, %v, %d calls, %d GETs; want m0 after the member's own resend, one call",
				v, err, calls, srv[0].Stats("GET").Received)
		}
		if got := failoverCollect(t, reader).retries; len(got) != 0 {
			t.Errorf("the group recorded retries %v for the member's own resend", got)
		}
	})
}

func TestFailoverExecuteDoesNotRetryServerRepliesOrOwnErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.ErrLoading)})
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5, InitialBackoff: NoBackoff}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		mine := errors.New("my own failure")
		for _, tt := range []struct {
			name string
			fn   func(ctx context.Context, c *Client) (string, error)
			want error
		}{
			{"ServerReply", func(ctx context.Context, c *Client) (string, error) { return c.Get(ctx, "k") }, &ServerError{Code: "LOADING"}},
			{"OwnError", func(context.Context, *Client) (string, error) { return "", mine }, mine},
		} {
			calls := 0
			_, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
				calls++
				return tt.fn(ctx, c)
			})
			if !errors.Is(err, tt.want) || calls != 1 {
				t.Errorf("%s: err %v after %d calls, want %v after one", tt.name, err, calls, tt.want)
			}
		}
	})
}

func TestFailoverExecuteOpenCircuitEndsOperationWhenNoOtherMemberIsHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[1].Store(true)
		time.Sleep(350 * milli) // member 1 is open until 1300 ms
		synctest.Wait()
		calls := 0
		_, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			calls++
			probes.down[0].Store(true)
			time.Sleep(350 * milli) // member 0's circuit opens during the attempt
			return c.Get(ctx, "k")
		})
		var re *RetryError
		if !errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrNoHealthyMember) || errors.As(err, &re) || calls != 1 {
			t.Errorf("err %v after %d calls; want the attempt's own failure, not retried", err, calls)
		}
	})
}

func TestFailoverExecuteOpenCircuitMovesRetryToOtherMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}
		g := fakeGroup(t, members, opts, probes.probe)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			if len(log.on) == 1 {
				probes.down[0].Store(true)
				time.Sleep(350 * milli) // member 0's circuit opens during the attempt
			}
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{0, 1}) {
			t.Errorf("got %q, %v on %v; want m1 from the second attempt on member 1", v, err, log.on)
		}
	})
}

func TestFailoverExecuteNoHealthyMemberRetriesWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 20, InitialBackoff: 100 * milli, MaxBackoff: 100 * milli, Jitter: NoJitter}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli) // both open until 1300 ms
		probes.down[1].Store(false)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		// Attempts at 350, 450, ..., 1250 ms find no member; at 1350 ms member 1 is back.
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{1}) {
			t.Fatalf("got %q, %v on %v; want m1 from member 1 once it recovered", v, err, log.on)
		}
		// Resends that found no member start nothing and record nothing.
		if got, want := failoverCollect(t, reader).retries, (retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}); !got.equal(want) {
			t.Errorf("retries %v, want %v", got, want)
		}
	})
}

func TestFailoverExecuteNoHealthyMemberExhaustsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * milli}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		calls := 0
		_, err := Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 3 || !errors.Is(err, ErrNoHealthyMember) || !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("err = %v, want a RetryError of 3 attempts wrapping ErrNoHealthyMember", err)
		}
		if MayHaveExecuted(err) || calls != 0 {
			t.Errorf("MayHaveExecuted %v, calls %d; want false, 0", MayHaveExecuted(err), calls)
		}
		if got := failoverCollect(t, reader).retries; len(got) != 0 {
			t.Errorf("retries %v recorded for an operation that never ran", got)
		}
	})
}

func TestFailoverExecuteCancellationDuringBackoffEndsWithCallersError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: NoJitter}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*milli, cancel)
		_, err := Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		var ce *ContextError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &ce) || !errors.Is(ce.Last, ErrNoHealthyMember) {
			t.Fatalf("err = %v, want the caller's cancellation with the last failure", err)
		}
		if got := time.Since(c.start); got != 450*milli {
			t.Errorf("ended %v after start, want 450ms: at the cancellation", got)
		}
		// A context that has already ended runs nothing.
		calls := 0
		_, err = Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		if !errors.Is(err, context.Canceled) || calls != 0 {
			t.Errorf("ended context: err %v, calls %d; want Canceled, 0", err, calls)
		}
	})
}

// An operation that ends during a backoff (its context cancelled, or the
// group closed) reports its one final outcome: exhausted once it has
// resent, nothing when it ends before its first resend.
func TestFailoverExecuteEndedDuringBackoffIsExhaustedAfterResend(t *testing.T) {
	for _, tt := range []struct {
		name       string
		endAt      time.Duration // attempts at 0 and 1 s; backoffs of 1 s, then 2 s
		closeGroup bool
		runs       int // times fn ran
		want       retryCounts
	}{
		{"CancelledBeforeFirstResend", 500 * milli, false, 1, retryCounts{}},
		{"CancelledAfterResend", 1500 * milli, false, 2, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
		{"ClosedAfterResend", 1500 * milli, true, 2, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				members, srv := memMembers(t, 0, 1)
				srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
				opts := bubbleOpts()
				opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: NoJitter}
				reader := sdkmetric.NewManualReader()
				opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
				g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(tt.endAt, func() {
					if tt.closeGroup {
						_ = g.Close()
					} else {
						cancel()
					}
				})
				calls := 0
				_, err := Execute(ctx, g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
					calls++
					return c.Get(ctx, "k")
				})
				if calls != tt.runs {
					t.Fatalf("fn ran %d times, want %d (err %v)", calls, tt.runs, err)
				}
				if got := failoverCollect(t, reader).retries; !got.equal(tt.want) {
					t.Errorf("retries %v, want %v", got, tt.want)
				}
			})
		})
	}
}

func TestFailoverExecuteBackoffThatCannotFitDeadlineKeepsLastFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 100 * milli, MaxBackoff: 100 * milli, Jitter: NoJitter}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		ctx, cancel := context.WithTimeout(context.Background(), 150*milli)
		defer cancel()
		_, err := Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 2 || !errors.Is(err, ErrNoHealthyMember) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want 2 attempts ending with the last failure, not a timeout", err)
		}
	})
}

func TestFailoverCloseEndsBackoffAndLaterCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: time.Second}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		time.AfterFunc(100*milli, func() { _ = g.Close() })
		_, err := Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
		calls := 0
		_, err = Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		if !errors.Is(err, ErrClosed) || calls != 0 {
			t.Errorf("after Close: err %v, calls %d; want ErrClosed, 0", err, calls)
		}
		if _, err := g.ActiveClient(); !errors.Is(err, ErrClosed) {
			t.Errorf("ActiveClient after Close: %v, want ErrClosed", err)
		}
	})
}

// Close during a backoff after fn ran and lost its connection: the
// error matches ErrClosed, and every part of it says the operation may
// have run.
func TestFailoverCloseDuringBackoffAfterRunSaysItMayHaveRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: NoJitter}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		time.AfterFunc(100*milli, func() { _ = g.Close() })
		calls := 0
		_, err := Execute(context.Background(), g, WriteAccumulating, func(context.Context, *Client) (string, error) {
			calls++
			return "", &ConnError{Command: "INCR", Err: io.ErrUnexpectedEOF} // the reply was lost
		})
		if !errors.Is(err, ErrClosed) || calls != 1 {
			t.Fatalf("err = %v after %d calls, want ErrClosed after 1", err, calls)
		}
		if !MayHaveExecuted(err) {
			t.Errorf("MayHaveExecuted(%v) = false, want true", err)
		}
		walkErrors(err, func(e error) {
			if ce, ok := e.(*ConnError); ok && ce.Unwritten {
				t.Errorf("err = %v holds a *ConnError with Unwritten true: fn ran", err)
			}
		})
	})
}

// ---- metrics ----

// failoverCounts are the group's metrics, by instrument.
type failoverCounts struct {
	retries  retryCounts // "category/outcome"
	probes   map[string]int64
	switches map[string]int64
}

// failoverCollect reads the group's instruments from r: probes as
// "member/outcome", switches as "member/reason".
func failoverCollect(t testing.TB, r *sdkmetric.ManualReader) failoverCounts {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	got := failoverCounts{retries: retryCounts{}, probes: map[string]int64{}, switches: map[string]int64{}}
	str := func(s attribute.Set, k string) string { v, _ := s.Value(attribute.Key(k)); return v.AsString() }
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("%s is %T, want a monotonic int64 counter", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Value == 0 {
					continue
				}
				switch m.Name {
				case "respire.command.retries":
					got.retries[str(dp.Attributes, retryCategoryAttr)+"/"+str(dp.Attributes, retryOutcomeAttr)] += dp.Value
				case "respire.failover.probes":
					got.probes[str(dp.Attributes, memberAttr)+"/"+str(dp.Attributes, probeOutcomeAttr)] += dp.Value
				case "respire.failover.switches":
					got.switches[str(dp.Attributes, memberAttr)+"/"+str(dp.Attributes, switchReasonAttr)] += dp.Value
				default:
					t.Errorf("unexpected instrument %q", m.Name)
				}
			}
		}
	}
	return got
}

func TestFailoverMetricsCountProbesAndSwitches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		reader := sdkmetric.NewManualReader()
		opts := bubbleOpts()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		c.at(350 * milli) // 3 failures of member 0: failover
		probes.down[0].Store(false)
		probes.down[1].Store(true)
		c.at(1350 * milli) // member 0 closes at 1300 and takes over at once: member 1 is open
		got := failoverCollect(t, reader)
		wantProbes := map[string]int64{
			"member0.test:6379/failure": 3, "member0.test:6379/success": 1,
			"member1.test:6379/success": 3, "member1.test:6379/failure": 3}
		if !maps.Equal(got.probes, wantProbes) {
			t.Errorf("probes %v, want %v", got.probes, wantProbes)
		}
		wantSwitches := map[string]int64{"member1.test:6379/failover": 1, "none/failover": 1, "member0.test:6379/recovery": 1}
		if !maps.Equal(got.switches, wantSwitches) {
			t.Errorf("switches %v, want %v", got.switches, wantSwitches)
		}
		if len(got.retries) != 0 {
			t.Errorf("retries %v without any operation", got.retries)
		}
	})
}

// failoverPanicProvider's counters panic on every Add.
type failoverPanicProvider struct{ noop.MeterProvider }

type failoverPanicMeter struct{ noop.Meter }

type failoverPanicCounter struct{ noop.Int64Counter }

func (failoverPanicProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return failoverPanicMeter{}
}

func (failoverPanicMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return failoverPanicCounter{}, nil
}

func (failoverPanicCounter) Add(context.Context, int64, ...metric.AddOption) {
	panic("exporter exploded")
}

// A panicking instrument changes neither switches nor retries nor results.
func TestFailoverMetricsPanickingInstrumentChangesNothing(t *testing.T) {
	type outcome struct {
		value    string
		err      string
		on       []int
		switches [][2]int
	}
	run := func(t *testing.T, metrics MetricGroups, mp metric.MeterProvider) (out outcome) {
		synctest.Test(t, func(t *testing.T) {
			members, srv := memMembers(t, 0, 1)
			where(srv)
			srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
			probes := newFakeProbes(2)
			var log switchLog
			opts := bubbleOpts()
			opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
			opts.Metrics, opts.MeterProvider, opts.OnSwitch = metrics, mp, log.on
			g := fakeGroup(t, members, opts, probes.probe)
			probes.down[0].Store(true)
			attempts := &attemptLog{g: g}
			v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
				attempts.ran(c)
				return c.Get(ctx, "where")
			})
			out = outcome{value: v, on: attempts.on, switches: log.get()}
			if err != nil {
				out.err = err.Error()
			}
		})
		return out
	}
	want := run(t, 0, nil)
	got := run(t, MetricsResiliency, failoverPanicProvider{})
	if got.value != want.value || got.err != want.err || !slices.Equal(got.on, want.on) || !slices.Equal(got.switches, want.switches) {
		t.Errorf("with a panicking instrument %+v, without metrics %+v", got, want)
	}
	if want.value != "m1" {
		t.Errorf("scenario did not fail over: %+v", want)
	}
}

// ---- Close ----

// failoverGoroutines returns the stacks of goroutines running the group's
// own code (probe loops and probes).
func failoverGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		// A probe loop not yet scheduled shows only its start wrapper.
		if strings.Contains(g, "respire.(*FailoverGroup).") || strings.Contains(g, "respire.pingMember") ||
			strings.Contains(g, "respire.newFailoverGroup.gowrap") {
			out = append(out, g)
		}
	}
	return out
}

// groupGoroutinesAfterExit reports the group goroutines that remain after
// the scheduler has had a bounded number of chances (10,000 yields, at most
// five seconds) to retire the ones that are returning.
func groupGoroutinesAfterExit() []string {
	end := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		gs := failoverGoroutines()
		if len(gs) == 0 || i == 10000 || time.Now().After(end) {
			return gs
		}
		runtime.Gosched()
	}
}

func TestFailoverCloseStopsProbesAndClosesMembers(t *testing.T) {
	if gs := failoverGoroutines(); len(gs) != 0 {
		t.Fatalf("group goroutines before the test:\n%s", strings.Join(gs, "\n\n"))
	}
	s0 := respiretest.NewServer(t)
	s1 := respiretest.NewServer(t)
	g, err := NewFailoverGroup(context.Background(), []FailoverMember{
		{Options: Options{Endpoints: []string{s0.Addr()}}},
		{Options: Options{Endpoints: []string{s1.Addr()}}, Priority: 1},
	}, FailoverGroupOptions{ProbeInterval: 10 * milli})
	if err != nil {
		t.Fatal(err)
	}
	if gs := failoverGoroutines(); len(gs) != 2 {
		t.Errorf("%d group goroutines while running, want 2 probe loops", len(gs))
	}
	clients := []*Client{g.Members()[0].Client, g.Members()[1].Client}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close joined the probe loops: each has passed its last statement, so
	// what may still show is a loop's return epilogue (the scheduler had not
	// yet let it exit when Close returned). Yield until those are gone; a
	// loop still waiting for a tick or a probe would never go.
	if gs := groupGoroutinesAfterExit(); len(gs) != 0 {
		t.Fatalf("group goroutines after Close:\n%s", strings.Join(gs, "\n\n"))
	}
	for i, c := range clients {
		if err := c.Ping(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("member %d's client after Close: Ping = %v, want ErrClosed", i, err)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// ---- real servers ----

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

// TestFailoverConcurrentCloseCallsBothWait: a Close called while another
// is still waiting for the probes returns only when the member clients
// are closed, as the first does (and as Client.Close does). The first
// Close is held by a probe that ignores its context.
func TestFailoverConcurrentCloseCallsBothWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probing, gate := make(chan struct{}, 2), make(chan struct{})
		probe := func(context.Context, *groupMember) error {
			probing <- struct{}{}
			<-gate
			return nil
		}
		g, err := newFailoverGroup(context.Background(), members, bubbleOpts(), probe)
		if err != nil {
			t.Fatal(err)
		}
		<-probing // a probe runs, and will not end before the gate opens
		closed := make(chan error, 2)
		go func() { closed <- g.Close() }()
		go func() { closed <- g.Close() }()
		synctest.Wait()
		if n := len(closed); n != 0 {
			t.Errorf("%d of two concurrent Close calls returned while a probe still runs", n)
		}
		close(gate)
		for range 2 {
			if err := <-closed; err != nil {
				t.Errorf("Close = %v", err)
			}
		}
		for _, m := range g.Members() {
			if err := m.Client.Ping(context.Background()); !errors.Is(err, ErrClosed) {
				t.Errorf("member %d's client after Close: PING = %v, want ErrClosed", m.Index, err)
			}
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
