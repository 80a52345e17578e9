package respire

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/respiretest"
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

	closed := freeAddr(t)
	_, err := Connect(ctx, Options{Endpoints: []string{closed}})
	wantConnErr(t, "closed port", err, "respire: connect: could not connect to "+closed+": dial tcp ", "connection refused")

	// The shared standalone server has the default 16 databases.
	_, err = Connect(ctx, Options{Endpoints: []string{addr}, DB: 9999})
	wantConnErr(t, "DB out of range", err, "respire: connect: could not connect to "+addr+": the server refused SELECT: ERR DB index is out of range", "")
	var se *ServerError
	if !errors.As(err, &se) || se.Command != "SELECT" || se.Code != "ERR" {
		t.Errorf("DB out of range: %v, want a *ServerError of SELECT", err)
	}

	c := newClient(t, Options{Endpoints: []string{addr}})
	_ = c.Close()
	_, err = c.Get(ctx, key(t, "k"))
	wantConnErr(t, "after Close", err, "respire: GET: not sent: client closed", "")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("after Close: %v, want ErrClosed, not executed", err)
	}

	for _, tt := range []struct {
		err  *ConnError
		want string
	}{
		{&ConnError{Command: "INCR", Err: io.EOF, lost: true}, "respire: INCR: connection lost; the command may have been executed: EOF"},
		{&ConnError{Command: "INCR", Unwritten: true, Err: io.EOF, lost: true}, "respire: INCR: connection lost before the command was sent: EOF"},
		{&ConnError{Command: "GET", Unwritten: true, Err: ErrClosed}, "respire: GET: not sent: client closed"},
		{&ConnError{Command: "GET", Unwritten: true, Err: newServerError("HELLO", []byte("WRONGPASS invalid username-password pair"))},
			"respire: GET: not sent: the server refused HELLO: WRONGPASS invalid username-password pair"},
		{&ConnError{Command: "GET", Unwritten: true, Err: newServerError("AUTH", []byte("WRONGPASS invalid username-password pair")), addr: "127.0.0.1:7"},
			"respire: GET: not sent: could not connect to 127.0.0.1:7: the server refused AUTH: WRONGPASS invalid username-password pair"},
		{&ConnError{Command: "GET"}, "respire: GET: connection lost; the command may have been executed"},
		{&ConnError{Command: "INCR", Err: ErrClosed}, "respire: INCR: client closed; the command may have been executed"},
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

// TestConnectAuthRejectionNamesTheServer: when a data server rejects the
// connection's credentials, Connect's error names that server's address
// (a Sentinel's primary is not an address the caller configured) and the
// command it refused, once, with no repeated "respire:" prefix and no
// password; standalone, Sentinel and Cluster say it alike, and the
// *ServerError stays reachable with errors.As.
func TestConnectAuthRejectionNamesTheServer(t *testing.T) {
	const dataPW = "Hunter2-data"
	for _, proto := range []int{2, 3} {
		cmd := map[int]string{2: "AUTH", 3: "HELLO"}[proto]
		for name, opts := range map[string]func(data string) Options{
			"Standalone": func(data string) Options { return Options{Endpoints: []string{data}} },
			"Sentinel": func(data string) Options {
				sentinel, _ := fakeSentinel(t, data, nil)
				return Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}}}
			},
			"Cluster": func(data string) Options { return Options{Endpoints: []string{data}, Cluster: &ClusterOptions{}} },
		} {
			t.Run(name+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				data := roleServer(t, "master")
				data.Engine().RequireAuth(dataPW)
				o := opts(data.Addr())
				o.Protocol, o.Password = proto, "Hunter2-wrong"
				c, err := Connect(testCtx(t), o)
				wantAuthRejection(t, c, err)
				want := "respire: connect: could not connect to " + data.Addr() + ": the server refused " + cmd + ": WRONGPASS"
				if msg := err.Error(); !strings.HasPrefix(msg, want) || strings.Count(msg, "respire:") != 1 || strings.Contains(msg, "Hunter2") {
					t.Errorf("Connect = %q, want it to start with %q, say \"respire:\" once and name no password", msg, want)
				}
			})
		}
	}
}

