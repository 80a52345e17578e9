package respire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/respire-go/respire/internal/retry"
)

// ErrNoHealthyMember is the cause inside the [*ConnError] that
// [FailoverGroup.ActiveClient] and [Execute] return when every member's
// circuit is open. Such an error matches both ErrNoHealthyMember and
// [ErrConnectionLost]; nothing was sent.
var ErrNoHealthyMember = errors.New("respire: no healthy failover group member")

// NoFailbackGrace as [FailoverGroupOptions.FailbackGrace] makes a member
// that is preferred to the active one active again as soon as its circuit
// closes.
const NoFailbackGrace time.Duration = -1

// Names used in the group's errors.
const (
	groupCommand    = "failover group"
	newGroupCommand = "NewFailoverGroup"
	executeCommand  = "Execute"
)

// Defaults and bounds of [FailoverGroupOptions].
const (
	defaultProbeInterval    = time.Second
	minProbeInterval        = 10 * time.Millisecond
	maxGroupDuration        = time.Hour
	defaultFailureThreshold = 3
	maxFailureThreshold     = 100
	defaultCircuitOpen      = 5 * time.Second
	defaultFailbackGrace    = 10 * time.Second
)

// FailoverMember is one member of a [FailoverGroup]: the options of the
// member's own [Client] and its priority. It is copied when the client or
// group is made, so changing it afterwards has no effect, and one value may
// serve concurrent calls while nobody changes it.
type FailoverMember struct {
	// Options configures the member's Client exactly as for [Connect]:
	// its endpoint (standalone, Sentinel or Cluster), its own RetryPolicy,
	// CommandTimeout, DialTimeout and metrics. The group copies them.
	Options Options
	// Priority orders the members: the healthy member with the lowest
	// Priority is preferred. Members of equal Priority are preferred in
	// the order they were given. Any value, negative included.
	Priority int
}

// FailoverGroupOptions configures a [FailoverGroup]. The zero value of
// every field means its documented default; [NewFailoverGroup] rejects
// out-of-range values with a [*ConfigError] naming the field. It is copied
// when the client or group is made, so changing it afterwards has no effect,
// and one value may serve concurrent calls while nobody changes it.
type FailoverGroupOptions struct {
	// RetryPolicy retries an [Execute] operation whose attempt failed with
	// a connection failure (see [Execute]). Defaults to nil: every
	// operation runs once. Members keep their own Options.RetryPolicy,
	// which acts first, inside an attempt.
	RetryPolicy *RetryPolicy
	// ProbeInterval is how often each member is probed with PING, from
	// 10 ms through 1 hour. Defaults to 1 second.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe (and the first connection of a
	// member that could not connect at start). It must be positive and at
	// most ProbeInterval. Defaults to half of ProbeInterval.
	ProbeTimeout time.Duration
	// FailureThreshold is the number of consecutive failed probes that
	// opens a member's circuit, from 1 through 100. Defaults to 3. A
	// member's circuit therefore opens at most
	// FailureThreshold*ProbeInterval + ProbeTimeout after its server stops
	// answering.
	FailureThreshold int
	// CircuitOpenDuration is how long an open circuit stays open before
	// a probe may close it: a member is not probed while its circuit is
	// open; after this duration one probe decides (success closes the
	// circuit, failure keeps it open for another CircuitOpenDuration).
	// At most 1 hour; must not be negative. Defaults to 5 seconds.
	CircuitOpenDuration time.Duration
	// FailbackGrace is how long a member preferred to the active one must
	// stay healthy (its circuit closed) before it becomes active again.
	// It applies only to preempting a healthy active member: when the
	// active member fails, the best healthy member takes over at once.
	// At most 1 hour; [NoFailbackGrace] fails back at once; other negative
	// values are invalid. Defaults to 10 seconds.
	FailbackGrace time.Duration
	// OnSwitch, when set, is called each time the active member changes
	// after NewFailoverGroup returned, with the indexes (into the members
	// given to NewFailoverGroup) of the previous and the new active
	// member; -1 means none. Calls are made one at a time, in the order of
	// the changes, on the group's probe goroutines: OnSwitch must not
	// block and must not call [FailoverGroup.Close]; a panic in OnSwitch
	// is recovered and changes nothing. Defaults to nil.
	OnSwitch func(from, to int)
	// Metrics selects the metric groups the group records (its own retries
	// on respire.command.retries, respire.failover.probes and
	// respire.failover.switches, all in [MetricsResiliency]). Members record
	// their own metrics only as their Options select. Defaults to none.
	Metrics MetricGroups
	// MeterProvider provides the meter "github.com/respire-go/respire"
	// when Metrics selects any group. Defaults to none (nothing is
	// recorded): pass otel.GetMeterProvider() for the global provider.
	MeterProvider metric.MeterProvider
}

