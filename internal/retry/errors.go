package retry

import "strconv"

// Errors is a bit set of the failures a policy may select for retry.
//
// As a [Settings] field the zero value means [DefaultErrors]; [None] is the
// explicit empty selection. As an argument to [Failure.Selected] the value is
// a plain bit set, so both zero and [None] select nothing.
type Errors uint8

// The selectable failures.
const (
	// ConnectionLoss selects [LostConnection]: the connection failed before
	// the reply arrived, whether or not the frame was written.
	ConnectionLoss Errors = 1 << iota
	// Loading selects [LoadingReply], the server's LOADING error.
	Loading
	// TryAgain selects [TryAgainReply], the server's TRYAGAIN error.
	TryAgain
	// MasterDown selects [MasterDownReply], the server's MASTERDOWN error.
	MasterDown
	// ReadOnly selects [ReadOnlyReply], the server's READONLY error.
	ReadOnly

	// None is the explicit empty selection: no failure is retried. Go's zero
	// value means [DefaultErrors] instead. None may not be combined with
	// other bits.
	None Errors = 1 << 7

	// DefaultErrors is the selection used when the setting is zero: every
	// selectable failure.
	DefaultErrors = ConnectionLoss | Loading | TryAgain | MasterDown | ReadOnly
)

// errorNames names the bits of Errors in bit order; unnamed bits are empty.
var errorNames = [8]string{
	0: "ConnectionLoss",
	1: "Loading",
	2: "TryAgain",
	3: "MasterDown",
	4: "ReadOnly",
	7: "None",
}

// String returns the set's flags joined by "|", such as
// "ConnectionLoss|Loading". The zero value reads "Default" (its meaning as a
// setting); bits without a name read as hexadecimal, such as "0x20".
func (e Errors) String() string {
	if e == 0 {
		return "Default"
	}
	var b []byte
	for i := range 8 {
		bit := Errors(1) << i
		if e&bit == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, '|')
		}
		if name := errorNames[i]; name != "" {
			b = append(b, name...)
		} else {
			b = append(b, "0x"...)
			b = strconv.AppendUint(b, uint64(bit), 16)
		}
	}
	return string(b)
}

// valid reports whether e is a legal setting: zero, [None] alone, or a
// combination of the named selectable failures.
func (e Errors) valid() bool {
	return e == None || e&^DefaultErrors == 0
}

// Failure classifies why one attempt failed. The caller classifies
// transport failures itself and server error replies with [ClassifyCode].
type Failure uint8

// The failure classes.
const (
	// Unselectable is any server error reply not listed below, such as
	// BUSY, CLUSTERDOWN, ERR or NOSCRIPT. No policy can select it.
	Unselectable Failure = iota
	// Fatal is a failure that is never retried, whatever the policy:
	// authentication failures (NOAUTH, WRONGPASS, NOPERM), exhausted
	// connection recovery, protocol and configuration errors, the caller's
	// cancellation or deadline, and circuit-breaker rejections.
	Fatal
	// LostConnection is a connection loss; the frame may or may not have
	// been written (see [Input.Unwritten]). [ConnectionLoss] selects it.
	LostConnection
	// LoadingReply is a LOADING error reply. [Loading] selects it.
	LoadingReply
	// TryAgainReply is a TRYAGAIN error reply. [TryAgain] selects it.
	TryAgainReply
	// MasterDownReply is a MASTERDOWN error reply. [MasterDown] selects it.
	MasterDownReply
	// ReadOnlyReply is a READONLY error reply. [ReadOnly] selects it.
	ReadOnlyReply
)

// failureBits maps each failure to the bit that selects it; zero for
// failures no policy can select.
var failureBits = [...]Errors{
	Unselectable:    0,
	Fatal:           0,
	LostConnection:  ConnectionLoss,
	LoadingReply:    Loading,
	TryAgainReply:   TryAgain,
	MasterDownReply: MasterDown,
	ReadOnlyReply:   ReadOnly,
}

var failureNames = [...]string{
	Unselectable:    "Unselectable",
	Fatal:           "Fatal",
	LostConnection:  "LostConnection",
	LoadingReply:    "LoadingReply",
	TryAgainReply:   "TryAgainReply",
	MasterDownReply: "MasterDownReply",
	ReadOnlyReply:   "ReadOnlyReply",
}

// Selected reports whether set selects f. Only [LostConnection],
// [LoadingReply], [TryAgainReply], [MasterDownReply] and [ReadOnlyReply] can
// be selected; set is a plain bit set here, so zero selects nothing.
func (f Failure) Selected(set Errors) bool {
	return int(f) < len(failureBits) && failureBits[f]&set != 0
}

// String returns the failure's constant name, such as "LoadingReply", or
// "Failure(N)" for an undefined value.
func (f Failure) String() string {
	if int(f) < len(failureNames) {
		return failureNames[f]
	}
	return "Failure(" + strconv.Itoa(int(f)) + ")"
}

// ClassifyCode classifies a server error reply by its code, the reply's
// first word, matched exactly and case-sensitively: LOADING, TRYAGAIN,
// MASTERDOWN and READONLY are selectable; NOAUTH, WRONGPASS and NOPERM are
// [Fatal]; every other code, "loading" and "LOADINGX" included, is
// [Unselectable]. The rest of the reply's message never matters, so callers
// pass the code alone.
func ClassifyCode(code string) Failure {
	switch code {
	case "LOADING":
		return LoadingReply
	case "TRYAGAIN":
		return TryAgainReply
	case "MASTERDOWN":
		return MasterDownReply
	case "READONLY":
		return ReadOnlyReply
	case "NOAUTH", "WRONGPASS", "NOPERM":
		return Fatal
	}
	return Unselectable
}
