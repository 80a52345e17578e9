package respiretest

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/respire-go/respire/internal/ascii"
)

// Arguments on which the embedded engine panics or allocates without
// bound, taking the whole test process down; the hook answers them
// itself (engineCrash) or rewrites them (lposCount).

// maxRandomCount bounds the repeated elements a negative count asks of
// SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: the engine builds them all in
// memory before the reply, so a count of -100000000 exhausted it.
const maxRandomCount = 1 << 20

// maxLposCount is the largest LPOS COUNT passed on as it is: the engine
// allocates room for COUNT positions up front.
const maxLposCount = 1 << 20

// Error replies for arguments the engine cannot take.
const (
	errCountRange   = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errRandomCount  = "ERR respiretest: the embedded engine cannot return more than 1048576 random elements (a negative count builds the whole reply in memory)"
	errMaxLenNeg    = "ERR The MAXLEN argument must be >= 0."
	errStreamID     = "ERR Invalid stream ID specified as stream command argument"
	errNumFields    = "ERR The `numfields` parameter must match the number of arguments"
	errNumFieldsInt = "ERR Parameter `numFields` should be greater than 0"
	errSameStream   = "ERR respiretest: the embedded engine cannot read the same stream twice in one command (its reply would not match its header)"
	errNoScript     = "ERR This Redis command is not allowed from script"
	errNewproxy     = "ERR respiretest: the embedded engine cannot run a script that uses newproxy (Redis has no newproxy; the engine crashes on its userdata)"
)

// engineCrash returns the error reply for a command (arguments after its
// name) that would crash the engine, or that it would read with an option
// word Redis does not know (xreadFolded, xtrimCrash), or "".
func engineCrash(cmd string, args []string) string {
	switch cmd {
	case "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER":
		if len(args) < 2 {
			return ""
		}
		n, err := strconv.ParseInt(args[1], 10, 64)
		switch {
		case err != nil:
		case n == math.MinInt64:
			return errCountRange // Redis's own range
		case n < -maxRandomCount:
			return errRandomCount
		}
	case "XTRIM":
		return xtrimCrash(args)
	case "XREAD", "XREADGROUP":
		if msg := xreadFolded(cmd, args); msg != "" {
			return msg
		}
		if keys := xreadStreams(cmd, args); len(keys) > 1 {
			seen := make(map[string]bool, len(keys))
			for _, k := range keys {
				if seen[k] {
					return errSameStream
				}
				seen[k] = true
			}
		}
	case "HEXPIRE":
		return hexpireCrash(args)
	case "EVAL", "EVAL_RO":
		if len(args) > 0 && strings.Contains(args[0], "newproxy") {
			return errNewproxy
		}
	case "SCRIPT":
		if len(args) > 1 && ascii.EqualFold(args[0], "LOAD") && strings.Contains(args[1], "newproxy") {
			return errNewproxy
		}
	}
	return ""
}

// xreadStreams returns the stream keys of an XREAD or XREADGROUP
// (arguments after the name), or nil where the engine's own error answers.
func xreadStreams(cmd string, args []string) []string {
	i, ok := xreadStreamsAt(cmd, args)
	if !ok {
		return nil
	}
	rest := args[i+1:]
	if len(rest)%2 != 0 {
		return nil
	}
	return rest[:len(rest)/2]
}

// xreadStreamsAt returns the index in args (after the name) of an XREAD's
// or XREADGROUP's STREAMS, or, with ok false, of the first word that is
// no option (len(args) or more when there is none).
func xreadStreamsAt(cmd string, args []string) (i int, ok bool) {
	if cmd == "XREADGROUP" {
		i = 3 // GROUP group consumer
	}
	for i < len(args) {
		switch ascii.Upper(args[i]) {
		case "COUNT", "BLOCK":
			i += 2
		case "NOACK":
			i++
		case "STREAMS":
			return i, true
		default:
			return i, false
		}
	}
	return i, false
}

// xreadFolded returns Redis's syntax error for an XREAD or XREADGROUP
// (arguments after the name) with an option word before STREAMS that
// only the engine's Unicode folding reads as an option ("ſTREAMS", long
// s), or "".
func xreadFolded(cmd string, args []string) string {
	if i, ok := xreadStreamsAt(cmd, args); !ok && i < len(args) &&
		engineFolds(args[i], "COUNT", "BLOCK", "NOACK", "STREAMS") {
		return errSyntax
	}
	return ""
}

// engineFolds reports whether the engine, which folds option words with
// Unicode rules (strings.ToUpper, strings.ToLower), reads arg as one of
// words (upper-case ASCII) where Redis, folding a-z only, reads none of
// them: "MıNID" (dotless i) and "ſTREAMS" (long s) upper-case, and a
// Kelvin sign lower-cases, into ASCII letters.
func engineFolds(arg string, words ...string) bool {
	if isASCII(arg) {
		return false // the engine folds it as Redis does
	}
	up, low := strings.ToUpper(arg), strings.ToLower(arg)
	for _, w := range words {
		if up == w || ascii.EqualFold(low, w) {
			return true
		}
	}
	return false
}

