package respireotel

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

func client(t *testing.T, s *respiretest.Server, h *Hook) *respire.Client {
	t.Helper()
	return clientWith(t, s, h, respire.Options{})
}

// clientWith is client with more options.
func clientWith(t *testing.T, s *respiretest.Server, h *Hook, opts respire.Options) *respire.Client {
	t.Helper()
	opts.Endpoints, opts.Dialer, opts.Hooks = []string{respiretest.MemoryAddr}, s.Dial, []respire.Hook{h}
	c, err := respire.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestSpansFollowDatabaseConventions: one client span per command named
// after it, with the database attributes; a server error sets error.type
// to its code and the span status to Error; a batch is one PIPELINE span
// with its size; the caller's span is the parent.
func TestSpansFollowDatabaseConventions(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := respiretest.NewServer(t)
	c := client(t, s, NewHook(WithTracerProvider(tp), WithServer("127.0.0.1:6379"), WithDB(0)))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	if err := c.Set(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HGet(ctx, "k", "f"); err == nil {
		t.Fatal("HGET on a string succeeded")
	}
	b := c.NewBatch()
	b.Incr("n")
	b.Get("k")
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := rec.Ended()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (SET, HGET, PIPELINE, parent)", len(spans))
	}
	for i, want := range []string{"SET", "HGET", "PIPELINE"} {
		sp := spans[i]
		if sp.Name() != want || sp.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %d = %q kind %v, want %q client", i, sp.Name(), sp.SpanKind(), want)
		}
		if sp.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %s has parent %v, want the caller's span", want, sp.Parent().SpanID())
		}
		if got := attr(sp, "db.system.name").AsString(); got != "redis" {
			t.Errorf("%s db.system.name = %q", want, got)
		}
		if got := attr(sp, "db.operation.name").AsString(); got != want {
			t.Errorf("%s db.operation.name = %q", want, got)
		}
		if got := attr(sp, "server.address").AsString(); got != "127.0.0.1" {
			t.Errorf("%s server.address = %q", want, got)
		}
		if got := attr(sp, "server.port").AsInt64(); got != 6379 {
			t.Errorf("%s server.port = %d", want, got)
		}
	}
	if got := attr(spans[1], "error.type").AsString(); got != "WRONGTYPE" || spans[1].Status().Code != codes.Error {
		t.Errorf("HGET error.type = %q status %v, want WRONGTYPE and Error", got, spans[1].Status().Code)
	}
	if spans[0].Status().Code == codes.Error {
		t.Errorf("SET status = Error, want unset")
	}
	if got := attr(spans[2], "db.operation.batch.size").AsInt64(); got != 2 {
		t.Errorf("PIPELINE db.operation.batch.size = %d, want 2", got)
	}
}

// TestSpanStatusLeavesOutEchoedArguments: a server that echoes a
// command's arguments in its error ("unknown command 'AUTHX', with args
// beginning with: ...") does not get them into the span, which is
// exported beyond the process: an argument may be a password. The
// caller's error keeps them.
func TestSpanStatusLeavesOutEchoedArguments(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := respiretest.NewServer(t)
	c := client(t, s, NewHook(WithTracerProvider(tp)))
	const secret = "hunter2-secret"
	_, err := c.Do(context.Background(), respire.NewCommand("AUTHX"), "user", secret)
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("AUTHX = %v, want the server's unknown command error", err)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	st := spans[0].Status()
	if st.Code != codes.Error || !strings.Contains(st.Description, "unknown command 'AUTHX'") {
		t.Errorf("status %v %q, want Error naming the unknown command", st.Code, st.Description)
	}
	if strings.Contains(st.Description, secret) {
		t.Errorf("span status %q holds an argument of the command", st.Description)
	}
}

