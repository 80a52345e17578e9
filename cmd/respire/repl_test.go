package main

import (
	"context"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respiretest"
)

// TestSplitLine: words, both quotes, the escapes, and malformed quoting.
func TestSplitLine(t *testing.T) {
	tests := []struct {
		line    string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"   \t ", nil, ""},
		{"GET k", []string{"GET", "k"}, ""},
		{"  SET   k \t v  ", []string{"SET", "k", "v"}, ""},
		{`SET k "hello world"`, []string{"SET", "k", "hello world"}, ""},
		{`SET k "a\nb\r\t\\\"\a\b"`, []string{"SET", "k", "a\nb\r\t\\\"\a\b"}, ""},
		{`SET k "\x41\x7a\xff\x00"`, []string{"SET", "k", "Az\xff\x00"}, ""},
		{`SET k "\x4g"`, []string{"SET", "k", "x4g"}, ""}, // not two hex digits: \x is x
		{`SET k "\q"`, []string{"SET", "k", "q"}, ""},
		{`SET k 'it''`, nil, "must be followed by a space"},
		{`SET k 'it\'s "raw" \n'`, []string{"SET", "k", `it's "raw" \n`}, ""},
		{`SET k ""`, []string{"SET", "k", ""}, ""},
		{`SET k ''`, []string{"SET", "k", ""}, ""},
		{`SET a"b c"`, []string{"SET", "ab c"}, ""},
		{`SET k "unterminated`, nil, "unbalanced quotes"},
		{`SET k 'unterminated`, nil, "unbalanced quotes"},
		{`SET k "ends in backslash\`, nil, "unbalanced quotes"},
		{`SET k "a"b`, nil, "the closing quote at column 9 must be followed by a space"},
		{`SET k 'a'"b"`, nil, "must be followed by a space"},
		{"ECHO \"caf\xc3\xa9\"", []string{"ECHO", "caf\xc3\xa9"}, ""},
	}
	for _, tt := range tests {
		got, err := splitLine(tt.line)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("splitLine(%q) = %q, %v; want error %q", tt.line, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitLine(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

// connectEmbedded returns a client of srv.
func connectEmbedded(t *testing.T, srv *respiretest.Server) *respire.Client {
	t.Helper()
	c, err := respire.Connect(context.Background(), respire.Options{Endpoints: []string{srv.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestInteract drives the interactive loop with lines of input and
// compares the transcript.
func TestInteract(t *testing.T) {
	srv := respiretest.NewServer(t)
	c := connectEmbedded(t, srv)
	in := strings.Join([]string{
		`SET k "hello\x21 world"`,
		"",
		"get k",
		"GET missing",
		"RPUSH l a 'b c'",
		"LRANGE l 0 -1",
		"INCR k",
		`SET k "open`,
		"SELECT 1",
		`""`,
		"DEL k",
		"QUIT",
		"GET l", // after quit: never sent
	}, "\n") + "\n"
	var out strings.Builder
	ok := interact(context.Background(), c, strings.NewReader(in), &out, "p> ")
	if ok {
		t.Error("interact reported success, want failure (INCR of a string failed)")
	}
	got := out.String()
	want := strings.Join([]string{
		"p> OK",
		"p> p> \"hello! world\"",
		"p> (nil)",
		"p> (integer) 2",
		"p> 1) \"a\"",
		"2) \"b c\"",
		"p> (error) ERR value is not an integer or out of range",
		"p> (error) unbalanced quotes",
		"p> ",
	}, "\n")
	if !strings.HasPrefix(got, want) {
		t.Fatalf("transcript:\n%s\nwant it to start with:\n%s", got, want)
	}
	// SELECT runs on a connection of the mode's own (TestInteractSession),
	// in database 1 from then on, where k does not exist; then the empty
	// name, DEL and quit.
	if rest, want := strings.TrimPrefix(got, want), "OK\np[1]> (error) empty command name\np[1]> (integer) 0\np[1]> "; rest != want {
		t.Errorf("transcript after SELECT: %q, want %q", rest, want)
	}
}

