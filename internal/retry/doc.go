// Package retry is the decision engine and backoff calculator behind the
// client's command retry policy.
//
// The package is pure: it performs no I/O, reads no clock (callers pass the
// time in), starts no goroutines and does not allocate in [Policy.Decide],
// [Policy.Ceiling], [Policy.Delay] or [Fits].
//
// A caller compiles a [Settings] value, which mirrors the public
// respire.RetryPolicy field for field, into a validated [Policy] with
// [Compile]. After each failed attempt the caller describes the failure in an
// [Input] and asks [Policy.Decide] for a [Verdict]. Only [Retry] resends. A
// resend needs every one of these conditions:
//
//   - the policy is enabled ([Policy.Enabled]): more than one attempt and a
//     maximum category other than [catalog.Never];
//   - the command's category is retryable ([catalog.RetryCategory.Retryable]);
//   - the failure is selectable and selected in the policy's [Errors];
//   - the risk is accepted: the frame was definitely unwritten (connection
//     loss only), or the policy's maximum category permits the command's
//     category ([catalog.RetryCategory.Permits]);
//   - attempts remain.
//
// Before waiting, the caller draws a delay with [Policy.Delay] and checks it
// against the operation's deadline with [Fits]; the policy never starts a new
// timeout budget.
//
// Every type in this package is an immutable value, safe for concurrent use.
package retry
