package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
)

// ErrTxConflict reports a watched transaction whose keys changed before
// its EXEC on every attempt [Client.Watch] made: nothing was applied.
var ErrTxConflict = errors.New("respire: watched keys changed before EXEC; the transaction was not applied")

// errRunConflict is the result of the members of a Watch run whose EXEC
// found a watched key changed: none was applied.
var errRunConflict = &causedError{command: "EXEC", text: "this run's members were not applied", err: ErrTxConflict}

// Watch limits: the callback runs at most maxWatchAttempts times, waiting
// between runs from watchBackoff, doubling, up to watchMaxBackoff, with
// full jitter.
const (
	maxWatchAttempts = 16
	watchBackoff     = time.Millisecond
	watchMaxBackoff  = 100 * time.Millisecond
)

// Tx is the connection of a [Client.Watch] callback: reads run at once on
// the connection that holds the WATCH, and commands queued on Queue run
// as MULTI ... EXEC on it when the callback returns nil. Its reads are
// safe for concurrent use, as [Conn]'s are; its Queue, like any [Batch],
// is not. A Tx must not be used after the callback returns.
type Tx struct {
	conn  *Conn
	queue *Batch
	// wrote: a command that may change data (not a plain read) was given
	// to Do; set before it is sent, so that a run that may have applied it
	// is never rerun.
	wrote atomic.Bool
	// mu guards failed: the errors of the Tx's commands that failed in a
	// way the client's RetryPolicy selects, as returned to the callback.
	mu     sync.Mutex
	failed []error
}

// Do runs cmd on the watched connection now (a read that decides what to
// queue), like [Conn.Do]. MULTI, EXEC and DISCARD fail with
// [ErrInvalidArgument] before any I/O: Watch frames the transaction
// itself, and a MULTI sent by hand would queue the callback's reads and
// run Watch's own MULTI ... EXEC inside it. UNWATCH (which would drop the
// conflict check Watch promises) and SELECT (which would run the queue in
// another database than the watched keys') fail the same way. Any other
// command runs at once, outside the transaction: a run of the callback
// that sent one that may change data (anything but a plain read, such as
// GET or HGETALL) is never rerun after a failure.
func (tx *Tx) Do(ctx context.Context, cmd Command, args ...any) (Reply, error) {
	// The first argument may be the subcommand (NewCommand("OBJECT") with
	// "ENCODING", k): it decides the command's flags.
	var first [1][]byte
	var words [][]byte
	if len(args) > 0 {
		switch a := args[0].(type) {
		case string:
			first[0], words = []byte(a), first[:]
		case []byte:
			first[0], words = a, first[:]
		}
	}
	d := dispatchOf(cmd, words)
	switch d.name { // "select 1" is SELECT
	case "MULTI", "EXEC", "DISCARD":
		return Reply{}, errInvalid(d.name, "Watch sends MULTI and EXEC itself; queue the transaction's commands on Tx.Queue")
	case "UNWATCH":
		return Reply{}, errInvalid(d.name, "it would drop the conflict check of Watch; return an error from the callback to give up")
	case "SELECT":
		return Reply{}, errInvalid(d.name, "the transaction runs in the database of the watched keys; use a client with Options.DB")
	}
	if !plainRead(d.flags) {
		tx.wrote.Store(true)
	}
	r, err := tx.conn.Do(ctx, cmd, args...)
	tx.note(err)
	return r, err
}

// plainRead reports whether a command with flags only reads data: its
// run changes nothing that a rerun of the callback would change again.
func plainRead(flags catalog.Flag) bool {
	return flags.Has(catalog.FlagReadOnly) &&
		flags&(catalog.FlagWrite|catalog.FlagBlocking|catalog.FlagScripting|catalog.FlagPubSub|catalog.FlagAdmin) == 0
}

// Get reads key now on the watched connection; [ErrNil] when missing.
func (tx *Tx) Get(ctx context.Context, key string) (string, error) {
	r, err := tx.conn.Do(ctx, NewCommand("GET"), key)
	tx.note(err)
	if err != nil {
		return "", err
	}
	return r.String()
}

// note records err, the error a Tx command returns to the callback, when
// the client's RetryPolicy selects its failure: the callback returning it
// asks Watch to rerun.
func (tx *Tx) note(err error) {
	if err == nil || !failureOf(err).Selected(tx.conn.c.cfg.policy.Retryable()) {
		return
	}
	tx.mu.Lock()
	tx.failed = append(tx.failed, err)
	tx.mu.Unlock()
}

// failure returns the class of the Tx command's failure that fnErr, the
// callback's error, is or wraps; [retry.Fatal] when it is none of them.
func (tx *Tx) failure(fnErr error) retry.Failure {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	for _, err := range tx.failed {
		if errors.Is(fnErr, err) {
			return failureOf(err)
		}
	}
	return retry.Fatal
}

