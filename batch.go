package respire

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// ErrNotExecuted is the result of a batch or transaction member read
// before its unit was executed.
var ErrNotExecuted = errors.New("respire: the batch has not been executed")

// ErrBatchReset is the result of a Future whose batch was reset since.
var ErrBatchReset = errors.New("respire: the batch was reset since this member was queued")

// Batch queues commands and sends them together with [Batch.Execute]: on
// one connection, in one write where they fit, interleaved with no other
// caller's commands. A batch is not atomic: the server may run some
// members and not others (use [Client.NewTransaction] for MULTI/EXEC).
// A member's server error is that member's result, not the batch's.
//
// Make one with [Client.NewBatch] or [Client.NewTransaction]: a zero
// Batch has no client, and its Execute fails with [ErrInvalidArgument].
//
// Every queueing method returns a [Future] whose value is final once
// Execute returns. A Batch is executed once, by one goroutine, then
// dropped or emptied with [Batch.Reset] for the next use (which keeps its
// memory: a reused batch of typed members allocates nothing); it is not
// safe for concurrent use, but a second Execute, even a concurrent one,
// sends nothing and fails with [ErrInvalidArgument].
//
// Retries: the retry policy resends the whole batch, every member in queue
// order with its original bytes, when the failure is selected and every
// member's category is permitted (one member without a category, such as
// a raw command or a script, blocks the resend). Once any byte was sent
// the batch counts as possibly executed; a failure to get a connection
// counts as unwritten, and an unwritten batch is resent when no member's
// category is Never, whatever the policy's maximum. A member's LOADING, TRYAGAIN, MASTERDOWN or READONLY
// reply is a failure of the whole unit, resent when permitted. Only the
// final attempt's results are published: when that attempt got every
// member's reply (a selected error not resent), each member holds its own
// reply; otherwise (a lost connection, cancellation) every member fails
// with the unit's error.
// On a Cluster client the members are grouped by the node serving their
// keys, and each group is such a unit of its own.
type Batch struct {
	c        *Client
	tx       bool // a transaction: MULTI, the members, EXEC
	buf      []byte
	members  []member
	refused  int         // the members refused when added: never sent, not counted by Len
	err      error       // the first queueing error: Execute sends nothing
	executed atomic.Bool // Execute claims the batch: a second one, even concurrent, sends nothing
	watched  bool        // the queue of a Watch: Watch alone executes it, under WATCH
	gen      uint32      // counts Resets: a Future of an older use is stale
	raw      bool        // a Do, Script or Function member's Reply may alias arena: Reset drops it
	// mem is the reply memory of the last whole-unit execution, handed
	// to the next one.
	mem replyMem
	// The last Cluster execution's grouping (execGroups), reused with
	// each group's reply memory by the next one.
	groups  []batchGroup
	byNode  map[groupKey]int
	bySlot  map[int]int // each slot's group: a slot is picked once per Execute
	keyless []int
}

// replyMem is the memory a unit's replies were decoded into, handed from
// one execution to the next so that a reused batch decodes without
// allocating.
type replyMem struct {
	arena []byte
	vals  []resp.Value
}

// batchGroup is one Cluster group of a batch: the members one node serves.
type batchGroup struct {
	slot int         // a member's slot: the group's route
	pin  *route.Node // the server of a cursor continuation
	ms   []int
	err  error
	mem  replyMem
}

// groupKey identifies a Cluster group: its node, and whether a cursor
// continuation pinned it there.
type groupKey struct {
	node   *route.Node
	pinned bool
}

// member is one queued command; its encoding is buf[start:end].
type member struct {
	name       string
	cat        RetryCategory
	desc       Command
	start, end int
	pin        string // the server a cursor continuation must go to
	served     string // the server that answered the member's unit
	v          resp.Value
	err        error
	done       bool
}

// Future is the deferred result of a queued command. It is a small value:
// copy it freely. The zero Future reports [ErrNotExecuted]. Once its
// batch's Execute has returned, any goroutine may read it, as long as
// the batch is not reset or added to meanwhile.
type Future[T any] struct {
	b    *Batch
	i    int32
	gen  uint32
	conv func(resp.Value) (T, error)
}

func future[T any](b *Batch, i int, conv func(resp.Value) (T, error)) Future[T] {
	return Future[T]{b: b, i: int32(i), gen: b.gen, conv: conv}
}

