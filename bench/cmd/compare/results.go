package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// results collects every sample of a run.
type results struct {
	meta     meta
	clients  []string
	cells    []cell
	rounds   int
	samples  map[string]map[cell][]sample       // client -> cell -> by round
	ceilings map[int][]map[string]ceilingSample // value size -> by round -> op
	ceilCfg  ceilingConfig
	cluster  *clusterInfo // nil on a standalone server
	batches  []int        // the pipeline scenario's batch sizes; empty otherwise

	Rows   []row            `json:"rows"`
	Ratios map[string]ratio `json:"ratios"`
	Goals  []goal           `json:"goals"`
}

type meta struct {
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished"`
	Machine       map[string]string `json:"machine"`
	Versions      map[string]string `json:"versions"`
	Method        map[string]any    `json:"method"`
	LoadAvgStart  string            `json:"loadavg_start"`
	LoadAvgFinish string            `json:"loadavg_finish"`
	// ForeignCores summarises other tenants' CPU use over every client
	// sample: median and maximum, in cores.
	ForeignCoresMedian float64 `json:"foreign_cores_median"`
	ForeignCoresMax    float64 `json:"foreign_cores_max"`
}

// row is one client in one scenario, summarised over rounds. In the
// pipeline scenario (Batch > 0) an operation is one batch: OpsPerSec are
// batches per second, MembersPerSec the commands in them, and every
// per-operation cost is per batch.
type row struct {
	Client            string    `json:"client"`
	Op                string    `json:"op"`
	Concurrency       int       `json:"concurrency"`
	ValueBytes        int       `json:"value_bytes"`
	Batch             int       `json:"batch,omitempty"`
	OpsPerSec         float64   `json:"ops_per_sec"`
	OpsPerSecMin      float64   `json:"ops_per_sec_min"`
	OpsPerSecMax      float64   `json:"ops_per_sec_max"`
	RoundsOpsPerSec   []float64 `json:"rounds_ops_per_sec"`
	MembersPerSec     *float64  `json:"members_per_sec,omitempty"`
	MembersPerSecMin  *float64  `json:"members_per_sec_min,omitempty"`
	MembersPerSecMax  *float64  `json:"members_per_sec_max,omitempty"`
	NsPerOp           *float64  `json:"ns_per_op,omitempty"`
	P50Ns             *float64  `json:"p50_ns,omitempty"`
	P99Ns             *float64  `json:"p99_ns,omitempty"`
	AllocsPerOp       *float64  `json:"allocs_per_op,omitempty"`
	BytesPerOp        *float64  `json:"bytes_per_op,omitempty"`
	ClientCPUUsPerOp  *float64  `json:"client_cpu_us_per_op,omitempty"`
	ServerCPUUsPerOp  *float64  `json:"server_cpu_us_per_op,omitempty"`
	ClientReadsPerOp  *float64  `json:"client_reads_per_op,omitempty"`
	ClientWritesPerOp *float64  `json:"client_writes_per_op,omitempty"`
	ServerReadsPerOp  *float64  `json:"server_reads_per_op,omitempty"`
	ServerWritesPerOp *float64  `json:"server_writes_per_op,omitempty"`
	ForeignCores      *float64  `json:"foreign_cores,omitempty"`
	IdleCores         *float64  `json:"idle_cores,omitempty"`
	RunqueueCores     *float64  `json:"client_runqueue_cores,omitempty"`
	CtxSwitchesPerOp  *float64  `json:"context_switches_per_op,omitempty"`
	GCsPerSecond      *float64  `json:"gc_per_second,omitempty"`
	CeilingFraction   *float64  `json:"ceiling_fraction,omitempty"`
	CeilingFractionLo *float64  `json:"ceiling_fraction_min,omitempty"`
	CeilingFractionHi *float64  `json:"ceiling_fraction_max,omitempty"`
	Pipeline          int       `json:"pipeline,omitempty"`
	Derived           string    `json:"derived,omitempty"`
	Errors            uint64    `json:"errors"`
}

