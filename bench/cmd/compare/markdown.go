package main

import (
	"fmt"
	"strings"
)

// shortName is a client's column heading.
func shortName(client string) string {
	switch client {
	case nameRespireDisabled:
		return "respire (retry disabled)"
	case nameRespireEnabled:
		return "respire (retry enabled)"
	}
	return client
}

func kops(x float64) string {
	switch {
	case x >= 100e3:
		return fmt.Sprintf("%.0fk", x/1e3)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

func sizeName(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

func fp(p *float64, format string) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf(format, *p)
}

func (r *results) row(client string, c cell) *row {
	for i := range r.Rows {
		rw := &r.Rows[i]
		if rw.Client == client && rw.Op == c.Op && rw.ValueBytes == c.ValueBytes &&
			(rw.Concurrency == c.Concurrency || client == nameCeiling) {
			return rw
		}
	}
	return nil
}

func (r *results) markdown() string {
	var b strings.Builder
	m := r.meta
	if r.cluster != nil {
		fmt.Fprintf(&b, "# respire benchmark results: Redis Cluster\n\n")
		fmt.Fprintf(&b, "Redis Cluster of %d primaries and %d nodes in all (seeds %s); every client uses its cluster client. Each goroutine draws its keys at random; the %v keys occupy %d of the %d slots (",
			len(r.cluster.primaries), len(r.cluster.nodes), strings.Join(r.cluster.seeds, ", "), r.meta.Method["keys"], r.cluster.distinctSlots, clusterSlots)
		for i, p := range r.cluster.primaries {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s holds %d", p, r.cluster.keysPerNode[p])
		}
		b.WriteString("). Server CPU and system calls are summed over every node.\n\n")
	} else {
		fmt.Fprintf(&b, "# respire benchmark results\n\n")
	}
	fmt.Fprintf(&b, "Run %s – %s UTC on %s (%s CPUs, GOMAXPROCS %s, %s), %s, %s. ",
		m.Started.Format("2006-01-02 15:04"), m.Finished.Format("15:04"), m.Machine["cpu"], m.Machine["num_cpu"],
		m.Machine["gomaxprocs"], m.Machine["memory"], m.Machine["os"], m.Machine["kernel"])
	fmt.Fprintf(&b, "%s; redis-server %s; go-redis %s; rueidis %s", m.Versions["go"], m.Versions["redis_server"], m.Versions["go-redis"], m.Versions["rueidis"])
	if c := m.Versions["respire_commit"]; c != "" {
		fmt.Fprintf(&b, "; respire %s", c)
	}
	fmt.Fprintf(&b, ". Load average at start %s, at end %s; other processes used a median of %.2f cores (max %.2f) of the machine's %s during the measurements.\n\n",
		m.LoadAvgStart, m.LoadAvgFinish, m.ForeignCoresMedian, m.ForeignCoresMax, m.Machine["num_cpu"])
	fmt.Fprintf(&b, "%d interleaved rounds, %gs measured per client and scenario after %gs warm-up; 16-byte keys over %v keys. ",
		r.rounds, m.Method["duration_seconds"], m.Method["warmup_seconds"], m.Method["keys"])
	if r.cluster != nil {
		fmt.Fprintf(&b, "Cells show the median over rounds and (min–max). Ceiling: `redis-benchmark --cluster -P %d -c %d` against the same cluster.\n\n", r.ceilCfg.Pipeline, r.ceilCfg.Clients)
	} else {
		fmt.Fprintf(&b, "Cells show the median over rounds and (min–max). Ceiling: `redis-benchmark -P %d -c %d` against the same server.\n\n", r.ceilCfg.Pipeline, r.ceilCfg.Clients)
	}

	b.WriteString("## Throughput (operations per second)\n\n| op | value | goroutines |")
	for _, c := range r.clients {
		fmt.Fprintf(&b, " %s |", shortName(c))
	}
	b.WriteString(" ceiling |\n|---|---|---:|")
	for range r.clients {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	for _, c := range r.cells {
		fmt.Fprintf(&b, "| %s | %s | %d |", strings.ToUpper(c.Op), sizeName(c.ValueBytes), c.Concurrency)
		for _, name := range r.clients {
			rw := r.row(name, c)
			fmt.Fprintf(&b, " %s (%s–%s) |", kops(rw.OpsPerSec), kops(rw.OpsPerSecMin), kops(rw.OpsPerSecMax))
		}
		if rw := r.row(nameCeiling, c); rw != nil {
			fmt.Fprintf(&b, " %s |", kops(rw.OpsPerSec))
		} else {
			b.WriteString(" – |")
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Ratios (per-round ratio: median (min–max))\n\n")
	cols := [][2]string{
		{nameRespire, nameRueidis}, {nameRespire, nameGoRedis}, {nameRespire, nameCeiling},
		{nameRueidis, nameCeiling}, {nameGoRedis, nameCeiling},
		{nameRespireEnabled, nameRespire}, {nameRespireDisabled, nameRespire},
	}
	b.WriteString("| op | value | goroutines |")
	for _, p := range cols {
		fmt.Fprintf(&b, " %s / %s |", shortName(p[0]), shortName(p[1]))
	}
	b.WriteString("\n|---|---|---:|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, c := range r.cells {
		fmt.Fprintf(&b, "| %s | %s | %d |", strings.ToUpper(c.Op), sizeName(c.ValueBytes), c.Concurrency)
		for _, p := range cols {
			rt, ok := r.Ratios[ratioName(p[0], p[1], c)]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.2f (%.2f–%.2f) |", rt.Median, rt.Min, rt.Max)
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## Goals\n\n| goal | met | worst cell (median ratio) |\n|---|---|---|\n")
	for _, g := range r.Goals {
		worst := ""
		var wv float64
		for i, gc := range g.Cells {
			dist := gc.Median - g.Threshold
			if g.Ratio == nameRespireEnabled+"/"+nameRespire {
				dist = (1 - g.Threshold) - abs(gc.Median-1) // distance to the edge of the band
			}
			if i == 0 || dist < wv {
				wv, worst = dist, fmt.Sprintf("%s: %.3f", gc.Ratio, gc.Median)
			}
		}
		met := "no"
		if g.Met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", g.Goal, met, worst)
	}

	b.WriteString("\n## Serial latency (1 goroutine)\n\n| op | value | client | mean ns/op | p50 ns | p99 ns | allocs/op | B/op |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, c := range r.cells {
		if c.Concurrency != 1 || c.Op == opMix {
			continue
		}
		for _, name := range r.clients {
			rw := r.row(name, c)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", strings.ToUpper(c.Op), sizeName(c.ValueBytes), name,
				fp(rw.NsPerOp, "%.0f"), fp(rw.P50Ns, "%.0f"), fp(rw.P99Ns, "%.0f"), fp(rw.AllocsPerOp, "%.2f"), fp(rw.BytesPerOp, "%.0f"))
		}
	}

	b.WriteString("\n## Cost per operation (medians over rounds)\n\n")
	b.WriteString("Allocations are whole-process deltas; CPU is user+system; system calls count read and write calls only; context switches are this process's.\n\n")
	b.WriteString("| op | value | goroutines | client | allocs/op | B/op | client CPU µs/op | server CPU µs/op | client reads/op | client writes/op | server reads/op | server writes/op | ctx switches/op | GC/s | others' load (cores) |\n")
	b.WriteString("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.cells {
		for _, name := range r.clients {
			rw := r.row(name, c)
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				strings.ToUpper(c.Op), sizeName(c.ValueBytes), c.Concurrency, name,
				fp(rw.AllocsPerOp, "%.2f"), fp(rw.BytesPerOp, "%.0f"), fp(rw.ClientCPUUsPerOp, "%.2f"), fp(rw.ServerCPUUsPerOp, "%.2f"),
				fp(rw.ClientReadsPerOp, "%.3f"), fp(rw.ClientWritesPerOp, "%.3f"), fp(rw.ServerReadsPerOp, "%.3f"), fp(rw.ServerWritesPerOp, "%.3f"),
				fp(rw.CtxSwitchesPerOp, "%.3f"), fp(rw.GCsPerSecond, "%.1f"), fp(rw.ForeignCores, "%.2f"))
		}
	}

	b.WriteString("\n## Ceiling (redis-benchmark)\n\n| op | value | ops/s median (min–max) | server CPU µs/op | server reads/op | server writes/op |\n|---|---|---:|---:|---:|---:|\n")
	for _, rw := range r.Rows {
		if rw.Client != nameCeiling {
			continue
		}
		op := strings.ToUpper(rw.Op)
		if rw.Derived != "" {
			op += " (derived)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s–%s) | %s | %s | %s |\n", op, sizeName(rw.ValueBytes),
			kops(rw.OpsPerSec), kops(rw.OpsPerSecMin), kops(rw.OpsPerSecMax), fp(rw.ServerCPUUsPerOp, "%.2f"),
			fp(rw.ServerReadsPerOp, "%.3f"), fp(rw.ServerWritesPerOp, "%.3f"))
	}
	return b.String()
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