// Result returns the member's value and error. Before the unit was
// executed it returns [ErrNotExecuted], after a [Batch.Reset]
// [ErrBatchReset].
func (f Future[T]) Result() (T, error) {
	var zero T
	switch {
	case f.b == nil:
		return zero, ErrNotExecuted
	case f.b.gen != f.gen:
		return zero, ErrBatchReset
	}
	m := &f.b.members[f.i]
	switch {
	case !m.done:
		return zero, ErrNotExecuted
	case m.err != nil:
		return zero, m.err
	}
	return f.conv(m.v)
}

// Err returns the member's error only.
func (f Future[T]) Err() error {
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

// Len returns the number of queued members. A member refused when it was
// added (an invalid argument, or added after Execute) is not queued and
// not counted: only its Future reports the refusal.
func (b *Batch) Len() int { return len(b.members) - b.refused }

// Reset empties the batch for reuse, keeping its memory. Futures of the
// previous use report [ErrBatchReset]; values they returned stay valid.
func (b *Batch) Reset() {
	clear(b.members)
	b.members, b.buf = b.members[:0], b.buf[:0]
	b.refused, b.err = 0, nil
	b.executed.Store(false)
	b.gen++
	if b.raw {
		// A Reply handed out may alias the reply memory.
		b.mem.arena = nil
		for i := range b.groups {
			b.groups[i].mem.arena = nil
		}
	}
	b.raw = false
}

func (b *Batch) unitName() string {
	if b.tx {
		return "transaction"
	}
	return "batch"
}

// reject queues a member that failed validation: Execute then sends
// nothing and returns err (a member added after Execute fails alone).
func (b *Batch) reject(name string, err error) int {
	if b.err == nil && !b.executed.Load() {
		b.err = err
	}
	b.members = append(b.members, member{name: name, err: err, done: true})
	b.refused++
	return len(b.members) - 1
}

// errOrphan is the error of a Batch no Client made (a zero Batch).
func errOrphan(name string) error {
	return errInvalid(name, "the Batch was not made by Client.NewBatch or Client.NewTransaction")
}

// orphan rejects a member named name when no Client made b, reporting
// the member's index and true; a queueing method that needs the Client
// calls it first.
func (b *Batch) orphan(name string) (int, bool) {
	if b.c != nil {
		return 0, false
	}
	return b.reject(name, errOrphan(name)), true
}

// add queues the command of s (with s's category, which its Client method
// has) with args, encoded into the batch's buffer.
func (b *Batch) add(s *spec, args ...string) int {
	return b.addKey(s, "", false, args)
}

// addKey is add with key (when hasKey) before args, so that callers
// need no joined slice.
func (b *Batch) addKey(s *spec, key string, hasKey bool, args []string) int {
	if b.executed.Load() {
		return b.reject(s.name, errInvalid(s.name, "added to a "+b.unitName()+" that was already executed"))
	}
	start := len(b.buf)
	n := s.desc.ArgPrefix() + len(args)
	if hasKey {
		n++
	}
	b.buf = appendCommandHead(b.buf, s.desc, n)
	if hasKey {
		b.buf = resp.AppendBulkString(b.buf, key)
	}
	for _, a := range args {
		b.buf = resp.AppendBulkString(b.buf, a)
	}
	b.members = append(b.members, member{name: s.name, cat: s.cat, desc: s.desc, start: start, end: len(b.buf)})
	return len(b.members) - 1
}

// queue adds a raw cmd with args. A refused command, a blocking command,
// a transaction command, on a Cluster a command that must reach every
// primary (wholeClusterOnly), or a member added after Execute fail the
// member and (but for the last) make Execute fail before any I/O.
func (b *Batch) queue(cmd Command, args []any) int {
	if b.executed.Load() {
		return b.reject(cmd.FullName(), errInvalid(cmd.FullName(), "added to a "+b.unitName()+" that was already executed"))
	}
	if cmd.FullName() == "" {
		return b.reject("", errInvalid("Do", "empty command name"))
	}
	start := len(b.buf)
	var err error
	if b.buf, err = appendAnyCommand(b.buf, cmd, args); err != nil {
		return b.reject(cmd.FullName(), err)
	}
	var small [16][]byte
	d := dispatchOf(cmd, argWords(cmd, b.buf[start:], small[:0]))
	var why string
	switch {
	case d.refused != "":
		why = "refused in a " + b.unitName() + ": " + d.refused
	case b.c == nil:
		b.buf = b.buf[:start]
		return b.reject(d.name, errOrphan(d.name))
	case d.blocking:
		why = "a blocking command would hold the connection of every other member; run it on its own"
	case b.c.isCluster() && wholeClusterOnly(d.name):
		why = "on a Cluster it must reach every primary, which a " + b.unitName() + " member cannot; send it with Client.Do"
	}
	if why != "" {
		b.buf = b.buf[:start]
		return b.reject(d.name, errInvalid(d.name, why))
	}
	b.members = append(b.members, member{name: d.name, cat: d.category, desc: d.desc, start: start, end: len(b.buf)})
	return len(b.members) - 1
}

// wholeClusterOnly reports whether the keyless command name must reach
// every primary of a Cluster: Client.Do sends it to each, and one node's
// run would leave the others unchanged (a flush, a configuration) or
// answer for that node alone (KEYS), silently.
func wholeClusterOnly(name string) bool {
	switch name {
	case "SCRIPT LOAD", "FUNCTION LOAD", "DBSIZE":
		return false // a loader for its group's node; DBSIZE as Batch.DBSize
	}
	return fanOutOf(name) != fanNone
}

func replyOf(v resp.Value) (Reply, error) { return Reply{v: v}, nil }

// Do queues cmd with args; its Future holds the reply like [Client.Do].
// On a Cluster client a keyless member runs on one node (docs/batches.md),
// so a command whose effect or answer must cover every primary, as
// Client.Do sends it (FLUSHALL, FLUSHDB, SCRIPT FLUSH, FUNCTION DELETE,
// FLUSH and RESTORE, CONFIG SET and RESETSTAT, KEYS, PUBSUB SHARDCHANNELS
// and SHARDNUMSUB), fails with [ErrInvalidArgument]. SCRIPT LOAD and
// FUNCTION LOAD (for a script or function of the same group) and DBSIZE
// (that node's count, as [Batch.DBSize]) run there.
func (b *Batch) Do(cmd Command, args ...any) Future[Reply] {
	b.raw = true
	return future(b, b.queue(cmd, args), replyOf)
}

// Execute sends the queued members and waits for their results. It
// returns nil when the unit ran (members may still hold their own server
// errors), or the unit's error. When the final attempt got every member's
// reply and one was a selected error that was not resent (LOADING under a
// policy that does not permit the unit), Execute returns that error and
// each member holds its own reply; otherwise every member holds the
// unit's error too. An empty batch does nothing. Executing a batch twice
// is an [ErrInvalidArgument].
func (b *Batch) Execute(ctx context.Context) error {
	unit := "batch"
	if b.tx {
		unit = "MULTI"
	}
	if b.watched {
		// Sent from the callback, MULTI ... EXEC would run on the shared
		// connection, where no key is watched.
		return errInvalid(unit, "the queue of a Watch is executed by Watch when the callback returns; do not call Execute on it")
	}
	if ctx == nil { // refused before the batch counts as executed: nothing is lost
		return errNilContext(unit)
	}
	if !b.executed.CompareAndSwap(false, true) {
		return errInvalid(unit, "executed already")
	}
	if b.c == nil {
		err := errOrphan(unit)
		b.fail(err)
		return err
	}
	if b.err != nil {
		b.fail(b.err)
		return b.err
	}
	if len(b.members) == 0 {
		return nil
	}
	if b.c.hooks != nil {
		return b.executeHooked(ctx, nil)
	}
	return b.execute(ctx)
}

// execute sends the validated, non-empty unit.
func (b *Batch) execute(ctx context.Context) error {
	var err error
	switch {
	case b.c.isCluster() && b.tx:
		err = b.execClusterTx(ctx)
	case b.c.isCluster():
		err = b.execGroups(ctx)
	default:
		t, perr := b.pinned()
		if perr != nil {
			b.fail(perr)
			return perr
		}
		err = b.execUnit(ctx, nil, t, &b.mem)
	}
	return err
}

// pinned returns the target of a Sentinel batch holding a cursor
// continuation: the server that issued the cursor, which must still be
// the primary or a replica of the latest discovery (nil: no
// continuation, or a standalone client). Continuations of two servers
// cannot share the unit, nor a replica's continuation a member that is
// not a read: each is an [ErrInvalidArgument].
func (b *Batch) pinned() (*target, error) {
	if b.c.topo == nil {
		return nil, nil
	}
	for i := range b.members {
		if pin := b.members[i].pin; pin != "" {
			for j := i + 1; j < len(b.members); j++ {
				if other := b.members[j].pin; other != "" && other != pin {
					return nil, errInvalid("SCAN", "continuations of two servers ("+pin+", "+other+") in one unit; a Sentinel batch runs on one server")
				}
			}
			n := b.c.topo.Primaries()[0]
			if n.Addr != pin {
				// A replica served the first page under a replica read
				// policy: a known one keeps its replica connection.
				r, err := b.c.topo.At(pin)
				if err != nil || !r.Replica {
					return nil, errInvalid("SCAN", "the cursor's server "+pin+" is no longer the primary or a replica")
				}
				for j := range b.members {
					// The replica would refuse it (READONLY).
					if m := &b.members[j]; !m.desc.Flags().Has(catalog.FlagReadOnly) {
						return nil, errInvalid("SCAN", "the cursor's server "+pin+" is a replica, where the "+b.unitName()+" runs; it would refuse "+m.name)
					}
				}
				n = r
			}
			return &target{slot: -1, pinned: n}, nil
		}
	}
	return nil, nil
}

// fail gives every member still pending err.
func (b *Batch) fail(err error) {
	for i := range b.members {
		if m := &b.members[i]; !m.done {
			m.err, m.done = err, true
		}
	}
}

// at returns the i-th member of a unit: of the whole batch when ms is nil,
// else of the Cluster group ms (indexes into members).
func (b *Batch) at(ms []int, i int) *member {
	if ms == nil {
		return &b.members[i]
	}
	return &b.members[ms[i]]
}

// size is the number of members of the unit ms (see at).
func (b *Batch) size(ms []int) int {
	if ms == nil {
		return len(b.members)
	}
	return len(ms)
}

// enc returns m's encoding.
func (b *Batch) enc(m *member) []byte { return b.buf[m.start:m.end] }

// unitSpec is the dispatch of a unit of members: the riskiest member's
// category, Never when one member has none (a raw command the catalog
// does not know has the category its caller declared, as on its own).
func (b *Batch) unitSpec(ms []int) *spec {
	cat := Always
	for i := range b.size(ms) {
		m := b.at(ms, i)
		if !m.cat.Retryable() {
			cat = Never
			break
		}
		cat = max(cat, m.cat)
	}
	kind := 0
	if b.tx {
		kind = 1
	}
	return &unitSpecs[kind][cat]
}

// unitSpecs are the dispatch of batches (0) and transactions (1) by
// their riskiest category: static, so that a unit's costs nothing.
var unitSpecs = func() (t [2][catalog.ServerAdmin + 1]spec) {
	for cat := range t[0] {
		t[0][cat] = spec{name: "batch", cat: RetryCategory(cat), unit: unitFailure}
		t[1][cat] = spec{name: "MULTI", cat: RetryCategory(cat), unit: txFailure, tx: true}
	}
	return t
}()

// multiCmd and execCmd frame a transaction.
var (
	multiCmd = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "MULTI")
	execCmd  = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "EXEC")
)

