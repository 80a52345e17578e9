package respire

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/respire-go/respire/catalog"
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
// For optimistic locking with WATCH use [Client.Watch]. The user's ACL
// must allow MULTI and EXEC: a server that refuses MULTI runs the members
// it accepts one by one as they arrive (the frame cannot wait for MULTI's
// answer), and the unit's error then says they ran outside a transaction.
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
// SCRIPT KILL or FUNCTION KILL, a transaction command, on a Cluster a
// command that must reach every
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
	case d.aside:
		why = "a server busy with a script reads nothing more from the connection that runs it, where the " + b.unitName() + " may travel; send it with Client.Do, which runs it on a connection of its own"
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
// (that node's count, as [Batch.DBSize]) run there. SCRIPT KILL and
// FUNCTION KILL fail with [ErrInvalidArgument] everywhere: the unit may
// travel on the connection whose script keeps the server busy, which the
// server no longer reads; send them with [Client.Do].
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
