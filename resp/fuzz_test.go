package resp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

// errClass names the kind of a read error, which must not depend on how
// the input was chunked.
func errClass(err error) string {
	switch {
	case err == nil:
		return "nil"
	case err == io.EOF:
		return "EOF"
	case err == io.ErrUnexpectedEOF:
		return "unexpected EOF"
	case errors.Is(err, ErrProtocol):
		return "protocol"
	}
	return "other: " + err.Error()
}

type readResult struct {
	v   Value
	raw []byte
	err error
}

// readAll reads up to 64 values, cloned, and the error that ended them.
// A read deadline ends nothing: the read is tried again, as its doc allows.
func readAll(rd io.Reader) []readResult {
	r := NewReader(rd)
	var out []readResult
	for len(out) < 64 {
		v, raw, err := r.ReadValueRaw()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return append(out, readResult{err: err})
		}
		out = append(out, readResult{v: v.Clone(), raw: bytes.Clone(raw)})
	}
	return out
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "$5\r\nhello\r\n", "*2\r\n:1\r\n,1.5\r\n", "|1\r\n+a\r\n+b\r\n_\r\n",
		"%1\r\n=5\r\ntxt:x\r\n(-12\r\n", ">1\r\n!3\r\nERR\r\n", "~1\r\n#t\r\n", "$-1\r\n*-1\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := readAll(bytes.NewReader(data))
		last := whole[len(whole)-1]
		if c := errClass(last.err); strings.HasPrefix(c, "other") || c == "nil" && len(whole) < 64 {
			t.Fatalf("read ended with %v", last.err)
		}
		consumed := 0
		for i, res := range whole {
			if res.err != nil {
				break
			}
			if !bytes.Equal(res.raw, data[consumed:consumed+len(res.raw)]) {
				t.Fatalf("value %d: raw %q is not the next input bytes", i, res.raw)
			}
			consumed += len(res.raw)

			// A value re-encodes to something that reads back the same.
			enc := AppendValue(nil, res.v, 3)
			back, err := NewReader(bytes.NewReader(enc)).ReadValue()
			if err != nil {
				t.Fatalf("value %d %s: re-encoded %q fails: %v", i, show(res.v), enc, err)
			}
			if !same(back, res.v) {
				t.Fatalf("value %d: got %s back from %q, want %s", i, show(back), enc, show(res.v))
			}
			// Its raw bytes on their own read back the same too.
			again, raw, err := NewReader(bytes.NewReader(res.raw)).ReadValueRaw()
			if err != nil || !same(again, res.v) || !bytes.Equal(raw, res.raw) {
				t.Fatalf("value %d: raw %q alone reads %s, %v", i, res.raw, show(again), err)
			}
		}
		// Chunking changes nothing.
		for _, rd := range []io.Reader{
			iotest.OneByteReader(bytes.NewReader(data)),
			newChunkReader(data, uint64(len(data)), 7),
			&chunkReader{data: data, rnd: rand.New(rand.NewPCG(uint64(len(data)), 9)), max: 5, deadlines: true},
		} {
			other := readAll(rd)
			if len(other) != len(whole) {
				t.Fatalf("chunked read got %d results, whole %d", len(other), len(whole))
			}
			for i := range whole {
				if errClass(other[i].err) != errClass(whole[i].err) ||
					!same(other[i].v, whole[i].v) || !bytes.Equal(other[i].raw, whole[i].raw) {
					t.Fatalf("result %d: chunked %s %v, whole %s %v", i, show(other[i].v), other[i].err, show(whole[i].v), whole[i].err)
				}
			}
		}
	})
}

// valueGen builds a Value from fuzzer bytes.
type valueGen struct{ b []byte }

func (g *valueGen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *valueGen) bytes() []byte {
	n := min(int(g.byte())%48, len(g.b))
	p := g.b[:n:n]
	g.b = g.b[n:]
	return p
}

func (g *valueGen) uint64() uint64 {
	var p [8]byte
	for i := range p {
		p[i] = g.byte()
	}
	return binary.LittleEndian.Uint64(p[:])
}

