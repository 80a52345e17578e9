package wire

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
)

const secret = "s3cret-Pa55"

// TestHandshake proves which commands the handshake sends, in order, and
// the protocol it settles on, for each server behaviour and Config.
func TestHandshake(t *testing.T) {
	unknownHello := func(args []string) []byte {
		if args[0] == "HELLO" {
			return resp.AppendError(nil, "ERR unknown command 'HELLO'")
		}
		return defaultReply(args)
	}
	noproto := func(args []string) []byte {
		if args[0] == "HELLO" {
			return resp.AppendError(nil, "NOPROTO unsupported protocol version")
		}
		return defaultReply(args)
	}
	// An ACL without hello (Valkey, Redis 7.2+, a proxy) refuses HELLO
	// before it runs: the credentials were not tried.
	nopermHello := func(args []string) []byte {
		if args[0] == "HELLO" {
			return resp.AppendError(nil, "NOPERM User u has no permissions to run the 'hello' command")
		}
		return defaultReply(args)
	}
	// Redis before 6 echoes the arguments of an unknown command.
	echoingOld := func(args []string) []byte {
		if args[0] == "HELLO" {
			return resp.AppendError(nil, "ERR unknown command `HELLO`, with args beginning with: `"+strings.Join(args[1:], "`, `")+"`, ")
		}
		return defaultReply(args)
	}
	tests := []struct {
		name   string
		cfg    Config
		handle func([]string) []byte
		proto  int
		cmds   []string
	}{
		{"HELLO 3 carries AUTH and SETNAME, then SELECT", Config{Password: secret, ClientName: "app", DB: 2}, nil, 3,
			[]string{"HELLO 3 AUTH default " + secret + " SETNAME app", "SELECT 2"}},
		{"HELLO 3 with a username", Config{Username: "u", Password: secret}, nil, 3,
			[]string{"HELLO 3 AUTH u " + secret}},
		{"HELLO 3 alone", Config{}, nil, 3, []string{"HELLO 3"}},
		{"unknown HELLO falls back to RESP2: AUTH, CLIENT SETNAME, SELECT", Config{Password: secret, ClientName: "app", DB: 3}, unknownHello, 2,
			[]string{"HELLO 3 AUTH default " + secret + " SETNAME app", "AUTH " + secret, "CLIENT SETNAME app", "SELECT 3"}},
		{"RESP2 fallback AUTH with a username", Config{Username: "u", Password: secret}, unknownHello, 2,
			[]string{"HELLO 3 AUTH u " + secret, "AUTH u " + secret}},
		{"NOPROTO falls back to RESP2", Config{Password: secret}, noproto, 2,
			[]string{"HELLO 3 AUTH default " + secret, "AUTH " + secret}},
		{"NOPERM on HELLO falls back to RESP2: AUTH, CLIENT SETNAME, SELECT", Config{Username: "u", Password: secret, ClientName: "app", DB: 3}, nopermHello, 2,
			[]string{"HELLO 3 AUTH u " + secret + " SETNAME app", "AUTH u " + secret, "CLIENT SETNAME app", "SELECT 3"}},
		{"an old server echoing the arguments still falls back", Config{Password: secret}, echoingOld, 2,
			[]string{"HELLO 3 AUTH default " + secret, "AUTH " + secret}},
		{"Proto 2 forced sends no HELLO", Config{Proto: 2, Password: secret, ClientName: "app", DB: 1}, nil, 2,
			[]string{"AUTH " + secret, "CLIENT SETNAME app", "SELECT 1"}},
		{"Proto 2 forced, nothing to prepare", Config{Proto: 2}, nil, 2, nil},
		{"Proto 3 forced", Config{Proto: 3, DB: 4}, nil, 3, []string{"HELLO 3", "SELECT 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeServer(t, tt.handle)
			cfg := tt.cfg
			cfg.Addr, cfg.Dial = "fake:6379", s.dial
			c, err := Dial(context.Background(), cfg, nil)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			if got := c.Proto(); got != tt.proto {
				t.Errorf("Proto() = %d, want %d", got, tt.proto)
			}
			if got := s.received(); !slices.Equal(got, tt.cmds) {
				t.Errorf("server received\n  %q\nwant\n  %q", got, tt.cmds)
			}
			// The prepared connection carries frames.
			f := newFrame(WantBytes, "PING")
			submit(t, c, f)
			waitOK(t, f)
			if string(f.Bytes) != "PONG" {
				t.Errorf("PING got %q, want PONG", f.Bytes)
			}
			f.Release()
			if s.dials != 1 {
				t.Errorf("dial hook called %d times, want 1", s.dials)
			}
		})
	}
}

