package respire

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// ErrNotExecuted is the result of a batch or transaction member read
// before its unit was executed.
var ErrNotExecuted = errors.New("respire: the batch has not been executed")

// Batch queues commands and sends them together with [Batch.Execute]: on
// one connection, in one write where they fit, interleaved with no other
// caller's commands. A batch is not atomic: the server may run some
// members and not others (use [Client.NewTransaction] for MULTI/EXEC).
// A member's server error is that member's result, not the batch's.
//
// Every queueing method returns a [Future] whose value is final once
// Execute returns. A Batch is executed once, by one goroutine; it is not
// safe for concurrent use.
//
// Retries: the retry policy resends the whole batch, every member in queue
// order with its original bytes, when the failure is selected and every
// member's category is permitted (one member without a category, such as
// a raw command or a script, blocks the resend). Once any byte was sent
// the batch counts as possibly executed; a failure to get a connection
// counts as unwritten. A member's LOADING, TRYAGAIN, MASTERDOWN or READONLY
// reply is a failure of the whole unit. Only the final attempt's results
// are published; when the unit fails, every member fails with its error.
// On a Cluster client the members are grouped by the node serving their
// keys, and each group is such a unit of its own.
type Batch struct {
	c        *Client
	tx       bool // a transaction: MULTI, the members, EXEC
	members  []*member
	err      error // the first queueing error: Execute sends nothing
	executed bool
}

// member is one queued command.
type member struct {
	name  string
	cat   RetryCategory
	known bool
	desc  Command
	buf   []byte // the encoded command, copied at queue time
	v     resp.Value
	err   error
	done  bool
}

// Future is the deferred result of a queued command.
type Future[T any] struct {
	m    *member
	conv func(resp.Value) (T, error)
}

// Result returns the member's value and error. Before the unit was
// executed it returns [ErrNotExecuted].
func (f *Future[T]) Result() (T, error) {
	var zero T
	switch {
	case !f.m.done:
		return zero, ErrNotExecuted
	case f.m.err != nil:
		return zero, f.m.err
	}
	return f.conv(f.m.v)
}

// Err returns the member's error only.
func (f *Future[T]) Err() error {
	_, err := f.Result()
	return err
}

// NewBatch returns an empty batch of this client.
func (c *Client) NewBatch() *Batch { return &Batch{c: c} }

// NewTransaction returns an empty unwatched transaction: its members are
// sent as MULTI, the members and EXEC in one frame on the current primary,
// so that they run atomically and no other command comes between them.
// It retries as one unit, like a [Batch]; a lost EXEC reply counts as
// possible execution. On a Cluster client every key must hash to one slot.
// For optimistic locking with WATCH use [Client.Watch].
func (c *Client) NewTransaction() *Batch { return &Batch{c: c, tx: true} }

// Len returns the number of queued members.
func (b *Batch) Len() int { return len(b.members) }

// queue adds cmd with args, copying their encoding. A refused command, a
// blocking command, a transaction command or a member added after Execute
// fail the member and (but for the last) make Execute fail before any I/O.
func (b *Batch) queue(cmd Command, args []string) *member {
	d := dispatchOf(cmd, args)
	m := &member{name: d.name, cat: d.category, known: d.known, desc: d.desc}
	unit := "batch"
	if b.tx {
		unit = "transaction"
	}
	var why string
	switch {
	case b.executed:
		m.err, m.done = errInvalid(d.name, "added to a "+unit+" that was already executed"), true
		return m
	case cmd.FullName() == "":
		why = "empty command name"
	case d.refused != "":
		why = "refused in a " + unit + ": " + d.refused
	case d.blocking:
		why = "a blocking command would hold the connection of every other member; run it on its own"
	}
	if why != "" {
		m.err, m.done = errInvalid(d.name, why), true
		if b.err == nil {
			b.err = m.err
		}
		b.members = append(b.members, m)
		return m
	}
	f := b.c.rawFrame(cmd, args)
	m.buf = append([]byte(nil), f.Buf...)
	f.Release()
	b.members = append(b.members, m)
	return m
}

func replyOf(v resp.Value) (Reply, error) { return Reply{v: v}, nil }

// Do queues cmd with args; its Future holds the reply like [Client.Do].
func (b *Batch) Do(cmd Command, args ...string) *Future[Reply] {
	return &Future[Reply]{m: b.queue(cmd, args), conv: replyOf}
}

// Execute sends the queued members and waits for their results. It
// returns nil when the unit ran (members may still hold their own server
// errors), or the unit's error, which every member then holds too. An
// empty batch does nothing. Executing a batch twice is an
// [ErrInvalidArgument].
func (b *Batch) Execute(ctx context.Context) error {
	unit := "batch"
	if b.tx {
		unit = "MULTI"
	}
	if b.executed {
		return errInvalid(unit, "executed already")
	}
	b.executed = true
	if b.err != nil {
		b.fail(b.err)
		return b.err
	}
	if len(b.members) == 0 {
		return nil
	}
	var err error
	switch {
	case b.c.isCluster() && b.tx:
		err = b.execClusterTx(ctx)
	case b.c.isCluster():
		err = b.execGroups(ctx)
	default:
		err = b.execUnit(ctx, b.members, nil)
	}
	return err
}

