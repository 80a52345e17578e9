package respire

// Execute on a failover group, in testing/synctest bubbles over in-memory
// servers: the category it requires, which failures it retries and on
// which member, the budget, backoff, cancellation and Close.

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/respire-go/respire/respiretest"
)

// where marks each in-memory server with its member's name, so a GET of
// "where" tells which member answered.
func where(srv []*respiretest.Server) {
	for i, s := range srv {
		_ = s.Engine().Set("where", "m"+strconv.Itoa(i))
	}
}

// attemptLog records, for each call of an operation, the member it ran on.
type attemptLog struct {
	g  *FailoverGroup
	on []int
}

func (l *attemptLog) ran(c *Client) {
	for _, m := range l.g.Members() {
		if m.Client == c {
			l.on = append(l.on, m.Index)
			return
		}
	}
	l.on = append(l.on, -1)
}

func TestFailoverExecuteRequiresCategoryAndSendsNothingOnBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		calls := 0
		get := func(ctx context.Context, c *Client) (string, error) { calls++; return c.Get(ctx, "k") }
		for _, tt := range []struct {
			name string
			run  func() error
		}{
			{"NoCategory", func() error { _, err := Execute(context.Background(), g, 0, get); return err }},
			{"UndefinedCategory", func() error { _, err := Execute(context.Background(), g, RetryCategory(200), get); return err }},
			{"NilGroup", func() error { _, err := Execute(context.Background(), nil, ReadOnly, get); return err }},
			{"NilOperation", func() error {
				_, err := Execute[string](context.Background(), g, ReadOnly, nil)
				return err
			}},
		} {
			err := tt.run()
			if !errors.Is(err, ErrInvalidArgument) || MayHaveExecuted(err) {
				t.Errorf("%s: err = %v, want ErrInvalidArgument and nothing executed", tt.name, err)
			}
		}
		if calls != 0 {
			t.Errorf("the operation ran %d times", calls)
		}
		if n := srv[0].Stats("GET").Received + srv[1].Stats("GET").Received; n != 0 {
			t.Errorf("%d GETs reached the servers", n)
		}
	})
}

func TestFailoverExecuteHealthyRunsOnActiveMemberOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 1, 0)
		where(srv)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{1}) {
			t.Fatalf("got %q, %v on %v; want m1 from member 1 once", v, err, log.on)
		}
	})
}

func TestFailoverExecuteRetriesReadOnNewActiveMemberAfterSwitch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true) // member 0's circuit opens at 300 ms
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" {
			t.Fatalf("got %q, %v; want m1 from member 1", v, err)
		}
		// Attempts at 0, 70, ..., 280 ms on member 0 (still active), then 350 ms on member 1.
		if want := []int{0, 0, 0, 0, 0, 1}; !slices.Equal(log.on, want) {
			t.Errorf("attempts ran on %v, want %v", log.on, want)
		}
		if got, want := failoverCollect(t, reader).retries, (retryCounts{"read_only/attempted": 5, "read_only/succeeded": 1}); !got.equal(want) {
			t.Errorf("retries %v, want %v", got, want)
		}
	})
}

func TestFailoverExecuteNeverReplaysWriteAccumulatingUnderDefaultPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "INCR", Action: respiretest.DropAfterForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		calls := 0
		_, err := Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			calls++
			return c.Incr(ctx, "n")
		})
		if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
			t.Fatalf("err = %v, want the lost reply, possibly executed", err)
		}
		if calls != 1 || srv[0].Executed("INCR") != 1 || srv[1].Stats("INCR").Received != 0 {
			t.Errorf("calls %d, INCR executed on member 0 %d, received by member 1 %d; want 1, 1, 0",
				calls, srv[0].Executed("INCR"), srv[1].Stats("INCR").Received)
		}

		// An attempt that finds no healthy member counts as possibly
		// executed too: it is not retried for a WriteAccumulating operation.
		probes.down[1].Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		calls = 0
		_, err = Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			calls++
			return c.Incr(ctx, "n")
		})
		var re *RetryError
		if !errors.Is(err, ErrNoHealthyMember) || errors.As(err, &re) || calls != 0 {
			t.Errorf("no healthy member: err %v, calls %d; want ErrNoHealthyMember after one attempt, no call", err, calls)
		}
	})
}

