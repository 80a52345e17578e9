package respire

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Metric names of the group, besides respire.command.retries.
const (
	probesInstrument   = "respire.failover.probes"
	switchesInstrument = "respire.failover.switches"
	memberAttr         = "respire.failover.member"
	probeOutcomeAttr   = "respire.failover.probe.outcome"
	switchReasonAttr   = "respire.failover.switch.reason"
	noMemberLabel      = "none"
)

// failoverMetrics records the group's metrics with attribute sets built
// once. A nil *failoverMetrics records nothing.
type failoverMetrics struct {
	retries  *retryMetrics
	probes   metric.Int64Counter
	switches metric.Int64Counter
	toNone   [numSwitchReasons]metric.AddOption
}

// memberMetrics are one member's attribute sets.
type memberMetrics struct {
	probeOK, probeFailed metric.AddOption
	switchTo             [numSwitchReasons]metric.AddOption
}

func newFailoverMetrics(mp metric.MeterProvider, ms []*groupMember) (m *failoverMetrics, err error) {
	const field = "FailoverGroupOptions.MeterProvider"
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, &ConfigError{Field: field, Reason: "panicked while creating the instruments"}
		}
	}()
	if mp == nil {
		mp = noop.NewMeterProvider() // as for clients: nothing recorded without a provider
	}
	rm, err := newRetryMetrics(mp)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Field = field
		}
		return nil, err
	}
	meter := mp.Meter(meterName)
	m = &failoverMetrics{retries: rm}
	if m.probes, err = meter.Int64Counter(probesInstrument, metric.WithUnit("{probe}"),
		metric.WithDescription("Health probes of failover group members, by outcome.")); err != nil {
		return nil, &ConfigError{Field: field, Reason: "cannot create " + probesInstrument + ": " + err.Error()}
	}
	if m.switches, err = meter.Int64Counter(switchesInstrument, metric.WithUnit("{switch}"),
		metric.WithDescription("Changes of a failover group's active member, by new member and reason.")); err != nil {
		return nil, &ConfigError{Field: field, Reason: "cannot create " + switchesInstrument + ": " + err.Error()}
	}
	switchSet := func(label string, reason int) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(
			attribute.String(memberAttr, label), attribute.String(switchReasonAttr, switchReasonNames[reason])))
	}
	for r := range numSwitchReasons {
		m.toNone[r] = switchSet(noMemberLabel, r)
	}
	for _, mb := range ms {
		mb.metric.probeOK = metric.WithAttributeSet(attribute.NewSet(
			attribute.String(memberAttr, mb.label), attribute.String(probeOutcomeAttr, "success")))
		mb.metric.probeFailed = metric.WithAttributeSet(attribute.NewSet(
			attribute.String(memberAttr, mb.label), attribute.String(probeOutcomeAttr, "failure")))
		for r := range numSwitchReasons {
			mb.metric.switchTo[r] = switchSet(mb.label, r)
		}
	}
	return m, nil
}

// probe counts one probe of mb. A panicking instrument changes nothing.
func (m *failoverMetrics) probe(mb *groupMember, ok bool) {
	if m == nil {
		return
	}
	defer func() { _ = recover() }()
	opt := mb.metric.probeFailed
	if ok {
		opt = mb.metric.probeOK
	}
	m.probes.Add(context.Background(), 1, opt)
}

// switched counts one change of the active member to mb (nil: none).
func (m *failoverMetrics) switched(mb *groupMember, reason int) {
	if m == nil {
		return
	}
	defer func() { _ = recover() }()
	opt := m.toNone[reason]
	if mb != nil {
		opt = mb.metric.switchTo[reason]
	}
	m.switches.Add(context.Background(), 1, opt)
}

// retried counts one retry event of a group operation on
// respire.command.retries, as the client does: attempted per resend that
// ran the operation, succeeded or exhausted once per operation that did.
func (m *failoverMetrics) retried(cat RetryCategory, o retryOutcome) {
	if m == nil {
		return
	}
	if int(cat) >= numRetryCategories {
		cat = 0
	}
	defer func() { _ = recover() }()
	m.retries.counter.Add(context.Background(), 1, m.retries.opts[cat][o])
}
