// Command compare measures respire against go-redis and rueidis on one
// redis-server, interleaving the clients within each round, and writes
// the results as JSON, a Markdown table and an SVG chart. It also writes
// pprof profiles of chosen scenarios. scripts/bench.sh runs it; see
// docs/performance.md for the method.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type config struct {
	addr       string
	out        string
	rounds     int
	warmup     time.Duration
	duration   time.Duration
	keys       int
	clients    []string
	conc       []int
	ops        []string
	smallValue int
	largeValue int
	largeConc  []int
	largeOps   []string
	ceiling    ceilingConfig
	commit     string
	quick      bool
	cluster    []string // seed addresses; empty: standalone on addr
	batches    []int    // pipeline scenario: members per batch; empty: single commands

	profile        []cell
	profileClients []string
	profileTime    time.Duration
	profileDir     string
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var c config
	var clients, conc, ops, largeConc, largeOps, profile, profileClients, cluster, pipeline string
	fs.StringVar(&c.addr, "addr", "127.0.0.1:16390", "redis-server address (host:port)")
	fs.StringVar(&c.out, "out", "", "output path prefix; writes PREFIX.json, .md, .svg (default results/latest, or results/quick with -quick)")
	fs.IntVar(&c.rounds, "rounds", 5, "interleaved rounds")
	fs.DurationVar(&c.warmup, "warmup", 200*time.Millisecond, "warm-up before each measurement")
	fs.DurationVar(&c.duration, "duration", time.Second, "measured time per client and scenario")
	fs.IntVar(&c.keys, "keys", 10000, "number of distinct keys")
	fs.StringVar(&clients, "clients", strings.Join(allClients, ","), "clients to compare")
	fs.StringVar(&conc, "concurrency", "1,8,64,512", "goroutine counts")
	fs.StringVar(&ops, "ops", "get,set,mix", "operations at the small value size")
	fs.IntVar(&c.smallValue, "value", 64, "value size in bytes")
	fs.IntVar(&c.largeValue, "large-value", 4096, "large value size in bytes (0: none)")
	fs.StringVar(&largeConc, "large-concurrency", "64,512", "goroutine counts at the large value size")
	fs.StringVar(&largeOps, "large-ops", "get,set", "operations at the large value size")
	fs.IntVar(&c.ceiling.Pipeline, "ceiling-pipeline", 16, "redis-benchmark -P")
	fs.IntVar(&c.ceiling.Clients, "ceiling-clients", 50, "redis-benchmark -c")
	fs.IntVar(&c.ceiling.Requests, "ceiling-requests", 1000000, "redis-benchmark -n per test (a third at the large size)")
	fs.StringVar(&c.commit, "commit", "", "respire commit recorded in the results")
	fs.BoolVar(&c.quick, "quick", false, "smoke run: 3 short rounds (about 1.5 minutes)")
	fs.StringVar(&profile, "profile", "", "instead of comparing, profile these scenarios, op:goroutines[:valuebytes], comma-separated (e.g. get:64,get:512)")
	fs.StringVar(&profileClients, "profile-clients", nameRespire, "clients to profile")
	fs.DurationVar(&c.profileTime, "profile-duration", 5*time.Second, "profiled time per client and scenario")
	fs.StringVar(&c.profileDir, "profile-dir", "results", "directory for profiles")
	fs.StringVar(&pipeline, "pipeline", "", "pipeline scenario: comma-separated batch sizes (e.g. 10,100); every operation is one batch of that many GETs or SETs sent with the client's batching API (respire Batch, go-redis Pipelined, rueidis DoMulti), and the defaults become -ops get,set -concurrency 1,64 -large-value 0 -clients "+strings.Join(pipelineClients, ",")+" -out results/pipeline (results/pipeline-quick with -quick)")
	fs.StringVar(&cluster, "cluster", "", "Redis Cluster mode: comma-separated seed addresses (host:port); -addr is then unused, every client uses its cluster client, keys are chosen at random, and the defaults become -ops get,set -concurrency 64,512 -large-value 0 -out results/cluster (results/cluster-quick with -quick)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if cluster != "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		c.cluster = splitList(cluster)
		if len(c.cluster) == 0 {
			return c, fmt.Errorf("-cluster: no seed address")
		}
		for _, seed := range c.cluster {
			if _, _, err := net.SplitHostPort(seed); err != nil {
				return c, fmt.Errorf("-cluster: %v", err)
			}
		}
		c.addr = c.cluster[0]
		if !set["ops"] {
			ops = "get,set"
		}
		if !set["concurrency"] {
			conc = "64,512"
		}
		if !set["large-value"] {
			c.largeValue = 0
		}
		if !set["out"] {
			c.out = "results/cluster"
			if c.quick {
				c.out = "results/cluster-quick"
			}
		}
	}
	if pipeline != "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		var err error
		if c.batches, err = splitInts(pipeline); err != nil || len(c.batches) == 0 {
			return c, fmt.Errorf("-pipeline: want batch sizes, got %q", pipeline)
		}
		if cluster != "" {
			return c, fmt.Errorf("-pipeline does not combine with -cluster")
		}
		if profile != "" {
			return c, fmt.Errorf("-pipeline does not combine with -profile")
		}
		if !set["ops"] {
			ops = "get,set"
		}
		if !set["concurrency"] {
			conc = "1,64"
		}
		if !set["large-value"] {
			c.largeValue = 0
		}
		if !set["clients"] {
			clients = strings.Join(pipelineClients, ",")
		}
		if !set["out"] {
			c.out = "results/pipeline"
			if c.quick {
				c.out = "results/pipeline-quick"
			}
		}
	}
	if c.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["rounds"] {
			c.rounds = 3
		}
		if !set["duration"] {
			c.duration = 250 * time.Millisecond
		}
		if !set["warmup"] {
			c.warmup = 100 * time.Millisecond
		}
		if !set["ceiling-requests"] {
			c.ceiling.Requests = 200000
		}
	}
	if c.out == "" {
		c.out = "results/latest"
		if c.quick {
			c.out = "results/quick"
		}
	}
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return c, fmt.Errorf("-addr: %v", err)
	}
	c.ceiling.Host, c.ceiling.Port, c.ceiling.Keys, c.ceiling.DB = host, port, c.keys, 1
	if len(c.cluster) > 0 {
		c.ceiling.DB, c.ceiling.Cluster = 0, true
	}
	c.clients = splitList(clients)
	for _, name := range c.clients {
		if !contains(allClients, name) {
			return c, fmt.Errorf("-clients: unknown client %q", name)
		}
	}
	if c.conc, err = splitInts(conc); err != nil {
		return c, fmt.Errorf("-concurrency: %v", err)
	}
	if c.largeConc, err = splitInts(largeConc); err != nil {
		return c, fmt.Errorf("-large-concurrency: %v", err)
	}
	c.ops, c.largeOps = splitList(ops), splitList(largeOps)
	for _, op := range append(append([]string(nil), c.ops...), c.largeOps...) {
		if op != opGet && op != opSet && op != opMix {
			return c, fmt.Errorf("unknown op %q", op)
		}
		if op == opMix && len(c.batches) > 0 {
			return c, fmt.Errorf("-pipeline: batches are all GET or all SET; drop %q from -ops/-large-ops", op)
		}
	}
	c.profileClients = splitList(profileClients)
	for _, p := range splitList(profile) {
		parts := strings.Split(p, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return c, fmt.Errorf("-profile: want op:goroutines[:valuebytes], got %q", p)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 1 {
			return c, fmt.Errorf("-profile: bad goroutine count in %q", p)
		}
		v := c.smallValue
		if len(parts) == 3 {
			if v, err = strconv.Atoi(parts[2]); err != nil || v < 1 {
				return c, fmt.Errorf("-profile: bad value size in %q", p)
			}
		}
		c.profile = append(c.profile, cell{Op: parts[0], Concurrency: n, ValueBytes: v})
	}
	return c, nil
}

