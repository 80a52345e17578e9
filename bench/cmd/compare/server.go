package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverProbe reads redis-server's CPU time (INFO cpu) and, when this
// process may read it, its system call count (/proc/PID/io). It uses its
// own go-redis connection, never a client under test. On a cluster it
// holds one connection per node and sums over them.
type serverProbe struct {
	nodes   []*nodeProbe // standalone: the one server
	cluster *clusterInfo // nil on a standalone server
}

// nodeProbe is the probe connection to one redis-server.
type nodeProbe struct {
	rc  *redis.Client
	pid string
}

func newServerProbe(ctx context.Context, addr string) (*serverProbe, error) {
	n, err := newNodeProbe(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &serverProbe{nodes: []*nodeProbe{n}}, nil
}

func newNodeProbe(ctx context.Context, addr string) (*nodeProbe, error) {
	rc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	info, err := rc.Info(ctx, "server").Result()
	if err != nil {
		_ = rc.Close()
		return nil, err
	}
	return &nodeProbe{rc: rc, pid: infoField(info, "process_id")}, nil
}

func (p *serverProbe) close() {
	for _, n := range p.nodes {
		_ = n.rc.Close()
	}
	if p.cluster != nil {
		_ = p.cluster.cc.Close()
	}
}

// cpu returns the server's (every node's) user+system CPU time so far.
func (p *serverProbe) cpu() time.Duration {
	var total time.Duration
	for _, n := range p.nodes {
		total += n.cpu()
	}
	return total
}

func (n *nodeProbe) cpu() time.Duration {
	info, err := n.rc.Info(context.Background(), "cpu").Result()
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, k := range []string{"used_cpu_sys", "used_cpu_user"} {
		f, _ := strconv.ParseFloat(infoField(info, k), 64)
		total += time.Duration(f * float64(time.Second))
	}
	return total
}

// syscalls returns the server's (every node's) read and write system
// calls so far; a node whose count is unreadable adds zero.
func (p *serverProbe) syscalls() ioCalls {
	var total ioCalls
	for _, n := range p.nodes {
		if n.pid == "" {
			continue
		}
		c := procSyscalls(n.pid)
		total.Reads += c.Reads
		total.Writes += c.Writes
	}
	return total
}

// version returns redis_version (of the first node on a cluster).
func (p *serverProbe) version() string {
	info, _ := p.nodes[0].rc.Info(context.Background(), "server").Result()
	return infoField(info, "redis_version")
}

func infoField(info, key string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v
		}
	}
	return ""
}

// load fills db with every key of ks holding a value of n bytes. On a
// cluster it goes through go-redis's cluster client, whose pipelines are
// split by slot and sent to each key's primary.
func (p *serverProbe) load(ctx context.Context, ks keyspace, value string) error {
	for i := 0; i < len(ks); i += 1000 {
		var pipe redis.Pipeliner
		if p.cluster != nil {
			pipe = p.cluster.cc.Pipeline()
		} else {
			pipe = p.nodes[0].rc.Pipeline()
		}
		for _, k := range ks[i:min(i+1000, len(ks))] {
			pipe.Set(ctx, k, value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ceilingConfig is how redis-benchmark is run: pipelined, against a
// different database so that its SETs never change the values the
// clients read.
type ceilingConfig struct {
	Host     string
	Port     string
	Pipeline int
	Clients  int
	Requests int // per test at 64-byte values; scaled down for larger ones
	Keys     int
	DB       int
	// Cluster runs redis-benchmark --cluster against the node at Host:Port
	// (its keys are key:{tag}:N, never the clients' key:N, and there is
	// only database 0).
	Cluster bool
}

// ceilingSample is one redis-benchmark test.
type ceilingSample struct {
	OpsPerSec float64
	ServerCPU time.Duration // server CPU during the test (includes connection setup)
	ServerSys ioCalls
	Requests  int
}

// runCeiling runs redis-benchmark for op (get or set) at n-byte values.
// SET runs before GET in the same invocation, so GET finds its keys.
func runCeiling(ctx context.Context, cfg ceilingConfig, probe *serverProbe, valueBytes int) (map[string]ceilingSample, error) {
	requests := cfg.Requests
	if valueBytes > 1024 {
		requests = max(requests/3, 1000)
	}
	out := map[string]ceilingSample{}
	for _, test := range []string{"set", "get"} {
		cpu0, sys0 := probe.cpu(), probe.syscalls()
		var cmd *exec.Cmd
		if cfg.Cluster {
			cmd = exec.CommandContext(ctx, "redis-benchmark", "--cluster",
				"-h", cfg.Host, "-p", cfg.Port,
				"-P", strconv.Itoa(cfg.Pipeline), "-c", strconv.Itoa(cfg.Clients),
				"-n", strconv.Itoa(requests), "-r", strconv.Itoa(cfg.Keys),
				"-d", strconv.Itoa(valueBytes),
				"-t", test, "--csv")
		} else {
			cmd = exec.CommandContext(ctx, "redis-benchmark",
				"-h", cfg.Host, "-p", cfg.Port,
				"-P", strconv.Itoa(cfg.Pipeline), "-c", strconv.Itoa(cfg.Clients),
				"-n", strconv.Itoa(requests), "-r", strconv.Itoa(cfg.Keys),
				"-d", strconv.Itoa(valueBytes), "--dbnum", strconv.Itoa(cfg.DB),
				"-t", test, "--csv")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("redis-benchmark: %v: %s", err, stderr.String())
		}
		if cfg.Cluster {
			// In cluster mode redis-benchmark first prints the primaries
			// it found ("Cluster has 3 master nodes: ..."); keep the CSV.
			b = csvLines(b)
		}
		rps, err := parseBenchCSV(b, strings.ToUpper(test))
		if err != nil {
			return nil, err
		}
		out[test] = ceilingSample{
			OpsPerSec: rps,
			ServerCPU: probe.cpu() - cpu0,
			ServerSys: probe.syscalls().sub(sys0),
			Requests:  requests,
		}
	}
	return out, nil
}

// parseBenchCSV finds the rps column of test in redis-benchmark --csv output.
func parseBenchCSV(b []byte, test string) (float64, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark output: %v", err)
	}
	col := 1
	for _, r := range recs {
		if len(r) > 1 && r[0] == "test" {
			for i, h := range r {
				if h == "rps" {
					col = i
				}
			}
			continue
		}
		if len(r) > col && r[0] == test {
			return strconv.ParseFloat(r[col], 64)
		}
	}
	return 0, fmt.Errorf("redis-benchmark output has no %s line: %q", test, b)
}

// csvLines keeps the lines of b that start with a double quote.
func csvLines(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) > 0 && line[0] == '"' {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// mixOf is the throughput of an 80/20 GET/SET mix on a server whose
// pure rates are get and set: each operation costs 1/rate.
func mixOf(get, set float64) float64 {
	if get == 0 || set == 0 {
		return 0
	}
	return 1 / (0.8/get + 0.2/set)
}
