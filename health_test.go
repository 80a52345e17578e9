package respire

// Health and backpressure of the shared connection, against the real
// server through the fault proxy: a partition (no byte either way, nothing
// closed) retires the connection within HealthTimeout and the client
// recovers once it heals; a full pending queue makes callers wait within
// their contexts and reports them as never written.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

func TestPartitionFailsCallsWithinDeadlinesAndHealRecovers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *RetryPolicy
	}{
		{"NoRetries", nil},
		{"ReadsRetried", &RetryPolicy{MaxCommandRetryCategory: ReadOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) { testPartitionRecovery(t, tc.policy) })
	}
}

func testPartitionRecovery(t *testing.T, policy *RetryPolicy) {
	proxy := realProxy(t, standaloneAddr(t))
	const (
		health   = 300 * time.Millisecond
		dial     = 500 * time.Millisecond
		deadline = 1500 * time.Millisecond
		slack    = time.Second // scheduling under -race, not a performance bound
		n        = 32
	)
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}, HealthTimeout: health, DialTimeout: dial,
		CommandTimeout: time.Minute, RetryPolicy: policy})
	ctx := testCtx(t)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(t, strconv.Itoa(i))
		if err := c.Set(ctx, keys[i], "v"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}

	pt := proxy.Partition()
	var wg sync.WaitGroup
	errs := make([]error, n)
	var retirements atomic.Int64
	for i := range keys {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			got, err := c.Get(cctx, keys[i])
			if took := time.Since(start); took > deadline+slack {
				errs[i] = fmt.Errorf("returned after %v, past its %v deadline", took, deadline)
				return
			}
			if err == nil {
				errs[i] = fmt.Errorf("succeeded through a partition with %q", got)
				return
			}
			// Either the health check retired the connection first (the
			// GET was sent: connection lost, may have run) or the
			// deadline came first.
			retired := errors.Is(err, ErrConnectionLost) && errors.Is(err, ErrHealthTimeout) && MayHaveExecuted(err)
			// With retries, a resend means the first attempt failed
			// before the deadline: only the health check ends it.
			var re *RetryError
			retired = retired || errors.As(err, &re) && re.Attempts >= 2
			if retired {
				retirements.Add(1)
			}
			if !retired && !errors.Is(err, context.DeadlineExceeded) {
				errs[i] = fmt.Errorf("failed with %v, want a health retirement or its deadline", err)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("GET %s during the partition: %v", keys[i], err)
		}
	}
	// The deadline (1.5 s) is longer than a retirement takes (HealthTimeout
	// to twice it): without the health check no call would fail early.
	if retirements.Load() == 0 {
		t.Errorf("no GET failed with ErrHealthTimeout: the silent connection was never retired")
	}

	pt.Heal()
	// A new call succeeds within HealthTimeout plus one dial (the
	// connection it finds may still be the silent one being retired).
	rctx, cancel := context.WithTimeout(context.Background(), health+dial+slack)
	defer cancel()
	if got, err := c.Get(rctx, keys[0]); err != nil || got != "v0" {
		t.Fatalf("GET after heal = %q, %v; want v0 within HealthTimeout plus one dial", got, err)
	}
	concurrentOwnReplies(t, c, 1000)
}

