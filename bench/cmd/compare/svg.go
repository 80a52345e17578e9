package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// clientStyle is how one client is drawn. Colour, marker and dash pattern
// each tell the clients apart, so the chart also reads in greyscale.
type clientStyle struct {
	color  string
	marker string // circle, square, triangle, invtriangle, diamond or cross
	dash   string // stroke-dasharray; empty for a solid line
}

// clientStyles fixes each known client's style, so that it is the same in
// every chart.
var clientStyles = map[string]clientStyle{
	nameRespire:         {"#d62728", "circle", ""},
	nameRespireDisabled: {"#ff7f0e", "square", "8,3"},
	nameRespireEnabled:  {"#8c2d04", "triangle", "3,3"},
	nameRespireObserved: {"#7f7f7f", "invtriangle", "1,2"},
	nameGoRedis:         {"#1f77b4", "diamond", "10,3,2,3"},
	nameRueidis:         {"#2ca02c", "cross", "1,3"},
}

// spareStyles are for clients without a fixed style, taken in turn.
var spareStyles = []clientStyle{
	{"#9467bd", "circle", "6,2,1,2"},
	{"#8c564b", "square", "12,4"},
	{"#e377c2", "triangle", "2,5"},
	{"#17becf", "diamond", "5,2,5,6"},
}

const (
	ceilingColor = "#555555"
	ceilingDash  = "12,6"
)

// styles returns the style of each of r's clients.
func (r *results) styles() map[string]clientStyle {
	m := map[string]clientStyle{}
	spare := 0
	for _, name := range r.clients {
		if s, ok := clientStyles[name]; ok {
			m[name] = s
			continue
		}
		m[name] = spareStyles[spare%len(spareStyles)]
		spare++
	}
	return m
}

// panelRow is one row of panels: a value size, and in the pipeline
// scenario a batch size.
type panelRow struct {
	size  int
	batch int
}

// panelTitle names the panel of op in pr.
func panelTitle(op string, pr panelRow) string {
	t := fmt.Sprintf("%s, %s values", strings.ToUpper(op), sizeName(pr.size))
	if pr.batch > 0 {
		t += fmt.Sprintf(", batches of %d", pr.batch)
	}
	return t
}

// rate is what the chart plots for rw: operations per second, or members
// per second in the pipeline scenario; median, minimum and maximum.
func rate(rw *row) (median, lo, hi float64) {
	if rw.MembersPerSec != nil {
		return *rw.MembersPerSec, *rw.MembersPerSecMin, *rw.MembersPerSecMax
	}
	return rw.OpsPerSec, rw.OpsPerSecMin, rw.OpsPerSecMax
}

