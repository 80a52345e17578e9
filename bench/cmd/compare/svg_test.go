package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// chartFiles are the results the committed charts are drawn from.
var chartFiles = []string{"latest", "pipeline", "cluster"}

// loadResults rebuilds from a results JSON file the state svg draws from.
func loadResults(t *testing.T, path string) *results {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Meta   meta             `json:"meta"`
		Rows   []row            `json:"rows"`
		Ratios map[string]ratio `json:"ratios"`
		Goals  []goal           `json:"goals"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := &results{meta: file.Meta, Rows: file.Rows, Ratios: file.Ratios, Goals: file.Goals}
	if n, ok := file.Meta.Method["rounds"].(float64); ok {
		r.rounds = int(n)
	}
	if ci, ok := file.Meta.Method["cluster"].(map[string]any); ok {
		r.cluster = &clusterInfo{}
		ps, _ := ci["primaries"].([]any)
		for _, p := range ps {
			r.cluster.primaries = append(r.cluster.primaries, fmt.Sprint(p))
		}
	}
	for _, rw := range file.Rows {
		if rw.Client == nameCeiling {
			r.ceilCfg.Pipeline, r.ceilCfg.Clients = rw.Pipeline, rw.Concurrency
			continue
		}
		if !slices.Contains(r.clients, rw.Client) {
			r.clients = append(r.clients, rw.Client)
		}
		c := cell{Op: rw.Op, Concurrency: rw.Concurrency, ValueBytes: rw.ValueBytes, Batch: rw.Batch}
		if !slices.Contains(r.cells, c) {
			r.cells = append(r.cells, c)
		}
		if rw.Batch > 0 && !slices.Contains(r.batches, rw.Batch) {
			r.batches = append(r.batches, rw.Batch)
		}
	}
	return r
}

// element is one start element of an SVG, its attributes by name.
type element struct {
	name  string
	attrs map[string]string
}

// parseSVG checks that s is well-formed XML and returns its elements.
func parseSVG(t *testing.T, s string) []element {
	t.Helper()
	var els []element
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return els
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			e := element{se.Name.Local, map[string]string{}}
			for _, a := range se.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			els = append(els, e)
		}
	}
}

// TestSVG draws each committed results file and checks that every
// measured cell of every client is a point, that the clients' legend
// entries differ in colour and marker, and that the y axis holds every
// value drawn. With UPDATE_SVG=1 it rewrites the committed charts.
func TestSVG(t *testing.T) {
	for _, name := range chartFiles {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "results", name+".json")
			r := loadResults(t, path)
			s := r.svg()
			els := parseSVG(t, s)

			points := map[string]int{}
			legend := map[string]element{}
			var root element
			for _, e := range els {
				switch {
				case e.name == "svg":
					root = e
				case e.attrs["class"] == "point":
					k := fmt.Sprintf("%s %s c=%s v=%s b=%s", e.attrs["data-client"], e.attrs["data-op"],
						e.attrs["data-goroutines"], e.attrs["data-value-bytes"], e.attrs["data-batch"])
					points[k]++
				case e.attrs["class"] == "legend":
					legend[e.attrs["data-client"]] = e
				}
			}

			ymin, err1 := strconv.ParseFloat(root.attrs["data-y-min"], 64)
			ymax, err2 := strconv.ParseFloat(root.attrs["data-y-max"], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("y range %q..%q: %v %v", root.attrs["data-y-min"], root.attrs["data-y-max"], err1, err2)
			}
			want := 0
			for _, rw := range r.Rows {
				_, lo, hi := rate(&rw)
				if rw.Client == nameCeiling {
					lo, hi = rw.OpsPerSec, rw.OpsPerSec
				}
				if lo < ymin || hi > ymax {
					t.Errorf("%s %s c=%d v=%d: %g..%g outside the y axis %g..%g", rw.Client, rw.Op, rw.Concurrency, rw.ValueBytes, lo, hi, ymin, ymax)
				}
				if rw.Client == nameCeiling {
					continue
				}
				want++
				k := fmt.Sprintf("%s %s c=%d v=%d b=%d", rw.Client, rw.Op, rw.Concurrency, rw.ValueBytes, rw.Batch)
				if points[k] != 1 {
					t.Errorf("%s: %d points, want 1", k, points[k])
				}
			}
			if len(points) != want {
				t.Errorf("%d distinct points, want %d", len(points), want)
			}

			if len(r.clients) < 2 {
				t.Fatalf("only %d clients in %s", len(r.clients), path)
			}
			colors, markers, dashes := map[string]string{}, map[string]string{}, map[string]string{}
			for _, c := range r.clients {
				e, ok := legend[c]
				if !ok {
					t.Errorf("no legend entry for %s", c)
					continue
				}
				for attr, seen := range map[string]map[string]string{"data-color": colors, "data-marker": markers, "data-dash": dashes} {
					if other, dup := seen[e.attrs[attr]]; dup {
						t.Errorf("%s and %s share %s %q", other, c, attr, e.attrs[attr])
					}
					seen[e.attrs[attr]] = c
				}
			}
			if slices.ContainsFunc(r.Rows, func(rw row) bool { return rw.Client == nameCeiling }) {
				if _, ok := legend[nameCeiling]; !ok {
					t.Error("no legend entry for the ceiling")
				}
			}

			if os.Getenv("UPDATE_SVG") == "1" {
				out := filepath.Join("..", "..", "results", name+".svg")
				if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestLogAxisTicks(t *testing.T) {
	a := fitLogAxis(9.3e3, 755e3)
	if a.lo >= 9.3e3 || a.hi <= 755e3 {
		t.Fatalf("axis %g..%g does not hold the data", a.lo, a.hi)
	}
	got := a.ticks()
	want := []float64{1e4, 2e4, 5e4, 1e5, 2e5, 5e5}
	if !slices.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	for v, s := range map[float64]string{5e3: "5k", 2e5: "200k", 1e6: "1M", 1.5e6: "1.5M", 500: "500"} {
		if got := siLabel(v); got != s {
			t.Errorf("siLabel(%g) = %q, want %q", v, got, s)
		}
	}
}

// TestMarkdownHasNoEmptyTable proves that the results page of every
// committed run has a serial latency table exactly when the run measured
// one goroutine (the Cluster scenario does not), and that every table it
// writes has rows.
func TestMarkdownHasNoEmptyTable(t *testing.T) {
	for _, name := range chartFiles {
		t.Run(name, func(t *testing.T) {
			r := loadResults(t, filepath.Join("..", "..", "results", name+".json"))
			md := r.markdown()
			if got, want := strings.Contains(md, "## Serial latency"), slices.ContainsFunc(r.cells, isSerial); got != want {
				t.Errorf("serial latency section present %v, want %v (serial cells)", got, want)
			}
			// A table is a header line, an alignment line, then rows.
			lines := strings.Split(md, "\n")
			for i := 0; i+1 < len(lines); i++ {
				if !strings.HasPrefix(lines[i+1], "|---") {
					continue
				}
				if i+2 >= len(lines) || !strings.HasPrefix(lines[i+2], "|") {
					t.Errorf("table %q has no rows", lines[i])
				}
			}
		})
	}
}
