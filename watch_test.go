package respire

// Client.Watch: how often the callback runs on conflicts and failures (on
// the in-memory server, in synctest bubbles), and the Cluster slot check
// of its queue (on the real Cluster).

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// TestWatchGivesUpAfter16Conflicts: when every EXEC conflicts (the
// callback itself changes the watched key through another client), the
// callback runs exactly 16 times, Watch returns an error matching
// ErrTxConflict, nothing is applied, and each wait between two runs is
// above zero and at most the documented backoff (1 ms doubling, at most
// 100 ms). In virtual time, so the waits are the backoffs alone.
func TestWatchGivesUpAfter16Conflicts(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c := retryMemClient(t, s, Options{})
		other := retryMemClient(t, s, Options{})
		ctx := context.Background()
		var starts []time.Time
		var set Future[struct{}]
		err := c.Watch(ctx, func(tx *Tx) error {
			starts = append(starts, time.Now())
			if _, err := tx.Get(ctx, "k"); err != nil && !errors.Is(err, ErrNil) {
				return err
			}
			if err := other.Set(ctx, "k", "other "+strconv.Itoa(len(starts))); err != nil {
				return err
			}
			set = tx.Queue().Set("k", "watched")
			return nil
		}, "k")
		if !errors.Is(err, ErrTxConflict) {
			t.Fatalf("Watch = %v, want ErrTxConflict", err)
		}
		// Each text is one line that says "respire:" once.
		if want := "respire: WATCH: gave up after 16 attempts: watched keys changed before EXEC; the transaction was not applied"; err.Error() != want {
			t.Errorf("Watch = %q, want %q", err, want)
		}
		if err := set.Err(); !errors.Is(err, ErrTxConflict) {
			t.Errorf("the last run's member = %v, want ErrTxConflict (its EXEC was sent and applied nothing)", err)
		} else if want := "respire: EXEC: this run's members were not applied: watched keys changed before EXEC; the transaction was not applied"; err.Error() != want {
			t.Errorf("the last run's member = %q, want %q", err, want)
		}
		if len(starts) != 16 {
			t.Fatalf("the callback ran %d times, want 16", len(starts))
		}
		if v, err := other.Get(ctx, "k"); err != nil || v != "other 16" {
			t.Errorf("GET k = %q, %v; want the other client's last write", v, err)
		}
		for i := 1; i < len(starts); i++ {
			ceiling := min(time.Millisecond<<(i-1), 100*time.Millisecond)
			if gap := starts[i].Sub(starts[i-1]); gap <= 0 || gap > ceiling {
				t.Errorf("wait before run %d = %v, want in (0, %v]", i+1, gap, ceiling)
			}
		}
	})
}

