package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/respire-go/respire"
	"go.uber.org/goleak"
)

// TestMain checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runCLI runs the command line args with env as the environment and an
// empty standard input, and returns the exit code and what was written to
// stdout and stderr.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIInput(t, env, "", false, args...)
}

// runCLIInput is [runCLI] with stdin as the standard input, a terminal
// when terminal is set.
func runCLIInput(t *testing.T, env map[string]string, stdin string, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), invocation{
		line: args, stdin: strings.NewReader(stdin), terminal: terminal,
		stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

// TestUsage: help, usage errors and their exit codes.
func TestUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // substring of stdout ("" : stdout must be empty)
		wantErr  string // substring of stderr ("" : stderr must be empty)
	}{
		{name: "help", args: []string{"help"}, wantCode: exitOK, wantOut: "respire demo [flags]"},
		{name: "--help", args: []string{"--help"}, wantCode: exitOK, wantOut: "Usage:"},
		{name: "help of a command", args: []string{"help", "do"}, wantCode: exitOK, wantOut: "Usage: respire do [flags] COMMAND [ARG...]"},
		{name: "help after flags", args: []string{"-p", "1", "help", "scan"}, wantCode: exitOK, wantOut: "Usage: respire scan"},
		{name: "help of a command after flags", args: []string{"help", "-n", "1", "ping"}, wantCode: exitOK, wantOut: "Usage: respire ping"},
		// help COMMAND lists the command's own flags, as COMMAND --help does.
		{name: "help of scan lists its flags", args: []string{"help", "scan"}, wantCode: exitOK, wantOut: "only keys matching the glob pattern"},
		{name: "help of subscribe lists its flags", args: []string{"help", "subscribe"}, wantCode: exitOK, wantOut: "the arguments are glob patterns"},
		{name: "help of demo lists its flags", args: []string{"help", "demo"}, wantCode: exitOK, wantOut: "kind of deployment at --addr"},
		{name: "empty command", args: []string{""}, wantCode: exitUsage, wantErr: "missing COMMAND"},
		{name: "help of an unknown command", args: []string{"help", "nope"}, wantCode: exitUsage, wantErr: `unknown command "nope"`},
		{name: "unknown flag", args: []string{"ping", "--nope"}, wantCode: exitUsage, wantErr: "flag provided but not defined: -nope"},
		{name: "--help of a command", args: []string{"ping", "--help"}, wantCode: exitOK, wantErr: "Usage: respire ping [flags]"},
		{name: "-help of a command", args: []string{"scan", "-help"}, wantCode: exitOK, wantErr: "-match pattern"},
		{name: "do without a command", args: []string{"do"}, wantCode: exitUsage, wantErr: "missing COMMAND"},
		{name: "ping with arguments", args: []string{"ping", "extra"}, wantCode: exitUsage, wantErr: "unexpected arguments"},
		{name: "demo with arguments", args: []string{"demo", "extra"}, wantCode: exitUsage, wantErr: "unexpected arguments"},
		{name: "bad protocol", args: []string{"ping", "--resp", "4"}, wantCode: exitUsage, wantErr: "--resp must be 2 or 3"},
		{name: "bad timeout", args: []string{"do", "--timeout", "0s", "PING"}, wantCode: exitUsage, wantErr: "--timeout must be positive"},
		{name: "bad db", args: []string{"do", "--db", "-1", "PING"}, wantCode: exitUsage, wantErr: "--db must not be negative"},
		{name: "bad address", args: []string{"ping", "--addr", "nohost"}, wantCode: exitUsage, wantErr: "invalid Options.Endpoints[0]"},
		// The demo refuses a non-loopback server before contacting it
		// (192.0.2.1 is TEST-NET-1).
		{name: "demo off loopback", args: []string{"demo", "--addr", "192.0.2.1:6379"}, wantCode: exitUsage, wantErr: "only runs against a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.wantCode, errs)
			}
			if tt.wantOut == "" && out != "" {
				t.Errorf("stdout = %q, want empty", out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out, tt.wantOut)
			}
			if tt.wantErr == "" && errs != "" {
				t.Errorf("stderr = %q, want empty", errs)
			}
			if !strings.Contains(errs, tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errs, tt.wantErr)
			}
		})
	}
}

// TestUsageNeverShowsPassword: help and usage errors never print a
// password from the environment.
func TestUsageNeverShowsPassword(t *testing.T) {
	env := map[string]string{passwordEnv: "s3cret-from-env"}
	for _, args := range [][]string{{"help", "ping"}, {"ping", "--help"}, {"ping", "--resp", "9"}, {"--help"}} {
		_, out, errs := runCLI(t, env, args...)
		if strings.Contains(out+errs, "s3cret") {
			t.Errorf("%q printed the password:\n%s%s", args, out, errs)
		}
	}
}

// TestCommandWordsFoldASCIIOnly: the command line reads command names as
// Redis does, folding a-z only: "ſubscribe" (long s) gets no SUBSCRIBE
// hint, and a successful "ſelect 1" (a module's command, say) does not
// switch the prompt's database.
func TestCommandWordsFoldASCIIOnly(t *testing.T) {
	refused := fmt.Errorf("%w: refused", respire.ErrInvalidArgument)
	for name, wantHint := range map[string]bool{"subscribe": true, "\u017fubscribe": false} {
		var out bytes.Buffer
		printFailure(&out, name, refused)
		if got := strings.Contains(out.String(), "respire subscribe"); got != wantHint {
			t.Errorf("printFailure(%q) = %q; hint shown %v, want %v", name, out.String(), got, wantHint)
		}
	}
	if db, ok := selectedDB([]string{"select", "1"}); !ok || db != 1 {
		t.Errorf("selectedDB(select 1) = %d, %v; want 1, true", db, ok)
	}
	if db, ok := selectedDB([]string{"\u017felect", "1"}); ok {
		t.Errorf("selectedDB(\u017felect 1) = %d, true; want no SELECT", db)
	}
}