// FailoverMemberStatus describes one member of a [FailoverGroup] at one
// moment. It is a plain value that the library neither keeps nor changes
// once returned: safe for concurrent reads.
type FailoverMemberStatus struct {
	// Index is the member's position in the members given to
	// [NewFailoverGroup].
	Index int
	// Addr names the member: its first endpoint, or for a Sentinel member
	// "<primary name>@<first sentinel address>".
	Addr string
	// Priority is the member's priority (lower is preferred).
	Priority int
	// Healthy reports whether the member's circuit is closed.
	Healthy bool
	// Active reports whether the member is the active one.
	Active bool
	// Client is the member's client; nil while the member has never
	// connected. Do not close it: the group owns it.
	Client *Client
}

// FailoverGroup is a set of independently configured Redis deployments
// (members) of which one, the active member, serves operations run
// through [Execute]. Each member is probed with PING every ProbeInterval;
// FailureThreshold consecutive failed probes open its circuit, so the
// healthy member with the best priority becomes active; a preferred
// member that recovers becomes active again after FailbackGrace.
//
// Members are separate servers, not replicas the group keeps in sync: a
// switch moves operations to another data set. A FailoverGroup is safe
// for concurrent use.
type FailoverGroup struct {
	cfg     groupConfig
	members []*groupMember
	probe   probeFunc
	metrics *failoverMetrics

	active atomic.Pointer[groupMember] // nil: no healthy member
	closed atomic.Bool
	done   chan struct{} // closed by Close: ends every backoff at once
	shut   chan struct{} // closed when Close has finished: a second Close waits for it
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // probe loops

	mu      sync.Mutex    // guards the members' health and pending
	pending []switchEvent // switches not yet given to OnSwitch
	notify  sync.Mutex    // held while delivering pending to OnSwitch, one deliverer at a time
	since   time.Time     // when the group started, the probes' first reference
}

// probeFunc checks one member; a nil error is a successful probe. The
// group's own pings the member's client, connecting it first when it has
// never connected. Tests replace it to drive the circuits.
type probeFunc func(ctx context.Context, m *groupMember) error

// groupConfig is the validated, defaulted form of FailoverGroupOptions.
type groupConfig struct {
	policy    retry.Policy // zero: disabled
	interval  time.Duration
	timeout   time.Duration
	threshold int
	openFor   time.Duration
	grace     time.Duration
	onSwitch  func(from, to int)
	metrics   MetricGroups
	mp        metric.MeterProvider
}

// groupMember is one member of a group.
type groupMember struct {
	index    int
	label    string
	priority int
	opts     Options // a private copy
	client   atomic.Pointer[Client]

	h      health      // guarded by the group's mu
	open   atomic.Bool // mirrors h.open for lock-free reads
	opens  atomic.Uint64
	metric memberMetrics
}

// health is one member's circuit. Closed, it counts consecutive failed
// probes and opens at the threshold; open, it is not probed until
// openUntil, after which one probe decides: success closes it, failure
// keeps it open for another open duration.
type health struct {
	open      bool
	failures  int       // consecutive failed probes while closed
	openUntil time.Time // open: no probe before this time
	since     time.Time // closed: healthy since this time (the failback grace starts here)
}

// observe applies one probe's result at now and reports whether the
// circuit opened or closed. A success while the circuit must stay open
// (before openUntil) changes nothing.
func (h *health) observe(ok bool, now time.Time, threshold int, openFor time.Duration) bool {
	switch {
	case ok && !h.open:
		h.failures = 0
		return false
	case ok:
		if now.Before(h.openUntil) {
			return false
		}
		*h = health{since: now}
		return true
	case h.open:
		// The probe after the open duration failed: stay open.
		h.openUntil = now.Add(openFor)
		return false
	}
	h.failures++
	if h.failures < threshold {
		return false
	}
	h.open, h.openUntil = true, now.Add(openFor)
	return true
}