func TestFailoverExecuteReplaysWriteAccumulatingOnOtherMemberOnlyWhenPermitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "INCR", Times: respiretest.Always, Action: respiretest.DropAfterForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, MaxCommandRetryCategory: WriteAccumulating,
			InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			log.ran(c)
			return c.Incr(ctx, "n")
		})
		if err != nil || v != 1 || log.on[len(log.on)-1] != 1 {
			t.Fatalf("got %d, %v on %v; want 1 from member 1", v, err, log.on)
		}
		if got := srv[0].Executed("INCR"); got != len(log.on)-1 {
			t.Errorf("member 0 executed INCR %d times, want %d: the accepted duplicates", got, len(log.on)-1)
		}
	})
}

func TestFailoverExecuteNeverOrNoPolicyRunsOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy *RetryPolicy
		cat    RetryCategory
	}{
		{"NoPolicy", nil, ReadOnly},
		{"NeverCategory", &RetryPolicy{MaxAttempts: 10, InitialBackoff: NoBackoff}, Never},
		{"PolicyMaxNever", &RetryPolicy{MaxAttempts: 10, MaxCommandRetryCategory: Never}, ReadOnly},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				members, srv := memMembers(t, 0, 1)
				srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
				opts := bubbleOpts()
				opts.RetryPolicy = tt.policy
				g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
				calls := 0
				_, err := Execute(context.Background(), g, tt.cat, func(ctx context.Context, c *Client) (string, error) {
					calls++
					return c.Get(ctx, "k")
				})
				var re *RetryError
				if !errors.Is(err, ErrConnectionLost) || errors.As(err, &re) || calls != 1 {
					t.Errorf("err %v after %d calls, want the member's connection loss after one call", err, calls)
				}
			})
		})
	}
}

func TestFailoverExecuteMemberPolicyRetriesInsideTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		members[0].Options.RetryPolicy = &RetryPolicy{InitialBackoff: NoBackoff}
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		calls := 0
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			calls++
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m0" || calls != 1 || srv[0].Stats("GET").Received != 2 {
			t.Fatalf("got %q, %v, %d calls, %d GETs; want m0 after the member's own resend, one call",
				v, err, calls, srv[0].Stats("GET").Received)
		}
		if got := failoverCollect(t, reader).retries; len(got) != 0 {
			t.Errorf("the group recorded retries %v for the member's own resend", got)
		}
	})
}

func TestFailoverExecuteDoesNotRetryServerRepliesOrOwnErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.ErrLoading)})
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5, InitialBackoff: NoBackoff}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		mine := errors.New("my own failure")
		for _, tt := range []struct {
			name string
			fn   func(ctx context.Context, c *Client) (string, error)
			want error
		}{
			{"ServerReply", func(ctx context.Context, c *Client) (string, error) { return c.Get(ctx, "k") }, &ServerError{Code: "LOADING"}},
			{"OwnError", func(context.Context, *Client) (string, error) { return "", mine }, mine},
		} {
			calls := 0
			_, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
				calls++
				return tt.fn(ctx, c)
			})
			if !errors.Is(err, tt.want) || calls != 1 {
				t.Errorf("%s: err %v after %d calls, want %v after one", tt.name, err, calls, tt.want)
			}
		}
	})
}

func TestFailoverExecuteOpenCircuitEndsOperationWhenNoOtherMemberIsHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[1].Store(true)
		time.Sleep(350 * milli) // member 1 is open until 1300 ms
		synctest.Wait()
		calls := 0
		_, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			calls++
			probes.down[0].Store(true)
			time.Sleep(350 * milli) // member 0's circuit opens during the attempt
			return c.Get(ctx, "k")
		})
		var re *RetryError
		if !errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrNoHealthyMember) || errors.As(err, &re) || calls != 1 {
			t.Errorf("err %v after %d calls; want the attempt's own failure, not retried", err, calls)
		}
	})
}

