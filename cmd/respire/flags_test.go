package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// closedPort returns a loopback address nobody listens on: a port the
// kernel gave a listener that is closed again.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// hostPort splits addr into the -h and -p arguments.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// TestParseArgs: flags before, between and after positional arguments,
// "--", lenient arguments that look like flags, and malformed flags.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		lenient bool
		wantPos []string
		want    connFlags // the fields compared: addr, host, port, password, db, tls, url
		wantErr string
	}{
		{name: "flags before", args: []string{"-h", "h1", "-p", "7000", "GET", "k"}, lenient: true,
			wantPos: []string{"GET", "k"}, want: connFlags{host: "h1", port: 7000}},
		{name: "flags after", args: []string{"GET", "k", "-p", "7000", "--db=2"}, lenient: true,
			wantPos: []string{"GET", "k"}, want: connFlags{port: 7000, db: 2}},
		{name: "flags between", args: []string{"SET", "-n", "3", "k", "v", "--tls"}, lenient: true,
			wantPos: []string{"SET", "k", "v"}, want: connFlags{db: 3, tls: true}},
		{name: "-- ends the flags", args: []string{"-p", "7000", "--", "SET", "-p", "--tls"}, lenient: true,
			wantPos: []string{"SET", "-p", "--tls"}, want: connFlags{port: 7000}},
		{name: "-- after the command", args: []string{"SET", "k", "--", "-n", "--"}, lenient: true,
			wantPos: []string{"SET", "k", "-n", "--"}},
		{name: "negative numbers are arguments", args: []string{"LRANGE", "k", "0", "-1", "-p", "1"}, lenient: true,
			wantPos: []string{"LRANGE", "k", "0", "-1"}, want: connFlags{port: 1}},
		{name: "a password", args: []string{"-a", "pw", "PING"}, lenient: true,
			wantPos: []string{"PING"}, want: connFlags{password: "pw"}},
		{name: "a URL", args: []string{"PING", "-u", "redis://h:1/2"}, lenient: true,
			wantPos: []string{"PING"}, want: connFlags{url: "redis://h:1/2"}},
		{name: "unknown flag before the command", args: []string{"-x", "GET"}, lenient: true,
			wantErr: "flag provided but not defined: -x"},
		{name: "unknown flag of a subcommand", args: []string{"extra", "--nope"},
			wantErr: "flag provided but not defined: -nope"},
		{name: "missing value", args: []string{"GET", "k", "-p"}, lenient: true,
			wantErr: "flag needs an argument: -p"},
		{name: "bad value", args: []string{"-p", "x"}, lenient: true,
			wantErr: `invalid value "x" for flag -p`},
		{name: "help", args: []string{"GET", "--help"}, lenient: true, wantErr: "flag: help requested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f connFlags
			fs := f.flagSet("test", defaultAddr, "test", io.Discard)
			pos, err := parseArgs(fs, tt.args, tt.lenient)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pos, tt.wantPos) {
				t.Errorf("positional = %q, want %q", pos, tt.wantPos)
			}
			want := tt.want
			if want.host == "" {
				want.host = defaultHost
			}
			if want.port == 0 {
				want.port = defaultPort
			}
			got := connFlags{host: f.host, port: f.port, password: f.password, db: f.db, tls: f.tls, url: f.url}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("flags = %+v, want %+v", got, want)
			}
		})
	}
}