// failureOf classifies the error of a call that the client did not retry
// (a dedicated connection's) as the retry policy classifies a failed
// attempt: a lost connection, a selectable error reply (LOADING,
// TRYAGAIN, MASTERDOWN, READONLY), or [retry.Fatal] or
// [retry.Unselectable] for anything else.
func failureOf(err error) retry.Failure {
	var ce *ConnError
	var se *ServerError
	switch {
	case errors.As(err, &ce):
		if ce.lost {
			return retry.LostConnection
		}
		return retry.Fatal
	case errors.As(err, new(*ContextError)), errors.As(err, new(*RouteError)), errors.Is(err, ErrInvalidConfig):
		return retry.Fatal
	case errors.As(err, &se):
		return retry.ClassifyCode(se.Code)
	}
	return retry.Fatal
}

// Queue returns the transaction's queue: its members run between MULTI
// and EXEC after the callback returns nil, and their Futures are final
// when Watch returns nil. Watch executes it: its Execute, called from the
// callback, returns an [ErrInvalidArgument] and sends nothing, since it
// would run the transaction on the shared connection, where no key is
// watched.
func (tx *Tx) Queue() *Batch { return tx.queue }

// Watch runs an optimistic transaction: on a dedicated connection it sends
// WATCH keys, runs fn (which reads with tx and queues writes on
// tx.Queue()), then sends the queue as MULTI ... EXEC. When a watched key
// changed before EXEC, nothing is applied (the members of that run fail
// with an error matching [ErrTxConflict]) and the whole callback runs
// again, at most 16 times with a short jittered backoff; after the last
// conflict Watch returns an error matching [ErrTxConflict]. Since fn may
// run several times, it should read through tx and write only to
// tx.Queue(): whatever else it does is done again on each run.
//
// The client never resends a watched transaction (its WATCH belongs to
// the connection that failed); under [Options.RetryPolicy] Watch reruns
// the whole callback instead, on a fresh dedicated connection with a
// fresh WATCH, after a failure that the policy selects (RetryableErrors:
// a lost connection, LOADING, TRYAGAIN, MASTERDOWN, READONLY) and only
// when that run provably applied nothing:
//
//   - getting the connection or sending WATCH failed;
//   - fn returned the error (or an error wrapping it) of one of its
//     tx.Get or tx.Do calls that failed that way, and sent nothing
//     through tx.Do but plain reads (a write runs at once, outside the
//     transaction);
//   - the MULTI ... EXEC frame was definitely never written (a
//     [*ConnError] with Unwritten), with the same condition on tx.Do.
//
// The categories of the queued members do not matter then: none ran.
// Once MULTI ... EXEC may have been written (its reply lost, a timeout or
// a cancellation after the write, EXECABORT, an error inside the EXEC
// array) Watch never reruns and returns the error: [MayHaveExecuted]
// says whether the transaction may have been applied. fn's own errors,
// a timeout, a cancellation and the failures the policy does not select
// end Watch too, as does any failure without a policy. The policy's
// MaxAttempts bounds the runs that end with such a failure (counted apart
// from the conflicts), its backoff separates them, and a backoff that
// cannot end before ctx's deadline ends Watch with the failure. Once a
// failure was chosen for a rerun, the error that ends Watch is a
// [*RetryError] of Command "WATCH" whose Attempts counts every run,
// wrapping the last run's error or, when ctx or [Client.Close] ends a
// backoff, a [*ContextError] whose Last is the failure or a [*ConnError]
// of [ErrClosed] joined with it. These reruns resend nothing and record
// nothing in respire.command.retries; the commands of each run are
// measured and hooked as they are sent.
//
// On a Cluster client every key, watched or queued, must hash to one
// slot: a queued member of another slot ends Watch with a [RouteError]
// matching [ErrCrossSlot] (and [ErrInvalidArgument]) before MULTI is
// sent. A queued [Batch.Scan] page that names another server than the
// watched connection's (Sentinel and Cluster) ends Watch with an
// [ErrInvalidArgument] before MULTI too. A nil fn or no keys is an
// [ErrInvalidArgument], and nothing is sent.
func (c *Client) Watch(ctx context.Context, fn func(tx *Tx) error, keys ...string) error {
	switch {
	case fn == nil:
		return errInvalid("WATCH", "nil callback")
	case ctx == nil:
		return errNilContext("WATCH")
	case len(keys) == 0:
		return errInvalid("WATCH", "no keys")
	}
	deadline, _ := ctx.Deadline()
	runs, conflicts, failures := 0, 0, 0
	retried := false // a failure was chosen for a rerun
	// end returns err, which ends Watch: once a failure was chosen for a
	// rerun, in a *RetryError counting every run. Earlier runs applied
	// nothing, so only err's may have, unless it applied nothing either.
	end := func(err error, unapplied bool) error {
		if !retried {
			return err
		}
		return &RetryError{Command: "WATCH", Attempts: runs, ran: !unapplied && MayHaveExecuted(err), Err: err}
	}
	for {
		runs++
		committed, unapplied, fl, err := c.watchOnce(ctx, fn, keys)
		var delay time.Duration
		var last error // the failure whose rerun the backoff delays
		switch {
		case err != nil:
			if !unapplied {
				return end(err, false)
			}
			failures++
			if c.cfg.policy.Decide(retry.Input{
				Category:  catalog.Always, // the run applied nothing
				Failure:   fl,
				Unwritten: true,
				Attempts:  failures,
			}) != retry.Retry {
				return end(err, true)
			}
			if delay = c.cfg.policy.Delay(failures, rand.Float64()); !retry.Fits(time.Now(), deadline, delay) {
				return end(err, true)
			}
			last = err
		case committed:
			return nil
		default:
			if conflicts++; conflicts == maxWatchAttempts {
				return end(&causedError{command: "WATCH", text: "gave up after " + strconv.Itoa(conflicts) + " attempts", err: ErrTxConflict}, true)
			}
			ceiling := min(watchBackoff<<min(conflicts-1, 16), watchMaxBackoff)
			delay = time.Duration(rand.Int64N(int64(ceiling))) + 1
		}
		retried = retried || last != nil
		if err := c.backoff(ctx, delay); err != nil {
			if err != ErrClosed {
				return end(&ContextError{Command: "WATCH", Err: err, Last: last}, true)
			}
			return end(closedWhileWaiting("WATCH", ErrClosed, false, last), true)
		}
	}
}

