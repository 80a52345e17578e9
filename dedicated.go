package respire

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Conn is a connection lent to one callback by [Client.Dedicated]. Its
// commands run one at a time, in call order, and are never retried. It
// is safe for concurrent use, but commands from several goroutines then
// run in an unspecified order; a command waiting for another's to finish
// leaves, sending nothing, when its context ends. The loan ends when the
// callback returns: a command still running then on another goroutine is
// stopped, as if its context had ended, and fails with [ErrClosed], and
// later ones fail with ErrClosed and send nothing.
type Conn struct {
	c    *Client
	wc   *wire.Conn  // nil until a Cluster Conn's first command binds it
	node *route.Node // the node wc belongs to

	// turn is held (a token in it) by the command running on the
	// connection, and by the end of the loan; it guards the fields below.
	// Unlike a mutex, a caller whose context ends while another holds it
	// leaves (see lock).
	turn     chan struct{}
	finished bool   // the callback has returned
	broken   bool   // a network or context error: the state is unknown
	inMulti  bool   // MULTI sent, no EXEC or DISCARD yet
	queued   []byte // with a client-side cache: the commands queued since MULTI
	dirty    bool   // a command may have changed connection state
	watching bool   // Client.Watch's WATCH is in effect: no EXEC has cleared it yet
	sticky   bool   // a command may have set state that RESET leaves (outlivesReset)

	// mu guards ended and stop, which the end of the loan reads while a
	// command holds the turn.
	mu    sync.Mutex
	ended bool                    // the callback has returned
	stop  context.CancelCauseFunc // cancels the running command, if any
}

// errCallbackReturned is the cause of the commands refused, or stopped,
// because their Dedicated callback has returned.
var errCallbackReturned error = closedError("the Dedicated callback has returned")

// restoreWait bounds how long the client restores a dedicated connection
// after its callback (RESET and the handshake) when CommandTimeout is off.
const restoreWait = 5 * time.Second

// Dedicated lends fn a connection of its own, for work the shared
// connection refuses: WATCH/MULTI/EXEC by hand, SELECT or CLIENT SETNAME
// for one session, module commands with connection state. fn's error is
// returned as is.
//
// Nothing is ever retried on a dedicated connection: the retry policy
// does not apply, whatever the command's category. Blocking commands
// wait for their server-side timeout plus [Options.CommandTimeout];
// other commands for CommandTimeout, within ctx. A blocking command whose
// caller gives up is stopped on the server at once, as [Client.BLPop]'s
// is: an element popped before it stopped is the caller's result, and
// none is popped for nobody while the callback goes on.
//
// Dedicated returns when fn has returned and the loan has ended: a
// command fn left running on another goroutine is stopped then, as if its
// context had ended (a blocking one on the server, see above), and fails
// with [ErrClosed]; Dedicated does not wait for it to finish by itself.
//
// When fn returns, the connection goes back to the pool of dedicated
// connections (shared with blocking commands, bounded by
// [Options.BlockingPoolSize]) as it was lent: if fn changed its state
// (any command that the shared connection refuses, but WAIT and WAITAOF,
// or that the catalog does not know), or may have closed it (CLIENT
// KILL), the client sends RESET and replays the handshake
// (protocol, user, name, database) first. The connection is closed
// instead, never pooled, when fn left a transaction open (MULTI without
// EXEC or DISCARD), when fn sent CLIENT NO-EVICT, NO-TOUCH, SETINFO or
// CAPA (state that RESET does not clear on every server), when a
// command failed with a network or context error or fn returned one,
// when fn panicked, or when the restore failed (servers before Redis 6.2
// have no RESET).
//
// The connection stays lent while fn runs, and the client cannot tell
// fn's goroutines from others': a blocking method of the Client
// ([Client.BLPop], [Client.XRead] with a block, ...), a nested Dedicated
// or [Client.Watch] called from fn waits for another connection of the
// same pool, and with [Options.BlockingPoolSize] 1 (or every connection
// lent to such callbacks) for its own, until its context or its budget
// ends with a [*ContextError]. Inside fn, send blocking commands with
// [Conn.Do]: they run on the lent connection.
//
// A nil fn is an [ErrInvalidArgument]. Getting a connection may fail like
// any call: [*ConnError], [*ContextError].
func (c *Client) Dedicated(ctx context.Context, fn func(conn *Conn) error) error {
	switch {
	case fn == nil:
		return errInvalid("Dedicated", "nil callback")
	case ctx == nil:
		return errNilContext("Dedicated")
	}
	return c.dedicated(ctx, "Dedicated", fn)
}

