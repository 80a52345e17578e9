package respire

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// recordingHook records what each kind of hook saw, and can fail
// commands before or after they run.
type recordingHook struct {
	mu       sync.Mutex
	tag      string
	events   *[]string
	failWith error // returned without calling next for commands named FAIL-BEFORE
	ctxKey   any
}

func (h *recordingHook) log(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.events = append(*h.events, h.tag+":"+s)
}

func (h *recordingHook) DialHook(next DialHook) DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.log("dial " + addr)
		return next(ctx, network, addr)
	}
}

func (h *recordingHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		h.log("before " + cmd.Name + " " + cmd.Category.String())
		if h.failWith != nil && cmd.Name == "ECHO" {
			return h.failWith
		}
		if h.ctxKey != nil {
			ctx = context.WithValue(ctx, h.ctxKey, h.tag)
		}
		err := next(ctx, cmd)
		h.log("after " + cmd.Name + " " + errString(err))
		return err
	}
}

func (h *recordingHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return func(ctx context.Context, b *BatchInfo) error {
		names := make([]string, b.Len())
		for i := range names {
			names[i] = b.Name(i)
		}
		h.log("batch " + strings.Join(names, ","))
		err := next(ctx, b)
		h.log("batch done " + errString(err))
		return err
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return "error"
}

// TestHooksWrapInOrder: the first hook is the outermost for dials,
// commands (typed, Do, blocking) and batches; one process call covers a
// command's resends.
func TestHooksWrapInOrder(t *testing.T) {
	var events []string
	outer, inner := &recordingHook{tag: "outer", events: &events}, &recordingHook{tag: "inner", events: &events}
	s := respiretest.NewServer(t)
	s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
	c := retryMemClient(t, s, Options{Hooks: []Hook{outer, inner}, RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	ctx := testCtx(t)
	if err := c.Set(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v; want v (after one LOADING resend)", v, err)
	}
	b := c.NewBatch()
	b.Incr("n")
	b.HGet("h", "f")
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"outer:dial " + respiretest.MemoryAddr, "inner:dial " + respiretest.MemoryAddr,
		"outer:before SET write_last_wins", "inner:before SET write_last_wins", "inner:after SET ok", "outer:after SET ok",
		"outer:before GET read_only", "inner:before GET read_only", "inner:after GET ok", "outer:after GET ok",
		"outer:batch INCR,HGET", "inner:batch INCR,HGET", "inner:batch done ok", "outer:batch done ok",
	}
	events = slices.DeleteFunc(events, func(e string) bool { return strings.HasPrefix(e, "h:dial ") })
	if !slices.Equal(events, want) {
		t.Errorf("hook events:\n got %q\nwant %q", events, want)
	}
}

// TestHookFailsBeforeSend: a hook that returns an error without calling
// next fails the call with it and nothing is sent; a hook cannot hide a
// failure by returning nil.
func TestHookFailsBeforeSend(t *testing.T) {
	var events []string
	veto := errors.New("vetoed by hook")
	s := respiretest.NewServer(t)
	echo := s.MustAddRule(t, respiretest.Rule{Command: "ECHO", Action: respiretest.Inject(respiretest.ErrLoading), Times: respiretest.Always})
	c := retryMemClient(t, s, Options{Hooks: []Hook{&recordingHook{tag: "h", events: &events, failWith: veto}}})
	if _, err := c.Echo(testCtx(t), "x"); !errors.Is(err, veto) {
		t.Fatalf("Echo = %v, want the hook's error", err)
	}
	if n := echo.Matched(); n != 0 {
		t.Errorf("the server saw %d ECHO, want 0", n)
	}
	swallow := retryMemClient(t, s, Options{Hooks: []Hook{swallowHook{}}})
	_, err := swallow.Do(testCtx(t), NewCommand("ECHO"), "x")
	if !errors.Is(err, &ServerError{Code: "LOADING"}) {
		t.Fatalf("Do through a hook returning nil = %v, want the command's LOADING error", err)
	}
}

// swallowHook returns nil whatever next returned.
type swallowHook struct{}

func (swallowHook) DialHook(next DialHook) DialHook { return next }
func (swallowHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error { _ = next(ctx, cmd); return nil }
}
func (swallowHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook { return next }

// TestHooksNilRejected: a nil hook, or a hook returning a nil function
// (which the client would call, and panic), is a configuration error.
func TestHooksNilRejected(t *testing.T) {
	_, err := Connect(context.Background(), Options{Endpoints: []string{"127.0.0.1:1"}, Hooks: []Hook{nil}})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Options.Hooks[0]" {
		t.Fatalf("Connect = %v, want a ConfigError naming Options.Hooks[0]", err)
	}
	s := respiretest.NewServer(t)
	for _, method := range []string{"DialHook", "ProcessHook", "ProcessBatchHook"} {
		c, err := Connect(testCtx(t), Options{Endpoints: []string{s.Addr()}, Hooks: []Hook{swallowHook{}, nilReturningHook{method}}})
		if c != nil {
			func() {
				defer func() { _ = recover() }()
				_ = c.Ping(testCtx(t))
				_ = c.NewBatch().Execute(testCtx(t))
			}()
			_ = c.Close()
		}
		if !errors.As(err, &ce) || ce.Field != "Options.Hooks[1]" || !strings.Contains(err.Error(), method) {
			t.Errorf("Connect with a hook whose %s returns nil = %v, want a ConfigError naming Options.Hooks[1] and %s", method, err, method)
		}
	}
}

// nilReturningHook returns nil from its method named nil, next from the
// others.
type nilReturningHook struct{ nil string }

func (h nilReturningHook) DialHook(next DialHook) DialHook {
	if h.nil == "DialHook" {
		return nil
	}
	return next
}

func (h nilReturningHook) ProcessHook(next ProcessHook) ProcessHook {
	if h.nil == "ProcessHook" {
		return nil
	}
	return next
}

func (h nilReturningHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	if h.nil == "ProcessBatchHook" {
		return nil
	}
	return next
}

// panicDialHook's dials panic.
type panicDialHook struct{ nilReturningHook }

func (panicDialHook) DialHook(DialHook) DialHook {
	return func(context.Context, string, string) (net.Conn, error) { panic("dial hook exploded") }
}

// TestPanickingDialFailsTheDial: a Dialer or a dial hook that panics runs
// on the client's dial goroutine, out of the caller's reach; the panic
// fails the dial with a connection error that says so, instead of ending
// the process.
func TestPanickingDialFailsTheDial(t *testing.T) {
	panicking := func(context.Context, string, string) (net.Conn, error) { panic("dialer exploded") }
	tests := []struct {
		name string
		opts Options
	}{
		{"Dialer", Options{Dialer: panicking}},
		{"DialHook", Options{Hooks: []Hook{panicDialHook{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Endpoints = []string{respiretest.MemoryAddr}
			c, err := Connect(testCtx(t), opts)
			if c != nil {
				_ = c.Close()
				t.Fatal("Connect through a panicking dial succeeded")
			}
			if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "exploded") {
				t.Errorf("Connect = %v, want a connection error naming the dial's panic", err)
			}
		})
	}
}

// TestLoggerConnectionEvents: a failed dial is logged as a warning
// naming the address, an opened connection at debug level; the password
// never appears.
func TestLoggerConnectionEvents(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	const password = "s3cret-never-logged"
	s := respiretest.NewServer(t)
	refuse := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, errors.New("refused by test dialer")
	}
	opts := Options{Endpoints: []string{respiretest.MemoryAddr}, Logger: logger, Dialer: refuse, Password: password}
	if _, err := Connect(testCtx(t), opts); err == nil {
		t.Fatal("Connect through a refusing dialer succeeded")
	}
	retryMemClient(t, s, Options{Logger: logger})
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{`level=WARN msg="respire: dial failed" addr=` + respiretest.MemoryAddr, "refused by test dialer", `level=DEBUG msg="respire: connection opened"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, password) {
		t.Errorf("the log contains the password:\n%s", out)
	}
}

// panicHandler is a slog.Handler that panics on every record.
type panicHandler struct{}

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("log handler exploded") }
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h panicHandler) WithGroup(string) slog.Handler           { return h }

// TestLoggerPanickingHandlerChangesNothing: a Logger whose handler panics
// on the client's own goroutines (a dial, a connection's end, a Cluster
// discovery) cannot end the process or change a reply: the client works
// as without a logger.
func TestLoggerPanickingHandlerChangesNothing(t *testing.T) {
	logger := slog.New(panicHandler{})
	check := func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "k"
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if v, err := c.Get(ctx, k); err != nil || v != "v" {
			t.Fatalf("Get = %q, %v; want v", v, err)
		}
	}
	t.Run("Standalone", func(t *testing.T) {
		s := respiretest.NewServer(t)
		c := retryMemClient(t, s, Options{Logger: logger})
		check(t, c)
		if err := c.Close(); err != nil { // the connection's end is logged too
			t.Fatalf("Close: %v", err)
		}
	})
	t.Run("Cluster", func(t *testing.T) {
		check(t, clusterClient(t, Options{Logger: logger}))
	})
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCommandAndConnectionMetrics: db.client.operation.duration counts
// each call once by command and outcome (a resent GET included), and the
// connection group counts the opened connection.
func TestCommandAndConnectionMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s := respiretest.NewServer(t)
	s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
	s.MustAddRule(t, respiretest.Rule{Command: "HGET", Action: respiretest.Inject("WRONGTYPE Operation against a key holding the wrong kind of value"), Times: respiretest.Always})
	c := retryMemClient(t, s, Options{
		Metrics:       MetricsCommands | MetricsConnections,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		RetryPolicy:   &RetryPolicy{InitialBackoff: NoBackoff},
	})
	ctx := testCtx(t)
	_ = c.Set(ctx, "k", "v")
	if _, err := c.Get(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	_, _ = c.HGet(ctx, "k", "f")
	_, _ = c.Do(ctx, NewCommand("NOSUCHCOMMAND"))
	durations, opens := collectCommandMetrics(t, reader)
	want := map[string]uint64{"SET/": 1, "GET/": 1, "HGET/server_error": 1, otherCommand + "/server_error": 1}
	if !maps.Equal(durations, want) {
		t.Errorf("durations by operation/error.type = %v, want %v", durations, want)
	}
	if opens["ok"] != 1 {
		t.Errorf("connection opens = %v, want ok=1", opens)
	}
}

// TestScriptAndFunctionDurationMetrics: a script run and a function call
// are operations too: db.client.operation.duration counts each once by
// its command (EVALSHA with its EVAL fallback, FCALL_RO) and outcome.
func TestScriptAndFunctionDurationMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s := respiretest.NewServer(t)
	s.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Action: respiretest.Reply([]byte(":7\r\n"))})
	s.MustAddRule(t, respiretest.Rule{Command: "FCALL_RO", Nth: 2, Action: respiretest.Inject("ERR Function not found")})
	c := retryMemClient(t, s, Options{
		Metrics:       MetricsCommands,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	ctx := testCtx(t)
	if _, err := NewScript("return 1", ScriptOptions{}).Run(ctx, c, nil); err != nil {
		t.Fatalf("Run = %v", err)
	}
	fn := NewFunction("lib", "f", FunctionOptions{ReadOnly: true})
	if _, err := fn.Call(ctx, c, nil); err != nil {
		t.Fatalf("Call = %v", err)
	}
	if _, err := fn.Call(ctx, c, nil); err == nil {
		t.Fatal("Call of a missing function succeeded")
	}
	durations, _ := collectCommandMetrics(t, reader)
	want := map[string]uint64{"EVALSHA/": 1, "FCALL_RO/": 1, "FCALL_RO/server_error": 1}
	if !maps.Equal(durations, want) {
		t.Errorf("durations by operation/error.type = %v, want %v", durations, want)
	}
}

// collectCommandMetrics reads db.client.operation.duration's counts by
// "operation/error.type" and respire.connection.opens by outcome.
func collectCommandMetrics(t *testing.T, reader *sdkmetric.ManualReader) (durations map[string]uint64, opens map[string]int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	durations, opens = map[string]uint64{}, map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != meterName {
			t.Errorf("meter %q, want %q", sm.Scope.Name, meterName)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				if m.Name != durationInstrument {
					continue
				}
				for _, p := range d.DataPoints {
					op, _ := p.Attributes.Value(attribute.Key(attrOperation))
					et, _ := p.Attributes.Value(attribute.Key(attrErrorType))
					durations[op.AsString()+"/"+et.AsString()] += p.Count
				}
			case metricdata.Sum[int64]:
				if m.Name != opensInstrument {
					continue
				}
				for _, p := range d.DataPoints {
					o, _ := p.Attributes.Value(attribute.Key(attrOutcome))
					opens[o.AsString()] += p.Value
				}
			}
		}
	}
	return durations, opens
}

// TestCommandMetricsCallEndedDuringRetryBackoff: a call that the caller's
// cancellation or Close ended while it waited to retry after a LOADING
// reply has the error.type of what ended it, not server_error (the reply
// it would have retried).
func TestCommandMetricsCallEndedDuringRetryBackoff(t *testing.T) {
	tests := []struct {
		name string
		end  func(c *Client, cancel context.CancelFunc)
		want string
	}{
		{"Cancelled", func(_ *Client, cancel context.CancelFunc) { cancel() }, "canceled"},
		{"Closed", func(c *Client, _ context.CancelFunc) { _ = c.Close() }, "connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				reader := sdkmetric.NewManualReader()
				s := respiretest.NewServer(t)
				get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Inject(respiretest.ErrLoading)})
				c := retryMemClient(t, s, Options{
					Metrics: MetricsCommands, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
					CommandTimeout: NoTimeout,
					RetryPolicy:    &RetryPolicy{InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: NoJitter},
				})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				errc := getAsync(ctx, c, "k")
				<-get.Received()
				synctest.Wait() // waiting out the backoff
				tt.end(c, cancel)
				if err := <-errc; err == nil {
					t.Fatal("Get succeeded")
				}
				durations, _ := collectCommandMetrics(t, reader)
				if want := map[string]uint64{"GET/" + tt.want: 1}; !maps.Equal(durations, want) {
					t.Errorf("durations by operation/error.type = %v, want %v", durations, want)
				}
			})
		})
	}
}

// TestSubcommandAsArgumentNamesTheSubcommand: Do with the subcommand as
// its first argument (NewCommand("OBJECT"), "ENCODING", key) is the
// catalog's OBJECT ENCODING to hooks and to db.operation.name, as the
// typed method is, whichever of the two runs first; on a dedicated
// connection too, whose commands the duration metric records as the
// client's.
func TestSubcommandAsArgumentNamesTheSubcommand(t *testing.T) {
	var events []string
	reader := sdkmetric.NewManualReader()
	s := respiretest.NewServer(t)
	c := retryMemClient(t, s, Options{
		Hooks:         []Hook{&recordingHook{tag: "h", events: &events}},
		Metrics:       MetricsCommands,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	ctx := testCtx(t)
	_, _ = c.Do(ctx, NewCommand("OBJECT"), "ENCODING", "k")
	_, _ = c.ObjectEncoding(ctx, "k")
	err := c.Dedicated(ctx, func(conn *Conn) error {
		_, _ = conn.Do(ctx, NewCommand("OBJECT"), "ENCODING", "k")
		_, _ = conn.Do(ctx, catalog.Generic.OBJECT_ENCODING(), "k")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	durations, _ := collectCommandMetrics(t, reader)
	names := map[string]uint64{}
	for k, n := range durations {
		names[strings.SplitN(k, "/", 2)[0]] += n
	}
	if want := map[string]uint64{"OBJECT ENCODING": 4}; !maps.Equal(names, want) {
		t.Errorf("durations by db.operation.name = %v, want %v", names, want)
	}
	var before []string
	for _, e := range events {
		if name, ok := strings.CutPrefix(e, "h:before "); ok {
			before = append(before, name[:strings.LastIndexByte(name, ' ')])
		}
	}
	if want := []string{"OBJECT ENCODING", "OBJECT ENCODING", "OBJECT ENCODING", "OBJECT ENCODING"}; !slices.Equal(before, want) {
		t.Errorf("hooks saw %q, want %q", before, want)
	}
}

// abandonHook runs the first GET's next on a goroutine of its own and
// returns its own error once the command is on its way, without waiting
// for next: a timeout hook written the obvious way.
type abandonHook struct {
	sent    <-chan struct{} // closed when the first GET reached the server
	gaveUp  chan struct{}   // closed as the hook returns
	once    sync.Once
	done    chan error // next's error, when it returns
	abandon error
}

func (*abandonHook) DialHook(next DialHook) DialHook { return next }
func (h *abandonHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		first := false
		if cmd.Name == "GET" {
			h.once.Do(func() { first = true })
		}
		if !first {
			return next(ctx, cmd)
		}
		go func() { h.done <- next(ctx, cmd) }()
		<-h.sent
		close(h.gaveUp)
		return h.abandon
	}
}
func (*abandonHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook { return next }

// TestHookAbandoningNextKeepsRepliesWithTheirCallers: a hook that
// returns while the command it started still waits for its reply fails
// the call with its error once that reply came; the next command (which
// could reuse the abandoned command's pooled storage) receives its own
// reply, and a next called after the hook returned sends nothing.
func TestHookAbandoningNextKeepsRepliesWithTheirCallers(t *testing.T) {
	s := respiretest.NewServer(t)
	hold := s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "slow", Action: respiretest.Hold})
	other := s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "other", Action: respiretest.Pass})
	h := &abandonHook{sent: hold.Received(), gaveUp: make(chan struct{}), done: make(chan error, 1), abandon: errors.New("hook gave up")}
	c := retryMemClient(t, s, Options{Hooks: []Hook{h}})
	ctx := testCtx(t)
	if err := c.Set(ctx, "slow", "A"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "other", "B"); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, "slow")
		slow <- err
	}()
	type result struct {
		v   string
		err error
	}
	got := make(chan result, 1)
	<-h.gaveUp
	go func() {
		v, err := c.Get(ctx, "other") // queued behind the held reply
		got <- result{v, err}
	}()
	<-other.Received()
	hold.Release()
	if err := <-h.done; err != nil {
		t.Errorf("the abandoned Get(slow)'s next = %v, want its reply", err)
	}
	if err := <-slow; !errors.Is(err, h.abandon) {
		t.Errorf("Get(slow) = %v, want the hook's error", err)
	}
	if r := <-got; r.err != nil || r.v != "B" {
		t.Fatalf("Get(other) = %q, %v; want B", r.v, r.err)
	}
}

// TestHookLateNextSendsNothing: a next kept by a hook and called after
// the hook returned fails and sends nothing.
func TestHookLateNextSendsNothing(t *testing.T) {
	s := respiretest.NewServer(t)
	echo := s.MustAddRule(t, respiretest.Rule{Command: "ECHO", Action: respiretest.Pass, Times: respiretest.Always})
	var late func() error
	c := retryMemClient(t, s, Options{Hooks: []Hook{lateHook{keep: func(f func() error) { late = f }}}})
	if _, err := c.Echo(testCtx(t), "x"); !errors.Is(err, errHookSkipped) {
		t.Fatalf("Echo = %v, want %v", err, errHookSkipped)
	}
	if err := late(); !errors.Is(err, errHookNext) {
		t.Errorf("next after the hook returned = %v, want %v", err, errHookNext)
	}
	if n := echo.Matched(); n != 0 {
		t.Errorf("the server saw %d ECHO, want 0", n)
	}
}

// lateHook keeps next, bound to its command, and returns nil without
// calling it.
type lateHook struct{ keep func(func() error) }

func (lateHook) DialHook(next DialHook) DialHook { return next }
func (h lateHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		h.keep(func() error { return next(context.Background(), cmd) })
		return nil
	}
}
func (lateHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook { return next }

// TestHookForeignInfoSendsNothing: a next given a CommandInfo or a
// BatchInfo other than the one its hook received (a new one, empty of
// the command) fails and sends nothing, instead of crashing the caller.
func TestHookForeignInfoSendsNothing(t *testing.T) {
	s := respiretest.NewServer(t)
	echo := s.MustAddRule(t, respiretest.Rule{Command: "ECHO", Action: respiretest.Pass, Times: respiretest.Always})
	c := retryMemClient(t, s, Options{Hooks: []Hook{foreignHook{}}})
	ctx := testCtx(t)
	if _, err := c.Echo(ctx, "x"); !errors.Is(err, errHookForeign) {
		t.Errorf("Echo = %v, want %v", err, errHookForeign)
	}
	b := c.NewBatch()
	e := b.Echo("y")
	if err := b.Execute(ctx); !errors.Is(err, errHookForeign) {
		t.Errorf("Batch.Execute = %v, want %v", err, errHookForeign)
	}
	if _, err := e.Result(); err == nil {
		t.Error("the batch member succeeded, want its batch's failure")
	}
	if n := echo.Matched(); n != 0 {
		t.Errorf("the server saw %d ECHO, want 0", n)
	}
}

// foreignHook calls next with an info of its own making.
type foreignHook struct{}

func (foreignHook) DialHook(next DialHook) DialHook { return next }
func (foreignHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		return next(ctx, &CommandInfo{Name: cmd.Name, Category: cmd.Category})
	}
}
func (foreignHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return func(ctx context.Context, b *BatchInfo) error {
		return next(ctx, &BatchInfo{Transaction: b.Transaction})
	}
}

// TestXAddFallbackIsOneOperation: on a server without IDMP, a typed XAdd
// that falls back to a plain XADD is one operation to the hooks and to
// the duration metric, as a script's EVAL fallback is: one successful
// XADD, not a failed one and then another.
func TestXAddFallbackIsOneOperation(t *testing.T) {
	var events []string
	reader := sdkmetric.NewManualReader()
	s := respiretest.NewServer(t, respiretest.InMemory(), respiretest.WithIDMP(false))
	c := retryMemClient(t, s, Options{
		RetryPolicy:   idmpChecked,
		Hooks:         []Hook{&recordingHook{tag: "h", events: &events}},
		Metrics:       MetricsCommands,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	if _, err := c.XAdd(testCtx(t), "s", XAddOptions{}, "f", "v"); err != nil {
		t.Fatalf("XAdd = %v", err)
	}
	wantXLen(t, c, "s", 1)
	durations, _ := collectCommandMetrics(t, reader)
	delete(durations, "XLEN/")
	if want := map[string]uint64{"XADD/": 1}; !maps.Equal(durations, want) {
		t.Errorf("durations = %v, want %v", durations, want)
	}
	var xadds []string
	for _, e := range events {
		if strings.Contains(e, " XADD ") {
			xadds = append(xadds, e)
		}
	}
	if want := []string{"h:before XADD write_checked", "h:after XADD ok"}; !slices.Equal(xadds, want) {
		t.Errorf("hooks saw %q, want %q", xadds, want)
	}
}

// TestWatchAndWaitPassThroughHooks: the commands a dedicated connection
// sends for its caller are hooked like conn.Do's: Watch's WATCH and its
// MULTI ... EXEC (a transaction to ProcessBatchHook), Conn.Wait's WAIT.
func TestWatchAndWaitPassThroughHooks(t *testing.T) {
	var events []string
	c := newClient(t, Options{Hooks: []Hook{&recordingHook{tag: "h", events: &events}}})
	ctx := testCtx(t)
	k := key(t, "k")
	err := c.Watch(ctx, func(tx *Tx) error {
		if _, err := tx.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
			return err
		}
		tx.Queue().Set(k, "v")
		tx.Queue().Incr(k + "n")
		return nil
	}, k)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	err = c.Dedicated(ctx, func(conn *Conn) error {
		_, err := conn.Wait(ctx, 0, 0)
		return err
	})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := []string{
		"h:before WATCH never", "h:after WATCH ok",
		"h:before GET never", "h:after GET ok",
		"h:batch SET,INCR", "h:batch done ok",
		"h:before WAIT never", "h:after WAIT ok",
	}
	events = slices.DeleteFunc(events, func(e string) bool { return strings.HasPrefix(e, "h:dial ") })
	if !slices.Equal(events, want) {
		t.Errorf("hook events:\n got %q\nwant %q", events, want)
	}
}