// TestRestoreReplaysTheHandshake proves that after RESET the restore sends
// exactly the commands the handshake sent for the same Config, so a
// restored connection is authenticated as the same user: a Username
// without a Password included (AUTH with an empty password), which RESET
// would otherwise leave as the default user.
func TestRestoreReplaysTheHandshake(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for name, cfg := range map[string]Config{
			"Nothing":                 {},
			"Password":                {Password: secret},
			"UsernameAndPassword":     {Username: "u", Password: secret},
			"UsernameWithoutPassword": {Username: "u"},
			"NameAndDatabase":         {Username: "u", ClientName: "app", DB: 3},
		} {
			t.Run(name+"/RESP"+string(rune('0'+proto)), func(t *testing.T) {
				s := newFakeServer(t, nil)
				cfg.Addr, cfg.Dial, cfg.Proto = "fake:6379", s.dial, proto
				c, err := Dial(context.Background(), cfg, nil)
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				defer c.Close()
				var restore []string
				for _, cmd := range RestoreCommands(cfg, proto) {
					restore = append(restore, strings.Join(cmd, " "))
				}
				if want := append([]string{"RESET"}, s.received()...); !slices.Equal(restore, want) {
					t.Errorf("restore sends\n  %q\nwant RESET then the handshake\n  %q", restore, want)
				}
			})
		}
	}
}

// TestHandshakeFailure proves that a refused handshake returns a
// *ConnError with Reason Handshake and Evidence Unwritten wrapping a
// *ReplyError naming the command, that the password never appears in
// the error text, even when the server echoes it, and that no step is
// sent twice: a NOPERM HELLO falls back to one AUTH, whose WRONGPASS
// fails the handshake.
func TestHandshakeFailure(t *testing.T) {
	failOn := func(name, text string) func([]string) []byte {
		return func(args []string) []byte {
			if strings.ToUpper(args[0]) == name {
				return resp.AppendError(nil, text)
			}
			return defaultReply(args)
		}
	}
	tests := []struct {
		name    string
		cfg     Config
		handle  func([]string) []byte
		command string
	}{
		{"WRONGPASS on HELLO", Config{Password: secret}, failOn("HELLO", "WRONGPASS invalid username-password pair or user is disabled."), "HELLO"},
		{"NOPERM on HELLO under forced RESP3", Config{Proto: 3, Password: secret}, failOn("HELLO", "NOPERM this user has no permissions to run the 'hello' command"), "HELLO"},
		{"NOPERM on HELLO echoing the password under forced RESP3", Config{Proto: 3, Password: secret}, failOn("HELLO", "NOPERM no permissions for HELLO 3 AUTH default "+secret), "HELLO"},
		{"WRONGPASS on AUTH after a NOPERM HELLO", Config{Password: secret}, func(args []string) []byte {
			switch args[0] {
			case "HELLO":
				return resp.AppendError(nil, "NOPERM this user has no permissions to run the 'hello' command")
			case "AUTH":
				return resp.AppendError(nil, "WRONGPASS invalid username-password pair or user is disabled.")
			}
			return defaultReply(args)
		}, "AUTH"},
		{"WRONGPASS on AUTH", Config{Proto: 2, Password: secret}, failOn("AUTH", "WRONGPASS invalid username-password pair or user is disabled."), "AUTH"},
		{"forced RESP3 on a server echoing the password", Config{Proto: 3, Password: secret},
			failOn("HELLO", "ERR unknown command `HELLO`, with args beginning with: `3`, `AUTH`, `default`, `"+secret+"`, "), "HELLO"},
		{"AUTH error echoing the password", Config{Proto: 2, Password: secret}, failOn("AUTH", "ERR bad password "+secret), "AUTH"},
		{"SELECT out of range", Config{DB: 99}, failOn("SELECT", "ERR DB index is out of range"), "SELECT"},
		{"CLIENT SETNAME refused", Config{Proto: 2, ClientName: "bad name"}, failOn("CLIENT", "ERR Client names cannot contain spaces"), "CLIENT SETNAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeServer(t, tt.handle)
			cfg := tt.cfg
			cfg.Addr, cfg.Dial = "fake:6379", s.dial
			c, err := Dial(context.Background(), cfg, nil)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded, want a handshake error")
			}
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Reason != Handshake || ce.Evidence != Unwritten {
				t.Fatalf("got %v, want *ConnError Handshake Unwritten", err)
			}
			var re *ReplyError
			if !errors.As(err, &re) || re.Command != tt.command {
				t.Fatalf("got %v, want a *ReplyError for %s", err, tt.command)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(re.Text, secret) {
				t.Fatalf("error text reveals the password: %q", err.Error())
			}
			// No step, and so no credentials, is tried twice.
			got := s.received()
			if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
				t.Errorf("server received %q: a step sent twice", got)
			}
		})
	}
}

