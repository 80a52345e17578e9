package respire

// Closing a failover group: its probe goroutines end, its member clients
// close, and a second Close waits for the first.

import (
	"context"
	"errors"
	"runtime"
	"strings"
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
