package respire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

func TestWrongTypeIsServerError(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if _, err := c.LPush(ctx, k, "x"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Get(ctx, k)
		var se *ServerError
		if !errors.As(err, &se) {
			t.Fatalf("Get(list) error = %v; want *ServerError", err)
		}
		if se.Code != "WRONGTYPE" || se.Command != "GET" || !strings.HasPrefix(se.Message, "WRONGTYPE ") {
			t.Errorf("ServerError = %+v; want Code WRONGTYPE, Command GET, Message starting with the code", se)
		}
		matches := []struct {
			target *ServerError
			want   bool
		}{
			{&ServerError{Code: "WRONGTYPE"}, true},
			{&ServerError{Code: "WRONGTYPE", Command: "GET"}, true},
			{&ServerError{Code: "WRONGTYPE", Command: "SET"}, false},
			{&ServerError{Code: "ERR"}, false},
		}
		for _, m := range matches {
			if got := errors.Is(err, m.target); got != m.want {
				t.Errorf("errors.Is(err, %+v) = %v; want %v", m.target, got, m.want)
			}
		}
		for _, sentinel := range []error{ErrNil, ErrConnectionLost, ErrProtocol, ErrClosed} {
			if errors.Is(err, sentinel) {
				t.Errorf("errors.Is(WRONGTYPE, %v) = true; want false", sentinel)
			}
		}
	})
}

func TestUnknownCommandIsServerErrorNamingIt(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		_, err := c.Do(testCtx(t), NewCommand("client nosuchsub"), "x")
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "ERR" || se.Command != "CLIENT NOSUCHSUB" {
			t.Errorf("error = %#v; want *ServerError ERR from CLIENT NOSUCHSUB", err)
		}
		if !strings.Contains(err.Error(), "CLIENT NOSUCHSUB") {
			t.Errorf("error %q does not name the command", err)
		}
	})
}

// TestInjectedServerErrors answers commands with the exact error replies
// of Redis 7.0 (through the respiretest proxy) and checks each code, its
// predicate and the command name.
func TestInjectedServerErrors(t *testing.T) {
	p, err := respiretest.NewProxy(standaloneAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	tests := []struct {
		name     string
		text     string
		command  string
		call     func(c *Client, ctx context.Context, k string) error
		wantCode string
		pred     func(*ServerError) bool
	}{
		{"LOADING", respiretest.ErrLoading, "GET", func(c *Client, ctx context.Context, k string) error { _, err := c.Get(ctx, k); return err }, "LOADING", (*ServerError).IsLoading},
		{"READONLY", respiretest.ErrReadOnly, "SET", func(c *Client, ctx context.Context, k string) error { return c.Set(ctx, k, "v") }, "READONLY", (*ServerError).IsReadOnly},
		{"MASTERDOWN", respiretest.ErrMasterDown, "INCR", func(c *Client, ctx context.Context, k string) error { _, err := c.Incr(ctx, k); return err }, "MASTERDOWN", nil},
		{"TRYAGAIN", respiretest.ErrTryAgain, "MGET", func(c *Client, ctx context.Context, k string) error { _, _, err := c.MGet(ctx, k, k+"2"); return err }, "TRYAGAIN", nil},
		{"NOPERM", "NOPERM this user has no permissions to run the 'hget' command", "HGET", func(c *Client, ctx context.Context, k string) error { _, err := c.HGet(ctx, k, "f"); return err }, "NOPERM", (*ServerError).IsAuth},
		{"BUSY", respiretest.ErrBusy, "ZSCORE", func(c *Client, ctx context.Context, k string) error { _, err := c.ZScore(ctx, k, "m"); return err }, "BUSY", nil},
	}
	forEachProtocol(t, Options{Endpoints: []string{p.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				k := key(t)
				h := p.MustAddRule(t, respiretest.Rule{Command: tt.command, Arg: k, Action: respiretest.Inject(tt.text)})
				defer h.Remove()
				err := tt.call(c, testCtx(t), k)
				var se *ServerError
				if !errors.As(err, &se) {
					t.Fatalf("error = %v; want *ServerError", err)
				}
				if se.Code != tt.wantCode || se.Command != tt.command || se.Message != tt.text {
					t.Errorf("ServerError = %+v; want Code %s, Command %s, Message %q", se, tt.wantCode, tt.command, tt.text)
				}
				if tt.pred != nil && !tt.pred(se) {
					t.Errorf("predicate for %s = false; want true", tt.wantCode)
				}
				if !errors.Is(err, &ServerError{Code: tt.wantCode}) {
					t.Errorf("errors.Is(err, &ServerError{Code: %q}) = false", tt.wantCode)
				}
				// The connection survives an error reply.
				if got, err := c.Echo(testCtx(t), "still"); err != nil || got != "still" {
					t.Errorf("Echo after the error = %q, %v; want \"still\"", got, err)
				}
			})
		}
	})
}

// TestServerErrorText: a command's error names the command; an error
// inside a reply (a script's nested error_reply, through Reply.Any) has no
// command and its text has no empty name.
func TestServerErrorText(t *testing.T) {
	if got, want := newServerError("GET", []byte("WRONGTYPE bad")).Error(), "respire: GET: WRONGTYPE bad"; got != want {
		t.Errorf("command error: %q, want %q", got, want)
	}
	if got, want := newServerError("", []byte("MYERR inner")).Error(), "respire: MYERR inner"; got != want {
		t.Errorf("nested error: %q, want %q", got, want)
	}
}