// TestInteractEndings: the loop ends at the end of input (a last line
// without a newline is still sent), at exit, and when ctx ends; with no
// prompt nothing but replies is written.
func TestInteractEndings(t *testing.T) {
	srv := respiretest.NewServer(t)
	c := connectEmbedded(t, srv)
	tests := []struct {
		name, in, prompt, want string
	}{
		{"end of input", "PING\nECHO x", "", "PONG\n\"x\"\n"},
		{"exit", "PING\nexit\nPING\n", "", "PONG\n"},
		{"quit with arguments", "Quit now\nPING\n", "", ""},
		{"end of input with a prompt", "PING\n", "> ", "> PONG\n> \n"},
		{"empty input", "", "", ""},
	}
	for _, tt := range tests {
		var out strings.Builder
		if ok := interact(context.Background(), c, strings.NewReader(tt.in), &out, tt.prompt); !ok || out.String() != tt.want {
			t.Errorf("%s: ok %v, output %q; want true, %q", tt.name, ok, out.String(), tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	// A reader that never returns would block the loop; a canceled ctx
	// ends it while it waits. blockingReader unblocks at cleanup.
	r := newBlockingReader()
	defer r.release()
	if ok := interact(ctx, c, r, &out, "> "); !ok || out.String() != "> \n" {
		t.Errorf("canceled: ok %v, output %q; want true, %q", ok, out.String(), "> \n")
	}
}

// blockingReader is an io.Reader whose Read blocks until release.
type blockingReader struct{ ch chan struct{} }

// newBlockingReader returns a blockingReader that blocks until release.
func newBlockingReader() *blockingReader { return &blockingReader{make(chan struct{})} }

// Read blocks until release, then reports the end of input.
func (b *blockingReader) Read([]byte) (int, error) {
	<-b.ch
	return 0, io.EOF
}

// release unblocks Read.
func (b *blockingReader) release() { close(b.ch) }

// TestInteractiveMode runs the program without a command: it reads the
// commands from standard input, prompts with the address when standard
// input is a terminal, and exits 1 when it is not and a command failed.
func TestInteractiveMode(t *testing.T) {
	srv := respiretest.NewServer(t)
	host, port := hostPort(t, srv.Addr())
	code, out, errs := runCLIInput(t, nil, "SET k v\nGET k\n", true, "-h", host, "-p", port)
	if want := srv.Addr() + "> OK\n" + srv.Addr() + "> \"v\"\n" + srv.Addr() + "> \n"; code != exitOK || out != want || errs != "" {
		t.Errorf("terminal: exit %d, stdout %q, stderr %q; want 0, %q", code, out, errs, want)
	}
	code, out, errs = runCLIInput(t, nil, "SET k v\nGET k\n", true, "-u", "redis://"+srv.Addr()+"/2")
	if p := srv.Addr() + "[2]> "; code != exitOK || !strings.HasPrefix(out, p+"OK\n"+p) || errs != "" {
		t.Errorf("database 2: exit %d, stdout %q, stderr %q; want the prompt %q", code, out, errs, p)
	}
	code, out, errs = runCLIInput(t, nil, "GET k\nINCR k\nPING\n", false, "--addr", srv.Addr())
	if want := "\"v\"\n(error) ERR value is not an integer or out of range\nPONG\n"; code != exitFail || out != want || errs != "" {
		t.Errorf("piped: exit %d, stdout %q, stderr %q; want 1, %q", code, out, errs, want)
	}
	code, out, _ = runCLIInput(t, nil, "INCR k\n", true, "--addr", srv.Addr())
	if code != exitOK || !strings.Contains(out, "(error) ERR") {
		t.Errorf("terminal with a failed command: exit %d, stdout %q; want 0 and the error", code, out)
	}
	addr := closedPort(t)
	code, out, errs = runCLIInput(t, nil, "PING\n", true, "--addr", addr)
	if want := "respire: could not connect to " + addr + ": connection refused"; code != exitFail || out != "" || !strings.HasPrefix(errs, want) {
		t.Errorf("refused: exit %d, stdout %q, stderr %q; want 1 and %q", code, out, errs, want)
	}
}

// TestStdinIsTerminal: the null device is a character device but no
// terminal, so "respire < /dev/null" (cron, a service) prints no prompt;
// a regular file is no terminal either.
func TestStdinIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if stdinIsTerminal(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	file, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if stdinIsTerminal(file) {
		t.Error("a regular file is taken for a terminal")
	}
}

// TestInteractSession: a command the shared connection refuses but a
// connection of one's own serves (SELECT, MULTI) moves the mode to such a
// connection, whose state lasts for the lines after it (the database, the
// transaction) and shows in the prompt; a command refused there too
// leaves it; when that connection fails, the mode says its state is gone
// and goes back to the shared connection.
func TestInteractSession(t *testing.T) {
	srv := respiretest.NewServer(t)
	srv.MustAddRule(t, respiretest.Rule{Command: "ECHO", Arg: "drop", Action: respiretest.DropBeforeForward})
	c := connectEmbedded(t, srv)
	in := strings.Join([]string{
		"SET k db0",
		"SELECT 2",
		"GET k",
		"SET k db2",
		"MULTI",
		"INCR n",
		"INCR n",
		"EXEC",
		"SUBSCRIBE ch",
		"GET k",
		"ECHO drop",
		"GET k",
	}, "\n") + "\n"
	var out strings.Builder
	if ok := interact(context.Background(), c, strings.NewReader(in), &out, "p> "); ok {
		t.Error("interact reported success, want failure (SUBSCRIBE was refused)")
	}
	want := []string{
		"p> OK",
		"p> OK",
		"p[2]> (nil)",
		"p[2]> OK",
		"p[2]> OK",
		"p[2]> QUEUED",
		"p[2]> QUEUED",
		"p[2]> 1) (integer) 1",
		"2) (integer) 2",
		"p[2]> respire: SUBSCRIBE: invalid argument: refused on a dedicated connection",
		`respire: to print the messages of channels, run "respire subscribe CHANNEL..."`,
		`p[2]> "db2"`,
		"p[2]> respire: ECHO: ",
		"respire: the session's own connection is gone, and with it its state (MULTI, WATCH, SELECT, ...); the next commands go to the shared connection",
		`p> "db0"`,
		"p> ", // the end of input: a newline after the prompt
		"",
	}
	got := strings.Split(out.String(), "\n")
	if len(got) != len(want) {
		t.Fatalf("transcript:\n%s\nwant %d lines", out.String(), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q, want it to start with %q", i+1, got[i], want[i])
		}
	}
}

// TestWithDB: the prompt shows the selected database in brackets, and
// none for database 0; an empty prompt stays empty.
func TestWithDB(t *testing.T) {
	tests := []struct {
		prompt string
		db     int
		want   string
	}{
		{"127.0.0.1:6379> ", 3, "127.0.0.1:6379[3]> "},
		{"127.0.0.1:6379[3]> ", 0, "127.0.0.1:6379> "},
		{"127.0.0.1:6379[3]> ", 12, "127.0.0.1:6379[12]> "},
		{"[::1]:6379> ", 1, "[::1]:6379[1]> "},
		{"", 4, ""},
	}
	for _, tt := range tests {
		if got := withDB(tt.prompt, tt.db); got != tt.want {
			t.Errorf("withDB(%q, %d) = %q, want %q", tt.prompt, tt.db, got, tt.want)
		}
	}
}
