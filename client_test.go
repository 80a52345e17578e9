package respire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// clientInfo returns the CLIENT INFO line of c's current connection.
func clientInfo(t testing.TB, c *Client) string {
	t.Helper()
	r, err := c.Do(testCtx(t), NewCommand("CLIENT INFO"))
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	s, err := r.String()
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	return s
}

// infoField returns the value of field (such as "db") in a CLIENT INFO line.
func infoField(info, field string) string {
	for f := range strings.FieldsSeq(info) {
		if v, ok := strings.CutPrefix(f, field+"="); ok {
			return v
		}
	}
	return ""
}

func TestConnectNegotiatesProtocol(t *testing.T) {
	tests := []struct {
		protocol int
		want     string
	}{{0, "3"}, {2, "2"}, {3, "3"}}
	for _, tt := range tests {
		t.Run("Protocol"+strconv.Itoa(tt.protocol), func(t *testing.T) {
			c := newClient(t, Options{Protocol: tt.protocol})
			if got := infoField(clientInfo(t, c), "resp"); got != tt.want {
				t.Errorf("server sees resp=%s; want %s", got, tt.want)
			}
		})
	}
}

func TestConnectSelectsDB(t *testing.T) {
	forEachProtocol(t, Options{DB: 3}, func(t *testing.T, c *Client) {
		if got := infoField(clientInfo(t, c), "db"); got != "3" {
			t.Errorf("server sees db=%s; want 3", got)
		}
	})
}

func TestConnectSetsClientName(t *testing.T) {
	forEachProtocol(t, Options{ClientName: "respire-name-test"}, func(t *testing.T, c *Client) {
		r, err := c.Do(testCtx(t), NewCommand("CLIENT GETNAME"))
		if got, cerr := r.String(); err != nil || cerr != nil || got != "respire-name-test" {
			t.Errorf("CLIENT GETNAME = %q, %v, %v; want %q", got, err, cerr, "respire-name-test")
		}
	})
}

func TestConnectFailsWhenNothingListens(t *testing.T) {
	addr := freeAddr(t)
	_, err := Connect(testCtx(t), Options{Endpoints: []string{addr}, DialTimeout: time.Second})
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConnectionLost) || !ce.Unwritten {
		t.Errorf("Connect(%s) error = %v; want an unwritten *ConnError", addr, err)
	}
}

// TestConnectWithEndedContextDialsNothing: Connect with a context that
// has already ended dials nothing, on every topology, and fails with the
// same error on each (Sentinel and Cluster wrapped it in a *ConnError,
// standalone did not): a *ContextError that says "respire: connect:
// context canceled", matches context.Canceled and was not sent, as a
// command's with an ended context.
func TestConnectWithEndedContextDialsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, o := range []Options{
		{Endpoints: []string{"127.0.0.1:1"}},
		{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{"127.0.0.1:1"}}},
		{Cluster: &ClusterOptions{}, Endpoints: []string{"127.0.0.1:1"}},
	} {
		topology := []string{"standalone", "Sentinel", "Cluster"}[i]
		var dials atomic.Int64
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("test: no dial expected")
		}
		c, err := Connect(ctx, o)
		if c != nil {
			_ = c.Close()
		}
		var ce *ContextError
		if !errors.As(err, &ce) || ce.Sent || !errors.Is(err, context.Canceled) || MayHaveExecuted(err) || dials.Load() != 0 {
			t.Errorf("%s: Connect with an ended context = %#v after %d dials, want a *ContextError matching context.Canceled, not sent, after none", topology, err, dials.Load())
		}
		wantText(t, topology, err, "respire: connect: context canceled")
	}
}

// freeAddr returns a 127.0.0.1 address on which nothing listens (a port
// that was free a moment ago).
func freeAddr(t testing.TB) string {
	t.Helper()
	return testenv.FreeAddr(t)
}

