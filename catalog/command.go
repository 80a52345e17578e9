package catalog

import (
	"slices"
	"strings"

	"github.com/respire-go/respire/internal/ascii"
)

// RetryCategory is the execution risk a caller accepts when a command is
// resent after it may already have run. Categories are ordered by increasing
// risk: [Always] < [Connection] < [ReadOnly] < [WriteChecked] <
// [WriteLastWins] < [WriteAccumulating] < [ServerAdmin]. [Never] and any
// undefined value never authorize a retry.
//
// The zero value is "no category": a command without one behaves as
// [Never], and a retry policy without one takes its documented default.
type RetryCategory uint8

// The retry categories, in increasing order of risk after [Never].
const (
	// Never marks a command that is never resent. As a policy's maximum it
	// turns retries off.
	Never RetryCategory = iota + 1
	// Always marks a command whose repetition has no effect at all (PING, ECHO).
	Always
	// Connection marks a read of connection or server metadata.
	Connection
	// ReadOnly marks a read: a repeat may return newer data, nothing changes.
	ReadOnly
	// WriteChecked marks a conditional write that re-checks its condition
	// (SET NX): a repeat may report "not set" for a write the first attempt made.
	WriteChecked
	// WriteLastWins marks an overwrite (SET, HSET): a repeat can destroy an
	// update another client made in between.
	WriteLastWins
	// WriteAccumulating marks a write whose effects add up or consume data
	// (INCR, LPUSH, XADD, LPOP): a repeat duplicates the effect.
	WriteAccumulating
	// ServerAdmin marks an administrative command (FLUSHALL, CONFIG SET).
	ServerAdmin

	maxCategory = ServerAdmin
)

var categoryNames = [...]string{
	0:                 "never",
	Never:             "never",
	Always:            "always",
	Connection:        "connection",
	ReadOnly:          "read_only",
	WriteChecked:      "write_checked",
	WriteLastWins:     "write_last_wins",
	WriteAccumulating: "write_accumulating",
	ServerAdmin:       "server_admin",
}

// Valid reports whether c is one of the defined categories, [Never]
// included. The zero value is not valid.
func (c RetryCategory) Valid() bool { return c >= Never && c <= maxCategory }

// Retryable reports whether c is a defined category other than [Never]:
// a command of this category can be resent at all.
func (c RetryCategory) Retryable() bool { return c > Never && c <= maxCategory }

// Permits reports whether a command of category cmd may be resent after
// possible execution when c is the caller's maximum accepted risk. Never,
// the zero value and undefined values on either side permit nothing.
func (c RetryCategory) Permits(cmd RetryCategory) bool {
	return c.Retryable() && cmd.Retryable() && cmd <= c
}

// String returns the category's metric attribute value, such as
// "read_only". The zero value reads "never"; undefined values "undefined".
func (c RetryCategory) String() string {
	if c <= maxCategory {
		return categoryNames[c]
	}
	return "undefined"
}

// Flag describes a command property that affects how the client dispatches it.
type Flag uint32

// Command flags.
const (
	// FlagReadOnly marks a command that does not modify data.
	FlagReadOnly Flag = 1 << iota
	// FlagWrite marks a command that may modify data.
	FlagWrite
	// FlagBlocking marks a command that may block the connection (BLPOP).
	FlagBlocking
	// FlagConnectionState marks a command that changes connection state
	// (HELLO, AUTH, SELECT, CLIENT SETNAME, RESET, QUIT).
	FlagConnectionState
	// FlagPubSub marks a publish/subscribe command.
	FlagPubSub
	// FlagScripting marks a script or function invocation (EVAL, FCALL).
	FlagScripting
	// FlagTransaction marks a transaction control command (MULTI, EXEC, WATCH).
	FlagTransaction
	// FlagAdmin marks an administrative command.
	FlagAdmin
	// FlagCursor marks a cursor command (SCAN family) whose first argument
	// after the key is a cursor; non-zero cursors are continuations.
	FlagCursor
	// FlagNoScript marks a command not allowed in scripts.
	FlagNoScript
	// FlagLoading marks a command allowed while the server loads its dataset.
	FlagLoading
	// FlagStale marks a command allowed on a replica with stale data.
	FlagStale
	// FlagFast marks a command with O(1) or O(log N) complexity.
	FlagFast
	// FlagMovableKeys marks a command whose keys are not all at the fixed
	// positions FirstKey, LastKey and KeyStep describe (the server's
	// movablekeys flag): finding them needs the arguments.
	FlagMovableKeys
)

// Has reports whether every bit of g is set in f.
func (f Flag) Has(g Flag) bool { return f&g == g }

// descriptor holds one command's facts. The generated table holds one per
// command and subcommand; nothing outside this package can reach it.
type descriptor struct {
	name, sub                  string
	group                      string
	arity                      int
	flags                      Flag
	firstKey, lastKey, keyStep int
	acl                        []string
	since, origin              string
	category                   RetryCategory
}

