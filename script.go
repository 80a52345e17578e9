package respire

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// ScriptOptions describe a Lua script. A call only reads it and keeps no
// reference to it, so one value may serve concurrent calls while nobody
// changes it.
type ScriptOptions struct {
	// ReadOnly runs the script with EVALSHA_RO/EVAL_RO: the server refuses
	// its writes, and under a replica read policy ([Options.ReadFrom]) it
	// may run on a replica. It grants no retry: declare a category with
	// [Script.WithRetryCategory].
	ReadOnly bool
}

// Script is a Lua script run by its SHA1 digest: [Script.Run] sends
// EVALSHA, and EVAL with the source when the server answers NOSCRIPT (its
// script cache was flushed, or it never saw the script), so callers never
// write that fallback by hand. The fallback is chosen by the reply's
// text, as in every client: a script that writes and then returns an
// error of its own that begins with NOSCRIPT runs again through EVAL. Do
// not return such errors from a script that writes. On a Cluster client
// an error of its own that reads as a redirect (MOVED, ASK) is returned
// when it names another slot than the keys' (a server redirects a call
// before running it, naming that slot); naming the keys' slot, it is
// followed like the server's.
//
// A user whose ACL refuses EVALSHA (EVALSHA_RO) but allows EVAL (EVAL_RO)
// runs scripts too: the server refuses EVALSHA without running anything
// (NOPERM naming the command), and Run sends EVAL in the same call. The
// client remembers the refusal (for read-only scripts apart), and its
// later runs of every script send EVAL with the source at once, for as
// long as the client lives (a user allowed EVALSHA later still gets EVAL,
// which runs the script the same way). A NOPERM of another cause (a key
// the user may not touch) is returned. The refusal is recognised by its
// text too: a script must not return an error of its own that reads as
// the refusal of EVALSHA.
//
// Retries: a script's category is Never until it is declared with
// [Script.WithRetryCategory], read-only scripts included: the client cannot
// know what a script does. The declaration replaces any judgement of the
// client and is not checked against the source. A declared script retries
// its complete exchange (EVALSHA, and EVAL when the fallback is needed),
// and every failed attempt counts as possibly executed, one that failed
// before sending anything included.
// Raw EVAL and EVALSHA through [Client.Do] are never retried.
//
// Metrics ([MetricsResiliency]): a resend counts as attempted when the
// transport accepted some command of its exchange, the EVAL fallback
// included (on a Cluster client, when one was started on a node); a
// resend that got no connection, or found the client closed, counts
// nothing.
//
// A Script is immutable and safe for concurrent use. Make one with
// [NewScript]: a nil or zero Script fails every use with
// [ErrInvalidArgument] before any I/O.
type Script struct {
	src, sha string
	readOnly bool
	cat      RetryCategory
	err      error // a construction error: Run and Load return it, sending nothing
}

// NewScript returns the script with source src. An empty source, or one
// of ASCII white space only, makes every use fail with
// [ErrInvalidArgument] before any I/O; other white space (U+00A0) is
// sent, and the server answers that it does not compile.
func NewScript(src string, opt ScriptOptions) *Script {
	sum := sha1.Sum([]byte(src))
	s := &Script{src: src, sha: hex.EncodeToString(sum[:]), readOnly: opt.ReadOnly, cat: Never}
	if ascii.TrimSpace(src) == "" {
		s.err = errInvalid("EVAL", "empty script")
	}
	return s
}

// WithRetryCategory returns a copy of the script with its retry category
// declared. An undefined category makes every use fail with
// [ErrInvalidArgument].
func (s *Script) WithRetryCategory(cat RetryCategory) *Script {
	if err := s.check(); err != nil {
		return &Script{cat: cat, err: err}
	}
	d := *s
	d.cat = cat
	d.err = checkCategory(d.name(), cat)
	return &d
}

// check returns the error that every use of s returns before any I/O: a
// construction error, or s not made by [NewScript] (nil, or the zero
// Script, whose empty source the server would run).
func (s *Script) check() error {
	switch {
	case s == nil:
		return errInvalid("EVALSHA", "nil *Script")
	case s.err != nil:
		return s.err
	case s.sha == "":
		return errInvalid("EVALSHA", "the Script was not made by NewScript")
	}
	return nil
}