// ratio compares two clients in one scenario, round by round, by
// commands per second (members per second in the pipeline scenario, so
// that a client's batches compare with the ceiling's commands).
type ratio struct {
	Numerator   string    `json:"numerator"`
	Denominator string    `json:"denominator"`
	Op          string    `json:"op"`
	Concurrency int       `json:"concurrency"`
	ValueBytes  int       `json:"value_bytes"`
	Batch       int       `json:"batch,omitempty"`
	Median      float64   `json:"median"`
	Min         float64   `json:"min"`
	Max         float64   `json:"max"`
	Rounds      []float64 `json:"rounds"`
}

// goal is one target of the performance issue, judged per cell: a ratio
// at least Threshold, a ratio within the A/A control's noise of 1 (Bound
// per cell), or with AtMost a measured value at most the cell's Bound.
type goal struct {
	Goal      string     `json:"goal"`
	Ratio     string     `json:"ratio"`
	Threshold float64    `json:"threshold,omitempty"`
	AtMost    bool       `json:"at_most,omitempty"`
	Met       bool       `json:"met"`
	Cells     []goalCell `json:"cells"`
}

// goalCell is one cell of a goal; Slack is how far it is from failing
// (negative: not met).
type goalCell struct {
	Ratio  string  `json:"ratio"`
	Median float64 `json:"median"`
	Min    float64 `json:"min,omitempty"`
	Max    float64 `json:"max,omitempty"`
	Bound  float64 `json:"bound"`
	Slack  float64 `json:"slack"`
	Met    bool    `json:"met"`
}

func newResults(cfg config, probe *serverProbe) *results {
	r := &results{
		clients:  cfg.clients,
		cells:    cfg.cells(),
		rounds:   cfg.rounds,
		samples:  map[string]map[cell][]sample{},
		ceilings: map[int][]map[string]ceilingSample{},
		ceilCfg:  cfg.ceiling,
		cluster:  probe.cluster,
		batches:  cfg.batches,
		Ratios:   map[string]ratio{},
	}
	for _, name := range cfg.clients {
		r.samples[name] = map[cell][]sample{}
		for _, c := range r.cells {
			r.samples[name][c] = make([]sample, cfg.rounds)
		}
	}
	for _, size := range cfg.valueSizes() {
		r.ceilings[size] = make([]map[string]ceilingSample, cfg.rounds)
	}
	r.meta = meta{
		Started:      time.Now().UTC(),
		Machine:      machine(),
		Versions:     versions(probe, cfg.commit),
		LoadAvgStart: loadavg(),
		Method: map[string]any{
			"rounds":                cfg.rounds,
			"warmup_seconds":        cfg.warmup.Seconds(),
			"duration_seconds":      cfg.duration.Seconds(),
			"keys":                  cfg.keys,
			"key_bytes":             16,
			"order":                 "round-robin over clients within each scenario, starting one client later each round",
			"mix":                   "80% GET, 20% SET",
			"ceiling":               fmt.Sprintf("redis-benchmark -P %d -c %d -n %d -r %d --dbnum %d -t set,get (one test per invocation); mix ceiling derived as 1/(0.8/get+0.2/set)", cfg.ceiling.Pipeline, cfg.ceiling.Clients, cfg.ceiling.Requests, cfg.ceiling.Keys, cfg.ceiling.DB),
			"allocations":           "runtime.MemStats Mallocs/TotalAlloc deltas over the measured window for the whole process; the harness's workers do not allocate",
			"cpu":                   "client: getrusage(RUSAGE_SELF) user+sys; server: INFO cpu used_cpu_user+used_cpu_sys",
			"syscalls":              "syscr and syscw of /proc/PID/io: read and write system calls only; client reads include those that returned EAGAIN",
			"foreign_cores":         "CPU used machine-wide (/proc/stat) minus this process and the server, per second of the window: other tenants' load",
			"context_switches":      "getrusage nvcsw+nivcsw of this process (threads switching off a CPU)",
			"ratios":                "computed per round from that round's samples; median, min and max over rounds",
			"serial_latency_sample": "every operation timed with time.Now at 1 goroutine",
		},
	}
	if r.cluster != nil {
		r.meta.Method["cluster"] = r.cluster.describe()
		r.meta.Method["ceiling"] = fmt.Sprintf("redis-benchmark --cluster -h %s -p %s -P %d -c %d -n %d -r %d -t set,get (one test per invocation; keys key:{tag}:N, apart from the clients' key:N); mix ceiling derived as 1/(0.8/get+0.2/set)", cfg.ceiling.Host, cfg.ceiling.Port, cfg.ceiling.Pipeline, cfg.ceiling.Clients, cfg.ceiling.Requests, cfg.ceiling.Keys)
		r.meta.Method["order"] = "round-robin over clients within each scenario, starting one client later each round; keys drawn at random by every goroutine"
	}
	if len(r.batches) > 0 {
		r.meta.Method["pipeline"] = map[string]any{
			"batch_sizes": r.batches,
			"operation":   "one batch of N members, all GET or all SET; each goroutine takes the next N keys of its walk over the keyspace",
			"respire":     "one Batch per goroutine: Get/Set per member, Execute, every Future's Result (GET) or Err (SET), then Reset",
			"go-redis":    "Client.Pipelined with Get/Set per member (the callback made once per goroutine), then every command's Result (GET) or Err (SET)",
			"rueidis":     "Client.DoMulti with commands built by B().Get()/B().Set() every batch, then every result's ToString (GET) or Error (SET)",
			"errors":      "failed members; a nil GET reply is not a failure (the keys are loaded; a check before each value size's scenarios reads one batch back)",
			"per_op":      "ops_per_sec are batches per second and every per-operation cost is per batch; members_per_sec = ops_per_sec x batch; ratios and the ceiling fraction compare members per second with the ceiling's commands per second",
		}
	}
	return r
}

