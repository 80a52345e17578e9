package pool

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/wire"
)

// Config describes a pool. The zero value of each field means its default.
type Config struct {
	// Wire says how each connection is dialed and prepared (address,
	// handshake, TLS, dial hook).
	Wire wire.Config
	// Max is the maximum number of open connections: lent, idle and being
	// dialed. Defaults to 1; values below 1 mean 1.
	Max int
	// IdleTimeout is how long an idle connection may stay unused before
	// the reaper closes it. Defaults to 0: idle connections are kept until
	// they die or the pool closes, and no reaper runs. Negative values
	// mean 0.
	IdleTimeout time.Duration
}

// Stats is a snapshot of a pool's counts. Open is always Idle + Lent +
// Dialing, and never more than Config.Max.
type Stats struct {
	// Open is the number of slots in use: connections lent or idle, and
	// dials in progress. A connection being closed after Discard, reaping
	// or death no longer counts.
	Open int
	// Idle is the number of connections waiting to be lent.
	Idle int
	// Lent is the number of connections handed out by Get and not yet
	// handed back with Put or Discard.
	Lent int
	// Dialing is the number of dials in progress (or granted to a waiter
	// that is about to start one).
	Dialing int
	// Waiting is the number of Get calls waiting for a connection.
	Waiting int
}

// Pool lends dedicated connections to one address, at most Config.Max at a
// time. Create it with [New] and release it with [Pool.Close]. A Pool is
// safe for concurrent use.
type Pool struct {
	cfg         wire.Config
	max         int
	idleTimeout time.Duration

	// ctx is cancelled by Close: it stops the reaper and cancels dials.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts every goroutine or call the pool must outwait on Close:
	// dials (on callers' goroutines), the reaper, background closes. Add
	// is only called under mu while the pool is open.
	wg sync.WaitGroup
	// closeDone is closed when the first Close has finished.
	closeDone chan struct{}
	// reapWake tells the reaper that the idle list is no longer empty.
	reapWake chan struct{}

	mu      sync.Mutex
	closed  bool
	retired error      // the cause given to Retire, or nil
	idle    []idleConn // oldest first; Get takes from the end
	lent    map[*wire.Conn]struct{}
	dialing int
	waiters []*waiter // first come first
}

type idleConn struct {
	c     *wire.Conn
	since time.Time // when it was returned
}

// waiter is a Get call waiting for a slot. Whoever frees a slot while
// waiters exist hands it over through ch (buffered, written once, under
// mu): a connection (already counted as lent to the waiter), the right to
// dial (already counted in dialing and wg), or the pool's closed error.
type waiter struct {
	ch chan grant
}

type grant struct {
	c   *wire.Conn // a connection, counted as lent
	err error      // the pool closed
	// neither: a slot to dial on, counted in dialing and wg
}

// New returns a pool for cfg. It does not dial; connections are dialed on
// demand by [Pool.Get]. When cfg.IdleTimeout > 0 it starts the idle reaper,
// which [Pool.Close] stops.
func New(cfg Config) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	// An idle connection's reader keeps reading, so that a connection the
	// server closed is dead before Get looks at it, rather than lent to
	// fail its first command as possibly executed.
	cfg.Wire.NoOwnRead = true
	p := &Pool{
		cfg:         cfg.Wire,
		max:         max(cfg.Max, 1),
		idleTimeout: max(cfg.IdleTimeout, 0),
		ctx:         ctx,
		cancel:      cancel,
		closeDone:   make(chan struct{}),
		reapWake:    make(chan struct{}, 1),
		lent:        make(map[*wire.Conn]struct{}),
	}
	if p.idleTimeout > 0 {
		p.wg.Add(1)
		go p.reap()
	}
	return p
}

// closedErrorLocked is the error of a Get on a closed pool: Closed, or
// DialFailed with the cause given to Retire.
func (p *Pool) closedErrorLocked() error {
	if p.retired != nil {
		return &wire.ConnError{Reason: wire.DialFailed, Evidence: wire.Unwritten, Cause: p.retired}
	}
	return &wire.ConnError{Reason: wire.Closed, Evidence: wire.Unwritten, Cause: wire.ErrClosed}
}

