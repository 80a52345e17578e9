package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/respire-go/respire/internal/wire"
)

// Hook observes and wraps the work of a [Client] ([Options.Hooks]), in the
// shape go-redis users know: each method receives the next function of
// its kind and returns the function the client calls instead. A hook that
// does not observe a kind returns next unchanged; a method that returns
// nil fails [Connect] with a [*ConfigError]. The first hook of
// Options.Hooks is the outermost.
//
// Hooks run on the caller's goroutine, around the whole operation: one
// ProcessHook call covers every resend the retry policy makes. Two kinds
// run on goroutines of the client's instead, which [Client.Close] waits
// for, and so must not call Close (it would wait for itself): a
// DialHook, and the ProcessHook of a cached read ([Client.GetCached],
// [Client.DoCached]), whose one read serves every caller waiting for it.
// A cached read's hook runs once for the one read of a missing entry;
// a cache hit sends nothing and runs no hook (nor records a duration).
// The ProcessHook of a [FailoverGroup] member's PING probes runs on the
// group's probe goroutine, which [FailoverGroup.Close] waits for (at most
// a second); a panic there fails the probe. A hook may
// derive the context it passes to next (a tracing span), time the call,
// or fail it before anything is sent by returning an error without
// calling next. It cannot turn a failure into a success: when next
// failed, the caller receives the hook's error, or next's error when the
// hook returns nil.
//
// A hook may call next on a goroutine of its own, but the call returns
// only when the hook and the next it started have both returned: a hook
// that gives up waiting (a timeout) makes the caller wait for the
// command still, unless it cancels the context it passed to next. A next
// called after its hook returned, or given another CommandInfo or
// BatchInfo than the one its hook received, sends nothing and fails.
type Hook interface {
	DialHook(next DialHook) DialHook
	ProcessHook(next ProcessHook) ProcessHook
	ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook
}

// DialHook opens a network connection (every connection the client opens:
// shared, dedicated, Sentinel and Cluster nodes). The client calls it from
// many goroutines at once, so it must be safe for concurrent use.
type DialHook func(ctx context.Context, network, addr string) (net.Conn, error)

// ProcessHook runs one command: [Client.Do], a typed method, a blocking
// command, a script or function call, a page of a SCAN-family iterator.
// A [Subscription]'s commands (SUBSCRIBE, UNSUBSCRIBE and their kin) and
// the client's own (handshakes, health PINGs, topology queries) do not
// pass through it; a [Dedicated] connection's commands do. The client calls
// it from many goroutines at once, so it must be safe for concurrent use.
type ProcessHook func(ctx context.Context, cmd *CommandInfo) error

// ProcessBatchHook runs one [Batch.Execute] (a batch or a transaction),
// and each MULTI ... EXEC a [Client.Watch] sends (a transaction, once per
// run of its callback that queued members). The client calls it from many
// goroutines at once, so it must be safe for concurrent use.
type ProcessBatchHook func(ctx context.Context, batch *BatchInfo) error

// CommandInfo describes the command a [ProcessHook] runs. It is valid
// until the hook returns. Each call has its own, which the library does not
// change while a hook runs; it is not for use by other goroutines.
type CommandInfo struct {
	// Name is the command's full name in upper case ("GET", "CLIENT KILL").
	Name string
	// Category is the retry category the command is sent with.
	Category RetryCategory

	c    *Client
	run  func(ctx context.Context) error // nil: exec f with s
	f    *wire.Frame
	s    *spec
	bt   *blockTime   // a blocking command: f goes to a dedicated connection
	self *CommandInfo // the info the hooks were given: next refuses any other
	next nextGate
	err  error
}

// BatchInfo describes the unit a [ProcessBatchHook] runs. It is valid
// until the hook returns. Each call has its own, which the library does not
// change while a hook runs; it is not for use by other goroutines.
type BatchInfo struct {
	// Transaction reports whether the unit is a MULTI/EXEC transaction.
	Transaction bool
	b           *Batch
	run         func(ctx context.Context) error // nil: b.execute (a Watch runs its own)
	self        *BatchInfo                      // the info the hooks were given: next refuses any other
	next        nextGate
	err         error
}

// Len returns the number of queued members.
func (i *BatchInfo) Len() int { return len(i.b.members) }

// Name returns the full name of member n (0 <= n < Len).
func (i *BatchInfo) Name(n int) string { return i.b.members[n].name }

// errHookNext is the error of a second call of next by one hook, or of
// a call after the hook returned.
var errHookNext = errors.New("respire: a hook called next twice, or after it returned")

// errHookForeign is the error of a next called with a CommandInfo or a
// BatchInfo other than the one its hook received.
var errHookForeign = errors.New("respire: a hook passed next a CommandInfo or BatchInfo other than the one it received")

// nextGate lets one call of a hook's next run, and lets the call wait for
// it when the hook returned first (next ran on a goroutine of the hook's):
// until then the command owns its frame and the caller's results.
type nextGate struct {
	mu    sync.Mutex // held while next runs
	state atomic.Uint32
}

const (
	nextIdle uint32 = iota
	nextCalled
	nextSealed // the hook returned without calling next
)

// enter admits the first call of next; exit ends it.
func (g *nextGate) enter() bool {
	g.mu.Lock()
	if !g.state.CompareAndSwap(nextIdle, nextCalled) {
		g.mu.Unlock()
		return false
	}
	return true
}

