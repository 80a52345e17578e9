package respire

// Family E's hash and server commands left without a typed method or
// Batch member, with where to go instead.
var _ = exclude(untypedCommands, map[string]string{
	"HMSET": "deprecated since 4.0: use HSet, which takes several field-value pairs",
})

var _ = exclude(unbatchedCommands, map[string]string{
	"HSCAN": "a cursor iterator: Client.HScan and Client.HScanPages follow each page's cursor to the next, which a batch cannot (its members are queued before any reply)",
})
