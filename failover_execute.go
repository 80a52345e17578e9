package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/respire-go/respire/internal/retry"
)

// errGroupClosed is the cause of the calls of a closed FailoverGroup.
var errGroupClosed error = closedError("the group is closed")

// pick returns the member for the next attempt: the active member, unless
// it is in excluded (its circuit opened during an earlier attempt of the
// same operation), in which case the best healthy member not excluded.
func (g *FailoverGroup) pick(excluded []*groupMember) (*groupMember, error) {
	if g.closed.Load() {
		return nil, &ConnError{Command: groupCommand, Unwritten: true, Err: errGroupClosed}
	}
	m := g.active.Load()
	if m != nil && !isExcluded(excluded, m) {
		return m, nil
	}
	if m != nil {
		g.mu.Lock()
		var best *groupMember
		for _, c := range g.members {
			if !c.h.open && !isExcluded(excluded, c) && (best == nil || c.priority < best.priority) {
				best = c
			}
		}
		g.mu.Unlock()
		if best != nil {
			return best, nil
		}
	}
	return nil, &ConnError{Command: groupCommand, Unwritten: true, Err: ErrNoHealthyMember}
}

func isExcluded(excluded []*groupMember, m *groupMember) bool {
	for _, e := range excluded {
		if e == m {
			return true
		}
	}
	return false
}

