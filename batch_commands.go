package respire

import (
	"strconv"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Typed commands queued on a Batch or a transaction. Each carries the
// category its Client method has, validates its arguments as that method
// does (a rejected member makes Execute fail before any I/O), and its
// Future converts the member's reply as that method does.

// addFrame queues the command a Client frame builder encoded (copying it;
// the frame goes back to its pool), or rejects it with the builder's
// error.
func (b *Batch) addFrame(name string, f *wire.Frame, s *spec, err error) int {
	if err != nil {
		return b.reject(name, err)
	}
	defer f.Release()
	if b.executed.Load() {
		return b.reject(s.name, errInvalid(s.name, "added to a "+b.unitName()+" that was already executed"))
	}
	start := len(b.buf)
	b.buf = append(b.buf, f.Buf...)
	b.members = append(b.members, member{name: s.name, cat: s.cat, desc: s.desc, start: start, end: len(b.buf)})
	return len(b.members) - 1
}

func strOf(v resp.Value) (string, error) { return Reply{v: v}.String() }

// statusOf converts a status reply (OK, or PONG for PING), for Client
// methods, which read it with wire.WantNone, and for their members alike:
// any other reply, null included, is [ErrUnexpectedReply].
func statusOf(v resp.Value) (struct{}, error) {
	if v.Type != resp.SimpleString {
		return struct{}{}, unexpected("status", v)
	}
	return struct{}{}, nil
}

func intOf(v resp.Value) (int64, error) {
	if v.IsNull() {
		return 0, ErrNil
	}
	return convInt64(v)
}

// exactIntOf converts an integer reply as [Client.doInt] does, for the
// members whose Client method reads the reply with it (INCR, INCRBY, DEL,
// EXISTS, UNLINK, TOUCH): only an integer (or a RESP3 boolean); a number
// spelled as a string or a double is unexpected; null is ErrNil.
func exactIntOf(v resp.Value) (int64, error) {
	switch v.Type {
	case resp.Integer, resp.Boolean:
		return v.Int, nil
	case resp.Null:
		return 0, ErrNil
	}
	return 0, unexpected("integer", v)
}

func floatOf(v resp.Value) (float64, error) { return convFloat64(v) }

func strsOf(v resp.Value) ([]string, error) { return toStrings(v) }

func mapOf(v resp.Value) (map[string]string, error) { return toStringMap(v) }

func ttlOf(unit time.Duration) func(resp.Value) (time.Duration, error) {
	return func(v resp.Value) (time.Duration, error) {
		n, err := intOf(v)
		return ttlResult(n, unit), err
	}
}

// The converters with a parameter, made once.
var (
	ttlSeconds = ttlOf(time.Second)
	ttlMillis  = ttlOf(time.Millisecond)
)

// Get queues GET; see [Client.Get].
func (b *Batch) Get(key string) Future[string] {
	return future(b, b.add(specGET, key), strOf)
}

// Set queues SET key value; see [Client.Set].
func (b *Batch) Set(key, value string) Future[struct{}] {
	return future(b, b.add(specSETLastWins, key, value), statusOf)
}

// SetWithOptions queues SET with options; see [Client.SetWithOptions].
func (b *Batch) SetWithOptions(key, value string, opt SetOptions) Future[SetResult] {
	conv := func(v resp.Value) (SetResult, error) { return setResult(v, opt) }
	if i, orphan := b.orphan("SET"); orphan {
		return future(b, i, conv)
	}
	f, s, err := b.c.setFrame(key, value, opt)
	return future(b, b.addFrame("SET", f, s, err), conv)
}

// MSet queues MSET; see [Client.MSet]. On a Cluster client its keys must
// share a slot (a batch member is never split).
func (b *Batch) MSet(pairs ...string) Future[struct{}] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return future(b, b.reject("MSET", errInvalid("MSET", "want key-value pairs")), statusOf)
	}
	return future(b, b.add(specMSET, pairs...), statusOf)
}

// Incr queues INCR; see [Client.Incr].
func (b *Batch) Incr(key string) Future[int64] {
	return future(b, b.add(specINCR, key), exactIntOf)
}

// IncrBy queues INCRBY; see [Client.IncrBy].
func (b *Batch) IncrBy(key string, delta int64) Future[int64] {
	return future(b, b.add(specINCRBY, key, strconv.FormatInt(delta, 10)), exactIntOf)
}

// XAdd queues XADD; see [Client.XAdd]. A batch member never gets an
// automatic idempotency identity: its category is the one its options
// give (WriteAccumulating without Idempotency).
func (b *Batch) XAdd(key string, opt XAddOptions, pairs ...string) Future[string] {
	if i, orphan := b.orphan("XADD"); orphan {
		return future(b, i, strOf)
	}
	f, s, err := b.c.xaddFrame(key, opt, pairs)
	return future(b, b.addFrame("XADD", f, s, err), strOf)
}

// ScanFuture is the deferred result of [Batch.Scan]. Like [Future], read it
// after [Batch.Execute] returned; it is then safe for concurrent reads.
type ScanFuture struct{ f Future[ScanPage[string]] }

