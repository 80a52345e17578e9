package respiretest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/ascii"
)

// DialFunc dials a connection, like net.Dialer.DialContext. The proxy calls
// it from many goroutines at once, so it must be safe for concurrent use.
// The proxy cancels ctx when it closes and [Proxy.Close] waits for a dial
// in progress, so a DialFunc must return once ctx is done.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// MemoryAddr is what [Proxy.Addr] returns for a proxy without a listener
// (see [InMemory]). [Proxy.Dial] ignores its address, so a client given
// MemoryAddr and Dial as its dialer reaches the proxy.
const MemoryAddr = "respiretest.memory:6379"

// Option configures [NewProxy] and [NewServer]. An Option is a plain
// function value, safe for concurrent use.
type Option func(*config)

type config struct {
	inMemory    bool
	backendDial DialFunc
	idmp        *bool
	engine      bool // the backend is a Server's embedded engine
}

// InMemory makes the proxy listen on nothing: clients reach it only through
// [Proxy.Dial] or [Proxy.ServeConn]. For [NewServer] it also makes the hop
// to the embedded engine a net.Pipe, so nothing touches the network and the
// server works inside a testing/synctest bubble. NewServer chooses it by
// itself when it runs inside a bubble.
func InMemory() Option { return func(c *config) { c.inMemory = true } }

// WithBackendDialer makes the proxy reach its backend through dial instead
// of dialing TCP to the backend address given to [NewProxy]. dial may return
// in-memory connections. [NewServer] and [StartServer] ignore it: their
// backend is the embedded engine.
func WithBackendDialer(dial DialFunc) Option {
	return func(c *config) { c.backendDial = dial }
}

// WithIDMP turns the emulation of Redis 8.6 stream idempotency (XADD IDMP,
// XADD IDMPAUTO, XCFGSET) on or off; see the package documentation. It is
// off by default for [NewProxy] and on by default for [NewServer].
func WithIDMP(on bool) Option { return func(c *config) { c.idmp = &on } }

// CommandStats counts the frames of one command name that went through a
// [Proxy]. It is a plain value that the library neither keeps nor changes
// once returned: safe for concurrent reads.
type CommandStats struct {
	// Received counts complete frames that arrived from clients.
	Received int64
	// Forwarded counts frames completely written to the backend.
	Forwarded int64
}

// Proxy is a RESP-aware fault-injecting proxy in front of one RESP server.
// Each client connection gets its own backend connection. Rules added with
// [Proxy.AddRule] act on the frames they match; see the package
// documentation for the ordering guarantees. A Proxy is safe for concurrent
// use. Make one with [NewProxy]: the zero Proxy is not usable.
type Proxy struct {
	backendAddr string
	dialBackend DialFunc
	ln          net.Listener
	idmp        *idmpTable // nil: emulation off
	engine      bool       // the backend is a Server's embedded engine

	mu       sync.Mutex
	closed   bool
	rules    []*RuleHandle
	sessions map[*session]struct{}
	gates    []*Gate
	refuse   int
	stats    map[string]*cmdCounter

	partition atomic.Pointer[Partition] // nil: no partition in force

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	done   <-chan struct{} // ctx.Done()
	wg     sync.WaitGroup
}

type cmdCounter struct{ received, forwarded atomic.Int64 }

// NewProxy starts a proxy in front of the RESP server at backendAddr. Unless
// [InMemory] is given it listens on a free port of 127.0.0.1 (see
// [Proxy.Addr]). Close it with [Proxy.Close].
//
// NewProxy does not contact the backend, so it succeeds for an address
// nothing listens on: each client connection dials the backend when it
// arrives. If that dial fails, the proxy closes the client connection
// without a reply (the client sees EOF, a reset, or on a connection from
// [Proxy.Dial] a failed write). The proxy sets no dial timeout of its
// own: while a dial hangs, the client connection stays silent (a write
// on a connection from Proxy.Dial blocks), until the dial ends or
// [Proxy.Close] cancels it.
func NewProxy(backendAddr string, opts ...Option) (*Proxy, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return newProxy(backendAddr, cfg)
}