// TestSpanOfCallEndedDuringRetryBackoff: a call that the caller's
// cancellation or Close ended while it waited to retry after a LOADING
// reply has the error.type of what ended it, not LOADING.
func TestSpanOfCallEndedDuringRetryBackoff(t *testing.T) {
	tests := []struct {
		name string
		end  func(c *respire.Client, cancel context.CancelFunc)
		want string
	}{
		{"Cancelled", func(_ *respire.Client, cancel context.CancelFunc) { cancel() }, "canceled"},
		{"Closed", func(c *respire.Client, _ context.CancelFunc) { _ = c.Close() }, "connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A frame pooled outside the bubble must not be reused in it.
			runtime.GC()
			runtime.GC()
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				s := respiretest.NewServer(t)
				get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
					Action: respiretest.Inject(respiretest.ErrLoading)})
				c := clientWith(t, s, NewHook(WithTracerProvider(tp)), respire.Options{
					CommandTimeout: respire.NoTimeout,
					RetryPolicy:    &respire.RetryPolicy{InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: respire.NoJitter},
				})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				errc := make(chan error, 1)
				go func() {
					_, err := c.Get(ctx, "k")
					errc <- err
				}()
				<-get.Received()
				synctest.Wait() // waiting out the backoff
				tt.end(c, cancel)
				if err := <-errc; err == nil {
					t.Fatal("Get succeeded")
				}
				spans := rec.Ended()
				if len(spans) != 1 {
					t.Fatalf("%d spans, want 1", len(spans))
				}
				if got := attr(spans[0], "error.type").AsString(); got != tt.want {
					t.Errorf("error.type = %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestSpanEndsWhenAnInnerHookPanics: a hook after this one (or the
// command) that panics still ends the command's and the batch's spans,
// with an Error status, and the panic reaches the caller unchanged.
func TestSpanEndsWhenAnInnerHookPanics(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := respiretest.NewServer(t)
	c, err := respire.Connect(context.Background(), respire.Options{
		Endpoints: []string{respiretest.MemoryAddr}, Dialer: s.Dial,
		Hooks: []respire.Hook{NewHook(WithTracerProvider(tp)), panicHook{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	recovered := func(run func()) (p any) {
		defer func() { p = recover() }()
		run()
		return nil
	}
	if p := recovered(func() { _, _ = c.Get(context.Background(), "k") }); p != "inner hook panics" {
		t.Fatalf("Get recovered %v, want the inner hook's panic", p)
	}
	if p := recovered(func() { b := c.NewBatch(); b.Get("k"); _ = b.Execute(context.Background()) }); p != "inner hook panics" {
		t.Fatalf("Execute recovered %v, want the inner hook's panic", p)
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want 2", len(spans))
	}
	for _, sp := range spans {
		if sp.Status().Code != codes.Error || attr(sp, "error.type").AsString() != "panic" {
			t.Errorf("span %s: status %v, error.type %q; want Error and panic", sp.Name(), sp.Status().Code, attr(sp, "error.type").AsString())
		}
	}
}

// panicHook panics before every command and batch.
type panicHook struct{}

func (panicHook) DialHook(next respire.DialHook) respire.DialHook { return next }
func (panicHook) ProcessHook(respire.ProcessHook) respire.ProcessHook {
	return func(context.Context, *respire.CommandInfo) error { panic("inner hook panics") }
}
func (panicHook) ProcessBatchHook(respire.ProcessBatchHook) respire.ProcessBatchHook {
	return func(context.Context, *respire.BatchInfo) error { panic("inner hook panics") }
}

// TestSpanStatusLeavesOutEchoedACLRules: a real server's error for a
// rejected ACL SETUSER rule repeats the rule, and a rule may be a
// password ("<pw" removing a password the user does not have, "(>pw" an
// unclosed selector): neither gets into the span. The caller's error
// keeps it.
func TestSpanStatusLeavesOutEchoedACLRules(t *testing.T) {
	addr := testenv.Standalone(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	c, err := respire.Connect(context.Background(), respire.Options{Endpoints: []string{addr},
		Hooks: []respire.Hook{NewHook(WithTracerProvider(tp))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	const user, secret = "respireotel-acl-echo-user", "hunter2-acl-secret"
	// A rejected SETUSER creates nothing; delete the user should it exist.
	t.Cleanup(func() { _, _ = c.Do(context.Background(), respire.NewCommand("ACL"), "DELUSER", user) })
	for _, rule := range []string{"<" + secret, "(>" + secret, "(>" + secret + ")"} {
		_, err := c.Do(context.Background(), respire.NewCommand("ACL"), "SETUSER", user, rule)
		if err == nil || !strings.Contains(err.Error(), secret) {
			t.Fatalf("ACL SETUSER %q = %v, want the server's error repeating the rule", rule, err)
		}
	}
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	for _, sp := range spans {
		st := sp.Status()
		if st.Code != codes.Error || !strings.Contains(st.Description, "ACL") {
			t.Errorf("status %v %q, want Error naming the ACL failure", st.Code, st.Description)
		}
		if strings.Contains(st.Description, secret) {
			t.Errorf("span status %q holds the password", st.Description)
		}
	}
}

// TestWithServerLeavesOutUserInformation: an address given as a URL or
// with user information (a connection string passed by mistake) records
// its host and port, never the password it holds, on the spans, which are
// exported beyond the process.
func TestWithServerLeavesOutUserInformation(t *testing.T) {
	const secret = "hunter2-url-secret"
	for _, addr := range []string{
		"redis://user:" + secret + "@cache.example:6380/2",
		"rediss://:" + secret + "@cache.example:6380",
		"redis://:" + secret + "/not?escaped@cache.example:6380",
		"user:" + secret + "@cache.example:6380",
		"redis://cache.example:6380/0?password=" + secret,
	} {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		c := client(t, respiretest.NewServer(t), NewHook(WithTracerProvider(tp), WithServer(addr)))
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("%q: %d spans, want 1", addr, len(spans))
		}
		sp := spans[0]
		if got, port := attr(sp, "server.address").AsString(), attr(sp, "server.port").AsInt64(); got != "cache.example" || port != 6380 {
			t.Errorf("%q: server.address %q, server.port %d; want cache.example and 6380", addr, got, port)
		}
		for _, kv := range sp.Attributes() {
			if strings.Contains(kv.Value.Emit(), secret) {
				t.Errorf("%q: attribute %s = %q holds the password", addr, kv.Key, kv.Value.Emit())
			}
		}
	}
}

// TestNewHookIgnoresNilOption: a nil Option (an option chosen at run time
// and left unset) changes nothing instead of panicking.
func TestNewHookIgnoresNilOption(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var unset Option
	c := client(t, respiretest.NewServer(t), NewHook(unset, WithTracerProvider(tp), nil))
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans, want 1", n)
	}
}