// nextProbe returns when the probe after the one that started at last may
// start: an interval later, and never while the circuit must stay open.
func (h *health) nextProbe(last time.Time, interval time.Duration) time.Time {
	next := last.Add(interval)
	if h.open && h.openUntil.After(next) {
		next = h.openUntil
	}
	return next
}

// candidate is what the election knows of one member.
type candidate struct {
	priority int
	healthy  bool
	since    time.Time // healthy since
}

// elect returns the index of the member that should be active, given the
// current active index (-1: none), or -1 when no member is healthy:
//
//  1. a healthy active member stays active unless a member with a lower
//     priority has been healthy for at least grace (failback), in which
//     case the best such member takes over;
//  2. otherwise the healthy member with the lowest priority takes over
//     at once, without grace (failover).
//
// Ties in priority go to the lower index. elect does no I/O and reads no
// clock.
func elect(cs []candidate, active int, now time.Time, grace time.Duration) int {
	better := func(i, j int) bool { // i preferred to j
		return j < 0 || cs[i].priority < cs[j].priority || (cs[i].priority == cs[j].priority && i < j)
	}
	if active >= 0 && active < len(cs) && cs[active].healthy {
		best := active
		for i, c := range cs {
			if c.healthy && c.priority < cs[active].priority && !now.Before(c.since.Add(grace)) && better(i, best) {
				best = i
			}
		}
		return best
	}
	best := -1
	for i, c := range cs {
		if c.healthy && better(i, best) {
			best = i
		}
	}
	return best
}

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

// NewFailoverGroup validates members and opts, connects every member's
// client (concurrently, each within ctx and its own DialTimeout) and
// starts probing them. The member with the best priority among those that
// connected is active.
//
// A member that cannot be reached at start (a failed dial, a lost
// connection) is not an error: it starts with its circuit open, and its
// probes keep trying to connect it. NewFailoverGroup fails when:
//
//   - an option or a member's Options is invalid, there is no member, or
//     two members share an address: a [*ConfigError] naming the field,
//     before anything is dialed;
//   - a member's server rejected the connection (authentication, an
//     unknown database, a protocol error), or its TLS certificate did not
//     verify: that will not heal by itself,
//     and a group that would later fail over to it is a trap, so the
//     error names the member and wraps the rejection;
//   - no member could connect: a [*ConnError] matching [ErrNoHealthyMember]
//     and [ErrConnectionLost] that joins every member's failure;
//   - ctx ended: a [*ContextError].
//
// On failure every member client already connected is closed.
func NewFailoverGroup(ctx context.Context, members []FailoverMember, opts FailoverGroupOptions) (*FailoverGroup, error) {
	return newFailoverGroup(ctx, members, opts, nil)
}

// newFailoverGroup is NewFailoverGroup with the probe to use (nil: PING).
func newFailoverGroup(ctx context.Context, members []FailoverMember, opts FailoverGroupOptions, probe probeFunc) (*FailoverGroup, error) {
	cfg, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, errNilContext("NewFailoverGroup")
	}
	ms, err := validateMembers(members)
	if err != nil {
		return nil, err
	}
	g := &FailoverGroup{cfg: cfg, members: ms, probe: probe, done: make(chan struct{}), shut: make(chan struct{})}
	if g.probe == nil {
		g.probe = pingMember
	}
	if cfg.metrics&MetricsResiliency != 0 {
		if g.metrics, err = newFailoverMetrics(cfg.mp, ms); err != nil {
			return nil, err
		}
	}

	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			c, err := Connect(ctx, m.opts)
			if err != nil {
				errs[i] = err
				return
			}
			m.client.Store(c)
		})
	}
	wg.Wait()
	fail := func(err error) (*FailoverGroup, error) {
		for _, m := range ms {
			if c := m.client.Load(); c != nil {
				_ = c.Close()
			}
		}
		return nil, err
	}
	var failed []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return fail(&ContextError{Command: newGroupCommand, Err: ctx.Err()})
		}
		err = &memberError{index: i, label: ms[i].label, err: err}
		if rejectedConnect(err) {
			return fail(err)
		}
		failed = append(failed, err)
	}
	if len(failed) == len(ms) {
		return fail(&ConnError{Command: newGroupCommand, Unwritten: true,
			Err: errors.Join(append([]error{ErrNoHealthyMember}, failed...)...)})
	}

	now := time.Now()
	g.since = now
	cs := make([]candidate, len(ms))
	for i, m := range ms {
		if m.client.Load() != nil {
			m.h = health{since: now}
		} else {
			// Unreachable at start: open, and probed at the first tick.
			m.h = health{open: true, failures: cfg.threshold, openUntil: now}
			m.open.Store(true)
		}
		cs[i] = candidate{priority: m.priority, healthy: !m.h.open, since: m.h.since}
	}
	g.active.Store(ms[elect(cs, -1, now, cfg.grace)])
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(len(ms))
	for _, m := range ms {
		go g.probeLoop(m)
	}
	return g, nil
}

