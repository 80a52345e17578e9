package respire

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// RetryCategory is a command's execution risk when resent after it may have
// run; see [catalog.RetryCategory]. Its values are plain constants, safe for
// concurrent use.
type RetryCategory = catalog.RetryCategory

// The retry categories, in increasing order of risk after Never.
const (
	Never             = catalog.Never
	Always            = catalog.Always
	Connection        = catalog.Connection
	ReadOnly          = catalog.ReadOnly
	WriteChecked      = catalog.WriteChecked
	WriteLastWins     = catalog.WriteLastWins
	WriteAccumulating = catalog.WriteAccumulating
	ServerAdmin       = catalog.ServerAdmin
)

// Command describes a command for [Client.Do]: a generated descriptor from
// package catalog (audited category), or one made with [NewCommand]. A
// Command is an immutable value, safe for concurrent use.
type Command = catalog.Command

// NewCommand returns a descriptor for any command name, such as a module
// command "MYMODULE.GET" or "CLIENT INFO". It is never retried until its
// category is declared with WithRetryCategory: recognizing a name grants
// nothing, even "GET". ASCII white space around the name is trimmed; any
// other character, a no-break space (U+00A0) included, is part of the
// name, as the server reads it.
func NewCommand(name string) Command { return catalog.New(name) }

// Do sends cmd with args and returns the reply. Error replies are returned
// as [*ServerError]; a null reply is a Reply whose IsNull is true (not an
// error).
//
// An argument is a string or []byte (sent as is), any integer kind (in
// decimal), float32 or float64 (the shortest exact form; infinities as
// "inf" and "-inf"), bool ("1" or "0"), time.Duration (a whole number of
// milliseconds), an encoding.BinaryMarshaler (its bytes), a fmt.Stringer
// (its String), or a named type of one of those kinds. Any other type,
// nil or a nil pointer included, fails with [ErrInvalidArgument] naming
// the argument, before any I/O. Because Do accepts method-bearing types,
// a non-constant argument is boxed on the heap by the caller (16 bytes);
// constants and small integers are not, and the typed methods never box.
//
// Do sends on the connection shared by every goroutine, which carries only
// commands that get exactly one reply and leave the connection as they
// found it. It refuses, before any I/O and with an error matching
// [ErrInvalidArgument] that says where the command belongs, every command
// that would break that: the subscribe family, MONITOR, replication
// commands, SCRIPT DEBUG, HELLO, AUTH, SELECT, RESET, QUIT, READONLY/READWRITE,
// ASKING, CLIENT REPLY/TRACKING/CACHING/SETNAME/SETINFO/CAPA/NO-EVICT/NO-TOUCH, and
// MULTI/EXEC/DISCARD/WATCH/UNWATCH (see [RefusedCommands]). A command the
// catalog does not know is sent unless its Command declares one of those
// flags with [Command.WithFlags].
//
// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP, XREAD and XREADGROUP with BLOCK, and commands
// declared [catalog.FlagBlocking]) run on a connection of their own, as
// the typed [Client.BLPop] and its kin do: see [Client.BLPop] for how
// long such a call waits. WAIT and WAITAOF are refused: they count the
// writes of the connection they run on, which through Do would be such a
// connection of their own, with none of the caller's writes (they would
// return at once); write and wait on one [Client.Dedicated] connection
// ([Conn.Wait], [Conn.WaitAOF]) instead.
// SCRIPT KILL and FUNCTION KILL run on such a connection too (within
// [Options.CommandTimeout]): a server busy with a script reads nothing
// more from the connection that runs it, which may be the shared one. On a
// Cluster client they reach the node of keyless commands, not necessarily
// the busy one: send them to that node with a standalone client of it. On
// a Sentinel client they reach the primary: a read-only script or function
// that a replica runs under a replica read policy ([Options.ReadFrom]) is
// stopped the same way, with a standalone client of that replica.
//
// The retry policy applies with cmd's category, except for the commands
// the client never resends whatever their category: blocking commands,
// SCRIPT KILL and FUNCTION KILL,
// transactions, raw EVAL/FCALL (use a Script or Function), and cursor
// continuations (SCAN family with a non-zero cursor). On a Cluster client
// a continuation goes to its key's slot owner as the client knows it, and
// a MOVED or ASK reply is returned, not followed: the cursor is a position
// on the server that issued it. The iterators ([Client.HScanPages] and
// its kin) keep that server for every page; prefer them.
func (c *Client) Do(ctx context.Context, cmd Command, args ...any) (Reply, error) {
	if cmd.FullName() == "" {
		return Reply{}, errInvalid("Do", "empty command name")
	}
	f, err := c.anyFrame(cmd, args)
	if err != nil {
		return Reply{}, err
	}
	return c.doFrame(ctx, cmd, f)
}

