package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/pool"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Client is a client of one Redis (or Valkey) deployment: a standalone
// server, the primary (and replicas) of a Sentinel group, or a Cluster.
// It holds one multiplexed, auto-pipelined connection per server, shared
// by all goroutines and replaced after it dies (and, while few goroutines
// share it, a few connections a caller uses alone:
// [Options.SoloConnections]). A Client is safe for
// concurrent use. Make one with [Connect]; the zero Client is not usable.
type Client struct {
	cfg      config
	ep       *wire.Endpoint // standalone: the one server's shared connection; nil on a topology
	blocking *pool.Pool     // standalone: dedicated connections for blocking commands
	node     *route.Node    // standalone: ep and blocking as a node
	topo     route.Topology // Sentinel or Cluster routing; nil when standalone
	retries  bool           // cfg.policy.Enabled()
	metrics  *retryMetrics
	closed   atomic.Bool
	done     chan struct{} // closed by Close: ends every retry backoff at once
	shut     chan struct{} // closed when Close has finished: a second Close waits for it
	frames   wire.FramePool
	hooks    *hooks // Options.Hooks composed; nil: none

	cmdMetrics  *commandMetrics // MetricsCommands; nil: off
	connMetrics *connMetrics    // MetricsConnections; nil: off

	cache *clientCache // Options.ClientCache; nil: none

	// evalOnly records that the server refused EVALSHA (index 0) or
	// EVALSHA_RO (index 1) by the user's ACL: Script.Run then sends EVAL
	// (EVAL_RO) with the source at once. See Script.
	evalOnly [2]atomic.Bool

	subsMu sync.Mutex
	subs   map[*Subscription]struct{} // open subscriptions, closed by Close
}

// Connect validates opts, connects to the first endpoint and prepares the
// connection (HELLO, AUTH, SELECT, CLIENT SETNAME). An invalid option
// fails with a [*ConfigError] naming it; a failed connection with a
// [*ConnError] (whose Err is a [*ServerError] for a rejected handshake);
// a context that has already ended with a [*ContextError] wrapping its
// error, before any dial; and a nil context with an error matching
// [ErrInvalidArgument].
func Connect(ctx context.Context, opts Options) (*Client, error) {
	cfg, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, errNilContext("Connect")
	}
	if err := ctx.Err(); err != nil {
		return nil, &ContextError{Command: "connect", Err: err} // as a command's: nothing is dialed
	}
	cfg.streamProducerID = streamProducerID(cfg.streamProducerID)
	c := &Client{cfg: cfg, retries: cfg.policy.Enabled(), done: make(chan struct{}), shut: make(chan struct{})}
	if c.hooks, err = newHooks(cfg.hooks); err != nil {
		return nil, err
	}
	if err := c.newMetrics(); err != nil {
		return nil, err
	}
	if c.connMetrics != nil || cfg.logger != nil {
		c.cfg.wire.OnEvent = c.onConnEvent
	}
	if cfg.cache != nil {
		c.cache = newClientCache(cfg.cache)
		c.cfg.wire.OnPush, c.cfg.wire.OnTrackingLost = c.cache.onPush, c.cache.flush
	}
	if cfg.sentinel != nil || cfg.cluster != nil {
		if err := c.connectTopology(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	c.ep = wire.NewEndpoint(c.cfg.wire)
	c.blocking = pool.New(pool.Config{Wire: c.cfg.dedicatedWire(), Max: cfg.blockingPoolSize, IdleTimeout: dedicatedIdleTimeout})
	c.node = &route.Node{Addr: cfg.wire.Addr, EP: c.ep, Pool: c.blocking, Dedicated: c.cfg.dedicatedWire()}
	if _, err := c.ep.Conn(ctx); err != nil {
		_ = c.ep.Close()
		_ = c.blocking.Close()
		var we *wire.ConnError
		if errors.As(err, &we) {
			return nil, connectError(cfg.wire.Addr, we)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// ctx ended the dial or handshake, as DialTimeout would have.
			return nil, &ConnError{Command: "connect", Unwritten: true, Err: err, addr: cfg.wire.Addr}
		}
		return nil, err
	}
	return c, nil
}

// Close closes the client: its shared, batch and dedicated connections on
// every server, and every [Subscription] it opened (their channels close).
// Calls in flight fail with an error matching [ErrClosed], blocking
// commands and the commands of running [Client.Dedicated] and
// [Client.Watch] callbacks included; later calls fail the same way
// without sending anything. A callback goes on until it returns, its
// commands failing. Close waits for the client's goroutines to exit and is
// safe to call more than once: a Close called while another runs returns
// when that one does. A callback, a range loop's body or a
// command's [ProcessHook] may call Close; a [DialHook] and a cached read's
// ProcessHook, which run on the client's goroutines, must not ([Hook]).
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		<-c.shut // the first Close may still be waiting for the goroutines
		return nil
	}
	defer close(c.shut)
	close(c.done)
	if c.cache != nil {
		c.cache.close()
		defer c.cache.wg.Wait() // its reads end with the connections
	}
	c.closeSubscriptions()
	if c.topo != nil {
		return c.topo.Close()
	}
	return multierr.Join(c.ep.Close(), c.blocking.Close())
}

