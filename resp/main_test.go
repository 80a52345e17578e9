package resp

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Helpers shared by the test files.

func bulk(s string) Value   { return Value{Type: BulkString, Str: []byte(s)} }
func simple(s string) Value { return Value{Type: SimpleString, Str: []byte(s)} }
func integer(n int64) Value { return Value{Type: Integer, Int: n} }
func double(f float64) Value {
	return Value{Type: Double, Float: f}
}
func agg(t Type, elems ...Value) Value { return Value{Type: t, Elems: elems} }

// withAttrs returns v described by an attribute map of the given pairs.
func withAttrs(v Value, pairs ...Value) Value {
	a := agg(Attribute, pairs...)
	v.Attrs = &a
	return v
}

// same reports whether a and b are Equal and carry equal attributes at
// every level, which Equal ignores.
func same(a, b Value) bool {
	if !a.Equal(b) || (a.Attrs == nil) != (b.Attrs == nil) {
		return false
	}
	if a.Attrs != nil && !same(*a.Attrs, *b.Attrs) {
		return false
	}
	for i := range a.Elems {
		if !same(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}

// show renders v for failure messages.
func show(v Value) string {
	s := v.Type.String()
	switch {
	case v.Type.Aggregate():
		s += fmt.Sprintf("%d[", len(v.Elems))
		for i, e := range v.Elems {
			if i > 0 {
				s += " "
			}
			s += show(e)
		}
		s += "]"
	case v.Type == Integer || v.Type == Boolean:
		s += " " + strconv.FormatInt(v.Int, 10)
	case v.Type == Double:
		s += " " + strconv.FormatFloat(v.Float, 'g', -1, 64)
	case v.Type != Null:
		s += " " + strconv.Quote(string(v.Str))
	}
	if v.Attrs != nil {
		s = "|" + show(*v.Attrs) + "| " + s
	}
	return s
}

// chunkReader delivers its input in chunks of random size up to max; with
// deadlines, about every other read fails with os.ErrDeadlineExceeded
// instead, as a connection's read deadline does.
type chunkReader struct {
	data      []byte
	rnd       *rand.Rand
	max       int
	deadlines bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	if c.deadlines && c.rnd.IntN(2) == 0 {
		return 0, fmt.Errorf("read: %w", os.ErrDeadlineExceeded)
	}
	n := min(len(p), len(c.data), 1+c.rnd.IntN(c.max))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func newChunkReader(data []byte, seed uint64, max int) *chunkReader {
	return &chunkReader{data: data, rnd: rand.New(rand.NewPCG(seed, 7)), max: max}
}

// loopReader repeats its input forever.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m := copy(p[n:], l.data[l.off:])
		n += m
		l.off = (l.off + m) % len(l.data)
	}
	return n, nil
}

// allocated returns the bytes allocated on the heap while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
