package respire

import (
	"strconv"
	"strings"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/internal/route"
)

// frameArgs splits a frame's (first) encoded command, an array of bulk
// strings, into its words, appended to dst; nil when the frame does not
// start with a command.
func frameArgs(buf []byte, dst [][]byte) [][]byte {
	words, _ := nextCommand(buf, dst)
	return words
}

// nextCommand splits the first encoded command of buf into its words,
// appended to dst, and returns the offset of what follows it; nil words
// when buf does not start with a command.
func nextCommand(buf []byte, dst [][]byte) ([][]byte, int) {
	if len(buf) < 4 || buf[0] != '*' {
		return nil, 0
	}
	n, i, ok := readLen(buf, 1)
	if !ok {
		return nil, 0
	}
	for ; n > 0; n-- {
		if i >= len(buf) || buf[i] != '$' {
			return nil, 0
		}
		var l int
		if l, i, ok = readLen(buf, i+1); !ok || i+l+2 > len(buf) {
			return nil, 0
		}
		dst = append(dst, buf[i:i+l])
		i += l + 2
	}
	return dst, i
}

// readLen reads a decimal length ending in CRLF at buf[i:]. A length
// beyond buf's is refused before it can overflow.
func readLen(buf []byte, i int) (n, next int, ok bool) {
	start := i
	for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
		if n = n*10 + int(buf[i]-'0'); n > len(buf) {
			return 0, 0, false
		}
		i++
	}
	if i == start || i+1 >= len(buf) || buf[i] != '\r' || buf[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}

// keySlot returns the hash slot of a command's keys (-1: no keys) and
// whether they span several slots. CLUSTER COUNTKEYSINSLOT and
// GETKEYSINSLOT have no key but name a slot, which a node answers from
// its own keys without redirecting: that slot routes them.
func keySlot(desc catalog.Command, args [][]byte) (slot int, cross bool) {
	slot = -1
	visitKeys(desc, args, func(k []byte) {
		s := route.SlotBytes(k)
		if slot >= 0 && s != slot {
			cross = true
		}
		if slot < 0 {
			slot = s
		}
	})
	if slot < 0 && desc.Name() == "CLUSTER" {
		slot = slotOperand(desc.Subcommand(), args)
	}
	return slot, cross
}

// slotOperand returns the slot that CLUSTER COUNTKEYSINSLOT or
// GETKEYSINSLOT (args: the full command) names, or -1: another
// subcommand, or a slot the server will reject, from whichever node.
func slotOperand(sub string, args [][]byte) int {
	if (sub != "COUNTKEYSINSLOT" && sub != "GETKEYSINSLOT") || len(args) < 3 {
		return -1
	}
	n, err := strconv.Atoi(string(args[2]))
	if err != nil || n < 0 || n >= route.Slots || string(args[2]) != strconv.Itoa(n) {
		return -1
	}
	return n
}

// visitKeys calls visit with each key of a command (args: its words, the
// name first). Key positions come from the catalog; for commands whose keys
// move with their arguments, from the numkeys or STREAMS argument.
func visitKeys(desc catalog.Command, args [][]byte, visit func(k []byte)) {
	// A server refuses an argument count its arity rules out before it
	// looks for keys: such a command has none, so that the server's
	// error, not a cross-slot one, answers it.
	if a := desc.Arity(); len(args) == 0 || (a > 0 && len(args) != a) || (a < 0 && len(args) < -a) {
		return
	}
	name := desc.FullName() // once: a subcommand's is built by concatenation
	if first, count, step, ok := movableKeys(name, args); ok {
		if strings.HasPrefix(name, "Z") && strings.HasSuffix(name, "STORE") && len(args) > 1 {
			visit(args[1]) // the destination
		}
		for i := 0; i < count && first+i*step < len(args); i++ {
			visit(args[first+i*step])
		}
		return
	}
	first, last, step := desc.Keys()
	if first <= 0 || first >= len(args) {
		return
	}
	if last < 0 {
		last += len(args)
	}
	last = min(last, len(args)-1)
	if step <= 0 {
		step = 1
	}
	for i := first; i <= last; i += step {
		visit(args[i])
	}
	if i := storeKey(name, args); i > 0 {
		visit(args[i])
	}
}