// String names the client's topology and addresses, such as
// "respire.Client(127.0.0.1:6379)"; it never includes a password. (fmt's
// %v would otherwise print the client's configuration, password
// included.)
func (c *Client) String() string {
	switch {
	case c.cfg.sentinel != nil:
		return "respire.Client(sentinel " + c.cfg.sentinel.PrimaryName + " via " + strings.Join(c.cfg.sentinel.Addrs, ",") + ")"
	case c.cfg.cluster != nil:
		return "respire.Client(cluster " + strings.Join(c.cfg.seeds, ",") + ")"
	}
	return "respire.Client(" + c.cfg.wire.Addr + ")"
}

// GoString is [Client.String], for fmt's %#v.
func (c *Client) GoString() string { return c.String() }

// spec describes how one command is dispatched.
type spec struct {
	name string                // command name for errors
	cat  catalog.RetryCategory // retry category; not Retryable means never resent
	desc catalog.Command       // the catalog's facts: key positions and flags (routing)
	// unit, for a batch or transaction frame that completed, returns the
	// failure of the whole unit (nil error: it succeeded, whatever its
	// members' own errors).
	unit func(f *wire.Frame) (retry.Failure, error)
	// tracked: the frame is CLIENT CACHING YES and the command, a cached
	// read (an ASK redirect replaces the prelude with ASKING).
	tracked bool
	// tx: the frame is a transaction (MULTI ... EXEC); on a Cluster its
	// MOVED rejection is followed within the attempt.
	tx bool
}

func specOf(cmd catalog.Command) *spec {
	return &spec{name: cmd.FullName(), cat: cmd.Category(), desc: cmd}
}

// newFrame returns a frame holding the array header of an n-argument
// command and its name.
func (c *Client) newFrame(n int, name string) *wire.Frame {
	f := c.frames.Get()
	f.Buf = resp.AppendArrayHeader(f.Buf, n)
	f.Buf = resp.AppendBulkString(f.Buf, name)
	return f
}

// attemptResult is the outcome of one send.
type attemptResult struct {
	err       error         // public error; nil on success
	failure   retry.Failure // classification for the retry decision
	unwritten bool          // transport fact: the frame never reached the server
	accepted  bool          // the transport accepted the frame for writing
	owned     bool          // the caller still owns the frame
	closed    bool          // the client was closed before anything was sent
	replica   bool          // a replica served it: never resent, but for a Cluster batch group
	started   bool          // a node was chosen and a send begun (Cluster metrics)
	refused   bool          // unwritten: the server refused a new connection's handshake
}