// dedicated is Dedicated for the call name (Dedicated, WATCH), which its
// errors of getting the connection name.
func (c *Client) dedicated(ctx context.Context, name string, fn func(conn *Conn) error) error {
	s := &spec{name: name, cat: Never}
	if c.closed.Load() {
		return &ConnError{Command: s.name, Unwritten: true, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return &ContextError{Command: s.name, Err: err}
	}
	getCtx := ctx
	if c.cfg.commandTimeout > 0 {
		var cancel context.CancelFunc
		getCtx, cancel = context.WithTimeout(ctx, c.cfg.commandTimeout)
		defer cancel()
	}
	conn := &Conn{c: c, turn: make(chan struct{}, 1)}
	if !c.isCluster() {
		// On a Cluster client the first command's keys choose the node.
		node, err := c.keyNode(nil, s)
		if err != nil {
			return err
		}
		wc, err := node.Pool.Get(getCtx)
		if err != nil {
			return c.failedBeforeSend(ctx, err, s).err
		}
		wc.HoldIdlePing(true) // fn's state (a MULTI) must not receive a PING
		conn.wc, conn.node = wc, node
	}
	returned, failed := false, false
	defer func() { conn.giveBack(returned, failed) }()
	err := fn(conn)
	// Whatever fn did after such an error, trust nothing.
	failed = errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrConnectionLost)
	returned = true
	return err
}

// giveBack ends the loan: a command still running on another goroutine
// is stopped, then the connection is pooled as lent, restored first if
// fn changed it, or closed.
func (conn *Conn) giveBack(returned, failed bool) {
	conn.mu.Lock()
	conn.ended = true
	if conn.stop != nil {
		conn.stop(errCallbackReturned)
	}
	conn.mu.Unlock()
	conn.turn <- struct{}{}
	defer func() { <-conn.turn }()
	conn.finished = true
	conn.broken = conn.broken || failed
	if conn.wc == nil {
		return // a Cluster Conn that sent nothing
	}
	c, p := conn.c, conn.node.Pool
	if !returned || conn.broken || conn.inMulti || !conn.wc.Alive() || c.closed.Load() {
		p.Discard(conn.wc)
		return
	}
	if conn.sticky || ((conn.dirty || conn.watching) && !conn.restore()) {
		p.Discard(conn.wc)
		return
	}
	conn.wc.HoldIdlePing(false) // pooled, it finds a dead peer again
	p.Put(conn.wc)
}

