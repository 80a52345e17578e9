package respire

import (
	"errors"
	"strconv"
	"strings"

	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNil reports a missing value: the key does not exist, or the
	// server replied null.
	ErrNil = errors.New("respire: nil reply")
	// ErrClosed reports a call on (or interrupted by) a closed client.
	ErrClosed = errors.New("respire: client closed")
	// ErrConnectionLost is matched by every [*ConnError].
	ErrConnectionLost = errors.New("respire: connection lost")
	// ErrProtocol reports a malformed or oversized reply; the connection
	// was reset. It is never retried.
	ErrProtocol = errors.New("respire: protocol error")
	// ErrInvalidConfig is matched by every [*ConfigError].
	ErrInvalidConfig = errors.New("respire: invalid configuration")
	// ErrUnexpectedReply reports a reply whose type the call cannot convert.
	ErrUnexpectedReply = errors.New("respire: unexpected reply type")
	// ErrInvalidArgument reports an argument the client rejects before
	// sending anything.
	ErrInvalidArgument = errors.New("respire: invalid argument")
	// ErrHealthTimeout is the cause inside a [*ConnError] when the client
	// retired a silent connection: it owed replies, received nothing for
	// [Options.HealthTimeout], and a probe on a new connection got no
	// answer either; or the probe was answered but not the connection's
	// own idle PING, or its silence outlasted the limit of a shared
	// connection (see [Options.HealthTimeout]). A [Subscription] whose
	// server fell silent reports it too.
	ErrHealthTimeout = wire.ErrHealthTimeout
)

// ServerError is an error reply from the server, such as
// "LOADING Redis is loading the dataset in memory". The library does not
// change it once returned, so it is safe for concurrent use.
type ServerError struct {
	// Code is the reply's first word: "ERR", "LOADING", "READONLY", "WRONGTYPE"...
	Code string
	// Message is the whole reply text, code included.
	Message string
	// Command is the name of the command that got the reply.
	Command string
}

// Error names the command and gives the server's error text.
func (e *ServerError) Error() string {
	if e.Command == "" { // an error inside a reply, such as a script's nested error_reply
		return "respire: " + e.Message
	}
	return "respire: " + e.Command + ": " + e.Message
}

// Is reports whether target is a *ServerError with the same Code (and the
// same Command when target sets one), so that
// errors.Is(err, &respire.ServerError{Code: "LOADING"}) works.
func (e *ServerError) Is(target error) bool {
	t, ok := target.(*ServerError)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Command == "" || t.Command == e.Command)
}

// IsLoading reports whether the server was loading its dataset (LOADING).
func (e *ServerError) IsLoading() bool { return e.Code == "LOADING" }

// IsReadOnly reports whether a write reached a replica (READONLY).
func (e *ServerError) IsReadOnly() bool { return e.Code == "READONLY" }

// IsAuth reports whether the reply is an authentication or permission
// failure (NOAUTH, WRONGPASS, NOPERM).
func (e *ServerError) IsAuth() bool {
	return e.Code == "NOAUTH" || e.Code == "WRONGPASS" || e.Code == "NOPERM"
}

func newServerError(command string, text []byte) *ServerError {
	msg := string(text)
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	return &ServerError{Code: code, Message: msg, Command: command}
}

// ConnError reports a command that did not get its reply because the
// connection failed, could not be established, or was closed. It matches
// [ErrConnectionLost]. The library does not change it once returned, so it
// is safe for concurrent use.
type ConnError struct {
	// Command is the name of the command that failed.
	Command string
	// Unwritten reports the transport's fact that the command definitely
	// never reached the server. When false, the server may have run it.
	Unwritten bool
	// Err is the underlying cause.
	Err error
	// lost: the transport lost the connection or could not dial, the
	// failure a RetryPolicy selects with RetryOnConnectionLoss (closing,
	// protocol errors and rejected handshakes are not).
	lost bool
	// addr is the server a failed Connect could not connect to, when
	// known.
	addr string
}

