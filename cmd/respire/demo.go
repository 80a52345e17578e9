package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// maxTries bounds how many times a scenario runs when other clients of a
// real server disturb its INFO commandstats delta.
const maxTries = 3

// keyPrefix prefixes every key the demo touches; each scenario deletes its
// key before and after it runs.
const keyPrefix = "respire:demo:"

func runDemoCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	rest, code, ok := parse("demo", &f, args, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "respire demo: unexpected arguments %q\n", rest)
		return exitUsage
	}
	passed, err := runDemo(ctx, stdout, f, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "respire demo: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitFail
	}
	if !passed {
		fmt.Fprintln(stderr, "respire demo: some scenarios did not behave as specified (see the CHECK column)")
		return exitFail
	}
	return exitOK
}

// usageError is a demo error caused by the command line.
type usageError struct{ error }

// demoEnv is where the scenarios run: a fault proxy in front of a server,
// a client template pointing at the proxy, a direct client for setup and
// inspection, and the server's own execution counts.
type demoEnv struct {
	desc     string
	proxy    *respiretest.Proxy
	opts     respire.Options // clients of the scenarios, through the proxy
	direct   *respire.Client // bypasses the proxy
	executed func(ctx context.Context, command string) (int64, error)
	// shared reports whether executed counts other clients' commands too
	// (INFO commandstats is server-wide).
	shared bool
	close  func()
}

// newEmbeddedEnv starts the kit's embedded server (miniredis behind a fault
// proxy on 127.0.0.1) and counts executions at the proxy's hop to the
// engine.
func newEmbeddedEnv(ctx context.Context, opts respire.Options) (*demoEnv, error) {
	srv, err := respiretest.StartServer()
	if err != nil {
		return nil, err
	}
	// The embedded server has no users or passwords.
	opts.Username, opts.Password = "", ""
	direct := opts
	direct.Endpoints = []string{"miniredis.engine:6379"}
	direct.Dialer = func(context.Context, string, string) (net.Conn, error) { return srv.Engine().Dial() }
	dc, err := respire.Connect(ctx, direct)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("connect to the embedded engine: %w", err)
	}
	opts.Endpoints = []string{srv.Addr()}
	return &demoEnv{
		desc:   "embedded server (miniredis behind the respiretest fault proxy); EXECUTED counts the frames the proxy forwarded to the engine",
		proxy:  srv.Proxy,
		opts:   opts,
		direct: dc,
		executed: func(_ context.Context, command string) (int64, error) {
			return int64(srv.Executed(command)), nil
		},
		close: func() {
			dc.Close()
			srv.Close()
		},
	}, nil
}

// newRealEnv places a fault proxy in front of the server at opts'
// endpoint, which must be a loopback address, and counts executions with
// INFO commandstats deltas read directly from the server.
func newRealEnv(ctx context.Context, opts respire.Options) (*demoEnv, error) {
	addr := opts.Endpoints[0]
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Errorf("--addr %q: want host:port", addr)}
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, usageError{fmt.Errorf("--addr %q: the demo writes keys and injects faults, so it only runs against a loopback address such as 127.0.0.1", addr)}
	}
	dc, err := respire.Connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	p, err := respiretest.NewProxy(addr)
	if err != nil {
		dc.Close()
		return nil, err
	}
	opts.Endpoints = []string{p.Addr()}
	return &demoEnv{
		desc:   "the server at " + addr + " behind a respiretest fault proxy; EXECUTED is the delta of its INFO commandstats calls",
		proxy:  p,
		opts:   opts,
		direct: dc,
		executed: func(ctx context.Context, command string) (int64, error) {
			return commandCalls(ctx, dc, command)
		},
		shared: true,
		close: func() {
			p.Close()
			dc.Close()
		},
	}, nil
}

// commandCalls returns the calls count of command in INFO commandstats.
func commandCalls(ctx context.Context, c *respire.Client, command string) (int64, error) {
	r, err := c.Do(ctx, catalog.Server.INFO(), "commandstats")
	if err != nil {
		return 0, err
	}
	info, err := r.String()
	if err != nil {
		return 0, err
	}
	return parseCommandCalls(info, command)
}

// parseCommandCalls finds "cmdstat_<command>:calls=N,..." in an INFO
// commandstats reply; a command the server never ran counts 0.
func parseCommandCalls(info, command string) (int64, error) {
	prefix := "cmdstat_" + strings.ToLower(command) + ":"
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: bad calls in %q", line)
				}
				return n, nil
			}
		}
		return 0, fmt.Errorf("INFO commandstats: no calls in %q", line)
	}
	return 0, nil
}

