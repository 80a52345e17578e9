package catalog

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/respire-go/respire/internal/ascii"
)

// Lookup returns the descriptor of the command name with subcommand sub,
// ignoring the case of ASCII letters, as the server does (a name with
// another letter, such as a dotless i, is no command it knows). For a container command (CONFIG, CLIENT, ...) called with
// no subcommand or one the catalog does not know, it returns the
// container's descriptor; for a command without subcommands sub is
// ignored. It reports false for a command the catalog does not describe.
//
// Lookup serves dispatch: a raw command's flags (blocking, connection
// state, cursor, scripting). A raw command's retry category never comes
// from Lookup; only an audited descriptor or a declaration grants one.
func Lookup(name, sub string) (Command, bool) {
	name = ascii.Upper(ascii.TrimSpace(name))
	if i, ok := find(name, ""); ok && !container(i) {
		return ref(i), true // sub is ignored: no case conversion of an argument
	}
	sub = ascii.Upper(ascii.TrimSpace(sub))
	if sub != "" {
		if i, ok := find(name, sub); ok {
			return ref(i), true
		}
	}
	if i, ok := find(name, ""); ok {
		return ref(i), true
	}
	return Command{}, false
}

// HasSubcommands reports whether the catalog knows subcommands of the
// command name (CONFIG, CLIENT, ...), ignoring the case of ASCII letters:
// only then does a raw
// command's first argument choose its descriptor.
func HasSubcommands(name string) bool {
	name = ascii.Upper(ascii.TrimSpace(name))
	i, ok := find(name, "")
	if ok {
		return container(i)
	}
	// No container entry: subcommands sort right after where it would be.
	return i < len(table) && table[i].name == name
}

// container reports whether the entry at i has subcommands after it.
func container(i int) bool { return i+1 < len(table) && table[i+1].name == table[i].name }

// find reports the index of name and sub in the sorted table.
func find(name, sub string) (int, bool) {
	return slices.BinarySearchFunc(table[:], [2]string{name, sub}, func(d descriptor, k [2]string) int {
		if r := strings.Compare(d.name, k[0]); r != 0 {
			return r
		}
		return strings.Compare(d.sub, k[1])
	})
}

// All returns every descriptor, sorted by name and then subcommand, a
// container before its subcommands. The slice is a new copy.
func All() []Command {
	out := make([]Command, len(table))
	for i := range table {
		out[i] = ref(i)
	}
	return out
}

// Len returns the number of commands in the catalog: [Command.Index]
// is below it.
func Len() int { return len(table) }

// Index returns the command's position in [All] (0 <= Index < [Len]), or
// -1 for a command not in the catalog (one made by [New] for a name the
// catalog does not know, or the zero Command): a dense key for per-command
// state such as metric attributes.
func (c Command) Index() int {
	if c.d == nil {
		return -1
	}
	off := uintptr(unsafe.Pointer(c.d)) - uintptr(unsafe.Pointer(&table[0]))
	i := int(off / unsafe.Sizeof(table[0]))
	if off%unsafe.Sizeof(table[0]) != 0 || i < 0 || i >= len(table) || &table[i] != c.d {
		return -1
	}
	return i
}