// A caller that finds the pending queue full waits within its context and,
// if it ends first, gets a ContextError saying nothing was written. A
// frame whose caller left still counts until its reply is drained.
func TestBackpressureWaitsAndReportsUnwritten(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}, MaxPendingCommands: 1,
		CommandTimeout: time.Minute})
	ctx := testCtx(t)
	held, waiting := key(t, "held"), key(t, "waiting")
	if err := c.Set(ctx, held, "h"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, waiting, "w"); err != nil {
		t.Fatal(err)
	}
	hold := proxy.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: held, Action: respiretest.Hold})

	// The held GET's caller leaves: its frame still fills the queue.
	hctx, hcancel := context.WithCancel(ctx)
	heldErr := make(chan error, 1)
	go func() {
		_, err := c.Get(hctx, held)
		heldErr <- err
	}()
	<-hold.Received()
	hcancel()
	if err := <-heldErr; !errors.Is(err, context.Canceled) || !MayHaveExecuted(err) {
		t.Fatalf("held GET = %v (MayHaveExecuted %v), want a cancellation that may have run", err, MayHaveExecuted(err))
	}

	wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer wcancel()
	_, err := c.Get(wctx, waiting)
	var ce *ContextError
	if !errors.As(err, &ce) || ce.Sent || MayHaveExecuted(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GET behind a full queue = %v, want a ContextError with Sent false", err)
	}
	if got := proxy.Stats("GET").Received; got != 1 {
		t.Fatalf("the proxy received %d GETs, want 1: the waiting GET must not be written", got)
	}

	hold.Release() // the abandoned reply drains and frees the queue
	if got, err := c.Get(ctx, waiting); err != nil || got != "w" {
		t.Fatalf("GET after the drain = %q, %v; want w", got, err)
	}
}

// TestHealthProbeAnsweredWithAnErrorKeepsTheConnection proves, on a
// private server, that a health probe the server answers with an error
// reply proves it alive: a full server's "-ERR max number of clients
// reached" (sent as it closes the probe's connection) and a password's
// NOAUTH. A SET that CLIENT PAUSE WRITE holds for ten HealthTimeouts on
// the shared connection (silent, owing it, while the probes are made)
// succeeds; the server's INFO shows the probes it rejected.
func TestHealthProbeAnsweredWithAnErrorKeepsTheConnection(t *testing.T) {
	const health, pause = 100 * time.Millisecond, 10 * 100 // ms
	for _, tc := range []struct {
		name     string
		password string
		stat     string // the INFO field that counts the rejected probes
	}{
		{"MaxClients", "", "rejected_connections"},
		{"NoAuth", testPassword, "errorstat_NOAUTH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := privateServer(t)
			if tc.password != "" {
				admin(t, addr, "CONFIG", "SET", "requirepass", tc.password)
			}
			ctx := testCtx(t)
			opts := Options{Endpoints: []string{addr}, Password: tc.password, HealthTimeout: health}
			a := newClient(t, Options{Endpoints: []string{addr}, Password: tc.password, Protocol: 2})
			c := newClient(t, opts)
			must(t, c.Ping(ctx))
			must(t, a.Ping(ctx))
			if tc.password == "" {
				n := infoStat(t, a, "clients", "connected_clients")
				_, err := a.Do(ctx, NewCommand("CONFIG"), "SET", "maxclients", strconv.FormatInt(n, 10))
				must(t, err)
			}
			before := infoStat(t, a, "everything", tc.stat)
			_, err := a.Do(ctx, NewCommand("CLIENT"), "PAUSE", strconv.Itoa(pause), "WRITE")
			must(t, err)
			start := time.Now()
			if err := c.Set(ctx, key(t, "paused"), "v"); err != nil {
				t.Fatalf("SET held by CLIENT PAUSE WRITE while the probes were answered with errors: %v", err)
			}
			if held := time.Since(start); held < 5*health {
				t.Fatalf("the SET returned after %v, want it held by the pause (%d ms)", held, pause)
			}
			if probes := infoStat(t, a, "everything", tc.stat) - before; probes < 2 {
				t.Errorf("%s grew by %d during the pause, want the health probes (several)", tc.stat, probes)
			}
		})
	}
}

// infoStat returns the number in field of c's server's INFO section (for
// errorstat_* fields, its count).
func infoStat(t *testing.T, c *Client, section, field string) int64 {
	t.Helper()
	r, err := c.Do(testCtx(t), NewCommand("INFO"), section)
	info, serr := r.String()
	if err != nil || serr != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		v, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		v = strings.TrimPrefix(v, "count=")
		v, _, _ = strings.Cut(v, ",")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("INFO %s: bad %s in %q", section, field, line)
		}
		return n
	}
	return 0
}
