package respire

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// switchEvent is one change of the active member, for OnSwitch.
type switchEvent struct{ from, to int }

// Switch reasons, the respire.failover.switch.reason attribute.
const (
	reasonFailover = iota // the active member's circuit opened
	reasonFailback        // a preferred member served its grace
	reasonRecovery        // a member became healthy while none was
	numSwitchReasons
)

var switchReasonNames = [numSwitchReasons]string{"failover", "failback", "recovery"}

// pingMember is the group's probe: PING through the member's client,
// connecting the client first when it has never connected, or when its
// caller closed it (the group owns it, but a closed client would otherwise
// keep the member's circuit open for good). Only the member's probe loop
// stores its client; a client stored after Close closed the members' is
// closed by the probe loop. A PING the member's ACL refuses (NOPERM, a
// user without PING) is a success: the server answered and serves the
// user's other commands.
func pingMember(ctx context.Context, m *groupMember) error {
	c := m.client.Load()
	if c == nil || c.closed.Load() {
		var err error
		if c, err = Connect(ctx, m.opts); err != nil {
			return err
		}
		m.client.Store(c)
	}
	err := c.Ping(ctx)
	if errors.Is(err, errPingRefused) {
		return nil
	}
	return err
}

// errPingRefused matches the NOPERM reply of a PING the ACL refuses.
var errPingRefused = &ServerError{Code: "NOPERM", Command: "PING"}

// probeLoop probes m until the group closes.
func (g *FailoverGroup) probeLoop(m *groupMember) {
	defer g.wg.Done()
	// The timer is only ever armed with a positive duration: a probe that
	// is already due runs without waiting (receiving from a timer that
	// fired before the receive has crashed the runtime inside
	// testing/synctest bubbles).
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	last := g.since
	for {
		g.mu.Lock()
		next := m.h.nextProbe(last, g.cfg.interval)
		g.mu.Unlock()
		if d := time.Until(next); d > 0 {
			if t == nil {
				t = time.NewTimer(d)
			} else {
				t.Reset(d)
			}
			select {
			case <-t.C:
			case <-g.done:
				return
			}
		} else if g.closed.Load() {
			return
		}
		last = time.Now()
		ctx, cancel := context.WithTimeout(g.ctx, g.cfg.timeout)
		err := g.probeOnce(ctx, m)
		cancel()
		if g.closed.Load() {
			// A probe cut short by Close is no observation. Close may
			// have closed the members' clients before this probe stored
			// the one it connected: close it (again).
			if c := m.client.Load(); c != nil {
				_ = c.Close()
			}
			return
		}
		g.observe(m, err == nil, time.Now())
	}
}

// probeOnce runs one probe of m. The probe runs the member client's
// process hooks (its PING) on the group's probe goroutine, out of any
// caller's reach: a panic there would crash the process and stop the
// probes, so it fails the probe instead.
func (g *FailoverGroup) probeOnce(ctx context.Context, m *groupMember) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("respire: the failover probe panicked: %v", p)
		}
	}()
	return g.probe(ctx, m)
}

// observe records one probe of m at now, updates its circuit and the
// active member, and hands any switch to OnSwitch.
func (g *FailoverGroup) observe(m *groupMember, ok bool, now time.Time) {
	g.metrics.probe(m, ok)
	g.mu.Lock()
	if m.h.observe(ok, now, g.cfg.threshold, g.cfg.openFor) && m.h.open {
		m.opens.Add(1)
	}
	m.open.Store(m.h.open)
	g.electLocked(now)
	g.mu.Unlock()
	g.deliver()
}

// electLocked makes the elected member active. g.mu is held.
func (g *FailoverGroup) electLocked(now time.Time) {
	cs := make([]candidate, len(g.members))
	for i, m := range g.members {
		cs[i] = candidate{priority: m.priority, healthy: !m.h.open, since: m.h.since}
	}
	from := -1
	if a := g.active.Load(); a != nil {
		from = a.index
	}
	to := elect(cs, from, now, g.cfg.grace)
	if to == from {
		return
	}
	reason := reasonFailover
	switch {
	case from < 0:
		reason = reasonRecovery
	case cs[from].healthy:
		reason = reasonFailback
	}
	var next *groupMember
	if to >= 0 {
		next = g.members[to]
	}
	g.active.Store(next)
	g.metrics.switched(next, reason)
	if g.cfg.onSwitch != nil {
		g.pending = append(g.pending, switchEvent{from, to})
	}
}

// deliver hands the pending switches to OnSwitch, in order, one caller at
// a time, without holding g.mu (OnSwitch may call Members).
func (g *FailoverGroup) deliver() {
	if g.cfg.onSwitch == nil {
		return
	}
	g.notify.Lock()
	defer g.notify.Unlock()
	for {
		g.mu.Lock()
		evs := g.pending
		g.pending = nil
		g.mu.Unlock()
		if len(evs) == 0 {
			return
		}
		for _, e := range evs {
			g.callOnSwitch(e)
		}
	}
}

// callOnSwitch calls OnSwitch with e. A panic in OnSwitch, on the group's
// probe goroutine, would crash the process and stop the probes: it is
// recovered and changes nothing.
func (g *FailoverGroup) callOnSwitch(e switchEvent) {
	defer func() { _ = recover() }()
	g.cfg.onSwitch(e.from, e.to)
}