// privateServer starts a redis-server from PATH on a free 127.0.0.1 port,
// for tests that change server-wide settings, and stops it when the test
// ends. The test is skipped (or fails under RESPIRE_REQUIRE_SERVERS=1)
// when no redis-server is installed.
func privateServer(t *testing.T) string {
	t.Helper()
	standaloneAddr(t) // the same skip rule as the shared server
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found: %v", err)
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_, _ = conn.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			_ = conn.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := conn.Read(buf)
			_ = conn.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer PING: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // pacing a poll of another process's start, not synchronisation
	}
}

const testPassword = "s3cret-Pa55word"

// TestAuth runs against a private server with requirepass set.
func TestAuth(t *testing.T) {
	addr := privateServer(t)
	admin(t, addr, "ACL", "SETUSER", "nopass-user", "on", "nopass", "+@all", "~*")
	admin(t, addr, "CONFIG", "SET", "requirepass", testPassword)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			t.Run("RightPassword", func(t *testing.T) {
				c := newClient(t, Options{Endpoints: []string{addr}, Protocol: p, Password: testPassword})
				must(t, c.Ping(testCtx(t)))
			})
			t.Run("DefaultUserAndPassword", func(t *testing.T) {
				c := newClient(t, Options{Endpoints: []string{addr}, Protocol: p, Username: "default", Password: testPassword})
				must(t, c.Ping(testCtx(t)))
			})
			t.Run("WrongPasswordIsConnErrorWithWRONGPASS", func(t *testing.T) {
				c, err := Connect(testCtx(t), Options{Endpoints: []string{addr}, Protocol: p, Password: testPassword + "-wrong"})
				if c != nil {
					_ = c.Close()
				}
				var ce *ConnError
				if !errors.As(err, &ce) {
					t.Fatalf("Connect error = %v; want *ConnError", err)
				}
				var se *ServerError
				if !errors.As(ce.Err, &se) || se.Code != "WRONGPASS" || !se.IsAuth() {
					t.Errorf("ConnError.Err = %#v; want *ServerError WRONGPASS", ce.Err)
				}
				if !ce.Unwritten {
					t.Errorf("ConnError.Unwritten = false; want true (no command was sent)")
				}
				if strings.Contains(err.Error(), testPassword) {
					t.Errorf("error %q contains the password", err)
				}
			})
		})
	}
	// A Username without a Password authenticates as that user with an
	// empty password, never silently as the default user.
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p)+"/UsernameWithoutPassword", func(t *testing.T) {
			c := newClient(t, Options{Endpoints: []string{addr}, Protocol: p, Username: "nopass-user"})
			r, err := c.Do(testCtx(t), catalog.Server.ACL_WHOAMI())
			if got, _ := r.String(); err != nil || got != "nopass-user" {
				t.Errorf("ACL WHOAMI = %q, %v; want nopass-user", got, err)
			}
			other, err := Connect(testCtx(t), Options{Endpoints: []string{addr}, Protocol: p, Username: "default"})
			if other != nil {
				_ = other.Close()
			}
			if se := (*ServerError)(nil); !errors.As(err, &se) || se.Code != "WRONGPASS" {
				t.Errorf("Connect as default without its password = %v; want WRONGPASS", err)
			}
		})
	}
	t.Run("NoPasswordRESP3IsConnErrorWithNOAUTH", func(t *testing.T) {
		_, err := Connect(testCtx(t), Options{Endpoints: []string{addr}, Protocol: 3})
		var se *ServerError
		if !errors.Is(err, ErrConnectionLost) || !errors.As(err, &se) || se.Code != "NOAUTH" {
			t.Errorf("Connect error = %v; want *ConnError with *ServerError NOAUTH", err)
		}
	})
	t.Run("NoPasswordRESP2CommandGetsNOAUTH", func(t *testing.T) {
		c := newClient(t, Options{Endpoints: []string{addr}, Protocol: 2})
		_, err := c.Get(testCtx(t), "k")
		if !errors.Is(err, &ServerError{Code: "NOAUTH", Command: "GET"}) {
			t.Errorf("Get error = %v; want *ServerError NOAUTH from GET", err)
		}
	})
}

