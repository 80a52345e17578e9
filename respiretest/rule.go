package respiretest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/resp"
)

// Errors reported by the kit. Each is matched with errors.Is.
var (
	// ErrInvalidRule is wrapped by every error [Proxy.AddRule] returns for a
	// rule it cannot apply (no or unknown action, a Command of more than
	// one word, a negative Nth, Times below [Always], an empty injected
	// error, a negative delay, or an injected reply that is not exactly one
	// RESP value).
	ErrInvalidRule = errors.New("respiretest: invalid rule")
	// ErrInvalidArgument is wrapped by the error of a call given an
	// argument it cannot use: [NewProxy] without a backend address or
	// dialer, [Proxy.RefuseDials] with a negative count.
	ErrInvalidArgument = errors.New("respiretest: invalid argument")
	// ErrClosed is returned by the operations of a closed [Proxy] or
	// [Server], and by a dial that was held when the proxy closed.
	ErrClosed = errors.New("respiretest: proxy closed")
	// ErrDialRefused is returned by [Proxy.Dial] for a dial refused by
	// [Proxy.RefuseDials].
	ErrDialRefused = errors.New("respiretest: dial refused")
	// ErrInjectedWrite is returned by the failing write of a [FaultConn].
	ErrInjectedWrite = errors.New("respiretest: injected write failure")
)

// Exact error texts of Redis 7.0.15, for [Inject]. Each is the reply
// without its leading '-'.
const (
	ErrLoading     = "LOADING Redis is loading the dataset in memory"
	ErrReadOnly    = "READONLY You can't write against a read only replica."
	ErrMasterDown  = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	ErrTryAgain    = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrClusterDown = "CLUSTERDOWN The cluster is down"
	ErrBusy        = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
)

// Moved returns the text of a MOVED redirect, such as
// "MOVED 12439 127.0.0.1:7302", for [Inject].
func Moved(slot int, addr string) string { return fmt.Sprintf("MOVED %d %s", slot, addr) }

// Ask returns the text of an ASK redirect, such as
// "ASK 15891 127.0.0.1:7300", for [Inject].
func Ask(slot int, addr string) string { return fmt.Sprintf("ASK %d %s", slot, addr) }

type actionKind uint8

const (
	actNone actionKind = iota
	actPass
	actDropBefore
	actDropAfter
	actLoseReply
	actInject
	actHold
	actDelay
	actMax // first value that is not an action
)

// Action is what a [Rule] does to the frames it applies to. The zero Action
// is no action: [Proxy.AddRule] rejects it. Build actions with the
// variables and functions below. An Action is an immutable value, safe for
// concurrent use.
type Action struct {
	kind  actionKind
	reply []byte // actInject: the encoded reply
	delay time.Duration
	bad   string // why the action is invalid, set by a constructor
}

var (
	// Pass forwards the frame unchanged. A Pass rule only counts the
	// frames and signals their arrival (see [RuleHandle.Received]); it
	// never stops another rule from acting on the same frame.
	Pass = Action{kind: actPass}
	// DropBeforeForward closes the client connection instead of
	// forwarding the frame: the server never sees it. Replies to earlier
	// frames are delivered first; the proxy reads nothing after the frame,
	// so later frames are neither received nor forwarded.
	DropBeforeForward = Action{kind: actDropBefore}
	// DropAfterForward forwards the frame, waits for the server's reply
	// (the proof that the command ran), then closes the client connection
	// without sending that reply. Replies to earlier frames are delivered
	// first; the proxy reads nothing after the frame, so later frames are
	// neither received nor forwarded.
	DropAfterForward = Action{kind: actDropAfter}
	// LoseReply is DropAfterForward except that the proxy goes on reading
	// and forwarding the frames that follow the frame until the connection
	// closes: the frames the client sent with it (in the same write, such
	// as the rest of a pipeline) also reach the server and run, and only
	// the replies from the frame's on are lost.
	LoseReply = Action{kind: actLoseReply}
	// Hold forwards the frame and keeps its reply, and therefore every
	// later reply on that connection, until [RuleHandle.Release].
	Hold = Action{kind: actHold}
)

// Inject answers the frame with the error text (without the leading '-',
// for example [ErrLoading] or "ERR boom") instead of forwarding it. CR and
// LF in text become spaces. An empty text is an invalid rule.
func Inject(text string) Action {
	if text == "" {
		return Action{kind: actInject, bad: "Inject needs a non-empty error text"}
	}
	return Action{kind: actInject, reply: resp.AppendError(nil, text)}
}

