package respire

// Client.Watch under a RetryPolicy: which failures rerun the whole
// callback (a run that provably applied nothing), and which never do.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// TestWatchRerunsAfterLostRead: a connection lost under the callback's
// tx.Get (the proxy closes it instead of forwarding the GET), whose error
// the callback returns wrapped, reruns the whole callback on a fresh
// connection with a fresh WATCH, and the transaction applies exactly
// once: the counter went from 0 to 1 and the private server ran one
// EXEC. The spec's watched helpers rerun their callback rather than
// resend; nothing of the first run was applied.
func TestWatchRerunsAfterLostRead(t *testing.T) {
	addr, c, ctx, rule := firstGetLost(t)
	const k = "counter"
	execs := commandCalls(t, addr, "exec")
	runs := 0
	err := c.Watch(ctx, watchIncr(ctx, k, &runs), k)
	if err != nil {
		t.Fatalf("Watch = %v, want nil after a rerun", err)
	}
	if runs != 2 || rule.Applied() != 1 {
		t.Errorf("the callback ran %d times (%d GETs dropped), want 2 (1)", runs, rule.Applied())
	}
	if v, err := admin(t, addr, "GET", k).String(); v != "1" {
		t.Errorf("GET %s = %q, %v; want 1: the transaction applied once", k, v, err)
	}
	if n := commandCalls(t, addr, "exec") - execs; n != 1 {
		t.Errorf("the server ran EXEC %d times, want 1", n)
	}
}

// TestWatchRerunsAfterContainerRead: a read sent through tx.Do as its
// container and subcommand (OBJECT ENCODING, the subcommand travelling as
// the first argument) is a plain read like GET: a run that made one and
// then lost its GET is rerun. It used to count as a write (the
// container's flags, looked up without the subcommand), and Watch gave up.
func TestWatchRerunsAfterContainerRead(t *testing.T) {
	_, c, ctx, rule := firstGetLost(t)
	const k = "counter"
	runs := 0
	incr := watchIncr(ctx, k, &runs)
	err := c.Watch(ctx, func(tx *Tx) error {
		if _, err := tx.Do(ctx, NewCommand("OBJECT"), "ENCODING", k); err != nil {
			return err
		}
		return incr(tx)
	}, k)
	if err != nil {
		t.Fatalf("Watch = %v, want nil after a rerun", err)
	}
	if runs != 2 || rule.Applied() != 1 {
		t.Errorf("the callback ran %d times (%d GETs dropped), want 2 (1)", runs, rule.Applied())
	}
}

// firstGetLost returns a private server's address and a client of it
// (retry policy with no backoff) whose first GET the proxy drops with the
// connection (rule counts it), and the test's context.
func firstGetLost(t *testing.T) (string, *Client, context.Context, *respiretest.RuleHandle) {
	addr := privateServer(t)
	px := realProxy(t, addr)
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	rule := px.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward})
	return addr, c, testCtx(t), rule
}

// watchIncr is a Watch callback that counts its runs in runs, reads k
// with tx.Get (returning its failure wrapped) and queues SET k to the
// value read plus one.
func watchIncr(ctx context.Context, k string, runs *int) func(tx *Tx) error {
	return func(tx *Tx) error {
		*runs++
		v, err := tx.Get(ctx, k)
		if err != nil && !errors.Is(err, ErrNil) {
			return fmt.Errorf("reading %s: %w", k, err)
		}
		n, _ := strconv.Atoi(v)
		tx.Queue().Set(k, strconv.Itoa(n+1))
		return nil
	}
}

