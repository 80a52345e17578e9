package respire

// Closing a failover group: its probe goroutines end, its member clients
// close, and a second Close waits for the first.

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// failoverGoroutines returns the stacks of goroutines running the group's
// own code (probe loops and probes).
func failoverGoroutines() []string {
	var out []string
	for g := range strings.SplitSeq(allStacks(), "\n\n") {
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

// TestFailoverCloseReturnsWhileProbeIsStuck: a probe held in code that
// ignores its context (here the probe itself) does not hold Close, nor a
// second Close called at the same time: both return within the group's
// bounded wait with the member clients closed, and the probe's goroutine
// ends once the held code returns, closing the client it connected late.
func TestFailoverCloseReturnsWhileProbeIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probing, gate := make(chan struct{}, 2), make(chan struct{})
		probe := func(_ context.Context, m *groupMember) error {
			probing <- struct{}{}
			<-gate
			// Reconnect the member, as pingMember does, after Close closed
			// the clients: the probe loop must close this one.
			c, err := Connect(context.Background(), m.opts)
			if err == nil {
				m.client.Store(c)
			}
			return err
		}
		g, err := newFailoverGroup(context.Background(), members, bubbleOpts(), probe)
		if err != nil {
			t.Fatal(err)
		}
		<-probing // a probe runs, and will not end before the gate opens
		closed := make(chan error, 2)
		go func() { closed <- g.Close() }()
		go func() { closed <- g.Close() }()
		assertClosedWhileHeld(t, g, closed, 2, gate)
	})
}

// TestFailoverCloseReturnsWhileProbeHookIsStuck: the real probe (PING)
// held in a member's ProcessHook that ignores its context does not hold
// Close; the probe's goroutine ends once the hook returns.
func TestFailoverCloseReturnsWhileProbeHookIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		hook := &beforeHook{name: "PING"}
		members[1].Options.Hooks = []Hook{hook}
		probing, gate := make(chan struct{}), make(chan struct{})
		hook.arm(func() { close(probing); <-gate })
		closeWhileHeld(t, members, probing, gate)
	})
}

// TestFailoverCloseReturnsWhileProbeDialIsStuck: the probe connecting a
// member that was unreachable at start, held in the member's Dialer that
// ignores its context, does not hold Close; once the Dialer returns a
// connection the probe's goroutine ends and nothing stays connected.
func TestFailoverCloseReturnsWhileProbeDialIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, servers := memMembers(t, 0, 1)
		var dials atomic.Int32
		probing, gate := make(chan struct{}), make(chan struct{})
		members[1].Options.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				return nil, errors.New("unreachable at start")
			}
			close(probing)
			<-gate
			return servers[1].Dial(context.Background(), network, addr) // ignores ctx
		}
		closeWhileHeld(t, members, probing, gate)
		if n := servers[1].Sessions(); n != 0 {
			t.Errorf("%d connections to the member after its held dial returned, want 0", n)
		}
	})
}

// TestFailoverCloseReturnsWhileMemberRedialIsStuck: a member client's own
// redial held in its Dialer that ignores its context holds that client's
// Close (Client.Close waits for its dials), but neither the group's Close
// nor the closing of the other members' clients.
func TestFailoverCloseReturnsWhileMemberRedialIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, servers := memMembers(t, 0, 1)
		var dials atomic.Int32
		probing, gate := make(chan struct{}), make(chan struct{})
		members[0].Options.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 2 {
				close(probing)
				<-gate
			}
			return servers[0].Dial(context.Background(), network, addr) // ignores ctx
		}
		// The first probe's PING loses the connection: the next redials.
		servers[0].MustAddRule(t, respiretest.Rule{Command: "PING", Action: respiretest.DropBeforeForward})
		closeWhileHeld(t, members, probing, gate)
	})
}

// closeWhileHeld starts a group of members, waits for user code of a
// probe to be held at gate (probing closes), closes the group and checks
// it with assertClosedWhileHeld.
func closeWhileHeld(t *testing.T, members []FailoverMember, probing, gate chan struct{}) {
	t.Helper()
	g, err := NewFailoverGroup(context.Background(), members, bubbleOpts())
	if err != nil {
		t.Fatal(err)
	}
	<-probing
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	assertClosedWhileHeld(t, g, closed, 1, gate)
}

// assertClosedWhileHeld checks, in a bubble, that n Close calls sent to
// closed return (with no error) within their bounded wait while user code
// is held at gate, that the member clients are closed when they do, then
// opens gate and checks that every goroutine of the group ends and every
// member client is closed.
func assertClosedWhileHeld(t *testing.T, g *FailoverGroup, closed chan error, n int, gate chan struct{}) {
	t.Helper()
	time.Sleep(groupCloseWait) // the bubble's clock: Close's bounded wait passes
	synctest.Wait()
	if got := len(closed); got != n {
		t.Errorf("%d of %d Close calls returned while a probe is held", got, n)
	}
	for _, m := range g.Members() {
		if m.Client != nil && !m.Client.closed.Load() {
			t.Errorf("member %d's client is open after Close returned", m.Index)
		}
	}
	close(gate)
	for range n {
		if err := <-closed; err != nil {
			t.Errorf("Close = %v", err)
		}
	}
	synctest.Wait()
	if gs := failoverGoroutines(); len(gs) != 0 {
		t.Errorf("group goroutines after the held code returned:\n%s", strings.Join(gs, "\n\n"))
	}
	for _, m := range g.Members() {
		if m.Client != nil && !m.Client.closed.Load() {
			t.Errorf("member %d's client is open after the held code returned", m.Index)
		}
	}
}