func (r *results) add(client string, c cell, round int, s sample) {
	r.samples[client][c][round] = s
}

func (r *results) addCeiling(round, size int, cs map[string]ceilingSample) {
	r.ceilings[size][round] = cs
}

// ceilingOps returns the ceiling for op at size in round.
func (r *results) ceilingOps(op string, size, round int) float64 {
	cs := r.ceilings[size][round]
	if cs == nil {
		return 0
	}
	if op == opMix {
		return mixOf(cs[opGet].OpsPerSec, cs[opSet].OpsPerSec)
	}
	return cs[op].OpsPerSec
}

func (r *results) finish(cfg config, probe *serverProbe) {
	r.meta.Finished = time.Now().UTC()
	r.meta.LoadAvgFinish = loadavg()
	var foreign []float64
	for _, byCell := range r.samples {
		for _, ss := range byCell {
			for _, s := range ss {
				foreign = append(foreign, s.foreignCores())
			}
		}
	}
	r.meta.ForeignCoresMedian, _, r.meta.ForeignCoresMax = stats(foreign)
	for _, c := range r.cells {
		for _, name := range r.clients {
			r.Rows = append(r.Rows, r.clientRow(name, c))
		}
	}
	// Ceiling rows: one per operation and value size.
	for _, size := range cfg.valueSizes() {
		for _, op := range []string{opGet, opSet, opMix} {
			var ops, cpu, srd, swr []float64
			for round := range r.rounds {
				ops = append(ops, r.ceilingOps(op, size, round))
				if cs := r.ceilings[size][round][op]; cs.Requests > 0 {
					cpu = append(cpu, cs.ServerCPU.Seconds()*1e6/float64(cs.Requests))
					srd = append(srd, float64(cs.ServerSys.Reads)/float64(cs.Requests))
					swr = append(swr, float64(cs.ServerSys.Writes)/float64(cs.Requests))
				}
			}
			m, lo, hi := stats(ops)
			row := row{Client: nameCeiling, Op: op, Concurrency: r.ceilCfg.Clients, ValueBytes: size,
				OpsPerSec: m, OpsPerSecMin: lo, OpsPerSecMax: hi, RoundsOpsPerSec: ops, Pipeline: r.ceilCfg.Pipeline}
			if op == opMix {
				row.Derived = "1/(0.8/get + 0.2/set) per round"
			} else {
				row.ServerCPUUsPerOp = medianPtr(cpu)
				row.ServerReadsPerOp, row.ServerWritesPerOp = medianPtr(srd), medianPtr(swr)
			}
			r.Rows = append(r.Rows, row)
		}
	}
	// Ratios.
	pairs := [][2]string{
		{nameRespire, nameRueidis},
		{nameRespire, nameGoRedis},
		{nameRespire, nameCeiling},
		{nameRueidis, nameCeiling},
		{nameGoRedis, nameCeiling},
		{nameRespireEnabled, nameRespire},
		{nameRespireObserved, nameRespire},
		{nameRespireDisabled, nameRespire},
		{nameRueidis, nameGoRedis},
	}
	for _, c := range r.cells {
		for _, p := range pairs {
			if rt, ok := r.ratio(p[0], p[1], c); ok {
				r.Ratios[ratioName(p[0], p[1], c)] = rt
			}
		}
	}
	small := func(c cell) bool { return c.ValueBytes <= 64 }
	goals := []goal{
		r.goal("respire at least 1.0x rueidis in every cell", nameRespire, nameRueidis, 1, func(cell) bool { return true }),
		r.goal("respire at least 1.0x go-redis in every cell", nameRespire, nameGoRedis, 1, func(cell) bool { return true }),
	}
	if len(r.batches) == 0 {
		goals = append(goals,
			r.goal("respire at least 2.0x rueidis at 64 and 512 goroutines (64 B)", nameRespire, nameRueidis, 2, func(c cell) bool { return c.Concurrency >= 64 && small(c) }),
			r.goal("respire at least 80% of the redis-benchmark -P16 ceiling at 512 goroutines (64 B GET and SET)", nameRespire, nameCeiling, 0.8, func(c cell) bool {
				return c.Concurrency == 512 && small(c) && (c.Op == "get" || c.Op == "set")
			}),
			r.noiseGoal("retry policy enabled within the A/A control's noise of nil", nameRespireEnabled),
			r.noiseGoal("retry policy and every metric group enabled within the A/A control's noise of nil", nameRespireObserved),
			r.cpuGoal("respire client CPU per GET at 512 goroutines at most 1.0 µs (64 B)", "get", 512, func(cell) float64 { return 1.0 }),
			r.cpuGoal("respire client CPU per serial GET at most go-redis's (64 B)", "get", 1, func(c cell) float64 { return r.medianCPU(nameGoRedis, c) }),
		)
	}
	for _, g := range goals {
		if len(g.Cells) > 0 {
			r.Goals = append(r.Goals, g)
		}
	}
}