// anyFrame encodes cmd with arguments of any supported type (see Do)
// into a frame that wants the whole reply.
func (c *Client) anyFrame(cmd Command, args []any) (*wire.Frame, error) {
	f := c.frames.Get()
	var err error
	if f.Buf, err = appendAnyCommand(f.Buf, cmd, args); err != nil {
		f.Release()
		return nil, err
	}
	f.Want = wire.WantValue
	return f, nil
}

// doRaw is Do for the client's own callers, with string arguments.
func (c *Client) doRaw(ctx context.Context, cmd Command, args []string) (Reply, error) {
	if cmd.FullName() == "" {
		return Reply{}, errInvalid("Do", "empty command name")
	}
	return c.doFrame(ctx, cmd, c.rawFrame(cmd, args))
}

// doFrame runs the encoded raw command f of cmd: dispatch (refusal, a
// dedicated connection for blocking commands, the category), then the
// exchange.
func (c *Client) doFrame(ctx context.Context, cmd Command, f *wire.Frame) (Reply, error) {
	var small [16][]byte
	words := argWords(cmd, f.Buf, small[:0])
	d := dispatchOf(cmd, words)
	if d.refused != "" {
		f.Release()
		return Reply{}, errInvalid(d.name, "refused on the shared connection: "+d.refused)
	}
	var block blockTime
	if d.blocking {
		var err error
		if block, err = blockTimeOf(d.name, d.serverArgs(cmd, words)); err != nil {
			f.Release()
			return Reply{}, err
		}
	}
	s := spec{name: d.name, cat: d.category, desc: d.desc}
	var err error
	if d.blocking || d.aside { // aside: no block time, the command timeout alone
		err = c.execBlocking(ctx, f, &s, block)
	} else {
		err = c.exec(ctx, f, &s)
	}
	if err != nil {
		return Reply{}, err
	}
	r := Reply{v: f.Value}
	f.Release()
	return r, nil
}

// doTarget is Do for a command that is not blocking on a topology, with
// the caller's target (a pinned node, and the node that served it).
func (c *Client) doTarget(ctx context.Context, cmd Command, args []string, t *target) (Reply, error) {
	f := c.rawFrame(cmd, args)
	var small [16][]byte
	d := dispatchOf(cmd, argWords(cmd, f.Buf, small[:0]))
	if d.refused != "" || d.blocking {
		f.Release()
		return Reply{}, errInvalid(d.name, "not a cursor command")
	}
	s := spec{name: d.name, cat: d.category, desc: d.desc}
	var err error
	if c.hooks != nil || c.cmdMetrics != nil {
		err = c.execTargetObserved(ctx, f, &s, t)
	} else {
		err = c.execTarget(ctx, f, &s, t)
	}
	if err != nil {
		return Reply{}, err
	}
	r := Reply{v: f.Value}
	f.Release()
	return r, nil
}

// execTargetObserved is execTarget through the process hooks and the
// command duration metric, as exec is: a page of a SCAN-family iterator
// on a topology is one command to them, as on a standalone client.
func (c *Client) execTargetObserved(ctx context.Context, f *wire.Frame, s *spec, t *target) error {
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var err error
	if c.hooks != nil {
		run := func(ctx context.Context) error { return c.execTarget(ctx, f, s, t) }
		err = c.processFrame(ctx, &CommandInfo{Name: s.name, Category: s.cat, c: c, f: f, s: s, run: run})
	} else {
		err = c.execTarget(ctx, f, s, t)
	}
	if c.cmdMetrics != nil {
		c.recordCommand(s, began, err)
	}
	return err
}

// rawFrame encodes cmd with args into a frame that wants the whole reply.
func (c *Client) rawFrame(cmd Command, args []string) *wire.Frame {
	f := c.frames.Get()
	f.Buf = appendCommand(f.Buf, cmd, args)
	f.Want = wire.WantValue
	return f
}

