package respire

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
)

// Instrument and attribute names of the command and connection groups.
const (
	durationInstrument    = "db.client.operation.duration"
	opensInstrument       = "respire.connection.opens"
	closesInstrument      = "respire.connection.closes"
	retirementsInstrument = "respire.connection.retirements"
	waitInstrument        = "db.client.connection.wait_time"
	attrSystem            = "db.system.name"
	attrOperation         = "db.operation.name"
	attrErrorType         = "error.type"
	attrServer            = "server.address"
	attrOutcome           = "respire.connection.outcome"
	attrCloseReason       = "respire.connection.close.reason"
	otherCommand          = "_OTHER" // commands the catalog does not know: bounded cardinality
)

// Outcomes of an operation, the error.type values of its duration.
const (
	opOK = iota
	opServerError
	opConnection
	opTimeout
	opCanceled
	opInvalid
	opOther
	numOpOutcomes
)

var opOutcomeNames = [numOpOutcomes]string{"", "server_error", "connection", "timeout", "canceled", "invalid_argument", "other"}

// outcomeOf classifies an operation's error.
func outcomeOf(err error) int {
	if err == nil {
		return opOK
	}
	return failureOutcome(err)
}

// failureOutcome is outcomeOf for a non-nil err. It is apart because the
// targets of errors.As escape to the heap: declared in outcomeOf, they
// cost two allocations per successful command.
//
// What ended the call comes first: a call that the context or Close ended
// while it waited to retry also wraps the failure it would have retried
// (a LOADING reply, say), which is not its outcome.
func failureOutcome(err error) int {
	var se *ServerError
	var ce *ConnError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return opTimeout
	case errors.Is(err, context.Canceled):
		return opCanceled
	case errors.Is(err, ErrClosed):
		return opConnection
	case errors.As(err, &se):
		return opServerError
	case errors.As(err, &ce):
		return opConnection
	case errors.Is(err, ErrInvalidArgument):
		return opInvalid
	}
	return opOther
}

// commandMetrics records db.client.operation.duration with attribute sets
// built once per catalog command (lazily) and outcome, so recording
// allocates nothing of ours.
type commandMetrics struct {
	duration metric.Float64Histogram
	sets     []atomic.Pointer[[numOpOutcomes]metric.RecordOption] // by catalog.Command.Index; the last: otherCommand
}

