package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respiretest"
)

// maxTries bounds how many times a scenario runs when other clients of a
// real server disturb its INFO commandstats delta.
const maxTries = 3

// keyPrefix prefixes every key the demo touches; each scenario deletes its
// key before and after it runs.
const keyPrefix = "respire:demo:"

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
	node      string // the address of the key's server
	problems  []string
}

// maxWidth is the widest line the demo writes: the table and its details
// fit in a 120-column terminal.
const maxWidth = 120

// detailIndent and detailLabel lay out the lines under a table row:
// the indent, then a label padded to detailLabel columns, then the text,
// wrapped with continuation lines indented past the label.
const (
	detailIndent = "    "
	detailLabel  = 9
)

// runScenarios runs scs in env and writes the table to w; see [runDemo].
// Each row holds the short columns; the longer facts (the key's node, the
// call's result, the retries counted, the note and why a check failed or
// measured again) follow on indented lines under it, wrapped to fit
// [maxWidth].
func runScenarios(ctx context.Context, w io.Writer, env *demoEnv, scs []scenario) (bool, error) {
	var b strings.Builder
	writeWrapped(&b, "respire demo: "+env.desc, "", "")
	writeWrapped(&b, "each scenario's key is "+keyPrefix+"<ID>, seeded before the call and deleted after it", "", "")
	b.WriteString("\n")
	table := [][]string{{"ID", "COMMAND", "CATEGORY", "POLICY", "FAULT", "SENDS", "EXECUTED", "TIME", "CHECK"}}
	var details [][][2]string
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
				io.WriteString(w, b.String())
				return false, fmt.Errorf("scenario %s: %w", sc.id, err)
			}
		}
		check, why := "ok", ""
		if r.disturbed {
			r.problems = append(r.problems, fmt.Sprintf("other clients ran %s during each of %d tries; EXECUTED includes theirs", sc.command, tries))
		} else if tries > 1 {
			why = fmt.Sprintf("try %d passed; other clients ran %s during the earlier ones", tries, sc.command)
		}
		if len(r.problems) > 0 {
			passed = false
			check, why = "FAIL", strings.Join(r.problems, "; ")
		}
		table = append(table, []string{sc.id, sc.display, sc.category.String(), sc.policyS, sc.faultS,
			strconv.FormatInt(r.sends, 10), strconv.FormatInt(r.executed, 10), formatElapsed(r.elapsed), check})
		var d [][2]string
		if env.showNode {
			d = append(d, [2]string{"node", r.node})
		}
		d = append(d, [2]string{"result", r.result}, [2]string{"retries", formatRetries(r.retries)}, [2]string{"note", sc.note(r.state)})
		if why != "" {
			d = append(d, [2]string{"why", why})
		}
		details = append(details, d)
	}
	widths := make([]int, len(table[0]))
	for _, cells := range table {
		for c, s := range cells {
			widths[c] = max(widths[c], len(s))
		}
	}
	for i, cells := range table {
		var line strings.Builder
		for c, s := range cells {
			line.WriteString(s)
			if c+1 < len(cells) {
				line.WriteString(strings.Repeat(" ", widths[c]-len(s)+2))
			}
		}
		b.WriteString(line.String())
		b.WriteString("\n")
		if i == 0 {
			continue
		}
		for _, d := range details[i-1] {
			label := detailIndent + d[0] + strings.Repeat(" ", max(detailLabel-len(d[0]), 1))
			writeWrapped(&b, d[1], label, strings.Repeat(" ", len(label)))
		}
	}
	b.WriteString("\n")
	if env.showNode {
		writeWrapped(&b, "node: the server of the scenario's key, whose proxy injected the fault.", "", "")
	}
	writeWrapped(&b, "SENDS: frames of the command the proxy received; EXECUTED: times the server ran it; retries: respire.command.retries by outcome (OpenTelemetry ManualReader); default policy: RetryPolicy{} = 3 attempts, max category read_only.", "", "")
	if passed {
		fmt.Fprintf(&b, "all %d scenarios behaved as specified\n", len(scs))
	} else {
		b.WriteString("SOME SCENARIOS DID NOT BEHAVE AS SPECIFIED\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return false, err
	}
	return passed, nil
}

// writeWrapped writes text to b in lines of at most [maxWidth] columns,
// breaking at spaces: the first line starts with first, the others with
// rest. A word longer than a line stays whole on a line of its own.
func writeWrapped(b *strings.Builder, text, first, rest string) {
	line := first
	empty := true // line holds no word yet
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > maxWidth {
			b.WriteString(line)
			b.WriteString("\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line)
	b.WriteString("\n")
}

// run runs one scenario: it seeds the key, adds a counting rule and the
// fault rule at the proxy of the key's server, makes the call with a fresh client (its own
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
		return row{}, fmt.Errorf("connect through the proxies: %w", err)
	}
	defer c.Close()

	node, err := e.node(ctx, key)
	if err != nil {
		return row{}, fmt.Errorf("find the key's server: %w", err)
	}
	sends, err := node.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: respiretest.Always, Action: respiretest.Pass})
	if err != nil {
		return row{}, err
	}
	defer sends.Remove()
	fault, err := node.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: max(sc.times, 1), Action: sc.fault})
	if err != nil {
		return row{}, err
	}
	defer fault.Remove()

	before, err := e.executed(ctx, node, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	start := time.Now()
	o := sc.call(ctx, c, key)
	elapsed := time.Since(start)
	after, err := e.executed(ctx, node, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	r := row{sc: sc, sends: int64(sends.Applied()), executed: after - before, elapsed: elapsed, node: node.addr}
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

// The retries counter the demo reads, and its attributes.
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

// formatElapsed renders d in milliseconds with one decimal.
func formatElapsed(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}