// TestClientKillFailsCommandInFlight kills the connection while a command
// is blocked on the server: the command was written, so the error is a
// connection loss that may have executed.
func TestClientKillFailsCommandInFlight(t *testing.T) {
	addr := standaloneAddr(t)
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name}, func(t *testing.T, c *Client) {
		errc := make(chan error, 1)
		go func() {
			_, err := c.Do(testCtx(t), NewCommand("BLPOP"), key(t, "never"), "0")
			errc <- err
		}()
		id := waitNamedBlocked(t, name)
		killClient(t, addr, id)
		err := <-errc
		var ce *ConnError
		if !errors.Is(err, ErrConnectionLost) || !errors.As(err, &ce) {
			t.Fatalf("BLPOP error = %v; want a *ConnError matching ErrConnectionLost", err)
		}
		if ce.Unwritten || ce.Command != "BLPOP" {
			t.Errorf("ConnError = %+v; want Command BLPOP, Unwritten false", ce)
		}
	})
}

func TestReconnectsAfterClientKill(t *testing.T) {
	addr := standaloneAddr(t)
	forEachProtocol(t, Options{DB: 2, ClientName: "respire-reconnect"}, func(t *testing.T, c *Client) {
		conn := c.ep.Current()
		old := clientID(t, c)
		killClient(t, addr, old)
		<-conn.Dead() // the client has seen the loss
		if err := c.Ping(testCtx(t)); err != nil {
			t.Fatalf("Ping after CLIENT KILL: %v", err)
		}
		info := clientInfo(t, c)
		if id := infoField(info, "id"); id == old {
			t.Errorf("still on connection %s; want a new one", old)
		}
		if db, name := infoField(info, "db"), infoField(info, "name"); db != "2" || name != "respire-reconnect" {
			t.Errorf("new connection has db=%s name=%s; want db=2 name=respire-reconnect", db, name)
		}
	})
}

// TestWriteFailureEvidence makes the command's socket write fail after a
// chosen number of bytes (respiretest.FailWrites): a frame whose last byte
// never reached the socket is Unwritten and the server never ran it; a
// frame written completely may have run.
func TestWriteFailureEvidence(t *testing.T) {
	addr := standaloneAddr(t)
	var d net.Dialer
	tests := []struct {
		name          string
		offset        int // bytes of the command's write that reach the socket; -1: all but the last
		wantUnwritten bool
	}{
		{"NothingWritten", 0, true},
		{"AllButTheLastByte", -1, true},
		{"EverythingWritten", 1 << 20, false},
	}
	for _, p := range protocols {
		handshakeWrites := map[int]int{2: 0, 3: 1}[p] // HELLO 3 is one write
		for _, tt := range tests {
			t.Run("RESP"+strconv.Itoa(p)+"/"+tt.name, func(t *testing.T) {
				k := key(t)
				offset := tt.offset
				if offset < 0 {
					offset = len(incrFrame(k)) - 1
				}
				dial := respiretest.FailWritesDialer(d.DialContext, 1, handshakeWrites+1, offset)
				c := newClient(t, Options{Protocol: p, Dialer: dial})
				n, err := c.Incr(testCtx(t), k)
				if err == nil && !tt.wantUnwritten && n == 1 {
					// The whole frame was written, so the server may reply
					// before the failing write closes the socket: the
					// reply wins. Only the evidence of a failure is fixed.
					return
				}
				var ce *ConnError
				if !errors.As(err, &ce) || !errors.Is(err, ErrConnectionLost) {
					t.Fatalf("Incr = %d, %v; want *ConnError", n, err)
				}
				if ce.Unwritten != tt.wantUnwritten {
					t.Errorf("ConnError.Unwritten = %v; want %v", ce.Unwritten, tt.wantUnwritten)
				}
				if tt.wantUnwritten {
					// The next call uses a new connection; the server never saw the INCR.
					if got, err := c.Get(testCtx(t), k); !errors.Is(err, ErrNil) {
						t.Errorf("Get after an unwritten INCR = %q, %v; want ErrNil", got, err)
					}
					return
				}
				waitValue(t, addr, k, "1")
			})
		}
	}
}

// incrFrame is the encoding of INCR k.
func incrFrame(k string) []byte {
	return []byte("*2\r\n$4\r\nINCR\r\n$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n")
}

