package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
)

// TestPing: ping prints PONG and the round trip in RESP2 and RESP3.
func TestPing(t *testing.T) {
	addr := testenv.Standalone(t)
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, "ping", "--addr", addr, "--resp", proto)
			if code != exitOK || errs != "" {
				t.Fatalf("exit code = %d, stderr = %q; want 0 and nothing", code, errs)
			}
			if !regexp.MustCompile(`^PONG \(round trip [0-9.]+(ns|µs|ms|s)\)\n$`).MatchString(out) {
				t.Errorf("stdout = %q, want PONG and the round-trip time", out)
			}
		})
	}
}

// TestPingUnreachable: ping of a port nobody listens on says the
// connection was refused there.
func TestPingUnreachable(t *testing.T) {
	addr := closedPort(t)
	code, out, errs := runCLI(t, nil, "ping", "--addr", addr, "--timeout", "1s")
	if code != exitFail || out != "" {
		t.Errorf("exit code = %d, stdout = %q; want 1 and nothing", code, out)
	}
	if want := "could not connect to " + addr + ": connection refused"; !strings.Contains(errs, want) {
		t.Errorf("stderr = %q, want %q", errs, want)
	}
}

// TestSentinelURLNotASentinel: a redis+sentinel:// URL naming a server
// that is not a sentinel is a usage error that says so, not a server
// refusing the connection's setup.
func TestSentinelURLNotASentinel(t *testing.T) {
	addr := testenv.Standalone(t)
	code, out, errs := runCLI(t, nil, "-u", "redis+sentinel://"+addr+"/respire-primary", "PING")
	if code != exitUsage || out != "" {
		t.Errorf("exit code = %d, stdout = %q; want %d and nothing", code, out, exitUsage)
	}
	for _, want := range []string{"Options.Sentinel.Addrs", addr + ": the server is not a sentinel"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr = %q, want %q", errs, want)
		}
	}
	if strings.Contains(errs, "refused the connection") {
		t.Errorf("stderr = %q, want no connection setup refused", errs)
	}
}

// TestDo: do prints each kind of reply like redis-cli.
func TestDo(t *testing.T) {
	addr := testenv.Standalone(t)
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			k := "respire:cmdtest:" + t.Name() + ":"
			do := func(args ...string) (int, string, string) {
				t.Helper()
				return runCLI(t, nil, append([]string{"do", "--addr", addr, "--resp", proto}, args...)...)
			}
			cleanup := func() { do("DEL", k+"s", k+"n", k+"l", k+"h", k+"missing") }
			cleanup()
			t.Cleanup(cleanup)

			hash := "1) \"f\"\n2) \"v\"\n"
			if proto == "3" {
				hash = "1# \"f\" => \"v\"\n"
			}
			tests := []struct {
				args []string
				want string
			}{
				{[]string{"SET", k + "s", "hello world"}, "OK\n"},
				{[]string{"get", k + "s"}, "\"hello world\"\n"}, // the name is case-insensitive
				{[]string{"GET", k + "missing"}, "(nil)\n"},
				{[]string{"INCR", k + "n"}, "(integer) 1\n"},
				{[]string{"RPUSH", k + "l", "a", "b"}, "(integer) 2\n"},
				{[]string{"LRANGE", k + "l", "0", "-1"}, "1) \"a\"\n2) \"b\"\n"},
				{[]string{"LRANGE", k + "missing", "0", "-1"}, "(empty array)\n"},
				{[]string{"HSET", k + "h", "f", "v"}, "(integer) 1\n"},
				{[]string{"HGETALL", k + "h"}, hash},
				{[]string{"CONFIG GET", "maxmemory-policy"}, map[string]string{"2": "1) \"maxmemory-policy\"\n2) \"noeviction\"\n", "3": "1# \"maxmemory-policy\" => \"noeviction\"\n"}[proto]},
				{[]string{"CONFIG", "GET", "maxmemory-policy"}, map[string]string{"2": "1) \"maxmemory-policy\"\n2) \"noeviction\"\n", "3": "1# \"maxmemory-policy\" => \"noeviction\"\n"}[proto]},
			}
			for _, tt := range tests {
				code, out, errs := do(tt.args...)
				if code != exitOK || errs != "" {
					t.Errorf("do %q: exit code = %d, stderr = %q; want 0 and nothing", tt.args, code, errs)
				}
				if out != tt.want {
					t.Errorf("do %q: stdout = %q, want %q", tt.args, out, tt.want)
				}
			}
		})
	}
}

