package wire

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestRealServerSoloLanes proves Endpoint.For's solo lanes against the
// real server. A small frame stays on the endpoint while its connection
// owes nothing. While the connection owes a reply (a BLPOP the server
// holds), the first call dials the first solo lane in the background and
// stays on the endpoint itself; once the lane is up, small frames take it,
// and its caller reads its own reply there: the LPUSH that ends the BLPOP
// completes while the endpoint's connection still owes it. A busy lane
// makes the next call dial the next lane (and none before). A frame that
// may not leave (solo false: a cached read), a large frame, and a frame
// for a crowded connection (more than soloCrowdMax frames owed at an
// admission, and still just after, the peak decaying slowly) stay on the
// endpoint. Close ends the lanes; no goroutine is
// left (TestMain's check).
func TestRealServerSoloLanes(t *testing.T) {
	cfg := quiet
	cfg.Addr, cfg.DialTimeout, cfg.SoloLanes = standaloneAddr(t), 5*time.Second, 2
	ep := NewEndpoint(cfg)
	t.Cleanup(func() { _ = ep.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "wire:solo:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	c, err := ep.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	small := newFrame(WantInt, "LPUSH", key, "x")
	defer small.Release()
	if ep.For(small, true) != ep || ep.solos.Load() != nil {
		t.Fatal("a frame for an idle connection left it, or solo lanes were made")
	}

	held := func(conn *Conn, k string) *Frame { return heldBLPOP(t, conn, k) }
	push := func(conn *Conn, k string) { t.Helper(); lpush(t, ctx, conn, k) }
	// released waits for a held BLPOP's reply.
	released := func(f *Frame, k string) {
		t.Helper()
		waitOK(t, f)
		if f.Err != nil || len(f.Value.Elems) != 2 || string(f.Value.Elems[0].Str) != k {
			t.Fatalf("BLPOP %s: %v, %v", k, f.Err, f.Value)
		}
		f.Release()
	}

	first := held(c, key)
	if ep.For(small, true) != ep {
		t.Fatal("the first call for a busy connection took a lane before it was dialed")
	}
	lanes := *ep.solos.Load()
	if len(lanes) != 2 || lanes[1].Current() != nil {
		t.Fatalf("%d lanes, the second dialed before the first was busy", len(lanes))
	}
	lane0, err := lanes[0].Conn(ctx) // the background dial the call started
	if err != nil {
		t.Fatal(err)
	}
	if ep.For(small, false) != ep {
		t.Fatal("a frame that may not leave took a lane")
	}
	if l := ep.For(&Frame{Buf: make([]byte, LaneMinBytes)}, true); l != ep {
		t.Fatal("a large frame took a solo lane")
	}
	if ep.For(small, true) != lanes[0] {
		t.Fatal("a small frame for the busy connection did not take the idle lane")
	}
	push(lane0, key) // read by its caller on the lane, past the held reply
	released(first, key)

	// Lane 0 busy too: the next call dials lane 1.
	key1 := key + ":1"
	onLane := held(lane0, key1)
	onEP := held(c, key)
	if ep.For(small, true) != ep {
		t.Fatal("a call took a busy lane or a lane not yet dialed")
	}
	lane1, err := lanes[1].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ep.For(small, true) != lanes[1] {
		t.Fatal("a small frame did not take the second lane while the first was busy")
	}
	push(lane1, key1)
	push(lane1, key)
	released(onLane, key1)
	released(onEP, key)

	// A crowded connection keeps its frames, however idle the lanes.
	onEP = held(c, key)
	pings := make([]*Frame, soloCrowdMax+4) // the last admitted with soloCrowdMax+4 owed
	for i := range pings {
		pings[i] = newFrame(WantBytes, "PING")
		submit(t, c, pings[i])
	}
	if ep.For(small, true) != ep {
		t.Fatalf("a frame left a connection owing %d frames for an idle lane", soloCrowdMax+5)
	}
	push(lane0, key)
	released(onEP, key)
	for _, f := range pings {
		waitOK(t, f)
		if string(f.Bytes) != "PONG" {
			t.Fatalf("PING: %q, %v", f.Bytes, f.Err)
		}
		f.Release()
	}

	// The peak decays slowly: one frame owed right after the crowd does
	// not make the connection one that few callers share.
	onEP = held(c, key)
	if ep.For(small, true) != ep {
		t.Fatal("a frame left a connection crowded a moment ago for an idle lane")
	}
	push(lane0, key)
	released(onEP, key)

	_ = ep.Close()
	for i, l := range lanes {
		var ce *ConnError
		if _, err := l.Conn(ctx); !errors.As(err, &ce) || ce.Reason != Closed {
			t.Fatalf("lane %d after Close: %v", i, err)
		}
	}
}

// TestRealServerDeadSoloLaneIsPassedOver proves that a solo lane whose
// connection died is not redialed at once but when a caller needs it,
// and does not hold back the lanes after it: the next small frame for the
// busy endpoint starts lane 0's redial and, while that dial is held
// (Config.Dial blocks on a gate), takes the next lane, which is up and
// owes nothing; once the redial ends, the first lane serves again.
func TestRealServerDeadSoloLaneIsPassedOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var holding atomic.Bool
	gate, dialing := make(chan struct{}), make(chan struct{}, 1)
	cfg := quiet
	cfg.Addr, cfg.DialTimeout, cfg.SoloLanes = standaloneAddr(t), 5*time.Second, 2
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if holding.Load() {
			dialing <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return DefaultDial(ctx, network, addr)
	}
	ls := dialTwoLanes(t, ctx, cfg, "sololost")
	ep, lanes, lane0, lane1, small, key, onEP, onLane0 := ls.ep, ls.lanes, ls.lane0, ls.lane1, ls.small, ls.key, ls.onEP, ls.onLane0

	holding.Store(true)
	_ = lane0.nc.Conn.Close()
	<-lane0.Dead()
	waitOK(t, onLane0)
	if onLane0.Err == nil {
		t.Fatal("the BLPOP on the closed lane got a reply")
	}
	onLane0.Release()
	lanes[0].mu.Lock()
	redialing := lanes[0].attempt != nil
	lanes[0].mu.Unlock()
	if redialing {
		t.Fatal("lane 0 was redialed before a caller needed it")
	}
	if got := ep.For(small, true); got != lanes[1] {
		t.Fatalf("with lane 0 dead, a small frame went to %p, want lane 1 (%p)", got, lanes[1])
	}
	<-dialing // lane 0's redial, which For started, held
	if got := ep.For(small, true); got != lanes[1] {
		t.Fatalf("with lane 0 redialing, a small frame went to %p, want lane 1 (%p)", got, lanes[1])
	}
	close(gate)
	if _, err := lanes[0].Conn(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ep.For(small, true); got != lanes[0] {
		t.Fatalf("after lane 0's redial, a small frame went to %p, want lane 0 (%p)", got, lanes[0])
	}
	lpush(t, ctx, lane1, key)
	waitOK(t, onEP)
	onEP.Release()
}

// TestRealServerCrowdSpansEndpoints proves that the crowd which keeps
// small frames off the solo lanes is the whole client's (Config.Crowd,
// shared like a cluster client's node endpoints share it): endpoint B,
// whose own connection owes one frame, sends small frames to its idle
// lane until endpoint A's connection owes more than soloCrowdMax, then
// keeps them. A's share stays after its replies (its peak decays only at
// admissions) until it idles a health tick (forgetPeaks) or dies.
func TestRealServerCrowdSpansEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := quiet
	cfg.Addr, cfg.DialTimeout, cfg.SoloLanes, cfg.Crowd = standaloneAddr(t), 5*time.Second, 1, new(Crowd)
	epA, epB := NewEndpoint(cfg), NewEndpoint(cfg)
	t.Cleanup(func() { _ = epA.Close(); _ = epB.Close() })
	key := "wire:crowd:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	a, err := epA.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := epB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	small := newFrame(WantInt, "LPUSH", key, "x")
	defer small.Release()
	onB := heldBLPOP(t, b, key+":b")
	_ = epB.For(small, true) // dials B's lane
	lane := (*epB.solos.Load())[0]
	laneConn, err := lane.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if epB.For(small, true) != lane {
		t.Fatal("with few callers, B's small frame did not take its idle lane")
	}

	// crowdA makes A's connection owe a held BLPOP and soloCrowdMax+4
	// PINGs queued behind it; release answers them all.
	crowdA := func() (release func()) {
		held := heldBLPOP(t, a, key+":a")
		pings := make([]*Frame, soloCrowdMax+4)
		for i := range pings {
			pings[i] = newFrame(WantBytes, "PING")
			submit(t, a, pings[i])
		}
		return func() {
			lpush(t, ctx, laneConn, key+":a")
			for _, f := range append(pings, held) {
				waitOK(t, f)
				if f.Err != nil {
					t.Fatalf("%v", f.Err)
				}
				f.Release()
			}
		}
	}
	release := crowdA()
	if epB.For(small, true) != epB {
		t.Fatal("B's small frame took its lane while A's connection owed many frames")
	}
	release()
	if epB.For(small, true) != epB {
		t.Fatal("A's crowd was forgotten before A idled")
	}
	a.forgetPeaks() // the health monitor's tick on an idle connection
	if epB.For(small, true) != lane {
		t.Fatal("A idled, and B's small frame still did not take its lane")
	}

	crowdA()
	if epB.For(small, true) != epB {
		t.Fatal("B's small frame took its lane while A's connection owed many frames")
	}
	_ = a.nc.Conn.Close()
	<-a.Dead()
	if epB.For(small, true) != lane {
		t.Fatal("A's connection died, and B's small frame still did not take its lane")
	}
	lpush(t, ctx, laneConn, key+":b")
	waitOK(t, onB)
	onB.Release()
}

// twoLanes is an endpoint with two solo lanes (Config.SoloLanes 2), both
// dialed: its connection owes a BLPOP of key that the server holds, and
// so does lane 0's (of key+":0"); lane 1's owes nothing.
type twoLanes struct {
	ep            *Endpoint
	lanes         []*Endpoint
	lane0, lane1  *Conn
	small         *Frame // a small LPUSH of key, never sent
	key           string
	onEP, onLane0 *Frame // the held BLPOPs
}

// dialTwoLanes sets up a twoLanes with cfg (SoloLanes 2); name tells its
// keys apart.
func dialTwoLanes(t *testing.T, ctx context.Context, cfg Config, name string) *twoLanes {
	t.Helper()
	ls := &twoLanes{ep: NewEndpoint(cfg), key: "wire:" + name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	t.Cleanup(func() { _ = ls.ep.Close() })
	c, err := ls.ep.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls.small = newFrame(WantInt, "LPUSH", ls.key, "x")
	t.Cleanup(ls.small.Release)
	ls.onEP = heldBLPOP(t, c, ls.key)
	_ = ls.ep.For(ls.small, true) // dials lane 0
	ls.lanes = *ls.ep.solos.Load()
	if ls.lane0, err = ls.lanes[0].Conn(ctx); err != nil {
		t.Fatal(err)
	}
	ls.onLane0 = heldBLPOP(t, ls.lane0, ls.key+":0")
	_ = ls.ep.For(ls.small, true) // lane 0 owes: dials lane 1
	if ls.lane1, err = ls.lanes[1].Conn(ctx); err != nil {
		t.Fatal(err)
	}
	return ls
}

// heldBLPOP submits a BLPOP of k on conn, which the server holds until
// an LPUSH of k.
func heldBLPOP(t *testing.T, conn *Conn, k string) *Frame {
	f := newFrame(WantValue, "BLPOP", k, "10")
	submit(t, conn, f)
	return f
}

// lpush runs LPUSH k on conn with Do, as the client does, for a BLPOP
// held on k: the list has one element once the LPUSH has run.
func lpush(t *testing.T, ctx context.Context, conn *Conn, k string) {
	t.Helper()
	f := newFrame(WantInt, "LPUSH", k, "x")
	defer f.Release()
	if sent, err := conn.Do(ctx, time.Time{}, f); !sent || err != nil || f.Err != nil || f.Int != 1 {
		t.Fatalf("LPUSH %s: sent %v, %v, %v, %d", k, sent, err, f.Err, f.Int)
	}
}

// TestRealServerSoloLaneClosesUnused proves the idle close of a solo
// lane (closeIdle, which the health monitor calls once no caller took the
// lane for Config.SoloIdleClose, here an hour so that only the test calls
// it): a lane taken since the monitor's last look, or owing a reply,
// stays open; an unused one closes (Reason Closed, ErrIdleClosed, an
// EventClosed); the endpoint does not redial it by itself; For treats it
// as not yet dialed (redials it in the background and keeps the frame on
// the endpoint); the redialed lane serves again.
func TestRealServerSoloLaneClosesUnused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := make(chan Event, 64)
	cfg := quiet
	cfg.Addr, cfg.DialTimeout, cfg.SoloLanes, cfg.SoloIdleClose = standaloneAddr(t), 5*time.Second, 2, time.Hour
	cfg.OnEvent = func(e Event) {
		if e.Kind == EventClosed {
			events <- e
		}
	}
	ls := dialTwoLanes(t, ctx, cfg, "soloidle")
	ep, lanes, lane0, lane1, small, key, onEP, onLane0 := ls.ep, ls.lanes, ls.lane0, ls.lane1, ls.small, ls.key, ls.onEP, ls.onLane0
	if ep.For(small, true) != lanes[1] {
		t.Fatal("a small frame did not take the idle lane 1")
	}

	if lane1.closeIdle() || !lane1.Alive() {
		t.Fatal("lane 1 closed although a caller took it since the monitor's last look")
	}
	lane0.used.Store(false)
	if lane0.closeIdle() || !lane0.Alive() {
		t.Fatal("lane 0 closed although it owes a reply")
	}
	lane1.used.Store(false) // the monitor's tick
	if !lane1.closeIdle() {
		t.Fatal("lane 1, unused and owing nothing, did not close")
	}
	<-lane1.Dead()
	if e := <-events; e.Reason != Closed || !errors.Is(e.Err, ErrIdleClosed) {
		t.Fatalf("lane 1's end: reason %v, %v; want Closed, ErrIdleClosed", e.Reason, e.Err)
	}
	lanes[1].mu.Lock()
	redialing := lanes[1].attempt != nil
	lanes[1].mu.Unlock()
	if redialing || lanes[1].Current() != nil {
		t.Fatal("the endpoint redialed lane 1 by itself")
	}
	if ep.For(small, true) != ep {
		t.Fatal("a small frame did not stay on the endpoint while lane 1 redials")
	}
	lane1, err := lanes[1].Conn(ctx) // the dial that For started
	if err != nil {
		t.Fatal(err)
	}
	if ep.For(small, true) != lanes[1] {
		t.Fatal("the redialed lane 1 did not serve")
	}
	lpush(t, ctx, lane1, key+":0")
	lpush(t, ctx, lane1, key)
	for _, f := range []*Frame{onLane0, onEP} {
		waitOK(t, f)
		if f.Err != nil {
			t.Fatal(f.Err)
		}
		f.Release()
	}
}

// TestRealServerHealthMonitorClosesUnusedSoloLane proves that the health
// monitor closes a solo lane no caller takes, once Config.SoloIdleClose
// has passed, with ErrIdleClosed.
func TestRealServerHealthMonitorClosesUnusedSoloLane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := make(chan Event, 64)
	cfg := quiet
	cfg.Addr, cfg.DialTimeout, cfg.SoloLanes, cfg.SoloIdleClose = standaloneAddr(t), 5*time.Second, 1, 20*time.Millisecond
	cfg.OnEvent = func(e Event) {
		if e.Kind == EventClosed {
			events <- e
		}
	}
	ep := NewEndpoint(cfg)
	t.Cleanup(func() { _ = ep.Close() })
	c, err := ep.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := "wire:soloidlemon:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	onEP := heldBLPOP(t, c, key)
	small := newFrame(WantInt, "LPUSH", key, "x")
	defer small.Release()
	_ = ep.For(small, true) // dials lane 0
	lane, err := (*ep.solos.Load())[0].Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lane.Dead():
	case <-ctx.Done():
		t.Fatal("the unused solo lane never closed")
	}
	if e := <-events; e.Reason != Closed || !errors.Is(e.Err, ErrIdleClosed) {
		t.Fatalf("the lane's end: reason %v, %v; want Closed, ErrIdleClosed", e.Reason, e.Err)
	}
	ocfg := quiet
	ocfg.Addr = cfg.Addr
	other := NewEndpoint(ocfg) // the BLPOP holds c
	t.Cleanup(func() { _ = other.Close() })
	oc, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lpush(t, ctx, oc, key)
	waitOK(t, onEP)
	onEP.Release()
}