// SHA returns the script's SHA1 digest in hexadecimal, as EVALSHA and
// SCRIPT LOAD know it ("" for a Script not made by [NewScript]).
func (s *Script) SHA() string {
	if s == nil {
		return ""
	}
	return s.sha
}

// Category returns the script's retry category (Never unless declared).
func (s *Script) Category() RetryCategory {
	if s == nil {
		return Never
	}
	return s.cat
}

// roIndex is the index of s's EVALSHA in [Client]'s evalOnly: 1 for
// EVALSHA_RO.
func (s *Script) roIndex() int {
	if s.readOnly {
		return 1
	}
	return 0
}

// refusedByACL reports whether se is the server's refusal, by the user's
// ACL, to run the command name itself ("NOPERM this user has no
// permissions to run the 'evalsha' command"; Redis 7.2 and Valkey say
// "User <name>"), which the server answers without running it. Other
// NOPERM replies, such as a refused key, are not.
func refusedByACL(se *ServerError, name string) bool {
	rest, ok := strings.CutSuffix(se.Message, "' command")
	i := strings.LastIndexByte(rest, '\'')
	return ok && se.Code == "NOPERM" && i >= 0 && ascii.EqualFold(rest[i+1:], name) &&
		strings.HasSuffix(rest[:i], " permissions to run the ")
}

func (s *Script) name() string {
	if s.readOnly {
		return "EVALSHA_RO"
	}
	return "EVALSHA"
}

// checkCategory rejects a category outside Never..ServerAdmin.
func checkCategory(name string, cat RetryCategory) error {
	if cat < Never || cat > ServerAdmin {
		return errInvalid(name, "undefined retry category "+strconv.Itoa(int(cat)))
	}
	return nil
}

// Run runs the script with keys and args and returns its reply. On a
// Cluster client every key must hash to one slot (checked before any I/O),
// and the script runs on that slot's node; a keyless script runs on any
// primary. A nil c is an [ErrInvalidArgument].
//
// Run may send two commands (EVALSHA, then EVAL), so a failed attempt
// counts as possibly executed, also one that failed before sending: a
// [*ConnError] from Run is never Unwritten, and [MayHaveExecuted] reports
// true for it.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...string) (Reply, error) {
	if err := s.check(); err != nil {
		return Reply{}, err
	}
	if c == nil {
		return Reply{}, errInvalid(s.name(), "nil *Client")
	}
	x := s.exchange(c, keys, args)
	return x.run(ctx)
}

// exchange returns the exchange of one Run: EVALSHA, and EVAL with the
// source on NOSCRIPT.
func (s *Script) exchange(c *Client, keys, args []string) exchange {
	evalsha := catalog.Scripting.EVALSHA()
	if s.readOnly {
		evalsha = catalog.Scripting.EVALSHA_RO()
	}
	return exchange{c: c, s: spec{name: s.name(), cat: s.cat, desc: evalsha}, first: s.sha,
		keys: keys, args: args, readOnly: s.readOnly, script: s}
}

// fallback is the recovery of x, an exchange of s whose EVALSHA found no
// script: EVAL with the source, which also caches it for the next EVALSHA.
func (s *Script) fallback(x *exchange, t *target) attemptResult {
	eval := catalog.Scripting.EVAL()
	if s.readOnly {
		eval = catalog.Scripting.EVAL_RO()
	}
	return x.step(&spec{name: eval.Name(), cat: s.cat, desc: eval}, callFrame(x.c, eval, s.src, x.keys, x.args), t)
}

// Load sends SCRIPT LOAD to the server (on a Cluster client, to every
// primary), so that the next Run needs no fallback. Redis does not
// replicate its script cache: for a read-only script under a replica read
// policy ([Options.ReadFrom]) Load also loads it on every replica, and
// fails when one fails. Run does not need it. A nil c is an
// [ErrInvalidArgument].
func (s *Script) Load(ctx context.Context, c *Client) error {
	if err := s.check(); err != nil {
		return err
	}
	if c == nil {
		return errInvalid("SCRIPT LOAD", "nil *Client")
	}
	load := catalog.Scripting.SCRIPT_LOAD()
	r, err := c.Do(ctx, load, s.src)
	if err != nil {
		return err
	}
	if err := s.checkDigest(r); err != nil {
		return err
	}
	if !s.readOnly || c.topo == nil || c.cfg.readFrom == ReadPrimary {
		return nil
	}
	for _, n := range c.topo.Replicas() {
		f := c.rawFrame(load, []string{s.src})
		if err := c.execOn(ctx, f, specOf(load), n); err != nil {
			return err
		}
		r := Reply{v: f.Value}
		f.Release()
		if err := s.checkDigest(r); err != nil {
			return err
		}
	}
	return nil
}