// Command describes one Redis command or subcommand: its name, its shape
// and its audited retry category. A Command is an immutable value: its
// facts are read through methods, and the only way to change what a
// descriptor says is to derive a copy ([Command.WithRetryCategory],
// [Command.WithFlags]), which changes nothing for anyone else. The
// generated descriptors are returned by the methods of this package's
// group variables (for example String.SET()). The zero Command describes
// no command. A Command is safe for concurrent use.
type Command struct {
	d        *descriptor
	cat      RetryCategory
	extra    Flag // flags declared by the caller with WithFlags
	declared bool // cat was declared by a caller
}

var noDescriptor descriptor

// ref returns the command of table entry i.
func ref(i int) Command { return Command{d: &table[i], cat: table[i].category} }

func (c Command) desc() *descriptor {
	if c.d == nil {
		return &noDescriptor
	}
	return c.d
}

// Name returns the command name in upper case, for example "GET" or "CONFIG".
func (c Command) Name() string { return c.desc().name }

// Subcommand returns the subcommand in upper case ("SET" for CONFIG SET), or "".
func (c Command) Subcommand() string { return c.desc().sub }

// Group returns the command group in the server's documentation ("string").
func (c Command) Group() string { return c.desc().group }

// Arity returns the server's arity: positive is exact, negative is a
// minimum, both counting the command name (and subcommand) as arguments.
func (c Command) Arity() int { return c.desc().arity }

// Flags returns the command's dispatch properties: the catalog's, plus any
// declared with [Command.WithFlags].
func (c Command) Flags() Flag { return c.desc().flags | c.extra }

// Keys returns the key positions in the full argument list (command name
// at 0): the first, the last (-1 means the last argument) and the step.
// A first position of 0 means the command takes no keys at fixed positions.
func (c Command) Keys() (first, last, step int) {
	d := c.desc()
	return d.firstKey, d.lastKey, d.keyStep
}

// ACLCategories returns the server's ACL categories, without the '@'. The
// slice is a new copy.
func (c Command) ACLCategories() []string { return slices.Clone(c.desc().acl) }

// Since returns the server version that introduced the command ("1.0.0").
func (c Command) Since() string { return c.desc().since }

// Origin names the server family Since refers to: "redis", or "valkey"
// for a command only Valkey provides. "" for a descriptor from [New].
func (c Command) Origin() string { return c.desc().origin }

// Category returns the retry category: the audited one, or the one
// declared with [Command.WithRetryCategory]. It holds for every argument
// list. The zero value means none (the command is never resent).
func (c Command) Category() RetryCategory { return c.cat }

// New returns a descriptor for a command the catalog does not describe,
// such as a module command. Its retry category is [Never] until declared
// with [Command.WithRetryCategory]: recognizing a name grants nothing.
// name may hold a subcommand after a space ("CLIENT INFO"). Its ASCII
// letters are upper-cased, and only those, as the server folds a name:
// a name with another letter (a dotless i, a long s) is sent as written.
// ASCII white space around the name and the subcommand is trimmed, and
// only that: a no-break space is part of the name, as on the server.
func New(name string) Command {
	name = ascii.TrimSpace(name)
	d := &descriptor{}
	if i := strings.IndexByte(name, ' '); i >= 0 {
		d.name, d.sub = ascii.Upper(name[:i]), ascii.Upper(ascii.TrimSpace(name[i+1:]))
	} else {
		d.name = ascii.Upper(name)
	}
	return Command{d: d}
}

// WithRetryCategory returns a copy of c whose retry category is cat. The
// declaration replaces the audited category and is not checked against the
// name or the arguments. An undefined cat makes the copy behave as [Never].
func (c Command) WithRetryCategory(cat RetryCategory) Command {
	if !cat.Valid() {
		cat = Never
	}
	c.cat = cat
	c.declared = true
	return c
}

// WithFlags returns a copy of c with the dispatch flags f added to the
// catalog's. Flags can only be added: declaring a module command
// [FlagBlocking] sends it on a connection of its own, declaring it
// [FlagConnectionState], [FlagPubSub] or [FlagTransaction] keeps it off
// the shared connection. Declared flags never grant a retry.
func (c Command) WithFlags(f Flag) Command {
	c.extra |= f
	return c
}

// Declared reports whether the category was declared by a caller with
// [Command.WithRetryCategory] rather than taken from the audit.
func (c Command) Declared() bool { return c.declared }

// FullName returns "NAME" or "NAME SUBCOMMAND".
func (c Command) FullName() string {
	d := c.desc()
	if d.sub == "" {
		return d.name
	}
	return d.name + " " + d.sub
}

// ArgPrefix returns how many leading arguments name the command: 1, or 2
// with a subcommand.
func (c Command) ArgPrefix() int {
	if c.desc().sub == "" {
		return 1
	}
	return 2
}