// restore sends RESET and replays the handshake, and reports whether
// every reply was a success.
func (conn *Conn) restore() bool {
	c := conn.c
	cmds := wire.RestoreCommands(c.cfg.dedicatedWire(), conn.wc.Proto())
	f := c.frames.Get()
	for _, cmd := range cmds {
		f.Buf = resp.AppendArrayHeader(f.Buf, len(cmd))
		for _, a := range cmd {
			f.Buf = resp.AppendBulkString(f.Buf, a)
		}
	}
	f.Want, f.Replies = wire.WantValue, len(cmds)
	wait := c.cfg.commandTimeout
	if wait <= 0 {
		wait = restoreWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := conn.wc.Submit(ctx, time.Time{}, f); err != nil {
		f.Release()
		return false
	}
	if err := f.Wait(ctx, time.Time{}); err != nil {
		return false // the frame was given up with the connection
	}
	ok := f.Err == nil && !f.IsErr
	f.Release()
	return ok
}

// Do sends cmd with args on the dedicated connection and returns the
// reply, like [Client.Do] but never retried, and allowing the commands
// that change connection state (SELECT, CLIENT SETNAME, CLIENT TRACKING,
// AUTH, ...) and transactions (WATCH, MULTI, EXEC, DISCARD, UNWATCH). An
// aborted EXEC returns a null Reply (IsNull). Still refused, with an
// [ErrInvalidArgument] and nothing sent: the subscribe family (use
// [Client.Subscribe]), MONITOR, replication commands, SCRIPT DEBUG and CLIENT REPLY
// (they break one reply per command), and HELLO, RESET and QUIT (the
// client owns the connection's protocol and lifetime).
func (conn *Conn) Do(ctx context.Context, cmd Command, args ...any) (Reply, error) {
	if cmd.FullName() == "" {
		return Reply{}, errInvalid("Do", "empty command name")
	}
	if ctx == nil {
		return Reply{}, errNilContext(cmd.FullName())
	}
	f, err := conn.c.anyFrame(cmd, args)
	if err != nil {
		return Reply{}, err
	}
	if conn.c.hooks == nil && conn.c.cmdMetrics == nil {
		return conn.doFrame(ctx, cmd, f)
	}
	return conn.doObserved(ctx, cmd, f)
}

// doObserved is doFrame through the process hooks and the command
// duration metric, with the name [Client.Do] gives the command (the
// catalog's, a subcommand passed as the first argument included).
func (conn *Conn) doObserved(ctx context.Context, cmd Command, f *wire.Frame) (Reply, error) {
	c := conn.c
	var small [16][]byte
	d := dispatchOf(cmd, argWords(cmd, f.Buf, small[:0]))
	s := spec{name: d.name, cat: Never, desc: d.desc}
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var r Reply
	var err error
	if c.hooks == nil {
		r, err = conn.doFrame(ctx, cmd, f)
	} else {
		err = c.processHooked(ctx, s.name, Never, func(ctx context.Context) error {
			var err error
			r, err = conn.doFrame(ctx, cmd, f)
			return err
		})
	}
	if c.cmdMetrics != nil {
		c.recordCommand(&s, began, err)
	}
	return r, err
}

// doRaw is Do for the client's own callers (Watch's WATCH, Conn.Wait),
// with string arguments: hooked and measured as the caller's command.
func (conn *Conn) doRaw(ctx context.Context, cmd Command, args []string) (Reply, error) {
	if ctx == nil {
		return Reply{}, errNilContext(cmd.FullName())
	}
	f := conn.c.rawFrame(cmd, args)
	if conn.c.hooks == nil && conn.c.cmdMetrics == nil {
		return conn.doFrame(ctx, cmd, f)
	}
	return conn.doObserved(ctx, cmd, f)
}

// doFrame runs the encoded command f of cmd on the connection.
func (conn *Conn) doFrame(ctx context.Context, cmd Command, f *wire.Frame) (Reply, error) {
	var small [16][]byte
	words := argWords(cmd, f.Buf, small[:0])
	d := dispatchOf(cmd, words)
	name := d.name
	if why := dedicatedRefusal(name, d.flags); why != "" {
		f.Release()
		return Reply{}, errInvalid(name, "refused on a dedicated connection: "+why)
	}
	if err := conn.lock(ctx); err != nil {
		f.Release()
		return Reply{}, &ContextError{Command: name, Err: err}
	}
	defer conn.unlock()
	ok := false
	defer func() {
		if !ok {
			f.Release() // refused before the connection got it
		}
	}()
	if conn.finished {
		return Reply{}, &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
	}
	if err := ctx.Err(); err != nil {
		// Before the state: a command that the same context ended may
		// have broken the connection, and the caller learns why.
		return Reply{}, &ContextError{Command: name, Err: err}
	}
	if conn.broken {
		return Reply{}, &ConnError{Command: name, Unwritten: true,
			Err: errors.New("an earlier command on this dedicated connection failed; its state is unknown")}
	}
	c := conn.c
	var waitDL time.Time
	blocking := d.blocking && !conn.inMulti // queued in MULTI, it does not block
	if blocking {
		bt, err := blockTimeOf(name, d.serverArgs(cmd, words))
		if err != nil {
			return Reply{}, err
		}
		if !bt.forever && !bt.unknown && c.cfg.commandTimeout > 0 {
			waitDL = blockDeadline(time.Now(), bt, c.cfg.commandTimeout)
		}
	} else if c.cfg.commandTimeout > 0 {
		waitDL = time.Now().Add(c.cfg.commandTimeout)
	}
	userCtx := ctx
	ctx, stop := conn.start(ctx)
	if stop == nil {
		return Reply{}, &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
	}
	defer conn.done(stop)
	if needsRestore(&d) {
		conn.dirty = true
		conn.sticky = conn.sticky || outlivesReset(name)
	}
	ok = true
	if err := conn.bind(ctx, waitDL, f, &spec{name: name, cat: Never, desc: d.desc}); err != nil {
		f.Release()
		if loanEnded(userCtx, ctx) {
			return Reply{}, &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
		}
		return Reply{}, err
	}
	if err := conn.wc.Submit(ctx, waitDL, f); err != nil {
		f.Release()
		conn.broken = true
		if loanEnded(userCtx, ctx) {
			return Reply{}, &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
		}
		return Reply{}, c.failedBeforeSend(ctx, err, &spec{name: name, cat: Never}).err
	}
	if blocking {
		if err := f.WaitFor(ctx, waitDL); err != nil {
			// As for Client.BLPop: the server may still block for the
			// caller, and the callback may go on for long before the
			// connection is closed. Stop the command and take its reply,
			// so that nothing is popped for nobody meanwhile.
			stopped := c.stopBlocked(conn.node, conn.wc, f)
			if !stopped || tookNothing(name, f) {
				if stopped {
					f.Release()
				}
				conn.broken = true
				return Reply{}, conn.waitErr(userCtx, ctx, name, err)
			}
			// The server answered before it was stopped (an element it
			// popped): the reply is the caller's.
		}
	} else if err := f.Wait(ctx, waitDL); err != nil {
		conn.broken = true // the reply may still come: the connection is done
		return Reply{}, conn.waitErr(userCtx, ctx, name, err)
	}
	if cc := c.cache; cc != nil {
		// A write queued in MULTI runs at EXEC: its keys are dropped
		// then (and now, which costs nothing).
		switch {
		case name == "EXEC":
			cc.afterWrite(conn.queued, catalog.Command{}, false)
			conn.queued = conn.queued[:0]
		case name == "DISCARD":
			conn.queued = conn.queued[:0]
		case conn.inMulti:
			conn.queued = append(conn.queued, f.Buf...)
		}
		cc.afterWrite(f.Buf, d.desc, true)
	}
	if f.Err != nil {
		conn.broken = true
		err := connError(name, f.Err)
		f.Release()
		return Reply{}, err
	}
	switch name {
	case "MULTI":
		conn.inMulti = conn.inMulti || !f.IsErr
	case "EXEC", "DISCARD":
		conn.inMulti = false // even EXECABORT ends the transaction
	}
	if f.IsErr {
		se := newServerError(name, f.ErrReply)
		c.noteMoved(f.ErrReply, conn.node)
		c.noteReadOnly(se)
		f.Release()
		return Reply{}, se
	}
	r := Reply{v: f.Value}
	f.Release()
	return r, nil
}

// needsRestore reports whether the command d may leave the connection
// otherwise than it was lent: state that RESET undoes, or a closed
// connection that the restore finds out.
func needsRestore(d *dispatch) bool {
	switch d.name {
	case "WAIT", "WAITAOF":
		return false // refused on the shared connection for what they count; they change nothing
	case "CLIENT KILL":
		return true // it may close this very connection (SKIPME no) after its reply, before the pool could see it
	}
	return refusal(d.name, d.flags) != "" || !d.known
}

// unit sends a prepared multi-command frame (a watched transaction's
// MULTI ... EXEC) on the connection, once. On success the caller reads
// and releases f; on error f is released or given up.
func (conn *Conn) unit(ctx context.Context, f *wire.Frame, name string) error {
	if err := conn.lock(ctx); err != nil {
		f.Release()
		return &ContextError{Command: name, Err: err}
	}
	defer conn.unlock()
	unusable := func() error {
		f.Release()
		return &ConnError{Command: name, Unwritten: true, Err: errors.New("the dedicated connection cannot be used")}
	}
	if conn.finished {
		return unusable()
	}
	if err := ctx.Err(); err != nil {
		// A context that has already ended sends nothing: a transaction
		// whose caller left while the callback ran is not applied. It is
		// checked before the connection's state: a read of the callback
		// that the same context ended has broken the connection, and the
		// caller learns why.
		f.Release()
		return &ContextError{Command: name, Err: err}
	}
	if conn.broken || conn.wc == nil {
		return unusable()
	}
	userCtx := ctx
	ctx, stop := conn.start(ctx)
	if stop == nil {
		f.Release()
		return &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
	}
	defer conn.done(stop)
	c := conn.c
	var waitDL time.Time
	if c.cfg.commandTimeout > 0 {
		waitDL = time.Now().Add(c.cfg.commandTimeout)
	}
	if err := conn.wc.Submit(ctx, waitDL, f); err != nil {
		f.Release()
		conn.broken = true
		if loanEnded(userCtx, ctx) {
			return &ConnError{Command: name, Unwritten: true, Err: errCallbackReturned}
		}
		return c.failedBeforeSend(ctx, err, &spec{name: name, cat: Never}).err
	}
	if err := f.Wait(ctx, waitDL); err != nil {
		conn.broken = true
		return conn.waitErr(userCtx, ctx, name, err)
	}
	if c.cache != nil {
		c.cache.afterWrite(f.Buf, catalog.Command{}, false)
	}
	if f.Err != nil {
		conn.broken = true
		err := connError(name, f.Err)
		f.Release()
		return err
	}
	c.noteReadOnlyUnit(f)
	if len(f.Values) > 0 && !f.Values[0].IsError() {
		// MULTI was accepted, so the frame's EXEC ran inside it, and
		// EXEC clears every WATCH, whatever its reply.
		conn.watching = false
	}
	return nil
}

// watchKeys sends Client.Watch's WATCH keys. Unlike a WATCH sent with
// Do, which has the loan end with RESET, it leaves the connection to be
// pooled as it is once the transaction's EXEC has cleared the WATCH
// (unit); a loan that ends before that is restored.
func (conn *Conn) watchKeys(ctx context.Context, keys []string) error {
	if _, err := conn.doRaw(ctx, NewCommand("WATCH"), keys); err != nil {
		return err
	}
	// WATCH is the loan's first command, so it alone made the connection
	// dirty. The callback has not started: nothing else holds the turn.
	conn.turn <- struct{}{}
	conn.dirty, conn.watching = false, true
	<-conn.turn
	return nil
}

// lock takes the connection's turn for one command, waiting while another
// goroutine's command holds it, until ctx ends: then it returns ctx.Err()
// and nothing is sent.
func (conn *Conn) lock(ctx context.Context) error {
	select {
	case conn.turn <- struct{}{}:
		return nil
	default:
	}
	select {
	case conn.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unlock gives the turn taken by lock back.
func (conn *Conn) unlock() { <-conn.turn }

// start returns the context of the command that holds the turn: ctx,
// also cancelled when the callback returns. A nil stop means the callback
// has already returned: the command must not be sent.
func (conn *Conn) start(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if conn.ended {
		return ctx, nil
	}
	ctx, conn.stop = context.WithCancelCause(ctx)
	return ctx, conn.stop
}

// done ends the context start returned.
func (conn *Conn) done(stop context.CancelCauseFunc) {
	conn.mu.Lock()
	conn.stop = nil
	conn.mu.Unlock()
	stop(nil)
}

// loanEnded reports whether the command context ctx, derived by start from
// the caller's userCtx, ended because the callback returned.
func loanEnded(userCtx, ctx context.Context) bool {
	return userCtx.Err() == nil && context.Cause(ctx) == errCallbackReturned
}

// waitErr is the error of a sent command whose wait for its reply ended
// with err: the caller's context, or the end of the callback.
func (conn *Conn) waitErr(userCtx, ctx context.Context, name string, err error) error {
	if loanEnded(userCtx, ctx) {
		return &ConnError{Command: name, Err: errCallbackReturned}
	}
	return &ContextError{Command: name, Sent: true, Err: err}
}

// bind gives a Cluster Conn its connection, on the node serving the keys
// of its first command (any primary for a command without keys), and
// checks that later commands' keys are served there. Standalone and
// Sentinel Conns are bound when lent.
func (conn *Conn) bind(ctx context.Context, waitDL time.Time, f *wire.Frame, s *spec) error {
	c := conn.c
	if !c.isCluster() {
		return nil
	}
	var small [16][]byte
	slot, cross := keySlot(s.desc, frameArgs(f.Buf, small[:0]))
	if cross {
		return &RouteError{Command: s.name, Slot: -1, Err: ErrCrossSlot}
	}
	if conn.wc != nil {
		if slot < 0 {
			return nil
		}
		n, err := c.topo.Pick(slot, false)
		if err != nil {
			return routeErr(s.name, slot, err)
		}
		if n != conn.node {
			return &RouteError{Command: s.name, Slot: slot, Err: multierr.With(ErrCrossSlot,
				errors.New("this dedicated connection is on "+conn.node.Addr+", the keys are served by "+n.Addr))}
		}
		return nil
	}
	n, err := c.topo.Pick(slot, false)
	if err != nil {
		return routeErr(s.name, slot, err)
	}
	getCtx := ctx
	if !waitDL.IsZero() {
		var cancel context.CancelFunc
		getCtx, cancel = context.WithDeadline(ctx, waitDL)
		defer cancel()
	}
	wc, err := n.Pool.Get(getCtx)
	if err != nil {
		return c.failedBeforeSend(ctx, err, s).err
	}
	wc.HoldIdlePing(true) // as in Dedicated
	conn.wc, conn.node = wc, n
	return nil
}

// outlivesReset reports whether the state command name may set state
// that RESET does not clear on every server: Redis 7.0 keeps CLIENT
// NO-EVICT, and no version clears a CLIENT SETINFO library name. Its
// connection is closed, never pooled.
func outlivesReset(name string) bool {
	switch name {
	case "CLIENT NO-EVICT", "CLIENT NO-TOUCH", "CLIENT SETINFO", "CLIENT CAPA":
		return true
	}
	return false
}

// dedicatedRefusal returns why a dedicated connection refuses the command
// name with flags, or "": only what breaks one reply per command, or what
// the client itself owns, is refused there.
func dedicatedRefusal(name string, flags catalog.Flag) string {
	why := refusal(name, flags)
	if why == "" {
		return ""
	}
	if flags.Has(catalog.FlagPubSub) {
		return why
	}
	switch name {
	case "MONITOR", "SYNC", "PSYNC", "REPLCONF", "CLIENT REPLY", "SCRIPT DEBUG":
		return why
	case "HELLO", "RESET", "QUIT":
		return "the client owns the connection's protocol and lifetime, and resets it when the callback returns"
	}
	return ""
}
