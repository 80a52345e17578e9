package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

var clientColors = map[string]string{
	nameRespire:         "#d62728",
	nameRespireDisabled: "#ff9896",
	nameRespireEnabled:  "#8c2d04",
	nameGoRedis:         "#1f77b4",
	nameRueidis:         "#2ca02c",
	nameCeiling:         "#555555",
}

// panel is one chart of the SVG: an operation, and in the pipeline
// scenario a batch size.
type panel struct {
	op    string
	batch int
}

func (p panel) title() string {
	if p.batch > 0 {
		return fmt.Sprintf("%s, batches of %d", strings.ToUpper(p.op), p.batch)
	}
	return strings.ToUpper(p.op)
}

// svg draws throughput against concurrency: one panel per operation (and
// batch size) at the small value size, one line per client, the ceiling
// dashed. Pipeline panels plot members (commands) per second.
func (r *results) svg() string {
	var panels []panel
	var concs []int
	size := 0
	for _, c := range r.cells {
		if size == 0 {
			size = c.ValueBytes
		}
		if c.ValueBytes != size {
			continue
		}
		if p := (panel{c.Op, c.Batch}); !slices.Contains(panels, p) {
			panels = append(panels, p)
		}
		if !containsInt(concs, c.Concurrency) {
			concs = append(concs, c.Concurrency)
		}
	}
	// rate is what the chart plots: operations, or members, per second.
	rate := func(rw *row) (median, lo, hi float64) {
		if rw.MembersPerSec != nil {
			return *rw.MembersPerSec, *rw.MembersPerSecMin, *rw.MembersPerSecMax
		}
		return rw.OpsPerSec, rw.OpsPerSecMin, rw.OpsPerSecMax
	}
	const (
		panelW, panelH = 300.0, 260.0
		left, top      = 70.0, 70.0
		gap            = 40.0
		bottom         = 60.0
	)
	width := left + float64(len(panels))*(panelW+gap)
	height := top + panelH + bottom
	if r.cluster != nil {
		width = max(width, 1080) // room for the longer title and the legend over two panels
	}
	ymax := 0.0
	for i := range r.Rows {
		if rw := &r.Rows[i]; rw.ValueBytes == size {
			_, _, hi := rate(rw)
			ymax = max(ymax, hi)
		}
	}
	step := niceStep(ymax / 5)
	ymax = math.Ceil(ymax/step) * step

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := fmt.Sprintf("Throughput against concurrency, %s values (median of %d rounds; bars: min–max)", sizeName(size), r.rounds)
	if r.cluster != nil {
		title = fmt.Sprintf("Redis Cluster, %d primaries, random keys: throughput against concurrency, %s values (median of %d rounds; bars: min–max)", len(r.cluster.primaries), sizeName(size), r.rounds)
	}
	if len(r.batches) > 0 {
		title = fmt.Sprintf("Pipelines: members per second against concurrency, %s values (median of %d rounds; bars: min–max)", sizeName(size), r.rounds)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", left, title)
	// Legend.
	lx := left
	for _, name := range append(append([]string(nil), r.clients...), nameCeiling) {
		dash := ""
		label := shortName(name)
		if name == nameCeiling {
			dash = ` stroke-dasharray="6,4"`
			label = fmt.Sprintf("redis-benchmark -P %d (ceiling)", r.ceilCfg.Pipeline)
			if r.cluster != nil {
				label = fmt.Sprintf("redis-benchmark --cluster -P %d (ceiling)", r.ceilCfg.Pipeline)
			}
			if len(r.batches) > 0 {
				label = fmt.Sprintf("redis-benchmark -P %d -c %d (reference)", r.ceilCfg.Pipeline, r.ceilCfg.Clients)
			}
		}
		fmt.Fprintf(&b, `<line x1="%.0f" y1="40" x2="%.0f" y2="40" stroke="%s" stroke-width="3"%s/>`, lx, lx+20, clientColors[name], dash)
		fmt.Fprintf(&b, `<text x="%.0f" y="44">%s</text>`+"\n", lx+25, label)
		lx += 30 + 7*float64(len(label))
	}
	for pi, pn := range panels {
		op := pn.op
		x0 := left + float64(pi)*(panelW+gap)
		y0 := top
		xAt := func(i int) float64 {
			if len(concs) == 1 {
				return x0 + panelW/2
			}
			return x0 + 20 + float64(i)*(panelW-40)/float64(len(concs)-1)
		}
		yAt := func(v float64) float64 { return y0 + panelH - v/ymax*panelH }
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, panelW, panelH)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+panelW/2, y0-8, pn.title())
		for v := 0.0; v <= ymax+step/2; v += step {
			y := yAt(v)
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/>`, x0, y, x0+panelW, y)
			if pi == 0 {
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, x0-6, y+4, kops(v))
			}
			b.WriteString("\n")
		}
		for i, n := range concs {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", xAt(i), y0+panelH+16, n)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">goroutines</text>`+"\n", x0+panelW/2, y0+panelH+34)
		if ceil := r.row(nameCeiling, cell{Op: op, ValueBytes: size}); ceil != nil {
			y := yAt(ceil.OpsPerSec)
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="6,4"/>`, x0, y, x0+panelW, y, clientColors[nameCeiling])
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="%s">%s</text>`+"\n", x0+panelW-4, y-4, clientColors[nameCeiling], kops(ceil.OpsPerSec))
		}
		for _, name := range r.clients {
			var pts []string
			for i, n := range concs {
				rw := r.row(name, cell{Op: op, Concurrency: n, ValueBytes: size, Batch: pn.batch})
				if rw == nil {
					continue
				}
				x := xAt(i)
				m, lo, hi := rate(rw)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, yAt(m)))
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, x, yAt(lo), x, yAt(hi), clientColors[name])
				what, unit := op, "ops/s"
				if pn.batch > 0 {
					what, unit = fmt.Sprintf("%s b=%d", op, pn.batch), fmt.Sprintf("members/s (%.0f batches/s)", rw.OpsPerSec)
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s c=%d: %.0f %s</title></circle>`+"\n", x, yAt(m), clientColors[name], name, what, n, m, unit)
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), clientColors[name])
		}
	}
	yLabel := "operations per second"
	if len(r.batches) > 0 {
		yLabel = "members (commands) per second"
	}
	fmt.Fprintf(&b, `<text x="14" y="%.0f" transform="rotate(-90 14 %.0f)" text-anchor="middle">%s</text>`+"\n", top+panelH/2, top+panelH/2, yLabel)
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