func (g *valueGen) value(depth int) Value {
	var v Value
	switch k := g.byte(); k % 16 {
	case 0:
		v = Value{Type: SimpleString, Str: g.bytes()}
	case 1:
		v = Value{Type: SimpleError, Str: g.bytes()}
	case 2:
		v = integer(int64(g.uint64()))
	case 3:
		v = integer([]int64{0, -1, 1, math.MaxInt64, math.MinInt64}[k/16%5])
	case 4:
		v = Value{Type: BulkString, Str: g.bytes()}
	case 5:
		v = Value{Type: Null}
	case 6:
		v = Value{Type: Boolean, Int: int64(k >> 7)}
	case 7:
		v = double(math.Float64frombits(g.uint64()))
	case 8:
		v = double([]float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, 1e21, -1e-7}[k/16%6])
	case 9:
		digits := append([]byte{}, "-"[:k>>7]...)
		for _, c := range append(g.bytes(), g.byte()) {
			digits = append(digits, '0'+c%10)
		}
		v = Value{Type: BigNumber, Str: digits}
	case 10:
		v = Value{Type: BulkError, Str: g.bytes()}
	case 11:
		v = Value{Type: Verbatim, Str: append([]byte("mkd:"), g.bytes()...)}
	default:
		t := []Type{Array, Map, Set, Push}[k%16-12]
		n := int(g.byte() % 6)
		if depth >= 6 || len(g.b) == 0 {
			n = 0
		}
		if t == Map {
			n *= 2
		}
		v = Value{Type: t, Elems: make([]Value, n)}
		for i := range v.Elems {
			v.Elems[i] = g.value(depth + 1)
		}
	}
	if a := g.byte(); a%8 == 7 && depth < 6 {
		pairs := make([]Value, 2*int(a>>6))
		for i := range pairs {
			pairs[i] = g.value(depth + 1)
		}
		v = withAttrs(v, pairs...)
	}
	return v
}

// onTheWire returns v as it reads back after AppendValue(v, 3): CR and LF
// in lines are spaces.
func onTheWire(v Value) Value {
	out := v
	switch v.Type {
	case SimpleString, SimpleError, BigNumber:
		out.Str = []byte(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(v.Str)))
	}
	if v.Elems != nil {
		out.Elems = make([]Value, len(v.Elems))
		for i, e := range v.Elems {
			out.Elems[i] = onTheWire(e)
		}
	}
	if v.Attrs != nil {
		a := onTheWire(*v.Attrs)
		out.Attrs = &a
	}
	return out
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{12, 3, 4, 5, 'h', 'e', 'l', 'l', 'o', 2, 1, 2, 3, 4, 5, 6, 7, 8}, true, 5)
	f.Add([]byte{13, 2, 0, 3, 'a', '\r', '\n', 7, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, false, 1)
	f.Fuzz(func(t *testing.T, data []byte, resp3 bool, chunk int) {
		g := &valueGen{b: data}
		v := g.value(0)
		proto, want := 3, onTheWire(v)
		if !resp3 {
			proto, want = 2, downgrade(want)
		}
		enc := AppendValue(nil, v, proto)
		r := NewReader(newChunkReader(enc, uint64(chunk), 1+int(uint(chunk)%64)))
		got, raw, err := r.ReadValueRaw()
		if err != nil {
			t.Fatalf("RESP%d %q: %v", proto, enc, err)
		}
		if !same(got, want) {
			t.Fatalf("RESP%d %q: got %s, want %s", proto, enc, show(got), show(want))
		}
		if !bytes.Equal(raw, enc) {
			t.Fatalf("RESP%d: raw %q, want %q", proto, raw, enc)
		}
		if _, err := r.ReadValue(); err != io.EOF {
			t.Fatalf("RESP%d %q: after the value got %v, want io.EOF", proto, enc, err)
		}
		if c := got.Clone(); !same(c, want) {
			t.Fatalf("Clone = %s, want %s", show(c), show(want))
		}
	})
}

func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n", "PING\r\n", "SET k v\r\n", "*2\r\n$3\r\nGET\r\n$0\r\n\r\n", "\r\n\r\nQUIT\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		for range 64 {
			args, raw, err := r.ReadCommand(nil)
			if err != nil {
				if c := errClass(err); strings.HasPrefix(c, "other") {
					t.Fatalf("unexpected error %v", err)
				}
				if len(args) != 0 || raw != nil {
					t.Fatalf("error %v with args %q, raw %q", err, args, raw)
				}
				return
			}
			if len(args) == 0 {
				t.Fatalf("no arguments from %q", raw)
			}
			// The raw bytes alone are the same command.
			again, raw2, err := NewReader(bytes.NewReader(raw)).ReadCommand(nil)
			if err != nil || !equalArgs(again, args) || !bytes.Equal(raw2, raw) {
				t.Fatalf("raw %q alone reads %q, %v; want %q", raw, again, err, args)
			}
			// Re-encoded as an array of bulk strings it reads back the same.
			enc := AppendArrayHeader(nil, len(args))
			for _, a := range args {
				enc = AppendBulk(enc, a)
			}
			again, _, err = NewReader(iotest.OneByteReader(bytes.NewReader(enc))).ReadCommand(nil)
			if err != nil || !equalArgs(again, args) {
				t.Fatalf("re-encoded %q reads %q, %v; want %q", enc, again, err, args)
			}
		}
	})
}

func equalArgs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