// noiseGoal: the variant (retry enabled; retry and metrics enabled) is
// within the noise of nil, where the noise of a cell is what the A/A
// control of the same run shows (respire with MaxAttempts 1 takes nil's
// path): the largest deviation of a round's control ratio from 1, and at
// least 1 %.
func (r *results) noiseGoal(text, variant string) goal {
	g := goal{Goal: text, Ratio: variant + "/" + nameRespire, Met: true}
	for _, c := range r.cells {
		rt, ok := r.Ratios[ratioName(variant, nameRespire, c)]
		aa, okAA := r.Ratios[ratioName(nameRespireDisabled, nameRespire, c)]
		if !ok || !okAA {
			continue
		}
		noise := 0.01
		for _, x := range aa.Rounds {
			noise = max(noise, abs(x-1))
		}
		gc := goalCell{Ratio: ratioName(variant, nameRespire, c), Median: rt.Median, Min: rt.Min, Max: rt.Max, Bound: noise}
		gc.Slack = noise - abs(rt.Median-1)
		gc.Met = gc.Slack >= 0
		g.Met = g.Met && gc.Met
		g.Cells = append(g.Cells, gc)
	}
	return g
}

// cpuGoal: respire's median client CPU per operation in the 64 B cells of
// op at concurrency is at most bound(cell) µs.
func (r *results) cpuGoal(text, op string, concurrency int, bound func(cell) float64) goal {
	g := goal{Goal: text, Ratio: "client CPU µs/op", Met: true, AtMost: true}
	for _, c := range r.cells {
		if c.Op != op || c.Concurrency != concurrency || c.ValueBytes > 64 || c.Batch > 0 {
			continue
		}
		v, lim := r.medianCPU(nameRespire, c), bound(c)
		if v == 0 || lim == 0 {
			continue
		}
		gc := goalCell{Ratio: fmt.Sprintf("respire client CPU µs/op %s c=%d v=%d", c.Op, c.Concurrency, c.ValueBytes), Median: v, Bound: lim, Slack: lim - v}
		gc.Met = gc.Slack >= 0
		g.Met = g.Met && gc.Met
		g.Cells = append(g.Cells, gc)
	}
	return g
}

