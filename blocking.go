package respire

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Blocking commands never travel on the shared connection: one caller's
// BLPOP must not delay another caller's GET. They run on a small pool of
// dedicated connections ([Options.BlockingPoolSize]), one call per
// connection at a time, and are never resent. A call waits for the
// server-side block time plus [Options.CommandTimeout] as a network
// budget (a block time of 0, "forever", waits as long as ctx allows; the
// health check still ends it when the server falls silent).
//
// A caller whose context or budget ends while the server still blocks for
// it is stopped on the server: the client sends CLIENT UNBLOCK for that
// connection on the shared one and waits (up to a second) for the
// command's reply. An element the server popped meanwhile is returned to
// the caller as a success; otherwise the call returns a [*ContextError].
// When the server cannot be told (no permission for CLIENT UNBLOCK, no
// answer in time), the connection is closed instead, never returned to
// the pool. An element pushed after the call returned is then never
// popped for nobody once the server has seen the close, which it may see
// only after a push sent at once on another connection.

var (
	specBLPOP    = &spec{name: "BLPOP", cat: Never, desc: catalog.List.BLPOP()}
	specBRPOP    = &spec{name: "BRPOP", cat: Never, desc: catalog.List.BRPOP()}
	specBLMOVE   = &spec{name: "BLMOVE", cat: Never, desc: catalog.List.BLMOVE()}
	specBZPOPMIN = &spec{name: "BZPOPMIN", cat: Never, desc: catalog.SortedSet.BZPOPMIN()}
	specBZPOPMAX = &spec{name: "BZPOPMAX", cat: Never, desc: catalog.SortedSet.BZPOPMAX()}
)

// blockTime is how long the server may hold a blocking command.
type blockTime struct {
	d       time.Duration
	forever bool // the command blocks until it is served (timeout 0)
	unknown bool // a declared blocking command whose timeout the client cannot read
}

// blockTimeOf reads the block time of a blocking command from its
// arguments. A missing, negative or non-numeric timeout is an
// [ErrInvalidArgument] naming the command.
func blockTimeOf(name string, args []string) (blockTime, error) {
	switch name {
	case "BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX", "BRPOPLPUSH", "BLMOVE":
		return secondsArg(name, args, len(args)-1)
	case "BLMPOP", "BZMPOP":
		return secondsArg(name, args, 0)
	case "WAIT", "WAITAOF":
		return millisArg(name, args, len(args)-1, "timeout")
	case "XREAD", "XREADGROUP":
		i := blockOption(name, args)
		if i < 0 || i+1 >= len(args) {
			return blockTime{}, errInvalid(name, "BLOCK needs a number of milliseconds")
		}
		return millisArg(name, args, i+1, "BLOCK")
	}
	return blockTime{unknown: true}, nil
}

func secondsArg(name string, args []string, i int) (blockTime, error) {
	if i < 0 || i >= len(args) {
		return blockTime{}, errInvalid(name, "missing timeout")
	}
	x, err := strconv.ParseFloat(args[i], 64)
	if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return blockTime{}, errInvalid(name, "timeout "+strconv.Quote(args[i])+" is not a non-negative number of seconds")
	}
	if x == 0 {
		return blockTime{forever: true}, nil
	}
	if ns := x * float64(time.Second); ns < math.MaxInt64 {
		return blockTime{d: time.Duration(ns)}, nil
	}
	// Beyond the largest Duration the conversion would wrap around.
	return blockTime{d: math.MaxInt64}, nil
}

// blockDeadline is the deadline of a blocking call: its block time plus
// the command timeout, saturating instead of wrapping into the past.
func blockDeadline(now time.Time, bt blockTime, timeout time.Duration) time.Time {
	d := bt.d
	if d > math.MaxInt64-timeout {
		d = math.MaxInt64
	} else {
		d += timeout
	}
	return now.Add(d)
}