// exec sends f and waits for its reply, resending under the retry policy.
// On success the caller reads f's results and releases it; on error exec
// has released (or given up) the frame.
func (c *Client) exec(ctx context.Context, f *wire.Frame, s *spec) error {
	if ctx == nil {
		f.Release()
		return errNilContext(s.name)
	}
	if c.hooks != nil || c.cmdMetrics != nil {
		return c.execObserved(ctx, f, s, nil)
	}
	return c.execFrame(ctx, f, s)
}

// execObserved is exec (bt nil) or execBlocking through the process hooks
// and the command duration metric.
func (c *Client) execObserved(ctx context.Context, f *wire.Frame, s *spec, bt *blockTime) error {
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var err error
	switch {
	case c.hooks != nil:
		err = c.processFrame(ctx, &CommandInfo{Name: s.name, Category: s.cat, c: c, f: f, s: s, bt: bt})
	case bt != nil:
		err = c.execBlockingFrame(ctx, f, s, *bt)
	default:
		err = c.execFrame(ctx, f, s)
	}
	if c.cmdMetrics != nil {
		c.recordCommand(s, began, err)
	}
	return err
}

// execFrame is exec without the process hooks: the command itself.
func (c *Client) execFrame(ctx context.Context, f *wire.Frame, s *spec) error {
	if c.topo != nil {
		return c.execRouted(ctx, f, s, nil)
	}
	return c.execResolved(ctx, f, s, nil)
}

// execResolved is exec on a resolved target: t routes it on a topology
// (for a unit, resolved from its members rather than from the frame); nil
// sends it to the standalone server.
func (c *Client) execResolved(ctx context.Context, f *wire.Frame, s *spec, t *target) error {
	var waitDL time.Time
	if !s.tracked { // a cached read's waiters each keep their own deadline (cachedGet)
		waitDL = c.waitDeadline(ctx)
	}
	r := c.attempt(ctx, f, waitDL, s, t)
	if r.err == nil {
		return nil
	}
	if c.retries && s.cat.Retryable() {
		return c.retryLoop(ctx, f, waitDL, s, r, t)
	}
	if r.owned {
		f.Release()
	}
	return r.err
}

// waitDeadline is the command's own deadline when ctx has none: now plus
// CommandTimeout; zero when ctx has one or there is no timeout. It reads
// the monotonic clock only (clock.Now), once per call on the healthy path.
func (c *Client) waitDeadline(ctx context.Context) time.Time {
	if _, ok := ctx.Deadline(); !ok && c.cfg.commandTimeout > 0 {
		return clock.Now().Add(c.cfg.commandTimeout)
	}
	return time.Time{}
}

// attempt performs one send: connection selection, submission and wait.
// t routes it on a topology; nil sends to the standalone server.
func (c *Client) attempt(ctx context.Context, f *wire.Frame, waitDL time.Time, s *spec, t *target) attemptResult {
	if c.closed.Load() {
		return attemptResult{err: &ConnError{Command: s.name, Unwritten: true, Err: ErrClosed}, failure: retry.Fatal, unwritten: true, owned: true, closed: true}
	}
	if err := ctx.Err(); err != nil {
		// A context that has already ended sends nothing.
		return attemptResult{err: &ContextError{Command: s.name, Err: err}, failure: retry.Fatal, unwritten: true, owned: true}
	}
	if t != nil {
		return c.attemptRouted(ctx, f, waitDL, s, t)
	}
	return c.send(ctx, f, waitDL, s, c.ep)
}