// waitValue waits until key holds want on the server.
func waitValue(t *testing.T, addr, k, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := admin(t, addr, "GET", k).String()
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %q, %v; want %q", k, got, err, want)
		}
		time.Sleep(5 * time.Millisecond) // pacing a poll of the server's state, which is the receipt
	}
}

// slowReplies returns the address of a proxy in front of the real server
// that delays the reply of "GET slow" by half a second. Later calls on the
// same connection queue behind it, as they would behind any slow reply,
// without blocking the shared server for other clients (as DEBUG SLEEP
// would).
func slowReplies(t *testing.T) string {
	t.Helper()
	proxy, err := respiretest.NewProxy(standaloneAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	proxy.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "slow", Times: respiretest.Always,
		Action: respiretest.Delay(500 * time.Millisecond)})
	return proxy.Addr()
}

// TestCommandTimeoutThenFIFO holds a reply on the client's own
// connection: the call gives up at CommandTimeout, and the next call on
// the same connection still gets its own reply, not the abandoned one.
func TestCommandTimeoutThenFIFO(t *testing.T) {
	forEachProtocol(t, Options{Endpoints: []string{slowReplies(t)}, CommandTimeout: 100 * time.Millisecond}, func(t *testing.T, c *Client) {
		start := time.Now()
		_, err := c.Get(context.Background(), "slow")
		elapsed := time.Since(start)
		var xe *ContextError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &xe) || !xe.Sent || xe.Command != "GET" {
			t.Fatalf("GET error = %v; want a sent *ContextError matching context.DeadlineExceeded", err)
		}
		if elapsed >= 450*time.Millisecond {
			t.Errorf("gave up after %v; want about 100ms (before the reply)", elapsed)
		}
		assertOwnReplies(t, c)
	})
}

func TestContextDeadlineThenFIFO(t *testing.T) {
	forEachProtocol(t, Options{Endpoints: []string{slowReplies(t)}, CommandTimeout: NoTimeout}, func(t *testing.T, c *Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Get(ctx, "slow")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("GET error = %v; want context.DeadlineExceeded", err)
		}
		assertOwnReplies(t, c)
	})
}

func TestContextCanceledThenFIFO(t *testing.T) {
	forEachProtocol(t, Options{Endpoints: []string{slowReplies(t)}}, func(t *testing.T, c *Client) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := c.Get(ctx, "slow")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("GET error = %v; want context.Canceled", err)
		}
		assertOwnReplies(t, c)
	})
}

// assertOwnReplies checks that calls right after an abandoned one get
// their own replies, in order.
func assertOwnReplies(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, msg := range []string{"first", "second"} {
		if got, err := c.Echo(ctx, msg); err != nil || got != msg {
			t.Errorf("Echo(%q) after the abandoned call = %q, %v; want %q", msg, got, err, msg)
		}
	}
}

func TestExpiredContextFailsBeforeSending(t *testing.T) {
	c := newClient(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Get(ctx, key(t))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Get error = %v; want context.Canceled", err)
	}
	must(t, c.Ping(testCtx(t)))
}