// rejectedConnect reports whether a member's connection failed in a way
// that will not heal by itself: a reply rejecting the handshake (such as
// WRONGPASS, NOAUTH or an unknown database), a protocol error, a server
// TLS certificate that does not verify, or an invalid option.
func rejectedConnect(err error) bool {
	var se *ServerError
	var cv *tls.CertificateVerificationError
	return errors.As(err, &se) || errors.Is(err, ErrProtocol) || errors.As(err, &cv) || errors.Is(err, ErrInvalidConfig)
}

// memberError names the member whose connection failed.
type memberError struct {
	index int
	label string
	err   error
}

func (e *memberError) Error() string {
	return "respire: failover member " + strconv.Itoa(e.index) + " (" + e.label + "): " + e.err.Error()
}

func (e *memberError) Unwrap() error { return e.err }

// pingMember is the group's probe: PING through the member's client,
// connecting the client first when it has never connected, or when its
// caller closed it (the group owns it, but a closed client would otherwise
// keep the member's circuit open for good). Only the member's probe loop
// stores its client, and Close joins the loops before closing the clients,
// so a client connected here is always closed.
func pingMember(ctx context.Context, m *groupMember) error {
	c := m.client.Load()
	if c == nil || c.closed.Load() {
		var err error
		if c, err = Connect(ctx, m.opts); err != nil {
			return err
		}
		m.client.Store(c)
	}
	return c.Ping(ctx)
}

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
			return // a probe cut short by Close is no observation
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

// ActiveClient returns the active member's client: the healthy member with
// the best priority (see [FailoverGroup] for failback). With no healthy
// member the error is a [*ConnError] matching [ErrNoHealthyMember] and
// [ErrConnectionLost]; after Close, one matching [ErrClosed]. Do not keep
// the client across operations, and do not close it (the group's next
// probe would replace it): run operations through [Execute], which reads
// the active member for every attempt.
func (g *FailoverGroup) ActiveClient() (*Client, error) {
	if !g.made() {
		return nil, errOrphanGroup("FailoverGroup.ActiveClient")
	}
	m, err := g.pick(nil)
	if err != nil {
		return nil, err
	}
	return m.client.Load(), nil
}

// Members returns the status of every member, in the order given to
// [NewFailoverGroup]; none for a group not made by NewFailoverGroup.
func (g *FailoverGroup) Members() []FailoverMemberStatus {
	if !g.made() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	active := g.active.Load() // switches happen under g.mu: one snapshot
	out := make([]FailoverMemberStatus, len(g.members))
	for i, m := range g.members {
		out[i] = FailoverMemberStatus{Index: i, Addr: m.label, Priority: m.priority,
			Healthy: !m.h.open, Active: m == active, Client: m.client.Load()}
	}
	return out
}

