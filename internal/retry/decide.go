package retry

import (
	"strconv"

	"github.com/respire-go/respire/catalog"
)

// Input describes one failed attempt.
type Input struct {
	// Category is the command's retry category; for a batch or transaction
	// unit, the category of its riskiest member. Zero, [catalog.Never] and
	// undefined values never resend.
	Category catalog.RetryCategory
	// Failure classifies why the attempt failed.
	Failure Failure
	// Unwritten is the transport's fact that the frame definitely never
	// reached the server. It is honoured only for [LostConnection]: a
	// server reply proves the frame was written. Never derive it from an
	// error's text or from the errors it wraps; without write evidence (as
	// on Cluster routing) leave it false.
	Unwritten bool
	// Attempts counts the attempts made so far, including the one that just
	// failed. Values below 1 count as 1.
	Attempts int
}

// Verdict is the outcome of [Policy.Decide]: [Retry], or the reason to stop.
type Verdict uint8

// The verdicts, the stop reasons in the order [Policy.Decide] checks them.
const (
	// Retry means resend the command, after the backoff delay.
	Retry Verdict = iota
	// StopDisabled means the policy is not enabled ([Policy.Enabled]).
	StopDisabled
	// StopNever means the command's category is [catalog.Never], zero or
	// undefined.
	StopNever
	// StopFatal means the failure is never retried ([Fatal]).
	StopFatal
	// StopNotSelected means the policy does not select the failure;
	// [Unselectable] failures always end here.
	StopNotSelected
	// StopNotPermitted means the command may have run and its category is
	// riskier than the policy's maximum.
	StopNotPermitted
	// StopExhausted means the attempts reached the policy's MaxAttempts.
	StopExhausted
)

var verdictNames = [...]string{
	Retry:            "retry",
	StopDisabled:     "policy disabled",
	StopNever:        "command never retried",
	StopFatal:        "failure never retried",
	StopNotSelected:  "failure not selected",
	StopNotPermitted: "category not permitted after possible execution",
	StopExhausted:    "attempts exhausted",
}

// String returns a short description of the verdict, such as "retry" or
// "attempts exhausted"; "Verdict(N)" for an undefined value.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Decide returns whether the attempt described by in may be resent. It
// returns [Retry] only when every condition holds, and otherwise the first
// failed condition in this fixed order:
//
//  1. the policy is enabled, else [StopDisabled];
//  2. the command's category is retryable, else [StopNever];
//  3. the failure is not [Fatal], else [StopFatal];
//  4. the policy selects the failure, else [StopNotSelected];
//  5. the risk is accepted, else [StopNotPermitted]: a [LostConnection]
//     whose frame is definitely unwritten is accepted for any retryable
//     category; anything else may have run and needs
//     p.MaxCategory().Permits(in.Category);
//  6. attempts remain (in.Attempts < p.MaxAttempts()), else [StopExhausted].
//
// The order chooses the reason only; it never changes whether a retry
// happens. Decide does not allocate.
func (p Policy) Decide(in Input) Verdict {
	switch {
	case !p.Enabled():
		return StopDisabled
	case !in.Category.Retryable():
		return StopNever
	case in.Failure == Fatal:
		return StopFatal
	case !in.Failure.Selected(p.retryable):
		return StopNotSelected
	case !(in.Unwritten && in.Failure == LostConnection) && !p.maxCategory.Permits(in.Category):
		return StopNotPermitted
	case in.Attempts >= p.maxAttempts: // enabled means maxAttempts >= 2, so Attempts below 1 act as 1
		return StopExhausted
	}
	return Retry
}
