package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// table is the demo's table parsed by column: rows[ID][COLUMN]. The
// detail lines under a row are columns too, named by their label in upper
// case (RESULT, RETRIES, NOTE, NODE, WHY).
type table map[string]map[string]string

// parseTable finds the table in the demo's output, splits each row at the
// column starts of the header, and reads the detail lines under each row
// (their continuation lines joined with a space).
func parseTable(t *testing.T, out string) table {
	t.Helper()
	lines := strings.Split(out, "\n")
	hdr := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "ID  ") {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		t.Fatalf("no table header in output:\n%s", out)
	}
	header := []rune(lines[hdr])
	var names []string
	var starts []int
	for i := 0; i < len(header); i++ {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
			j := i
			for j < len(header) && header[j] != ' ' {
				j++
			}
			names = append(names, string(header[i:j]))
		}
	}
	tab := table{}
	var row map[string]string
	label := ""
	cont := strings.Repeat(" ", len(detailIndent)+detailLabel)
	for _, l := range lines[hdr+1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		switch {
		case strings.HasPrefix(l, cont):
			if row == nil || label == "" {
				t.Fatalf("continuation line without a detail line: %q", l)
			}
			row[label] += " " + strings.TrimSpace(l)
			continue
		case strings.HasPrefix(l, detailIndent):
			if row == nil {
				t.Fatalf("detail line before the first row: %q", l)
			}
			name, value, _ := strings.Cut(strings.TrimSpace(l), " ")
			label = strings.ToUpper(name)
			row[label] = strings.TrimSpace(value)
			continue
		}
		r := []rune(l)
		row = map[string]string{}
		label = ""
		for c, name := range names {
			end := len(r)
			if c+1 < len(starts) {
				end = min(starts[c+1], len(r))
			}
			if starts[c] < len(r) {
				row[name] = strings.TrimSpace(string(r[starts[c]:end]))
			}
		}
		tab[row["ID"]] = row
	}
	return tab
}

// checkWidth fails unless every line of out fits in maxWidth columns.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, n, maxWidth, l)
		}
	}
}

// demoWant is what the table must show for one scenario.
type demoWant struct {
	result   string // exact RESULT, or a prefix when it ends with "..."
	sends    string
	executed string
	retries  string
	note     string // substring of NOTE
}

// demoWants are the specified rows of the six scenarios.
var demoWants = map[string]demoWant{
	"a": {result: `"hello"`, sends: "2", executed: "2", retries: "attempted=1 succeeded=1"},
	"b": {result: "respire: INCR: connection lost; the command may have been executed...", sends: "1", executed: "1", retries: "-", note: `10 -> "11"`},
	"c": {result: "12", sends: "2", executed: "2", retries: "attempted=1 succeeded=1", note: `10 -> "12"`},
	"d": {result: "not set", sends: "2", executed: "2", retries: "attempted=1 succeeded=1", note: `wrote the key (now "first")`},
	"e": {result: `"hello"`, sends: "4", executed: "1", retries: "attempted=3 succeeded=1"},
	"f": {result: "respire: GET: BUSY Redis is busy running a script...", sends: "1", executed: "0", retries: "-"},
}