// frame returns a frame holding the unit ms (see at): MULTI, the members
// and EXEC for a transaction.
func (b *Batch) frame(ms []int) *wire.Frame {
	f := b.c.frames.Get()
	n := b.size(ms)
	if b.tx {
		f.Buf = append(f.Buf, multiCmd...)
		n += 2
	}
	if ms == nil {
		f.Buf = append(f.Buf, b.buf...)
	} else {
		for _, i := range ms {
			f.Buf = append(f.Buf, b.enc(&b.members[i])...)
		}
	}
	if b.tx {
		f.Buf = append(f.Buf, execCmd...)
	}
	f.Want, f.Replies = wire.WantValue, n
	return f
}

// execUnit sends the unit ms (see at; a transaction when b.tx) as one
// frame, retried as one unit, and publishes the final attempt's results.
// t, when set, routes it on a Cluster; nil sends it to the standalone
// server or Sentinel primary. The replies are decoded into mem, the
// unit's reply memory from the previous execution, which keeps them.
func (b *Batch) execUnit(ctx context.Context, ms []int, t *target, mem *replyMem) error {
	c := b.c
	f := b.frame(ms)
	f.Arena, f.Values = mem.arena[:0], mem.vals[:0]
	s := b.unitSpec(ms)
	var err error
	served := c.node
	switch {
	case t != nil:
		err = c.execResolved(ctx, f, s, t)
		served = t.served
	case c.topo != nil:
		var tt target
		err = c.execTarget(ctx, f, s, &tt)
		served = tt.served
	default:
		err = c.execFrame(ctx, f, s)
	}
	if err != nil {
		if replies, ok := finalReplies(err); ok {
			// The final attempt ran every member: each keeps its own
			// reply, and the selected one its error.
			b.publish(ms, replies, resp.Value{})
			b.servedBy(ms, served)
			return err
		}
		for i := range b.size(ms) {
			m := b.at(ms, i)
			m.err, m.done = err, true
		}
		return err
	}
	var one [1]resp.Value
	replies := repliesOf(f, &one)
	if b.tx {
		replies = f.Value.Elems // EXEC's array
	}
	b.publish(ms, replies, f.Value)
	b.servedBy(ms, served)
	mem.arena, mem.vals = f.Arena, f.Values
	f.Release()
	return nil
}

