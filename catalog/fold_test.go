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

// TestTrimsASCIISpaceOnly proves that New, Lookup and HasSubcommands trim
// ASCII white space (space, \t, \r, \n, \v, \f) around a name, and only
// that: a no-break space (U+00A0) or a next line (U+0085) is part of the
// name, as on the server, which answers "GET\u00a0" unknown command.
func TestTrimsASCIISpaceOnly(t *testing.T) {
	for _, name := range []string{" get\t", "\r\nGET\v\f"} {
		if got := New(name).FullName(); got != "GET" {
			t.Errorf("New(%q).FullName() = %q, want GET", name, got)
		}
		if got, ok := Lookup(name, ""); !ok || got.FullName() != "GET" {
			t.Errorf("Lookup(%q) = %q, %v; want GET", name, got.FullName(), ok)
		}
	}
	for _, name := range []string{"GET\u00a0", "\u0085GET", "CLIENT\u00a0"} {
		if got := New(name).FullName(); got != name {
			t.Errorf("New(%q).FullName() = %q, want the name as written", name, got)
		}
		if got, ok := Lookup(name, ""); ok {
			t.Errorf("Lookup(%q) = %q; want no command", name, got.FullName())
		}
	}
	if HasSubcommands("CLIENT\u00a0") {
		t.Error(`HasSubcommands("CLIENT\u00a0") = true, want false`)
	}
	if got, ok := Lookup("config", "set\u00a0"); !ok || got.FullName() != "CONFIG" {
		t.Errorf("Lookup(config, set\\u00a0) = %q, %v; want the container CONFIG", got.FullName(), ok)
	}
	if got := New("client \u00a0info").FullName(); got != "CLIENT \u00a0INFO" {
		t.Errorf("New(client \\u00a0info).FullName() = %q, want CLIENT \\u00a0INFO", got)
	}
}