// checkDemoTable checks the rows of the demo's output against demoWants
// and the width of its lines.
func checkDemoTable(t *testing.T, out string) {
	t.Helper()
	tab := parseTable(t, out)
	if len(tab) != len(demoWants) {
		t.Errorf("table has %d rows, want %d:\n%s", len(tab), len(demoWants), out)
	}
	for id, want := range demoWants {
		row, ok := tab[id]
		if !ok {
			t.Errorf("no row %s", id)
			continue
		}
		if p, ok := strings.CutSuffix(want.result, "..."); ok {
			if !strings.HasPrefix(row["RESULT"], p) {
				t.Errorf("%s: RESULT = %q, want prefix %q", id, row["RESULT"], p)
			}
		} else if row["RESULT"] != want.result {
			t.Errorf("%s: RESULT = %q, want %q", id, row["RESULT"], want.result)
		}
		for _, c := range []struct{ col, want string }{
			{"SENDS", want.sends}, {"EXECUTED", want.executed}, {"RETRIES", want.retries}, {"CHECK", "ok"},
		} {
			// Against a shared server the demo re-measures a scenario that
			// other clients disturbed; a re-measured row that passed is "ok"
			// too, with a WHY line.
			if got := row[c.col]; got != c.want {
				t.Errorf("%s: %s = %q, want %q", id, c.col, row[c.col], c.want)
			}
		}
		if !strings.Contains(row["NOTE"], want.note) {
			t.Errorf("%s: NOTE = %q, want it to contain %q", id, row["NOTE"], want.note)
		}
	}
	checkWidth(t, out)
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestDemoEmbedded runs the demo on its embedded server in RESP2 and
// RESP3.
func TestDemoEmbedded(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, "demo", "--resp", proto)
			if code != exitOK {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s\nstdout:\n%s", code, errs, out)
			}
			if errs != "" {
				t.Errorf("stderr = %q, want empty", errs)
			}
			checkDemoTable(t, out)
			if !strings.Contains(out, "all 6 scenarios behaved as specified") {
				t.Errorf("no success line in output:\n%s", out)
			}
		})
	}
}

// TestDemoSelfCheckFails shows that the demo's check catches a scenario
// that does not behave as specified: scenario c's specification is given
// the default policy, under which the INCR is not resent.
func TestDemoSelfCheckFails(t *testing.T) {
	scs := scenarios()
	var wrong []scenario
	for _, sc := range scs {
		if sc.id == "c" {
			sc.policy.MaxCommandRetryCategory = 0 // default: read_only
			wrong = append(wrong, sc)
		}
	}
	env := embeddedEnv(t)
	var out bytes.Buffer
	passed, err := runScenarios(context.Background(), &out, env, wrong)
	if err != nil {
		t.Fatal(err)
	}
	if passed {
		t.Fatalf("passed = true, want false:\n%s", out.String())
	}
	checkWidth(t, out.String())
	row := parseTable(t, out.String())["c"]
	if row["CHECK"] != "FAIL" {
		t.Errorf("CHECK = %q, want FAIL", row["CHECK"])
	}
	for _, want := range []string{"sends 1, want 2", "executed 1, want 2", "retries -, want attempted=1 succeeded=1"} {
		if !strings.Contains(row["WHY"], want) {
			t.Errorf("WHY = %q, want it to contain %q", row["WHY"], want)
		}
	}
	if !strings.Contains(out.String(), "SOME SCENARIOS DID NOT BEHAVE AS SPECIFIED") {
		t.Errorf("no failure line in output:\n%s", out.String())
	}
}

// embeddedEnv returns the embedded server's environment, closed at the
// end of the test.
func embeddedEnv(t *testing.T) *demoEnv {
	t.Helper()
	env, err := newEnv(context.Background(), &demoFlags{conn: connFlags{timeout: 5 * time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.close)
	return env
}

// TestDemoDisturbedCounts simulates other clients of a shared server: the
// server-wide count grows by extra GETs during the first tries of every
// scenario. The demo measures again, and fails a scenario whose every try
// was disturbed instead of reporting other clients' commands as its own.
func TestDemoDisturbedCounts(t *testing.T) {
	tests := []struct {
		name      string
		noisy     int // tries disturbed per scenario
		wantCheck string
		wantWhy   string
		wantPass  bool
	}{
		{"once", 1, "ok", "try 2 passed; other clients ran GET during the earlier ones", true},
		{"always", maxTries, "FAIL", "executed 7, want 2; other clients ran GET during each of 3 tries; EXECUTED includes theirs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := embeddedEnv(t)
			exact := env.executed
			calls := 0 // executed is called twice per try: before and after
			env.shared = true
			env.executed = func(ctx context.Context, node *demoNode, command string) (int64, error) {
				n, err := exact(ctx, node, command)
				calls++
				if calls%2 == 0 && calls/2 <= tt.noisy {
					n += 5 // other clients' GETs
				}
				return n, err
			}
			var out bytes.Buffer
			passed, err := runScenarios(context.Background(), &out, env, scenarios()[:1])
			if err != nil {
				t.Fatal(err)
			}
			if passed != tt.wantPass {
				t.Errorf("passed = %v, want %v", passed, tt.wantPass)
			}
			row := parseTable(t, out.String())["a"]
			if row["CHECK"] != tt.wantCheck || row["WHY"] != tt.wantWhy {
				t.Errorf("CHECK = %q, WHY = %q; want %q, %q", row["CHECK"], row["WHY"], tt.wantCheck, tt.wantWhy)
			}
			checkWidth(t, out.String())
			if t.Failed() {
				t.Logf("output:\n%s", out.String())
			}
		})
	}
}

// TestDemoUnreachableServer: a demo that cannot reach its server fails
// with exit code 1 and says why and where, as the other commands do.
func TestDemoUnreachableServer(t *testing.T) {
	addr := closedPort(t)
	code, _, errs := runCLI(t, nil, "demo", "--addr", addr, "--timeout", "2s")
	if code != exitFail {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitFail, errs)
	}
	want := "respire demo: could not connect to " + addr + ": connection refused"
	if !strings.HasPrefix(errs, want) || strings.Contains(errs, "connection lost") {
		t.Errorf("stderr = %q, want %q", errs, want)
	}
}

