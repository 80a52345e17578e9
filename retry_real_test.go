package respire

// Proof against the real server: through the fault proxy in front of
// redis-server, every category x failure x selection x policy maximum
// gives the caller the result the rules say, and the server's own INFO
// commandstats show how many times the command really ran.

import (
	"errors"
	"net"
	"strings"
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
	addr := standaloneAddr(t)
	proxy, err := respiretest.NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	env := &matrixEnv{
		proxies: []*respiretest.Proxy{proxy},
		servers: []string{addr},
		connect: func(t *testing.T, opts Options, unwritten bool) *Client {
			opts.Endpoints = []string{proxy.Addr()}
			if unwritten {
				// The first command write (after HELLO) fails before any byte.
				var d net.Dialer
				opts.Dialer = respiretest.FailWritesDialer(d.DialContext, 1, 2, 0)
			}
			c := newClient(t, opts)
			t.Cleanup(func() { flush(t, addr) })
			return c
		},
	}
	runRetryMatrix(t, env)
}

// matrixEnv is one topology for the retry matrix: the proxies every
// command of the client under test goes through, the real servers whose
// commandstats count executions, and how to connect a client (with the
// first command write of each data connection failing when unwritten).
type matrixEnv struct {
	proxies []*respiretest.Proxy
	servers []string
	connect func(t *testing.T, opts Options, unwritten bool) *Client
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
	c := env.connect(t, opts, f.unwritten)
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