func TestServerErrorPredicates(t *testing.T) {
	tests := []struct {
		code                      string
		loading, readOnly, isAuth bool
	}{
		{"LOADING", true, false, false},
		{"READONLY", false, true, false},
		{"NOAUTH", false, false, true},
		{"WRONGPASS", false, false, true},
		{"NOPERM", false, false, true},
		{"ERR", false, false, false},
	}
	for _, tt := range tests {
		e := newServerError("X", []byte(tt.code+" text"))
		if e.Code != tt.code || e.IsLoading() != tt.loading || e.IsReadOnly() != tt.readOnly || e.IsAuth() != tt.isAuth {
			t.Errorf("%s: Code %q IsLoading %v IsReadOnly %v IsAuth %v; want %q %v %v %v",
				tt.code, e.Code, e.IsLoading(), e.IsReadOnly(), e.IsAuth(), tt.code, tt.loading, tt.readOnly, tt.isAuth)
		}
	}
	if e := newServerError("X", []byte("CODEONLY")); e.Code != "CODEONLY" || e.Message != "CODEONLY" {
		t.Errorf("a reply without text gives %+v; want Code and Message CODEONLY", e)
	}
}

func TestMissingValuesAreErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "missing")
		calls := []struct {
			name string
			err  error
		}{
			{"Get", second(c.Get(ctx, k))},
			{"GetBytes", second(c.GetBytes(ctx, k, nil))},
			{"HGet", second(c.HGet(ctx, k, "f"))},
			{"LPop", second(c.LPop(ctx, k))},
			{"ZScore", second(c.ZScore(ctx, k, "m"))},
			{"XAddNoMkStream", second(c.XAdd(ctx, k, XAddOptions{NoMkStream: true}, "f", "v"))},
		}
		for _, call := range calls {
			if !errors.Is(call.err, ErrNil) {
				t.Errorf("%s error = %v; want ErrNil", call.name, call.err)
			}
			var se *ServerError
			if errors.As(call.err, &se) {
				t.Errorf("%s error is a *ServerError; want only ErrNil", call.name)
			}
		}
	})
}

func TestConnErrorMessagesAndMatching(t *testing.T) {
	tests := []struct {
		name      string
		err       *ConnError
		want      []error
		wantInMsg string
	}{
		{"Unwritten", &ConnError{Command: "GET", Unwritten: true, Err: errors.New("reset")}, []error{ErrConnectionLost}, "before the command was sent"},
		{"PossiblyExecuted", &ConnError{Command: "INCR", Err: errors.New("EOF")}, []error{ErrConnectionLost}, "may have been executed"},
		{"Closed", &ConnError{Command: "GET", Unwritten: true, Err: ErrClosed}, []error{ErrConnectionLost, ErrClosed}, "client closed"},
		{"Protocol", &ConnError{Command: "GET", Err: errors.Join(ErrProtocol, errors.New("bad"))}, []error{ErrConnectionLost, ErrProtocol}, "protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !errors.Is(tt.err, w) {
					t.Errorf("errors.Is(%v, %v) = false; want true", tt.err, w)
				}
			}
			if msg := tt.err.Error(); !strings.Contains(msg, tt.wantInMsg) || !strings.Contains(msg, tt.err.Command) {
				t.Errorf("Error() = %q; want it to name %s and say %q", msg, tt.err.Command, tt.wantInMsg)
			}
		})
	}
}

func TestContextErrorMatching(t *testing.T) {
	last := &ServerError{Code: "LOADING", Message: "LOADING x", Command: "GET"}
	err := error(&ContextError{Command: "GET", Sent: true, Err: context.DeadlineExceeded, Last: last})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, &ServerError{Code: "LOADING"}) {
		t.Errorf("ContextError with Last does not match both the context error and the last failure")
	}
	if msg := err.Error(); !strings.Contains(msg, "may have been executed") || !strings.Contains(msg, "LOADING") {
		t.Errorf("Error() = %q; want the sent note and the last failure", msg)
	}
}

func TestRetryErrorWrapsLastFailure(t *testing.T) {
	err := error(&RetryError{Command: "GET", Attempts: 3, Err: &ConnError{Command: "GET", Err: errors.New("EOF")}})
	if !errors.Is(err, ErrConnectionLost) {
		t.Errorf("RetryError does not match its last failure")
	}
	if msg := err.Error(); !strings.Contains(msg, "3 attempts") {
		t.Errorf("Error() = %q; want the attempt count", msg)
	}
}

func TestConfigErrorMatching(t *testing.T) {
	err := error(&ConfigError{Field: "Options.DB", Reason: "must not be negative"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Options.DB") {
		t.Errorf("ConfigError = %q; want ErrInvalidConfig naming Options.DB", err)
	}
}

// TestDoCatalogDescriptorErrorNamesCommand checks that a catalog
// descriptor's error reply names the descriptor's full name.
func TestDoCatalogDescriptorErrorNamesCommand(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if _, err := c.SAdd(ctx, k, "m"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Do(ctx, catalog.String.GET(), k)
		if !errors.Is(err, &ServerError{Code: "WRONGTYPE", Command: "GET"}) {
			t.Errorf("Do(GET set) error = %v; want WRONGTYPE from GET", err)
		}
	})
}

// TestPartialErrorMessage: a split command whose parts all failed (a
// Cluster client closed before its fan-out) does not say that others ran.
func TestPartialErrorMessage(t *testing.T) {
	cause := &ConnError{Command: "DEL", Unwritten: true, Err: ErrClosed}
	for _, tc := range []struct {
		e    *PartialError
		want string
	}{
		{&PartialError{Command: "DEL", Parts: 3, Failed: 1, Err: cause}, "respire: DEL: 1 of 3 parts failed (the others ran): not sent: client closed"},
		{&PartialError{Command: "DEL", Parts: 3, Failed: 3, Err: cause}, "respire: DEL: all 3 parts failed: not sent: client closed"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
