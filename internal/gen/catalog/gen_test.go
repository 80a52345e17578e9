package main

import (
	"encoding/json"
	"testing"
)

func keySpecs(t *testing.T, s string) []jsonKeySp {
	t.Helper()
	var ks []jsonKeySp
	if err := json.Unmarshal([]byte(s), &ks); err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestLegacyRange(t *testing.T) {
	rng := func(pos, last, step int) string {
		b, _ := json.Marshal(map[string]any{
			"begin_search": map[string]any{"index": map[string]int{"pos": pos}},
			"find_keys":    map[string]any{"range": map[string]int{"lastkey": last, "step": step, "limit": 0}},
		})
		return string(b)
	}
	keynum := `{"begin_search": {"index": {"pos": 1}}, "find_keys": {"keynum": {"keynumidx": 0, "firstkey": 1, "step": 1}}}`
	tests := []struct {
		name  string
		specs string
		want  [3]int
	}{
		{"none", `[]`, [3]int{0, 0, 0}},
		{"one key", "[" + rng(1, 0, 1) + "]", [3]int{1, 1, 1}},
		{"pairs to the end", "[" + rng(1, -1, 2) + "]", [3]int{1, -1, 2}},
		{"two adjacent", "[" + rng(1, 0, 1) + "," + rng(2, 0, 1) + "]", [3]int{1, 2, 1}},
		{"dest then sources", "[" + rng(1, 0, 1) + "," + rng(2, -1, 1) + "]", [3]int{1, -1, 1}},
		{"keynum", "[" + keynum + "]", [3]int{0, 0, 0}},
	}
	for _, tt := range tests {
		f, l, s := legacyRange(keySpecs(t, tt.specs))
		if got := [3]int{f, l, s}; got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFromJSONImplicitACL(t *testing.T) {
	sc, ok := fromJSON("XCFGSET", jsonCommand{
		Group: "stream", Since: "8.6.0", Arity: -2,
		CommandFlags: []string{"WRITE", "FAST"}, ACLCategories: []string{"STREAM"},
	})
	if !ok {
		t.Fatal("not imported")
	}
	if got, want := sc.ACL, []string{"write", "stream", "fast"}; !equal(got, want) {
		t.Errorf("ACL %v, want %v", got, want)
	}
	if _, ok := fromJSON("SENTINEL", jsonCommand{Group: "sentinel"}); ok {
		t.Error("sentinel command imported")
	}
	sub, _ := fromJSON("SLOT-STATS", jsonCommand{Group: "cluster", Container: "CLUSTER", Arity: -4})
	if sub.Name != "CLUSTER" || sub.Sub != "SLOT-STATS" || !equal(sub.ACL, []string{"slow"}) {
		t.Errorf("subcommand imported as %+v", sub)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAuditAgainstSnapshot checks that the committed snapshot builds and
// that every class default and override is accounted for.
func TestAuditAgainstSnapshot(t *testing.T) {
	s, err := loadSnapshot("spec/commands.json")
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != len(s.Commands) {
		t.Fatalf("built %d of %d commands", len(cmds), len(s.Commands))
	}
	for _, c := range cmds {
		if c.audit == nil && c.category != c.class.Category {
			t.Errorf("%s: category %s without an audit entry", c.spec.fullName(), c.category)
		}
	}
}