// Execute runs fn with the active member's client of g and returns its
// result, retrying under the group's RetryPolicy. category declares the
// risk of repeating the whole operation fn performs; it is required: zero
// (or an undefined value) fails with an error matching
// [ErrInvalidArgument] and runs nothing, as do a nil fn and a g not made
// by [NewFailoverGroup]. [Never] runs
// fn once.
//
// How an operation is retried:
//
//   - Each attempt reads the active member again, so a retry after a
//     switch runs on the new active member. A retry may run on the member
//     whose attempt just failed while it is still active (its circuit
//     closed): the group moves operations only when probes opened the
//     circuit.
//   - A group retry starts only after fn returned an error: a member's own
//     RetryPolicy acts first, inside fn's call.
//   - Only connection failures are retried: an error matching
//     [ErrConnectionLost] (a lost or failed connection, a member client
//     closed) and an attempt that found no healthy member. Server replies
//     (LOADING, READONLY, ...), timeouts, rejected handshakes, protocol
//     errors and fn's own errors end the operation; so do ctx ending and
//     Close.
//   - Every failed attempt counts as possibly executed, so a retry needs
//     the policy's MaxCommandRetryCategory to permit category: with the
//     default ReadOnly maximum a [WriteAccumulating] operation is never
//     replayed, on the same member or another.
//   - An attempt whose member's circuit opened while fn ran ends the
//     operation unless another member is healthy: the group never retries
//     it against that member again.
//   - The group has no command timeout: each attempt runs under its
//     member's CommandTimeout, and ctx (its deadline and cancellation)
//     bounds the whole operation, backoff included. A backoff that cannot
//     end before ctx's deadline is not started: the last failure is
//     returned.
//
// The final error of an operation that made more than one attempt, or
// whose backoff the caller's cancellation or Close ended (then possibly
// after one attempt), is a [*RetryError] wrapping the last failure (or
// that cancellation or Close, which then wraps the last failure too);
// otherwise, after one attempt, it is that attempt's error as fn returned
// it. With an error Execute returns the
// value fn returned in the last attempt, or T's zero value when that
// attempt found no member to run on.
// [MayHaveExecuted] reports true for an operation whose fn ran at least
// once and failed after a retry, whatever fn's errors said.
//
// For batches and transactions, build and execute the whole unit inside
// fn, so that each attempt builds a fresh unit on the member it runs on;
// do not keep a batch, a transaction or a client between attempts.
func Execute[T any](ctx context.Context, g *FailoverGroup, category RetryCategory, fn func(ctx context.Context, c *Client) (T, error)) (T, error) {
	var zero T
	switch {
	case !g.made():
		return zero, errOrphanGroup(executeCommand)
	case fn == nil:
		return zero, errInvalid(executeCommand, "nil operation")
	case ctx == nil:
		return zero, errNilContext(executeCommand)
	case !category.Valid():
		return zero, errInvalid(executeCommand, "the operation's retry category is required (declare the risk of repeating it; Never runs it once)")
	}
	if err := ctx.Err(); err != nil {
		return zero, &ContextError{Command: groupCommand, Err: err}
	}
	deadline, _ := ctx.Deadline()
	var (
		attempts int
		ran      bool // fn ran at least once
		resent   bool // fn ran on a resend: the operation reports an outcome
		excluded []*groupMember
		last     error
		lastV    T
	)
	finish := func() (T, error) {
		if resent {
			g.metrics.retried(category, outcomeExhausted)
		}
		if attempts > 1 {
			return lastV, &RetryError{Command: groupCommand, Attempts: attempts, Err: last, ran: ran}
		}
		return lastV, last
	}
	closed := func() (T, error) { // Close ended the wait between attempts
		if resent {
			g.metrics.retried(category, outcomeExhausted)
		}
		return lastV, &RetryError{Command: groupCommand, Attempts: attempts, ran: ran,
			Err: closedWhileWaiting(groupCommand, errGroupClosed, ran, last)}
	}
	for {
		m, err := g.pick(excluded)
		if err != nil && attempts > 0 && g.closed.Load() {
			// Close came after the backoff: as if it had ended the
			// backoff, the attempt that found the group closed is none.
			return closed()
		}
		if err != nil && len(excluded) > 0 && !g.closed.Load() {
			return finish() // an open circuit ends the operation: no other member
		}
		attempts++
		failure := retry.LostConnection
		if err != nil {
			lastV, last = zero, err
			if g.closed.Load() {
				failure = retry.Fatal
			}
		} else {
			if attempts > 1 {
				resent = true
				g.metrics.retried(category, outcomeAttempted)
			}
			opens := m.opens.Load()
			var v T
			v, err = fn(ctx, m.client.Load())
			ran = true
			if err == nil {
				if resent {
					g.metrics.retried(category, outcomeSucceeded)
				}
				return v, nil
			}
			lastV, last = v, err
			failure = g.classify(ctx, err)
			if m.open.Load() || m.opens.Load() != opens {
				excluded = append(excluded, m)
				if _, err := g.pick(excluded); err != nil {
					return finish()
				}
			}
		}
		if g.cfg.policy.Decide(retry.Input{Category: category, Failure: failure, Attempts: attempts}) != retry.Retry {
			return finish()
		}
		delay := g.cfg.policy.Delay(attempts, rand.Float64())
		if !retry.Fits(time.Now(), deadline, delay) {
			return finish() // the backoff cannot fit: keep the last failure
		}
		if err := g.backoff(ctx, delay); err != nil {
			if err == ErrClosed {
				return closed()
			}
			if resent {
				g.metrics.retried(category, outcomeExhausted)
			}
			return lastV, &RetryError{Command: groupCommand, Attempts: attempts, ran: ran,
				Err: &ContextError{Command: groupCommand, Sent: ran, Err: err, Last: last}}
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return finish()
		}
	}
}

// classify maps fn's error to a retry failure. Only connection failures
// can be retried by the group: the caller's cancellation, Close, timeouts,
// rejected handshakes and protocol errors are never retried, and every
// other error (server replies included) is not selectable.
func (g *FailoverGroup) classify(ctx context.Context, err error) retry.Failure {
	if ctx.Err() != nil || g.closed.Load() {
		return retry.Fatal
	}
	var ce *ContextError
	if errors.As(err, &ce) {
		return retry.Fatal // a member's CommandTimeout
	}
	var ne *ConnError
	if !errors.As(err, &ne) {
		return retry.Unselectable
	}
	var se *ServerError
	if errors.As(ne.Err, &se) || errors.Is(ne.Err, ErrProtocol) {
		return retry.Fatal
	}
	return retry.LostConnection
}

// backoff waits d, or until ctx is done (its error) or the group closes
// ([ErrClosed]). Cancellation is checked even for a zero delay.
func (g *FailoverGroup) backoff(ctx context.Context, d time.Duration) error {
	return waitBackoff(ctx, d, g.done)
}