// containers are Redis 7.0's commands with subcommands.
var containers = map[string]bool{
	"ACL": true, "CLIENT": true, "CLUSTER": true, "COMMAND": true, "CONFIG": true, "FUNCTION": true, "LATENCY": true,
	"MEMORY": true, "MODULE": true, "OBJECT": true, "PUBSUB": true, "SCRIPT": true, "SLOWLOG": true, "XGROUP": true, "XINFO": true,
}

// foreignSubcommand returns Redis's error for a command with subcommands
// (arguments after its name) whose subcommand word has a byte outside
// ASCII, a subcommand Redis does not know (the engine's Unicode folding
// reads "CLIENT ſetname" as SETNAME), or "". Like Redis it cuts the word
// to 128 bytes and turns line breaks into spaces.
func foreignSubcommand(cmd string, args []string) string {
	if !containers[cmd] || len(args) == 0 || isASCII(args[0]) {
		return ""
	}
	sub := args[0]
	if len(sub) > 128 {
		sub = sub[:128]
	}
	sub = strings.NewReplacer("\r", " ", "\n", " ").Replace(sub)
	return "ERR unknown subcommand '" + sub + "'. Try " + cmd + " HELP."
}

// scriptBlocks returns Redis's error for a command a script calls (cmd,
// arguments after the name) that would wait for another client: the
// engine waits, holding itself, so that no client is answered again.
func scriptBlocks(cmd string, args []string) string {
	switch cmd {
	case "BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP":
		return errNoScript
	case "XREAD", "XREADGROUP":
		start := 0
		if cmd == "XREADGROUP" {
			start = 3
		}
		for i := start; i < len(args); i++ {
			switch ascii.Upper(args[i]) {
			case "BLOCK":
				return "ERR " + cmd + " command is not allowed with BLOCK option from scripts"
			case "STREAMS":
				return ""
			}
		}
	}
	return ""
}

// xtrimCrash returns Redis's error for an XTRIM (key, strategy, optional
// = or ~, threshold) whose threshold is missing after = or ~ or is a
// negative MAXLEN, where the engine indexes past its arguments or trims
// to a negative length; or "".
func xtrimCrash(args []string) string {
	if len(args) < 3 {
		return "" // the engine's arity error
	}
	strategy := ascii.Upper(args[1])
	if strategy != "MAXLEN" && strategy != "MINID" {
		if engineFolds(args[1], "MAXLEN", "MINID") {
			return errSyntax // "MıNID" (dotless i): Redis does not know it
		}
		return ""
	}
	rest := args[2:]
	if rest[0] == "=" || rest[0] == "~" {
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0 && strategy == "MAXLEN":
		return errNotInteger // Redis reads the = or ~ as the count
	case len(rest) == 0:
		return errStreamID
	case strategy == "MAXLEN":
		if n, err := strconv.Atoi(rest[0]); err == nil && n < 0 {
			return errMaxLenNeg
		}
	}
	return ""
}

// hexpireCrash returns the engine's own error for a HEXPIRE (arguments
// after the name: key, TTL, options) with a FIELDS without its count or
// with a count beyond the arguments left, where the engine indexes past
// its arguments or its arithmetic overflows and it slices past them; or
// "" (also where the engine's arity or TTL error answers first).
func hexpireCrash(args []string) string {
	if len(args) < 5 {
		return ""
	}
	if _, err := strconv.Atoi(args[1]); err != nil {
		return ""
	}
	for i := 2; i < len(args); {
		switch ascii.Upper(args[i]) {
		case "NX", "XX", "GT", "LT":
			i++
			continue
		case "FIELDS":
		default:
			return "" // the engine's syntax error
		}
		if i+1 == len(args) {
			return errNumFieldsInt
		}
		n, err := strconv.Atoi(args[i+1])
		if err != nil || n <= 0 {
			return "" // the engine's own error
		}
		if n > len(args)-i-2 {
			return errNumFields
		}
		i += 2 + n
	}
	return ""
}

// scanCursor returns SSCAN's or ZSCAN's arguments (after the name) with
// a negative cursor, which the engine slices its members with, replaced by
// the largest, past every member (Redis reads a negative cursor as a huge
// unsigned one), or nil to pass them on as they are.
func scanCursor(args []string) []string {
	if len(args) < 2 {
		return nil
	}
	if n, err := strconv.ParseInt(args[1], 10, 64); err != nil || n >= 0 {
		return nil
	}
	out := slices.Clone(args)
	out[1] = strconv.FormatInt(math.MaxInt64, 10)
	return out
}

// lposCount returns LPOS's arguments (after the name) with a COUNT above
// maxLposCount replaced by 0 (all matches, the same reply for any list
// with fewer matches), or nil to pass them on as they are.
func lposCount(args []string) []string {
	for i := 2; i+1 < len(args); i += 2 {
		if !ascii.EqualFold(args[i], "COUNT") {
			continue
		}
		if n, err := strconv.ParseInt(args[i+1], 10, 64); err == nil && n > maxLposCount {
			out := slices.Clone(args)
			out[i+1] = "0"
			return out
		}
	}
	return nil
}
