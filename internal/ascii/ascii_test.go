package ascii

import "testing"

// TestFoldsASCIIOnly proves that Upper and EqualFold fold a-z and A-Z
// and nothing else (a dotless i, a long s, the Kelvin sign stay as they
// are), and that Upper returns an upper-case string without allocating.
func TestFoldsASCIIOnly(t *testing.T) {
	for in, want := range map[string]string{"": "", "get": "GET", "Client Info": "CLIENT INFO", "pıng": "PıNG", "ſet": "ſET", "x\u212Ay": "X\u212AY", "a\x00z": "A\x00Z"} {
		if got := Upper(in); got != want {
			t.Errorf("Upper(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"store", "STORE", true}, {"StOrE", "sTore", true}, {"ſtore", "STORE", false},
		{"\u212Aeys", "KEYS", false}, {"claım", "CLAIM", false}, {"keys", "KEY", false}, {"[", "{", false},
	} {
		if got := EqualFold(tt.a, tt.b); got != tt.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Upper("CLIENT") }); n != 0 {
		t.Errorf("Upper of an upper-case name allocates %v times, want none", n)
	}
}

// TestTrimSpaceASCIIOnly proves that TrimSpace trims the six ASCII white
// space bytes around a string and keeps Unicode white space (no-break
// space, next line) and the space inside.
func TestTrimSpaceASCIIOnly(t *testing.T) {
	for in, want := range map[string]string{"": "", " \t\r\n\v\f": "", " GET\t": "GET", "\u00a0": "\u00a0", "\u0085GET ": "\u0085GET", " a b ": "a b"} {
		if got := TrimSpace(in); got != want {
			t.Errorf("TrimSpace(%q) = %q, want %q", in, got, want)
		}
	}
}
