package respire

import (
	"errors"
	"strings"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
)

// The server folds the case of command names and option words for a-z
// only. A raw command whose name holds a letter that Unicode folding
// turns into an ASCII one ("ſet" with a long s) is sent as written, and
// the server answers it "unknown command": the client neither sends SET
// in its place nor takes it for one.
func TestRawCommandNameFoldsASCIIOnly(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	for _, name := range []string{"ſet", "ſEt"} {
		_, err := c.Do(ctx, NewCommand(name), k, "v")
		var se *ServerError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "unknown command") {
			t.Errorf("Do(%q) = %v, want the server's unknown command", name, err)
		}
	}
	if v, err := c.Get(ctx, k); !errors.Is(err, ErrNil) {
		t.Errorf("GET = %q, %v after the unknown commands, want ErrNil (nothing set)", v, err)
	}
}

// NewCommand trims ASCII white space around a name, and only that: "GET"
// with a no-break space (U+00A0) after it is sent as written, the server
// answers it "unknown command", and no GET runs.
func TestRawCommandNameKeepsUnicodeSpace(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "k")
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	before := commandCalls(t, addr, "get")
	for _, name := range []string{"GET\u00a0", "\u0085GET"} {
		_, err := c.Do(ctx, NewCommand(name), k)
		var se *ServerError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "unknown command") {
			t.Errorf("Do(%q) = %v, want the server's unknown command", name, err)
		}
	}
	if n := commandCalls(t, addr, "get") - before; n != 0 {
		t.Errorf("the server ran GET %d times, want 0", n)
	}
	if v, err := c.Do(ctx, NewCommand(" get\t"), k); err != nil {
		t.Errorf("Do(\" get\\t\") = %v, want GET's reply (ASCII space trimmed)", err)
	} else if s, _ := v.String(); s != "v" {
		t.Errorf("Do(\" get\\t\") = %q, want v", s)
	}
}

// The client reads option words as the server does, folding a-z only:
// "ſtore" (long s) is no STORE, "\u212Aeys" (Kelvin sign) no KEYS,
// "claım" (dotless i) no CLAIM, so the keys and the blocking the client
// finds are the ones the server would find.
func TestOptionWordsFoldASCIIOnly(t *testing.T) {
	words := func(ws ...string) [][]byte { return wordsOf(ws) }
	a := "{tag}a"
	slot := route.Slot(a)
	other := "x"
	for route.Slot(other) == slot {
		other += "x"
	}
	for _, tt := range []struct {
		name string
		cmd  catalog.Command
		args [][]byte
		slot int
	}{
		{"SORT ſtore", catalog.Generic.SORT(), words("SORT", a, "ſtore", other), slot},
		{"SORT ſtore after BY", catalog.Generic.SORT(), words("SORT", a, "BY", "p", "ſtore", other), slot},
		{"GEORADIUS ſtoredist", catalog.Geo.GEORADIUS(), words("GEORADIUS", a, "15", "37", "200", "km", "ſtoredist", other), slot},
		{"MIGRATE Kelvin keys", catalog.Generic.MIGRATE(), words("MIGRATE", "127.0.0.1", "1", a, "0", "100", "\u212Aeys", other), slot},
		{"XREAD ſtreams", catalog.Stream.XREAD(), words("XREAD", "ſtreams", a, other, "0", "0"), -1},
		{"XREAD Kelvin block", catalog.Stream.XREAD(), words("XREAD", "bloc\u212A", "STREAMS", a, "0"), slot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, cross := keySlot(tt.cmd, tt.args); got != tt.slot || cross {
				t.Errorf("keySlot = %d, %v; want %d, false", got, cross, tt.slot)
			}
		})
	}
	// A CLAIM spelled with a dotless i takes no argument away from the
	// BLOCK after it; a BLOCK of a Kelvin sign is no BLOCK.
	for _, tt := range []struct {
		args     []string
		blocking bool
	}{
		{[]string{"claım", "BLOCK", "0", "STREAMS", "k", "0"}, true},
		{[]string{"bloc\u212A", "0", "STREAMS", "k", "0"}, false},
		{[]string{"ſtreams", "BLOCK", "0", "STREAMS", "k", "0"}, true},
	} {
		if got := dispatchOf(NewCommand("XREAD"), words(tt.args...)).blocking; got != tt.blocking {
			t.Errorf("XREAD %q: blocking %v, want %v", tt.args, got, tt.blocking)
		}
	}
	// A declared cursor command named "ſcan" is no SCAN: its cursor is
	// its second argument, as for HSCAN and kin.
	if !isContinuation(NewCommand("ſcan").FullName(), words("0")) {
		t.Error(`"ſcan 0" read as a SCAN's first page`)
	}
}