// TestWatchRerunsWhenNothingWasApplied: under a policy that selects the
// failure, a run that failed before any byte of its MULTI ... EXEC was
// written (WATCH answered LOADING or its connection lost, the callback's
// read refused with LOADING), or whose MULTI ... EXEC frame is known
// unwritten (the write failed), reruns the whole callback; the
// transaction then applies once. With MaxAttempts 3 and the failure on
// every run, Watch gives up after 3 failed runs with a *RetryError of 3
// attempts wrapping the last failure, which did not run. On the in-memory
// server, in virtual time.
func TestWatchRerunsWhenNothingWasApplied(t *testing.T) {
	isLoading := func(err error) bool { return errors.Is(err, &ServerError{Code: "LOADING"}) }
	isUnwritten := func(err error) bool {
		var ce *ConnError
		return errors.As(err, &ce) && ce.Unwritten
	}
	cases := []struct {
		name      string
		rule      respiretest.Rule // no Command: no rule
		unwritten string           // a command whose first write fails
		callback  bool             // the callback ran on the failed run
		last      func(error) bool // the last failure, when every run fails
	}{
		{name: "WATCHLoading", rule: respiretest.Rule{Command: "WATCH", Action: respiretest.Inject(respiretest.ErrLoading)}, last: isLoading},
		{name: "WATCHLost", rule: respiretest.Rule{Command: "WATCH", Action: respiretest.DropBeforeForward},
			last: func(err error) bool { return errors.Is(err, ErrConnectionLost) }},
		{name: "ReadLoading", rule: respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)}, callback: true, last: isLoading},
		{name: "ExecUnwritten", unwritten: "MULTI", callback: true, last: isUnwritten},
	}
	for _, tc := range cases {
		modes := []bool{false, true} // the fault on every run
		if tc.unwritten != "" {
			modes = modes[:1] // the write fault fires once
		}
		for _, always := range modes {
			t.Run(fmt.Sprintf("%s/everyRun=%v", tc.name, always), func(t *testing.T) {
				retrySynctest(t, func(t *testing.T) {
					s := respiretest.NewServer(t)
					opts := Options{RetryPolicy: &RetryPolicy{MaxAttempts: 3}}
					if tc.unwritten != "" {
						opts.Dialer = failFirstWriteOf(NewCommand(tc.unwritten))(s.Dial)
					}
					var rule *respiretest.RuleHandle
					if tc.rule.Command != "" {
						r := tc.rule
						if always {
							r.Times = respiretest.Always
						}
						rule = s.MustAddRule(t, r)
					}
					c := retryMemClient(t, s, opts)
					ctx := context.Background()
					runs := 0
					err := c.Watch(ctx, watchIncr(ctx, "k", &runs), "k")
					if rule != nil {
						rule.Remove()
					}
					v, gerr := c.Get(ctx, "k")
					if !always {
						if err != nil || v != "1" {
							t.Errorf("Watch = %v, k = %q (%v); want nil and 1: one rerun, applied once", err, v, gerr)
						}
						if want := 1 + b2i(tc.callback); runs != want {
							t.Errorf("the callback ran %d times, want %d", runs, want)
						}
						return
					}
					var re *RetryError
					if !errors.As(err, &re) || re.Attempts != 3 || !tc.last(err) || MayHaveExecuted(err) {
						t.Errorf("Watch = %v, want a *RetryError of 3 attempts wrapping the last failure, not executed", err)
					}
					if n := rule.Matched(); n != 3 {
						t.Errorf("%s reached the server %d times, want 3 (MaxAttempts)", tc.rule.Command, n)
					}
					if want := 3 * b2i(tc.callback); runs != want {
						t.Errorf("the callback ran %d times, want %d", runs, want)
					}
					if !errors.Is(gerr, ErrNil) {
						t.Errorf("GET k = %q, %v; want ErrNil: nothing was applied", v, gerr)
					}
				})
			})
		}
	}
}

// TestWatchRerunsOnlyTheTxFailure: a run is rerun only for the failure of
// one of its own tx commands that the callback returns. The callback's
// own error never reruns it, not even one wrapping a connection lost by
// another client's command (which may have run), and neither does a
// failed read after the callback wrote through tx.Do (the write ran at
// once, outside the transaction), nor a failure that the policy does not
// select, nor any failure without a policy. Each ends Watch after one run
// with the run's error.
func TestWatchRerunsOnlyTheTxFailure(t *testing.T) {
	all := &RetryPolicy{MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}
	cases := []struct {
		name   string
		policy *RetryPolicy
		rule   respiretest.Rule
		fn     func(ctx context.Context, tx *Tx, other *Client) error
	}{
		{name: "OtherClientsLostRead", policy: all, rule: respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward},
			fn: func(ctx context.Context, tx *Tx, other *Client) error {
				if _, err := other.Get(ctx, "k"); err != nil && !errors.Is(err, ErrNil) {
					return fmt.Errorf("the other client: %w", err)
				}
				_, err := tx.Get(ctx, "k")
				if errors.Is(err, ErrNil) {
					err = nil
				}
				return err
			}},
		{name: "ReadAfterTxWrite", policy: all, rule: respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward},
			fn: func(ctx context.Context, tx *Tx, _ *Client) error {
				if _, err := tx.Do(ctx, NewCommand("INCR"), "written"); err != nil {
					return err
				}
				_, err := tx.Get(ctx, "k")
				return err
			}},
		{name: "NotSelected", policy: &RetryPolicy{RetryableErrors: RetryOnLoading, InitialBackoff: NoBackoff},
			rule: respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward},
			fn: func(ctx context.Context, tx *Tx, _ *Client) error {
				_, err := tx.Get(ctx, "k")
				return err
			}},
		{name: "NoPolicyReadLost", rule: respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward},
			fn: func(ctx context.Context, tx *Tx, _ *Client) error {
				_, err := tx.Get(ctx, "k")
				return err
			}},
		{name: "NoPolicyWATCHLoading", rule: respiretest.Rule{Command: "WATCH", Action: respiretest.Inject(respiretest.ErrLoading)},
			fn: func(context.Context, *Tx, *Client) error { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				rule := s.MustAddRule(t, tc.rule)
				c := retryMemClient(t, s, Options{RetryPolicy: tc.policy})
				other := retryMemClient(t, s, Options{})
				ctx := context.Background()
				runs := 0
				err := c.Watch(ctx, func(tx *Tx) error {
					runs++
					if err := tc.fn(ctx, tx, other); err != nil {
						return err
					}
					tx.Queue().Incr("k")
					return nil
				}, "k")
				if err == nil || !errors.Is(err, ErrConnectionLost) && !errors.Is(err, &ServerError{Code: "LOADING"}) {
					t.Errorf("Watch = %v, want the run's failure", err)
				}
				var re *RetryError
				if errors.As(err, &re) {
					t.Errorf("Watch = %v, want no *RetryError: nothing was rerun", err)
				}
				if rule.Applied() != 1 || runs > 1 {
					t.Errorf("the callback ran %d times, the fault applied %d times; want at most 1 and 1", runs, rule.Applied())
				}
				if _, err := other.Get(ctx, "k"); !errors.Is(err, ErrNil) {
					t.Errorf("GET k = %v, want ErrNil: the transaction was not applied", err)
				}
			})
		})
	}
}