// servedBy records n as the server that answered the unit ms (see at).
func (b *Batch) servedBy(ms []int, n *route.Node) {
	if n != nil {
		for i := range b.size(ms) {
			b.at(ms, i).served = n.Addr
		}
	}
}

// publish gives the members of the unit ms (see at) their replies; whole
// is the unit's reply for the error when some are missing. When the
// count is not one per member (an EXEC array of another length), which
// reply is whose is unknown: every member fails.
func (b *Batch) publish(ms []int, replies []resp.Value, whole resp.Value) {
	if len(replies) != b.size(ms) {
		replies = nil
	}
	for i := range b.size(ms) {
		m := b.at(ms, i)
		m.done = true
		switch {
		case i >= len(replies):
			m.err = unexpected("a reply per member", whole)
		case replies[i].IsError():
			m.err = newServerError(m.name, replies[i].Str)
		default:
			m.v = replies[i]
		}
	}
}

// repliesOf returns the replies of a completed unit frame: Values, or
// the one Value of a one-member frame, held in the caller's one.
func repliesOf(f *wire.Frame, one *[1]resp.Value) []resp.Value {
	switch {
	case f.Replies > 1:
		return f.Values
	case f.IsErr: // the reader keeps a lone error reply's text, not a Value
		one[0] = resp.Value{Type: resp.SimpleError, Str: f.ErrReply}
	default:
		one[0] = f.Value
	}
	return one[:]
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
// reply that a policy could select fails the whole unit (a *unitError
// keeping every member's reply, for when the unit is not resent); other
// member errors are the members' own.
func unitFailure(f *wire.Frame) (retry.Failure, error) {
	var one [1]resp.Value
	replies := repliesOf(f, &one)
	for _, v := range replies {
		if v.IsError() {
			if fl := selected(v.Str); fl != retry.Unselectable && fl != retry.Fatal {
				return fl, newUnitError("batch", v.Str, replies)
			}
		}
	}
	return 0, nil
}

// unitError fails a unit every member of which got its reply, one of
// them an error a retry policy can select (LOADING, READONLY ...). The
// unit is resent when the policy permits it; when it is not, that
// attempt was the final one, and each member gets its own reply: the
// replies are owned copies, since the frame is released.
type unitError struct {
	*ServerError
	replies []resp.Value
}

func newUnitError(command string, text []byte, replies []resp.Value) *unitError {
	owned := make([]resp.Value, len(replies))
	for i, v := range replies {
		owned[i] = v.Clone()
	}
	return &unitError{ServerError: newServerError(command, text), replies: owned}
}

// Unwrap returns the selected reply's *ServerError.
func (e *unitError) Unwrap() error { return e.ServerError }

// finalReplies returns the members' replies when err, the final error of
// a unit, is the failure of its last attempt by a selected member reply
// (not resent after it); false when that attempt did not get every reply,
// or when a cancellation or Close during a backoff ended the unit, which
// fault every member.
func finalReplies(err error) ([]resp.Value, bool) {
	if re, ok := err.(*RetryError); ok {
		err = re.Err
	}
	if ue, ok := err.(*unitError); ok {
		return ue.replies, true
	}
	return nil, false
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
				name = queuedName(f.Buf, i) + " (transaction member " + strconv.Itoa(i) + ")"
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
				return fl, newUnitError("EXEC", v.Str, last.Elems) // EXEC ran: its array is the members'
			}
		}
	}
	f.Value = last
	return 0, nil
}

