package respire

import (
	"context"
	"crypto/tls"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/multierr"
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
// through [Execute]. Each member is probed with PING every ProbeInterval
// (a PING its user's ACL refuses with NOPERM passes: the server
// answered); FailureThreshold consecutive failed probes open its
// circuit, so the healthy member with the best priority becomes active;
// a preferred member that recovers becomes active again after
// FailbackGrace.
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
			Err: multierr.With(ErrNoHealthyMember, multierr.Join(failed...))})
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
// TLS certificate that does not verify, or an invalid option. A server
// state that passes (see transientRefusal) is not a rejection: that member
// starts unreachable.
func rejectedConnect(err error) bool {
	var se *ServerError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &se) {
		return !transientRefusal(se)
	}
	return errors.Is(err, ErrProtocol) || errors.As(err, &cv) || errors.Is(err, ErrInvalidConfig)
}

// transientRefusal reports whether a server's reply to the handshake
// describes a state that passes without anyone changing the member's
// options: loading its data, busy with a script, a replica whose link to
// its primary is down, a cluster slot in transit, or all its client slots
// taken (its maxclients limit, which Redis reports with the code ERR, so
// only its text tells it).
func transientRefusal(se *ServerError) bool {
	switch se.Code {
	case "LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN":
		return true
	case "ERR":
		return strings.Contains(se.Message, "max number of clients reached")
	}
	return false
}

// memberError names the member whose connection failed.
type memberError struct {
	index int
	label string
	err   error
}

func (e *memberError) Error() string {
	return "respire: failover member " + strconv.Itoa(e.index) + " (" + e.label + "): " + causeText(e.err, "")
}

func (e *memberError) Unwrap() error { return e.err }

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

// Close stops the probes and closes every member's client. Operations in
// flight fail with an error matching [ErrClosed] (a backoff ends at once);
// later calls too. Close waits for the probe goroutines and the member
// clients' Close calls, but at most one second: a probe held in user code
// that ignores its context (a member's ProcessHook or DialHook, or its
// Options.Dialer) does not hold Close; its goroutine ends when that code
// returns, closing any client it connected meanwhile, and the error of a
// member client's Close that had not returned is not reported. Close is
// safe to call more than once (a Close called while another runs returns
// when that one does); it must not be called from OnSwitch. On a group
// not made by NewFailoverGroup (nil or its zero value) Close, like
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
	// The clients are closed without waiting for the probes: a probe that
	// connects a client after this reads closed and closes it itself
	// (probeLoop), and one running a command on a client sees it fail.
	closed := make(chan error, 1)
	go g.closeMembers(closed)
	t := time.NewTimer(groupCloseWait)
	defer t.Stop()
	select {
	case err := <-closed:
		return err
	case <-t.C:
		return nil
	}
}

// groupCloseWait bounds how long [FailoverGroup.Close] waits for the
// probes and the member clients.
const groupCloseWait = time.Second

// closeMembers closes every member's client, each on its own goroutine (a
// client's Close waits for its dials: one held in user code must not keep
// the others open), waits for them and for the probe loops, and sends the
// clients' errors to out.
func (g *FailoverGroup) closeMembers(out chan<- error) {
	errs := make([]error, len(g.members))
	var wg sync.WaitGroup
	for i, m := range g.members {
		if c := m.client.Load(); c != nil {
			wg.Go(func() { errs[i] = c.Close() })
		}
	}
	wg.Wait()
	g.wg.Wait()
	out <- multierr.Join(errs...)
}

// made reports whether g was made by NewFailoverGroup (not nil, not a
// zero FailoverGroup).
func (g *FailoverGroup) made() bool { return g != nil && g.done != nil }

// errOrphanGroup is the error of command on a group not made by
// NewFailoverGroup.
func errOrphanGroup(command string) error {
	return errInvalid(command, "a FailoverGroup not made by NewFailoverGroup (nil or its zero value)")
}