func TestCloseTwice(t *testing.T) {
	c := newClient(t, Options{})
	if err := c.Close(); err != nil {
		t.Errorf("first Close = %v; want nil", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
}

func TestCallAfterCloseIsErrClosed(t *testing.T) {
	c := newClient(t, Options{})
	must(t, c.Close())
	_, err := c.Get(testCtx(t), key(t))
	var ce *ConnError
	if !errors.Is(err, ErrClosed) || !errors.As(err, &ce) || !ce.Unwritten {
		t.Errorf("Get after Close error = %v; want an unwritten *ConnError matching ErrClosed", err)
	}
}

func TestCloseFailsCallInFlight(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(testCtx(t), NewCommand("BLPOP"), key(t, "never"), "0")
		errc <- err
	}()
	waitNamedBlocked(t, name)
	must(t, c.Close())
	if err := <-errc; !errors.Is(err, ErrClosed) || !errors.Is(err, ErrConnectionLost) {
		t.Errorf("BLPOP during Close error = %v; want ErrClosed and ErrConnectionLost", err)
	}
}

// Close while a Dedicated callback's BLPOP blocks, a Watch callback runs
// and a Subscription waits for messages: the BLPOP fails with ErrClosed,
// the callback's next command too (nothing is sent for it), the
// subscription's channel closes, and (TestMain) no goroutine is left.
func TestCloseEndsDedicatedWatchAndSubscription(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	k := key(t, "k")
	sub, err := c.Subscribe(testCtx(t), k)
	must(t, err)
	dedicated, watch := make(chan error, 1), make(chan error, 1)
	go func() {
		dedicated <- c.Dedicated(testCtx(t), func(conn *Conn) error {
			_, err := conn.Do(testCtx(t), NewCommand("BLPOP"), key(t, "never"), "0")
			return err
		})
	}()
	inCallback, closed := make(chan struct{}), make(chan struct{})
	go func() {
		watch <- c.Watch(testCtx(t), func(tx *Tx) error {
			close(inCallback)
			<-closed
			_, err := tx.Get(testCtx(t), k)
			return err
		}, k)
	}()
	waitNamedBlocked(t, name)
	<-inCallback
	must(t, c.Close())
	close(closed)
	if err := <-dedicated; !errors.Is(err, ErrClosed) {
		t.Errorf("Dedicated BLPOP during Close = %v, want ErrClosed", err)
	}
	var ce *ConnError
	if err := <-watch; !errors.Is(err, ErrClosed) || !errors.As(err, &ce) || !ce.Unwritten {
		t.Errorf("Watch callback's GET after Close = %v, want an unwritten *ConnError matching ErrClosed", err)
	}
	for m := range sub.Channel() {
		t.Errorf("message after Close: %+v", m)
	}
}

// TestMaxBulkExceeded reads a 2 KiB value with MaxBulk 1024: a protocol
// error that resets the connection, said on one line with what the reader
// found ("bulk length exceeds the reader's limit", matching
// resp.ErrBulkTooLarge); the next call succeeds on a new one.
func TestMaxBulkExceeded(t *testing.T) {
	addr := standaloneAddr(t)
	forEachProtocol(t, Options{MaxBulk: 1024}, func(t *testing.T, c *Client) {
		big, small := key(t, "big"), key(t, "small")
		admin(t, addr, "SET", big, strings.Repeat("x", 2048))
		admin(t, addr, "SET", small, strings.Repeat("y", 1024))
		reads := []struct {
			name string
			get  func() error
		}{
			{"Get", func() error { _, err := c.Get(testCtx(t), big); return err }},
			{"GetBytes", func() error { _, err := c.GetBytes(testCtx(t), big, nil); return err }},
			{"Do", func() error { _, err := c.Do(testCtx(t), NewCommand("GET"), big); return err }},
		}
		for _, r := range reads {
			err := r.get()
			var ce *ConnError
			if !errors.Is(err, ErrProtocol) || !errors.As(err, &ce) || ce.Unwritten {
				t.Errorf("%s(2 KiB) error = %v; want a written *ConnError matching ErrProtocol", r.name, err)
			}
			if !errors.Is(err, resp.ErrBulkTooLarge) {
				t.Errorf("%s(2 KiB) error = %v; want it to match resp.ErrBulkTooLarge", r.name, err)
			}
			wantText(t, r.name, err, "respire: GET: connection lost; the command may have been executed: protocol error: bulk length exceeds the reader's limit (2048 bytes)")
			if got, err := c.Get(testCtx(t), small); err != nil || len(got) != 1024 {
				t.Errorf("Get(1 KiB) after %s = %d bytes, %v; want 1024 bytes", r.name, len(got), err)
			}
		}
	})
}

// TestProtocolErrorFailsEveryCallInFlight holds the oversized reply at a
// proxy until other calls are in flight behind it: all of them fail.
func TestProtocolErrorFailsEveryCallInFlight(t *testing.T) {
	addr := standaloneAddr(t)
	p, err := respiretest.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	// The calls in flight are all on the one shared connection.
	forEachProtocol(t, Options{Endpoints: []string{p.Addr()}, MaxBulk: 1024, SoloConnections: NoSoloConnections}, func(t *testing.T, c *Client) {
		big := key(t, "big")
		admin(t, addr, "SET", big, strings.Repeat("x", 2048))
		hold := p.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: big, Action: respiretest.Hold})
		defer hold.Release()
		getErr := make(chan error, 1)
		go func() { _, err := c.Get(testCtx(t), big); getErr <- err }()
		<-hold.Received()
		const n = 4
		errs := make(chan error, n)
		for i := range n {
			msg := t.Name() + "/" + strconv.Itoa(i)
			h := p.MustAddRule(t, respiretest.Rule{Command: "ECHO", Arg: msg, Action: respiretest.Pass})
			go func() { _, err := c.Echo(testCtx(t), msg); errs <- err }()
			<-h.Received()
		}
		hold.Release()
		if err := <-getErr; !errors.Is(err, ErrProtocol) {
			t.Errorf("Get error = %v; want ErrProtocol", err)
		}
		for range n {
			err := <-errs
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Unwritten {
				t.Errorf("Echo in flight error = %v; want a written *ConnError", err)
			}
		}
		if got, err := c.Echo(testCtx(t), "after"); err != nil || got != "after" {
			t.Errorf("Echo after the reset = %q, %v; want \"after\"", got, err)
		}
	})
}

