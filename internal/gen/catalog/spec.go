package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// snapshot is the committed spec snapshot: facts about every command the
// catalog describes, normalized so that a refresh produces a small diff.
type snapshot struct {
	// Sources says where the facts came from, one line per capture.
	Sources []string `json:"sources"`
	// Commands are sorted by name, then subcommand.
	Commands []*specCommand `json:"commands"`
}

// specCommand holds the facts about one command or subcommand.
type specCommand struct {
	Name     string   `json:"name"`          // upper case: "CONFIG"
	Sub      string   `json:"sub,omitempty"` // upper case: "SET", or ""
	Group    string   `json:"group"`         // COMMAND DOCS group: "server"
	Summary  string   `json:"summary"`       // COMMAND DOCS one-line summary
	Since    string   `json:"since"`         // version of Origin that added it
	Origin   string   `json:"origin"`        // "redis" or "valkey"
	Source   string   `json:"source"`        // which capture produced the entry
	Arity    int      `json:"arity"`
	Flags    []string `json:"flags"` // server flags, lower case, server order
	FirstKey int      `json:"first_key"`
	LastKey  int      `json:"last_key"`
	KeyStep  int      `json:"key_step"`
	ACL      []string `json:"acl"` // ACL categories without '@', server order
}

func (c *specCommand) fullName() string {
	if c.Sub == "" {
		return c.Name
	}
	return c.Name + " " + c.Sub
}

func (c *specCommand) hasFlag(f string) bool {
	for _, g := range c.Flags {
		if g == f {
			return true
		}
	}
	return false
}

func (c *specCommand) hasACL(a string) bool {
	for _, g := range c.ACL {
		if g == a {
			return true
		}
	}
	return false
}

func loadSnapshot(path string) (*snapshot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s snapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.normalize()
	return &s, nil
}

// normalize sorts the commands and the sources and checks for duplicates.
func (s *snapshot) normalize() {
	sort.Slice(s.Commands, func(i, j int) bool {
		a, b := s.Commands[i], s.Commands[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Sub < b.Sub
	})
	for _, c := range s.Commands {
		if c.Flags == nil {
			c.Flags = []string{}
		}
		if c.ACL == nil {
			c.ACL = []string{}
		}
	}
}

func (s *snapshot) save(path string) error {
	s.normalize()
	var buf bytes.Buffer
	buf.WriteString("{\n  \"sources\": [\n")
	for i, src := range s.Sources {
		b, _ := json.Marshal(src)
		buf.WriteString("    ")
		buf.Write(b)
		if i < len(s.Sources)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ],\n  \"commands\": [\n")
	// One command per line keeps refresh diffs readable.
	for i, c := range s.Commands {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		buf.WriteString("    ")
		buf.Write(b)
		if i < len(s.Commands)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ]\n}\n")
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// aclOrder is the order in which the server lists ACL categories.
var aclOrder = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// flagOrder is the order in which the server lists command flags.
var flagOrder = []string{
	"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
	"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking",
	"fast", "no_auth", "may_replicate", "sentinel", "only_sentinel",
	"no_mandatory_keys", "protected", "module_getkeys", "module_no_cluster",
	"no_async_loading", "no_multi", "movablekeys", "allow_busy",
	"module_getchannels", "touches_arbitrary_keys",
}

func sortByOrder(xs []string, order []string) []string {
	rank := make(map[string]int, len(order))
	for i, x := range order {
		rank[x] = i
	}
	out := append([]string{}, xs...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, iok := rank[out[i]]
		rj, jok := rank[out[j]]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		default:
			return out[i] < out[j]
		}
	})
	return dedup(out)
}

func dedup(xs []string) []string {
	out := xs[:0]
	for i, x := range xs {
		if i > 0 && x == xs[i-1] {
			continue
		}
		out = append(out, x)
	}
	return out
}

func splitName(name string) (string, string) {
	name = strings.ToUpper(name)
	if i := strings.IndexByte(name, '|'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}