// appendCommand appends cmd with args, encoded, to buf.
func appendCommand(buf []byte, cmd Command, args []string) []byte {
	buf = appendCommandHead(buf, cmd, cmd.ArgPrefix()+len(args))
	for _, a := range args {
		buf = resp.AppendBulkString(buf, a)
	}
	return buf
}

// appendCommandHead appends the array header of an n-argument command
// and cmd's name words.
func appendCommandHead(buf []byte, cmd Command, n int) []byte {
	buf = resp.AppendArrayHeader(buf, n)
	buf = resp.AppendBulkString(buf, cmd.Name())
	if sub := cmd.Subcommand(); sub != "" {
		buf = resp.AppendBulkString(buf, sub)
	}
	return buf
}

// dispatch is where a raw command may travel and what it retries under.
type dispatch struct {
	name     string        // the command's name for errors, subcommand included
	category RetryCategory // its declared or audited category, unless its kind is never resent
	blocking bool          // it runs on a dedicated connection
	aside    bool          // it runs on a dedicated connection, without blocking (SCRIPT KILL)
	refused  string        // why the shared connection refuses it, or ""
	flags    catalog.Flag  // the catalog's flags and the declared ones
	known    bool          // the catalog describes the command
	desc     Command       // the catalog's descriptor when known, else cmd: key positions for routing
	nameArg  bool          // the caller's Subcommand is the first argument of a command without subcommands
}

// serverArgs returns a raw command's arguments (args: after its name
// words) as the server reads them: with the word the caller wrote into
// the name of a command without subcommands first.
func (d *dispatch) serverArgs(cmd Command, args [][]byte) []string {
	out := wordStrings(args)
	if d.nameArg {
		out = append([]string{cmd.Subcommand()}, out...)
	}
	return out
}

// dispatchOf classifies a raw command by its catalog facts and the flags
// its caller declared. Dispatch facts may deny a retry; they never grant
// one.
func dispatchOf(cmd Command, args [][]byte) dispatch {
	d := dispatch{name: cmd.FullName(), category: cmd.Category()}
	flags := cmd.Flags()
	var known Command
	var ok bool
	if sub := cmd.Subcommand(); sub == "" && len(args) > 0 && catalog.HasSubcommands(cmd.Name()) {
		// NewCommand("CLIENT") with args "SETNAME", "x": the subcommand
		// travels as the first argument, and it decides the dispatch kind.
		known, ok = catalog.Lookup(cmd.Name(), string(args[0]))
	} else {
		known, ok = catalog.Lookup(cmd.Name(), sub)
	}
	d.desc = cmd
	if ok {
		flags |= known.Flags()
		switch {
		case known.Subcommand() != "" || cmd.Subcommand() == "":
			d.name = known.FullName()
		case !catalog.HasSubcommands(known.Name()):
			// The caller wrote an argument into the name of a command
			// without subcommands ("HELLO 3", "XREAD BLOCK"): the server
			// reads that word as the first argument, and so do the rules.
			d.name, d.nameArg = known.FullName(), true
			args = append([][]byte{[]byte(cmd.Subcommand())}, args...)
		}
		// Otherwise the container stands for a subcommand the catalog
		// does not know ("CLIENT NOSUCHSUB"), whose name is the caller's.
		d.desc = known.WithFlags(cmd.Flags())
	}
	d.flags, d.known = flags, ok
	if why := refusal(d.name, flags); why != "" {
		d.refused, d.category = why, Never
		return d
	}
	if flags.Has(catalog.FlagBlocking) && (!ok || !blockingOnlyWithBlock(d.name) || hasBlockOption(wordStrings(args))) {
		d.blocking, d.category = true, Never
		return d
	}
	if flags.Has(catalog.FlagNoScript) && killsBusyScript(d.name) {
		d.aside = true
	}
	const never = catalog.FlagScripting | catalog.FlagTransaction
	if flags&never != 0 {
		d.category = Never
	}
	if flags.Has(catalog.FlagCursor) && isContinuation(d.name, args) {
		d.category = Never
	}
	return d
}

// killsBusyScript reports whether name stops the script or function
// that keeps the server busy. A busy server reads nothing more from the
// connection whose call runs the script until it ends, so on the shared
// connection, where the client's own busy call may be, the kill would
// wait behind it for good.
func killsBusyScript(name string) bool { return name == "SCRIPT KILL" || name == "FUNCTION KILL" }

func isPublish(name string) bool { return name == "PUBLISH" || name == "SPUBLISH" }