// Reply answers the frame with raw, which must be exactly one encoded RESP
// value (for example resp.AppendBulkString(nil, "x")), instead of
// forwarding it. The bytes are copied. Anything else (nothing, a
// truncated value, or more than one) is an invalid rule.
func Reply(raw []byte) Action {
	rd := resp.NewReader(strings.NewReader(string(raw)))
	if _, _, err := rd.ReadValueRaw(); err != nil {
		return Action{kind: actInject, bad: "Reply needs one RESP value: " + err.Error()}
	}
	if rd.Buffered() != 0 {
		return Action{kind: actInject, bad: "Reply needs exactly one RESP value"}
	}
	return Action{kind: actInject, reply: append([]byte(nil), raw...)}
}

// Delay forwards the frame and passes the reply on d after it arrived from
// the server. Later replies on the connection wait behind it. Inside a
// testing/synctest bubble d is virtual time. A negative d is an invalid rule.
func Delay(d time.Duration) Action {
	if d < 0 {
		return Action{kind: actDelay, bad: "Delay needs a duration >= 0"}
	}
	return Action{kind: actDelay, delay: d}
}

// String describes the action, such as "Inject(LOADING ...)".
func (a Action) String() string {
	switch a.kind {
	case actPass:
		return "Pass"
	case actDropBefore:
		return "DropBeforeForward"
	case actDropAfter:
		return "DropAfterForward"
	case actLoseReply:
		return "LoseReply"
	case actInject:
		return fmt.Sprintf("Reply(%q)", a.reply)
	case actHold:
		return "Hold"
	case actDelay:
		return fmt.Sprintf("Delay(%v)", a.delay)
	case actNone:
		return "no action"
	}
	return fmt.Sprintf("unknown action %d", a.kind)
}

// Always, as [Rule.Times], applies a rule to every matching frame from the
// Nth on.
const Always = -1

// Rule selects frames and says what to do with them.
//
// A frame matches when its command name equals Command (case-insensitive
// for a-z only, as Redis compares names; "" matches every command) and, if
// Arg is not "", its first argument equals Arg, compared as Redis compares
// that argument: case-insensitively for a-z only when Command has
// subcommands (CLIENT, CONFIG, OBJECT, SENTINEL and the other commands
// with subcommands in package catalog), so Arg "SETNAME" matches "client
// setname"; exactly otherwise, since a first argument is then a key or a
// value. The rule applies to the matching
// frames number Nth to Nth+Times-1, counted from 1 per rule. [Proxy.AddRule]
// copies it, so one Rule value may be added from several goroutines.
type Rule struct {
	// Command is the command name to match, such as "GET". "" matches any.
	// It is one word: a subcommand, such as CLIENT SETNAME, is matched
	// with Command "CLIENT" and Arg "SETNAME" (in any case). A Command
	// with a space or '|' is an invalid rule.
	Command string
	// Arg, if not "", must equal the frame's first argument: in any a-z
	// case when Command has subcommands, exactly otherwise (see [Rule]).
	Arg string
	// Nth is the first matching frame the rule applies to, counting from
	// 1. Defaults to 1. Negative is an invalid rule.
	Nth int
	// Times is how many matching frames, from the Nth on, the rule applies
	// to; [Always] means all of them. Defaults to 1. Below Always is an
	// invalid rule.
	Times int
	// Action is what happens to the frames the rule applies to.
	Action Action
	// OnReceive, if not nil, is called with a copy of the frame's
	// arguments (command name first) each time the rule applies, when the
	// frame has arrived and before the action takes effect. It runs on the
	// connection's reading goroutine: while it blocks, that connection
	// reads nothing more, and [Proxy.Close] does not return.
	OnReceive func(args []string)
}

func (r *Rule) validate() error {
	a := r.Action
	switch {
	case a.bad != "":
		return fmt.Errorf("%w: %s", ErrInvalidRule, a.bad)
	case a.kind == actNone:
		return fmt.Errorf("%w: no action (use respiretest.Pass to only count frames)", ErrInvalidRule)
	case a.kind >= actMax:
		return fmt.Errorf("%w: %v", ErrInvalidRule, a)
	case r.Nth < 0:
		return fmt.Errorf("%w: Nth %d is negative", ErrInvalidRule, r.Nth)
	case r.Times < Always:
		return fmt.Errorf("%w: Times %d is negative (use respiretest.Always)", ErrInvalidRule, r.Times)
	case strings.ContainsAny(r.Command, " \t\r\n|"):
		return fmt.Errorf("%w: Command %q is not one word (match a subcommand with Arg)", ErrInvalidRule, r.Command)
	}
	return nil
}

