package respire

import (
	"strings"

	"github.com/respire-go/respire/catalog"
)

// The shared connection carries only commands that get exactly one reply
// and leave the connection's state as they found it. The commands that
// would break that are derived from the catalog's flags: connection state
// (HELLO, AUTH, SELECT, CLIENT SETNAME, MONITOR, SYNC, ...), transactions
// (MULTI, EXEC, WATCH, ...) and publish/subscribe, except for the
// exceptions below, which are ordinary request/reply commands.

// pubSubAllowed are the publish/subscribe commands that get one reply and
// change nothing: publishing and the PUBSUB introspection subcommands.
func pubSubAllowed(name string) bool {
	return isPublish(name) || strings.HasPrefix(name, "PUBSUB")
}

// refusal returns why the shared connection refuses the command name with
// flags, or "" when it may travel there. The text says where the command
// belongs instead.
func refusal(name string, flags catalog.Flag) string {
	switch {
	case flags.Has(catalog.FlagPubSub) && !pubSubAllowed(name):
		return "subscribing turns the connection into a stream of messages; use Client.Subscribe, PSubscribe or SSubscribe"
	case flags.Has(catalog.FlagTransaction):
		return "a transaction holds state on its connection; use Client.Dedicated for MULTI/EXEC and WATCH"
	case name == "WAIT" || name == "WAITAOF":
		return "it counts the writes of the connection it runs on, and Do would run it on a connection of its own that made none (it would return at once); use Conn.Wait or Conn.WaitAOF in Client.Dedicated, after the writes on that Conn"
	case !flags.Has(catalog.FlagConnectionState):
		return ""
	}
	switch name {
	case "MONITOR", "SYNC", "PSYNC", "REPLCONF":
		return "it turns the connection into a stream that is not one reply per command; this client does not offer it"
	case "SCRIPT DEBUG":
		return "it makes the connection's later EVALs debugging sessions, not one reply per command, and RESET does not end it; this client does not offer it"
	case "CLIENT REPLY":
		return "it suppresses replies on the connection; this client does not offer it"
	case "CLIENT TRACKING", "CLIENT CACHING":
		return "tracking changes what the connection receives; use Client.Dedicated"
	case "HELLO", "AUTH":
		return "the handshake belongs to the client; set Options.Protocol, Options.Username and Options.Password"
	case "SELECT":
		return "it changes the database for every caller; set Options.DB, or use Client.Dedicated"
	case "CLIENT SETNAME":
		return "it renames the connection of every caller; set Options.ClientName, or use Client.Dedicated"
	case "RESET", "QUIT":
		return "it ends or resets the connection of every caller; use Client.Close"
	case "READONLY", "READWRITE", "ASKING":
		return "cluster routing sends it where needed; it changes the connection for every caller"
	}
	return "it changes connection state for every caller; use Client.Dedicated"
}

// RefusedCommands returns the full names ("SELECT", "CLIENT SETNAME") of
// the catalog's commands that [Client.Do] refuses on the shared
// connection, sorted. A command the catalog does not know is refused only
// when its Command declares one of the flags that imply it.
func RefusedCommands() []string {
	var out []string
	for _, cmd := range catalog.All() {
		if cmd.Subcommand() == "" && hasSubcommands(cmd.Name()) {
			continue // a container: its subcommands decide
		}
		if refusal(cmd.FullName(), cmd.Flags()) != "" {
			out = append(out, cmd.FullName())
		}
	}
	return out
}

// hasSubcommands reports whether the catalog describes subcommands of name.
func hasSubcommands(name string) bool {
	for _, cmd := range catalog.All() {
		if cmd.Name() == name && cmd.Subcommand() != "" {
			return true
		}
	}
	return false
}