// TestDialFailure proves that a failing dial hook, or a server that hangs
// up during the handshake, gives a *ConnError DialFailed Unwritten that
// wraps the cause.
func TestDialFailure(t *testing.T) {
	refused := errors.New("connection refused")
	cfg := Config{Addr: "fake:1", Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network != "tcp" || addr != "fake:1" {
			t.Errorf("dial hook got %s %s, want tcp fake:1", network, addr)
		}
		return nil, refused
	}}
	_, err := Dial(context.Background(), cfg, nil)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Reason != DialFailed || ce.Evidence != Unwritten || !errors.Is(err, refused) {
		t.Fatalf("got %v, want *ConnError DialFailed Unwritten wrapping the dial error", err)
	}

	s := newFakeServer(t, func(args []string) []byte { return nil })
	cfg = Config{Addr: "fake:2", Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := s.dial(ctx, network, addr)
		s.dropAll() // the server hangs up at once
		return nc, err
	}}
	_, err = Dial(context.Background(), cfg, nil)
	if !errors.As(err, &ce) || ce.Reason != DialFailed || ce.Evidence != Unwritten {
		t.Fatalf("got %v, want *ConnError DialFailed Unwritten", err)
	}
}

// TestHungHandshake proves, in virtual time, that a handshake the server
// never answers ends exactly when DialTimeout or the caller's context
// says, with an error matching the context's.
func TestHungHandshake(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // Config.DialTimeout
		cancel  time.Duration // caller cancels after this (0: never)
		want    error
		elapsed time.Duration
	}{
		{"DialTimeout", 3 * time.Second, 0, context.DeadlineExceeded, 3 * time.Second},
		{"caller cancels", 0, 700 * time.Millisecond, context.Canceled, 700 * time.Millisecond},
		{"caller cancels before DialTimeout", 5 * time.Second, time.Second, context.Canceled, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFakeServer(t, func([]string) []byte { return nil }) // never answers
				var sawDeadline bool
				cfg := Config{Addr: "fake:6379", DialTimeout: tt.timeout, Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
					_, sawDeadline = ctx.Deadline()
					return s.dial(ctx, n, a)
				}}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancel > 0 {
					time.AfterFunc(tt.cancel, cancel)
				}
				start := time.Now()
				c, err := Dial(ctx, cfg, nil)
				if err == nil {
					c.Close()
					t.Fatal("Dial succeeded against a silent server")
				}
				if got := time.Since(start); got != tt.elapsed {
					t.Errorf("Dial returned after %v, want %v", got, tt.elapsed)
				}
				var ce *ConnError
				if !errors.Is(err, tt.want) || !errors.As(err, &ce) || ce.Evidence != Unwritten {
					t.Errorf("got %v, want a *ConnError Unwritten matching %v", err, tt.want)
				}
				if sawDeadline != (tt.timeout > 0) {
					t.Errorf("dial hook saw a deadline: %v, want %v", sawDeadline, tt.timeout > 0)
				}
				s.close()
			})
		})
	}
}