// RuleHandle is a rule added to a [Proxy]. Its methods are safe for
// concurrent use.
type RuleHandle struct {
	p       *Proxy
	rule    Rule
	command string // upper case
	foldArg bool   // the first argument is a subcommand: compare a-z case-insensitively
	first   int64  // first applying occurrence (1-based)
	last    int64  // last applying occurrence, or -1 for no end

	matched   atomic.Int64
	applied   atomic.Int64
	forwarded atomic.Int64
	removed   atomic.Bool

	receivedOnce sync.Once
	received     chan struct{}
	releaseOnce  sync.Once
	released     chan struct{}
}

// Matched returns how many frames have matched the rule's Command and Arg,
// whether or not the rule applied to them.
func (h *RuleHandle) Matched() int { return int(h.matched.Load()) }

// Applied returns how many frames the rule has applied its action to (for a
// frame that several rules apply to, see [Proxy.AddRule]).
func (h *RuleHandle) Applied() int { return int(h.applied.Load()) }

// Forwarded returns how many frames that matched the rule were completely
// written to the backend server.
func (h *RuleHandle) Forwarded() int { return int(h.forwarded.Load()) }

// Received returns a channel that is closed when the rule first applies to
// a frame: the frame has arrived at the proxy, every earlier frame of its
// connection has been written to the backend, and the frame's action is
// about to take effect. It stays open while the rule has not applied, so a
// test that might never send such a frame waits on it together with a
// timeout or the test's context.
func (h *RuleHandle) Received() <-chan struct{} { return h.received }

// Release lets every reply held by a [Hold] rule continue, and every later
// one pass without being held. Releasing twice, or releasing a rule that is
// not a Hold rule, does nothing.
func (h *RuleHandle) Release() { h.releaseOnce.Do(func() { close(h.released) }) }

// Remove stops the rule from matching later frames. Replies it holds stay
// held until [RuleHandle.Release] or [Proxy.Close]. Removing twice does
// nothing.
func (h *RuleHandle) Remove() {
	if h.removed.Swap(true) {
		return
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	rules := h.p.rules[:0:0]
	for _, r := range h.p.rules {
		if r != h {
			rules = append(rules, r)
		}
	}
	h.p.rules = rules
}

// String describes the rule.
func (h *RuleHandle) String() string {
	times := fmt.Sprint(h.last - h.first + 1)
	if h.last < 0 {
		times = "Always"
	}
	return fmt.Sprintf("rule{%s %q from #%d x%s: %v}", h.command, h.rule.Arg, h.first, times, h.rule.Action)
}

func newRuleHandle(p *Proxy, r Rule) *RuleHandle {
	h := &RuleHandle{
		p:        p,
		rule:     r,
		command:  ascii.Upper(r.Command),
		received: make(chan struct{}),
		released: make(chan struct{}),
	}
	h.foldArg = h.command != "" && (h.command == "SENTINEL" || catalog.HasSubcommands(h.command))
	nth, times := int64(r.Nth), int64(r.Times)
	if nth == 0 {
		nth = 1
	}
	if times == 0 {
		times = 1
	}
	h.first, h.last = nth, nth+times-1
	if times == Always {
		h.last = -1
	}
	return h
}

// matches reports whether the frame matches the rule's filter.
func (h *RuleHandle) matches(name string, args [][]byte) bool {
	if h.command != "" && h.command != name {
		return false
	}
	if h.rule.Arg == "" {
		return true
	}
	if len(args) < 2 {
		return false
	}
	if h.foldArg {
		return ascii.EqualFold(string(args[1]), h.rule.Arg)
	}
	return string(args[1]) == h.rule.Arg
}

// occurrence counts a matching frame and reports whether the rule applies
// to it.
func (h *RuleHandle) occurrence() bool {
	n := h.matched.Add(1)
	return n >= h.first && (h.last < 0 || n <= h.last)
}

func (h *RuleHandle) fire(args [][]byte) {
	h.applied.Add(1)
	if h.rule.OnReceive != nil {
		h.rule.OnReceive(copyArgs(args))
	}
	h.receivedOnce.Do(func() { close(h.received) })
}

func copyArgs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}