// watchOnce runs one WATCH, callback and EXEC; committed is false after a
// conflict. On a failure, unapplied reports that the run provably applied
// nothing (see Watch), and fl classifies the failure then.
func (c *Client) watchOnce(ctx context.Context, fn func(tx *Tx) error, keys []string) (committed, unapplied bool, fl retry.Failure, err error) {
	var tx *Tx
	var fnErr, execErr error
	sent := false // execWatched was called
	err = c.dedicated(ctx, "WATCH", func(conn *Conn) error {
		if err := conn.watchKeys(ctx, keys); err != nil {
			return err
		}
		tx = &Tx{conn: conn, queue: &Batch{c: c, tx: true, watched: true}}
		if fnErr = fn(tx); fnErr != nil {
			return fnErr
		}
		q := tx.queue
		if !q.executed.CompareAndSwap(false, true) {
			return errInvalid("WATCH", "the transaction's queue was executed by the callback")
		}
		if q.err != nil {
			q.fail(q.err)
			return q.err
		}
		if len(q.members) == 0 {
			committed = true
			return nil
		}
		for i := range q.members {
			// A SCAN page walks its cursor on the server that issued it;
			// the queue runs on the watched connection's.
			if pin := q.members[i].pin; pin != "" && (conn.node == nil || pin != conn.node.Addr) {
				err := errInvalid("SCAN", "the page's server "+pin+" is not the watched connection's")
				q.fail(err)
				return err
			}
		}
		if c.isCluster() {
			// The connection serves the watched keys' slot: a member of
			// another slot would be redirected inside MULTI.
			if _, err := q.txSlot(route.Slot(keys[0])); err != nil {
				return err
			}
		}
		if c.hooks == nil {
			sent = true
			committed, execErr = execWatched(ctx, conn, q)
			return execErr
		}
		// The batch hooks see the transaction as they see a Batch's.
		return q.executeHooked(ctx, func(ctx context.Context) error {
			sent = true
			committed, execErr = execWatched(ctx, conn, q)
			return execErr
		})
	})
	switch {
	case err == nil:
		return committed, false, 0, nil
	case tx == nil:
		// Getting the connection or WATCH failed: nothing else was sent.
		return false, true, failureOf(err), err
	case tx.wrote.Load():
		// The callback sent what may have changed data. Dedicated has
		// ended the loan: no command of the Tx runs any more.
		return false, false, 0, err
	case fnErr != nil:
		return false, true, tx.failure(fnErr), err
	case !sent:
		// The queue was refused before MULTI, or a hook refused to send
		// it: nothing reruns it.
		return false, true, retry.Fatal, err
	}
	var ce *ConnError
	if execErr != nil && errors.Is(err, execErr) && errors.As(execErr, &ce) && ce.Unwritten && ce.lost {
		return false, true, retry.LostConnection, err // no byte of MULTI ... EXEC was written
	}
	return false, false, 0, err
}

// execWatched sends the validated, non-empty queue q of a Watch as MULTI
// ... EXEC on conn, once, and publishes its results; committed is false
// after a conflict.
func execWatched(ctx context.Context, conn *Conn, q *Batch) (committed bool, err error) {
	f := q.frame(nil)
	if err := conn.unit(ctx, f, "EXEC"); err != nil {
		q.fail(err)
		return false, err
	}
	defer f.Release()
	if last := f.Values[len(f.Values)-1]; last.IsNull() {
		q.fail(errRunConflict) // the next run queues afresh
		return false, nil
	}
	if _, err := txFailure(f); err != nil {
		if replies, ok := finalReplies(err); ok {
			// EXEC ran: each member keeps its own reply. Watch never
			// resends, so the selected error ends it.
			q.publish(nil, replies, f.Value)
			q.servedBy(nil, conn.node)
			return true, err
		}
		q.fail(err)
		return false, err
	}
	q.publish(nil, f.Value.Elems, f.Value)
	q.servedBy(nil, conn.node)
	return true, nil
}