// cursorContinuation reports whether words, a command's (its name
// first), are a SCAN-family page with a non-zero cursor.
func cursorContinuation(desc Command, words [][]byte) bool {
	return desc.Flags().Has(catalog.FlagCursor) && len(words) > 0 && isContinuation(desc.FullName(), words[1:])
}

// isContinuation reports whether a SCAN-family call carries a non-zero
// cursor: its server-side position cannot be replayed elsewhere. name is
// upper-case (ASCII letters only, as the server folds them), as every
// command name the catalog makes.
func isContinuation(name string, args [][]byte) bool {
	i := 1 // HSCAN/SSCAN/ZSCAN key cursor
	if name == "SCAN" {
		i = 0
	}
	return len(args) <= i || len(bytes.TrimLeft(args[i], "0")) != 0
}

// Reply is an owned RESP reply with conversion helpers. The zero Reply is
// an absent value. A Reply never changes: its methods are safe for
// concurrent use. The [resp.Value] that Value returns shares the Reply's
// memory; do not modify it.
type Reply struct{ v resp.Value }

// Value returns the underlying RESP value.
func (r Reply) Value() resp.Value { return r.v }

// Format prints the reply's value as [Reply.Any] returns it, with the
// verb and flags given (a null reply is <nil>, an error reply its text),
// so that fmt.Println(reply) shows what the server replied. As with Any,
// the text may differ between RESP2 and RESP3 (a map, a double).
func (r Reply) Format(f fmt.State, verb rune) {
	v, err := r.Any()
	if err != nil {
		v = r.v.Text() // an error reply: its text
		if !r.v.IsError() {
			v = err // a reply Any cannot convert
		}
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// IsNull reports whether the reply is null.
func (r Reply) IsNull() bool { return r.v.Type == resp.Null || r.v.Type == 0 }

// String converts a string-like reply (simple, bulk, verbatim, big number,
// double, integer). Null returns [ErrNil]. An error element (a script's
// error_reply inside its array, read through [Reply.Elements]) is an
// error matching [ErrUnexpectedReply], as in [Reply.Strings].
func (r Reply) String() (string, error) {
	switch r.v.Type {
	case resp.Null, 0:
		return "", ErrNil
	case resp.Array, resp.Map, resp.Set, resp.Push, resp.Attribute, resp.SimpleError, resp.BulkError:
		return "", unexpected("string", r.v)
	}
	return string(r.v.TextBytes()), nil
}

// Int64 converts an integer reply, a string holding a decimal integer,
// or a double holding an integral value (a RESP3 double 1.5 fails, as
// its RESP2 text "1.5" does). Null returns [ErrNil].
func (r Reply) Int64() (int64, error) { return convInt64(r.v) }

// Float64 converts a double reply, or a string holding a number. Null
// returns [ErrNil].
func (r Reply) Float64() (float64, error) { return convFloat64(r.v) }

// Bool converts a boolean or integer reply (non-zero is true), or "OK".
// Null returns [ErrNil].
func (r Reply) Bool() (bool, error) {
	switch r.v.Type {
	case resp.Boolean, resp.Integer:
		return r.v.Int != 0, nil
	case resp.SimpleString:
		return string(r.v.Str) == "OK", nil
	case resp.Null, 0:
		return false, ErrNil
	}
	return false, unexpected("boolean", r.v)
}

// Strings converts an array or set of string-like elements; null elements
// become "". A map converts to its flat key-value list, as RESP2 sends it.
// An error element (a script's error_reply, a proxy's failure for one
// key) is an error matching [ErrUnexpectedReply] that names the element,
// as in [Reply.Int64s]. A null reply returns nil and no error.
func (r Reply) Strings() ([]string, error) {
	if r.v.Type == 0 { // the zero Reply is null
		return nil, nil
	}
	return toStrings(r.v)
}

// StringMap converts a map reply, a RESP2 flat array of pairs, or a
// RESP3 array of [name, value] pairs (ZRANGE ... WITHSCORES), so that
// both protocols give the same map; a null value becomes "". A null
// reply returns an empty map.
func (r Reply) StringMap() (map[string]string, error) { return toStringMap(r.v) }

// Elements returns the elements of an aggregate reply.
func (r Reply) Elements() []Reply {
	out := make([]Reply, len(r.v.Elems))
	for i, e := range r.v.Elems {
		out[i] = Reply{v: e}
	}
	return out
}