// medianCPU is client's median client CPU per operation in c, 0 when
// client did not run there.
func (r *results) medianCPU(client string, c cell) float64 {
	ss, ok := r.samples[client][c]
	if !ok || len(ss) == 0 {
		return 0
	}
	var xs []float64
	for _, s := range ss {
		xs = append(xs, s.perOp(float64(s.ClientCPU.Nanoseconds())/1e3))
	}
	m, _, _ := stats(xs)
	return m
}

func ratioName(num, den string, c cell) string {
	if c.Batch > 0 {
		return fmt.Sprintf("%s/%s %s c=%d v=%d b=%d", num, den, c.Op, c.Concurrency, c.ValueBytes, c.Batch)
	}
	return fmt.Sprintf("%s/%s %s c=%d v=%d", num, den, c.Op, c.Concurrency, c.ValueBytes)
}

// ops returns the commands per second of client in c in round: its
// operations per second times the members per operation.
func (r *results) ops(client string, c cell, round int) float64 {
	if client == nameCeiling {
		return r.ceilingOps(c.Op, c.ValueBytes, round)
	}
	ss, ok := r.samples[client]
	if !ok {
		return 0
	}
	return ss[c][round].opsPerSec() * float64(c.members())
}

func (r *results) ratio(num, den string, c cell) (ratio, bool) {
	var xs []float64
	for round := range r.rounds {
		a, b := r.ops(num, c, round), r.ops(den, c, round)
		if a == 0 || b == 0 {
			return ratio{}, false
		}
		xs = append(xs, a/b)
	}
	m, lo, hi := stats(xs)
	return ratio{Numerator: num, Denominator: den, Op: c.Op, Concurrency: c.Concurrency, ValueBytes: c.ValueBytes, Batch: c.Batch,
		Median: m, Min: lo, Max: hi, Rounds: xs}, true
}

func (r *results) goal(text, num, den string, threshold float64, applies func(cell) bool) goal {
	g := goal{Goal: text, Ratio: num + "/" + den, Threshold: threshold, Met: true}
	for _, c := range r.cells {
		if !applies(c) {
			continue
		}
		rt, ok := r.Ratios[ratioName(num, den, c)]
		if !ok {
			continue
		}
		gc := goalCell{Ratio: ratioName(num, den, c), Median: rt.Median, Min: rt.Min, Max: rt.Max, Bound: threshold, Slack: rt.Median - threshold}
		gc.Met = gc.Slack >= 0
		g.Met = g.Met && gc.Met
		g.Cells = append(g.Cells, gc)
	}
	if len(g.Cells) == 0 {
		g.Met = false
	}
	return g
}

