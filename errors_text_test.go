package respire

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/respire-go/respire/respiretest"
)

// TestRetryErrorSaysRespireOnce: a command retried until its attempts ran
// out fails with a *RetryError whose text says "respire:" and the
// command once, then the last failure (a server's reply or a lost
// connection), which errors.Is and errors.As still find.
func TestRetryErrorSaysRespireOnce(t *testing.T) {
	ctx := testCtx(t)
	srv := respiretest.NewServer(t)
	c := newClient(t, Options{Endpoints: []string{srv.Addr()}, RetryPolicy: &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}})

	loading := srv.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject("LOADING busy")})
	_, err := c.Get(ctx, "errtext:k")
	wantText(t, "LOADING", err, "respire: GET: failed after 2 attempts: LOADING busy")
	var re *RetryError
	if !errors.As(err, &re) || !errors.Is(err, &ServerError{Code: "LOADING", Command: "GET"}) {
		t.Errorf("LOADING: %#v, want a *RetryError wrapping the LOADING *ServerError of GET", err)
	}
	loading.Remove()

	srv.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
	_, err = c.Get(ctx, "errtext:k")
	wantText(t, "dropped", err, "respire: GET: failed after 2 attempts: connection lost; the command may have been executed: EOF")
	var ce *ConnError
	if !errors.As(err, &re) || !errors.As(err, &ce) || !errors.Is(err, ErrConnectionLost) || !errors.Is(err, io.EOF) {
		t.Errorf("dropped: %#v, want a *RetryError wrapping a *ConnError (ErrConnectionLost, io.EOF)", err)
	}
}

// TestBatchErrorsSayRespireOnce: a batch of a closed client, and each of
// its members, fails with "respire: batch: not sent: client closed",
// matching ErrClosed.
func TestBatchErrorsSayRespireOnce(t *testing.T) {
	c := newClient(t, Options{Endpoints: []string{respiretest.NewServer(t).Addr()}})
	_ = c.Close()
	b := c.NewBatch()
	g := b.Get("errtext:k")
	err := b.Execute(testCtx(t))
	wantText(t, "Execute", err, "respire: batch: not sent: client closed")
	wantText(t, "member", g.Err(), "respire: batch: not sent: client closed")
	if !errors.Is(err, ErrClosed) || !errors.Is(g.Err(), ErrClosed) {
		t.Errorf("Execute %v, member %v: want both to match ErrClosed", err, g.Err())
	}
}

// TestNestedErrorsSayRespireOnce: an error that gives another library
// error as its cause (a context that ended a retry's backoff, a split
// command's part, a failover member, a subscription's lost connection)
// says "respire:" once, and the cause's command only when it differs,
// while errors.Is still finds the cause.
func TestNestedErrorsSayRespireOnce(t *testing.T) {
	lost := &ConnError{Command: "GET", Err: io.EOF, lost: true}
	closed := &ConnError{Command: "DEL", Unwritten: true, Err: ErrClosed}
	for _, tt := range []struct {
		err  error
		want string
		is   error
	}{
		{&ContextError{Command: "GET", Sent: true, Err: context.DeadlineExceeded, Last: lost},
			"respire: GET: context deadline exceeded (the command may have been executed) while waiting to retry after: connection lost; the command may have been executed: EOF", io.EOF},
		{&RetryError{Command: "GET", Attempts: 2, Err: &ContextError{Command: "GET", Err: context.Canceled, Last: lost}},
			"respire: GET: failed after 2 attempts: context canceled while waiting to retry after: connection lost; the command may have been executed: EOF", context.Canceled},
		{&PartialError{Command: "DEL", Parts: 3, Failed: 1, Err: closed}, "respire: DEL: 1 of 3 parts failed (the others ran): not sent: client closed", ErrClosed},
		{&PartialError{Command: "DEL", Parts: 3, Failed: 3, Err: closed}, "respire: DEL: all 3 parts failed: not sent: client closed", ErrClosed},
		{&memberError{index: 1, label: "east", err: lost}, "respire: failover member 1 (east): GET: connection lost; the command may have been executed: EOF", io.EOF},
		{&lostError{err: lost}, "respire: subscription connection lost: GET: connection lost; the command may have been executed: EOF", io.EOF},
		{&RouteError{Command: "GET", Slot: 5, Err: ErrRedirectLoop}, "respire: GET (slot 5): too many cluster redirects", ErrRedirectLoop},
	} {
		wantText(t, "", tt.err, tt.want)
		if !errors.Is(tt.err, tt.is) {
			t.Errorf("%q does not match %v", tt.err, tt.is)
		}
	}
}

// wantText fails the test unless err's text is want, which says
// "respire:" once.
func wantText(t *testing.T, name string, err error, want string) {
	t.Helper()
	if strings.Count(want, "respire:") != 1 {
		t.Fatalf("%s: the wanted text %q must say respire: once", name, want)
	}
	if err == nil || err.Error() != want {
		t.Errorf("%s: %v, want %q", name, err, want)
	}
}