// checkDigest checks a SCRIPT LOAD reply: one digest, or one per primary.
func (s *Script) checkDigest(r Reply) error {
	for _, v := range append([]Reply{r}, r.Elements()...) {
		if sha, err := v.String(); (err == nil && sha != s.sha) || v.v.IsError() {
			return unexpected("the script's SHA1 "+s.sha, v.v)
		}
	}
	return nil
}

// callFrame encodes "NAME first numkeys keys... args...".
func callFrame(c *Client, cmd Command, first string, keys, args []string) *wire.Frame {
	f := c.frames.Get()
	f.Buf = appendCommandHead(f.Buf, cmd, cmd.ArgPrefix()+2+len(keys)+len(args))
	f.Buf = resp.AppendBulkString(f.Buf, first)
	f.Buf = resp.AppendBulkInt(f.Buf, int64(len(keys)))
	for _, k := range keys {
		f.Buf = resp.AppendBulkString(f.Buf, k)
	}
	for _, a := range args {
		f.Buf = resp.AppendBulkString(f.Buf, a)
	}
	f.Want = wire.WantValue
	return f
}

// exchange is one call of a script or a function: its command and, when
// the server lacks the code, the recovery (EVAL with the source, or
// loading the library and calling again) that runs within the same
// attempt. The retry policy resends the whole exchange.
//
// It is plain data, without closures, so that a call that needs no
// resend keeps it on the caller's stack: a healthy call allocates
// nothing of its own.
type exchange struct {
	c          *Client
	ctx        context.Context
	waitDL     time.Time
	s          spec       // the call's name and declared category; desc is the command and routes it
	first      string     // the command's first argument: the script's digest or the function's name
	keys, args []string   // the call's keys and arguments
	readOnly   bool       // the read policy may choose a replica
	script     *Script    // a script's call: EVAL with the source on NOSCRIPT
	fn         *Function  // a function's call: the library reload from its Source, if any
	t          target     // the route of every attempt (topologies)
	cur        target     // the route of the current attempt: a copy of t
	value      resp.Value // the successful attempt's reply
}

// run routes the exchange by its keys and runs it under the retry policy,
// through the process hooks and the command duration metric.
func (x *exchange) run(ctx context.Context) (Reply, error) {
	if ctx == nil {
		return Reply{}, errNilContext(x.s.name)
	}
	c := x.c
	if c.hooks == nil && c.cmdMetrics == nil {
		return x.runFrames(ctx)
	}
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var r Reply
	var err error
	if c.hooks == nil {
		r, err = x.runFrames(ctx)
	} else {
		hx := x.onHeap() // the hook chain keeps its callback
		err = c.processHooked(ctx, hx.s.name, hx.s.cat, func(ctx context.Context) error {
			var err error
			r, err = hx.runFrames(ctx)
			return err
		})
	}
	if c.cmdMetrics != nil {
		c.recordCommand(&x.s, began, err)
	}
	return r, err
}

// onHeap returns a copy of x for a path that keeps it, so that x itself
// stays on its caller's stack.
func (x *exchange) onHeap() *exchange {
	hx := new(exchange)
	*hx = *x
	return hx
}

// runFrames is run without the process hooks.
func (x *exchange) runFrames(ctx context.Context) (Reply, error) {
	c := x.c
	x.ctx, x.waitDL = ctx, c.waitDeadline(ctx)
	x.t = target{slot: -1, read: x.readOnly && c.cfg.readFrom != ReadPrimary}
	if c.isCluster() {
		for _, k := range x.keys {
			slot := route.Slot(k)
			if x.t.slot >= 0 && slot != x.t.slot {
				return Reply{}, &RouteError{Command: x.s.name, Slot: -1, Err: ErrCrossSlot}
			}
			x.t.slot = slot
		}
	}
	r := x.attempt()
	switch {
	case r.err == nil:
	case c.retries && x.s.cat.Retryable():
		hx := x.onHeap() // the retry loop holds it as its resender
		if err := c.retryOp(ctx, hx.waitDL, &hx.s, r, hx); err != nil {
			return Reply{}, err
		}
		x.value = hx.value
	default:
		return Reply{}, r.err
	}
	return Reply{v: x.value}, nil
}