// queuedName returns the full name of the i-th command of a transaction
// frame buf (0: MULTI), for the error of a command the server refused
// to queue.
func queuedName(buf []byte, i int) string {
	off := 0
	for ; i > 0; i-- {
		_, n := nextCommand(buf[off:], nil)
		if n == 0 {
			return "?"
		}
		off += n
	}
	var small [16][]byte
	words := frameArgs(buf[off:], small[:0])
	if len(words) == 0 {
		return "?"
	}
	return dispatchOf(NewCommand(string(words[0])), words[1:]).name
}

// execGroups runs a Cluster batch: members grouped by the node that
// serves their keys (keyless ones with the first group), one unit per
// group, in parallel. A cursor continuation pins its group to the server
// of its cursor (and, as a Never member, makes that group unretryable). A
// member answered with MOVED or ASK (the map changed between grouping and
// sending) is sent again on its own within the same execution, and a
// failure of that resend other than a server's reply is returned with the
// groups' errors; other groups keep their results. The members of a slot
// that no node serves fail with ErrNoRoute unsent, once per slot in the
// returned error, and the other groups run. One deadline (ctx's,
// else CommandTimeout from the call) bounds the groups and the resends.
func (b *Batch) execGroups(ctx context.Context) error {
	c := b.c
	if b.byNode == nil {
		b.byNode, b.bySlot = map[groupKey]int{}, map[int]int{}
	}
	clear(b.byNode)
	clear(b.bySlot)
	b.groups, b.keyless = b.groups[:0], b.keyless[:0]
	var unserved []error // one per slot that no node serves
	for i := range b.members {
		m := &b.members[i]
		var small [16][]byte
		slot, cross := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
		if cross {
			err := &RouteError{Command: m.name, Slot: -1, Err: ErrCrossSlot}
			b.fail(err)
			return err
		}
		var n *route.Node
		var err error
		switch {
		case m.pin != "":
			n, err = c.topo.At(m.pin)
		case slot < 0:
			b.keyless = append(b.keyless, i)
			continue
		default:
			// The members of one slot go in one group, in queue order,
			// whatever map a refresh or another caller's MOVED installs
			// while the batch is grouped: two groups run in parallel.
			g, ok := b.bySlot[slot]
			if !ok {
				if n, err = c.topo.Pick(slot, false); err != nil {
					// No node serves the slot (a map with gaps): its
					// members fail unsent, as a group whose node cannot
					// be reached would, and the other groups run.
					g = -1
					b.bySlot[slot] = g
					unserved = append(unserved, routeErr(m.name, slot, err))
				}
			}
			switch {
			case g < 0:
				m.err, m.done = routeErr(m.name, slot, route.ErrNoRoute), true
				continue
			case ok:
				b.groups[g].ms = append(b.groups[g].ms, i)
				continue
			}
		}
		if err != nil {
			err = routeErr(m.name, slot, err)
			b.fail(err)
			return err
		}
		k := groupKey{n, m.pin != ""}
		g, ok := b.byNode[k]
		if !ok {
			g = len(b.groups)
			b.byNode[k] = g
			b.addGroup(slot, n, k.pinned)
		}
		b.groups[g].ms = append(b.groups[g].ms, i)
		if m.pin == "" {
			b.bySlot[slot] = g
		}
	}
	first := 0
	for first < len(b.groups) && b.groups[first].pin != nil {
		first++
	}
	if first == len(b.groups) {
		b.addGroup(-1, nil, false)
	}
	if len(b.keyless) > 0 {
		// In queue order among the group's members, as on one server.
		g := &b.groups[first]
		g.ms = append(g.ms, b.keyless...)
		slices.Sort(g.ms)
	}
	// One deadline bounds the groups and the resends of redirected
	// members: each group's CommandTimeout starts now, and so does the
	// resends' (read before any I/O; a context is built only when a
	// member needs a resend).
	waitDL := c.waitDeadline(ctx)
	b.runGroups(ctx)
	errs := unserved
	for i := range b.groups {
		if err := b.groups[i].err; err != nil {
			errs = append(errs, err)
		}
	}
	for i := range b.members {
		m := &b.members[i]
		if m.err == nil {
			continue
		}
		var se *ServerError
		if errors.As(m.err, &se) && se.Code == "CLUSTERDOWN" {
			// As for a command (attemptRouted): the node's map may no
			// longer give it the slot. Requests are coalesced.
			_ = c.topo.Refresh(ctx, false)
		}
		if se != nil && (se.Code == "MOVED" || se.Code == "ASK") && m.pin == "" && !b.continuation(m) && !b.ranRedirect(m, se) {
			if !waitDL.IsZero() {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, waitDL)
				defer cancel()
				waitDL = time.Time{} // ctx carries it now
			}
			// A server's reply to the resend is the member's own; any
			// other failure (the context, the connection, a redirect
			// loop) is the batch's too: it did not run every member.
			if m.err = b.resendMember(ctx, m); m.err != nil && !errors.As(m.err, &se) {
				errs = append(errs, m.err)
			}
		}
	}
	return errors.Join(errs...)
}