// Error describes the connection failure and its cause: "could not
// connect" for [Connect] (Command "connect"), with the server's address
// when known; "not sent" for a command the client did not send because
// it was closed ([ErrClosed]) or could not connect (to the server named,
// when a new connection failed); "the server refused" and the command
// and reply of a handshake the server rejected (a [*ServerError]); for a
// failover group with no healthy member, only that; for a command sent
// before Close ended the wait for its reply, "client closed; the command
// may have been executed"; otherwise whether the connection was lost
// before or after the command was sent. The cause's own "respire: "
// prefix is not repeated.
func (e *ConnError) Error() string {
	s := "respire: " + e.Command + ": "
	refused := e.refusal()
	var se *ServerError
	switch {
	case e.Command == "connect" && e.Unwritten:
		s += "could not connect"
	case refused != nil:
		s += "not sent"
		if e.addr != "" {
			s += ": could not connect"
		}
	case e.Unwritten && (errors.Is(e.Err, ErrClosed) || errors.As(e.Err, &se)):
		s += "not sent"
	case errors.Is(e.Err, ErrClosed):
		// Close, not the transport, ended the wait for the reply.
		return s + causeText(e.Err, "") + "; the command may have been executed"
	case e.Unwritten && errors.Is(e.Err, ErrNoHealthyMember):
		return s + causeText(e.Err, "")
	case e.Unwritten && e.addr != "":
		s += "not sent: could not connect"
	case e.Unwritten:
		s += "connection lost before the command was sent"
	default:
		s += "connection lost; the command may have been executed"
	}
	if e.addr != "" && e.Unwritten {
		s += " to " + e.addr
	}
	switch {
	case refused != nil:
		s += ": the server refused " + refused.Command + ": " + refused.Message
	case e.Err != nil:
		s += ": " + causeText(e.Err, "")
	}
	return s
}

// refusal returns the server's reply that rejected a new connection's
// handshake (HELLO, AUTH...) and so kept the command from being sent, or
// nil.
func (e *ConnError) refusal() *ServerError {
	se, ok := e.Err.(*ServerError)
	if r, isRejection := e.Err.(*rejection); isRejection && e.addr != "" {
		se, ok = r.se, true
	}
	if !ok || se.Command == "" || !e.Unwritten {
		return nil
	}
	return se
}

// Addr returns the address of the server the connection could not be
// made to or was refused by, when known: for a failed [Connect] and for
// a command not sent because a new connection's dial or handshake
// failed; "" otherwise.
func (e *ConnError) Addr() string { return e.addr }

// closedWaiting is the failure of a call whose retry Close ended during
// its backoff: closed, a *ConnError matching ErrClosed, then last, the
// last attempt's failure, said as a [*ContextError] says its Last.
type closedWaiting struct {
	closed *ConnError
	last   error
}

// closedWhileWaiting is the failure of command's call whose retry Close
// ended during the backoff after last (nil: none): cause, matching
// ErrClosed, says what was closed; ran reports whether the call may have
// run.
func closedWhileWaiting(command string, cause error, ran bool, last error) error {
	closed := &ConnError{Command: command, Unwritten: !ran, Err: cause}
	if last == nil {
		return closed
	}
	return &closedWaiting{closed: closed, last: last}
}

func (e *closedWaiting) Error() string {
	s := "respire: " + e.closed.Command + ": " + causeText(e.closed.Err, "")
	if !e.closed.Unwritten {
		s += " (the command may have been executed)"
	}
	return s + " while waiting to retry after: " + causeText(e.last, e.closed.Command)
}

func (e *closedWaiting) Unwrap() []error { return []error{e.closed, e.last} }

// closedError is the cause, matching [ErrClosed], of a call refused or
// stopped because a part of the client was closed while the client was
// not (a Dedicated loan that ended, a closed Subscription); it says which.
type closedError string

func (e closedError) Error() string { return "respire: " + string(e) }

// Is matches [ErrClosed].
func (e closedError) Is(target error) bool { return target == ErrClosed }

// causedError is a command's failure that says what the library did
// (text) before giving its cause, err, which it wraps.
type causedError struct {
	command, text string
	err           error
}

func (e *causedError) Error() string {
	return "respire: " + e.command + ": " + e.text + ": " + causeText(e.err, e.command)
}

func (e *causedError) Unwrap() error { return e.err }