func (g *nextGate) exit() { g.mu.Unlock() }

// settle, once the hook returned, refuses later calls of next and waits
// for the one that started. It reports whether next was called.
func (g *nextGate) settle() bool {
	if g.state.CompareAndSwap(nextIdle, nextSealed) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return true
}

// errHookSkipped is the caller's error when a hook returned nil without
// calling next: there is no reply to give.
var errHookSkipped = errors.New("respire: a hook returned without running the command")

// hooks is the composed chain of Options.Hooks; nil when there are none.
type hooks struct {
	process ProcessHook
	batch   ProcessBatchHook
}

// A hook that returns a nil function is a [*ConfigError] naming it.
func newHooks(list []Hook) (*hooks, error) {
	if len(list) == 0 {
		return nil, nil
	}
	h := &hooks{process: runCommand, batch: runBatch}
	for i := len(list) - 1; i >= 0; i-- {
		if h.process = list[i].ProcessHook(h.process); h.process == nil {
			return nil, nilHookError(i, "ProcessHook")
		}
		if h.batch = list[i].ProcessBatchHook(h.batch); h.batch == nil {
			return nil, nilHookError(i, "ProcessBatchHook")
		}
	}
	return h, nil
}

// nilHookError reports hook i's method that returned nil instead of a
// function (calling it would panic).
func nilHookError(i int, method string) error {
	return &ConfigError{Field: "Options.Hooks[" + strconv.Itoa(i) + "]", Reason: method + " returned nil (return next to leave that kind alone)"}
}

// dialHooks wraps dial (nil: the default dialer) in the hooks' DialHooks.
// A hook that returns a nil DialHook is a [*ConfigError] naming it.
func dialHooks(list []Hook, dial wire.DialFunc) (wire.DialFunc, error) {
	if len(list) == 0 {
		if dial == nil {
			return nil, nil
		}
		return contained(dial), nil
	}
	if dial == nil {
		dial = wire.DefaultDial
	}
	d := DialHook(dial)
	for i := len(list) - 1; i >= 0; i-- {
		if d = list[i].DialHook(d); d == nil {
			return nil, nilHookError(i, "DialHook")
		}
	}
	return contained(wire.DialFunc(d)), nil
}

// contained returns dial with its panic turned into its error. The
// caller's dial function and hooks run on the client's dial goroutines,
// out of the caller's reach, where a panic would end the process.
func contained(dial wire.DialFunc) wire.DialFunc {
	return func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
		defer func() {
			if p := recover(); p != nil {
				conn, err = nil, fmt.Errorf("respire: the dial function panicked: %v", p)
			}
		}()
		return dial(ctx, network, addr)
	}
}

// runCommand is the innermost ProcessHook: the command itself.
func runCommand(ctx context.Context, i *CommandInfo) error {
	if i.self != i {
		return errHookForeign
	}
	if !i.next.enter() {
		return errHookNext
	}
	defer i.next.exit()
	switch {
	case i.run != nil:
		i.err = i.run(ctx)
	case i.bt != nil:
		i.err = i.c.execBlockingFrame(ctx, i.f, i.s, *i.bt)
	default:
		i.err = i.c.execFrame(ctx, i.f, i.s)
	}
	return i.err
}

func runBatch(ctx context.Context, i *BatchInfo) error {
	if i.self != i {
		return errHookForeign
	}
	if !i.next.enter() {
		return errHookNext
	}
	defer i.next.exit()
	if i.run != nil {
		i.err = i.run(ctx)
	} else {
		i.err = i.b.execute(ctx)
	}
	return i.err
}

// processFrame runs the frame command i through the process hooks. i.f
// is released on every error path, as exec does.
func (c *Client) processFrame(ctx context.Context, i *CommandInfo) error {
	f := i.f
	i.self = i
	err := c.hooks.process(ctx, i)
	switch called := i.next.settle(); {
	case !called:
		f.Release()
		if err == nil {
			err = errHookSkipped
		}
	case i.err != nil:
		if err == nil {
			err = i.err
		}
	case err != nil: // the command succeeded, the hook failed the call
		f.Release()
	}
	return err
}

// processHooked runs an operation that manages its own frames (blocking
// commands, scripts, functions) through the process hooks.
func (c *Client) processHooked(ctx context.Context, name string, cat RetryCategory, run func(ctx context.Context) error) error {
	if c.hooks == nil {
		return run(ctx)
	}
	i := &CommandInfo{Name: name, Category: cat, c: c, run: run}
	i.self = i
	err := c.hooks.process(ctx, i)
	switch called := i.next.settle(); {
	case !called && err == nil:
		err = errHookSkipped
	case called && i.err != nil && err == nil:
		err = i.err
	}
	return err
}

// executeHooked is Batch.Execute through the batch hooks; run, when not
// nil, sends b instead of b.execute (a Watch's MULTI ... EXEC).
func (b *Batch) executeHooked(ctx context.Context, run func(ctx context.Context) error) error {
	i := &BatchInfo{Transaction: b.tx, b: b, run: run}
	i.self = i
	err := b.c.hooks.batch(ctx, i)
	switch called := i.next.settle(); {
	case !called:
		if err == nil {
			err = errHookSkipped
		}
		b.fail(err)
	case i.err != nil:
		if err == nil {
			err = i.err
		}
	}
	return err
}