// send submits f on ep's connection and waits for its reply.
func (c *Client) send(ctx context.Context, f *wire.Frame, waitDL time.Time, s *spec, ep *wire.Endpoint) attemptResult {
	// A large batch or transaction takes a batch connection; a small frame
	// a solo connection when few callers share the shared one, but for a
	// cached read, whose tracking is the shared connection's.
	lane := ep.For(f, !s.tracked)
	sent, err := c.sendOn(ctx, waitDL, lane, f)
	if !sent && lane != ep {
		var we *wire.ConnError
		if errors.As(err, &we) {
			// The lane's connection ended since For chose it (a solo
			// connection closed unused, or lost), or its redial failed:
			// f was not written, and the shared connection takes it.
			sent, err = c.sendOn(ctx, waitDL, ep, f)
		}
	}
	if !sent {
		return c.failedBeforeSend(ctx, err, s)
	} else if err != nil {
		// The frame now belongs to the connection, which drains its reply.
		return attemptResult{err: &ContextError{Command: s.name, Sent: true, Err: err}, failure: retry.Fatal, accepted: true}
	}
	if c.cache != nil && !s.tracked {
		c.cache.afterWrite(f.Buf, s.desc, s.unit == nil)
	}
	if f.Err != nil {
		return attemptResult{
			err:       connError(s.name, f.Err),
			failure:   classifyConn(f.Err),
			unwritten: f.Err.Evidence == wire.Unwritten,
			accepted:  true,
			owned:     true,
		}
	}
	if s.unit != nil {
		if fl, err := s.unit(f); err != nil {
			return attemptResult{err: err, failure: fl, accepted: true, owned: true}
		}
		return attemptResult{accepted: true, owned: true}
	}
	if f.IsErr {
		if s.tracked && f.ErrIndex == 0 {
			refusedPrelude(f)
		}
		if !s.tracked || f.ErrIndex == 1 {
			// A cached read's prelude and PTTLs (before and after the
			// read) may fail on their own: the read's reply is the
			// caller's (execCached).
			se := newServerError(s.name, f.ErrReply)
			return attemptResult{err: se, failure: retry.ClassifyCode(se.Code), accepted: true, owned: true}
		}
	}
	return attemptResult{accepted: true, owned: true}
}

// refusedPrelude handles a cached read's frame f whose prelude (CLIENT
// CACHING YES, or ASKING, refused by an ACL without it) failed: when the
// read failed too, its own error becomes the frame's (a MOVED is then
// followed); otherwise the read succeeded, untracked (execCached).
func refusedPrelude(f *wire.Frame) {
	if len(f.Values) > 0 && f.Values[0].IsError() {
		f.ErrIndex, f.ErrReply = 1, append(f.ErrReply[:0], f.Values[0].Str...)
	}
}

// sendOn writes f on ep's connection and waits for its reply (wire.Conn.Do),
// dialing first when ep has no live connection.
func (c *Client) sendOn(ctx context.Context, waitDL time.Time, ep *wire.Endpoint, f *wire.Frame) (sent bool, err error) {
	conn := ep.Current()
	if conn == nil {
		if conn, err = c.acquire(ctx, waitDL, ep); err != nil {
			return false, err
		}
	}
	return conn.Do(ctx, waitDL, f)
}

// acquire waits for a connection within ctx and the command's deadline.
func (c *Client) acquire(ctx context.Context, waitDL time.Time, ep *wire.Endpoint) (*wire.Conn, error) {
	if !waitDL.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, waitDL)
		defer cancel()
	}
	return ep.Conn(ctx)
}

func (c *Client) failedBeforeSend(ctx context.Context, err error, s *spec) attemptResult {
	var we *wire.ConnError
	if errors.As(err, &we) {
		return attemptResult{err: connError(s.name, we), failure: classifyConn(we), unwritten: true, owned: true,
			refused: we.Reason == wire.Handshake}
	}
	if ctx.Err() == nil {
		err = context.DeadlineExceeded // the command's own deadline ended the wait
	}
	return attemptResult{err: &ContextError{Command: s.name, Err: err}, failure: retry.Fatal, unwritten: true, owned: true}
}

// classifyConn maps a transport failure to a retry failure. Closing,
// protocol errors and rejected handshakes (authentication, configuration)
// are never retried.
func classifyConn(e *wire.ConnError) retry.Failure {
	switch e.Reason {
	case wire.Lost, wire.DialFailed:
		return retry.LostConnection
	}
	return retry.Fatal
}