// causeText is err's text on one line, without the "respire: " prefix,
// nor the "command: " that follows it when command is not "", for an
// error whose text already says both before giving err's.
func causeText(err error, command string) string {
	s := strings.TrimPrefix(multierr.OneLine(err.Error()), "respire: ")
	if command != "" {
		s = strings.TrimPrefix(s, command+": ")
	}
	return s
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// protocolFailure is a malformed or oversized reply, or a redirect that
// cannot be used: it matches [ErrProtocol] and wraps err, what was found,
// and says both on one line ("respire: protocol error: " and err's text
// without its own "resp: protocol error: ").
type protocolFailure struct{ err error }

func protocolErr(err error) error { return &protocolFailure{err: err} }

func (e *protocolFailure) Error() string {
	return ErrProtocol.Error() + ": " + multierr.OneLine(strings.TrimPrefix(e.err.Error(), resp.ErrProtocol.Error()+": "))
}

func (e *protocolFailure) Unwrap() []error { return []error{ErrProtocol, e.err} }

// Is matches [ErrConnectionLost].
func (e *ConnError) Is(target error) bool { return target == ErrConnectionLost }

// ConfigError reports an invalid option. It matches [ErrInvalidConfig].
// When a server's error reply showed the option wrong (Sentinel.Addrs
// naming a server that is not a sentinel, a Cluster seed that is not in
// cluster mode), it also wraps that [*ServerError]. The library does not
// change it once returned, so it is safe for concurrent use.
type ConfigError struct {
	// Field names the option, such as "Options.DialTimeout" or
	// "RetryPolicy.Jitter".
	Field string
	// Reason says why the value was refused.
	Reason string
	cause  error
}

// Error names the invalid setting and why it was refused.
func (e *ConfigError) Error() string { return "respire: invalid " + e.Field + ": " + e.Reason }

// Is matches [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the server's error reply that showed the option wrong,
// or nil.
func (e *ConfigError) Unwrap() error { return e.cause }

// RetryError is the final error of a command that was sent more than once,
// or whose retry the caller's context or Close ended during a backoff
// (then possibly after one attempt), and of a [Client.Watch] that chose
// to rerun its callback after a failure (Command "WATCH", each run an
// attempt). It wraps the last failure. The library does not change it once
// returned, so it is safe for concurrent use.
type RetryError struct {
	// Command is the name of the command.
	Command string
	// Attempts is how many attempts were made: each one sent the command
	// or tried to get a connection to send it.
	Attempts int
	// Err is the last failure; when the context or Close ended a backoff,
	// the [*ContextError] or the [ErrClosed] error, wrapping the last
	// failure too.
	Err error
	// ran reports whether any attempt may have executed.
	ran bool
	// earlier reports whether an attempt before the last may have
	// executed (set by the command retry loop); unlike ran, an attempt
	// the server refused with LOADING, TRYAGAIN, MASTERDOWN or READONLY
	// does not count (read by the XADD fallback only).
	earlier bool
}

// Error names the command, the number of attempts and the last failure.
func (e *RetryError) Error() string {
	attempts := " attempts: "
	if e.Attempts == 1 {
		attempts = " attempt: "
	}
	return "respire: " + e.Command + ": failed after " + strconv.Itoa(e.Attempts) + attempts + causeText(e.Err, e.Command)
}

// Unwrap returns the last failure.
func (e *RetryError) Unwrap() error { return e.Err }

// connError converts a transport failure into the public error.
func connError(command string, e *wire.ConnError) error {
	switch e.Reason {
	case wire.Closed:
		return &ConnError{Command: command, Unwritten: e.Evidence == wire.Unwritten, Err: ErrClosed}
	case wire.Protocol:
		return &ConnError{Command: command, Unwritten: e.Evidence == wire.Unwritten, Err: protocolErr(e.Cause)}
	case wire.Handshake:
		var re *wire.ReplyError
		if errors.As(e.Cause, &re) {
			se := newServerError(re.Command, []byte(re.Text))
			return &ConnError{Command: command, Unwritten: true, Err: se, addr: e.Addr}
		}
	}
	ce := &ConnError{Command: command, Unwritten: e.Evidence == wire.Unwritten, Err: e.Cause, lost: classifyConn(e) == retry.LostConnection}
	if e.Reason == wire.DialFailed || e.Reason == wire.Handshake {
		ce.addr = e.Addr // a new connection could not be made
	}
	return ce
}

// MayHaveExecuted reports whether the command that returned err may have
// run on the server, counting every attempt of the call. It is the one
// question to ask before deciding to send a command again yourself:
//
//   - nil, [ErrNil] and replies the call could not convert: true (it ran);
//   - a [*RetryError]: whether any of its attempts may have run;
//   - a [*ContextError]: its Sent field;
//   - a [*ConnError]: whether it is not Unwritten;
//   - a [*PartialError]: whether any part ran or may have;
//   - a [*RouteError]: false, routing sent nothing that could run;
//   - a [*ServerError]: true, because the server received the command
//     (most error replies mean it had no effect, but a script or a
//     transaction may have written before its error);
//   - an invalid argument or configuration, and [ErrNotExecuted]: false,
//     nothing was sent;
//   - any other error: true, the safe answer.
func MayHaveExecuted(err error) bool {
	if err == nil {
		return true
	}
	var pe *PartialError
	if errors.As(err, &pe) {
		return pe.ran
	}
	var re *RetryError
	if errors.As(err, &re) {
		return re.ran // before RouteError: an earlier attempt may have run
	}
	var rte *RouteError
	if errors.As(err, &rte) {
		return false
	}
	var ce *ContextError
	if errors.As(err, &ce) {
		return ce.Sent
	}
	var ne *ConnError
	if errors.As(err, &ne) {
		return !ne.Unwritten
	}
	if errors.Is(err, ErrInvalidConfig) { // before ServerError: it may wrap one
		return false
	}
	var se *ServerError
	if errors.As(err, &se) {
		return true
	}
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrNotExecuted) {
		return false
	}
	return true
}
