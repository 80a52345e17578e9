package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// jsonCommand is the part of a src/commands/*.json command specification
// (the format Redis and Valkey publish) that the snapshot needs.
type jsonCommand struct {
	Summary       string      `json:"summary"`
	Group         string      `json:"group"`
	Since         string      `json:"since"`
	Arity         int         `json:"arity"`
	Container     string      `json:"container"`
	Function      string      `json:"function"`
	CommandFlags  []string    `json:"command_flags"`
	ACLCategories []string    `json:"acl_categories"`
	KeySpecs      []jsonKeySp `json:"key_specs"`
}

type jsonKeySp struct {
	BeginSearch map[string]json.RawMessage `json:"begin_search"`
	FindKeys    map[string]json.RawMessage `json:"find_keys"`
}

// rangeSpec reports the key spec as a fixed index with a key range, the only
// shape that COMMAND INFO's first, last and step describe.
func (k jsonKeySp) rangeSpec() (pos, lastkey, step int, ok bool) {
	idx, ok1 := k.BeginSearch["index"]
	rng, ok2 := k.FindKeys["range"]
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	var i struct {
		Pos int `json:"pos"`
	}
	var r struct {
		LastKey int `json:"lastkey"`
		Step    int `json:"step"`
	}
	if json.Unmarshal(idx, &i) != nil || json.Unmarshal(rng, &r) != nil {
		return 0, 0, 0, false
	}
	return i.Pos, r.LastKey, r.Step, true
}

// importJSONDir adds the commands specified in dir/*.json that s does not
// hold yet. It derives what the server would report for them: the legacy
// key range, the movablekeys flag and the implicit ACL categories.
func importJSONDir(s *snapshot, dir, origin, source string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, err
	}
	sort.Strings(files)
	added := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return added, err
		}
		var m map[string]jsonCommand
		if err := json.Unmarshal(b, &m); err != nil {
			return added, fmt.Errorf("%s: %w", f, err)
		}
		for key, jc := range m {
			sc, ok := fromJSON(key, jc)
			if !ok {
				continue
			}
			sc.Origin, sc.Source = origin, source
			if s.put(sc, false) {
				added++
			}
		}
	}
	s.addSource(source)
	return added, nil
}

func fromJSON(key string, jc jsonCommand) (*specCommand, bool) {
	if jc.Group == "sentinel" || jc.Group == "module" {
		return nil, false // served by Sentinel processes or modules, not by the server
	}
	sc := &specCommand{
		Name:    strings.ToUpper(key),
		Group:   strings.ReplaceAll(jc.Group, "_", "-"), // COMMAND DOCS spelling
		Summary: jc.Summary,
		Since:   jc.Since,
		Arity:   jc.Arity,
	}
	if jc.Container != "" {
		sc.Name, sc.Sub = strings.ToUpper(jc.Container), strings.ToUpper(key)
	}
	flags := []string{}
	for _, f := range jc.CommandFlags {
		f = strings.ToLower(f)
		if f == "only_sentinel" {
			return nil, false
		}
		switch f {
		case "sentinel", "may_replicate", "protected", "touches_arbitrary_keys":
			continue // COMMAND INFO on a 7.0 data server does not list these
		}
		flags = append(flags, f)
	}
	// Like the server, a key spec that is not a fixed index with a range
	// makes the keys movable; a get-keys function alone does not (SET).
	movable := false
	for _, k := range jc.KeySpecs {
		if _, _, _, ok := k.rangeSpec(); !ok {
			movable = true
		}
	}
	if movable {
		flags = append(flags, "movablekeys")
	}
	sc.Flags = sortByOrder(flags, flagOrder)
	sc.FirstKey, sc.LastKey, sc.KeyStep = legacyRange(jc.KeySpecs)

	acl := []string{}
	for _, a := range jc.ACLCategories {
		acl = append(acl, strings.ToLower(a))
	}
	has := func(f string) bool { return sc.hasFlag(f) }
	scripting := false
	for _, a := range acl {
		scripting = scripting || a == "scripting"
	}
	if has("write") {
		acl = append(acl, "write")
	}
	if has("readonly") && !scripting {
		acl = append(acl, "read")
	}
	if has("admin") {
		acl = append(acl, "admin", "dangerous")
	}
	if has("pubsub") {
		acl = append(acl, "pubsub")
	}
	if has("fast") {
		acl = append(acl, "fast")
	}
	if has("blocking") {
		acl = append(acl, "blocking")
	}
	fast := false
	for _, a := range acl {
		fast = fast || a == "fast"
	}
	if !fast {
		acl = append(acl, "slow")
	}
	sc.ACL = sortByOrder(acl, aclOrder)
	return sc, true
}

// legacyRange computes COMMAND INFO's first key, last key and step from key
// specs the way the server does: a single index+range spec is reported as
// is; otherwise adjacent index+range specs with step 1 are merged.
func legacyRange(specs []jsonKeySp) (first, last, step int) {
	if len(specs) == 0 {
		return 0, 0, 0
	}
	if len(specs) == 1 {
		pos, lk, st, ok := specs[0].rangeSpec()
		if !ok {
			return 0, 0, 0
		}
		return pos, absLast(pos, lk), st
	}
	first, lastAbs, prev := math.MaxInt, 0, 0
	for _, k := range specs {
		pos, lk, st, ok := k.rangeSpec()
		if !ok || st != 1 {
			continue
		}
		if prev != 0 && prev != pos-1 {
			continue
		}
		first = min(first, pos)
		abs := absLast(pos, lk)
		// A negative last key (counted from the end) beats any index.
		if abs < 0 || (lastAbs >= 0 && abs > lastAbs) {
			lastAbs = abs
		}
		prev = lastAbs
	}
	if first == math.MaxInt {
		return 0, 0, 0
	}
	return first, lastAbs, 1
}

func absLast(pos, lastkey int) int {
	if lastkey < 0 {
		return lastkey
	}
	return pos + lastkey
}
