package main

import (
	"fmt"
	"strings"
)

// Retry categories, spelled as the catalog package's constants.
const (
	catNever             = "Never"
	catAlways            = "Always"
	catConnection        = "Connection"
	catReadOnly          = "ReadOnly"
	catWriteChecked      = "WriteChecked"
	catWriteLastWins     = "WriteLastWins"
	catWriteAccumulating = "WriteAccumulating"
	catServerAdmin       = "ServerAdmin"
)

// categoryOrder lists the categories in increasing risk, Never first.
var categoryOrder = []string{
	catNever, catAlways, catConnection, catReadOnly, catWriteChecked,
	catWriteLastWins, catWriteAccumulating, catServerAdmin,
}

// serverFlags maps server flags to catalog flags. Other server flags stay
// in the snapshot only.
var serverFlags = map[string]string{
	"readonly":    "FlagReadOnly",
	"write":       "FlagWrite",
	"blocking":    "FlagBlocking",
	"pubsub":      "FlagPubSub",
	"admin":       "FlagAdmin",
	"noscript":    "FlagNoScript",
	"loading":     "FlagLoading",
	"stale":       "FlagStale",
	"fast":        "FlagFast",
	"movablekeys": "FlagMovableKeys",
}

// goFlagOrder is the order of the catalog's Flag constants.
var goFlagOrder = []string{
	"FlagReadOnly", "FlagWrite", "FlagBlocking", "FlagConnectionState",
	"FlagPubSub", "FlagScripting", "FlagTransaction", "FlagAdmin", "FlagCursor",
	"FlagNoScript", "FlagLoading", "FlagStale", "FlagFast", "FlagMovableKeys",
}