// svg draws throughput against concurrency as a grid of panels: one
// column per operation, one row per value size (and batch size), so that
// every measured cell appears. Every panel shares one logarithmic y axis
// fitted to the data; the x axis is the goroutine counts, evenly spaced.
// Each client is a line with its own colour, marker and dash, with
// min–max whiskers; the ceiling is a grey dashed line. Pipeline panels
// plot members (commands) per second.
func (r *results) svg() string {
	var ops []string
	var prows []panelRow
	var concs []int
	has := map[string]bool{} // op and panel row that hold a cell
	for _, c := range r.cells {
		pr := panelRow{c.ValueBytes, c.Batch}
		if !slices.Contains(ops, c.Op) {
			ops = append(ops, c.Op)
		}
		if !slices.Contains(prows, pr) {
			prows = append(prows, pr)
		}
		if !slices.Contains(concs, c.Concurrency) {
			concs = append(concs, c.Concurrency)
		}
		has[fmt.Sprint(c.Op, pr)] = true
	}
	slices.Sort(concs)
	styles := r.styles()

	// The y axis covers every median, whisker and ceiling drawn.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range r.cells {
		for _, name := range r.clients {
			if rw := r.row(name, c); rw != nil {
				_, l, h := rate(rw)
				lo, hi = min(lo, l), max(hi, h)
			}
		}
		if ceil := r.row(nameCeiling, c); ceil != nil {
			lo, hi = min(lo, ceil.OpsPerSec), max(hi, ceil.OpsPerSec)
		}
	}
	axis := fitLogAxis(lo, hi)

	const (
		panelW, panelH = 300.0, 220.0
		left           = 80.0
		gapX           = 40.0
		right          = 20.0
		rowGap         = 80.0 // below a panel: ticks, axis label, next title
	)
	title := "Throughput against concurrency"
	if r.cluster != nil {
		title = fmt.Sprintf("Redis Cluster, %d primaries, random keys: throughput against concurrency", len(r.cluster.primaries))
	}
	if len(r.batches) > 0 {
		title = "Pipelines: members per second against concurrency"
	}
	subtitle := fmt.Sprintf("Median of %d rounds, bars min–max; log y axis shared by all panels; markers nudged apart", r.rounds)
	width := left + float64(len(ops))*panelW + float64(len(ops)-1)*gapX + right
	width = max(width, left+textWidth(title, 8.5)+right, left+textWidth(subtitle, 6.2)+right)

	// Legend entries, wrapped to the width.
	type entry struct {
		name, label string
		style       clientStyle
	}
	var entries []entry
	for _, name := range r.clients {
		entries = append(entries, entry{name, shortName(name), styles[name]})
	}
	if r.hasCeiling() {
		label := fmt.Sprintf("redis-benchmark -P %d (ceiling)", r.ceilCfg.Pipeline)
		if r.cluster != nil {
			label = fmt.Sprintf("redis-benchmark --cluster -P %d (ceiling)", r.ceilCfg.Pipeline)
		}
		if len(r.batches) > 0 {
			label = fmt.Sprintf("redis-benchmark -P %d -c %d (reference)", r.ceilCfg.Pipeline, r.ceilCfg.Clients)
		}
		entries = append(entries, entry{nameCeiling, label, clientStyle{color: ceilingColor, dash: ceilingDash}})
	}
	var legend strings.Builder
	lx, ly := left, 66.0
	for _, e := range entries {
		w := 44 + textWidth(e.label, 6.2) + 20
		if lx > left && lx+w > width-right {
			lx, ly = left, ly+20
		}
		fmt.Fprintf(&legend, `<g class="legend" data-client="%s" data-color="%s" data-marker="%s" data-dash="%s">`, esc(e.name), e.style.color, e.style.marker, e.style.dash)
		fmt.Fprintf(&legend, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`, lx, ly, lx+36, ly, e.style.color, dashAttr(e.style.dash))
		if e.style.marker != "" {
			writeMarker(&legend, e.style, lx+18, ly)
		}
		fmt.Fprintf(&legend, `<text x="%.0f" y="%.0f">%s</text></g>`+"\n", lx+44, ly+4, esc(e.label))
		lx += w
	}
	top := ly + 50
	height := top + float64(len(prows))*(panelH+rowGap) - rowGap + 50

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12" data-y-min="%g" data-y-max="%g">`+"\n",
		width, height, width, height, axis.lo, axis.hi)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, esc(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="42" fill="#444">%s</text>`+"\n", left, esc(subtitle))
	b.WriteString(legend.String())

	yLabel := "operations per second"
	if len(r.batches) > 0 {
		yLabel = "members (commands) per second"
	}
	for ri, pr := range prows {
		y0 := top + float64(ri)*(panelH+rowGap)
		yAt := func(v float64) float64 { return y0 + panelH*(1-axis.frac(v)) }
		labelled := false
		for oi, op := range ops {
			if !has[fmt.Sprint(op, pr)] {
				continue
			}
			x0 := left + float64(oi)*(panelW+gapX)
			xAt := func(i int) float64 {
				if len(concs) == 1 {
					return x0 + panelW/2
				}
				return x0 + 30 + float64(i)*(panelW-60)/float64(len(concs)-1)
			}
			fmt.Fprintf(&b, `<g class="panel" data-op="%s" data-value-bytes="%d" data-batch="%d">`+"\n", esc(op), pr.size, pr.batch)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, panelW, panelH)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+panelW/2, y0-8, esc(panelTitle(op, pr)))
			for _, v := range axis.ticks() {
				y := yAt(v)
				fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e4e4e4"/>`, x0, y, x0+panelW, y)
				if !labelled {
					fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, x0-6, y+4, siLabel(v))
				}
				b.WriteString("\n")
			}
			for i, n := range concs {
				if !r.measured(cell{Op: op, Concurrency: n, ValueBytes: pr.size, Batch: pr.batch}) {
					x, y := xAt(i)+4, y0+panelH/2
					fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" transform="rotate(-90 %.1f %.0f)" text-anchor="middle" font-size="11" fill="#999">not measured</text>`+"\n", x, y, x, y)
				}
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#999"/>`, xAt(i), y0+panelH, xAt(i), y0+panelH+4)
				fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", xAt(i), y0+panelH+17, n)
			}
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">goroutines</text>`+"\n", x0+panelW/2, y0+panelH+34)
			if ceil := r.row(nameCeiling, cell{Op: op, ValueBytes: pr.size}); ceil != nil {
				y := yAt(ceil.OpsPerSec)
				fmt.Fprintf(&b, `<line class="ceiling" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-width="1.5"%s><title>%s %s %s: %.0f ops/s</title></line>`+"\n",
					x0, y, x0+panelW, y, ceilingColor, dashAttr(ceilingDash), nameCeiling, op, sizeName(pr.size), ceil.OpsPerSec)
				word := "ceiling"
				if len(r.batches) > 0 {
					word = "reference"
				}
				ty := y - 4 // above the line, unless that leaves the panel
				if y-y0 < 16 {
					ty = y + 14
				}
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="%s">%s %s</text>`+"\n", x0+4, ty, ceilingColor, word, kops(ceil.OpsPerSec))
			}
			for ci, name := range r.clients {
				st := styles[name]
				nudge := (float64(ci) - float64(len(r.clients)-1)/2) * 6
				var pts []string
				var marks strings.Builder
				for i, n := range concs {
					c := cell{Op: op, Concurrency: n, ValueBytes: pr.size, Batch: pr.batch}
					rw := r.row(name, c)
					if rw == nil {
						continue
					}
					x := xAt(i) + nudge
					m, l, h := rate(rw)
					y := yAt(m)
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
					unit := "ops/s"
					if pr.batch > 0 {
						unit = fmt.Sprintf("members/s (%.0f batches/s)", rw.OpsPerSec)
					}
					fmt.Fprintf(&marks, `<g class="point" data-client="%s" data-op="%s" data-goroutines="%d" data-value-bytes="%d" data-batch="%d" data-rate="%.0f">`,
						esc(name), esc(op), n, pr.size, pr.batch, m)
					fmt.Fprintf(&marks, `<title>%s: %.0f %s (min %.0f, max %.0f)</title>`, esc(shortName(name)+" "+c.String()), m, unit, l, h)
					if h > l {
						fmt.Fprintf(&marks, `<path d="M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6" stroke="%s" fill="none"/>`,
							x, yAt(l), yAt(h), x-3, yAt(l), x-3, yAt(h), st.color)
					}
					writeMarker(&marks, st, x, y)
					marks.WriteString("</g>\n")
				}
				if len(pts) > 1 {
					fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-linecap="round"%s/>`+"\n", strings.Join(pts, " "), st.color, dashAttr(st.dash))
				}
				b.WriteString(marks.String())
			}
			b.WriteString("</g>\n")
			labelled = true
		}
		fmt.Fprintf(&b, `<text x="16" y="%.0f" transform="rotate(-90 16 %.0f)" text-anchor="middle">%s</text>`+"\n", y0+panelH/2, y0+panelH/2, yLabel)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// measured reports whether c is one of r's cells.
