package respire

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/respire-go/respire/catalog"
)

// dataGroups are the catalog groups whose every command needs a typed
// Client method or a reason in untypedCommands.
var dataGroups = []string{"bitmap", "generic", "geo", "hash", "hyperloglog", "list", "set", "sorted-set", "stream", "string"}

// introspection are the server and connection commands applications call
// (issue 14): they need typed methods too.
var introspection = []string{"INFO", "TIME", "DBSIZE", "MEMORY USAGE", "PING", "ECHO"}

// untypedCommands lists the data commands without a typed Client method,
// each with the reason (where the command goes instead). Each family's
// test file adds its entries with exclude.
var untypedCommands = map[string]string{}

// unbatchedCommands lists the typed commands without a Batch member, each
// with the reason.
var unbatchedCommands = map[string]string{}

// exclude adds reasons to list; a test file declares its family's
// exclusions as var _ = exclude(untypedCommands, map[string]string{...}).
func exclude(list, reasons map[string]string) struct{} {
	for name, why := range reasons {
		if _, dup := list[name]; dup {
			panic("commands_coverage_test: " + name + " excluded twice")
		}
		list[name] = why
	}
	return struct{}{}
}

// methodKey is how a command's name maps to its method's name: the words
// joined, case ignored ("OBJECT ENCODING" is ObjectEncoding, "SORT_RO"
// SortRO).
func methodKey(s string) string {
	return strings.NewReplacer(" ", "", "_", "", "|", "").Replace(strings.ToUpper(s))
}

func methodKeys(v any) map[string]string {
	out := map[string]string{}
	t := reflect.TypeOf(v)
	for i := range t.NumMethod() {
		out[methodKey(t.Method(i).Name)] = t.Method(i).Name
	}
	return out
}

// coveredCommands returns the data and introspection commands of the
// catalog, containers left out.
func coveredCommands(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, cmd := range catalog.All() {
		name := cmd.FullName()
		if catalog.HasSubcommands(cmd.Name()) && cmd.Subcommand() == "" {
			continue // a container (OBJECT, XGROUP) is not a command of its own
		}
		if cmd.Subcommand() == "HELP" {
			continue // every container's HELP text is for humans at a prompt
		}
		if slices.Contains(dataGroups, cmd.Group()) || slices.Contains(introspection, name) {
			names = append(names, name)
		}
	}
	return names
}

// TestEveryDataCommandIsTyped: every data command of the catalog (Redis
// 7.2 and 8.x core) has a typed Client method, or is listed with the
// reason in untypedCommands; and every typed command can be queued on a
// Batch, or is listed in unbatchedCommands. Stale entries fail too.
func TestEveryDataCommandIsTyped(t *testing.T) {
	client, batch := methodKeys(&Client{}), methodKeys(&Batch{})
	names := coveredCommands(t)
	for _, name := range names {
		why, excluded := untypedCommands[name]
		method, typed := client[methodKey(name)]
		switch {
		case typed && excluded:
			t.Errorf("%s has Client.%s but is listed as untyped (%s)", name, method, why)
		case !typed && !excluded:
			t.Errorf("%s has no typed Client method and no reason in untypedCommands", name)
		case excluded && why == "":
			t.Errorf("%s is listed as untyped without a reason", name)
		}
		if !typed {
			continue
		}
		why, unbatched := unbatchedCommands[name]
		_, queued := batch[methodKey(name)]
		switch {
		case queued && unbatched:
			t.Errorf("%s has Batch.%s but is listed as unbatched (%s)", name, method, why)
		case !queued && !unbatched:
			t.Errorf("%s (Client.%s) has no Batch member and no reason in unbatchedCommands", name, method)
		}
	}
	for name := range untypedCommands {
		if !slices.Contains(names, name) {
			t.Errorf("untypedCommands lists %s, which is not a data command of the catalog", name)
		}
	}
	for name := range unbatchedCommands {
		if !slices.Contains(names, name) {
			t.Errorf("unbatchedCommands lists %s, which is not a data command of the catalog", name)
		}
	}
}
