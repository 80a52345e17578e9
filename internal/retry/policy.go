package retry

import (
	"time"

	"github.com/respire-go/respire/catalog"
)

// Settings are the uncompiled policy settings. They mirror the public
// respire.RetryPolicy field for field (same names, types and order), so the
// root package converts one into the other with a plain struct conversion.
//
// Each field's zero value means its documented default. The values the
// policy gives a meaning to that collide with Go's zero value are said with
// a sentinel: [NoBackoff], [NoJitter], [None] and [catalog.Never].
type Settings struct {
	// MaxAttempts is the number of sends allowed, including the first one,
	// from 1 through 100. 1 allows no retry. Defaults to 3.
	MaxAttempts int
	// MaxCommandRetryCategory is the riskiest command category that may be
	// resent after it may have run. [catalog.Never] disables retries
	// entirely. Undefined values are invalid. Defaults to [catalog.ReadOnly].
	MaxCommandRetryCategory catalog.RetryCategory
	// RetryableErrors selects the failures that are retried. [None] alone
	// selects nothing; [None] combined with other bits, and bits without a
	// name, are invalid. Defaults to [DefaultErrors].
	RetryableErrors Errors
	// InitialBackoff is the first retry's delay ceiling, at most 1 minute.
	// 0 means the default, 10ms; [NoBackoff] (any negative value) disables
	// delays.
	InitialBackoff time.Duration
	// MaxBackoff caps the delay ceiling. It must be at least the effective
	// InitialBackoff and at most 1 minute; negative values are invalid.
	// Defaults to 1s, so an InitialBackoff above 1s needs a MaxBackoff too.
	MaxBackoff time.Duration
	// Jitter is the randomized fraction of each delay ceiling, finite,
	// above 0 through 1: the delay is uniform in [ceiling*(1-Jitter),
	// ceiling]. 0 means the default, 1; a fraction of 0 (always the full
	// ceiling) is said with [NoJitter], exactly -1.
	Jitter float64
}

// Sentinels for the settings whose meaningful zero collides with Go's zero
// value.
const (
	// NoBackoff as [Settings.InitialBackoff] disables delays between
	// attempts. Any negative InitialBackoff means the same.
	NoBackoff time.Duration = -1
	// NoJitter as [Settings.Jitter] makes every delay its full ceiling.
	NoJitter = -1.0
)

// Defaults and bounds of the settings.
const (
	defaultMaxAttempts    = 3
	maxMaxAttempts        = 100
	defaultMaxCategory    = catalog.ReadOnly
	defaultInitialBackoff = 10 * time.Millisecond
	defaultMaxBackoff     = time.Second
	maxBackoffLimit       = time.Minute
	defaultJitter         = 1.0
)

// FieldError reports an invalid setting. It is safe for concurrent use.
type FieldError struct {
	// Field names the setting, such as "RetryPolicy.Jitter".
	Field string
	// Reason says what the setting must be.
	Reason string
}

// Error returns "<Field>: <Reason>".
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Policy is a compiled, validated retry policy with every default applied.
// The zero Policy is disabled and behaves exactly like no policy. A Policy
// is an immutable value, safe for concurrent use.
type Policy struct {
	maxAttempts int
	maxCategory catalog.RetryCategory
	retryable   Errors // never zero once compiled; None when empty
	initial     time.Duration
	max         time.Duration
	jitter      float64
}

// Compile validates s, applies its defaults and returns the policy. For
// the first invalid field, in declaration order, it returns a *[FieldError]
// naming it and the zero (disabled) Policy.
func Compile(s Settings) (Policy, error) {
	var p Policy

	switch {
	case s.MaxAttempts == 0:
		p.maxAttempts = defaultMaxAttempts
	case s.MaxAttempts >= 1 && s.MaxAttempts <= maxMaxAttempts:
		p.maxAttempts = s.MaxAttempts
	default:
		return Policy{}, fieldError("MaxAttempts", "must be from 1 through 100 (0 means the default, 3)")
	}

	switch {
	case s.MaxCommandRetryCategory == 0:
		p.maxCategory = defaultMaxCategory
	case s.MaxCommandRetryCategory.Valid():
		p.maxCategory = s.MaxCommandRetryCategory
	default:
		return Policy{}, fieldError("MaxCommandRetryCategory", "must be a defined category (0 means the default, ReadOnly)")
	}

	switch {
	case s.RetryableErrors == 0:
		p.retryable = DefaultErrors
	case s.RetryableErrors.valid():
		p.retryable = s.RetryableErrors
	default:
		return Policy{}, fieldError("RetryableErrors", "must combine only the named failures, or be None alone")
	}

	switch {
	case s.InitialBackoff == 0:
		p.initial = defaultInitialBackoff
	case s.InitialBackoff < 0:
		p.initial = 0
	case s.InitialBackoff <= maxBackoffLimit:
		p.initial = s.InitialBackoff
	default:
		return Policy{}, fieldError("InitialBackoff", "must be at most 1m (or NoBackoff)")
	}

	switch {
	case s.MaxBackoff == 0:
		p.max = defaultMaxBackoff
	case s.MaxBackoff > 0 && s.MaxBackoff <= maxBackoffLimit:
		p.max = s.MaxBackoff
	default:
		return Policy{}, fieldError("MaxBackoff", "must be from InitialBackoff through 1m (0 means the default, 1s)")
	}
	if p.max < p.initial {
		return Policy{}, fieldError("MaxBackoff", "must be at least InitialBackoff (0 means the default, 1s)")
	}

	switch j := s.Jitter; {
	case j == 0:
		p.jitter = defaultJitter
	case j == NoJitter:
		p.jitter = 0
	case j > 0 && j <= 1: // false for NaN; +Inf fails the bound
		p.jitter = j
	default:
		return Policy{}, fieldError("Jitter", "must be finite, from 0 through 1 (or NoJitter)")
	}

	return p, nil
}

func fieldError(field, reason string) error {
	return &FieldError{Field: "RetryPolicy." + field, Reason: reason}
}

// Enabled reports whether the policy can ever resend: it allows more than
// one attempt and its maximum category is not [catalog.Never]. A disabled
// policy takes the same dispatch path as no policy at all.
func (p Policy) Enabled() bool {
	return p.maxAttempts > 1 && p.maxCategory.Retryable()
}

// MaxAttempts returns the number of sends allowed, including the first.
// The zero Policy reports 1.
func (p Policy) MaxAttempts() int { return max(p.maxAttempts, 1) }

// MaxCategory returns the riskiest category that may be resent after
// possible execution. The zero Policy reports [catalog.Never].
func (p Policy) MaxCategory() catalog.RetryCategory {
	if p.maxCategory == 0 {
		return catalog.Never
	}
	return p.maxCategory
}

// Retryable returns the selected failures. It never returns zero: an empty
// selection, the zero Policy's included, reads [None].
func (p Policy) Retryable() Errors {
	if p.retryable&DefaultErrors == 0 {
		return None
	}
	return p.retryable
}

// InitialBackoff returns the first retry's delay ceiling; zero when delays
// are disabled.
func (p Policy) InitialBackoff() time.Duration { return p.initial }

// MaxBackoff returns the cap on the delay ceiling.
func (p Policy) MaxBackoff() time.Duration { return p.max }

// Jitter returns the randomized fraction of each delay ceiling, from 0
// (always the full ceiling) through 1.
func (p Policy) Jitter() float64 { return p.jitter }