// addGroup appends a group routed by slot (or pinned to n), reusing the
// member list and reply memory of a group of an earlier execution.
func (b *Batch) addGroup(slot int, n *route.Node, pinned bool) {
	if len(b.groups) == cap(b.groups) {
		b.groups = append(b.groups, batchGroup{})
	} else {
		b.groups = b.groups[:len(b.groups)+1]
	}
	g := &b.groups[len(b.groups)-1]
	g.slot, g.pin, g.ms, g.err = slot, nil, g.ms[:0], nil
	if pinned {
		g.pin = n
	}
}

// runGroups sends every non-empty group as its own unit, in parallel: one
// on the calling goroutine, each other one on a goroutine of its own.
func (b *Batch) runGroups(ctx context.Context) {
	var first *batchGroup
	more := false
	for i := range b.groups {
		switch g := &b.groups[i]; {
		case len(g.ms) == 0:
		case first == nil:
			first = g
		default:
			more = true
		}
	}
	if more {
		b.runOthersAside(ctx, first)
	} else if first != nil {
		b.runGroup(ctx, first)
	}
}

// runOthersAside runs first on the calling goroutine and every other
// non-empty group on a goroutine of its own, and waits for them. It is
// apart from runGroups so that a batch of one group, the common case,
// builds no closure and allocates nothing.
func (b *Batch) runOthersAside(ctx context.Context, first *batchGroup) {
	var wg sync.WaitGroup
	for i := range b.groups {
		if g := &b.groups[i]; g != first && len(g.ms) > 0 {
			wg.Go(func() { b.runGroup(ctx, g) })
		}
	}
	b.runGroup(ctx, first)
	wg.Wait()
}

