package respire

// Proof against the real server: through the fault proxy in front of
// redis-server, every category x failure x selection x policy maximum
// gives the caller the result the rules say, and the server's own INFO
// commandstats show how many times the command really ran.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// retryRealCommand is a command of one category whose executions the
// server counts under a name no other test uses.
type retryRealCommand struct {
	cat   RetryCategory
	cmd   Command
	args  func(key string) []string
	stats string // INFO commandstats name
}

var retryRealCommands = []retryRealCommand{
	// PING and ECHO, the only Always commands, are used everywhere;
	// LOLWUT has no effect either and is declared Always.
	{Always, catalog.Server.LOLWUT().WithRetryCategory(Always), func(string) []string { return nil }, "lolwut"},
	{Connection, catalog.Server.LASTSAVE(), func(string) []string { return nil }, "lastsave"},
	{ReadOnly, catalog.String.GETRANGE(), func(k string) []string { return []string{k, "0", "-1"} }, "getrange"},
	{WriteChecked, catalog.Hash.HSETNX(), func(k string) []string { return []string{k, "f", "v"} }, "hsetnx"},
	{WriteLastWins, catalog.String.SETRANGE(), func(k string) []string { return []string{k, "0", "v"} }, "setrange"},
	{WriteAccumulating, catalog.Hash.HINCRBY(), func(k string) []string { return []string{k, "f", "1"} }, "hincrby"},
	{ServerAdmin, catalog.Server.LATENCY_RESET(), func(string) []string { return nil }, "latency|reset"},
}

func TestRetryRealServerMatrix(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	proxy, err := respiretest.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	env := &matrixEnv{
		proxies: []*respiretest.Proxy{proxy},
		servers: []string{addr},
		connect: func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) *Client {
			opts.Endpoints = []string{proxy.Addr()}
			var d net.Dialer
			opts.Dialer = fault(d.DialContext)
			c := newClient(t, opts)
			t.Cleanup(func() { flush(t, addr) })
			return c
		},
	}
	runRetryMatrix(t, env)
}

// matrixEnv is one topology for the retry matrix: the proxies every
// command of the client under test goes through, the real servers whose
// commandstats count executions, and how to connect a client whose
// connections are dialed through fault (which may wrap them).
type matrixEnv struct {
	proxies []*respiretest.Proxy
	servers []string
	connect func(t *testing.T, opts Options, fault func(respiretest.DialFunc) respiretest.DialFunc) *Client
}

// failFirstWriteOf wraps dial so that the first write, on any of its
// connections, that carries command (its name as a RESP bulk string, and
// its subcommand's) fails before any byte of it is written and closes
// that connection; every other write passes. The fault is bound to the
// command, not to a write count, so a handshake that takes more or fewer
// writes, or a connection redialled under load, cannot take it.
func failFirstWriteOf(command Command) func(respiretest.DialFunc) respiretest.DialFunc {
	var frame []byte
	for _, part := range strings.Fields(command.FullName()) {
		frame = fmt.Appendf(frame, "$%d\r\n%s\r\n", len(part), part)
	}
	var fired atomic.Bool
	return func(dial respiretest.DialFunc) respiretest.DialFunc {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &failWriteOfConn{Conn: nc, frame: frame, fired: &fired}, nil
		}
	}
}

// failWriteOfConn is a connection of failFirstWriteOf.
type failWriteOfConn struct {
	net.Conn
	frame []byte
	fired *atomic.Bool
}

func (c *failWriteOfConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.frame) && c.fired.CompareAndSwap(false, true) {
		c.Conn.Close()
		return 0, respiretest.ErrInjectedWrite
	}
	return c.Conn.Write(p)
}

func runRetryMatrix(t *testing.T, env *matrixEnv) {
	faults := []retryFault{faultUnwritten, faultDropBefore, faultLostReply, faultLoading, faultTryAgain, faultMasterDown, faultReadOnly, faultBusy}
	maxima := []RetryCategory{Never, Always, ReadOnly, WriteLastWins, WriteAccumulating, ServerAdmin}
	for _, rc := range retryRealCommands {
		if rc.cmd.Category() != rc.cat {
			t.Fatalf("%s has category %v, want %v", rc.cmd.FullName(), rc.cmd.Category(), rc.cat)
		}
		for _, f := range faults {
			for _, selected := range []bool{true, false} {
				for _, max := range maxima {
					name := rc.cat.String() + "/" + f.name + "/selected=" + map[bool]string{true: "yes", false: "no"}[selected] + "/max=" + max.String()
					t.Run(name, func(t *testing.T) {
						retryRealCase(t, env, rc, f, selected, max)
					})
				}
			}
		}
	}
}

func retryRealCase(t *testing.T, env *matrixEnv, rc retryRealCommand, f retryFault, selected bool, max RetryCategory) {
	errs := f.otherFlags()
	if selected {
		errs = DefaultRetryableErrors
	}
	// The reference rules: a selected failure, retries enabled, and an
	// unwritten frame or a permitted category.
	retried := max != Never && selected && f.flag != 0 && (f.unwritten || max >= rc.cat)
	wantExec := b2i(f.executed) + b2i(retried)

	opts := Options{
		RetryPolicy: &RetryPolicy{MaxAttempts: 2, MaxCommandRetryCategory: max, RetryableErrors: errs, InitialBackoff: NoBackoff},
	}
	fault := func(dial respiretest.DialFunc) respiretest.DialFunc { return dial }
	if f.unwritten {
		fault = failFirstWriteOf(rc.cmd)
	}
	c := env.connect(t, opts, fault)
	k := keyPrefix(t) + "k"
	if f.action != nil {
		for _, p := range env.proxies {
			rule := p.MustAddRule(t, respiretest.Rule{Command: rc.cmd.Name(), Action: *f.action})
			defer rule.Remove()
		}
	}

	calls := func() int {
		n := 0
		for _, s := range env.servers {
			n += commandCalls(t, s, rc.stats)
		}
		return n
	}
	before := calls()
	_, err := c.Do(testCtx(t), rc.cmd, anys(rc.args(k))...)
	after := calls()

	if got := after - before; got != wantExec {
		t.Errorf("server ran %s %d times, want %d", rc.stats, got, wantExec)
	}
	if retried {
		if err != nil {
			t.Errorf("err = %v, want the resend's reply", err)
		}
		return
	}
	retryWantAttempts(t, err, 1)
	switch {
	case f.code != "":
		var se *ServerError
		if !errors.As(err, &se) || se.Code != f.code || !strings.HasPrefix(se.Message, f.code+" ") {
			t.Errorf("err = %v, want the %s reply", err, f.code)
		}
	default:
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Unwritten != f.unwritten {
			t.Errorf("err = %v, want a *ConnError with Unwritten %v", err, f.unwritten)
		}
	}
}
