package main

import (
	"fmt"
	"slices"
	"strings"
)

// shortName is a client's column heading.
func shortName(client string) string {
	switch client {
	case nameRespireDisabled:
		return "respire (retry disabled)"
	case nameRespireEnabled:
		return "respire (retry enabled)"
	case nameRespireObserved:
		return "respire (retry and metrics enabled)"
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

// row returns client's row of c; the ceiling has one row per operation
// and value size, whatever the concurrency and batch.
func (r *results) row(client string, c cell) *row {
	for i := range r.Rows {
		rw := &r.Rows[i]
		if rw.Client == client && rw.Op == c.Op && rw.ValueBytes == c.ValueBytes &&
			((rw.Concurrency == c.Concurrency && rw.Batch == c.Batch) || client == nameCeiling) {
			return rw
		}
	}
	return nil
}

// cellHead and cellCols are the leading columns of a table by cell: a
// batch column in the pipeline scenario.
func (r *results) cellHead() (head, align string) {
	if len(r.batches) > 0 {
		return "| op | value | batch | goroutines |", "|---|---|---:|---:|"
	}
	return "| op | value | goroutines |", "|---|---|---:|"
}

func (r *results) cellCols(c cell) string {
	if len(r.batches) > 0 {
		return fmt.Sprintf("| %s | %s | %d | %d |", strings.ToUpper(c.Op), sizeName(c.ValueBytes), c.Batch, c.Concurrency)
	}
	return fmt.Sprintf("| %s | %s | %d |", strings.ToUpper(c.Op), sizeName(c.ValueBytes), c.Concurrency)
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
	} else if len(r.batches) > 0 {
		fmt.Fprintf(&b, "# respire benchmark results: pipelines\n\n")
		fmt.Fprintf(&b, "Every operation is one batch of %s members, all GET or all SET, sent with the client's batching API: respire `Batch` (Get/Set, Execute, every Future read, Reset; one Batch per goroutine), go-redis `Pipelined`, rueidis `DoMulti`. "+
			"Each goroutine takes the next keys of its walk over the keyspace. \"ops\" are batches: throughput is in batches and in members (commands) per second, and every cost per operation is per batch. "+
			"Ratios compare members per second with each other and with the commands per second of redis-benchmark -P %d -c %d (the \"ceiling\" of the other scenarios, here a reference only: batches deeper than %[2]d can pass it); errors count failed members.\n\n", joinInts(r.batches, " or "), r.ceilCfg.Pipeline, r.ceilCfg.Clients)
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

	head, align := r.cellHead()
	if len(r.batches) > 0 {
		b.WriteString("## Throughput (batches per second)\n\n" + head)
		for _, c := range r.clients {
			fmt.Fprintf(&b, " %s |", shortName(c))
		}
		b.WriteString("\n" + align + strings.Repeat("---:|", len(r.clients)) + "\n")
		for _, c := range r.cells {
			b.WriteString(r.cellCols(c))
			for _, name := range r.clients {
				rw := r.row(name, c)
				fmt.Fprintf(&b, " %s (%s–%s) |", kops(rw.OpsPerSec), kops(rw.OpsPerSecMin), kops(rw.OpsPerSecMax))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n## Throughput (members per second)\n\n")
	} else {
		b.WriteString("## Throughput (operations per second)\n\n")
	}
	b.WriteString(head)
	for _, c := range r.clients {
		fmt.Fprintf(&b, " %s |", shortName(c))
	}
	if len(r.batches) > 0 {
		fmt.Fprintf(&b, " redis-benchmark -P %d |\n"+align, r.ceilCfg.Pipeline)
	} else {
		b.WriteString(" ceiling |\n" + align)
	}
	for range r.clients {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	for _, c := range r.cells {
		b.WriteString(r.cellCols(c))
		for _, name := range r.clients {
			rw := r.row(name, c)
			if rw.MembersPerSec != nil {
				fmt.Fprintf(&b, " %s (%s–%s) |", kops(*rw.MembersPerSec), kops(*rw.MembersPerSecMin), kops(*rw.MembersPerSecMax))
			} else {
				fmt.Fprintf(&b, " %s (%s–%s) |", kops(rw.OpsPerSec), kops(rw.OpsPerSecMin), kops(rw.OpsPerSecMax))
			}
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
		{nameRespireEnabled, nameRespire}, {nameRespireObserved, nameRespire}, {nameRespireDisabled, nameRespire},
	}
	if len(r.batches) > 0 {
		// Only the pairs of clients that ran, and rueidis / go-redis.
		var kept [][2]string
		for _, p := range append(cols, [2]string{nameRueidis, nameGoRedis}) {
			if (contains(r.clients, p[0]) || p[0] == nameCeiling) && (contains(r.clients, p[1]) || p[1] == nameCeiling) {
				kept = append(kept, p)
			}
		}
		cols = kept
	}
	b.WriteString(head)
	for _, p := range cols {
		fmt.Fprintf(&b, " %s / %s |", shortName(p[0]), shortName(p[1]))
	}
	b.WriteString("\n" + align + strings.Repeat("---:|", len(cols)) + "\n")
	for _, c := range r.cells {
		b.WriteString(r.cellCols(c))
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

	if len(r.Goals) > 0 {
		b.WriteString("\n## Goals\n\n| goal | met | cells met | worst cell (median; bound) |\n|---|---|---|---|\n")
	}
	for _, g := range r.Goals {
		worst, n := "", 0
		var wv float64
		for i, gc := range g.Cells {
			if gc.Met {
				n++
			}
			if i == 0 || gc.Slack < wv {
				wv, worst = gc.Slack, fmt.Sprintf("%s: %.3f; %.3f", gc.Ratio, gc.Median, gc.Bound)
			}
		}
		met := "no"
		if g.Met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %s |\n", g.Goal, met, n, len(g.Cells), worst)
	}

	per := "op"
	if len(r.batches) > 0 {
		per = "batch"
	}
	serial := slices.ContainsFunc(r.cells, isSerial)
	switch {
	case !serial: // the Cluster scenario has no serial cell: no empty table
	case len(r.batches) > 0:
		b.WriteString("\n## Serial latency (1 goroutine, per batch)\n\n| op | value | batch | client | mean ns/batch | p50 ns | p99 ns | allocs/batch | B/batch |\n|---|---|---:|---|---:|---:|---:|---:|---:|\n")
	default:
		b.WriteString("\n## Serial latency (1 goroutine)\n\n| op | value | client | mean ns/op | p50 ns | p99 ns | allocs/op | B/op |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	}
	for _, c := range r.cells {
		if !isSerial(c) {
			continue
		}
		for _, name := range r.clients {
			rw := r.row(name, c)
			batch := ""
			if len(r.batches) > 0 {
				batch = fmt.Sprintf(" %d |", c.Batch)
			}
			fmt.Fprintf(&b, "| %s | %s |%s %s | %s | %s | %s | %s | %s |\n", strings.ToUpper(c.Op), sizeName(c.ValueBytes), batch, name,
				fp(rw.NsPerOp, "%.0f"), fp(rw.P50Ns, "%.0f"), fp(rw.P99Ns, "%.0f"), fp(rw.AllocsPerOp, "%.2f"), fp(rw.BytesPerOp, "%.0f"))
		}
	}

	if len(r.batches) > 0 {
		b.WriteString("\n## Cost per batch (medians over rounds)\n\n")
	} else {
		b.WriteString("\n## Cost per operation (medians over rounds)\n\n")
	}
	b.WriteString("Allocations are whole-process deltas; CPU is user+system; system calls count read and write calls only; context switches are this process's. Idle is the machine's idle CPU; run-queue wait is how many of the client's threads were, on average, runnable but waiting for a CPU (/proc/self/task/*/schedstat).\n\n")
	fmt.Fprintf(&b, "%s client | allocs/%[2]s | B/%[2]s | client CPU µs/%[2]s | server CPU µs/%[2]s | client reads/%[2]s | client writes/%[2]s | server reads/%[2]s | server writes/%[2]s | ctx switches/%[2]s | GC/s | others' load (cores) | idle (cores) | client run-queue wait (threads) |\n", head, per)
	b.WriteString(align + "---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.cells {
		for _, name := range r.clients {
			rw := r.row(name, c)
			fmt.Fprintf(&b, "%s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				r.cellCols(c), name,
				fp(rw.AllocsPerOp, "%.2f"), fp(rw.BytesPerOp, "%.0f"), fp(rw.ClientCPUUsPerOp, "%.2f"), fp(rw.ServerCPUUsPerOp, "%.2f"),
				fp(rw.ClientReadsPerOp, "%.3f"), fp(rw.ClientWritesPerOp, "%.3f"), fp(rw.ServerReadsPerOp, "%.3f"), fp(rw.ServerWritesPerOp, "%.3f"),
				fp(rw.CtxSwitchesPerOp, "%.3f"), fp(rw.GCsPerSecond, "%.1f"), fp(rw.ForeignCores, "%.2f"),
				fp(rw.IdleCores, "%.2f"), fp(rw.RunqueueCores, "%.2f"))
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

// isSerial reports whether c is a cell of the serial latency table: one
// goroutine, a single operation kind.
func isSerial(c cell) bool { return c.Concurrency == 1 && c.Op != opMix }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// joinInts joins ns with sep ("10 or 100").
func joinInts(ns []int, sep string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, sep)
}