// TestDoErrorReply: an error reply prints as "(error) ..." on standard
// error with exit status 1.
func TestDoErrorReply(t *testing.T) {
	addr := testenv.Standalone(t)
	k := "respire:cmdtest:" + t.Name()
	runCLI(t, nil, "do", "--addr", addr, "SET", k, "text")
	t.Cleanup(func() { runCLI(t, nil, "do", "--addr", addr, "DEL", k) })
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"INCR", k}, "(error) ERR value is not an integer or out of range\n"},
		{[]string{"NOSUCHCOMMAND", "x"}, "(error) ERR unknown command 'NOSUCHCOMMAND', with args beginning with: 'x' \n"},
		{[]string{"GET"}, "(error) ERR wrong number of arguments for 'get' command\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, nil, append([]string{"do", "--addr", addr}, tt.args...)...)
		if code != exitFail || out != "" {
			t.Errorf("do %q: exit code = %d, stdout = %q; want 1 and nothing", tt.args, code, out)
		}
		if errs != tt.want {
			t.Errorf("do %q: stderr = %q, want %q", tt.args, errs, tt.want)
		}
	}
}

// TestPasswordNeverPrinted authenticates as a user that does not exist, so
// the server rejects the password, with the password from the flag and
// from RESPIRE_PASSWORD; neither output shows it.
func TestPasswordNeverPrinted(t *testing.T) {
	addr := testenv.Standalone(t)
	const secret = "s3cret-9d2f"
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"ping", "--addr", addr, "--user", "respire-no-such-user", "--password", secret}},
		{"environment", map[string]string{passwordEnv: secret}, []string{"ping", "--addr", addr, "--user", "respire-no-such-user"}},
		{"do", map[string]string{passwordEnv: secret}, []string{"do", "--addr", addr, "--user", "respire-no-such-user", "ECHO", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.env, tt.args...)
			if code != exitFail {
				t.Errorf("exit code = %d, want %d", code, exitFail)
			}
			if !strings.Contains(errs, "WRONGPASS") {
				t.Errorf("stderr = %q, want WRONGPASS (the password was not sent?)", errs)
			}
			if strings.Contains(out+errs, secret) {
				t.Errorf("the password was printed:\n%s%s", out, errs)
			}
		})
	}
}

// TestDoRefusesStateCommands: do prints the client's refusal and exits 1
// at once instead of hanging on a subscribed or transactional connection.
func TestDoRefusesStateCommands(t *testing.T) {
	addr := testenv.Standalone(t)
	for _, args := range [][]string{{"SUBSCRIBE", "ch"}, {"MONITOR"}, {"MULTI"}, {"CLIENT", "REPLY", "OFF"}, {"SELECT", "1"}} {
		code, out, errs := runCLI(t, nil, append([]string{"do", "--addr", addr, "--timeout", "2s"}, args...)...)
		if code != exitFail || out != "" {
			t.Errorf("do %q: exit code = %d, stdout = %q; want 1 and nothing", args, code, out)
		}
		name := args[0]
		if args[0] == "CLIENT" {
			name = "CLIENT REPLY"
		}
		if !strings.Contains(errs, name+": invalid argument: refused on the shared connection") || !strings.Contains(errs, "; ") {
			t.Errorf("do %q: stderr = %q, want the refusal naming %s and where it belongs", args, errs, name)
		}
	}
}

// TestDoBlockingCommand: a blocking command runs on its own connection and
// returns when the server's timeout ends.
func TestDoBlockingCommand(t *testing.T) {
	addr := testenv.Standalone(t)
	k := "respire:cmdtest:" + t.Name()
	code, out, errs := runCLI(t, nil, "do", "--addr", addr, "BLPOP", k, "0.1")
	if code != exitOK || errs != "" || out != "(nil)\n" {
		t.Errorf("do BLPOP: exit %d, stdout %q, stderr %q; want 0, (nil)", code, out, errs)
	}
}

