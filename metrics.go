package respire

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/respire-go/respire/catalog"
)

// Metric names, as in the specification.
const (
	meterName           = "github.com/respire-go/respire" // the module path, as OpenTelemetry asks
	retriesInstrument   = "respire.command.retries"
	retryCategoryAttr   = "respire.command.retry.category"
	retryOutcomeAttr    = "respire.command.retry.outcome"
	numRetryOutcomes    = 3
	numRetryCategories  = int(catalog.ServerAdmin) + 1
	retryInstrumentDesc = "Command resends, and the final outcome of each operation that resent."
)

type retryOutcome uint8

const (
	outcomeAttempted retryOutcome = iota
	outcomeSucceeded
	outcomeExhausted
)

var outcomeNames = [numRetryOutcomes]string{"attempted", "succeeded", "exhausted"}

// retryMetrics records respire.command.retries with attribute sets built
// once, so recording allocates nothing of ours.
type retryMetrics struct {
	counter metric.Int64Counter
	opts    [numRetryCategories][numRetryOutcomes]metric.AddOption
}

func newRetryMetrics(mp metric.MeterProvider) (*retryMetrics, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	counter, err := mp.Meter(meterName).Int64Counter(retriesInstrument,
		metric.WithDescription(retryInstrumentDesc), metric.WithUnit("{retry}"))
	if err != nil {
		return nil, &ConfigError{Field: "Options.MeterProvider", Reason: "cannot create " + retriesInstrument + ": " + err.Error()}
	}
	m := &retryMetrics{counter: counter}
	for cat := range numRetryCategories {
		for o := range numRetryOutcomes {
			m.opts[cat][o] = metric.WithAttributeSet(attribute.NewSet(
				attribute.String(retryCategoryAttr, catalog.RetryCategory(cat).String()),
				attribute.String(retryOutcomeAttr, outcomeNames[o]),
			))
		}
	}
	return m, nil
}

// newMetrics creates the instruments of the metric groups the options
// select. A provider that panics while creating them fails Connect like
// one that returns an error: with a [*ConfigError] naming the provider.
func (c *Client) newMetrics() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.metrics, c.cmdMetrics, c.connMetrics = nil, nil, nil
			err = &ConfigError{Field: "Options.MeterProvider", Reason: fmt.Sprintf("panicked while creating the instruments: %v", r)}
		}
	}()
	groups, mp := c.cfg.metrics, c.cfg.meterProvider
	if groups&MetricsResiliency != 0 {
		if c.metrics, err = newRetryMetrics(mp); err != nil {
			return err
		}
	}
	if groups&MetricsCommands != 0 {
		if c.cmdMetrics, err = newCommandMetrics(mp); err != nil {
			return err
		}
	}
	if groups&MetricsConnections != 0 {
		if c.connMetrics, err = newConnMetrics(mp); err != nil {
			return err
		}
	}
	return nil
}

// record counts one retry event. Succeeded and exhausted are recorded only
// for operations that resent (resent true). A panicking instrument cannot
// change a retry decision or a reply.
func (c *Client) record(cat catalog.RetryCategory, o retryOutcome, resent bool) {
	if c.metrics == nil || !resent {
		return
	}
	if int(cat) >= numRetryCategories {
		cat = 0
	}
	defer func() { _ = recover() }()
	c.metrics.counter.Add(context.Background(), 1, c.metrics.opts[cat][o])
}
