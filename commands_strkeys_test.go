package respire

// Family D (strings, bitmaps, HyperLogLog, keys): the commands without a
// typed Client method or Batch member, with where to go instead.
var _ = exclude(untypedCommands, map[string]string{
	"SUBSTR":     "the name GETRANGE had before Redis 2.0, same arguments and reply: use Client.GetRange",
	"PFDEBUG":    "a debugging command for HyperLogLog internals (admin, dangerous): use Client.Do",
	"PFSELFTEST": "a self-test of the server's HyperLogLog code (admin): use Client.Do",
	"MIGRATE":    "moves keys to another server, an operator tool (ServerAdmin) whose keys and target are not this client's topology: use Client.Do",
	"WAIT":       "counts the replicas that acknowledged the writes of the connection it runs on, and the client would run it on a dedicated connection that sent none (it would return at once): use Conn.Wait inside Client.Dedicated, after the writes on that Conn",
	"WAITAOF":    "counts the fsyncs of the writes of the connection it runs on, and the client would run it on a dedicated connection that sent none: use Conn.WaitAOF inside Client.Dedicated, after the writes on that Conn",
})

var _ = exclude(unbatchedCommands, map[string]string{
	"MGET": "Client.MGet returns values and found flags, two results a Future cannot hold; on a Cluster client it is split per slot, a batch member never is: queue Batch.Do(catalog.String.MGET(), keys...) and read Reply.Slice",
	"KEYS": "on a Cluster client Client.Keys runs on every primary and joins their keys, and a batch member runs on one node: queue Batch.Do(catalog.Generic.KEYS(), pattern) for one node's keys",
})