func newCommandMetrics(mp metric.MeterProvider) (*commandMetrics, error) {
	h, err := meterOf(mp).Float64Histogram(durationInstrument, metric.WithUnit("s"),
		metric.WithDescription("Duration of database client operations: every send and resend of one call."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		return nil, &ConfigError{Field: "Options.MeterProvider", Reason: "cannot create " + durationInstrument + ": " + err.Error()}
	}
	return &commandMetrics{duration: h, sets: make([]atomic.Pointer[[numOpOutcomes]metric.RecordOption], catalog.Len()+1)}, nil
}

func meterOf(mp metric.MeterProvider) metric.Meter {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	return mp.Meter(meterName)
}

// options returns the record options of command desc (its attribute sets
// for every outcome), building them on first use. They are named after
// the catalog's command, whatever name its first caller used.
func (m *commandMetrics) options(desc catalog.Command) *[numOpOutcomes]metric.RecordOption {
	i := desc.Index()
	if i < 0 {
		i = len(m.sets) - 1
	}
	if p := m.sets[i].Load(); p != nil {
		return p
	}
	name := otherCommand
	if i < len(m.sets)-1 {
		name = desc.FullName()
	}
	var opts [numOpOutcomes]metric.RecordOption
	for o := range numOpOutcomes {
		attrs := []attribute.KeyValue{attribute.String(attrSystem, "redis"), attribute.String(attrOperation, name)}
		if o != opOK {
			attrs = append(attrs, attribute.String(attrErrorType, opOutcomeNames[o]))
		}
		opts[o] = metric.WithAttributeSet(attribute.NewSet(attrs...))
	}
	m.sets[i].CompareAndSwap(nil, &opts)
	return m.sets[i].Load()
}

// recordCommand records one operation of s that began at began. A
// panicking instrument cannot change a reply.
func (c *Client) recordCommand(s *spec, began time.Time, err error) {
	defer func() { _ = recover() }()
	opts := c.cmdMetrics.options(s.desc)
	o := outcomeOf(err)
	// A slice of the cached array: a variadic argument would be a new
	// slice per call.
	c.cmdMetrics.duration.Record(context.Background(), time.Since(began).Seconds(), opts[o:o+1]...)
}

// connMetrics records the connection group.
type connMetrics struct {
	opens, closes, retirements metric.Int64Counter
	wait                       metric.Float64Histogram
}

func newConnMetrics(mp metric.MeterProvider) (*connMetrics, error) {
	meter := meterOf(mp)
	m := &connMetrics{}
	var err error
	fail := func(name string) error {
		return &ConfigError{Field: "Options.MeterProvider", Reason: "cannot create " + name + ": " + err.Error()}
	}
	if m.opens, err = meter.Int64Counter(opensInstrument, metric.WithUnit("{connection}"),
		metric.WithDescription("Connections the client tried to open, by outcome.")); err != nil {
		return nil, fail(opensInstrument)
	}
	if m.closes, err = meter.Int64Counter(closesInstrument, metric.WithUnit("{connection}"),
		metric.WithDescription("Connections that ended, by reason.")); err != nil {
		return nil, fail(closesInstrument)
	}
	if m.retirements, err = meter.Int64Counter(retirementsInstrument, metric.WithUnit("{endpoint}"),
		metric.WithDescription("Endpoints retired because the topology stopped routing to them.")); err != nil {
		return nil, fail(retirementsInstrument)
	}
	if m.wait, err = meter.Float64Histogram(waitInstrument, metric.WithUnit("s"),
		metric.WithDescription("Time callers waited for a pooled dedicated connection.")); err != nil {
		return nil, fail(waitInstrument)
	}
	return m, nil
}

// onConnEvent logs (Options.Logger) and counts (MetricsConnections) one
// connection lifecycle event. Events are rare: attribute sets are built
// per event. Addresses and errors never carry a password. It runs on the
// client's own goroutines (dials, a connection's end), out of the
// caller's reach: a panicking log handler or instrument changes nothing.
func (c *Client) onConnEvent(e wire.Event) {
	if l := c.cfg.logger; l != nil {
		func() {
			defer func() { _ = recover() }()
			logConnEvent(l, e)
		}()
	}
	m := c.connMetrics
	if m == nil {
		return
	}
	defer func() { _ = recover() }()
	ctx := context.Background()
	server := attribute.String(attrServer, e.Addr)
	switch e.Kind {
	case wire.EventOpened:
		m.opens.Add(ctx, 1, metric.WithAttributes(server, attribute.String(attrOutcome, "ok")))
	case wire.EventDialFailed:
		m.opens.Add(ctx, 1, metric.WithAttributes(server, attribute.String(attrOutcome, "failed")))
	case wire.EventClosed:
		m.closes.Add(ctx, 1, metric.WithAttributes(server, attribute.String(attrCloseReason, closeReason(e.Reason))))
	case wire.EventRetired:
		m.retirements.Add(ctx, 1, metric.WithAttributes(server))
	case wire.EventPoolWait:
		m.wait.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(server))
	}
}

func closeReason(r wire.Reason) string {
	switch r {
	case wire.Closed:
		return "closed"
	case wire.Protocol:
		return "protocol_error"
	}
	return "lost"
}

func logConnEvent(l *slog.Logger, e wire.Event) {
	ctx := context.Background()
	addr := slog.String("addr", e.Addr)
	switch e.Kind {
	case wire.EventOpened:
		l.LogAttrs(ctx, slog.LevelDebug, "respire: connection opened", addr, slog.Duration("took", e.Duration))
	case wire.EventDialFailed:
		l.LogAttrs(ctx, slog.LevelWarn, "respire: dial failed", addr, slog.String("err", e.Err.Error()))
	case wire.EventClosed:
		if e.Reason == wire.Closed {
			l.LogAttrs(ctx, slog.LevelDebug, "respire: connection closed", addr)
			return
		}
		cause := ""
		if e.Err != nil {
			cause = e.Err.Error()
		}
		l.LogAttrs(ctx, slog.LevelWarn, "respire: connection lost", addr, slog.String("reason", closeReason(e.Reason)), slog.String("err", cause))
	case wire.EventRetired:
		cause := ""
		if e.Err != nil {
			cause = e.Err.Error()
		}
		l.LogAttrs(ctx, slog.LevelInfo, "respire: endpoint retired", addr, slog.String("cause", cause))
	case wire.EventPoolWait:
		l.LogAttrs(ctx, slog.LevelDebug, "respire: waited for a dedicated connection", addr, slog.Duration("waited", e.Duration))
	}
}

// onInstall logs a topology a discovery installed: Info when its
// primaries changed, Debug otherwise. A panicking log handler changes
// nothing (discoveries run on the client's goroutines too).
func (c *Client) onInstall(summary string, changed bool) {
	defer func() { _ = recover() }()
	level := slog.LevelDebug
	if changed {
		level = slog.LevelInfo
	}
	c.cfg.logger.LogAttrs(context.Background(), level, "respire: topology discovered", slog.String("topology", summary), slog.Bool("changed", changed))
}