// route returns the target of one attempt, a fresh copy of the
// exchange's route (nil on a standalone client).
func (x *exchange) route() *target {
	if x.c.topo == nil {
		return nil
	}
	x.cur = x.t
	return &x.cur
}

// main returns the frame of the call itself.
func (x *exchange) main() *wire.Frame { return callFrame(x.c, x.s.desc, x.first, x.keys, x.args) }

// recoverable reports whether err, a failed call's error, says the
// server lacks the code that the exchange's recovery supplies.
func (x *exchange) recoverable(err error) bool {
	switch {
	case x.script != nil:
		se := serverError(err)
		if se != nil && refusedByACL(se, x.s.desc.Name()) {
			x.c.evalOnly[x.script.roIndex()].Store(true) // later runs send EVAL at once
			return true
		}
		return se != nil && se.Code == "NOSCRIPT"
	case x.fn != nil && x.fn.opt.Source != "":
		se := serverError(err)
		return se != nil && se.Message == "ERR Function not found"
	}
	return false
}

// serverError returns the server error in err's chain, or nil. It is
// apart because the target of errors.As escapes to the heap: only a
// failed call pays for it.
func serverError(err error) *ServerError {
	var se *ServerError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// recover runs the exchange's recovery on t, after its call found the
// code missing.
func (x *exchange) recover(t *target) attemptResult {
	if x.script != nil {
		return x.script.fallback(x, t)
	}
	return x.fn.reload(x, t)
}

// step sends f as one attempt of the exchange and keeps its reply.
func (x *exchange) step(s *spec, f *wire.Frame, t *target) attemptResult {
	r := x.c.attempt(x.ctx, f, x.waitDL, s, t)
	if r.err == nil {
		x.value = f.Value
	}
	if r.owned {
		f.Release()
	}
	return r
}

// attempt runs the exchange once: the call, and the recovery when the
// server lacks the code.
//
// Two facts about a failed attempt are kept apart. For the retry
// decision every failed attempt counts as possibly executed, one that
// failed before sending included (the spec's rule for scripts and
// functions): only the declared category can permit a resend. For the
// metrics the attempt is counted as its commands would be: accepted when
// the transport accepted any of them (the EVAL fallback or the library
// reload included), started when any was started on a Cluster node; an
// attempt that got no connection or found the client closed is neither.
func (x *exchange) attempt() attemptResult {
	t := x.route()
	var r attemptResult
	if x.script != nil && x.c.evalOnly[x.script.roIndex()].Load() {
		r = x.recover(t) // the ACL refuses EVALSHA: EVAL at once
	} else if r = x.step(&x.s, x.main(), t); r.err != nil && x.recoverable(r.err) {
		r = followed(r, x.recover(t))
	}
	if r.err != nil {
		r.unwritten = false
		if ce, ok := r.err.(*ConnError); ok {
			ce.Unwritten = false
		}
	}
	return r
}

// followed returns next, the result of a step that ran after prev within
// one attempt of an exchange, with what prev adds to the attempt: a
// command the transport accepted or a Cluster node started, and a
// replica's service (a read a replica served is never resent, even when
// the recovery ran on the primary). Having sent prev, the attempt did not
// find the client closed before sending anything.
func followed(prev, next attemptResult) attemptResult {
	next.accepted = next.accepted || prev.accepted
	next.started = next.started || prev.started
	next.replica = next.replica || prev.replica
	next.closed = next.closed && prev.closed
	return next
}

func (x *exchange) resend() attemptResult { return x.attempt() }

func (x *exchange) drop(attemptResult) {} // every step released its frame

// countsStarted: a resend of an exchange counts like its commands, as
// started on a Cluster and as accepted elsewhere.
func (x *exchange) countsStarted() bool { return x.c.isCluster() }
