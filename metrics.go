package respire

import (
	"context"

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