// Get lends a connection: the most recently returned idle one that is
// alive (dead idle connections are closed and skipped), or a new dial when
// fewer than Config.Max are open. When Max are open it waits within ctx,
// behind earlier waiters, until one is handed back or its slot is freed.
//
// A failed dial returns the *wire.ConnError of [wire.Dial] (and frees its
// slot for the next waiter); ctx ending, while waiting or dialing, returns
// ctx.Err(), also when a connection was dialed or handed over as it ended
// (the connection then goes to the next caller, so that a caller that has
// left never sends); a closed pool, before or during the wait or dial,
// returns a *wire.ConnError with Reason [wire.Closed], Evidence [wire.Unwritten] and
// Cause [wire.ErrClosed] (a retired pool: Reason [wire.DialFailed] and the
// cause given to [Pool.Retire]).
//
// The connection belongs to the caller until it hands it back with exactly
// one [Pool.Put] or [Pool.Discard]. It was alive when lent but may die at
// any time (the server or [Pool.Close] may close it); its frames then fail
// with a *wire.ConnError.
func (p *Pool) Get(ctx context.Context) (*wire.Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, p.closedErrorLocked()
	}
	if err := ctx.Err(); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	// While anything is idle nobody waits (Put hands connections to
	// waiters first), so a dead idle connection's slot is simply dropped.
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1].c
		p.idle[n-1] = idleConn{}
		p.idle = p.idle[:n-1]
		if c.Alive() {
			p.lent[c] = struct{}{}
			p.mu.Unlock()
			return c, nil
		}
		p.closeLocked(c)
	}
	if p.openLocked() < p.max {
		p.dialing++
		p.wg.Add(1)
		p.mu.Unlock()
		return p.dial(ctx)
	}
	w := &waiter{ch: make(chan grant, 1)}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	var began time.Time
	if p.cfg.OnEvent != nil {
		began = time.Now()
	}

	select {
	case g := <-w.ch:
		if p.cfg.OnEvent != nil {
			p.cfg.Emit(wire.Event{Kind: wire.EventPoolWait, Duration: time.Since(began)})
		}
		switch {
		case g.err != nil:
			return nil, g.err
		case ctx.Err() != nil:
			// Granted as ctx ended: the caller must not send; the
			// grant goes on to the next waiter.
			p.refuse(g)
			return nil, ctx.Err()
		case g.c == nil:
			return p.dial(ctx)
		}
		return g.c, nil
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.waiters, w); i >= 0 {
			p.waiters = slices.Delete(p.waiters, i, i+1)
			p.mu.Unlock()
			return nil, ctx.Err()
		}
		p.mu.Unlock()
		// Granted just as ctx ended: pass the grant on.
		p.refuse(<-w.ch)
		return nil, ctx.Err()
	}
}

// refuse gives back a grant its waiter no longer wants.
func (p *Pool) refuse(g grant) {
	switch {
	case g.err != nil:
	case g.c != nil:
		p.Put(g.c)
	default:
		p.mu.Lock()
		p.dialing--
		p.releaseLocked()
		p.mu.Unlock()
		p.wg.Done()
	}
}

// dial dials on a slot already counted in dialing and wg. The dial obeys
// both ctx and the pool's closing.
func (p *Pool) dial(ctx context.Context) (*wire.Conn, error) {
	defer p.wg.Done()
	dctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.ctx, cancel)
	c, err := wire.Dial(dctx, p.cfg, nil)
	stop()
	cancel()

	p.mu.Lock()
	p.dialing--
	if p.closed {
		closedErr := p.closedErrorLocked()
		p.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
		return nil, closedErr
	}
	if err != nil {
		p.releaseLocked()
		p.mu.Unlock()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	p.lent[c] = struct{}{}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The caller left as the dial completed: it must not send on
		// the connection, which goes to the next caller.
		p.putLocked(c)
		p.mu.Unlock()
		return nil, ctxErr
	}
	p.mu.Unlock()
	return c, nil
}

// Put hands a lent connection back for reuse: to the first waiter if there
// is one, otherwise to the idle list. A dead connection is closed instead
// and its slot freed.
//
// Put of a connection the pool does not currently lend does nothing: the
// counts are unchanged and the connection is left as it is. That covers a
// connection from elsewhere (the caller still owns it), a second Put or a
// Put after Discard (the pool already holds or has closed it), and a Put
// after [Pool.Close], which already closed every lent connection. It does
// not cover a second Put after the connection was lent again: that hands
// back the new borrower's connection (see the package doc).
func (p *Pool) Put(c *wire.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.putLocked(c)
}

func (p *Pool) putLocked(c *wire.Conn) {
	if _, ok := p.lent[c]; !ok {
		return
	}
	if !c.Alive() {
		delete(p.lent, c)
		p.closeLocked(c)
		p.releaseLocked()
		return
	}
	if len(p.waiters) > 0 {
		// c stays counted as lent: it goes straight to the waiter.
		w := p.waiters[0]
		p.waiters = slices.Delete(p.waiters, 0, 1)
		w.ch <- grant{c: c}
		return
	}
	delete(p.lent, c)
	p.idle = append(p.idle, idleConn{c: c, since: time.Now()})
	if len(p.idle) == 1 && p.idleTimeout > 0 {
		select {
		case p.reapWake <- struct{}{}:
		default:
		}
	}
}

