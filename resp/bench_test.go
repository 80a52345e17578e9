package resp

import (
	"strings"
	"testing"
)

// Replies the benchmarks read in a loop; the stream repeats forever, so the
// reader relocates and refills its buffer as it would on a connection.
var benchStreams = []struct {
	name  string
	reply []byte
}{
	{"GET/64B", AppendBulkString(nil, strings.Repeat("v", 64))},
	{"GET/4KiB", AppendBulkString(nil, strings.Repeat("v", 4096))},
	{"MGET/10x64B", mget(10, 64)},
	{"MGET/10x4KiB", mget(10, 4096)},
}

func mget(n, size int) []byte {
	b := AppendArrayHeader(nil, n)
	for range n {
		b = AppendBulkString(b, strings.Repeat("v", size))
	}
	return b
}

func BenchmarkReadValue(b *testing.B) {
	for _, bs := range benchStreams {
		b.Run(bs.name, func(b *testing.B) {
			r := NewReader(&loopReader{data: bs.reply})
			b.SetBytes(int64(len(bs.reply)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.ReadValue(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadCommand(b *testing.B) {
	set := AppendArrayHeader(nil, 3)
	set = AppendBulkString(set, "SET")
	set = AppendBulkString(set, "key:000123")
	set = AppendBulkString(set, strings.Repeat("v", 64))
	for _, bc := range []struct {
		name string
		cmd  []byte
	}{{"array", set}, {"inline", []byte("SET key:000123 value\r\n")}} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewReader(&loopReader{data: bc.cmd})
			args := make([][]byte, 0, 8)
			b.SetBytes(int64(len(bc.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if args, _, err = r.ReadCommand(args[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendSET(b *testing.B) {
	value := []byte(strings.Repeat("v", 64))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendArrayHeader(buf[:0], 3)
		buf = AppendBulkString(buf, "SET")
		buf = AppendBulkString(buf, "key:000123")
		buf = AppendBulk(buf, value)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkAppendValue(b *testing.B) {
	v := agg(Array, bulk("SET"), bulk("key:000123"), bulk(strings.Repeat("v", 64)))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendValue(buf[:0], v, 3)
	}
}

// TestSteadyStateAllocs holds the benchmarks' zero-allocation claim in
// ordinary test runs.
func TestSteadyStateAllocs(t *testing.T) {
	for _, bs := range benchStreams {
		r := NewReader(&loopReader{data: bs.reply})
		read := func() {
			if _, err := r.ReadValue(); err != nil {
				t.Fatal(err)
			}
		}
		for range 2000 { // warm up: buffers, spare and arena reach their sizes
			read()
		}
		if n := testing.AllocsPerRun(2000, read); n != 0 {
			t.Errorf("%s: %v allocations per ReadValue, want 0", bs.name, n)
		}
	}
	r := NewReader(&loopReader{data: []byte("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nGET key\r\n")})
	args := make([][]byte, 0, 4)
	if n := testing.AllocsPerRun(2000, func() { args, _, _ = r.ReadCommand(args[:0]) }); n != 0 {
		t.Errorf("ReadCommand: %v allocations per call, want 0", n)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendArrayHeader(buf[:0], 3)
		buf = AppendBulkString(buf, "SET")
		buf = AppendBulkString(buf, "k")
		buf = AppendBulkInt(buf, 42)
	}); n != 0 {
		t.Errorf("appending a SET: %v allocations, want 0", n)
	}
}