func (r *results) measured(c cell) bool { return slices.Contains(r.cells, c) }

// hasCeiling reports whether r holds a ceiling row.
func (r *results) hasCeiling() bool {
	return slices.ContainsFunc(r.Rows, func(rw row) bool { return rw.Client == nameCeiling })
}

// writeMarker draws st's marker centred on x, y.
func writeMarker(b *strings.Builder, st clientStyle, x, y float64) {
	switch st.marker {
	case "square":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/>`, x-4, y-4, st.color)
	case "triangle":
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>`, x, y-5.5, x+5, y+3.5, x-5, y+3.5, st.color)
	case "invtriangle":
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>`, x, y+5.5, x+5, y-3.5, x-5, y-3.5, st.color)
	case "diamond":
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>`, x, y-5.5, x+5, y, x, y+5.5, x-5, y, st.color)
	case "cross":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" stroke-width="2.5"/>`, x-4, y-4, x+4, y+4, x-4, y+4, x+4, y-4, st.color)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s"/>`, x, y, st.color)
	}
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dash)
}

func esc(s string) string { return html.EscapeString(s) }

// textWidth estimates the width of s drawn at perChar pixels a character.
func textWidth(s string, perChar float64) float64 {
	return float64(len([]rune(s))) * perChar
}

// logAxis is a logarithmic axis from lo to hi.
type logAxis struct{ lo, hi float64 }

// fitLogAxis returns an axis that holds lo to hi with a little room at
// either end.
func fitLogAxis(lo, hi float64) logAxis {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo <= 0 {
		lo, hi = 1, 10
	}
	if hi <= lo {
		lo, hi = lo/2, hi*2
	}
	pad := 0.06 * (math.Log10(hi) - math.Log10(lo))
	return logAxis{math.Pow(10, math.Log10(lo)-pad), math.Pow(10, math.Log10(hi)+pad)}
}

// frac is where v falls on the axis, from 0 at lo to 1 at hi.
func (a logAxis) frac(v float64) float64 {
	return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
}

// ticks returns the 1-2-5 values within the axis, or every integer
// multiple of a power of ten if that gives fewer than three.
func (a logAxis) ticks() []float64 {
	ts := a.ticksAt(1, 2, 5)
	if len(ts) < 3 {
		ts = a.ticksAt(1, 2, 3, 4, 5, 6, 7, 8, 9)
	}
	return ts
}

func (a logAxis) ticksAt(mantissas ...float64) []float64 {
	var ts []float64
	for e := math.Floor(math.Log10(a.lo)); e <= math.Ceil(math.Log10(a.hi)); e++ {
		for _, m := range mantissas {
			if v := m * math.Pow(10, e); v >= a.lo && v <= a.hi {
				ts = append(ts, v)
			}
		}
	}
	return ts
}

// siLabel writes v with a k or M suffix: 20k, 1.5M.
func siLabel(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "M"
	case v >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

func trimFloat(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}
