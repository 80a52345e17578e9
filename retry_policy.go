package respire

import (
	"time"

	"github.com/respire-go/respire/internal/retry"
)

// RetryPolicy decides which failed commands are resent. Every field's zero
// value means its documented default; the values whose meaning collides
// with Go's zero value have named sentinels ([NoBackoff], [NoJitter],
// [RetryOnNone], and [Never] as the maximum category).
//
// A command is resent only when its failure is selected by RetryableErrors
// and either the transport proved that the frame was never written, or the
// command's category is at most MaxCommandRetryCategory. A watched
// transaction is never resent: [Client.Watch] reruns its whole callback
// instead, only after a run that applied nothing. A RetryPolicy is
// copied by [Connect] and [NewFailoverGroup]; changing it afterwards has
// no effect, and one value may serve concurrent calls while nobody changes
// it.
type RetryPolicy struct {
	// MaxAttempts is the number of sends allowed, including the first one,
	// from 1 through 100. 1 allows no retry. Defaults to 3.
	MaxAttempts int
	// MaxCommandRetryCategory is the riskiest category that may be resent
	// after the command may have run. [Never] disables retries entirely.
	// Defaults to [ReadOnly].
	MaxCommandRetryCategory RetryCategory
	// RetryableErrors selects the failures that are retried; only the five
	// RetryOn flags exist. [RetryOnNone] alone selects nothing. Defaults to
	// all five: connection loss, LOADING, TRYAGAIN, MASTERDOWN, READONLY.
	RetryableErrors RetryableErrors
	// InitialBackoff is the first retry's delay ceiling, at most 1 minute.
	// 0 means the default, 10 ms; no delay at all is said with [NoBackoff]
	// (any negative value).
	InitialBackoff time.Duration
	// MaxBackoff caps the ceiling, which doubles after each attempt. It
	// must be at least InitialBackoff and at most 1 minute. Defaults to 1 s.
	MaxBackoff time.Duration
	// Jitter is the randomized fraction of each delay, finite, above 0
	// through 1: the delay is uniform in [ceiling*(1-Jitter), ceiling].
	// 0 means the default, 1 (from zero to the ceiling); a fraction of 0,
	// always the full ceiling, is said with [NoJitter].
	Jitter float64
}

// RetryableErrors is a set of failures a [RetryPolicy] may retry. Its values
// are plain bit sets, safe for concurrent use.
type RetryableErrors = retry.Errors

// The retryable failures.
const (
	// RetryOnConnectionLoss selects a lost connection or a failed dial.
	RetryOnConnectionLoss = retry.ConnectionLoss
	// RetryOnLoading selects the LOADING reply.
	RetryOnLoading = retry.Loading
	// RetryOnTryAgain selects the TRYAGAIN reply.
	RetryOnTryAgain = retry.TryAgain
	// RetryOnMasterDown selects the MASTERDOWN reply.
	RetryOnMasterDown = retry.MasterDown
	// RetryOnReadOnly selects the READONLY reply.
	RetryOnReadOnly = retry.ReadOnly
	// RetryOnNone selects no failure (the zero value means the default set).
	RetryOnNone = retry.None
	// DefaultRetryableErrors is the default set: all five failures.
	DefaultRetryableErrors = retry.DefaultErrors
)

// Sentinels for retry settings whose meaningful zero is Go's zero value.
const (
	// NoBackoff as [RetryPolicy.InitialBackoff] resends without delay.
	NoBackoff = retry.NoBackoff
	// NoJitter as [RetryPolicy.Jitter] always waits the full ceiling.
	NoJitter = retry.NoJitter
)