// TestWatchRerunBackoff: between runs rerun after a failure Watch waits
// the policy's backoff (NoJitter: exactly 10 ms then 20 ms, in virtual
// time), and the reruns, which resend nothing, record nothing in
// respire.command.retries; a backoff that cannot end before the context's
// deadline ends Watch with the failure at once, without a rerun; a
// cancellation or Close during the backoff ends Watch with the caller's
// error (or ErrClosed), saying that nothing ran, the failure attached.
func TestWatchRerunBackoff(t *testing.T) {
	policy := func(initial time.Duration) *RetryPolicy {
		return &RetryPolicy{MaxAttempts: 3, InitialBackoff: initial, MaxBackoff: time.Minute, Jitter: NoJitter}
	}
	loading := respiretest.Rule{Command: "WATCH", Action: respiretest.Inject(respiretest.ErrLoading)}
	t.Run("Delays", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			var arrivals retryArrivals
			s.MustAddRule(t, respiretest.Rule{Command: "WATCH", Times: respiretest.Always, Action: respiretest.Pass, OnReceive: arrivals.onReceive})
			r := loading
			r.Times = 2
			s.MustAddRule(t, r)
			c, reader := retryMetricsClient(t, s, Options{RetryPolicy: policy(10 * time.Millisecond)})
			arrivals.reset()
			if err := c.Watch(context.Background(), func(tx *Tx) error { tx.Queue().Incr("k"); return nil }, "k"); err != nil {
				t.Fatalf("Watch = %v, want nil on the third run", err)
			}
			if got, want := arrivals.get(), []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the WATCHes arrived at %v, want %v", got, want)
			}
			if got := retryCollect(t, reader); len(got) != 0 {
				t.Errorf("respire.command.retries = %v, want nothing recorded", got)
			}
		})
	})
	t.Run("DeadlineCannotFit", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			rule := s.MustAddRule(t, loading)
			c := retryMemClient(t, s, Options{RetryPolicy: policy(time.Second)})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := c.Watch(ctx, func(tx *Tx) error { return nil }, "k")
			var re *RetryError
			if !errors.Is(err, &ServerError{Code: "LOADING"}) || errors.As(err, &re) {
				t.Errorf("Watch = %v, want the LOADING error itself", err)
			}
			if rule.Matched() != 1 || time.Since(start) != 0 {
				t.Errorf("WATCH sent %d times, Watch took %v; want 1, at once", rule.Matched(), time.Since(start))
			}
		})
	})
	for _, how := range []string{"Cancel", "Close"} {
		t.Run(how, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				rule := s.MustAddRule(t, loading)
				c := retryMemClient(t, s, Options{RetryPolicy: policy(time.Minute)})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- c.Watch(ctx, func(tx *Tx) error { tx.Queue().Incr("k"); return nil }, "k") }()
				<-rule.Received()
				synctest.Wait() // the LOADING reply is seen and the backoff started
				if how == "Cancel" {
					cancel()
				} else {
					_ = c.Close()
				}
				err := <-done
				var want error = context.Canceled
				if how == "Close" {
					want = ErrClosed
				}
				if !errors.Is(err, want) || MayHaveExecuted(err) || !errors.Is(err, &ServerError{Code: "LOADING"}) {
					t.Errorf("Watch = %v, want %v, not executed, with the LOADING failure", err, want)
				}
				if n := rule.Matched(); n != 1 {
					t.Errorf("WATCH sent %d times, want 1", n)
				}
			})
		})
	}
}