func newProxy(backendAddr string, cfg config) (*Proxy, error) {
	p := &Proxy{
		backendAddr: backendAddr,
		dialBackend: cfg.backendDial,
		engine:      cfg.engine,
		sessions:    map[*session]struct{}{},
		stats:       map[string]*cmdCounter{},
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.done = p.ctx.Done()
	if p.dialBackend == nil {
		if backendAddr == "" {
			return nil, fmt.Errorf("%w: NewProxy needs a backend address or WithBackendDialer", ErrInvalidArgument)
		}
		var d net.Dialer
		p.dialBackend = d.DialContext
	}
	if cfg.idmp != nil && *cfg.idmp {
		p.idmp = newIDMPTable()
	}
	if !cfg.inMemory {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.cancel()
			return nil, fmt.Errorf("respiretest: listen: %w", err)
		}
		p.ln = ln
		p.wg.Add(1)
		go p.acceptLoop()
	}
	return p, nil
}

// Addr returns the address clients dial: the proxy's 127.0.0.1 listener,
// or [MemoryAddr] for a proxy made with [InMemory].
func (p *Proxy) Addr() string {
	if p.ln == nil {
		return MemoryAddr
	}
	return p.ln.Addr().String()
}

// Bounds of the accept loop's backoff after a failed Accept.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// acceptLoop serves the listener's connections until the proxy closes. A
// failed Accept of a listener still open (a temporary shortage such as
// EMFILE, or an aborted connection) is retried after a backoff that
// doubles from 5 ms to at most 1 s, and resets once a connection arrives.
func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
				continue
			case <-p.done:
				t.Stop()
				return
			}
		}
		backoff = 0
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := p.admit(context.Background()); err != nil {
				if tc, ok := c.(*net.TCPConn); ok && errors.Is(err, ErrDialRefused) {
					_ = tc.SetLinger(0) // the client sees a reset, as close to a refusal as an accepted socket gets
				}
				c.Close()
				return
			}
			p.serve(c)
		}()
	}
}

// Dial returns a new in-memory client connection to the proxy (one end of a
// net.Pipe, the other served like an accepted connection). network and addr
// are ignored, so Dial fits a client's dialer option. A ctx already done
// fails the dial with ctx.Err(), as net.Dialer does. Dial control applies:
// a dial refused by [Proxy.RefuseDials] returns [ErrDialRefused]; a dial
// held by [Proxy.HoldDials] blocks until the gate is released, ctx is done
// (ctx.Err()) or the proxy closes ([ErrClosed]). A net.Pipe has no buffer:
// a client that writes a pipeline of more than about a thousand frames
// must read the replies meanwhile, or its write blocks (the proxy keeps
// at most 1024 replies waiting for the client before it stops reading).
func (p *Proxy) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.admit(ctx); err != nil {
		return nil, err
	}
	c, s := net.Pipe()
	if !p.ServeConn(s) {
		c.Close()
		return nil, ErrClosed
	}
	return c, nil
}

// ServeConn serves conn as a client connection, without dial control, and
// reports whether it was accepted (false once the proxy is closed, and conn
// is then closed). The proxy closes conn when the session ends.
func (p *Proxy) ServeConn(conn net.Conn) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		conn.Close()
		return false
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		p.serve(conn)
	}()
	return true
}

// serve dials the backend for client and runs the session; it returns when
// the session has ended. The caller accounts for it in p.wg.
func (p *Proxy) serve(client net.Conn) {
	backend, err := p.dialBackend(p.ctx, "tcp", p.backendAddr)
	if err != nil {
		client.Close()
		return
	}
	s := newSession(p, client, backend)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		backend.Close()
		return
	}
	p.sessions[s] = struct{}{}
	p.mu.Unlock()
	s.run()
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
}

// AddRule adds a rule after the existing ones and returns its handle. An
// invalid rule returns an error wrapping [ErrInvalidRule] and is not added;
// on a closed proxy (for [NewServer], once the test has ended) AddRule
// returns [ErrClosed].
//
// Every rule counts the frames it matches. Of the rules that apply to a
// frame, every [Pass] rule fires (counts, signals) and the first other
// rule, in the order they were added, acts on it; the remaining rules do
// not apply to that frame (it still counts towards their Nth).
func (p *Proxy) AddRule(r Rule) (*RuleHandle, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	h := newRuleHandle(p, r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	p.rules = append(p.rules, h)
	return h, nil
}

// MustAddRule is [Proxy.AddRule] that fails tb on error.
func (p *Proxy) MustAddRule(tb TB, r Rule) *RuleHandle {
	tb.Helper()
	h, err := p.AddRule(r)
	if err != nil {
		tb.Fatalf("respiretest: AddRule: %v", err)
	}
	return h
}

// TB is the part of testing.TB the kit uses. A *testing.T, *testing.B or
// *testing.F satisfies it; the kit calls it only on the goroutine that called the
// kit's function, as Fatalf requires.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Stats returns the counts of one command name (case-insensitive; the
// first word of the frame, so "CLIENT" counts every CLIENT subcommand).
// The empty name counts the frames of every command.
func (p *Proxy) Stats(command string) CommandStats {
	if command == "" {
		var all CommandStats
		for _, c := range p.AllStats() {
			all.Received += c.Received
			all.Forwarded += c.Forwarded
		}
		return all
	}
	p.mu.Lock()
	c := p.stats[ascii.Upper(command)]
	p.mu.Unlock()
	if c == nil {
		return CommandStats{}
	}
	return CommandStats{Received: c.received.Load(), Forwarded: c.forwarded.Load()}
}

// AllStats returns the counts of every command name seen, keyed in upper
// case.
func (p *Proxy) AllStats() map[string]CommandStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]CommandStats, len(p.stats))
	for name, c := range p.stats {
		out[name] = CommandStats{Received: c.received.Load(), Forwarded: c.forwarded.Load()}
	}
	return out
}

