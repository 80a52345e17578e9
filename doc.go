// Package respire is a Redis, Valkey and RESP-server client whose retry
// policy resends a command only when its failure was selected and the
// caller accepted that command's risk, so a lost reply never turns one
// INCR into two.
//
// # Connecting
//
// [Connect] takes [Options] (or [ParseURL] builds them from a redis:// or
// rediss:// URL, or a redis+sentinel:// or redis+cluster:// one, for
// Options.Sentinel and Options.Cluster: docs/topologies.md). A [Client] holds one multiplexed connection per server:
// concurrent calls are pipelined into shared socket writes and matched to
// their replies in order. It is safe for concurrent use; [Client.Close]
// releases it.
//
// # Commands
//
// Typed commands are methods on [Client] named after the command
// ([Client.Get], [Client.SetWithOptions], [Client.ZAdd], [Client.XAdd] ...),
// flat like go-redis rather than grouped into facets: a Redis user finds a
// command by its name. Each method sends with its command's audited retry
// category (docs/retry-categories.md lists them); where its options narrow
// it (SET NX, ZADD XX), the method or its options type says so. A typed
// method checks its arguments first: a call without what its command
// needs (Del with no keys, HSet with an odd list of fields and values)
// or with contradictory options fails with [ErrInvalidArgument] and
// sends nothing. Every other command runs through [Client.Do] with a
// descriptor from package catalog (audited retry category) or
// [NewCommand] (never retried until the caller declares a category),
// returning a [Reply] with conversion helpers.
//
// Every call takes a context. When the context has no deadline,
// [Options.CommandTimeout] supplies one; that single deadline covers
// connection selection, every send and every retry delay. A call sees
// its context end at once, except while it reads its own reply on an
// idle connection (a blocked read cannot watch a context): then at most
// a millisecond later. Pass context.Background() or context.TODO() when
// there is none: a nil context is bad input, refused before anything is
// sent with an error matching [ErrInvalidArgument] (a batch so refused
// may be executed again).
//
// # Errors
//
// Errors are matched with errors.Is and errors.As: [ErrNil] for a missing
// value, [*ServerError] for an error reply (its Code is LOADING, READONLY,
// WRONGTYPE ...), [*ConnError] (matching [ErrConnectionLost]) when the
// connection failed, with the transport's fact of whether the command
// could have reached the server, [*ContextError] when the context or the
// command timeout ended the call (it wraps context.Canceled or
// context.DeadlineExceeded), [*ConfigError] (matching [ErrInvalidConfig])
// naming an invalid option, and [*RetryError] wrapping the last failure of
// a command that was sent more than once, or whose retry backoff the
// context or [Client.Close] ended (then possibly after one attempt).
//
// # Retries
//
// With [Options.RetryPolicy] nil (the default) no command is ever resent.
// A [RetryPolicy] resends a command only when both hold: the failure is one
// it selects (connection loss, LOADING, TRYAGAIN, MASTERDOWN, READONLY),
// and either the transport proved the command was never written, or the
// command's [RetryCategory] is at most the policy's maximum (ReadOnly by
// default). Retries never provide exactly-once execution.
//
// # Batches, transactions, scripts and failover groups
//
// [Client.NewBatch] and [Client.NewTransaction] queue members that travel
// as one frame and retry as one unit, only when every member's category
// permits it or, for a unit never written, none is Never
// (docs/batches.md); [Client.Watch] runs optimistic
// transactions. [NewScript] and [NewFunction] run server-side code whose
// category the caller declares (Never otherwise), retrying the whole
// exchange, EVAL fallback or library reload included. A typed
// [Client.XAdd] carries an idempotency identity on its own when the policy
// accepts WriteChecked, so that on Redis 8.6 its resend returns the entry
// already appended; a resend that arrives after the stream forgot the
// identity (expired after IDMP-DURATION or evicted beyond IDMP-MAXSIZE,
// see [Client.XCfgSet]) appends again. [NewFailoverGroup] and [Execute]
// span independent deployments (docs/failover-groups.md).
package respire