// Close stops the probes, waits for their goroutines to exit and closes
// every member's client. Operations in flight fail with an error matching
// [ErrClosed] (a backoff ends at once); later calls too. Close is safe to
// call more than once (a Close called while another runs returns when
// that one does); it must not be called from OnSwitch. On a group not
// made by NewFailoverGroup (nil or its zero value) Close, like
// ActiveClient and Execute, fails with an error matching
// [ErrInvalidArgument].
func (g *FailoverGroup) Close() error {
	if !g.made() {
		return errOrphanGroup("FailoverGroup.Close")
	}
	if g.closed.Swap(true) {
		<-g.shut // the first Close may still be waiting for the probes
		return nil
	}
	defer close(g.shut)
	close(g.done)
	g.cancel()
	g.wg.Wait()
	var errs []error
	for _, m := range g.members {
		if c := m.client.Load(); c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// made reports whether g was made by NewFailoverGroup (not nil, not a
// zero FailoverGroup).
func (g *FailoverGroup) made() bool { return g != nil && g.done != nil }

// errOrphanGroup is the error of command on a group not made by
// NewFailoverGroup.
func errOrphanGroup(command string) error {
	return errInvalid(command, "a FailoverGroup not made by NewFailoverGroup (nil or its zero value)")
}

// pick returns the member for the next attempt: the active member, unless
// it is in excluded (its circuit opened during an earlier attempt of the
// same operation), in which case the best healthy member not excluded.
func (g *FailoverGroup) pick(excluded []*groupMember) (*groupMember, error) {
	if g.closed.Load() {
		return nil, &ConnError{Command: groupCommand, Unwritten: true, Err: ErrClosed}
	}
	m := g.active.Load()
	if m != nil && !isExcluded(excluded, m) {
		return m, nil
	}
	if m != nil {
		g.mu.Lock()
		var best *groupMember
		for _, c := range g.members {
			if !c.h.open && !isExcluded(excluded, c) && (best == nil || c.priority < best.priority) {
				best = c
			}
		}
		g.mu.Unlock()
		if best != nil {
			return best, nil
		}
	}
	return nil, &ConnError{Command: groupCommand, Unwritten: true, Err: ErrNoHealthyMember}
}

func isExcluded(excluded []*groupMember, m *groupMember) bool {
	for _, e := range excluded {
		if e == m {
			return true
		}
	}
	return false
}

// Execute runs fn with the active member's client of g and returns its
// result, retrying under the group's RetryPolicy. category declares the
// risk of repeating the whole operation fn performs; it is required: zero
// (or an undefined value) fails with an error matching
// [ErrInvalidArgument] and runs nothing, as do a nil fn and a g not made
// by [NewFailoverGroup]. [Never] runs
// fn once.
//
// How an operation is retried:
//
//   - Each attempt reads the active member again, so a retry after a
//     switch runs on the new active member. A retry may run on the member
//     whose attempt just failed while it is still active (its circuit
//     closed): the group moves operations only when probes opened the
//     circuit.
//   - A group retry starts only after fn returned an error: a member's own
//     RetryPolicy acts first, inside fn's call.
//   - Only connection failures are retried: an error matching
//     [ErrConnectionLost] (a lost or failed connection, a member client
//     closed) and an attempt that found no healthy member. Server replies
//     (LOADING, READONLY, ...), timeouts, rejected handshakes, protocol
//     errors and fn's own errors end the operation; so do ctx ending and
//     Close.
//   - Every failed attempt counts as possibly executed, so a retry needs
//     the policy's MaxCommandRetryCategory to permit category: with the
//     default ReadOnly maximum a [WriteAccumulating] operation is never
//     replayed, on the same member or another.
//   - An attempt whose member's circuit opened while fn ran ends the
//     operation unless another member is healthy: the group never retries
//     it against that member again.
//   - The group has no command timeout: each attempt runs under its
//     member's CommandTimeout, and ctx (its deadline and cancellation)
//     bounds the whole operation, backoff included. A backoff that cannot
//     end before ctx's deadline is not started: the last failure is
//     returned.
//
// The final error of an operation that made more than one attempt, or
// whose backoff the caller's cancellation or Close ended (then possibly
// after one attempt), is a [*RetryError] wrapping the last failure (or
// that cancellation or Close, which then wraps the last failure too);
// otherwise, after one attempt, it is that attempt's error as fn returned
// it. With an error Execute returns the
// value fn returned in the last attempt, or T's zero value when that
// attempt found no member to run on.
// [MayHaveExecuted] reports true for an operation whose fn ran at least
// once and failed after a retry, whatever fn's errors said.
//
// For batches and transactions, build and execute the whole unit inside
// fn, so that each attempt builds a fresh unit on the member it runs on;
// do not keep a batch, a transaction or a client between attempts.
func Execute[T any](ctx context.Context, g *FailoverGroup, category RetryCategory, fn func(ctx context.Context, c *Client) (T, error)) (T, error) {
	var zero T
	switch {
	case !g.made():
		return zero, errOrphanGroup(executeCommand)
	case fn == nil:
		return zero, errInvalid(executeCommand, "nil operation")
	case ctx == nil:
		return zero, errNilContext(executeCommand)
	case !category.Valid():
		return zero, errInvalid(executeCommand, "the operation's retry category is required (declare the risk of repeating it; Never runs it once)")
	}
	if err := ctx.Err(); err != nil {
		return zero, &ContextError{Command: groupCommand, Err: err}
	}
	deadline, _ := ctx.Deadline()
	var (
		attempts int
		ran      bool // fn ran at least once
		resent   bool // fn ran on a resend: the operation reports an outcome
		excluded []*groupMember
		last     error
		lastV    T
	)
	finish := func() (T, error) {
		if resent {
			g.metrics.retried(category, outcomeExhausted)
		}
		if attempts > 1 {
			return lastV, &RetryError{Command: groupCommand, Attempts: attempts, Err: last, ran: ran}
		}
		return lastV, last
	}
	for {
		m, err := g.pick(excluded)
		if err != nil && len(excluded) > 0 && !g.closed.Load() {
			return finish() // an open circuit ends the operation: no other member
		}
		attempts++
		failure := retry.LostConnection
		if err != nil {
			lastV, last = zero, err
			if g.closed.Load() {
				failure = retry.Fatal
			}
		} else {
			if attempts > 1 {
				resent = true
				g.metrics.retried(category, outcomeAttempted)
			}
			opens := m.opens.Load()
			var v T
			v, err = fn(ctx, m.client.Load())
			ran = true
			if err == nil {
				if resent {
					g.metrics.retried(category, outcomeSucceeded)
				}
				return v, nil
			}
			lastV, last = v, err
			failure = g.classify(ctx, err)
			if m.open.Load() || m.opens.Load() != opens {
				excluded = append(excluded, m)
				if _, err := g.pick(excluded); err != nil {
					return finish()
				}
			}
		}
		if g.cfg.policy.Decide(retry.Input{Category: category, Failure: failure, Attempts: attempts}) != retry.Retry {
			return finish()
		}
		delay := g.cfg.policy.Delay(attempts, rand.Float64())
		if !retry.Fits(time.Now(), deadline, delay) {
			return finish() // the backoff cannot fit: keep the last failure
		}
		if err := g.backoff(ctx, delay); err != nil {
			if resent {
				g.metrics.retried(category, outcomeExhausted)
			}
			if err == ErrClosed {
				return lastV, &RetryError{Command: groupCommand, Attempts: attempts, ran: ran,
					Err: errors.Join(&ConnError{Command: groupCommand, Unwritten: !ran, Err: ErrClosed}, last)}
			}
			return lastV, &RetryError{Command: groupCommand, Attempts: attempts, ran: ran,
				Err: &ContextError{Command: groupCommand, Sent: ran, Err: err, Last: last}}
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return finish()
		}
	}
}

// classify maps fn's error to a retry failure. Only connection failures
// can be retried by the group: the caller's cancellation, Close, timeouts,
// rejected handshakes and protocol errors are never retried, and every
// other error (server replies included) is not selectable.
func (g *FailoverGroup) classify(ctx context.Context, err error) retry.Failure {
	if ctx.Err() != nil || g.closed.Load() {
		return retry.Fatal
	}
	var ce *ContextError
	if errors.As(err, &ce) {
		return retry.Fatal // a member's CommandTimeout
	}
	var ne *ConnError
	if !errors.As(err, &ne) {
		return retry.Unselectable
	}
	var se *ServerError
	if errors.As(ne.Err, &se) || errors.Is(ne.Err, ErrProtocol) {
		return retry.Fatal
	}
	return retry.LostConnection
}

// backoff waits d, or until ctx is done (its error) or the group closes
// ([ErrClosed]). Cancellation is checked even for a zero delay.
func (g *FailoverGroup) backoff(ctx context.Context, d time.Duration) error {
	return waitBackoff(ctx, d, g.done)
}