// fakeServer serves every connection by reading one chunk and answering
// with reply, then waiting for the client to hang up. It stops when the
// test ends.
func fakeServer(t *testing.T, reply []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				buf := make([]byte, 4096)
				if _, err := conn.Read(buf); err != nil {
					return
				}
				_, _ = conn.Write(reply)
				for {
					if _, err := conn.Read(buf); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// TestMalformedReplyIsProtocolError answers a command with hostile bytes
// from a fake server (RESP2: no handshake, so the command is the first
// frame): each is a protocol error, nothing panics, memory stays bounded.
func TestMalformedReplyIsProtocolError(t *testing.T) {
	tests := []struct {
		name  string
		reply string
	}{
		{"UnknownType", "?what\r\n"},
		{"BadBulkLength", "$abc\r\n"},
		{"NegativeBulkLength", "$-5\r\n"},
		{"BulkBeyondDefaultMaxBulk", "$1000000000\r\n"},
		{"BulkBeyondMaxInt64", "$99999999999999999999999\r\n"},
		{"BulkWithoutCRLF", "$3\r\nabcXY"},
		{"HugeArrayThenGarbage", "*2000000000\r\n:1\r\n?x\r\n"},
		{"HugeMapThenGarbage", "%2000000000\r\n:1\r\n?x\r\n"},
		{"DeepNesting", strings.Repeat("*1\r\n", 10000)},
		{"BadInteger", ":12x\r\n"},
		{"LineWithoutCR", "+OK\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeServer(t, []byte(tt.reply))
			c := newClient(t, Options{Endpoints: []string{addr}, Protocol: 2})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := c.Do(ctx, NewCommand("GET"), "k")
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrConnectionLost) {
				t.Errorf("error = %v; want ErrProtocol and ErrConnectionLost", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("allocated %d bytes for one hostile reply; want < 4 MiB", grew)
			}
		})
	}
}

func TestServerErrorKeepsConnection(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		conn := c.ep.Current()
		_, err := c.Do(testCtx(t), NewCommand("NOSUCHCOMMAND"), "x")
		if !errors.Is(err, &ServerError{Code: "ERR"}) {
			t.Fatalf("error = %v; want *ServerError ERR", err)
		}
		must(t, c.Ping(testCtx(t)))
		if c.ep.Current() != conn {
			t.Errorf("an error reply replaced the connection")
		}
	})
}

func TestConcurrentCallsGetTheirOwnReplies(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 50 {
					k := key(t, strconv.Itoa(g), strconv.Itoa(i))
					v := strconv.Itoa(g*1000 + i)
					if err := c.Set(ctx, k, v); err != nil {
						t.Errorf("Set: %v", err)
						return
					}
					buf, err := c.GetBytes(ctx, k, nil)
					if err != nil || !bytes.Equal(buf, []byte(v)) {
						t.Errorf("GetBytes(%s) = %q, %v; want %q", k, buf, err, v)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}