func millisArg(name string, args []string, i int, what string) (blockTime, error) {
	if i < 0 || i >= len(args) {
		return blockTime{}, errInvalid(name, "missing "+what)
	}
	n, err := strconv.ParseInt(args[i], 10, 64)
	if err != nil || n < 0 {
		return blockTime{}, errInvalid(name, what+" "+strconv.Quote(args[i])+" is not a non-negative number of milliseconds")
	}
	if n == 0 {
		return blockTime{forever: true}, nil
	}
	return blockTime{d: time.Duration(min(n, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond}, nil
}

// blockingOnlyWithBlock reports whether the catalog's blocking command
// name blocks only when its BLOCK option is present.
func blockingOnlyWithBlock(name string) bool { return name == "XREAD" || name == "XREADGROUP" }

func hasBlockOption(args []string) bool { return blockOption("", args) >= 0 }

// blockOption returns the index of the BLOCK option of an XREAD or
// XREADGROUP argument list, or -1. It walks the options in front of
// STREAMS, in any order as the server reads them, so a group, consumer or
// stream named "block" is not mistaken for the option.
func blockOption(name string, args []string) int {
	for i := 0; i < len(args); {
		switch a := args[i]; {
		case ascii.EqualFold(a, "BLOCK"):
			return i
		case ascii.EqualFold(a, "GROUP"): // GROUP group consumer
			i += 3
		case ascii.EqualFold(a, "COUNT"), ascii.EqualFold(a, "CLAIM"):
			i += 2
		case ascii.EqualFold(a, "STREAMS"):
			return -1
		default:
			i++
		}
	}
	return -1
}

// execBlocking sends f on a dedicated connection and waits for its reply,
// once. On success the caller reads f's results and releases it; on error
// execBlocking has released (or given up) the frame.
func (c *Client) execBlocking(ctx context.Context, f *wire.Frame, s *spec, bt blockTime) error {
	if ctx == nil {
		f.Release()
		return errNilContext(s.name)
	}
	if c.hooks != nil || c.cmdMetrics != nil {
		return c.execObserved(ctx, f, s, &bt)
	}
	return c.execBlockingFrame(ctx, f, s, bt)
}

// execBlockingFrame is execBlocking without the process hooks.
func (c *Client) execBlockingFrame(ctx context.Context, f *wire.Frame, s *spec, bt blockTime) error {
	if c.closed.Load() {
		f.Release()
		return &ConnError{Command: s.name, Unwritten: true, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		f.Release()
		return &ContextError{Command: s.name, Err: err}
	}
	var waitDL time.Time
	if !bt.forever && !bt.unknown && c.cfg.commandTimeout > 0 {
		waitDL = blockDeadline(time.Now(), bt, c.cfg.commandTimeout)
	}
	getCtx := ctx
	if !waitDL.IsZero() {
		var cancel context.CancelFunc
		getCtx, cancel = context.WithDeadline(ctx, waitDL)
		defer cancel()
	}
	node, err := c.keyNode(f, s)
	if err != nil {
		f.Release()
		return err
	}
	p := node.Pool
	conn, err := p.Get(getCtx)
	if err != nil {
		f.Release()
		return c.failedBeforeSend(ctx, err, s).err
	}
	if err := conn.Submit(ctx, waitDL, f); err != nil {
		p.Put(conn)
		f.Release()
		return c.failedBeforeSend(ctx, err, s).err
	}
	if err := f.WaitFor(ctx, waitDL); err != nil {
		if !c.stopBlocked(node, conn, f) {
			// The server may still be blocking for this caller: the
			// connection must never serve anyone else.
			p.Discard(conn)
			return &ContextError{Command: s.name, Sent: true, Err: err}
		}
		// The server answered the stopped command. An element it had
		// already popped is the caller's result; otherwise nothing was
		// taken, and the connection is as good as new.
		if tookNothing(s.name, f) {
			p.Put(conn)
			f.Release()
			return &ContextError{Command: s.name, Sent: true, Err: err}
		}
	}
	if c.cache != nil {
		c.cache.afterWrite(f.Buf, s.desc, true) // BLMOVE, BZPOPMIN... write
	}
	if f.Err != nil {
		p.Discard(conn)
		err := connError(s.name, f.Err)
		f.Release()
		return err
	}
	p.Put(conn)
	if f.IsErr {
		se := newServerError(s.name, f.ErrReply)
		c.noteMoved(f.ErrReply, node)
		c.noteReadOnly(se)
		f.Release()
		return se
	}
	return nil
}

// unblockWait bounds how long a stopped blocking call waits for the
// server to confirm CLIENT UNBLOCK and answer the unblocked command.
const unblockWait = time.Second

// stopBlocked ends the blocking command of f on the server (CLIENT UNBLOCK
// from the shared connection) and waits for its reply, so that nothing the
// server pops after the caller gave up is popped for nobody. It returns
// true when f has completed (the caller owns it), false when f was given
// to the connection, which must then be discarded: the server could not
// be told (no connection id, no permission, no answer in time).
//
// CLIENT UNBLOCK answers 0 both when the command's reply is already on
// the way and when the server has not read the command yet (it travels on
// another connection, and may still be in either's buffers): while the
// reply does not come, the client asks again, after a pause that doubles
// up to unblockPauseMax, until the server has unblocked the command.
func (c *Client) stopBlocked(node *route.Node, conn *wire.Conn, f *wire.Frame) bool {
	id := conn.ID()
	if id == 0 || c.closed.Load() {
		return !f.Abandon()
	}
	ctx, cancel := context.WithTimeout(context.Background(), unblockWait)
	defer cancel()
	pause := time.Millisecond
	for {
		u := c.newFrame(3, "CLIENT")
		arg(u, "UNBLOCK")
		argInt(u, id)
		u.Want = wire.WantInt
		if err := c.execOn(ctx, u, specUNBLOCK, node); err != nil {
			break
		}
		unblocked := u.Int == 1
		u.Release()
		var dl time.Time // unblocked: its reply comes now
		if !unblocked {
			dl = time.Now().Add(pause)
			pause = min(2*pause, unblockPauseMax)
		}
		if f.WaitFor(ctx, dl) == nil {
			return !f.Abandon()
		}
		if unblocked || ctx.Err() != nil {
			break
		}
	}
	return !f.Abandon()
}

// unblockPauseMax bounds the pause between two CLIENT UNBLOCKs that found
// the command not (yet) blocked.
const unblockPauseMax = 100 * time.Millisecond

// tookNothing reports whether f, the reply of the blocking command name
// that was stopped after its caller gave up, gives the caller nothing: a
// null reply, or the count of WAIT or WAITAOF, which the stop made them
// answer (it took nothing, and their caller's wait did not end by
// itself). A popped or moved element, stream entries (which XREADGROUP
// also made pending) and any error are the caller's.
func tookNothing(name string, f *wire.Frame) bool {
	if f.Err != nil || f.IsErr {
		return false
	}
	switch name {
	case "WAIT", "WAITAOF":
		return true
	}
	return f.Value.Type == 0 || f.Value.IsNull()
}

var specUNBLOCK = &spec{name: "CLIENT UNBLOCK", cat: Never, desc: catalog.Conn.CLIENT_UNBLOCK()}

// blockingArgs validates a typed blocking call's keys and timeout and
// returns the timeout as the server reads it (seconds).
func blockingArgs(name string, keys []string, timeout time.Duration) (string, error) {
	if len(keys) == 0 {
		return "", errInvalid(name, "no keys")
	}
	return timeoutSeconds(name, timeout)
}

// timeoutSeconds formats a blocking timeout in seconds with millisecond
// precision. 0 blocks until served; a negative timeout, or a positive one
// under a millisecond (which the server would read as 0, forever), is an
// [ErrInvalidArgument].
func timeoutSeconds(name string, timeout time.Duration) (string, error) {
	switch {
	case timeout < 0:
		return "", errInvalid(name, "negative timeout "+timeout.String())
	case timeout > 0 && timeout < time.Millisecond:
		return "", errInvalid(name, "timeout "+timeout.String()+" is under a millisecond (the server would block forever)")
	}
	return strconv.FormatFloat(float64(timeout.Milliseconds())/1000, 'f', -1, 64), nil
}

// popFrame prepares "NAME key... timeout".
func (c *Client) popFrame(name string, keys []string, timeout time.Duration) (*wire.Frame, blockTime, error) {
	secs, err := blockingArgs(name, keys, timeout)
	if err != nil {
		return nil, blockTime{}, err
	}
	f := c.newFrame(2+len(keys), name)
	for _, k := range keys {
		arg(f, k)
	}
	arg(f, secs)
	return f, blockTime{d: timeout, forever: timeout == 0}, nil
}

// BLPop removes and returns the first element of the first non-empty list
// among keys, with that list's key, blocking up to timeout (0 blocks until
// an element arrives or ctx ends). When timeout passes first it returns
// [ErrNil]. No keys, a negative timeout, or a positive one under a
// millisecond (which the server would read as 0, forever) fails with
// [ErrInvalidArgument] before anything is sent. It runs on a dedicated
// connection and is never resent.
//
// It waits for timeout plus [Options.CommandTimeout] (a timeout of 0 as
// long as ctx allows, while the health check, [Options.HealthTimeout],
// still fails it as connection loss when the server falls silent and
// answers no probe either; see there for a connection that dies alone).
// When ctx or that budget ends while the server still blocks, the call
// is stopped on the server (CLIENT UNBLOCK, sent on the shared
// connection) and its reply taken: an element the server popped
// meanwhile is returned as a success, otherwise the call returns a
// [*ContextError]. When the server cannot be told (no permission for
// CLIENT UNBLOCK, no answer within a second), the dedicated connection
// is closed instead (the server may then still pop one element for it
// until it sees the close). The other blocking commands wait the same way.
func (c *Client) BLPop(ctx context.Context, timeout time.Duration, keys ...string) (key, value string, err error) {
	return c.listPop(ctx, specBLPOP, timeout, keys)
}

// BRPop is [Client.BLPop] taking the last element.
func (c *Client) BRPop(ctx context.Context, timeout time.Duration, keys ...string) (key, value string, err error) {
	return c.listPop(ctx, specBRPOP, timeout, keys)
}

func (c *Client) listPop(ctx context.Context, s *spec, timeout time.Duration, keys []string) (string, string, error) {
	f, bt, err := c.popFrame(s.name, keys, timeout)
	if err != nil {
		return "", "", err
	}
	v, err := c.blockingValue(ctx, f, s, bt)
	if err != nil {
		return "", "", err
	}
	if len(v.Elems) != 2 || v.Type != resp.Array {
		return "", "", unexpected("array of key and element", v)
	}
	key, err := convKey(v.Elems[0])
	if err != nil {
		return "", "", err
	}
	elem, err := convKey(v.Elems[1])
	if err != nil {
		return "", "", err
	}
	return string(key), string(elem), nil
}

// blockingValue runs a prepared blocking frame and returns its owned
// reply; a null reply (the timeout passed) is [ErrNil].
func (c *Client) blockingValue(ctx context.Context, f *wire.Frame, s *spec, bt blockTime) (resp.Value, error) {
	f.Want = wire.WantValue
	if err := c.execBlocking(ctx, f, s, bt); err != nil {
		return resp.Value{}, err
	}
	v := f.Value
	f.Release()
	if v.IsNull() {
		return resp.Value{}, ErrNil
	}
	return v, nil
}

// ListSide names an end of a list. Its values are plain constants, safe for
// concurrent use.
type ListSide uint8

// List ends.
const (
	// ListLeft is the head of a list (LEFT).
	ListLeft ListSide = iota
	// ListRight is the tail of a list (RIGHT).
	ListRight
)

func (s ListSide) arg() (string, bool) {
	switch s {
	case ListLeft:
		return "LEFT", true
	case ListRight:
		return "RIGHT", true
	}
	return "", false
}

// BLMove atomically moves an element from the from end of source to the
// to end of destination and returns it, blocking up to timeout while
// source is empty (0 blocks until an element arrives or ctx ends). When
// timeout passes first it returns [ErrNil]. It runs on a dedicated
// connection and is never resent.
func (c *Client) BLMove(ctx context.Context, source, destination string, from, to ListSide, timeout time.Duration) (string, error) {
	src, ok1 := from.arg()
	dst, ok2 := to.arg()
	if !ok1 || !ok2 {
		return "", errInvalid("BLMOVE", "list side must be ListLeft or ListRight")
	}
	secs, err := timeoutSeconds("BLMOVE", timeout)
	if err != nil {
		return "", err
	}
	f := c.newFrame(6, "BLMOVE")
	arg(f, source)
	arg(f, destination)
	arg(f, src)
	arg(f, dst)
	arg(f, secs)
	v, err := c.blockingValue(ctx, f, specBLMOVE, blockTime{d: timeout, forever: timeout == 0})
	if err != nil {
		return "", err
	}
	if v.Type.Aggregate() {
		return "", unexpected("string", v)
	}
	return string(v.TextBytes()), nil
}

// BZPopMin removes and returns the member with the lowest score of the
// first non-empty sorted set among keys, with that set's key, blocking up
// to timeout (0 blocks until a member arrives or ctx ends). When timeout
// passes first it returns [ErrNil]. It runs on a dedicated connection and
// is never resent.
func (c *Client) BZPopMin(ctx context.Context, timeout time.Duration, keys ...string) (key string, member Z, err error) {
	return c.zsetPop(ctx, specBZPOPMIN, timeout, keys)
}

// BZPopMax is [Client.BZPopMin] taking the highest score.
func (c *Client) BZPopMax(ctx context.Context, timeout time.Duration, keys ...string) (key string, member Z, err error) {
	return c.zsetPop(ctx, specBZPOPMAX, timeout, keys)
}

func (c *Client) zsetPop(ctx context.Context, s *spec, timeout time.Duration, keys []string) (string, Z, error) {
	f, bt, err := c.popFrame(s.name, keys, timeout)
	if err != nil {
		return "", Z{}, err
	}
	v, err := c.blockingValue(ctx, f, s, bt)
	if err != nil {
		return "", Z{}, err
	}
	if len(v.Elems) != 3 || v.Type != resp.Array {
		return "", Z{}, unexpected("array of key, member and score", v)
	}
	key, err := convKey(v.Elems[0])
	if err != nil {
		return "", Z{}, err
	}
	z, err := zOf(v.Elems[1], v.Elems[2])
	if err != nil {
		return "", Z{}, err
	}
	return string(key), z, nil
}