// retryLoop continues after a failed first attempt of frame f. It is
// kept out of exec so that the healthy path pays nothing for it.
func (c *Client) retryLoop(ctx context.Context, f *wire.Frame, waitDL time.Time, s *spec, r attemptResult, t *target) error {
	// Copies: the caller's spec and target may live on its stack, and a
	// pointer kept here would move them to the heap on every call, the
	// healthy ones included. The target's copy goes back to the caller,
	// which reads the node that served the call from it.
	fr := &frameResend{c: c, ctx: ctx, f: f, waitDL: waitDL, s: *s}
	if t != nil {
		fr.target = *t
		fr.t = &fr.target
	}
	err := c.retryOp(ctx, waitDL, &fr.s, r, fr)
	if t != nil {
		*t = fr.target
	}
	return err
}

// resender is what retryOp resends: one frame, or an exchange of
// commands (a script with its EVAL fallback, a function with its library
// reload) that retries as a whole.
type resender interface {
	// resend runs the operation again.
	resend() attemptResult
	// drop releases what the final failed attempt r still holds.
	drop(r attemptResult)
	// countsStarted reports whether a resend counts as attempted once
	// started on a node (Cluster), rather than once the transport
	// accepted it (standalone and Sentinel). An exchange's resend is
	// accepted or started when any of its commands was.
	countsStarted() bool
}

// frameResend resends one frame.
type frameResend struct {
	c      *Client
	ctx    context.Context
	f      *wire.Frame
	waitDL time.Time
	s      spec
	t      *target // &target, or nil off a topology
	target target
}

func (fr *frameResend) resend() attemptResult {
	fr.f.Reset()
	return fr.c.attempt(fr.ctx, fr.f, fr.waitDL, &fr.s, fr.t)
}

func (fr *frameResend) drop(r attemptResult) {
	if r.owned {
		fr.f.Release()
	}
}

func (fr *frameResend) countsStarted() bool { return fr.c.isCluster() }

// retryOp is the retry loop of an operation whose first attempt failed
// with r: it decides, backs off and resends through rs until an attempt
// succeeds or the policy, the deadline, the context or Close stops it.
func (c *Client) retryOp(ctx context.Context, waitDL time.Time, s *spec, r attemptResult, rs resender) error {
	deadline := waitDL
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	attempts, resent := 1, false
	ran := !r.unwritten    // some attempt of this call may have executed
	maybe := mayHaveRun(r) // the same, less the attempts the server refused unrun
	earlier := false       // some attempt before the last may have executed (refusals aside)
	for {
		stop := !r.owned || (r.replica && s.unit == nil) || c.cfg.policy.Decide(retry.Input{
			Category:  s.cat,
			Failure:   r.failure,
			Unwritten: r.unwritten,
			Attempts:  attempts,
		}) != retry.Retry
		if !stop {
			delay := c.cfg.policy.Delay(attempts, rand.Float64())
			if !retry.Fits(time.Now(), deadline, delay) {
				stop = true // the backoff cannot fit: keep the last failure
			} else if err := c.backoff(ctx, delay); err != nil {
				rs.drop(r)
				c.record(s.cat, outcomeExhausted, resent)
				// Like the final attempt's error, each part says whether
				// the call (not only its last attempt) may have run.
				last := markRan(r.err, ran)
				if err == ErrClosed {
					return &RetryError{Command: s.name, Attempts: attempts, ran: ran, earlier: earlier,
						Err: closedWhileWaiting(s.name, ErrClosed, ran, last)}
				}
				return &RetryError{Command: s.name, Attempts: attempts, ran: ran, earlier: earlier,
					Err: &ContextError{Command: s.name, Sent: ran, Err: err, Last: last}}
			} else if !deadline.IsZero() && !time.Now().Before(deadline) {
				stop = true
			}
		}
		if stop {
			rs.drop(r)
			c.record(s.cat, outcomeExhausted, resent)
			if attempts > 1 {
				return &RetryError{Command: s.name, Attempts: attempts, ran: ran, earlier: earlier, Err: markRan(r.err, ran)}
			}
			return r.err
		}
		attempts++
		earlier = maybe
		r = rs.resend()
		if r.closed {
			// The client closed between the backoff and the resend:
			// nothing was sent, so this was no attempt.
			attempts--
		}
		ran = ran || !r.unwritten
		maybe = maybe || mayHaveRun(r)
		// Standalone and Sentinel count the resends the transport
		// accepted; Cluster counts the resends started on a node.
		if r.accepted || (r.started && rs.countsStarted()) {
			resent = true
			c.record(s.cat, outcomeAttempted, true)
		}
		if r.err == nil {
			c.record(s.cat, outcomeSucceeded, resent)
			return nil
		}
	}
}

