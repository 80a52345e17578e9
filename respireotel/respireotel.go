// Package respireotel traces a respire client with OpenTelemetry: a
// [respire.Hook] that starts one client span per command and per batch,
// following the OpenTelemetry semantic conventions for database clients
// (db.system.name "redis", db.operation.name, db.namespace,
// server.address, error.type).
//
// It lives in a module of its own so that the respire module depends only
// on the OpenTelemetry metric API:
//
//	c, err := respire.Connect(ctx, respire.Options{
//		Endpoints: []string{"127.0.0.1:6379"},
//		Hooks:     []respire.Hook{respireotel.NewHook(respireotel.WithServer("127.0.0.1:6379"))},
//	})
package respireotel

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/respire-go/respire"
)

// tracerName is the instrumentation scope: this module's import path.
const tracerName = "github.com/respire-go/respire/respireotel"

// Option configures [NewHook]. An Option is a plain function value, safe for
// concurrent use.
type Option func(*config)

type config struct {
	provider trace.TracerProvider
	attrs    []attribute.KeyValue
}

// WithTracerProvider sets the provider of the tracer (default, and for a
// nil p: the global provider, otel.GetTracerProvider()).
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithServer records server.address and server.port (from "host:port")
// on every span: the endpoint the client was configured with. An addr
// that is not "host:port" is recorded whole as server.address, without a
// port, less what may hold a password: user information ("user:pw@")
// is left out, and of a URL ("redis://user:pw@host:6379/0") only the
// host and port are recorded.
func WithServer(addr string) Option {
	addr = serverAddr(addr)
	return func(c *config) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			c.attrs = append(c.attrs, attribute.String("server.address", addr))
			return
		}
		c.attrs = append(c.attrs, attribute.String("server.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			c.attrs = append(c.attrs, attribute.Int("server.port", p))
		}
	}
}

// serverAddr is addr without the parts that may hold a password: user
// information up to the last "@", and a URL's scheme, path, query and
// fragment.
func serverAddr(addr string) string {
	url := false
	if i := strings.Index(addr, "://"); i >= 0 {
		addr, url = addr[i+len("://"):], true
	}
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		addr = addr[i+1:]
	}
	if i := strings.IndexAny(addr, "/?#"); i >= 0 && url {
		addr = addr[:i]
	}
	return addr
}

// WithDB records db.namespace, the database index, on every span.
func WithDB(db int) Option {
	return func(c *config) { c.attrs = append(c.attrs, attribute.String("db.namespace", strconv.Itoa(db))) }
}

// WithAttributes adds attributes to every span.
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, kv...) }
}

// Hook is the tracing [respire.Hook]. Make one with [NewHook]. A Hook is
// safe for concurrent use: the client calls it from many goroutines at once.
type Hook struct {
	tracer trace.Tracer
	attrs  []attribute.KeyValue
}

var _ respire.Hook = (*Hook)(nil)

// NewHook returns a hook tracing every command and batch of the client it
// is given to. A nil Option is ignored.
func NewHook(opts ...Option) *Hook {
	cfg := config{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.provider == nil {
		cfg.provider = otel.GetTracerProvider()
	}
	attrs := append([]attribute.KeyValue{attribute.String("db.system.name", "redis")}, cfg.attrs...)
	return &Hook{tracer: cfg.provider.Tracer(tracerName), attrs: attrs}
}

// DialHook leaves dials untraced.
func (h *Hook) DialHook(next respire.DialHook) respire.DialHook { return next }

// ProcessHook starts a client span named after the command, around every
// send and resend of the call.
func (h *Hook) ProcessHook(next respire.ProcessHook) respire.ProcessHook {
	return func(ctx context.Context, cmd *respire.CommandInfo) error {
		ctx, span := h.tracer.Start(ctx, cmd.Name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(h.attrs...),
			trace.WithAttributes(attribute.String("db.operation.name", cmd.Name),
				attribute.String("respire.command.retry.category", cmd.Category.String())))
		defer endOnPanic(span)
		err := next(ctx, cmd)
		end(span, err)
		return err
	}
}

// ProcessBatchHook starts a client span named PIPELINE (MULTI for a
// transaction) with db.operation.batch.size.
func (h *Hook) ProcessBatchHook(next respire.ProcessBatchHook) respire.ProcessBatchHook {
	return func(ctx context.Context, b *respire.BatchInfo) error {
		name := "PIPELINE"
		if b.Transaction {
			name = "MULTI"
		}
		ctx, span := h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(h.attrs...),
			trace.WithAttributes(attribute.String("db.operation.name", name), attribute.Int("db.operation.batch.size", b.Len())))
		defer endOnPanic(span)
		err := next(ctx, b)
		end(span, err)
		return err
	}
}

// endOnPanic ends span, with error.type "panic", when a later hook or the
// operation panicked before end could: the span is not lost, and the
// panic goes on unchanged.
func endOnPanic(span trace.Span) {
	if !span.IsRecording() {
		return // ended by end, or never recorded
	}
	span.SetAttributes(attribute.String("error.type", "panic"))
	span.SetStatus(codes.Error, "the operation panicked")
	span.End()
}

// end records err's type and status, then ends span.
func end(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, statusText(err))
	}
	span.End()
}

// echoes are the parts of a server's errors that repeat what the caller
// sent, each from its start to the end of the text, and what replaces it:
// the arguments of an unknown command ("ERR unknown command 'X', with
// args beginning with: 'a' 'b'"), and a rejected ACL SETUSER rule, which
// may hold a password ("ERR Error in ACL SETUSER modifier '<pw': ...",
// "ERR Unmatched parenthesis in acl selector starting at '(>pw'.").
var echoes = [...]struct{ start, with string }{
	{", with args beginning with:", ", with its arguments (left out)"},
	{"ACL SETUSER modifier '", "ACL SETUSER modifier (left out)"},
	{"acl selector starting at '", "acl selector (left out)"},
}

// statusText is err's text for the span status, without the arguments a
// server echoed: a span is exported beyond the process, and an argument
// may be a password. The caller's error keeps them.
func statusText(err error) string {
	text := err.Error()
	for _, e := range echoes {
		if i := strings.Index(text, e.start); i >= 0 {
			text = text[:i] + e.with
		}
	}
	return text
}

// errorType is the error.type of err: the server's error code, or the
// kind of client failure. What ended the call comes first: a call that
// the context or Close ended while it waited to retry also wraps the
// failure it would have retried (a LOADING reply, say).
func errorType(err error) string {
	var se *respire.ServerError
	var ce *respire.ConnError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, respire.ErrClosed):
		return "connection"
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &ce):
		return "connection"
	}
	return "_OTHER"
}