// fail gives every member still pending err.
func (b *Batch) fail(err error) {
	for _, m := range b.members {
		if !m.done {
			m.err, m.done = err, true
		}
	}
}

// unitSpec is the dispatch of a unit of members: the riskiest member's
// category, Never when one member has none.
func unitSpec(name string, ms []*member) spec {
	s := spec{name: name, cat: Always}
	for _, m := range ms {
		if !m.cat.Retryable() || !m.known {
			s.cat = Never
			break
		}
		s.cat = max(s.cat, m.cat)
	}
	return s
}

// multiCmd and execCmd frame a transaction.
var (
	multiCmd = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "MULTI")
	execCmd  = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "EXEC")
)

// execUnit sends ms (a transaction when b.tx) as one frame, retried as one
// unit, and publishes the final attempt's results. t, when set, routes it
// on a Cluster; nil sends it to the standalone server or Sentinel primary.
func (b *Batch) execUnit(ctx context.Context, ms []*member, t *target) error {
	c := b.c
	f := c.frames.Get()
	n := len(ms)
	if b.tx {
		f.Buf = append(f.Buf, multiCmd...)
		n += 2
	}
	for _, m := range ms {
		f.Buf = append(f.Buf, m.buf...)
	}
	if b.tx {
		f.Buf = append(f.Buf, execCmd...)
	}
	f.Want, f.Replies = wire.WantValue, n
	name := "batch"
	if b.tx {
		name = "MULTI"
	}
	s := unitSpec(name, ms)
	s.unit = unitFailure
	if b.tx {
		s.unit = txFailure
	}
	var err error
	switch {
	case t != nil:
		err = c.execResolved(ctx, f, &s, t)
	case c.topo != nil:
		err = c.execRouted(ctx, f, &s, nil)
	default:
		err = c.exec(ctx, f, &s)
	}
	if err != nil {
		for _, m := range ms {
			m.err, m.done = err, true
		}
		return err
	}
	replies := repliesOf(f)
	if b.tx {
		replies = f.Value.Elems // EXEC's array
	}
	for i, m := range ms {
		m.done = true
		if i >= len(replies) {
			m.err = unexpected("a reply per member", f.Value)
			continue
		}
		if v := replies[i]; v.IsError() {
			m.err = newServerError(m.name, v.Str)
		} else {
			m.v = v
		}
	}
	f.Release()
	return nil
}

// repliesOf returns the replies of a completed unit frame: Values, or
// the one Value of a one-member frame.
func repliesOf(f *wire.Frame) []resp.Value {
	if max(f.Replies, 1) == 1 {
		return []resp.Value{f.Value}
	}
	return f.Values
}

// selected reports whether an error reply is one a retry policy can
// select (LOADING, TRYAGAIN, MASTERDOWN, READONLY).
func selected(text []byte) retry.Failure {
	code := text
	if i := bytes.IndexByte(text, ' '); i >= 0 {
		code = text[:i]
	}
	return retry.ClassifyCode(string(code))
}

// unitFailure classifies a batch frame that completed: the first member
// reply that a policy could select fails the whole unit; other member
// errors are the members' own.
func unitFailure(f *wire.Frame) (retry.Failure, error) {
	for _, v := range repliesOf(f) {
		if v.IsError() {
			if fl := selected(v.Str); fl != retry.Unselectable && fl != retry.Fatal {
				return fl, newServerError("batch", v.Str)
			}
		}
	}
	return 0, nil
}

// txFailure classifies a transaction frame that completed: an error for
// MULTI, a queueing error (EXEC then answers EXECABORT) or EXEC's own
// error fail the unit, classified by the queueing error, so that a
// selected one (LOADING) can retry it; a selected error inside EXEC's
// array retries the unit before any result is published.
func txFailure(f *wire.Frame) (retry.Failure, error) {
	vs := f.Values
	if len(vs) < 2 {
		return retry.Fatal, errors.New("respire: MULTI: missing replies")
	}
	last := vs[len(vs)-1]
	for i, v := range vs[:len(vs)-1] {
		if v.IsError() {
			name := "MULTI"
			if i > 0 {
				name = "transaction member " + strconv.Itoa(i)
			}
			return selected(v.Str), newServerError(name, v.Str)
		}
	}
	switch {
	case last.IsError():
		return selected(last.Str), newServerError("EXEC", last.Str)
	case last.IsNull():
		return retry.Fatal, newServerError("EXEC", []byte("EXECABORT the transaction was aborted"))
	case !last.Type.Aggregate():
		return retry.Fatal, unexpected("EXEC array", last)
	}
	for _, v := range last.Elems {
		if v.IsError() {
			if fl := selected(v.Str); fl != retry.Unselectable && fl != retry.Fatal {
				return fl, newServerError("EXEC", v.Str)
			}
		}
	}
	f.Value = last
	return 0, nil
}