// Discard closes a lent connection that must never be reused, for
// instance because its caller gave up while the server may still be
// blocking on it, and frees its slot at once for the next waiter (so for a
// moment Config.Max sockets may be open besides the one being closed). It
// does not wait for the connection's loops to end: the close runs on a
// goroutine that [Pool.Close] outwaits.
//
// Like [Pool.Put], Discard of a connection the pool does not currently
// lend does nothing.
func (p *Pool) Discard(c *wire.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.discardLocked(c)
}

func (p *Pool) discardLocked(c *wire.Conn) {
	if _, ok := p.lent[c]; !ok {
		return
	}
	delete(p.lent, c)
	p.closeLocked(c)
	p.releaseLocked()
}

// Close closes the pool: idle and lent connections are closed (frames in
// flight on lent ones fail with Reason [wire.Closed]), dials in progress
// are cancelled, waiters in Get return the closed error and the reaper
// stops. It returns after every goroutine the pool started, and every dial
// it counted, has finished. Later calls wait for the first to finish and
// return nil. Close always returns nil.
func (p *Pool) Close() error {
	p.end(nil)
	return nil
}

// Retire closes the pool because the topology no longer routes to its
// server: as Close, except that frames in flight on lent and idle
// connections fail as Lost, with their own write evidence and cause, and
// Get (waiters included) fails as DialFailed, Unwritten, with cause; a
// retry policy may then send them to the server that replaced this one.
// A pool already closed stays as it is; Retire waits for that Close.
func (p *Pool) Retire(cause error) {
	p.end(cause)
}

// end is Close (cause nil) or Retire.
func (p *Pool) end(cause error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.closeDone
		return
	}
	p.closed, p.retired = true, cause
	conns := make([]*wire.Conn, 0, len(p.idle)+len(p.lent))
	for _, e := range p.idle {
		conns = append(conns, e.c)
	}
	for c := range p.lent {
		conns = append(conns, c)
	}
	p.idle, p.lent = nil, make(map[*wire.Conn]struct{})
	for _, w := range p.waiters {
		w.ch <- grant{err: p.closedErrorLocked()}
	}
	p.waiters = nil
	p.mu.Unlock()

	p.cancel()
	var closes sync.WaitGroup
	for _, c := range conns {
		closes.Go(func() {
			if cause != nil {
				c.Retire(cause)
			} else {
				_ = c.Close()
			}
		})
	}
	closes.Wait()
	p.wg.Wait()
	close(p.closeDone)
}

// Stats returns the pool's current counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		Open:    p.openLocked(),
		Idle:    len(p.idle),
		Lent:    len(p.lent),
		Dialing: p.dialing,
		Waiting: len(p.waiters),
	}
}

func (p *Pool) openLocked() int { return len(p.idle) + len(p.lent) + p.dialing }

// releaseLocked is called after a slot was freed (its connection removed
// from idle or lent, or its dial finished without a connection): the first
// waiter, if any, gets the slot to dial on.
func (p *Pool) releaseLocked() {
	if p.closed || len(p.waiters) == 0 {
		return
	}
	w := p.waiters[0]
	p.waiters = slices.Delete(p.waiters, 0, 1)
	p.dialing++
	p.wg.Add(1)
	w.ch <- grant{}
}

// closeLocked closes c on a goroutine counted in wg, so that the caller
// does not wait for c's loops. The pool must be open.
func (p *Pool) closeLocked(c *wire.Conn) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = c.Close()
	}()
}

// reap closes idle connections unused for idleTimeout. It sleeps until the
// oldest idle connection expires, or until Put makes the idle list
// non-empty, and exits when the pool closes.
func (p *Pool) reap() {
	defer p.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var expiry <-chan time.Time
	var expired []*wire.Conn
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.reapWake:
		case <-expiry:
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		now := time.Now()
		n := 0
		for n < len(p.idle) && now.Sub(p.idle[n].since) >= p.idleTimeout {
			expired = append(expired, p.idle[n].c)
			n++
		}
		p.idle = slices.Delete(p.idle, 0, n)
		for range n {
			p.releaseLocked()
		}
		expiry = nil
		if len(p.idle) > 0 {
			timer.Reset(p.idle[0].since.Add(p.idleTimeout).Sub(now))
			expiry = timer.C
		}
		p.mu.Unlock()
		for i, c := range expired {
			_ = c.Close()
			expired[i] = nil
		}
		expired = expired[:0]
	}
}