// TestDemoRealServer runs the demo against a redis-server of its own: its
// EXECUTED column is the server's INFO commandstats, which the shared
// test server would mix with other packages' GETs running in parallel.
func TestDemoRealServer(t *testing.T) {
	testenv.Standalone(t) // the real-server tests run (or are required) together
	addr := testenv.StartRedis(t, testenv.RedisServerPath(t), 0).Addr
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, "demo", "--addr", addr, "--resp", proto)
			if code != exitOK {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s\nstdout:\n%s", code, errs, out)
			}
			checkDemoTable(t, out)
		})
	}
}

// TestDemoFitsIn120Columns: every line of the demo on its embedded server
// fits in a 120-column terminal.
func TestDemoFitsIn120Columns(t *testing.T) {
	code, out, errs := runCLI(t, nil, "demo")
	if code != exitOK {
		t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, errs)
	}
	if maxWidth != 120 {
		t.Fatalf("maxWidth = %d, want 120", maxWidth)
	}
	checkWidth(t, out)
}

// TestWriteWrapped: lines break at spaces within maxWidth, with the
// continuation prefix; a longer word stays whole.
func TestWriteWrapped(t *testing.T) {
	long := strings.Repeat("x", maxWidth+5)
	tests := []struct{ text, want string }{
		{"a b", "> a b\n"},
		{"", "> \n"},
		{strings.Repeat("word ", 30), "> " + strings.TrimSpace(strings.Repeat("word ", 23)) + "\n  " + strings.TrimSpace(strings.Repeat("word ", 7)) + "\n"},
		{"a " + long + " b", "> a\n  " + long + "\n  b\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeWrapped(&b, tt.text, "> ", "  ")
		if b.String() != tt.want {
			t.Errorf("writeWrapped(%q) = %q, want %q", tt.text, b.String(), tt.want)
		}
	}
}

// TestParseCommandCalls reads calls= from INFO commandstats lines.
func TestParseCommandCalls(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_get:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_incr:calls=3,usec=9,usec_per_call=3.00,rejected_calls=1,failed_calls=0\r\n"
	tests := []struct {
		command string
		want    int64
	}{
		{"GET", 12}, {"incr", 3}, {"SET", 0}, {"GE", 0},
	}
	for _, tt := range tests {
		got, err := parseCommandCalls(info, tt.command)
		if err != nil || got != tt.want {
			t.Errorf("parseCommandCalls(%q) = %d, %v; want %d, nil", tt.command, got, err, tt.want)
		}
	}
	if _, err := parseCommandCalls("cmdstat_get:calls=x,usec=1\r\n", "GET"); err == nil {
		t.Error("parseCommandCalls accepted calls=x")
	}
}

// The kit's embedded server must not need a testing.TB for the demo.
var _ func(...respiretest.Option) (*respiretest.Server, error) = respiretest.StartServer
