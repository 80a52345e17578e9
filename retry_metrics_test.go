package respire

// respire.command.retries: what is counted, with which attributes, only
// when the Resiliency group is selected; and a panicking instrument cannot
// change a retry decision or a reply.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/respire-go/respire/respiretest"
)

// retryCounts maps "category/outcome" to the counter's value.
type retryCounts map[string]int64

// retryCollect reads respire.command.retries from r.
func retryCollect(t testing.TB, r *sdkmetric.ManualReader) retryCounts {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	got := retryCounts{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "respire.command.retries" {
				t.Errorf("unexpected instrument %q", m.Name)
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("respire.command.retries is %T, want a monotonic int64 counter", m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Len() != 2 {
					t.Errorf("attributes %v, want exactly category and outcome", dp.Attributes.ToSlice())
				}
				cat, _ := dp.Attributes.Value(attribute.Key("respire.command.retry.category"))
				out, _ := dp.Attributes.Value(attribute.Key("respire.command.retry.outcome"))
				if dp.Value != 0 {
					got[cat.AsString()+"/"+out.AsString()] += dp.Value
				}
			}
		}
	}
	return got
}

func (c retryCounts) equal(d retryCounts) bool {
	if len(c) != len(d) {
		return false
	}
	for k, v := range c {
		if d[k] != v {
			return false
		}
	}
	return true
}

// retryMetricsClient returns a client of s recording into a manual reader.
func retryMetricsClient(t *testing.T, s *respiretest.Server, opts Options) (*Client, *sdkmetric.ManualReader) {
	t.Helper()
	opts, reader := withRetryMetrics(t, opts)
	return retryMemClient(t, s, opts), reader
}

// withRetryMetrics returns opts recording into a new manual reader, the
// Resiliency group unless opts selects metrics.
func withRetryMetrics(t testing.TB, opts Options) (Options, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	opts.MeterProvider = mp
	if opts.Metrics == 0 {
		opts.Metrics = MetricsResiliency
	}
	return opts, reader
}

func TestRetryMetricsCounts(t *testing.T) {
	all := RetryPolicy{MaxAttempts: 3, MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}
	loading := func(n int) respiretest.Rule {
		return respiretest.Rule{Command: "", Times: n, Action: respiretest.Inject(respiretest.ErrLoading)}
	}
	tests := []struct {
		name  string
		rules []respiretest.Rule
		call  func(c *Client) error
		want  retryCounts
	}{
		{"HealthyRecordsNothing", nil,
			func(c *Client) error { _, err := c.Get(bg, "k"); return err }, retryCounts{}},
		{"NotRetriedRecordsNothing", []respiretest.Rule{{Command: "GET", Action: respiretest.Inject(respiretest.ErrBusy)}},
			func(c *Client) error { _, err := c.Get(bg, "k"); return err }, retryCounts{}},
		{"SucceededAfterOneResend", []respiretest.Rule{loading(1)},
			func(c *Client) error { _, err := c.Get(bg, "k"); return err },
			retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}},
		{"SucceededAfterTwoResends", []respiretest.Rule{loading(2)},
			func(c *Client) error { return c.Set(bg, "k", "v") },
			retryCounts{"write_last_wins/attempted": 2, "write_last_wins/succeeded": 1}},
		{"Exhausted", []respiretest.Rule{loading(respiretest.Always)},
			func(c *Client) error { _, err := c.Incr(bg, "n"); return err },
			retryCounts{"write_accumulating/attempted": 2, "write_accumulating/exhausted": 1}},
		{"ExhaustedByUnselectableAfterResend", []respiretest.Rule{loading(1),
			{Command: "ZADD", Nth: 2, Action: respiretest.Inject(respiretest.ErrClusterDown)}},
			func(c *Client) error {
				_, err := c.ZAdd(bg, "z", ZAddOptions{Condition: SetIfNotExists}, Z{1, "m"})
				return err
			},
			retryCounts{"write_checked/attempted": 1, "write_checked/exhausted": 1}},
		{"DeclaredCategory", []respiretest.Rule{loading(1)},
			func(c *Client) error { _, err := c.Do(bg, NewCommand("PING").WithRetryCategory(Always)); return err },
			retryCounts{"always/attempted": 1, "always/succeeded": 1}},
		{"ConnectionCategoryAfterLostReply", []respiretest.Rule{{Command: "TIME", Action: respiretest.DropAfterForward}},
			func(c *Client) error {
				_, err := c.Do(bg, NewCommand("TIME").WithRetryCategory(Connection))
				return err
			},
			retryCounts{"connection/attempted": 1, "connection/succeeded": 1}},
		{"ServerAdminCategory", []respiretest.Rule{loading(1)},
			func(c *Client) error {
				_, err := c.Do(bg, NewCommand("DBSIZE").WithRetryCategory(ServerAdmin))
				return err
			},
			retryCounts{"server_admin/attempted": 1, "server_admin/succeeded": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			p := all
			c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &p})
			for _, r := range tt.rules {
				s.MustAddRule(t, r)
			}
			_ = tt.call(c)
			if got := retryCollect(t, reader); !got.equal(tt.want) {
				t.Errorf("counts = %v, want %v", got, tt.want)
			}
		})
	}
}