// TestFindCommand: the command word follows the connection flags and
// their values, or "--".
func TestFindCommand(t *testing.T) {
	tests := []struct {
		args        []string
		index       int
		afterDashes bool
		wantErr     string
	}{
		{[]string{"GET", "k"}, 0, false, ""},
		{[]string{"-p", "1", "-a", "x", "--tls", "demo"}, 5, false, ""},
		{[]string{"--tls=true", "-n=2", "ping"}, 2, false, ""},
		{[]string{"-p", "1"}, -1, false, ""},
		{nil, -1, false, ""},
		{[]string{"-p", "1", "--", "ping"}, 3, true, ""},
		{[]string{"--"}, -1, true, ""},
		{[]string{"--match", "x", "scan"}, -1, false, "flag provided but not defined: -match"},
		{[]string{"-p"}, -1, false, "flag needs an argument: -p"},
		{[]string{"--help"}, -1, false, "help requested"},
	}
	for _, tt := range tests {
		i, dashes, err := findCommand(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("findCommand(%q): err = %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || i != tt.index || dashes != tt.afterDashes {
			t.Errorf("findCommand(%q) = %d, %v, %v; want %d, %v, nil", tt.args, i, dashes, err, tt.index, tt.afterDashes)
		}
	}
}

// TestOptions: the address, credentials, database and TLS the flags and
// -u URLs give, and the combinations refused.
func TestOptions(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      string // RESPIRE_PASSWORD
		wantAddr string
		wantUser string
		wantPW   string
		wantDB   int
		wantTLS  bool
		wantErr  string
	}{
		{name: "defaults", wantAddr: "127.0.0.1:6379"},
		{name: "-h", args: []string{"-h", "example.com"}, wantAddr: "example.com:6379"},
		{name: "-p", args: []string{"-p", "6380"}, wantAddr: "127.0.0.1:6380"},
		{name: "-h IPv6", args: []string{"-h", "::1", "-p", "7"}, wantAddr: "[::1]:7"},
		{name: "--addr", args: []string{"--addr", "h:9"}, wantAddr: "h:9"},
		{name: "-a -n --tls", args: []string{"-a", "pw", "-n", "4", "--tls"}, wantAddr: "127.0.0.1:6379", wantPW: "pw", wantDB: 4, wantTLS: true},
		{name: "environment password", env: "envpw", wantAddr: "127.0.0.1:6379", wantPW: "envpw"},
		{name: "flag over environment", args: []string{"--password", "pw"}, env: "envpw", wantAddr: "127.0.0.1:6379", wantPW: "pw"},
		{name: "URL", args: []string{"-u", "redis://alice:pw@h.example:7000/3"}, wantAddr: "h.example:7000", wantUser: "alice", wantPW: "pw", wantDB: 3},
		{name: "URL defaults", args: []string{"-u", "redis://h.example"}, wantAddr: "h.example:6379"},
		{name: "URL password only", args: []string{"-u", "redis://:pw@h"}, wantAddr: "h:6379", wantPW: "pw"},
		{name: "URL and environment", args: []string{"-u", "redis://h"}, env: "envpw", wantAddr: "h:6379", wantPW: "envpw"},
		{name: "rediss URL", args: []string{"-u", "rediss://h:6380"}, wantAddr: "h:6380", wantTLS: true},
		{name: "URL IPv6", args: []string{"-u", "redis://[::1]:7000/1"}, wantAddr: "[::1]:7000", wantDB: 1},
		{name: "URL with -h", args: []string{"-u", "redis://h", "-h", "x"}, wantErr: "-u gives the address, user, password, database and TLS in its URL: do not combine it with -h"},
		{name: "URL with several", args: []string{"-u", "redis://h", "-p", "1", "--tls", "-a", "x", "-n", "1"}, wantErr: "do not combine it with -p, --tls, -a, -n"},
		{name: "URL with --addr", args: []string{"--addr", "h:1", "-u", "redis://h"}, wantErr: "do not combine it with --addr"},
		{name: "bad URL scheme", args: []string{"-u", "http://h"}, wantErr: "-u: respire: invalid URL: scheme must be"},
		{name: "bad URL database", args: []string{"-u", "redis://h/x"}, wantErr: "-u: respire: invalid URL: database must be"},
		{name: "--addr with -p", args: []string{"--addr", "h:1", "-p", "2"}, wantErr: "--addr and -h/-p both give the server's address"},
		{name: "port out of range", args: []string{"-p", "70000"}, wantErr: "-p must be a port from 1 through 65535"},
		{name: "empty host", args: []string{"-h", ""}, wantErr: "-h must not be empty"},
		{name: "negative -n", args: []string{"-n", "-1"}, wantErr: "-n/--db must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f connFlags
			if _, code, ok := parse("ping", &f, tt.args, io.Discard, false); !ok {
				t.Fatalf("parse: exit %d", code)
			}
			o, err := f.options(func(string) string { return tt.env })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Endpoints) != 1 || o.Endpoints[0] != tt.wantAddr || f.addr != tt.wantAddr {
				t.Errorf("endpoints %q, addr %q; want %q", o.Endpoints, f.addr, tt.wantAddr)
			}
			if o.Username != tt.wantUser || o.Password != tt.wantPW || o.DB != tt.wantDB || (o.TLS != nil) != tt.wantTLS {
				t.Errorf("user %q, password %q, db %d, TLS %v; want %q, %q, %d, %v",
					o.Username, o.Password, o.DB, o.TLS != nil, tt.wantUser, tt.wantPW, tt.wantDB, tt.wantTLS)
			}
			if o.DialTimeout != defaultTimeout || o.CommandTimeout != defaultTimeout {
				t.Errorf("timeouts %v, %v; want %v", o.DialTimeout, o.CommandTimeout, defaultTimeout)
			}
		})
	}
}

