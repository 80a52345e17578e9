package wire

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Redial backoff bounds: consecutive failed dials wait from minRedial,
// doubling, up to maxRedial before the next attempt. A connection that
// dies less than minUptime after its dial counts as a failed dial (a
// server or proxy that drops every connection after the handshake is not
// redialed back to back); one that lived longer ends the failures.
const (
	minRedial = 10 * time.Millisecond
	maxRedial = time.Second
	minUptime = time.Second
)

// Endpoint owns the current connection to one address. Callers get the live
// connection without blocking; when it dies, the next caller (or the death
// itself) starts one dial that every waiter shares. Consecutive failures
// back off, bounded by one second. An Endpoint is safe for concurrent use.
type Endpoint struct {
	cfg Config
	cur atomic.Pointer[Conn]
	// open dials a connection: [Dial], or a test's stand-in.
	open func(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error)
	// onLost, when set, runs after the live connection dies or a dial
	// fails (not after Close or Retire, nor after a handshake the server
	// refused); it must not block.
	onLost func()

	// lanes, created on first use, are Config.BatchLanes endpoints to the
	// same address that carry large frames (see [Endpoint.For]); laneNext
	// picks them in turn.
	lanes    atomic.Pointer[[]*Endpoint]
	laneNext atomic.Uint32
	// solos, created on first use, are Config.SoloLanes endpoints to the
	// same address that carry small frames while few callers share e's
	// connection (see [Endpoint.For]).
	solos atomic.Pointer[[]*Endpoint]

	mu       sync.Mutex
	down     atomic.Bool // the last dial failed
	closed   bool
	retired  error         // the cause given to Retire, or nil
	shut     chan struct{} // closed when the first Close or Retire has finished
	attempt  *dialAttempt
	failures int
	// refused is the last dial's failure when the server refused its
	// handshake (Reason Handshake), until a dial ends otherwise: calls
	// return it at once instead of waiting for the redial.
	refused error
	// fresh: e.cur was stored at upSince by the last dial, and the next
	// dial has not yet judged its lifetime for the backoff.
	fresh   bool
	upSince time.Time
	// early is the last connection whose death was reported, during a
	// dial, while it was not e.cur: perhaps the dial's own, dead before
	// the dial stored it, which the dial then handles as connDied would
	// have.
	early  *Conn
	dials  sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

type dialAttempt struct {
	done chan struct{}
	conn *Conn
	err  error
}

// NewEndpoint returns an endpoint for cfg; it does not dial.
func NewEndpoint(cfg Config) *Endpoint {
	if cfg.SoloLanes > 0 && cfg.Crowd == nil {
		cfg.Crowd = new(Crowd)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Endpoint{cfg: cfg, open: Dial, ctx: ctx, cancel: cancel, shut: make(chan struct{})}
}

// NewEndpointNotify is [NewEndpoint] with onLost, which runs (on the
// endpoint's own goroutines; it must not block) each time the live
// connection dies or a dial fails, but not after Close or Retire, nor
// after a dial whose handshake the server refused (Reason Handshake: the
// server answered, so the topology did not change). Routing uses it to
// look for a topology change.
func NewEndpointNotify(cfg Config, onLost func()) *Endpoint {
	e := NewEndpoint(cfg)
	e.onLost = onLost
	return e
}

// LaneMinBytes: frames of at least this many bytes go to a batch lane
// when the endpoint has lanes.
const LaneMinBytes = 8 << 10

// For returns the endpoint that carries f: e itself, one of e's batch
// lanes for a large frame, or one of e's solo lanes for a small one.
//
// Batch lanes: when Config.BatchLanes is set and f holds at least
// LaneMinBytes, the lanes in turn. Lanes are endpoints of their own to the
// same address (the same configuration, dialed on first use) that e closes
// and retires with itself (a lane of an ended endpoint fails as the
// endpoint does): large batches then travel on a few connections of their
// own instead of all on e's, which in measurements kept the client's
// threads busier (batches of 100 SETs; batches of 100 GETs, 3 KiB, gained
// nothing).
//
// Solo lanes: when Config.SoloLanes is set, solo is true and f is small,
// while e's connection owes replies but few callers share the client
// (Config.Crowd: the slow peaks of frames owed at the admissions of its
// connections, on every node, sum to at most soloCrowdMax), the first
// solo lane whose connection owes nothing. Its caller then writes its
// frame and reads its own reply there ([Conn.Do]) instead of waiting
// behind the others' replies for the reader goroutine to hand it over.
// The solo lanes are dialed one at a time, in the background, when every
// one dialed so far is busy; until a lane's dial ends, frames stay on e.
// A lane whose connection died is redialed in the background and passed
// over meanwhile. When more callers share the client, frames stay on
// e's connection, where the writer batches them: there more connections
// cost more CPU per command than they save. The peaks decay slowly (by a
// 256th of their excess per admission): a Cluster node shared by about
// 20 callers, whose owed frames fall low between the bursts of its
// replies, sent 12% of its commands on solo lanes with a peak that
// decayed as fast as ownWriteMaxPeak's, and lost a third of its
// throughput. The sum is the client's, not the connection's: a Cluster
// client of 16 callers, about 5 per node, sent part of its commands on
// solo lanes when each node counted its own, and made 0.79 of the GETs
// it makes with the sum, which keeps them all on the nodes' connections
// (item 14 of docs/performance.md).
func (e *Endpoint) For(f *Frame, solo bool) *Endpoint {
	if len(f.Buf) < LaneMinBytes {
		if solo && e.cfg.SoloLanes > 0 {
			return e.solo()
		}
		return e
	}
	if e.cfg.BatchLanes <= 0 {
		return e
	}
	ls := e.lanes.Load()
	if ls == nil {
		if ls = e.makeLanes(&e.lanes, e.cfg.BatchLanes, false); ls == nil {
			return e
		}
	}
	return (*ls)[e.laneNext.Add(1)%uint32(len(*ls))]
}

// solo returns the endpoint for a small frame (see [Endpoint.For]).
func (e *Endpoint) solo() *Endpoint {
	// The crowd, rarely written, first: a busy client's callers (many)
	// return without reading owed, which every admission and reply writes.
	c := e.cur.Load()
	if !e.cfg.Crowd.few() || c == nil || !c.syncOK || c.owed.Load() == 0 {
		return e
	}
	ls := e.solos.Load()
	if ls == nil {
		if ls = e.makeLanes(&e.solos, e.cfg.SoloLanes, true); ls == nil {
			return e
		}
	}
	for _, l := range *ls {
		lc := l.cur.Load()
		if lc == nil || lc.idling.Load() {
			// The lane's first dial, or its first since its connection
			// closed unused, in the background.
			l.Redial()
			return e
		}
		if !lc.Alive() {
			l.Redial() // after its backoff; the lanes after it serve meanwhile
			continue
		}
		if lc.owed.Load() == 0 {
			// used first, then idling, as closeIdle stores and loads them
			// the other way round: a lane is taken or closed, not both.
			if !lc.used.Load() {
				lc.used.Store(true)
			}
			if lc.idling.Load() {
				return e
			}
			return l
		}
	}
	return e
}

// makeLanes creates n lanes into *p unless another caller did, and
// returns them; nil when e is closed. Solo lanes are dialed on demand
// only and close unused after Config.SoloIdleClose (Config.soloLane).
func (e *Endpoint) makeLanes(p *atomic.Pointer[[]*Endpoint], n int, solo bool) *[]*Endpoint {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	if ls := p.Load(); ls != nil {
		return ls
	}
	lanes := make([]*Endpoint, n)
	cfg := e.cfg
	cfg.BatchLanes, cfg.SoloLanes, cfg.Crowd = 0, 0, nil
	cfg.soloLane = solo
	for i := range lanes {
		lanes[i] = NewEndpointNotify(cfg, e.onLost)
	}
	p.Store(&lanes)
	return &lanes
}

// eachLane runs f on every lane created so far. Called after e.closed
// was set under mu, it sees every lane there will ever be.
func (e *Endpoint) eachLane(f func(*Endpoint)) {
	for _, p := range []*atomic.Pointer[[]*Endpoint]{&e.lanes, &e.solos} {
		if ls := p.Load(); ls != nil {
			for _, l := range *ls {
				f(l)
			}
		}
	}
}

// Addr returns the endpoint's address.
func (e *Endpoint) Addr() string { return e.cfg.Addr }

// Down reports whether the endpoint has no live connection and its last
// dial failed: the server cannot be reached right now.
func (e *Endpoint) Down() bool {
	c := e.cur.Load()
	return (c == nil || !c.Alive()) && e.down.Load()
}

// Redial starts a dial in the background, after the redial backoff of
// the failed dials before it, when the endpoint has no live connection
// and no dial in flight: a node that callers pass over while it is
// [Endpoint.Down] comes back once it answers. It never blocks.
func (e *Endpoint) Redial() {
	if c := e.cur.Load(); c != nil && c.Alive() {
		return
	}
	e.mu.Lock()
	if !e.closed && e.attempt == nil {
		if c := e.cur.Load(); c == nil || !c.Alive() {
			e.startDialLocked()
		}
	}
	e.mu.Unlock()
}

// Current returns the live connection, or nil.
func (e *Endpoint) Current() *Conn {
	if c := e.cur.Load(); c != nil && c.Alive() {
		return c
	}
	return nil
}

// Conn returns the live connection, dialing (or waiting for the dial in
// flight) when there is none. A failed dial returns a *ConnError with
// Evidence Unwritten, and so does a dial whose connection died before it
// was returned (Reason Lost); ctx ends the wait with ctx.Err().
//
// After a dial whose handshake the server refused (Reason Handshake: an
// ACL without SELECT, a wrong password...), Conn does not wait: it
// returns that refusal at once, and starts the next dial, after the
// redial backoff, when none is in flight; the endpoint thus redials once
// per backoff period while it is called (or redialed), and recovers
// within one once the server accepts the handshake. After other dial
// failures (the server unreachable, a timeout) Conn waits for the redial.
func (e *Endpoint) Conn(ctx context.Context) (*Conn, error) {
	if c := e.cur.Load(); c != nil && c.Alive() {
		return c, nil
	}
	for {
		e.mu.Lock()
		if e.closed {
			err := e.closedErrorLocked()
			e.mu.Unlock()
			return nil, err
		}
		if c := e.cur.Load(); c != nil && c.Alive() {
			e.mu.Unlock()
			return c, nil
		}
		a := e.attempt
		if a == nil {
			a = e.startDialLocked()
		}
		if err := e.refused; err != nil {
			// The server would most likely refuse again: the caller
			// does not wait for the redial, which goes on.
			e.mu.Unlock()
			return nil, err
		}
		e.mu.Unlock()
		select {
		case <-a.done:
			if a.err != nil {
				return nil, a.err
			}
			if a.conn.Alive() {
				return a.conn, nil
			}
			if c := e.cur.Load(); c != nil && c.Alive() {
				return c, nil
			}
			// It died before it was handed over (the endpoint dials its
			// replacement): fail as a connection lost, so that a caller
			// without a deadline waits for one dial, not for a server
			// that keeps dropping its connections.
			return nil, a.conn.refusal()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (e *Endpoint) startDialLocked() *dialAttempt {
	a := &dialAttempt{done: make(chan struct{})}
	e.attempt = a
	if e.fresh {
		// The connection this dial replaces ended the failures if it
		// lived, or counts as one more if it died at once.
		e.fresh = false
		if time.Since(e.upSince) < minUptime {
			e.failures++
		} else {
			e.failures = 0
		}
	}
	delay := time.Duration(0)
	if e.failures > 0 {
		delay = minRedial << min(e.failures-1, 10)
		delay = min(delay, maxRedial)
	}
	e.dials.Add(1)
	go e.dial(a, delay)
	return a
}

func (e *Endpoint) dial(a *dialAttempt, delay time.Duration) {
	defer e.dials.Done()
	var c *Conn
	var err error
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-e.ctx.Done():
			t.Stop()
		}
	}
	if e.ctx.Err() != nil {
		err = &ConnError{Reason: Closed, Evidence: Unwritten, Cause: ErrClosed}
	} else {
		c, err = e.open(e.ctx, e.cfg, e.connDied)
	}
	e.mu.Lock()
	if e.closed {
		// Close cancelled this dial (or it finished too late): waiters
		// learn that the endpoint is closed, not that dialing failed.
		if c != nil {
			e.mu.Unlock()
			_ = c.Close()
			e.mu.Lock()
		}
		c, err = nil, e.closedErrorLocked()
	}
	// A refused handshake (an ACL without SELECT, READONLY, ROLE...) is
	// no topology change: the server answered, and would answer so
	// again.
	lost := err != nil && !e.closed && !refusedHandshake(err)
	e.refused = nil
	if refusedHandshake(err) {
		e.refused = err
	}
	e.down.Store(err != nil)
	if err != nil {
		e.failures++
	} else {
		e.fresh, e.upSince = true, time.Now()
		e.cur.Store(c)
	}
	a.conn, a.err = c, err
	e.attempt = nil
	if c != nil && e.early == c {
		// It died before it was stored: its connDied found another
		// e.cur and left the replacement to this dial.
		e.startDialLocked()
		lost = true
	}
	e.early = nil
	e.mu.Unlock()
	close(a.done)
	if lost && e.onLost != nil {
		e.onLost()
	}
}

// refusedHandshake reports whether err is a dial's failure because the
// server refused a handshake command (Reason Handshake).
func refusedHandshake(err error) bool {
	ce, ok := err.(*ConnError)
	return ok && ce.Reason == Handshake
}

// connDied starts a replacement dial right away, unless one is running or
// the endpoint is closed, or it is a solo lane's: a solo lane is dialed
// again when a caller needs it (Endpoint.For), so that lanes a server
// closes while they idle (its timeout setting) are not redialed only to
// idle again.
func (e *Endpoint) connDied(c *Conn) {
	// A solo lane's connection closed unused says nothing about the
	// topology either.
	idle := c.idling.Load()
	e.mu.Lock()
	if e.closed || e.cur.Load() != c {
		if !e.closed && e.attempt != nil {
			e.early = c // perhaps the dial's, not stored yet
		}
		e.mu.Unlock()
		return
	}
	if e.attempt == nil && !e.cfg.soloLane {
		e.startDialLocked()
	}
	e.mu.Unlock()
	if e.onLost != nil && !idle {
		e.onLost()
	}
}

// Retire closes the endpoint because the topology no longer routes to
// it: unlike Close, the frames on its connection fail as Lost, with
// their own write evidence and the given cause, and callers waiting for
// a connection fail as DialFailed (unwritten), so that a retry policy may
// send them to the endpoint that replaced this one. It returns once its
// connection has failed every frame, after a Close or Retire already
// under way has finished.
func (e *Endpoint) Retire(cause error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.shut // a Close or Retire under way: wait for it
		return
	}
	e.closed, e.retired = true, cause
	e.mu.Unlock()
	defer close(e.shut)
	e.eachLane(func(l *Endpoint) { l.Retire(cause) })
	e.cfg.emit(Event{Kind: EventRetired, Err: cause})
	e.cancel()
	e.dials.Wait()
	if c := e.cur.Load(); c != nil {
		c.Retire(cause)
	}
}

// closedErrorLocked is the error of a call that finds the endpoint closed.
func (e *Endpoint) closedErrorLocked() *ConnError {
	if e.retired != nil {
		return &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: e.retired}
	}
	return &ConnError{Reason: Closed, Evidence: Unwritten, Cause: ErrClosed}
}

// Close closes the current connection and stops dialing. Frames in flight
// fail with ErrClosed; waiters get a Closed error. It returns after every
// goroutine of the endpoint has exited, also when another Close or a
// Retire was under way.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.shut // the first Close or Retire may still be waiting
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	defer close(e.shut)
	e.eachLane(func(l *Endpoint) { _ = l.Close() })
	e.cancel()
	e.dials.Wait()
	if c := e.cur.Load(); c != nil {
		_ = c.Close()
	}
	return nil
}