// TestCommandAuthRejectionNamesTheServer: a command that needed a new
// connection whose handshake the server rejected (the password changed
// after Connect) fails with a *ConnError that names the server and the
// command it refused, says "respire:" once and never the password; the
// *ServerError and ErrConnectionLost still match, and Addr returns the
// server.
func TestCommandAuthRejectionNamesTheServer(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			ctx := testCtx(t)
			srv := respiretest.NewServer(t)
			srv.Engine().RequireAuth("Hunter2-old")
			c := newClient(t, Options{Endpoints: []string{srv.Addr()}, Protocol: proto, Password: "Hunter2-old"})
			k := key(t, "authmsg")
			if _, err := c.Get(ctx, k); !errors.Is(err, ErrNil) {
				t.Fatalf("GET before the password changed: %v, want ErrNil", err)
			}
			srv.Engine().RequireAuth("Hunter2-new")
			srv.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.DropBeforeForward})
			_, _ = c.Get(ctx, k) // the connection closes; the next GET dials anew
			_, err := c.Get(ctx, k)
			cmd := map[int]string{2: "AUTH", 3: "HELLO"}[proto]
			want := "respire: GET: not sent: could not connect to " + srv.Addr() + ": the server refused " + cmd + ": WRONGPASS"
			if msg := fmt.Sprint(err); !strings.HasPrefix(msg, want) || strings.Count(msg, "respire:") != 1 || strings.Contains(msg, "Hunter2") {
				t.Errorf("GET = %q, want it to start with %q, say \"respire:\" once and name no password", msg, want)
			}
			var se *ServerError
			var ce *ConnError
			if !errors.As(err, &se) || !se.IsAuth() || !errors.Is(err, ErrConnectionLost) || !errors.As(err, &ce) || ce.Addr() != srv.Addr() {
				t.Errorf("GET = %#v, want a *ConnError with Addr %s wrapping a *ServerError that IsAuth", err, srv.Addr())
			}
		})
	}
}

// TestCloseDuringSentCommandSaysClosed: a command whose reply Close
// interrupts fails with an error matching ErrClosed that says the client
// was closed and that the command may have run, not that the connection
// was lost.
func TestCloseDuringSentCommandSaysClosed(t *testing.T) {
	ctx := testCtx(t)
	srv := respiretest.NewServer(t)
	held := srv.MustAddRule(t, respiretest.Rule{Command: "INCR", Action: respiretest.Hold})
	t.Cleanup(held.Release)
	c := newClient(t, Options{Endpoints: []string{srv.Addr()}})
	done := make(chan error, 1)
	go func() { _, err := c.Incr(ctx, "oneline:n"); done <- err }()
	<-held.Received()
	_ = c.Close()
	err := <-done
	oneLine(t, "INCR", err, []string{"INCR", "client closed", "may have been executed"}, ErrClosed, ErrConnectionLost)
	if msg := err.Error(); strings.Contains(msg, "connection lost") || !MayHaveExecuted(err) {
		t.Errorf("INCR = %q (may have executed: %v), want it not to say connection lost, and to say it may have run", msg, MayHaveExecuted(err))
	}
}

// TestCommandThatCouldNotConnectNamesTheServer: a command not sent
// because its server refused a new connection says "not sent: could not
// connect to" the server, not that a connection was lost; it matches
// ErrConnectionLost, Addr names the server, and it did not run.
func TestCommandThatCouldNotConnectNamesTheServer(t *testing.T) {
	ctx := testCtx(t)
	srv := respiretest.NewServer(t)
	c := newClient(t, Options{Endpoints: []string{srv.Addr()}, RetryPolicy: &RetryPolicy{MaxAttempts: 1}})
	srv.Close()
	_, _ = c.Get(ctx, "connmsg:k") // may be the one to find the connection lost
	_, err := c.Get(ctx, "connmsg:k")
	want := "respire: GET: not sent: could not connect to " + srv.Addr() + ": dial tcp " + srv.Addr() + ": connect: connection refused"
	wantText(t, "GET", err, want)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Addr() != srv.Addr() || !errors.Is(err, ErrConnectionLost) || MayHaveExecuted(err) {
		t.Errorf("GET = %#v, want a *ConnError with Addr %s, not executed", err, srv.Addr())
	}
}
