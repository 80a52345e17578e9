package respire

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestHealthyPathAllocationsWithMetrics proves that enabling the metric
// groups adds no allocation to a healthy command, measured with the
// OpenTelemetry SDK recording for real: the resiliency and connection
// instruments do not change on the healthy path, and the command
// duration histogram records with attribute sets built once per command.
func TestHealthyPathAllocationsWithMetrics(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	groups := []struct {
		name   string
		groups MetricGroups
	}{
		{"Resiliency", MetricsResiliency},
		{"Connections", MetricsConnections},
		{"Commands", MetricsCommands},
		{"All", MetricsResiliency | MetricsCommands | MetricsConnections},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			c := newClient(t, Options{
				RetryPolicy:   &RetryPolicy{},
				Metrics:       g.groups,
				MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
			})
			ctx, k := context.Background(), key(t)
			buf := make([]byte, 0, 128)
			ops := []struct {
				name string
				op   func()
			}{
				{"Set", func() {
					if err := c.Set(ctx, k, benchValue); err != nil {
						t.Fatal(err)
					}
				}},
				{"GetBytes", func() {
					var err error
					if buf, err = c.GetBytes(ctx, k, buf[:0]); err != nil || len(buf) != len(benchValue) {
						t.Fatalf("GetBytes = %d bytes, %v", len(buf), err)
					}
				}},
			}
			for _, o := range ops {
				for range 100 {
					o.op()
				}
				if got := testing.AllocsPerRun(2000, o.op); got != 0 {
					t.Errorf("%s with metric groups %s: %v allocations per call, want 0", o.name, g.name, got)
				}
			}
		})
	}
}