// execGroups runs a Cluster batch: members grouped by the node that
// serves their keys (keyless ones with the first group), one unit per
// group, in parallel. A member answered with MOVED or ASK (the map changed
// between grouping and sending) is sent again on its own within the same
// execution; other groups keep their results.
func (b *Batch) execGroups(ctx context.Context) error {
	c := b.c
	type group struct {
		slot int // a member's slot: the group's route
		ms   []*member
	}
	var groups []*group
	byNode := map[*route.Node]*group{}
	var keyless []*member
	for _, m := range b.members {
		var small [16][]byte
		slot, cross := keySlot(m.desc, frameArgs(m.buf, small[:0]))
		if cross {
			err := &RouteError{Command: m.name, Slot: -1, Err: ErrCrossSlot}
			b.fail(err)
			return err
		}
		if slot < 0 {
			keyless = append(keyless, m)
			continue
		}
		n, err := c.topo.Pick(slot, false)
		if err != nil {
			err = routeErr(m.name, slot, err)
			b.fail(err)
			return err
		}
		g := byNode[n]
		if g == nil {
			g = &group{slot: slot}
			byNode[n] = g
			groups = append(groups, g)
		}
		g.ms = append(g.ms, m)
	}
	if len(groups) == 0 {
		groups = append(groups, &group{slot: -1})
	}
	groups[0].ms = append(groups[0].ms, keyless...)
	errs := make([]error, len(groups))
	done := make(chan struct{}, len(groups))
	for i, g := range groups {
		go func() {
			defer func() { done <- struct{}{} }()
			t := &target{}
			errs[i] = b.execGroup(ctx, g.ms, g.slot, t)
		}()
	}
	for range groups {
		<-done
	}
	for _, m := range b.members {
		if m.err == nil {
			continue
		}
		var se *ServerError
		if errors.As(m.err, &se) && (se.Code == "MOVED" || se.Code == "ASK") {
			m.err = b.resendMember(ctx, m)
		}
	}
	return errors.Join(errs...)
}

// execGroup sends one Cluster group as a unit routed by slot. A group of
// reads only follows the read policy (and its replica route retries as a
// group); any write sends it to the primary.
func (b *Batch) execGroup(ctx context.Context, ms []*member, slot int, t *target) error {
	t.slot, t.pinned, t.read = slot, nil, b.c.cfg.readFrom != ReadPrimary
	for _, m := range ms {
		t.read = t.read && m.desc.Flags().Has(catalog.FlagReadOnly)
	}
	return b.execUnit(ctx, ms, t)
}

// resendMember sends one member again after its group's node redirected
// it, following the redirect like a single command (never retried: the
// member ran nowhere, but its group's unit was the retry unit).
func (b *Batch) resendMember(ctx context.Context, m *member) error {
	c := b.c
	var se *ServerError
	if errors.As(m.err, &se) && se.Code == "MOVED" {
		if rd, ok, err := route.ParseRedirect([]byte(se.Message)); ok && err == nil {
			_, _ = c.topo.Moved(rd.Slot, rd.Addr)
		}
	}
	f := c.frames.Get()
	f.Buf = append(f.Buf, m.buf...)
	f.Want = wire.WantValue
	s := spec{name: m.name, cat: Never, desc: m.desc}
	if err := c.execRouted(ctx, f, &s, nil); err != nil {
		return err
	}
	m.v = f.Value
	f.Release()
	return nil
}

// execClusterTx runs a Cluster transaction on the node of its one slot.
// A MOVED (the slot moved since the map was read) updates the map and the
// unit is sent again at once, without using retry budget; an ASK ends it.
func (b *Batch) execClusterTx(ctx context.Context) error {
	c := b.c
	slot := -1
	for _, m := range b.members {
		var small [16][]byte
		s, cross := keySlot(m.desc, frameArgs(m.buf, small[:0]))
		if cross || (s >= 0 && slot >= 0 && s != slot) {
			err := &RouteError{Command: "MULTI", Slot: slot, Err: errors.Join(ErrCrossSlot,
				errors.New("every key of a Cluster transaction must hash to one slot"))}
			b.fail(err)
			return err
		}
		if s >= 0 {
			slot = s
		}
	}
	for redirects := 0; ; redirects++ {
		for _, m := range b.members {
			m.done, m.err, m.v = false, nil, resp.Value{}
		}
		t := &target{}
		t.slot = slot
		err := b.execUnit(ctx, b.members, t)
		var se *ServerError
		if err == nil || !errors.As(err, &se) || (se.Code != "MOVED" && se.Code != "ASK") {
			return err
		}
		if se.Code == "ASK" || redirects >= c.cfg.maxRedirects {
			return err // a transaction never follows ASK
		}
		rd, ok, perr := route.ParseRedirect([]byte(se.Message))
		if !ok || perr != nil {
			return err
		}
		if _, err := c.topo.Moved(rd.Slot, rd.Addr); err != nil {
			return err
		}
	}
}

// execResolved runs f on a target already resolved (for a unit, from its
// members rather than from the frame), under the retry policy.
func (c *Client) execResolved(ctx context.Context, f *wire.Frame, s *spec, t *target) error {
	waitDL := c.waitDeadline(ctx)
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