// TestOptionsURLTimeouts: --timeout and --resp apply over a URL; the
// URL's own values stand without them.
func TestOptionsURLTimeouts(t *testing.T) {
	var f connFlags
	parse("ping", &f, []string{"-u", "redis://h?dial_timeout=1s&protocol=2"}, io.Discard, false)
	o, err := f.options(nil)
	if err != nil || o.DialTimeout != time.Second || o.CommandTimeout != defaultTimeout || o.Protocol != 2 {
		t.Errorf("options = %v, %v, %d, %v; want 1s, 5s, 2, nil", o.DialTimeout, o.CommandTimeout, o.Protocol, err)
	}
	f = connFlags{}
	parse("ping", &f, []string{"-u", "redis://h?dial_timeout=1s&protocol=2", "--timeout", "3s", "--resp", "3"}, io.Discard, false)
	o, err = f.options(nil)
	if err != nil || o.DialTimeout != 3*time.Second || o.CommandTimeout != 3*time.Second || o.Protocol != 3 {
		t.Errorf("options = %v, %v, %d, %v; want 3s, 3s, 3, nil", o.DialTimeout, o.CommandTimeout, o.Protocol, err)
	}
}

// TestCommandLineForms sends commands to the embedded server with the
// flags before, after and around the command, with and without do, and
// with -- before arguments that look like flags.
func TestCommandLineForms(t *testing.T) {
	srv := respiretest.NewServer(t)
	host, port := hostPort(t, srv.Addr())
	url := "redis://" + srv.Addr() + "/0"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-h", host, "-p", port, "SET", "k", "v1"}, "OK\n"},
		{[]string{"GET", "k", "-h", host, "-p", port}, "\"v1\"\n"},
		{[]string{"-h", host, "GET", "k", "-p", port}, "\"v1\"\n"},
		{[]string{"-p", port, "do", "GET", "k", "-h", host}, "\"v1\"\n"},
		{[]string{"-u", url, "SET", "k", "--", "-p"}, "OK\n"},
		{[]string{"GET", "k", "-u", url}, "\"-p\"\n"},
		{[]string{"--addr", srv.Addr(), "--", "SET", "k", "--tls"}, "OK\n"},
		{[]string{"--addr", srv.Addr(), "GET", "k"}, "\"--tls\"\n"},
		{[]string{"--addr", srv.Addr(), "RPUSH", "l", "a", "b", "c"}, "(integer) 3\n"},
		{[]string{"--addr", srv.Addr(), "LRANGE", "l", "0", "-2"}, "1) \"a\"\n2) \"b\"\n"},
		{[]string{"--addr", srv.Addr(), "INCRBY", "n", "-5"}, "(integer) -5\n"},
		// After --, "ping" is the Redis command, not the subcommand.
		{[]string{"--addr", srv.Addr(), "--", "ping"}, "PONG\n"},
		{[]string{"ping", "--addr", srv.Addr()}, "PONG (round trip"},
		{[]string{"--addr", srv.Addr(), "-n", "1", "SET", "k", "db1"}, "OK\n"},
		{[]string{"--addr", srv.Addr(), "GET", "k", "--db", "1"}, "\"db1\"\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, nil, tt.args...)
		if code != exitOK || errs != "" || !strings.HasPrefix(out, tt.want) {
			t.Errorf("respire %q: exit %d, stdout %q, stderr %q; want 0, %q", tt.args, code, out, errs, tt.want)
		}
	}
	// A server error prints like redis-cli, on standard error, exit 1.
	code, out, errs := runCLI(t, nil, "--addr", srv.Addr(), "INCR", "k")
	if code != exitFail || out != "" || errs != "(error) ERR value is not an integer or out of range\n" {
		t.Errorf("INCR of a string: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestFlagErrors: conflicting or malformed connection flags are usage
// errors that name the flags, before any dial.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-u", "redis://127.0.0.1:1", "-h", "127.0.0.1", "PING"}, "respire: -u gives the address, user, password, database and TLS in its URL: do not combine it with -h\n"},
		{[]string{"GET", "k", "-u", "redis://127.0.0.1:1", "-p", "1"}, "do not combine it with -p"},
		{[]string{"--addr", "127.0.0.1:1", "-h", "x", "GET", "k"}, "--addr and -h/-p both give the server's address"},
		{[]string{"-u", "redis://127.0.0.1:1/x", "PING"}, "-u: respire: invalid URL: database must be a non-negative number"},
		{[]string{"-x", "PING"}, "respire: flag provided but not defined: -x\nRun 'respire help' for usage.\n"},
		{[]string{"GET", "k", "-p"}, "respire: flag needs an argument: -p\nUsage: respire [flags] [COMMAND [ARG...]] (respire help lists the flags)\n"},
		{[]string{"-u", "redis://:pw-2b7c@127.0.0.1:1/x", "PING", "--no-auth-warning"}, "-u: respire: invalid URL: database must be"},
		{[]string{"-p"}, "flag needs an argument: -p"},
		{[]string{"do", "-p", "1"}, "missing COMMAND"},
		{[]string{"demo", "--tls"}, "the demo does not run over TLS"},
		{[]string{"demo", "-u", "redis+cluster://127.0.0.1:1"}, "the demo takes a redis:// URL"},
		{[]string{"demo", "-u", "redis://192.0.2.1:6379"}, "only runs against a loopback address"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, nil, tt.args...)
		if strings.Contains(errs, "pw-2b7c") {
			t.Errorf("respire %q printed the password: %q", tt.args, errs)
		}
		if code != exitUsage || out != "" || !strings.Contains(errs, tt.wantErr) {
			t.Errorf("respire %q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errs, tt.wantErr)
		}
	}
}

// TestGluedPasswordNeverPrinted: a password glued to its flag (-aPASSWORD,
// as other tools take it) names no flag; the error says how to give it
// without repeating it.
func TestGluedPasswordNeverPrinted(t *testing.T) {
	const secret = "pw-2b7c"
	for _, args := range [][]string{
		{"-a" + secret, "PING"},
		{"ping", "-a" + secret},
		{"--password" + secret, "PING"},
		{"-password" + secret},
	} {
		code, out, errs := runCLI(t, nil, args...)
		if strings.Contains(out+errs, secret) {
			t.Errorf("respire %q printed the password: %q", args, errs)
		}
		if code != exitUsage || !strings.Contains(errs, "-a PASSWORD") {
			t.Errorf("respire %q: exit %d, stderr %q; want 2 and how to give the password", args, code, errs)
		}
	}
}

// TestRefusedDial: a dial nobody answers says that the connection was
// refused and where, for a command, ping and the interactive mode.
func TestRefusedDial(t *testing.T) {
	addr := closedPort(t)
	host, port := hostPort(t, addr)
	want := "respire: could not connect to " + addr + ": connection refused"
	for _, args := range [][]string{
		{"-h", host, "-p", port, "GET", "k"},
		{"ping", "--addr", addr},
		{"-u", "redis://" + addr},
	} {
		code, out, errs := runCLI(t, nil, args...)
		if code != exitFail || out != "" || !strings.HasPrefix(errs, want) || strings.Contains(errs, "connection lost") {
			t.Errorf("respire %q: exit %d, stdout %q, stderr %q; want 1 and %q", args, code, out, errs, want)
		}
	}
}

// TestTLS: --tls and rediss:// speak TLS; a certificate the system does
// not trust says so. The server is an HTTPS test server: the handshake
// fails before any Redis frame.
func TestTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors the client causes
	ts.StartTLS()
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()
	want := "respire: could not connect to " + addr + ": the server's TLS certificate did not verify: x509: "
	for _, args := range [][]string{
		{"--addr", addr, "--tls", "PING"},
		{"-u", "rediss://" + addr, "PING"},
	} {
		code, out, errs := runCLI(t, nil, args...)
		if code != exitFail || out != "" || !strings.HasPrefix(errs, want) {
			t.Errorf("respire %q: exit %d, stdout %q, stderr %q; want 1 and %q", args, code, out, errs, want)
		}
	}
}

// TestAuthFailure: credentials the server refuses say that
// authentication failed, and where.
func TestAuthFailure(t *testing.T) {
	srv := respiretest.NewServer(t)
	srv.Engine().RequireAuth("right")
	const secret = "wrong-7c1e"
	code, out, errs := runCLI(t, nil, "--addr", srv.Addr(), "-a", secret, "--no-auth-warning", "PING")
	if code != exitFail || out != "" || !strings.HasPrefix(errs, "respire: authentication failed at "+srv.Addr()+": WRONGPASS") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and an authentication failure", code, out, errs)
	}
	if strings.Contains(errs, secret) {
		t.Errorf("the password was printed: %q", errs)
	}
	code, out, errs = runCLI(t, map[string]string{passwordEnv: "right"}, "--addr", srv.Addr(), "PING")
	if code != exitOK || out != "PONG\n" || errs != "" {
		t.Errorf("with the right password: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestAuthFailureAtSentinelPrimary: when the primary a sentinel named
// refuses the credentials, the authentication failure names that
// primary, not the sentinel the user configured.
func TestAuthFailureAtSentinelPrimary(t *testing.T) {
	data := respiretest.NewServer(t)
	data.Engine().RequireAuth("right")
	data.MustAddRule(t, respiretest.Rule{Command: "ROLE", Times: respiretest.Always, Action: respiretest.Reply(resp.AppendValue(nil,
		resp.Value{Type: resp.Array, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte("master")}, {Type: resp.Integer}, {Type: resp.Array}}}, 2))})
	sentinel := respiretest.NewServer(t)
	host, port, _ := net.SplitHostPort(data.Addr())
	for arg, reply := range map[string]resp.Value{
		"GET-MASTER-ADDR-BY-NAME": {Type: resp.Array, Elems: []resp.Value{{Type: resp.BulkString, Str: []byte(host)}, {Type: resp.BulkString, Str: []byte(port)}}},
		"REPLICAS":                {Type: resp.Array},
		"SENTINELS":               {Type: resp.Array},
	} {
		sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: arg, Times: respiretest.Always, Action: respiretest.Reply(resp.AppendValue(nil, reply, 2))})
	}
	const secret = "wrong-5b2f"
	code, out, errs := runCLI(t, nil, "-u", "redis+sentinel://:"+secret+"@"+sentinel.Addr()+"/p", "--no-auth-warning", "PING")
	if want := "respire: authentication failed at " + data.Addr() + ": WRONGPASS"; code != exitFail || out != "" || !strings.HasPrefix(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", code, out, errs, want)
	}
	if strings.Contains(errs, secret) {
		t.Errorf("the password was printed: %q", errs)
	}
}

