package catalog

import "testing"

// TestLookupFoldsASCIIOnly proves that command names and subcommands fold
// their case as Redis does, a-z only: a name with a non-ASCII letter that
// Unicode upper-cases to an ASCII one ("pıng" with a dotless i, "ſet"
// with a long s) is no command the catalog knows, as the server answers
// it "unknown command", and New keeps such a letter as it is.
func TestLookupFoldsASCIIOnly(t *testing.T) {
	for _, tt := range []struct{ name, sub, want string }{
		{"pıng", "", ""},
		{"ſet", "", ""},
		{"ſcan", "", ""},
		{"config", "ſet", "CONFIG"}, // the container, not CONFIG SET
		{"clıent", "ınfo", ""},
		{"Ping", "", "PING"},
		{"config", "Set", "CONFIG SET"},
	} {
		got, ok := Lookup(tt.name, tt.sub)
		if ok != (tt.want != "") || got.FullName() != tt.want {
			t.Errorf("Lookup(%q, %q) = %q, %v; want %q", tt.name, tt.sub, got.FullName(), ok, tt.want)
		}
	}
	for name, want := range map[string]bool{"clıent": false, "ſcript": false, "Client": true} {
		if got := HasSubcommands(name); got != want {
			t.Errorf("HasSubcommands(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]string{"ſet": "ſET", "pıng": "PıNG", "clıent ınfo": "CLıENT ıNFO", "client info": "CLIENT INFO"} {
		if got := New(name).FullName(); got != want {
			t.Errorf("New(%q).FullName() = %q, want %q", name, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Lookup("GET", ""); HasSubcommands("CLIENT") }); n != 0 {
		t.Errorf("Lookup and HasSubcommands of upper-case names allocate %v times, want none", n)
	}
}
