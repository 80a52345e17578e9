package respire

// Failover group metrics: probes and switches counted, and an instrument
// that panics changes nothing.

import (
	"context"
	"maps"
	"slices"
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

// failoverCounts are the group's metrics, by instrument.
type failoverCounts struct {
	retries  retryCounts // "category/outcome"
	probes   map[string]int64
	switches map[string]int64
}

// failoverCollect reads the group's instruments from r: probes as
// "member/outcome", switches as "member/reason".
func failoverCollect(t testing.TB, r *sdkmetric.ManualReader) failoverCounts {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	got := failoverCounts{retries: retryCounts{}, probes: map[string]int64{}, switches: map[string]int64{}}
	str := func(s attribute.Set, k string) string { v, _ := s.Value(attribute.Key(k)); return v.AsString() }
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("%s is %T, want a monotonic int64 counter", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Value == 0 {
					continue
				}
				switch m.Name {
				case "respire.command.retries":
					got.retries[str(dp.Attributes, retryCategoryAttr)+"/"+str(dp.Attributes, retryOutcomeAttr)] += dp.Value
				case "respire.failover.probes":
					got.probes[str(dp.Attributes, memberAttr)+"/"+str(dp.Attributes, probeOutcomeAttr)] += dp.Value
				case "respire.failover.switches":
					got.switches[str(dp.Attributes, memberAttr)+"/"+str(dp.Attributes, switchReasonAttr)] += dp.Value
				default:
					t.Errorf("unexpected instrument %q", m.Name)
				}
			}
		}
	}
	return got
}

func TestFailoverMetricsCountProbesAndSwitches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		probes := newFakeProbes(2)
		reader := sdkmetric.NewManualReader()
		opts := bubbleOpts()
		opts.Metrics, opts.MeterProvider = MetricsResiliency, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		c := bubbleClock{time.Now()}
		fakeGroup(t, members, opts, probes.probe)
		probes.down[0].Store(true)
		c.at(350 * milli) // 3 failures of member 0: failover
		probes.down[0].Store(false)
		probes.down[1].Store(true)
		c.at(1350 * milli) // member 0 closes at 1300 and takes over at once: member 1 is open
		got := failoverCollect(t, reader)
		wantProbes := map[string]int64{
			"member0.test:6379/failure": 3, "member0.test:6379/success": 1,
			"member1.test:6379/success": 3, "member1.test:6379/failure": 3}
		if !maps.Equal(got.probes, wantProbes) {
			t.Errorf("probes %v, want %v", got.probes, wantProbes)
		}
		wantSwitches := map[string]int64{"member1.test:6379/failover": 1, "none/failover": 1, "member0.test:6379/recovery": 1}
		if !maps.Equal(got.switches, wantSwitches) {
			t.Errorf("switches %v, want %v", got.switches, wantSwitches)
		}
		if len(got.retries) != 0 {
			t.Errorf("retries %v without any operation", got.retries)
		}
	})
}

// failoverPanicProvider's counters panic on every Add.
type failoverPanicProvider struct{ noop.MeterProvider }

type failoverPanicMeter struct{ noop.Meter }

type failoverPanicCounter struct{ noop.Int64Counter }

func (failoverPanicProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return failoverPanicMeter{}
}

func (failoverPanicMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return failoverPanicCounter{}, nil
}

func (failoverPanicCounter) Add(context.Context, int64, ...metric.AddOption) {
	panic("exporter exploded")
}

// A panicking instrument changes neither switches nor retries nor results.
func TestFailoverMetricsPanickingInstrumentChangesNothing(t *testing.T) {
	type outcome struct {
		value    string
		err      string
		on       []int
		switches [][2]int
	}
	run := func(t *testing.T, metrics MetricGroups, mp metric.MeterProvider) (out outcome) {
		synctest.Test(t, func(t *testing.T) {
			members, srv := memMembers(t, 0, 1)
			where(srv)
			srv[0].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
			probes := newFakeProbes(2)
			var log switchLog
			opts := bubbleOpts()
			opts.RetryPolicy = &RetryPolicy{MaxAttempts: 10, InitialBackoff: 70 * milli, MaxBackoff: 70 * milli, Jitter: NoJitter}
			opts.Metrics, opts.MeterProvider, opts.OnSwitch = metrics, mp, log.on
			g := fakeGroup(t, members, opts, probes.probe)
			probes.down[0].Store(true)
			attempts := &attemptLog{g: g}
			v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
				attempts.ran(c)
				return c.Get(ctx, "where")
			})
			out = outcome{value: v, on: attempts.on, switches: log.get()}
			if err != nil {
				out.err = err.Error()
			}
		})
		return out
	}
	want := run(t, 0, nil)
	got := run(t, MetricsResiliency, failoverPanicProvider{})
	if got.value != want.value || got.err != want.err || !slices.Equal(got.on, want.on) || !slices.Equal(got.switches, want.switches) {
		t.Errorf("with a panicking instrument %+v, without metrics %+v", got, want)
	}
	if want.value != "m1" {
		t.Errorf("scenario did not fail over: %+v", want)
	}
}