// Result returns the page, with the cursor of the page after it and the
// server that answered (give it to the next [Batch.Scan]).
func (s ScanFuture) Result() (ScanPage[string], error) {
	p, err := s.f.Result()
	if err == nil {
		p.Server = s.f.b.members[s.f.i].served
	}
	return p, err
}

// Err returns the page's error only.
func (s ScanFuture) Err() error { return s.f.Err() }

// Scan queues the SCAN page that follows prev (the zero ScanPage: the
// first page). A continuation (prev.Cursor not "0") goes to prev.Server,
// the server that holds its cursor, and like every continuation it is
// never resent: on a Cluster client its group is pinned there and not
// retried (a transaction runs there, and fails before any I/O when its
// keys are served elsewhere); on a Sentinel client the batch is pinned to
// prev.Server (the primary, or a replica that served it under a replica
// read policy), and fails before any I/O when that server is no longer
// the primary or a replica of the latest discovery, when another
// continuation of the batch names another server, or when that server is
// a replica and a member is not a read (the replica would refuse it). A first page goes
// where prev.Server says when set, else where the batch's keyless members
// go; its Server tells where the next page must go (on a Cluster client
// SCAN iterates one node: [Client.Scan] visits them all).
func (b *Batch) Scan(prev ScanPage[string], opts ScanOptions) ScanFuture {
	args, err := scanArgs("SCAN", "", opts, true)
	cursor := prev.Cursor
	if cursor == "" {
		cursor = "0"
	}
	switch {
	case err != nil:
	case b.c == nil:
		err = errOrphan("SCAN")
	case cursor != "0" && b.c.topo != nil && prev.Server == "":
		err = errInvalid("SCAN", "the cursor has no server")
	}
	if err != nil {
		return ScanFuture{future(b, b.reject("SCAN", err), scanPageOf)}
	}
	words := make([]any, 0, 1+len(args))
	words = append(words, cursor)
	for _, a := range args {
		words = append(words, a)
	}
	i := b.queue(cmdSCAN, words)
	if b.c.topo != nil && prev.Server != "" && !b.members[i].done {
		b.members[i].pin = prev.Server
	}
	return ScanFuture{future(b, i, scanPageOf)}
}

// cmdSCAN is the catalog's SCAN.
var cmdSCAN = catalog.Generic.SCAN()

// scanPageOf converts a SCAN reply into a page (its Server is the
// member's).
func scanPageOf(v resp.Value) (ScanPage[string], error) {
	next, items, err := splitScan(Reply{v: v})
	if err != nil {
		return ScanPage[string]{}, err
	}
	keys, err := scanItems(items)
	return ScanPage[string]{Items: keys, Cursor: next}, err
}

// Script queues a run of s with keys and args, sent as EVAL (EVAL_RO when
// read-only) with the source, so that it needs no fallback inside the
// unit. Its category is the script's: an undeclared script (Never) blocks
// the unit's retry. A nil s, or one not made by [NewScript], is an
// [ErrInvalidArgument].
func (b *Batch) Script(s *Script, keys []string, args ...string) Future[Reply] {
	if s == nil {
		return future(b, b.reject("EVAL", errInvalid("EVAL", "nil *Script")), replyOf)
	}
	if err := s.check(); err != nil {
		return future(b, b.reject("EVAL", err), replyOf)
	}
	if i, orphan := b.orphan("EVAL"); orphan {
		return future(b, i, replyOf)
	}
	cmd := catalog.Scripting.EVAL()
	if s.readOnly {
		cmd = catalog.Scripting.EVAL_RO()
	}
	sp := &spec{name: cmd.Name(), cat: s.cat, desc: cmd}
	b.raw = true // its Reply may alias the reply memory, as a Do member's
	return future(b, b.addFrame(sp.name, callFrame(b.c, cmd, s.src, keys, args), sp, nil), replyOf)
}

// Function queues a call of fn with keys and args (FCALL or FCALL_RO).
// Inside a unit a missing library is the member's error (no reload). Its
// category is the function's: an undeclared function (Never) blocks the
// unit's retry. A nil fn, or one not made by [NewFunction], is an
// [ErrInvalidArgument].
func (b *Batch) Function(fn *Function, keys []string, args ...string) Future[Reply] {
	if fn == nil {
		return future(b, b.reject("FCALL", errInvalid("FCALL", "nil *Function")), replyOf)
	}
	if err := fn.check(); err != nil {
		return future(b, b.reject("FCALL", err), replyOf)
	}
	if i, orphan := b.orphan("FCALL"); orphan {
		return future(b, i, replyOf)
	}
	cmd := fn.command()
	sp := &spec{name: cmd.Name(), cat: fn.cat, desc: cmd}
	b.raw = true // its Reply may alias the reply memory, as a Do member's
	return future(b, b.addFrame(sp.name, callFrame(b.c, cmd, fn.name, keys, args), sp, nil), replyOf)
}