func TestFailoverExecuteOpenCircuitMovesRetryToOtherMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}
		g := fakeGroup(t, members, opts, probes.probe)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			if len(log.on) == 1 {
				probes.down[0].Store(true)
				time.Sleep(350 * milli) // member 0's circuit opens during the attempt
			}
			return c.Get(ctx, "where")
		})
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{0, 1}) {
			t.Errorf("got %q, %v on %v; want m1 from the second attempt on member 1", v, err, log.on)
		}
	})
}

func TestFailoverExecuteNoHealthyMemberRetriesWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		where(srv)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 20, InitialBackoff: 100 * milli, MaxBackoff: 100 * milli, Jitter: NoJitter}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli) // both open until 1300 ms
		probes.down[1].Store(false)
		log := &attemptLog{g: g}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			log.ran(c)
			return c.Get(ctx, "where")
		})
		// Attempts at 350, 450, ..., 1250 ms find no member; at 1350 ms member 1 is back.
		if err != nil || v != "m1" || !slices.Equal(log.on, []int{1}) {
			t.Fatalf("got %q, %v on %v; want m1 from member 1 once it recovered", v, err, log.on)
		}
		// Resends that found no member start nothing and record nothing.
		if got, want := failoverCollect(t, reader).retries, (retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}); !got.equal(want) {
			t.Errorf("retries %v, want %v", got, want)
		}
	})
}

func TestFailoverExecuteNoHealthyMemberExhaustsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * milli}
		reader := sdkmetric.NewManualReader()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		calls := 0
		_, err := Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 3 || !errors.Is(err, ErrNoHealthyMember) || !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("err = %v, want a RetryError of 3 attempts wrapping ErrNoHealthyMember", err)
		}
		if MayHaveExecuted(err) || calls != 0 {
			t.Errorf("MayHaveExecuted %v, calls %d; want false, 0", MayHaveExecuted(err), calls)
		}
		if got := failoverCollect(t, reader).retries; len(got) != 0 {
			t.Errorf("retries %v recorded for an operation that never ran", got)
		}
	})
}

func TestFailoverExecuteCancellationDuringBackoffEndsWithCallersError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: NoJitter}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*milli, cancel)
		_, err := Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		var ce *ContextError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &ce) || !errors.Is(ce.Last, ErrNoHealthyMember) {
			t.Fatalf("err = %v, want the caller's cancellation with the last failure", err)
		}
		if got := time.Since(c.start); got != 450*milli {
			t.Errorf("ended %v after start, want 450ms: at the cancellation", got)
		}
		// A context that has already ended runs nothing.
		calls := 0
		_, err = Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		if !errors.Is(err, context.Canceled) || calls != 0 {
			t.Errorf("ended context: err %v, calls %d; want Canceled, 0", err, calls)
		}
	})
}

// An operation that ends during a backoff (its context cancelled, or the
// group closed) reports its one final outcome: exhausted once it has
// resent, nothing when it ends before its first resend.
func TestFailoverExecuteEndedDuringBackoffIsExhaustedAfterResend(t *testing.T) {
	for _, tt := range []struct {
		name       string
		endAt      time.Duration // attempts at 0 and 1 s; backoffs of 1 s, then 2 s
		closeGroup bool
		runs       int // times fn ran
		want       retryCounts
	}{
		{"CancelledBeforeFirstResend", 500 * milli, false, 1, retryCounts{}},
		{"CancelledAfterResend", 1500 * milli, false, 2, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
		{"ClosedAfterResend", 1500 * milli, true, 2, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				members, srv := memMembers(t, 0, 1)
				srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
				opts := bubbleOpts()
				opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: NoJitter}
				reader := sdkmetric.NewManualReader()
				opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
				g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(tt.endAt, func() {
					if tt.closeGroup {
						_ = g.Close()
					} else {
						cancel()
					}
				})
				calls := 0
				_, err := Execute(ctx, g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
					calls++
					return c.Get(ctx, "k")
				})
				if calls != tt.runs {
					t.Fatalf("fn ran %d times, want %d (err %v)", calls, tt.runs, err)
				}
				if got := failoverCollect(t, reader).retries; !got.equal(tt.want) {
					t.Errorf("retries %v, want %v", got, tt.want)
				}
			})
		})
	}
}