// TestSubscribe: subscribe prints the published messages, one line each,
// and exits after --count of them.
func TestSubscribe(t *testing.T) {
	addr := testenv.Standalone(t)
	ch := "respire:cmdtest:" + t.Name()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runCLI(t, nil, "subscribe", "--addr", addr, "--count", "2", ch)
		done <- result{code, out, errs}
	}()
	// Publish until the subscriber has received both (PUBLISH replies how
	// many subscribers got each message).
	got := 0
	for i := 0; got < 2; i++ {
		select {
		case r := <-done:
			t.Fatalf("subscribe ended early: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		default:
		}
		payload := "m" + strconv.Itoa(got)
		if got == 1 {
			payload += "\n" + ch + ": forged" // still one message, one line
		}
		_, out, _ := runCLI(t, nil, "do", "--addr", addr, "PUBLISH", ch, payload)
		if out == "(integer) 1\n" {
			got++
		}
	}
	r := <-done
	if want := ch + ": m0\n" + ch + ": \"m1\\n" + ch + ": forged\"\n"; r.code != exitOK || r.out != want || r.err != "" {
		t.Fatalf("subscribe: exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.out, r.err, want)
	}
	if code, _, errs := runCLI(t, nil, "subscribe", "--addr", addr); code != exitUsage || errs == "" {
		t.Fatalf("subscribe without channels: exit %d, stderr %q; want 2", code, errs)
	}
}

// TestMessageLine: a message is one line whatever its bytes, so a
// publisher cannot forge a second message with a newline; a channel or
// payload that could be misread is quoted like redis-cli quotes a bulk
// string, others print as they are.
func TestMessageLine(t *testing.T) {
	tests := []struct{ channel, payload, want string }{
		{"news", "hello world", "news: hello world\n"},
		{"news", "", "news: \n"},
		{"news", "héllo", "news: héllo\n"},
		{"news", "a\nother: forged", "news: \"a\\nother: forged\"\n"},
		{"news", "tab\there\r", "news: \"tab\\there\\r\"\n"},
		{"news", "\xff\x00", "news: \"\\xff\\x00\"\n"},
		{"news", `"quoted"`, `news: "\"quoted\""` + "\n"},
		{"a\nb", "x", "\"a\\nb\": x\n"},
		{"a: b", "x", "\"a: b\": x\n"},
	}
	for _, tt := range tests {
		if got := messageLine(tt.channel, tt.payload); got != tt.want {
			t.Errorf("messageLine(%q, %q) = %q, want %q", tt.channel, tt.payload, got, tt.want)
		}
	}
}

// TestRefusalNamesTheCommandLineWay: a command the shared connection
// refuses whose purpose the command line serves otherwise (subscribing,
// another database, credentials) says how, after the client's refusal,
// which names the Go API a command-line user cannot call.
func TestRefusalNamesTheCommandLineWay(t *testing.T) {
	addr := testenv.Standalone(t)
	tests := []struct {
		args []string
		hint string
		// interactive: the interactive mode refuses it too; it runs the
		// others on a connection of its own (TestInteractSession).
		interactive bool
	}{
		{[]string{"SUBSCRIBE", "ch"}, "respire subscribe CHANNEL", true},
		{[]string{"psubscribe", "ch*"}, "respire subscribe --pattern PATTERN", true},
		{[]string{"SELECT", "1"}, "-n", false},
		{[]string{"AUTH", "pw"}, "RESPIRE_PASSWORD", false},
		{[]string{"HELLO", "3"}, "--resp", true},
	}
	for _, tt := range tests {
		code, _, errs := runCLI(t, nil, append([]string{"do", "--addr", addr}, tt.args...)...)
		if code != exitFail || !strings.Contains(errs, "refused on the shared connection") || !strings.Contains(errs, tt.hint) {
			t.Errorf("do %q: exit %d, stderr %q; want 1, the refusal and %q", tt.args, code, errs, tt.hint)
		}
		_, out, _ := runCLIInput(t, nil, strings.Join(tt.args, " ")+"\n", false, "--addr", addr)
		if strings.Contains(out, tt.hint) != tt.interactive {
			t.Errorf("interactive %q: stdout %q; want the hint %q: %v", tt.args, out, tt.hint, tt.interactive)
		}
	}
}