// TestWatchNeverRerunsWhatMayHaveRun: a failure after MULTI ... EXEC may
// have been written ends Watch after a single run of the callback, with
// that failure, even under a retry policy that selects every failure and
// permits every category: a connection lost before or after EXEC's reply
// (*ConnError, not Unwritten), a timeout or a cancellation while EXEC
// waits (*ContextError), a server error of EXEC or of a queued command
// (*ServerError, LOADING, which the policy would retry elsewhere); each
// says the transaction may have run. The callback's own error ends it
// too. Without a policy, the same.
func TestWatchNeverRerunsWhatMayHaveRun(t *testing.T) {
	errOwn := errors.New("the callback's own error")
	isConnError := func(err error) bool {
		var ce *ConnError
		return errors.As(err, &ce) && errors.Is(err, ErrConnectionLost)
	}
	isContextError := func(want error) func(error) bool {
		return func(err error) bool {
			var ce *ContextError
			return errors.As(err, &ce) && ce.Sent && errors.Is(err, want)
		}
	}
	isLoading := func(command string) func(error) bool {
		return func(err error) bool {
			var se *ServerError
			return errors.As(err, &se) && se.Code == "LOADING" && se.Command == command
		}
	}
	cases := []struct {
		name    string
		rule    respiretest.Rule // no Command: no rule
		cancels bool             // the rule's frame cancels the context
		opts    Options
		fnErr   error
		want    func(error) bool
	}{
		{name: "EXECNotForwarded", rule: respiretest.Rule{Command: "EXEC", Action: respiretest.DropBeforeForward}, want: isConnError},
		{name: "EXECReplyLost", rule: respiretest.Rule{Command: "EXEC", Action: respiretest.DropAfterForward}, want: isConnError},
		{name: "Timeout", rule: respiretest.Rule{Command: "EXEC", Action: respiretest.Delay(time.Minute)},
			opts: Options{CommandTimeout: time.Second}, want: isContextError(context.DeadlineExceeded)},
		{name: "Canceled", rule: respiretest.Rule{Command: "EXEC", Action: respiretest.Hold}, cancels: true, want: isContextError(context.Canceled)},
		{name: "EXECLoading", rule: respiretest.Rule{Command: "EXEC", Action: respiretest.Inject(respiretest.ErrLoading)}, want: isLoading("EXEC")},
		{name: "QueuedLoading", rule: respiretest.Rule{Command: "INCR", Action: respiretest.Inject(respiretest.ErrLoading)}, want: isLoading("INCR (transaction member 1)")},
		{name: "CallbackError", fnErr: errOwn, want: func(err error) bool { return errors.Is(err, errOwn) }},
	}
	for _, tc := range cases {
		for _, policy := range []*RetryPolicy{nil, {MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}} {
			t.Run(tc.name+map[bool]string{true: "/NoPolicy", false: "/Policy"}[policy == nil], func(t *testing.T) {
				retrySynctest(t, func(t *testing.T) {
					s := respiretest.NewServer(t)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if tc.rule.Command != "" {
						r := tc.rule
						if tc.cancels {
							r.OnReceive = func([]string) { cancel() }
						}
						h := s.MustAddRule(t, r)
						t.Cleanup(h.Release)
					}
					opts := tc.opts
					opts.RetryPolicy = policy
					c := retryMemClient(t, s, opts)
					runs := 0
					err := c.Watch(ctx, func(tx *Tx) error {
						runs++
						if _, err := tx.Get(ctx, "k"); err != nil && !errors.Is(err, ErrNil) {
							return err
						}
						tx.Queue().Incr("k")
						return tc.fnErr
					}, "k")
					if runs != 1 {
						t.Errorf("the callback ran %d times, want 1", runs)
					}
					if err == nil || !tc.want(err) {
						t.Errorf("Watch = %v (%T)", err, err)
					}
					if tc.rule.Command != "" && !MayHaveExecuted(err) {
						t.Errorf("MayHaveExecuted(%v) = false, want true: EXEC was sent", err)
					}
				})
			})
		}
	}
}

// TestWatchContextEndedBeforeExecSendsNothing: a context that ends while
// the callback runs (the callback does not notice) ends Watch before
// MULTI ... EXEC is sent, as any call whose context has ended sends
// nothing: the queued INCR never runs, and the error says so.
func TestWatchContextEndedBeforeExecSendsNothing(t *testing.T) {
	c := newClient(t, Options{})
	k := key(t, "k")
	ctx, cancel := context.WithCancel(testCtx(t))
	var incr Future[int64]
	err := c.Watch(ctx, func(tx *Tx) error {
		incr = tx.Queue().Incr(k)
		cancel()
		return nil
	}, k)
	var ce *ContextError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
		t.Errorf("Watch = %v, want a *ContextError matching context.Canceled that did not run", err)
	}
	if _, err := incr.Result(); !errors.Is(err, context.Canceled) {
		t.Errorf("the queued INCR's Future = %v, want context.Canceled", err)
	}
	if got, err := c.Get(testCtx(t), k); !errors.Is(err, ErrNil) {
		t.Errorf("GET after the cancelled Watch = %q, %v; want ErrNil: the transaction ran", got, err)
	}
}