func TestFailoverExecuteBackoffThatCannotFitDeadlineKeepsLastFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 100 * milli, MaxBackoff: 100 * milli, Jitter: NoJitter}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		ctx, cancel := context.WithTimeout(context.Background(), 150*milli)
		defer cancel()
		_, err := Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 2 || !errors.Is(err, ErrNoHealthyMember) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want 2 attempts ending with the last failure, not a timeout", err)
		}
	})
}

func TestFailoverCloseEndsBackoffAndLaterCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: time.Second, MaxBackoff: time.Second}
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		probes.down[1].Store(true)
		c.at(350 * milli)
		time.AfterFunc(100*milli, func() { _ = g.Close() })
		_, err := Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { return "", nil })
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
		calls := 0
		_, err = Execute(context.Background(), g, ReadOnly, func(context.Context, *Client) (string, error) { calls++; return "", nil })
		if !errors.Is(err, ErrClosed) || calls != 0 {
			t.Errorf("after Close: err %v, calls %d; want ErrClosed, 0", err, calls)
		}
		if _, err := g.ActiveClient(); !errors.Is(err, ErrClosed) {
			t.Errorf("ActiveClient after Close: %v, want ErrClosed", err)
		}
	})
}

// Close during a backoff after fn ran and lost its connection: the
// error matches ErrClosed, and every part of it says the operation may
// have run.
func TestFailoverCloseDuringBackoffAfterRunSaysItMayHaveRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: NoJitter}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		time.AfterFunc(100*milli, func() { _ = g.Close() })
		calls := 0
		_, err := Execute(context.Background(), g, WriteAccumulating, func(context.Context, *Client) (string, error) {
			calls++
			return "", &ConnError{Command: "INCR", Err: io.ErrUnexpectedEOF} // the reply was lost
		})
		if !errors.Is(err, ErrClosed) || calls != 1 {
			t.Fatalf("err = %v after %d calls, want ErrClosed after 1", err, calls)
		}
		if !MayHaveExecuted(err) {
			t.Errorf("MayHaveExecuted(%v) = false, want true", err)
		}
		walkErrors(err, func(e error) {
			if ce, ok := e.(*ConnError); ok && ce.Unwritten {
				t.Errorf("err = %v holds a *ConnError with Unwritten true: fn ran", err)
			}
		})
	})
}

// closeAtContext closes its group in the first Err call made at or after
// at: inside a bubble, the call that ends a backoff ending at at, so that
// Close comes after the backoff ended and before the next attempt.
type closeAtContext struct {
	context.Context
	g  *FailoverGroup
	at time.Time
}

func (c closeAtContext) Err() error {
	if !time.Now().Before(c.at) {
		_ = c.g.Close()
	}
	return c.Context.Err()
}

// Close between the end of a backoff and the next attempt: as when Close
// ends the backoff itself, that attempt is none (Attempts 1), and the
// error keeps the last failure beside ErrClosed.
func TestFailoverCloseAfterBackoffBeforeNextAttemptIsNoAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{InitialBackoff: time.Second, MaxBackoff: time.Second, Jitter: NoJitter}
		g := fakeGroup(t, members, opts, newFakeProbes(2).probe)
		ctx := closeAtContext{context.Background(), g, time.Now().Add(time.Second)}
		calls := 0
		_, err := Execute(ctx, g, ReadOnly, func(context.Context, *Client) (string, error) {
			calls++
			return "", &ConnError{Command: "GET", Err: io.ErrUnexpectedEOF} // the reply was lost
		})
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 1 || calls != 1 {
			t.Fatalf("err = %v after %d calls, want a *RetryError of 1 attempt after 1 call", err, calls)
		}
		if !errors.Is(err, ErrClosed) || !errors.Is(err, io.ErrUnexpectedEOF) || !MayHaveExecuted(err) {
			t.Errorf("err = %v, want ErrClosed with the last failure, and that the operation may have run", err)
		}
	})
}