// outcome is what a scenario's call returned.
type outcome struct {
	value string // rendered value, when err is nil
	err   error
}

// scenario is one row of the demo.
type scenario struct {
	id       string
	command  string // command name, for the server's counts and the proxy's rules
	display  string // the command as shown, with "key" for the key
	category respire.RetryCategory
	policy   respire.RetryPolicy
	policyS  string
	fault    respiretest.Action
	times    int // frames the fault applies to
	faultS   string
	setup    func(ctx context.Context, c *respire.Client, key string) error
	call     func(ctx context.Context, c *respire.Client, key string) outcome
	// inspect reads the key's state after the call, for the note.
	inspect func(ctx context.Context, c *respire.Client, key string) (string, error)
	// check returns what differs from the specified behaviour, or "".
	check func(o outcome, state string) string
	// sends, executed and retries are the specified counts; retries by
	// outcome (attempted, succeeded, exhausted).
	sends, executed int64
	retries         map[string]int64
	note            func(state string) string
}

func getValue(ctx context.Context, c *respire.Client, key string) outcome {
	v, err := c.Get(ctx, key)
	return outcome{value: strconv.Quote(v), err: err}
}

func incrValue(ctx context.Context, c *respire.Client, key string) outcome {
	n, err := c.Incr(ctx, key)
	return outcome{value: strconv.FormatInt(n, 10), err: err}
}

func setValue(value string) func(ctx context.Context, c *respire.Client, key string) error {
	return func(ctx context.Context, c *respire.Client, key string) error { return c.Set(ctx, key, value) }
}

func readValue(ctx context.Context, c *respire.Client, key string) (string, error) {
	v, err := c.Get(ctx, key)
	if errors.Is(err, respire.ErrNil) {
		return "(nil)", nil
	}
	return strconv.Quote(v), err
}

// wantValue checks a successful call that returned want.
func wantValue(want string) func(outcome, string) string {
	return func(o outcome, _ string) string {
		if o.err != nil {
			return "want " + want + ", got error"
		}
		if o.value != want {
			return "got " + o.value + ", want " + want
		}
		return ""
	}
}

// scenarios returns the demo's scenarios, each with its specified outcome.
func scenarios() []scenario {
	return []scenario{
		{
			id: "a", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(string) string {
				return "GET ran but its reply was lost; read_only is within the default maximum: resent"
			},
		},
		{
			id: "b", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				var ce *respire.ConnError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want a connection error, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &ce) || !errors.Is(o.err, respire.ErrConnectionLost):
					return "want *respire.ConnError"
				case !respire.MayHaveExecuted(o.err):
					return "MayHaveExecuted says the INCR cannot have run"
				case !strings.Contains(o.err.Error(), "may have been executed"):
					return "error does not say the INCR may have run"
				case state != `"11"`:
					return "value " + state + ", want \"11\""
				}
				return ""
			},
			sends: 1, executed: 1, retries: map[string]int64{},
			note: func(state string) string {
				return "not resent: write_accumulating is above the default maximum read_only; the INCR did run: 10 -> " + state
			},
		},
		{
			id: "c", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteAccumulating},
			policyS: "max write_accumulating",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("12")(o, state); s != "" {
					return s
				}
				if state != `"12"` {
					return "value " + state + ", want \"12\""
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the caller accepted duplicates: resent, the INCR ran twice: 10 -> " + state
			},
		},
		{
			id: "d", command: "SET", display: "SET key first NX", category: respire.WriteChecked,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteChecked},
			policyS: "max write_checked",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			call: func(ctx context.Context, c *respire.Client, key string) outcome {
				r, err := c.SetWithOptions(ctx, key, "first", respire.SetOptions{Condition: respire.SetIfNotExists})
				if r.Written {
					return outcome{value: "set", err: err}
				}
				return outcome{value: "not set", err: err}
			},
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("not set")(o, state); s != "" {
					return s
				}
				if state != `"first"` {
					return "value " + state + `, want "first"`
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the first SET NX wrote the key (now " + state + ") but its reply was lost; the resend re-checked NX and reported \"not set\""
			},
		},
		{
			id: "e", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{MaxAttempts: 5}, policyS: "default, MaxAttempts 5",
			fault: respiretest.Inject(respiretest.ErrLoading), times: 3, faultS: "LOADING x3",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 4, executed: 1, retries: map[string]int64{"attempted": 3, "succeeded": 1},
			note: func(string) string {
				return "the proxy answered LOADING 3 times, backoff (ceilings 10, 20, 40 ms) absorbed the burst; GET ran once"
			},
		},
		{
			id: "f", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.Inject(respiretest.ErrBusy), faultS: "BUSY",
			setup: setValue("hello"),
			call:  getValue,
			check: func(o outcome, _ string) string {
				var se *respire.ServerError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want BUSY, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &se) || se.Code != "BUSY":
					return "want a BUSY *respire.ServerError"
				}
				return ""
			},
			sends: 1, executed: 0, retries: map[string]int64{},
			note: func(string) string {
				return "BUSY is not a selectable failure: never resent"
			},
		},
	}
}

