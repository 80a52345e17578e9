// Package resp reads and writes the Redis serialization protocol, RESP2 and
// RESP3, for both sides of a connection: clients encode commands and read
// replies, servers (such as the respiretest kit) read commands and encode
// replies.
//
// Encoding is append-style: every Append function appends one element to a
// byte slice and returns the extended slice, so a caller can build a whole
// pipeline in one reused buffer without allocating.
//
// Decoding is zero-copy: a [Reader] returns [Value]s whose byte slices and
// element slices borrow the reader's memory and stay valid only until the
// next call to one of its Read methods. Call [Value.Clone] to keep a value.
// The reader bounds what a peer can make it hold: bulk lengths above
// [Reader.MaxBulk] and nesting deeper than [Reader.MaxDepth] are
// [ErrProtocol] errors, and neither bulk nor aggregate headers make it
// allocate more than the bytes that actually arrive justify. Malformed input
// returns an error that wraps [ErrProtocol]; it never panics. RESP3
// streamed strings and aggregates (a '?' length), which Redis never sends,
// are not supported: they are protocol errors that say so.
package resp