// TestPasswordWarning: a password on the command line (-a, --password or
// in -u's URL) prints a warning without the password, unless
// --no-auth-warning; RESPIRE_PASSWORD prints none.
func TestPasswordWarning(t *testing.T) {
	srv := respiretest.NewServer(t)
	srv.Engine().RequireAuth("pw-4d1a")
	_, port := hostPort(t, srv.Addr())
	tests := []struct {
		env    map[string]string
		args   []string
		warn   bool
		wantOK bool // the server accepted the password
	}{
		{nil, []string{"-p", port, "-a", "pw-4d1a", "PING"}, true, true},
		{nil, []string{"PING", "-p", port, "--password=pw-4d1a"}, true, true},
		{nil, []string{"-u", "redis://:pw-4d1a@" + srv.Addr(), "PING"}, true, true},
		{nil, []string{"-u", "redis://" + srv.Addr(), "PING"}, false, false},
		{nil, []string{"-p", port, "-a", "pw-4d1a", "--no-auth-warning", "PING"}, false, true},
		{map[string]string{passwordEnv: "pw-4d1a"}, []string{"-p", port, "PING"}, false, true},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.env, tt.args...)
		if tt.warn != strings.Contains(errs, passwordWarning) {
			t.Errorf("respire %q: stderr %q; want the warning: %v", tt.args, errs, tt.warn)
		}
		if strings.Contains(out+errs, "pw-4d1a") {
			t.Errorf("respire %q printed the password: %q", tt.args, out+errs)
		}
		if ok := code == exitOK && out == "PONG\n"; ok != tt.wantOK {
			t.Errorf("respire %q: exit %d, stdout %q; want success: %v", tt.args, code, out, tt.wantOK)
		}
	}
}

// TestDatabaseOutOfRange: a database the server does not have says so and
// where, not that the connection was lost, for -n and -u's path.
func TestDatabaseOutOfRange(t *testing.T) {
	addr := testenv.Standalone(t)
	want := "respire: could not select database 99999 at " + addr + ": ERR DB index is out of range\n"
	for _, args := range [][]string{
		{"--addr", addr, "-n", "99999", "GET", "k"},
		{"-u", "redis://" + addr + "/99999", "GET", "k"},
	} {
		code, out, errs := runCLI(t, nil, args...)
		if code != exitFail || out != "" || errs != want {
			t.Errorf("respire %q: exit %d, stdout %q, stderr %q; want 1 and %q", args, code, out, errs, want)
		}
	}
}