// storeKey returns the position of the destination key that SORT (after
// STORE) and GEORADIUS, GEORADIUSBYMEMBER (after STORE or STOREDIST)
// take besides their fixed key, 0 when there is none. As for the server,
// the last one counts, the arguments of BY, GET and LIMIT are skipped,
// and the geo options start after the unit.
func storeKey(name string, args [][]byte) (at int) {
	switch name {
	case "SORT": // SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] ... [STORE destination]
		for i := 2; i < len(args); i++ {
			switch a := string(args[i]); {
			case ascii.EqualFold(a, "LIMIT"):
				i += 2
			case ascii.EqualFold(a, "BY"), ascii.EqualFold(a, "GET"):
				i++
			case ascii.EqualFold(a, "STORE") && i+1 < len(args):
				at = i + 1
				i++
			}
		}
	case "GEORADIUS", "GEORADIUSBYMEMBER":
		// GEORADIUS key longitude latitude radius unit [options]
		// GEORADIUSBYMEMBER key member radius unit [options]
		i := 6
		if name == "GEORADIUSBYMEMBER" {
			i = 5
		}
		for ; i+1 < len(args); i++ {
			if a := string(args[i]); ascii.EqualFold(a, "STORE") || ascii.EqualFold(a, "STOREDIST") {
				at = i + 1
				i++
			}
		}
	}
	return at
}

// movableKeys finds the keys of commands whose key positions depend on
// their arguments: first position, count and step.
func movableKeys(name string, args [][]byte) (first, count, step int, ok bool) {
	// numkeys reads the count at args[first-1] of keys starting at first,
	// step apart. A count that is not a number, or that more arguments
	// than there are would have to hold, makes the server reject the
	// command: then there is no key, so that the server's error, not a
	// cross-slot one, answers (COMMAND GETKEYS finds none either, but for
	// a count with a numeric head, "1A", that it reads as 1: a keyless
	// call is redirected there, to the same error).
	numkeys := func(first, step int) (int, int, int, bool) {
		if first > len(args) {
			return first, 0, step, true
		}
		n, err := strconv.Atoi(string(args[first-1]))
		if err != nil || n < 0 || n > (len(args)-first)/step {
			return first, 0, step, true
		}
		return first, n, step, true
	}
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO", "BLMPOP", "BZMPOP",
		"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE": // the Z*STORE destination is checked by keySlot
		return numkeys(3, 1)
	case "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "SINTERCARD", "LMPOP", "ZMPOP":
		return numkeys(2, 1)
	case "MSETEX": // MSETEX numkeys key value [key value ...] [options]
		return numkeys(2, 2)
	case "MIGRATE": // MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...]
		for i := 6; i < len(args); i++ {
			switch a := string(args[i]); {
			case ascii.EqualFold(a, "AUTH"):
				i++
			case ascii.EqualFold(a, "AUTH2"):
				i += 2
			case ascii.EqualFold(a, "KEYS") && len(args[3]) > 0:
				return 0, 0, 0, true // the server rejects a key besides KEYS
			case ascii.EqualFold(a, "KEYS"):
				return i + 1, len(args) - i - 1, 1, true
			}
		}
		return 3, 1, 1, true
	case "XREAD", "XREADGROUP":
		// As the server does, skip the options' arguments to find
		// STREAMS: a group or a consumer may be named "streams".
		for i := 1; i < len(args); i++ {
			switch a := string(args[i]); {
			case ascii.EqualFold(a, "COUNT"), ascii.EqualFold(a, "BLOCK"), ascii.EqualFold(a, "CLAIM"):
				i++
			case ascii.EqualFold(a, "GROUP"):
				i += 2
			case ascii.EqualFold(a, "STREAMS"):
				n := (len(args) - i - 1) / 2
				return i + 1, n, 1, true
			}
		}
		return 0, 0, 0, true
	}
	return 0, 0, 0, false
}