// row is a scenario's result as printed.
type row struct {
	sc       *scenario
	result   string
	sends    int64
	executed int64
	retries  map[string]int64
	category string // the category attribute of the recorded retries
	elapsed  time.Duration
	// disturbed reports that the server ran more of the command than the
	// proxy forwarded for the scenario's key: other clients ran it too.
	disturbed bool
	state     string
	problems  []string
}

// runDemo runs the scenarios against the embedded server (f.addr empty)
// or through a proxy in front of the server at f.addr, and writes the
// table to w. It reports whether every scenario behaved as specified; an
// error means the demo could not run.
func runDemo(ctx context.Context, w io.Writer, f connFlags, getenv func(string) string) (bool, error) {
	env, err := newEnv(ctx, f, getenv)
	if err != nil {
		return false, err
	}
	defer env.close()
	return runScenarios(ctx, w, env, scenarios())
}

// newEnv returns the embedded environment when f.addr is empty, else the
// environment in front of the server at f.addr.
func newEnv(ctx context.Context, f connFlags, getenv func(string) string) (*demoEnv, error) {
	opts, err := f.options(getenv)
	if err != nil {
		return nil, usageError{err}
	}
	if f.addr == "" {
		return newEmbeddedEnv(ctx, opts)
	}
	return newRealEnv(ctx, opts)
}