// runGroup sends g as one unit routed by its slot (or pin).
func (b *Batch) runGroup(ctx context.Context, g *batchGroup) {
	var t target
	g.err = b.execGroup(ctx, g.ms, g.slot, g.pin, &t, &g.mem)
}

// execGroup sends one Cluster group as a unit routed by slot (or pinned).
// A group of reads only follows the read policy (and its replica route
// retries as a group); any write sends it to the primary.
func (b *Batch) execGroup(ctx context.Context, ms []int, slot int, pin *route.Node, t *target, mem *replyMem) error {
	t.slot, t.pinned, t.read = slot, pin, b.c.cfg.readFrom != ReadPrimary && pin == nil
	for _, i := range ms {
		t.read = t.read && b.members[i].desc.Flags().Has(catalog.FlagReadOnly)
	}
	return b.execUnit(ctx, ms, t, mem)
}

// continuation reports whether m is a raw cursor continuation, whose
// cursor is a position on the server that issued it: a redirect is its
// reply, never followed.
func (b *Batch) continuation(m *member) bool {
	var small [16][]byte
	return cursorContinuation(m.desc, frameArgs(b.enc(m), small[:0]))
}

// ranRedirect reports whether m's redirect reply se is its own error
// reply, the error of a script or function that ran ([ranRedirect]).
func (b *Batch) ranRedirect(m *member, se *ServerError) bool {
	rd, ok, err := route.ParseRedirect([]byte(se.Message))
	if !ok || err != nil {
		return false
	}
	var small [16][]byte
	slot, _ := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
	return ranRedirect(m.desc, slot, rd)
}