// cells lists the scenarios in the order each round runs them. In the
// pipeline scenario every operation and concurrency runs at every batch
// size.
func (c config) cells() []cell {
	batches := c.batches
	if len(batches) == 0 {
		batches = []int{0}
	}
	var cs []cell
	for _, op := range c.ops {
		for _, b := range batches {
			for _, n := range c.conc {
				cs = append(cs, cell{Op: op, Concurrency: n, ValueBytes: c.smallValue, Batch: b})
			}
		}
	}
	if c.largeValue > 0 {
		for _, op := range c.largeOps {
			for _, b := range batches {
				for _, n := range c.largeConc {
					cs = append(cs, cell{Op: op, Concurrency: n, ValueBytes: c.largeValue, Batch: b})
				}
			}
		}
	}
	return cs
}

func (c config) valueSizes() []int {
	sizes := []int{c.smallValue}
	if c.largeValue > 0 && len(c.largeOps) > 0 && len(c.largeConc) > 0 {
		sizes = append(sizes, c.largeValue)
	}
	return sizes
}

func run(cfg config) error {
	ctx := context.Background()
	var probe *serverProbe
	var err error
	if len(cfg.cluster) > 0 {
		probe, err = newClusterProbe(ctx, cfg.cluster)
		if err != nil {
			return fmt.Errorf("cluster at %s: %v (scripts/bench.sh --cluster starts one)", strings.Join(cfg.cluster, ","), err)
		}
	} else {
		probe, err = newServerProbe(ctx, cfg.addr)
		if err != nil {
			return fmt.Errorf("server at %s: %v (scripts/bench.sh starts one)", cfg.addr, err)
		}
	}
	defer probe.close()
	e := &env{server: probe}
	keys := newKeyspace(cfg.keys)
	if ci := probe.cluster; ci != nil {
		if err := ci.layout(ctx, keys); err != nil {
			return fmt.Errorf("cluster: %v", err)
		}
		e.randomKeys = true
		fmt.Printf("cluster: %d primaries, %d nodes; %d keys over %d of %d slots;", len(ci.primaries), len(ci.nodes), len(keys), ci.distinctSlots, clusterSlots)
		for _, p := range ci.primaries {
			fmt.Printf(" %s holds %d", p, ci.keysPerNode[p])
		}
		fmt.Println()
	}

	if len(cfg.profile) > 0 {
		return runProfiles(ctx, cfg, e, keys)
	}

	drivers := map[string]driver{}
	for _, name := range cfg.clients {
		d, err := cfg.connect(ctx, name)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		defer d.close()
		drivers[name] = d
	}

	if probe.cluster != nil {
		// Fail fast: a client that cannot reach every primary is found
		// before the first ceiling, not after it.
		size := cfg.valueSizes()[0]
		if err := probe.load(ctx, keys, strings.Repeat("v", size)); err != nil {
			return fmt.Errorf("loading keys: %v", err)
		}
		for _, name := range cfg.clients {
			if err := check(ctx, probe, drivers[name], keys, size); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
		}
	}

	res := newResults(cfg, probe)
	cells := cfg.cells()
	began := time.Now()
	progress := func(format string, args ...any) {
		el := time.Since(began).Round(time.Second)
		fmt.Printf("[%6s] %s\n", el, fmt.Sprintf(format, args...))
	}
	progress("%d rounds x %d scenarios x %d clients, %v each (+%v warm-up)",
		cfg.rounds, len(cells), len(cfg.clients), cfg.duration, cfg.warmup)
	for r := range cfg.rounds {
		for _, size := range cfg.valueSizes() {
			cs, err := runCeiling(ctx, cfg.ceiling, probe, size)
			if err != nil {
				return err
			}
			res.addCeiling(r, size, cs)
			progress("round %d/%d  ceiling v=%d  set %.0f  get %.0f ops/s", r+1, cfg.rounds, size, cs["set"].OpsPerSec, cs["get"].OpsPerSec)
		}
		for _, size := range cfg.valueSizes() {
			value := strings.Repeat("v", size)
			if err := probe.load(ctx, keys, value); err != nil {
				return fmt.Errorf("loading keys: %v", err)
			}
			for _, name := range cfg.clients {
				if err := check(ctx, probe, drivers[name], keys, size); err != nil {
					return fmt.Errorf("%s: %v", name, err)
				}
				for _, b := range cfg.batches {
					if err := checkPipe(ctx, drivers[name], keys, b, size); err != nil {
						return fmt.Errorf("%s: %v", name, err)
					}
				}
			}
			for _, c := range cells {
				if c.ValueBytes != size {
					continue
				}
				// Rotate the order every round so no client always
				// follows the same one.
				for i := range cfg.clients {
					name := cfg.clients[(i+r)%len(cfg.clients)]
					runtime.GC()
					s := e.measure(drivers[name], c, keys, value, cfg.warmup, cfg.duration)
					if s.Errors > 0 {
						progress("  %s %s: %d errors, first: %s", name, c, s.Errors, s.FirstErr)
					}
					res.add(name, c, r, s)
					if c.Batch > 0 {
						progress("round %d/%d  %-18s %-22s %9.0f batches/s %9.0f members/s  %6.2f allocs/batch", r+1, cfg.rounds, c, name, s.opsPerSec(), s.opsPerSec()*float64(c.Batch), s.perOp(float64(s.Mallocs)))
					} else {
						progress("round %d/%d  %-18s %-22s %9.0f ops/s  %5.2f allocs/op", r+1, cfg.rounds, c, name, s.opsPerSec(), s.perOp(float64(s.Mallocs)))
					}
				}
			}
		}
	}
	res.finish(cfg, probe)
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	if err := res.write(cfg.out); err != nil {
		return err
	}
	progress("wrote %s.json, %s.md, %s.svg", cfg.out, cfg.out, cfg.out)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func splitInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
