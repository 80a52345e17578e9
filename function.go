package respire

import (
	"context"
	"strings"
	"unicode"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
)

// FunctionOptions describe a Redis function (Redis 7+). A call only reads it
// and keeps no reference to it, so one value may serve concurrent calls
// while nobody changes it.
type FunctionOptions struct {
	// ReadOnly calls it with FCALL_RO: the function must be declared
	// no-writes, and under a replica read policy it may run on a replica.
	// It grants no retry: declare a category with
	// [Function.WithRetryCategory].
	ReadOnly bool
	// Source is the library's code ("#!lua name=<library>" ...), optional.
	// When set, a call answered "Function not found" loads the library
	// with FUNCTION LOAD REPLACE on the primary (on a Cluster client, the
	// primary of the keys' slot), even when a replica gave that answer,
	// and calls again on that primary, within the same attempt. Replicas
	// receive the library by replication. The answer is recognised by its
	// text: a function that writes and then returns an error of its own
	// reading "Function not found" runs again.
	Source string
}

// Function is a function of a server-side library, called with FCALL.
//
// Retries and their metrics follow the rules of [Script]: Never until
// declared with [Function.WithRetryCategory], read-only functions
// included; a declared function retries its complete exchange, the
// library reload included, and every failed attempt counts as possibly
// executed, one that failed before sending anything included. Raw FCALL
// through [Client.Do] is never retried.
//
// A Function is immutable and safe for concurrent use. Make one with
// [NewFunction]: a nil or zero Function fails every use with
// [ErrInvalidArgument] before any I/O.
type Function struct {
	library, name string
	opt           FunctionOptions
	cat           RetryCategory
	err           error
}

// NewFunction returns the function name of library. A name or library
// that is empty or holds anything but ASCII letters, digits and
// underscores (as Redis requires), or a Source that does not declare
// library, makes every use fail with [ErrInvalidArgument] before any I/O.
func NewFunction(library, name string, opt FunctionOptions) *Function {
	fn := &Function{library: library, name: name, opt: opt, cat: Never}
	switch {
	case !isFunctionName(name):
		fn.err = errInvalid("FCALL", "function name "+quote(name)+" must be non-empty letters, digits and underscores")
	case !isFunctionName(library):
		fn.err = errInvalid("FCALL", "library name "+quote(library)+" must be non-empty letters, digits and underscores")
	case opt.Source != "" && !declaresLibrary(opt.Source, library):
		fn.err = errInvalid("FUNCTION LOAD", "Source does not start with #!<engine> name="+library)
	}
	return fn
}

// isFunctionName reports whether s is a valid function or library name
// (Redis allows letters, digits and underscores).
func isFunctionName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// declaresLibrary reports whether the library source's shebang line names
// library.
func declaresLibrary(src, library string) bool {
	line, _, _ := strings.Cut(src, "\n")
	if !strings.HasPrefix(line, "#!") {
		return false
	}
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "name="); ok {
			return v == library
		}
	}
	return false
}

func quote(s string) string { return "\"" + s + "\"" }

// WithRetryCategory returns a copy of the function with its retry
// category declared. An undefined category makes every use fail with
// [ErrInvalidArgument].
func (fn *Function) WithRetryCategory(cat RetryCategory) *Function {
	if err := fn.check(); err != nil {
		return &Function{cat: cat, err: err}
	}
	d := *fn
	d.cat = cat
	d.err = checkCategory(d.command().Name(), cat)
	return &d
}

// check returns the error that every use of fn returns before any I/O: a
// construction error, or fn not made by [NewFunction] (nil, or the zero
// Function, which names no function).
func (fn *Function) check() error {
	switch {
	case fn == nil:
		return errInvalid("FCALL", "nil *Function")
	case fn.err != nil:
		return fn.err
	case fn.name == "":
		return errInvalid("FCALL", "the Function was not made by NewFunction")
	}
	return nil
}

// Category returns the function's retry category (Never unless declared).
func (fn *Function) Category() RetryCategory {
	if fn == nil {
		return Never
	}
	return fn.cat
}

func (fn *Function) command() Command {
	if fn.opt.ReadOnly {
		return catalog.Scripting.FCALL_RO()
	}
	return catalog.Scripting.FCALL()
}

// Call calls the function with keys and args and returns its reply. On a
// Cluster client every key must hash to one slot (checked before any I/O).
// A nil c is an [ErrInvalidArgument].
//
// Call may send a library load and a second call, so a failed attempt
// counts as possibly executed, also one that failed before sending: a
// [*ConnError] from Call is never Unwritten, and [MayHaveExecuted]
// reports true for it.
func (fn *Function) Call(ctx context.Context, c *Client, keys []string, args ...string) (Reply, error) {
	if err := fn.check(); err != nil {
		return Reply{}, err
	}
	cmd := fn.command()
	if c == nil {
		return Reply{}, errInvalid(cmd.Name(), "nil *Client")
	}
	x := exchange{c: c, s: spec{name: cmd.Name(), cat: fn.cat, desc: cmd}, first: fn.name,
		keys: keys, args: args, readOnly: fn.opt.ReadOnly, fn: fn}
	return x.run(ctx)
}

// reload is the recovery of x, an exchange of fn whose call found no
// function (fn has a Source). It loads the library on the primary: the
// node that lacks it may be a replica, which refuses FUNCTION LOAD. Then
// it calls again on that primary, which now holds the library (a replica
// may not have it yet).
func (fn *Function) reload(x *exchange, t *target) attemptResult {
	load := catalog.Scripting.FUNCTION_LOAD()
	var lt, ct *target
	if t != nil {
		lt = &target{slot: t.slot}
	}
	f := x.c.frames.Get()
	f.Buf = appendCommand(f.Buf, load, []string{"REPLACE", fn.opt.Source})
	f.Want = wire.WantValue
	r := x.step(&spec{name: load.FullName(), cat: fn.cat, desc: load}, f, lt)
	if r.err != nil {
		return r
	}
	if lt != nil {
		ct = &target{slot: t.slot, pinned: lt.served}
	}
	return followed(r, x.step(&x.s, x.main(), ct))
}

// Load sends FUNCTION LOAD REPLACE with the library's Source (on a
// Cluster client, to every primary). It fails with [ErrInvalidArgument]
// when the Function has no Source, or c is nil.
func (fn *Function) Load(ctx context.Context, c *Client) error {
	if err := fn.check(); err != nil {
		return err
	}
	switch {
	case fn.opt.Source == "":
		return errInvalid("FUNCTION LOAD", "the function has no Source")
	case c == nil:
		return errInvalid("FUNCTION LOAD", "nil *Client")
	}
	_, err := c.Do(ctx, catalog.Scripting.FUNCTION_LOAD(), "REPLACE", fn.opt.Source)
	return err
}
