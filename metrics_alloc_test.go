package respire

import (
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
			for _, o := range healthyOps(t, c, key(t)) {
				checkNoAllocs(t, o)
			}
		})
	}
}