// TestWatchClusterQueuedKeyInAnotherSlot: on a Cluster client a queued
// member whose key hashes to another slot than the watched key, on
// another node or on the same one, ends Watch after one run of the
// callback with a *RouteError (the watched slot) matching ErrCrossSlot
// and ErrInvalidArgument, which the member's Future carries too; MULTI
// and EXEC reach no node and the member's key stays unset.
func TestWatchClusterQueuedKeyInAnotherSlot(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	watched := p + "{w}x"
	slot := route.Slot(watched)
	home := slotPrimary(t, c, slot)
	keys := map[string]string{} // case name: queued key
	for i := 0; len(keys) < 2; i++ {
		k := p + "{" + strconv.Itoa(i) + "}y"
		if s := route.Slot(k); s != slot {
			name := "OtherNode"
			if slotPrimary(t, c, s) == home {
				name = "SameNode"
			}
			if _, ok := keys[name]; !ok {
				keys[name] = k
			}
		}
	}
	nodes := testenv.ClusterAddrs(t)
	txSeen := func() int {
		n := 0
		for _, addr := range nodes {
			n += commandSeen(t, addr, "multi") + commandSeen(t, addr, "exec")
		}
		return n
	}
	for _, name := range []string{"OtherNode", "SameNode"} {
		t.Run(name, func(t *testing.T) {
			k := keys[name]
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
			before := txSeen()
			runs := 0
			var set Future[struct{}]
			err := c.Watch(ctx, func(tx *Tx) error {
				runs++
				set = tx.Queue().Set(k, "v")
				return nil
			}, watched)
			var re *RouteError
			if !errors.As(err, &re) || re.Slot != slot || !errors.Is(err, ErrCrossSlot) || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Watch = %v, want a RouteError of slot %d matching ErrCrossSlot and ErrInvalidArgument", err, slot)
			}
			if runs != 1 {
				t.Errorf("the callback ran %d times, want 1", runs)
			}
			if err := set.Err(); !errors.Is(err, ErrCrossSlot) {
				t.Errorf("queued SET = %v, want ErrCrossSlot", err)
			}
			if n := txSeen() - before; n != 0 {
				t.Errorf("MULTI and EXEC reached the Cluster %d times, want 0", n)
			}
			if _, err := c.Get(ctx, k); !errors.Is(err, ErrNil) {
				t.Errorf("GET of the queued key = %v, want ErrNil", err)
			}
		})
	}
}

// TestWatchEndsWithoutResetWhenExecClearedTheWatch: EXEC clears the WATCH
// (whether it applied the transaction or found a conflict), so a Watch
// that reached its EXEC gives the connection back without RESET and the
// handshake (on a server before 6.2, which has no RESET, the connection
// was discarded after every Watch). A Watch that ended before its EXEC
// (the callback's error) still resets, and in both cases the next
// borrower of the connection watches nothing: its own MULTI ... EXEC is
// applied after the old watched key changed. On a private server, whose
// command counts are the test's alone; one pooled connection.
func TestWatchEndsWithoutResetWhenExecClearedTheWatch(t *testing.T) {
	addr := privateServer(t)
	c := newClient(t, Options{Endpoints: []string{addr}, BlockingPoolSize: 1})
	ctx := testCtx(t)
	const k = "watched"
	nextBorrowerWatchesNothing := func(when string) {
		t.Helper()
		err := c.Dedicated(ctx, func(conn *Conn) error {
			if _, err := conn.Do(ctx, NewCommand("MULTI")); err != nil {
				return err
			}
			if _, err := conn.Do(ctx, NewCommand("SET"), "other", "v"); err != nil {
				return err
			}
			admin(t, addr, "SET", k, "changed "+when)
			r, err := conn.Do(ctx, NewCommand("EXEC"))
			if err == nil && r.IsNull() {
				t.Errorf("%s: the next borrower's EXEC was aborted: the connection still watched %q", when, k)
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: next borrower: %v", when, err)
		}
	}
	for i := range 3 {
		if err := c.Watch(ctx, func(tx *Tx) error {
			tx.Queue().Set(k, strconv.Itoa(i))
			return nil
		}, k); err != nil {
			t.Fatal(err)
		}
	}
	runs := 0
	if err := c.Watch(ctx, func(tx *Tx) error {
		if runs++; runs == 1 {
			admin(t, addr, "SET", k, "conflict") // this run's EXEC finds a conflict
		}
		tx.Queue().Set(k, "after the conflict")
		return nil
	}, k); err != nil || runs != 2 {
		t.Fatalf("Watch with one conflict: %v after %d runs, want nil after 2", err, runs)
	}
	if n := commandCalls(t, addr, "reset"); n != 0 {
		t.Errorf("%d RESETs after Watch calls that all reached EXEC, want 0", n)
	}
	nextBorrowerWatchesNothing("after EXEC")
	boom := errors.New("boom")
	before := commandCalls(t, addr, "reset") // the borrower's MULTI was reset
	if err := c.Watch(ctx, func(*Tx) error { return boom }, k); !errors.Is(err, boom) {
		t.Fatalf("Watch = %v, want the callback's error", err)
	}
	if n := commandCalls(t, addr, "reset") - before; n != 1 {
		t.Errorf("%d RESETs after a Watch that ended before EXEC, want 1", n)
	}
	nextBorrowerWatchesNothing("after the callback's error")
}
