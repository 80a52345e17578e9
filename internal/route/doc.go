// Package route holds the routing logic of Redis Cluster and Sentinel
// topologies.
//
// The pure part of the package, which does no I/O, maps keys to hash slots
// ([Slot], [SlotBytes]), converts CLUSTER SHARDS and CLUSTER SLOTS replies
// into a list of slot owners ([ParseShards], [ParseSlots], [Shard]),
// validates such a list into a per-slot owner table ([Owners]), and parses
// MOVED and ASK redirects ([ParseRedirect]).
//
// Replies are treated as untrusted input: a reply of the wrong shape, with
// out-of-range numbers, overlapping slot ranges or unusable addresses is
// rejected with an error wrapping [ErrBadTopology] or [ErrBadRedirect],
// never with a panic.
package route
