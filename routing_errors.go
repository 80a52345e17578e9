package respire

import (
	"errors"
	"strconv"
)

// Routing errors, matched with errors.Is inside a [*RouteError].
var (
	// ErrCrossSlot reports a multi-key command on a Cluster client whose
	// keys hash to different slots (and that the client does not split);
	// nothing was sent. It also matches [ErrInvalidArgument].
	ErrCrossSlot = errors.New("respire: keys hash to different cluster slots")
	// ErrRedirectLoop reports a command that was redirected (MOVED, ASK)
	// more than ClusterOptions.MaxRedirects times in one attempt.
	ErrRedirectLoop = errors.New("respire: too many cluster redirects")
	// ErrNoRoute reports a command for which the topology has no node: a
	// slot no node serves, or no replica under [ReadReplica].
	ErrNoRoute = errors.New("respire: no node to route the command to")
)

// RouteError reports a command that Sentinel or Cluster routing could not
// deliver: no node for its slot, keys in different slots, a malformed or
// endless redirect. Nothing the command asked for ran. The library does not
// change it once returned, so it is safe for concurrent use.
type RouteError struct {
	// Command is the name of the command that could not be routed.
	Command string
	// Slot is the keys' hash slot, or -1.
	Slot int
	// Err matches ErrCrossSlot, ErrRedirectLoop or ErrNoRoute, and
	// carries the detail.
	Err error
}

// Error names the command, its slot when it has one, and why it could not
// be routed.
func (e *RouteError) Error() string {
	s := "respire: " + e.Command
	if e.Slot >= 0 {
		s += " (slot " + strconv.Itoa(e.Slot) + ")"
	}
	return s + ": " + causeText(e.Err, "")
}

// Unwrap returns the cause.
func (e *RouteError) Unwrap() error { return e.Err }

// Is makes a cross-slot error match ErrInvalidArgument too.
func (e *RouteError) Is(target error) bool {
	return target == ErrInvalidArgument && errors.Is(e.Err, ErrCrossSlot)
}

// PartialError reports a multi-key command (MGET, MSET, DEL, EXISTS,
// UNLINK, TOUCH) or a command for every primary (FLUSHALL, DBSIZE, KEYS,
// SCRIPT LOAD, ...) that a Cluster client split into one command per slot
// or per node, some of which failed. The parts are independent commands:
// those that succeeded stay done (the split call is not atomic), and
// each part followed the retry policy on its own. The library does not
// change it once returned, so it is safe for concurrent use.
type PartialError struct {
	// Command is the name of the command that was split.
	Command string
	// Parts is how many commands the call was split into; Failed how
	// many of them failed.
	Parts, Failed int
	// Err is the first part's failure.
	Err error
	ran bool
}

// Error says how many of the command's parts failed and gives the first
// part's failure.
func (e *PartialError) Error() string {
	if e.Failed == e.Parts {
		return "respire: " + e.Command + ": all " + strconv.Itoa(e.Parts) + " parts failed: " + causeText(e.Err, e.Command)
	}
	return "respire: " + e.Command + ": " + strconv.Itoa(e.Failed) + " of " + strconv.Itoa(e.Parts) +
		" parts failed (the others ran): " + causeText(e.Err, e.Command)
}

// Unwrap returns the first part's failure.
func (e *PartialError) Unwrap() error { return e.Err }