// Nothing is recorded unless Options.Metrics selects MetricsResiliency,
// even with a MeterProvider and resends.
func TestRetryMetricsOnlyWithResiliencyGroup(t *testing.T) {
	for _, groups := range []MetricGroups{0, MetricsResiliency} {
		s := respiretest.NewServer(t, respiretest.InMemory())
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := retryMemClient(t, s, Options{Metrics: groups, MeterProvider: mp,
			RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
		if _, err := c.Get(bg, "k"); !errors.Is(err, ErrNil) {
			t.Fatalf("Get: %v", err)
		}
		want := retryCounts{}
		if groups == MetricsResiliency {
			want = retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}
		}
		if got := retryCollect(t, reader); !got.equal(want) {
			t.Errorf("Metrics %d: counts = %v, want %v", groups, got, want)
		}
		_ = mp.Shutdown(bg)
	}
}

// attempted counts resends the transport accepted: a resend whose
// connection could not be had records nothing, and an operation whose only
// resends were never accepted records no outcome either.
func TestRetryMetricsAttemptedCountsAcceptedResends(t *testing.T) {
	t.Run("RefusedResendDialThenSuccess", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 4, InitialBackoff: NoBackoff}})
			// The GET's reply is lost; the replacement dial and the next
			// are refused, so the first resend never reaches a connection.
			s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropAfterForward})
			if err := s.RefuseDials(2); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get(bg, "k"); !errors.Is(err, ErrNil) {
				t.Fatalf("Get: %v", err)
			}
			want := retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}
			if got := retryCollect(t, reader); !got.equal(want) {
				t.Errorf("counts = %v, want %v", got, want)
			}
		})
	})
	t.Run("OnlyRefusedResends", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}})
			s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropAfterForward})
			if err := s.RefuseDials(100); err != nil {
				t.Fatal(err)
			}
			_, err := c.Get(bg, "k")
			retryWantAttempts(t, err, 2)
			if got := retryCollect(t, reader); !got.equal(retryCounts{}) {
				t.Errorf("counts = %v, want none: no resend was accepted", got)
			}
		})
	})
}

// An operation that ends during a backoff (its context cancelled, or the
// client closed) reports its one final outcome: exhausted once it has
// resent, nothing when it ends before its first resend.
func TestRetryMetricsEndedDuringBackoffIsExhaustedAfterResend(t *testing.T) {
	for _, tt := range []struct {
		name        string
		resends     int // accepted resends before the backoff the call ends in
		closeClient bool
		want        retryCounts
	}{
		{"CancelledBeforeFirstResend", 0, false, retryCounts{}},
		{"CancelledAfterResend", 1, false, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
		{"ClosedAfterResend", 1, true, retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				c, reader := retryMetricsClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
					MaxAttempts: 5, InitialBackoff: time.Second, Jitter: NoJitter,
				}})
				var last *respiretest.RuleHandle
				for n := 1; n <= tt.resends+1; n++ {
					last = s.MustAddRule(t, respiretest.Rule{Command: "GET", Nth: n,
						Action: respiretest.Inject(respiretest.ErrLoading)})
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				errc := getAsync(ctx, c, "k")
				<-last.Received()
				synctest.Wait() // the caller waits out the backoff after its last failure
				if tt.closeClient {
					_ = c.Close()
				} else {
					cancel()
				}
				err := <-errc
				retryWantAttempts(t, err, tt.resends+1)
				if got := retryCollect(t, reader); !got.equal(tt.want) {
					t.Errorf("counts = %v, want %v", got, tt.want)
				}
			})
		})
	}
}

// panicProvider is a MeterProvider whose counter panics on every Add.
type panicProvider struct{ noop.MeterProvider }

type panicMeter struct{ noop.Meter }

type panicCounter struct{ noop.Int64Counter }

func (panicProvider) Meter(string, ...metric.MeterOption) metric.Meter { return panicMeter{} }

func (panicMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return panicCounter{}, nil
}

func (panicCounter) Add(context.Context, int64, ...metric.AddOption) { panic("exporter exploded") }

// creationPanicProvider is a MeterProvider that panics when asked for a
// meter.
type creationPanicProvider struct{ noop.MeterProvider }

func (creationPanicProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	panic("meter provider exploded")
}

// A panicking instrument changes neither retry decisions nor replies:
// the same calls give the same results and send the same frames as with
// metrics off.
func TestRetryMetricsPanickingInstrumentChangesNothing(t *testing.T) {
	type outcome struct {
		value string
		err   string
		sends int64
	}
	run := func(t *testing.T, opts Options) []outcome {
		s := respiretest.NewServer(t, respiretest.InMemory())
		s.Engine().Set("k", "v")
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 3, InitialBackoff: NoBackoff}
		c := retryMemClient(t, s, opts)
		var out []outcome
		get := func() {
			before := s.Stats("GET").Received
			v, err := c.Get(bg, "k")
			o := outcome{value: v, sends: s.Stats("GET").Received - before}
			if err != nil {
				o.err = err.Error()
			}
			out = append(out, o)
		}
		get() // healthy
		h := s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
		get() // one resend, succeeded
		h.Remove()
		h = s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.ErrTryAgain)})
		get() // exhausted
		h.Remove()
		get() // healthy again
		return out
	}
	want := run(t, Options{})
	got := run(t, Options{Metrics: MetricsResiliency, MeterProvider: panicProvider{}})
	if len(got) != len(want) {
		t.Fatalf("got %d outcomes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d with a panicking instrument = %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if want[1].sends != 2 || want[2].sends != 3 || want[1].value != "v" {
		t.Errorf("baseline outcomes %+v: want 2 sends then success, and 3 sends exhausted", want)
	}
}