// Dispatch flags the server does not report, by full command name.
var (
	connectionState = set(
		"HELLO", "AUTH", "SELECT", "RESET", "QUIT",
		"CLIENT SETNAME", "CLIENT SETINFO", "CLIENT TRACKING", "CLIENT REPLY",
		"CLIENT CACHING", "CLIENT NO-EVICT", "CLIENT NO-TOUCH", "CLIENT CAPA",
		"READONLY", "READWRITE", "ASKING",
		// These turn the connection into a monitor or replication stream.
		"MONITOR", "SYNC", "PSYNC", "REPLCONF",
		// It makes every later EVAL on the connection a debugging session,
		// answered by more than one reply, and EVALSHA an error; RESET
		// does not end it.
		"SCRIPT DEBUG",
	)
	scripting    = set("EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO")
	transaction  = set("MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH")
	cursor       = set("SCAN", "SSCAN", "HSCAN", "ZSCAN")
	extraBlocker = set("WAIT", "WAITAOF") // they hold the connection until replicas or the AOF catch up
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// goFlags returns the catalog flags of c in constant order.
func goFlags(c *specCommand) []string {
	have := map[string]bool{}
	for _, f := range c.Flags {
		if g, ok := serverFlags[f]; ok {
			have[g] = true
		}
	}
	name := c.fullName()
	if connectionState[name] {
		have["FlagConnectionState"] = true
	}
	if scripting[name] {
		have["FlagScripting"] = true
	}
	if transaction[name] {
		have["FlagTransaction"] = true
	}
	if cursor[name] {
		have["FlagCursor"] = true
	}
	if extraBlocker[name] {
		have["FlagBlocking"] = true
	}
	var out []string
	for _, f := range goFlagOrder {
		if have[f] {
			out = append(out, f)
		}
	}
	return out
}

// A class is a rule that gives every command it matches a default
// category. The first class that matches a command decides.
type class struct {
	Name     string
	Category string
	Rule     string // how a command is matched, for the document
	Why      string // the category in terms of a repeated effect
	match    func(c *specCommand, flags map[string]bool) bool
}

var classes = []class{
	{
		Name: "scripting and transactions", Category: catNever,
		Rule: "EVAL, EVALSHA, FCALL and their _RO forms; MULTI, EXEC, DISCARD, WATCH, UNWATCH",
		Why: "a script's effects are unknown to the client, and transaction state " +
			"belongs to the connection that may be gone; callers declare a category " +
			"for a script or function they know",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagScripting"] || f["FlagTransaction"] },
	},
	{
		Name: "connection state", Category: catNever,
		Rule:  "commands that change the connection (HELLO, AUTH, SELECT, RESET, QUIT, CLIENT SETNAME, CLIENT TRACKING, READONLY, MONITOR, ...)",
		Why:   "the state belongs to one connection; a resend on another connection would apply it to the wrong one",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagConnectionState"] },
	},
	{
		Name: "blocking", Category: catNever,
		Rule:  "the server's blocking flag, plus WAIT and WAITAOF",
		Why:   "a blocking command may have consumed data or waited out its time before the failure; a resend waits again",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagBlocking"] },
	},
	{
		Name: "pub/sub", Category: catNever,
		Rule:  "the server's pubsub flag (SUBSCRIBE family, PUBLISH, PUBSUB subcommands)",
		Why:   "subscriptions are connection state and their replies are streamed",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagPubSub"] },
	},
	{
		Name: "help", Category: catConnection,
		Rule:  "HELP subcommands",
		Why:   "the reply is fixed text; a repeat changes nothing",
		match: func(c *specCommand, _ map[string]bool) bool { return c.Sub == "HELP" },
	},
	{
		Name: "admin and dangerous", Category: catServerAdmin,
		Rule: "the server's admin flag; the @dangerous ACL category without the readonly flag; " +
			"script and function management (@scripting)",
		Why: "server-wide effects (data loss, configuration, replication, loaded code) that a repeat can apply twice or on top of another change",
		match: func(c *specCommand, f map[string]bool) bool {
			return f["FlagAdmin"] || (c.hasACL("dangerous") && !f["FlagReadOnly"]) || c.hasACL("scripting")
		},
	},
	{
		Name: "write", Category: catWriteAccumulating,
		Rule:  "the server's write flag",
		Why:   "unless audited otherwise, a write is assumed to add up, consume data or lose its original reply when repeated",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagWrite"] },
	},
	{
		Name: "read", Category: catReadOnly,
		Rule:  "the server's readonly flag without the write flag",
		Why:   "a repeat may return newer data; nothing changes",
		match: func(_ *specCommand, f map[string]bool) bool { return f["FlagReadOnly"] },
	},
	{
		Name: "other", Category: catNever,
		Rule:  "everything else: neither read nor write flag (containers without a subcommand, server and connection commands)",
		Why:   "not audited; recognizing a name grants nothing",
		match: func(*specCommand, map[string]bool) bool { return true },
	},
}

func classOf(c *specCommand, flags []string) *class {
	f := map[string]bool{}
	for _, g := range flags {
		f[g] = true
	}
	for i := range classes {
		if classes[i].match(c, f) {
			return &classes[i]
		}
	}
	panic("unreachable")
}

// An auditEntry settles one command's category with a reason. Entries that
// leave the class default are overrides; entries that keep it confirm the
// default for a command the audit had to settle explicitly.
type auditEntry struct {
	Name     string
	Category string
	Reason   string
}

func checkAudit() error {
	seen := map[string]bool{}
	valid := set(categoryOrder...)
	for _, a := range audit {
		if seen[a.Name] {
			return fmt.Errorf("audit: %s listed twice", a.Name)
		}
		seen[a.Name] = true
		if !valid[a.Category] {
			return fmt.Errorf("audit: %s: unknown category %q", a.Name, a.Category)
		}
		if strings.TrimSpace(a.Reason) == "" || strings.Contains(a.Reason, "\n") {
			return fmt.Errorf("audit: %s: the reason must be one line", a.Name)
		}
	}
	return nil
}
