// Package pool keeps a small set of dedicated connections to one server
// address.
//
// The shared, multiplexed connection of an address ([wire.Endpoint]) carries
// every command that gets exactly one reply and leaves the connection as it
// was. Everything else needs a connection of its own for a while: blocking
// commands (BLPOP and friends, one caller per connection at a time), and
// later WATCH/MULTI and RESP2 pub/sub. A [Pool] lends such connections.
//
// [Pool.Get] lends a connection: the most recently returned idle one that is
// still alive, or a new dial while fewer than [Config.Max] are open; when
// Max are open it waits, in first-come order, within its context for one to
// come back. [Pool.Put] returns a connection for reuse. [Pool.Discard]
// closes one that must never be reused, such as a connection on which the
// server may still be blocking for a caller that gave up; its slot is free
// at once. Idle connections unused for [Config.IdleTimeout] are closed by a
// reaper goroutine. [Pool.Close] closes idle and lent connections, wakes
// waiters, and returns after every goroutine the pool started has exited.
//
// Ownership is explicit: a connection returned by Get belongs to its caller
// until the caller hands it back with exactly one Put or Discard. Put and
// Discard ignore a connection the pool does not currently lend (one it never
// lent, or one already handed back), so a mistaken second call never
// corrupts the counts in [Stats]. The pool cannot tell loans apart, though:
// once a connection handed back has been lent again, a late second Put or
// Discard by its earlier borrower returns or closes the new borrower's
// connection.
//
// No lock is held while dialing or closing a connection. Everything in this
// package is safe for concurrent use.
package pool