// mayHaveRun reports whether the failed attempt r may have run its
// command: it was written and not refused with one of the selectable
// error replies (LOADING, TRYAGAIN, MASTERDOWN, READONLY), which a server
// sends before running a command. Only the XADD fallback asks (through
// RetryError.earlier); MayHaveExecuted stays with the written fact.
func mayHaveRun(r attemptResult) bool {
	switch r.failure {
	case retry.LoadingReply, retry.TryAgainReply, retry.MasterDownReply, retry.ReadOnlyReply:
		return false
	}
	return !r.unwritten
}

// markRan makes the final attempt's own error say that the call may have
// executed when an earlier attempt may have: "sent" and "unwritten"
// describe the call, not only its last attempt.
func markRan(err error, ran bool) error {
	if !ran {
		return err
	}
	switch e := err.(type) {
	case *ContextError:
		e.Sent = true
	case *ConnError:
		e.Unwritten = false
	}
	return err
}

// backoff waits d, or until ctx is done (its error) or the client closes
// ([ErrClosed]). Cancellation is checked even for a zero delay, right
// before the resend.
func (c *Client) backoff(ctx context.Context, d time.Duration) error {
	return waitBackoff(ctx, d, c.done)
}

// waitBackoff waits d, or until ctx is done (its error) or done closes
// ([ErrClosed]). Cancellation is checked even for a zero delay.
func waitBackoff(ctx context.Context, d time.Duration, done <-chan struct{}) error {
	if d <= 0 {
		select {
		case <-done:
			return ErrClosed
		default:
			return ctx.Err()
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return ErrClosed
	}
}

// ContextError reports a call ended by its context or by
// [Options.CommandTimeout]. It wraps context.Canceled or
// context.DeadlineExceeded; Sent reports whether the command had been
// handed to the connection (it may then have run). The library does not
// change it once returned, so it is safe for concurrent use.
type ContextError struct {
	// Command is the name of the command the call was running.
	Command string
	// Sent reports whether the command had been handed to a connection,
	// on this attempt or an earlier one: it may then have run.
	Sent bool
	// Err is the context's error: context.Canceled or
	// context.DeadlineExceeded.
	Err error
	// Last is the failure of the previous attempt when the context ended a
	// retry's backoff, or nil.
	Last error
}

// Error names the command, the context's error, whether the command may
// have run, and the failure it was waiting to retry after.
func (e *ContextError) Error() string {
	s := "respire: " + e.Command + ": " + e.Err.Error()
	if e.Sent {
		s += " (the command may have been executed)"
	}
	if e.Last != nil {
		s += " while waiting to retry after: " + causeText(e.Last, e.Command)
	}
	return s
}

// Unwrap returns the context's error and the previous attempt's failure.
func (e *ContextError) Unwrap() []error {
	if e.Last != nil {
		return []error{e.Err, e.Last}
	}
	return []error{e.Err}
}