// runScenarios runs scs in env and writes the table to w; see [runDemo].
func runScenarios(ctx context.Context, w io.Writer, env *demoEnv, scs []scenario) (bool, error) {
	fmt.Fprintf(w, "respire demo: %s\n", env.desc)
	fmt.Fprintf(w, "each scenario's key is %s<ID>, seeded before the call and deleted after it\n\n", keyPrefix)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCOMMAND\tCATEGORY\tPOLICY\tFAULT\tRESULT\tSENDS\tEXECUTED\tRETRIES\tTIME\tCHECK\tNOTE")
	passed := true
	for i := range scs {
		sc := &scs[i]
		// A server-wide count disturbed by other clients says nothing
		// about the scenario: measure again, a few times at most.
		var r row
		tries := 0
		for tries < maxTries && (tries == 0 || r.disturbed) {
			tries++
			var err error
			if r, err = env.run(ctx, sc); err != nil {
				tw.Flush()
				return false, fmt.Errorf("scenario %s: %w", sc.id, err)
			}
		}
		check := "ok"
		if r.disturbed {
			r.problems = append(r.problems, fmt.Sprintf("other clients ran %s during each of %d tries; EXECUTED includes theirs", sc.command, tries))
		} else if tries > 1 {
			check = fmt.Sprintf("ok (try %d: other clients ran %s during the earlier ones)", tries, sc.command)
		}
		if len(r.problems) > 0 {
			passed = false
			check = "FAIL: " + strings.Join(r.problems, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n",
			sc.id, sc.display, sc.category, sc.policyS, sc.faultS,
			r.result, r.sends, r.executed, formatRetries(r.retries), formatElapsed(r.elapsed),
			check, sc.note(r.state))
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	fmt.Fprintln(w, "\nSENDS: frames of the command the proxy received; EXECUTED: times the server ran it; RETRIES: respire.command.retries by outcome (OpenTelemetry ManualReader); default policy: RetryPolicy{} = 3 attempts, max category read_only.")
	if passed {
		fmt.Fprintf(w, "all %d scenarios behaved as specified\n", len(scs))
	} else {
		fmt.Fprintln(w, "SOME SCENARIOS DID NOT BEHAVE AS SPECIFIED")
	}
	return passed, nil
}

// run runs one scenario: it seeds the key, adds a counting rule and the
// fault rule at the proxy, makes the call with a fresh client (its own
// policy and metric reader) and compares what happened with the scenario's
// specification.
func (e *demoEnv) run(ctx context.Context, sc *scenario) (row, error) {
	key := keyPrefix + sc.id
	if _, err := e.direct.Del(ctx, key); err != nil {
		return row{}, fmt.Errorf("setup: %w", err)
	}
	defer e.direct.Del(context.WithoutCancel(ctx), key)
	if sc.setup != nil {
		if err := sc.setup(ctx, e.direct, key); err != nil {
			return row{}, fmt.Errorf("setup: %w", err)
		}
	}

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.WithoutCancel(ctx))
	opts := e.opts
	policy := sc.policy
	opts.RetryPolicy = &policy
	opts.Metrics = respire.MetricsResiliency
	opts.MeterProvider = mp
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		return row{}, fmt.Errorf("connect through the proxy: %w", err)
	}
	defer c.Close()

	sends, err := e.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: respiretest.Always, Action: respiretest.Pass})
	if err != nil {
		return row{}, err
	}
	defer sends.Remove()
	fault, err := e.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: max(sc.times, 1), Action: sc.fault})
	if err != nil {
		return row{}, err
	}
	defer fault.Remove()

	before, err := e.executed(ctx, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	start := time.Now()
	o := sc.call(ctx, c, key)
	elapsed := time.Since(start)
	after, err := e.executed(ctx, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	r := row{sc: sc, sends: int64(sends.Applied()), executed: after - before, elapsed: elapsed}
	// Every frame the proxy forwarded for the key ran on the server (a lost
	// reply is dropped only after it arrived), so a larger server count
	// means other clients ran the command meanwhile.
	r.disturbed = e.shared && r.executed > int64(sends.Forwarded())
	if o.err != nil {
		r.result = o.err.Error()
	} else {
		r.result = o.value
	}
	if sc.inspect != nil {
		if r.state, err = sc.inspect(ctx, e.direct, key); err != nil {
			return row{}, fmt.Errorf("inspect: %w", err)
		}
	}
	if r.retries, r.category, err = collectRetries(ctx, reader); err != nil {
		return row{}, fmt.Errorf("collect metrics: %w", err)
	}

	if p := sc.check(o, r.state); p != "" {
		r.problems = append(r.problems, p)
	}
	if r.sends != sc.sends {
		r.problems = append(r.problems, fmt.Sprintf("sends %d, want %d", r.sends, sc.sends))
	}
	if r.executed != sc.executed {
		r.problems = append(r.problems, fmt.Sprintf("executed %d, want %d", r.executed, sc.executed))
	}
	if got, want := formatRetries(r.retries), formatRetries(sc.retries); got != want {
		r.problems = append(r.problems, fmt.Sprintf("retries %s, want %s", got, want))
	}
	if len(r.retries) > 0 && r.category != sc.category.String() {
		r.problems = append(r.problems, fmt.Sprintf("retries recorded with category %s, want %s", r.category, sc.category))
	}
	return r, nil
}

const (
	retriesMetric = "respire.command.retries"
	outcomeAttr   = "respire.command.retry.outcome"
	categoryAttr  = "respire.command.retry.category"
)

// collectRetries reads respire.command.retries from reader: the counts by
// outcome and the category attribute (categories joined with "," if more
// than one was recorded).
func collectRetries(ctx context.Context, reader *sdkmetric.ManualReader) (map[string]int64, string, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return nil, "", err
	}
	counts := map[string]int64{}
	var cats []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != retriesMetric {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				return nil, "", fmt.Errorf("%s: unexpected data %T", retriesMetric, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Value == 0 {
					continue
				}
				o, _ := dp.Attributes.Value(outcomeAttr)
				counts[o.AsString()] += dp.Value
				c, _ := dp.Attributes.Value(categoryAttr)
				if cat := c.AsString(); !slices.Contains(cats, cat) {
					cats = append(cats, cat)
				}
			}
		}
	}
	return counts, strings.Join(cats, ","), nil
}

// formatRetries renders counts by outcome in a fixed order, "-" for none.
func formatRetries(counts map[string]int64) string {
	var parts []string
	for _, o := range []string{"attempted", "succeeded", "exhausted"} {
		if n := counts[o]; n != 0 {
			parts = append(parts, o+"="+strconv.FormatInt(n, 10))
		}
	}
	for _, o := range slices.Sorted(maps.Keys(counts)) { // outcomes the demo does not know, if any
		if n := counts[o]; n != 0 && o != "attempted" && o != "succeeded" && o != "exhausted" {
			parts = append(parts, o+"="+strconv.FormatInt(n, 10))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func formatElapsed(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}