func (r *results) clientRow(name string, c cell) row {
	ss := r.samples[name][c]
	var ops, members, ns, p50, p99, allocs, bytes, ccpu, scpu, crd, cwr, srd, swr, csw, gcs, frac, foreign, idle, runq []float64
	var errs uint64
	for round, s := range ss {
		ops = append(ops, s.opsPerSec())
		members = append(members, s.opsPerSec()*float64(c.members()))
		errs += s.Errors
		allocs = append(allocs, s.perOp(float64(s.Mallocs)))
		bytes = append(bytes, s.perOp(float64(s.AllocBytes)))
		ccpu = append(ccpu, s.perOp(float64(s.ClientCPU.Nanoseconds())/1e3))
		scpu = append(scpu, s.perOp(float64(s.ServerCPU.Nanoseconds())/1e3))
		crd = append(crd, s.perOp(float64(s.ClientSys.Reads)))
		cwr = append(cwr, s.perOp(float64(s.ClientSys.Writes)))
		srd = append(srd, s.perOp(float64(s.ServerSys.Reads)))
		swr = append(swr, s.perOp(float64(s.ServerSys.Writes)))
		foreign = append(foreign, s.foreignCores())
		idle = append(idle, s.idleCores())
		runq = append(runq, s.runqueueCores())
		csw = append(csw, s.perOp(float64(s.CtxSw)))
		gcs = append(gcs, float64(s.GCs)/s.Seconds)
		if c.Concurrency == 1 && s.Ops > 0 {
			ns = append(ns, s.Seconds*1e9/float64(s.Ops))
			p50 = append(p50, float64(percentile(s.Latencies, 0.50)))
			p99 = append(p99, float64(percentile(s.Latencies, 0.99)))
		}
		if ceil := r.ceilingOps(c.Op, c.ValueBytes, round); ceil > 0 {
			frac = append(frac, s.opsPerSec()*float64(c.members())/ceil)
		}
	}
	m, lo, hi := stats(ops)
	rw := row{
		Client: name, Op: c.Op, Concurrency: c.Concurrency, ValueBytes: c.ValueBytes, Batch: c.Batch,
		OpsPerSec: m, OpsPerSecMin: lo, OpsPerSecMax: hi, RoundsOpsPerSec: ops,
		NsPerOp: medianPtr(ns), P50Ns: medianPtr(p50), P99Ns: medianPtr(p99),
		AllocsPerOp: medianPtr(allocs), BytesPerOp: medianPtr(bytes),
		ClientCPUUsPerOp: medianPtr(ccpu), ServerCPUUsPerOp: medianPtr(scpu),
		ClientReadsPerOp: medianPtr(crd), ClientWritesPerOp: medianPtr(cwr), CtxSwitchesPerOp: medianPtr(csw),
		GCsPerSecond: medianPtr(gcs), ForeignCores: medianPtr(foreign), Errors: errs,
		IdleCores: medianPtr(idle), RunqueueCores: medianPtr(runq),
	}
	if slices.ContainsFunc(srd, func(x float64) bool { return x > 0 }) {
		rw.ServerReadsPerOp, rw.ServerWritesPerOp = medianPtr(srd), medianPtr(swr)
	}
	if c.Batch > 0 {
		mm, mlo, mhi := stats(members)
		rw.MembersPerSec, rw.MembersPerSecMin, rw.MembersPerSecMax = &mm, &mlo, &mhi
	}
	if len(frac) > 0 {
		fm, flo, fhi := stats(frac)
		rw.CeilingFraction, rw.CeilingFractionLo, rw.CeilingFractionHi = &fm, &flo, &fhi
	}
	return rw
}

// stats returns the median, minimum and maximum of xs.
func stats(xs []float64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

func medianPtr(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	m, _, _ := stats(xs)
	return &m
}

func (r *results) write(prefix string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Meta   meta             `json:"meta"`
		Rows   []row            `json:"rows"`
		Ratios map[string]ratio `json:"ratios"`
		Goals  []goal           `json:"goals"`
	}{r.meta, r.Rows, r.Ratios, r.Goals}); err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".json", b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".md", []byte(r.markdown()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(prefix+".svg", []byte(r.svg()), 0o644)
}

func machine() map[string]string {
	m := map[string]string{
		"goos":       runtime.GOOS,
		"goarch":     runtime.GOARCH,
		"num_cpu":    fmt.Sprint(runtime.NumCPU()),
		"gomaxprocs": fmt.Sprint(runtime.GOMAXPROCS(0)),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		m["memory"] = strings.Join(strings.Fields(strings.TrimPrefix(first, "MemTotal:")), " ")
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m["kernel"] = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m["os"] = strings.Trim(v, `"`)
			}
		}
	}
	return m
}

func versions(probe *serverProbe, commit string) map[string]string {
	v := map[string]string{"go": runtime.Version(), "redis_server": probe.version()}
	if commit != "" {
		v["respire_commit"] = commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/redis/go-redis/v9":
				v["go-redis"] = d.Version
			case "github.com/redis/rueidis":
				v["rueidis"] = d.Version
			}
		}
	}
	if out, err := exec.Command("redis-benchmark", "--version").Output(); err == nil {
		v["redis_benchmark"] = strings.TrimSpace(string(out))
	}
	return v
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