// Forwarded returns how many frames of command were completely written to
// the backend (Stats(command).Forwarded); "" counts every command.
func (p *Proxy) Forwarded(command string) int { return int(p.Stats(command).Forwarded) }

func (p *Proxy) counter(name string) *cmdCounter {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.stats[name]
	if c == nil {
		c = &cmdCounter{}
		p.stats[name] = c
	}
	return c
}

// Sessions returns the number of client connections the proxy is serving.
func (p *Proxy) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// Close stops the proxy: it closes the listener and every client and
// backend connection, fails held dials with [ErrClosed], and discards held
// and delayed replies (their connections are closed, so nothing is
// delivered). It waits for the proxy's goroutines, so it returns only once
// every [Rule.OnReceive] callback in progress has returned: a callback must
// not wait for anything that happens after Close, nor call Close. Closing
// again does nothing more: a Close that runs while another is still
// closing waits for it, so each returns only once the proxy has stopped.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.cancel()
	sessions := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		sessions = append(sessions, s)
	}
	p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
	}
	for _, s := range sessions {
		s.close()
	}
	p.wg.Wait()
	return nil
}

// Gate holds new client connections of a [Proxy] until released. Its
// methods are safe for concurrent use.
type Gate struct {
	releaseOnce sync.Once
	open        chan struct{}
	arriveOnce  sync.Once
	arrived     chan struct{}
	held        atomic.Int64
}

// HoldDials returns a new gate that holds every client connection arriving
// from now on, until [Gate.Release]: an accepted TCP connection is neither
// read nor connected to the backend, and [Proxy.Dial] blocks. Closing the
// proxy releases the held dials with [ErrClosed].
func (p *Proxy) HoldDials() *Gate {
	g := &Gate{open: make(chan struct{}), arrived: make(chan struct{})}
	p.mu.Lock()
	p.gates = append(p.gates, g)
	p.mu.Unlock()
	return g
}

// Release lets every held connection proceed and stops holding new ones.
// Releasing twice does nothing.
func (g *Gate) Release() { g.releaseOnce.Do(func() { close(g.open) }) }

// Arrived returns a channel closed when the gate first holds a connection.
func (g *Gate) Arrived() <-chan struct{} { return g.arrived }

// Held returns how many connections the gate has held so far (released or
// not).
func (g *Gate) Held() int { return int(g.held.Load()) }

// RefuseDials makes the proxy refuse the next n client connections: an
// accepted TCP connection is reset at once, and [Proxy.Dial] returns
// [ErrDialRefused]. It adds to refusals still pending. A negative n is an
// error wrapping [ErrInvalidArgument] and changes nothing.
func (p *Proxy) RefuseDials(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: RefuseDials(%d): negative count", ErrInvalidArgument, n)
	}
	p.mu.Lock()
	p.refuse += n
	p.mu.Unlock()
	return nil
}

// admit applies dial control to a new client connection.
func (p *Proxy) admit(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.refuse > 0 {
		p.refuse--
		p.mu.Unlock()
		return ErrDialRefused
	}
	var gates []*Gate
	live := p.gates[:0]
	for _, g := range p.gates {
		select {
		case <-g.open:
			continue // released: forget it
		default:
		}
		live = append(live, g)
		gates = append(gates, g)
	}
	clear(p.gates[len(live):])
	p.gates = live
	p.mu.Unlock()
	if !p.waitHealed(ctx.Done()) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrClosed
	}
	for _, g := range gates {
		g.held.Add(1)
		g.arriveOnce.Do(func() { close(g.arrived) })
		select {
		case <-g.open:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return ErrClosed
		}
	}
	return nil
}
