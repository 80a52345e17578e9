package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/respire-go/respire/internal/route"
)

// ErrTxConflict reports a watched transaction whose keys changed before
// its EXEC on every attempt [Client.Watch] made: nothing was applied.
var ErrTxConflict = errors.New("respire: watched keys changed before EXEC; the transaction was not applied")

// errRunConflict is the result of the members of a Watch run whose EXEC
// found a watched key changed: none was applied.
var errRunConflict = errors.Join(ErrTxConflict, errors.New("respire: EXEC: this run's members were not applied"))

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
}

// Do runs cmd on the watched connection now (a read that decides what to
// queue), like [Conn.Do]. MULTI, EXEC and DISCARD fail with
// [ErrInvalidArgument] before any I/O: Watch frames the transaction
// itself, and a MULTI sent by hand would queue the callback's reads and
// run Watch's own MULTI ... EXEC inside it. UNWATCH (which would drop the
// conflict check Watch promises) and SELECT (which would run the queue in
// another database than the watched keys') fail the same way.
func (tx *Tx) Do(ctx context.Context, cmd Command, args ...any) (Reply, error) {
	switch name := dispatchOf(cmd, nil).name; name { // "select 1" is SELECT
	case "MULTI", "EXEC", "DISCARD":
		return Reply{}, errInvalid(name, "Watch sends MULTI and EXEC itself; queue the transaction's commands on Tx.Queue")
	case "UNWATCH":
		return Reply{}, errInvalid(name, "it would drop the conflict check of Watch; return an error from the callback to give up")
	case "SELECT":
		return Reply{}, errInvalid(name, "the transaction runs in the database of the watched keys; use a client with Options.DB")
	}
	return tx.conn.Do(ctx, cmd, args...)
}

// Get reads key now on the watched connection; [ErrNil] when missing.
func (tx *Tx) Get(ctx context.Context, key string) (string, error) {
	r, err := tx.conn.Do(ctx, NewCommand("GET"), key)
	if err != nil {
		return "", err
	}
	return r.String()
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
// conflict Watch returns an error matching [ErrTxConflict]. The client
// never resends a watched transaction: a network failure, a timeout, a
// cancellation, a server error or fn's own error ends Watch with that
// error, and the retry policy does not apply. On a Cluster client every
// key, watched or queued, must hash to one slot: a queued member of
// another slot ends Watch with a [RouteError] matching [ErrCrossSlot]
// (and [ErrInvalidArgument]) before MULTI is sent. A queued [Batch.Scan]
// page that names another server than the watched connection's (Sentinel
// and Cluster) ends Watch with an [ErrInvalidArgument] before MULTI too.
// A nil fn or no keys is an [ErrInvalidArgument], and nothing is sent.
func (c *Client) Watch(ctx context.Context, fn func(tx *Tx) error, keys ...string) error {
	switch {
	case fn == nil:
		return errInvalid("WATCH", "nil callback")
	case len(keys) == 0:
		return errInvalid("WATCH", "no keys")
	}
	for attempt := 1; ; attempt++ {
		committed, err := c.watchOnce(ctx, fn, keys)
		if err != nil || committed {
			return err
		}
		if attempt == maxWatchAttempts {
			return errors.Join(ErrTxConflict, errors.New("respire: WATCH: "+strconv.Itoa(attempt)+" attempts"))
		}
		ceiling := min(watchBackoff<<min(attempt-1, 16), watchMaxBackoff)
		if err := c.backoff(ctx, time.Duration(rand.Int64N(int64(ceiling))+1)); err != nil {
			if err == ErrClosed {
				return &ConnError{Command: "WATCH", Unwritten: true, Err: ErrClosed}
			}
			return &ContextError{Command: "WATCH", Err: err}
		}
	}
}

// watchOnce runs one WATCH, callback and EXEC; committed is false after a
// conflict.
func (c *Client) watchOnce(ctx context.Context, fn func(tx *Tx) error, keys []string) (committed bool, err error) {
	err = c.Dedicated(ctx, func(conn *Conn) error {
		if err := conn.watchKeys(ctx, keys); err != nil {
			return err
		}
		tx := &Tx{conn: conn, queue: &Batch{c: c, tx: true, watched: true}}
		if err := fn(tx); err != nil {
			return err
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
			committed, err = execWatched(ctx, conn, q)
			return err
		}
		// The batch hooks see the transaction as they see a Batch's.
		return q.executeHooked(ctx, func(ctx context.Context) error {
			var err error
			committed, err = execWatched(ctx, conn, q)
			return err
		})
	})
	return committed, err
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