// resendMember sends one member again after its group's node redirected
// it, following the redirect like a single command (never retried: the
// member ran nowhere, but its group's unit was the retry unit).
func (b *Batch) resendMember(ctx context.Context, m *member) error {
	c := b.c
	var se *ServerError
	if errors.As(m.err, &se) && se.Code == "MOVED" {
		if rd, ok, err := route.ParseRedirect([]byte(se.Message)); ok && err == nil {
			_, _ = c.topo.Moved(rd.Slot, redirectAddr(rd.Addr, m.served))
		}
	}
	f := c.frames.Get()
	f.Buf = append(f.Buf, b.enc(m)...)
	f.Want = wire.WantValue
	s := spec{name: m.name, cat: Never, desc: m.desc}
	if err := c.execRouted(ctx, f, &s, nil); err != nil {
		return err
	}
	m.v = f.Value
	f.Release()
	return nil
}

// txSlot returns the one slot of a Cluster transaction's keys (-1: no
// keys), which must be slot when it is not -1 (the slot of a Watch's
// keys). Keys in two slots fail every member with a [RouteError]
// matching [ErrCrossSlot], before anything is sent.
func (b *Batch) txSlot(slot int) (int, error) {
	for i := range b.members {
		m := &b.members[i]
		var small [16][]byte
		s, cross := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
		if cross || (s >= 0 && slot >= 0 && s != slot) {
			err := &RouteError{Command: "MULTI", Slot: slot, Err: errors.Join(ErrCrossSlot,
				errors.New("every key of a Cluster transaction, watched keys included, must hash to one slot"))}
			b.fail(err)
			return slot, err
		}
		if s >= 0 {
			slot = s
		}
	}
	return slot, nil
}

// txPin returns the server of a Cluster transaction's members that name
// one (a SCAN page: its cursor's server), or nil. Members naming two
// servers, or keys (of slot) that another node serves, are an
// [ErrInvalidArgument]: one transaction runs on one node.
func (b *Batch) txPin(slot int) (*route.Node, error) {
	var pin string
	for i := range b.members {
		switch p := b.members[i].pin; {
		case p == "":
		case pin != "" && p != pin:
			return nil, errInvalid("SCAN", "pages of two servers ("+pin+", "+p+") in one transaction")
		default:
			pin = p
		}
	}
	if pin == "" {
		return nil, nil
	}
	n, err := b.c.topo.At(pin)
	if err != nil {
		return nil, routeErr("SCAN", slot, err)
	}
	if slot >= 0 {
		owner, err := b.c.topo.Pick(slot, false)
		if err != nil {
			return nil, routeErr("MULTI", slot, err)
		}
		if owner.Addr != n.Addr {
			return nil, errInvalid("MULTI", "the transaction's keys are served by "+owner.Addr+", its SCAN cursor by "+pin)
		}
	}
	return n, nil
}

// execClusterTx runs a Cluster transaction on the node of its one slot
// (or, holding a SCAN page that names its server, on that server).
// A MOVED (the slot moved since the map was read) updates the map and the
// unit is sent again within the same attempt, without using retry
// budget, up to MaxRedirects times (then [ErrRedirectLoop], as for a
// single command); an ASK ends it. One deadline (ctx's, else
// CommandTimeout from now) bounds the unit, its redirects and its
// retries.
func (b *Batch) execClusterTx(ctx context.Context) error {
	slot, err := b.txSlot(-1)
	if err != nil {
		return err
	}
	pin, err := b.txPin(slot)
	if err != nil {
		b.fail(err)
		return err
	}
	t := target{slot: slot, pinned: pin}
	return b.execUnit(ctx, nil, &t, &b.mem)
}

// clear makes every member pending again, for a resend of the whole unit.
func (b *Batch) clear() {
	for i := range b.members {
		m := &b.members[i]
		m.done, m.err, m.v = false, nil, resp.Value{}
	}
}

// refail replaces the results of every member with err, and returns it.
func (b *Batch) refail(err error) error {
	b.clear()
	b.fail(err)
	return err
}
