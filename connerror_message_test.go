package respire

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestConnErrorSaysWhatHappened: a ConnError's text says what a new user
// needs to know: Connect "could not connect" (not "connection lost") and
// why; a call the client did not send because it was closed or the
// server rejected the handshake was "not sent"; only a transport failure
// says "connection lost". Each still matches ErrConnectionLost, and its
// cause with errors.Is/As.
func TestConnErrorSaysWhatHappened(t *testing.T) {
	ctx := testCtx(t)
	addr := standaloneAddr(t)

	_, err := Connect(ctx, Options{Endpoints: []string{freeAddr(t)}})
	wantConnErr(t, "closed port", err, "respire: connect: could not connect: dial tcp ", "connection refused")

	// The shared standalone server has the default 16 databases.
	_, err = Connect(ctx, Options{Endpoints: []string{addr}, DB: 9999})
	wantConnErr(t, "DB out of range", err, "respire: connect: could not connect: respire: SELECT: ERR DB index is out of range", "")
	var se *ServerError
	if !errors.As(err, &se) || se.Command != "SELECT" || se.Code != "ERR" {
		t.Errorf("DB out of range: %v, want a *ServerError of SELECT", err)
	}

	c := newClient(t, Options{Endpoints: []string{addr}})
	_ = c.Close()
	_, err = c.Get(ctx, key(t, "k"))
	wantConnErr(t, "after Close", err, "respire: GET: not sent: respire: client closed", "")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("after Close: %v, want ErrClosed, not executed", err)
	}

	for _, tt := range []struct {
		err  *ConnError
		want string
	}{
		{&ConnError{Command: "INCR", Err: io.EOF, lost: true}, "respire: INCR: connection lost; the command may have been executed: EOF"},
		{&ConnError{Command: "INCR", Unwritten: true, Err: io.EOF, lost: true}, "respire: INCR: connection lost before the command was sent: EOF"},
		{&ConnError{Command: "GET", Unwritten: true, Err: ErrClosed}, "respire: GET: not sent: respire: client closed"},
		{&ConnError{Command: "GET", Unwritten: true, Err: newServerError("HELLO", []byte("WRONGPASS invalid username-password pair"))},
			"respire: GET: not sent: respire: HELLO: WRONGPASS invalid username-password pair"},
		{&ConnError{Command: "GET"}, "respire: GET: connection lost; the command may have been executed"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// wantConnErr fails the test unless err is a *ConnError matching
// ErrConnectionLost, never written, whose text starts with prefix and
// contains part.
func wantConnErr(t *testing.T, name string, err error, prefix, part string) {
	t.Helper()
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConnectionLost) || !ce.Unwritten {
		t.Errorf("%s: %v, want an unwritten *ConnError", name, err)
		return
	}
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, part) {
		t.Errorf("%s: %q, want it to start with %q and contain %q", name, msg, prefix, part)
	}
}
