package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readerKinds delivers the same input in the ways a connection may.
var readerKinds = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"one byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"random chunks", func(b []byte) io.Reader { return newChunkReader(b, uint64(len(b)), 97) }},
	{"large random chunks", func(b []byte) io.Reader { return newChunkReader(b, 3, 50_000) }},
	{"data with EOF", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
}

func TestReadValueSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"+OK\r\n", simple("OK")},
		{"+\r\n", simple("")},
		{"-ERR unknown command 'foobar'\r\n", Value{Type: SimpleError, Str: []byte("ERR unknown command 'foobar'")}},
		{":1000\r\n", integer(1000)},
		{":-1\r\n", integer(-1)},
		{":+42\r\n", integer(42)},
		{":-0\r\n", integer(0)},
		{":9223372036854775807\r\n", integer(math.MaxInt64)},
		{":-9223372036854775808\r\n", integer(math.MinInt64)},
		{"$5\r\nhello\r\n", bulk("hello")},
		{"$0\r\n\r\n", bulk("")},
		{"$4\r\na\r\nb\r\n", bulk("a\r\nb")},
		{"$-1\r\n", Value{Type: Null}},
		{"*-1\r\n", Value{Type: Null}},
		{"_\r\n", Value{Type: Null}},
		{"*0\r\n", agg(Array)},
		{"*2\r\n$5\r\nhello\r\n$5\r\nworld\r\n", agg(Array, bulk("hello"), bulk("world"))},
		{"*3\r\n:1\r\n$-1\r\n:3\r\n", agg(Array, integer(1), Value{Type: Null}, integer(3))},
		{"*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n",
			agg(Array, agg(Array, integer(1), integer(2), integer(3)), agg(Array, simple("Hello"), Value{Type: SimpleError, Str: []byte("World")}))},
		{"#t\r\n", Value{Type: Boolean, Int: 1}},
		{"#f\r\n", Value{Type: Boolean}},
		{",1.23\r\n", double(1.23)},
		{",10\r\n", double(10)},
		{",-1.5e3\r\n", double(-1500)},
		{",1E+2\r\n", double(100)},
		{",.5\r\n", double(0.5)},
		{",inf\r\n", double(math.Inf(1))},
		{",+inf\r\n", double(math.Inf(1))},
		{",-inf\r\n", double(math.Inf(-1))},
		{",nan\r\n", double(math.NaN())},
		{",-nan\r\n", double(math.NaN())},
		{"(3492890328409238509324850943850943825024385\r\n", Value{Type: BigNumber, Str: []byte("3492890328409238509324850943850943825024385")}},
		{"(-3492890328409238509324850943850943825024385\r\n", Value{Type: BigNumber, Str: []byte("-3492890328409238509324850943850943825024385")}},
		{"!21\r\nSYNTAX invalid syntax\r\n", Value{Type: BulkError, Str: []byte("SYNTAX invalid syntax")}},
		{"=15\r\ntxt:Some string\r\n", Value{Type: Verbatim, Str: []byte("txt:Some string")}},
		{"=4\r\nmkd:\r\n", Value{Type: Verbatim, Str: []byte("mkd:")}},
		{"%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", agg(Map, simple("first"), integer(1), simple("second"), integer(2))},
		{"%0\r\n", agg(Map)},
		{"~5\r\n+orange\r\n+apple\r\n#t\r\n:100\r\n:999\r\n",
			agg(Set, simple("orange"), simple("apple"), Value{Type: Boolean, Int: 1}, integer(100), integer(999))},
		{">4\r\n+pubsub\r\n+message\r\n+somechannel\r\n+this is the message\r\n",
			agg(Push, simple("pubsub"), simple("message"), simple("somechannel"), simple("this is the message"))},
		{"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
			withAttrs(agg(Array, integer(2039123), integer(9543892)),
				simple("key-popularity"), agg(Map, bulk("a"), double(0.1923), bulk("b"), double(0.0012)))},
		{"*3\r\n:1\r\n:2\r\n|1\r\n+ttl\r\n:3600\r\n:3\r\n",
			agg(Array, integer(1), integer(2), withAttrs(integer(3), simple("ttl"), integer(3600)))},
		{"|0\r\n_\r\n", withAttrs(Value{Type: Null})},
		{"%1\r\n|1\r\n+a\r\n+b\r\n+key\r\n|1\r\n+c\r\n+d\r\n+value\r\n",
			agg(Map, withAttrs(simple("key"), simple("a"), simple("b")), withAttrs(simple("value"), simple("c"), simple("d")))},
		{"|1\r\n|1\r\n+x\r\n+y\r\n+k\r\n+v\r\n:1\r\n", // an attribute on an attribute's key
			withAttrs(integer(1), withAttrs(simple("k"), simple("x"), simple("y")), simple("v"))},
	}
	for _, tt := range tests {
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap([]byte(tt.in)))
			got, raw, err := r.ReadValueRaw()
			if err != nil {
				t.Errorf("%s %q: %v", rk.name, tt.in, err)
				continue
			}
			if !same(got, tt.want) {
				t.Errorf("%s %q: got %s, want %s", rk.name, tt.in, show(got), show(tt.want))
			}
			if string(raw) != tt.in {
				t.Errorf("%s %q: raw %q", rk.name, tt.in, raw)
			}
			if _, err := r.ReadValue(); err != io.EOF {
				t.Errorf("%s %q: after the value got %v, want io.EOF", rk.name, tt.in, err)
			}
		}
	}
}

func TestReadValueTextFields(t *testing.T) {
	r := NewReader(strings.NewReader(",1.50\r\n,-0\r\n"))
	v, err := r.ReadValue()
	if err != nil || string(v.Str) != "1.50" || v.Float != 1.5 {
		t.Fatalf("got %s Str %q err %v, want 1.5 with text %q", show(v), v.Str, err, "1.50")
	}
	v, err = r.ReadValue()
	if err != nil || !math.Signbit(v.Float) {
		t.Fatalf("got %v err %v, want -0", v.Float, err)
	}
}

func TestReadValueErrors(t *testing.T) {
	deep := strings.Repeat("*1\r\n", DefaultMaxDepth+1) + ":1\r\n"
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"bare LF", "+OK\n", ErrProtocol},
		{"bare LF in header", "$3\n", ErrProtocol},
		{"LF only", "\n", ErrProtocol},
		{"CR inside a line", "+O\rK\r\n", ErrProtocol},
		{"empty line", "\r\n", ErrProtocol},
		{"garbage type", "?x\r\n", ErrProtocol},
		{"NUL type", "\x00\r\n", ErrProtocol},
		{"inline text as reply", "PING\r\n", ErrProtocol},
		{"integer overflow by one", ":9223372036854775808\r\n", ErrProtocol},
		{"integer underflow by one", ":-9223372036854775809\r\n", ErrProtocol},
		{"integer wraparound", ":92233720368547758080\r\n", ErrProtocol},
		{"integer uint64 wrap", ":18446744073709551620\r\n", ErrProtocol},
		{"integer empty", ":\r\n", ErrProtocol},
		{"integer sign only", ":-\r\n", ErrProtocol},
		{"integer double sign", ":+-1\r\n", ErrProtocol},
		{"integer spaces", ": 1\r\n", ErrProtocol},
		{"integer hex", ":0x10\r\n", ErrProtocol},
		{"bulk length wraparound", "$18446744073709551620\r\nabcd\r\n", ErrProtocol},
		{"bulk length plus", "$+3\r\nabc\r\n", ErrProtocol},
		{"negative bulk length", "$-2\r\n", ErrProtocol},
		{"negative bulk error length", "!-1\r\n", ErrProtocol},
		{"negative verbatim length", "=-1\r\n", ErrProtocol},
		{"negative array length", "*-2\r\n", ErrProtocol},
		{"negative push length", ">-1\r\n", ErrProtocol},
		{"negative attribute length", "|-1\r\n", ErrProtocol},
		{"array length too large", "*1099511627777\r\n", ErrProtocol},
		{"bulk without CRLF", "$3\r\nabcde\r\n", ErrProtocol},
		{"bulk with LF only", "$3\r\nabc\n+", ErrProtocol},
		{"empty bulk length", "$\r\n", ErrProtocol},
		{"verbatim without format", "=3\r\nabc\r\n", ErrProtocol},
		{"verbatim without colon", "=5\r\ntxt-a\r\n", ErrProtocol},
		{"invalid boolean", "#x\r\n", ErrProtocol},
		{"long boolean", "#tt\r\n", ErrProtocol},
		{"empty boolean", "#\r\n", ErrProtocol},
		{"null with content", "_x\r\n", ErrProtocol},
		{"invalid double", ",1.2.3x\r\n", ErrProtocol},
		{"double infinity word", ",infinity\r\n", ErrProtocol},
		{"double hex", ",0x1p3\r\n", ErrProtocol},
		{"double empty", ",\r\n", ErrProtocol},
		{"double out of range", ",1e400\r\n", ErrProtocol},
		{"invalid big number", "(12a\r\n", ErrProtocol},
		{"empty big number", "(\r\n", ErrProtocol},
		{"attribute chain", "|0\r\n|0\r\n:1\r\n", ErrProtocol},
		{"bad element", "*2\r\n:1\r\n?\r\n", ErrProtocol},
		{"too deep", deep, ErrTooDeep},
		{"bulk too large", "$536870913\r\n", ErrBulkTooLarge},
		{"line too long", "+" + strings.Repeat("a", MaxLine) + "\r\n", ErrLineTooLong},
		{"unterminated long line", "+" + strings.Repeat("a", 3*MaxLine), ErrLineTooLong},
		{"truncated simple string", "+OK", io.ErrUnexpectedEOF},
		{"truncated CR", "+OK\r", io.ErrUnexpectedEOF},
		{"truncated bulk", "$5\r\nhel", io.ErrUnexpectedEOF},
		{"truncated bulk CRLF", "$5\r\nhello\r", io.ErrUnexpectedEOF},
		{"truncated array", "*3\r\n:1\r\n:2\r\n", io.ErrUnexpectedEOF},
		{"attribute without value", "|1\r\n+a\r\n+b\r\n", io.ErrUnexpectedEOF},
		{"type byte only", "*", io.ErrUnexpectedEOF},
		{"empty input", "", io.EOF},
	}
	for _, tt := range tests {
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap([]byte(tt.in)))
			v, err := r.ReadValue()
			if !errors.Is(err, tt.want) {
				t.Errorf("%s, %s: got %s, %v; want %v", tt.name, rk.name, show(v), err, tt.want)
				continue
			}
			if errors.Is(tt.want, ErrProtocol) && !errors.Is(err, ErrProtocol) {
				t.Errorf("%s, %s: %v does not match ErrProtocol", tt.name, rk.name, err)
			}
			// Errors are sticky, whatever follows.
			if _, err2 := r.ReadValue(); err2 != err {
				t.Errorf("%s, %s: second read got %v, want the sticky %v", tt.name, rk.name, err2, err)
			}
			if _, _, err3 := r.ReadCommand(nil); err3 != err {
				t.Errorf("%s, %s: ReadCommand after the error got %v, want the sticky %v", tt.name, rk.name, err3, err)
			}
		}
	}
}

func TestErrorValues(t *testing.T) {
	for _, e := range []error{ErrBulkTooLarge, ErrTooDeep, ErrLineTooLong} {
		if !errors.Is(e, ErrProtocol) {
			t.Errorf("%v does not match ErrProtocol", e)
		}
		if !strings.HasPrefix(e.Error(), "resp: protocol error: ") {
			t.Errorf("%q lacks the package prefix", e.Error())
		}
	}
	err := fmt.Errorf("read reply: %w", firstError(t, "$10\r\n", 5))
	if !errors.Is(err, ErrBulkTooLarge) || !errors.Is(err, ErrProtocol) || errors.Is(err, ErrTooDeep) {
		t.Errorf("wrapped %v: matches ErrBulkTooLarge %v, ErrProtocol %v, ErrTooDeep %v",
			err, errors.Is(err, ErrBulkTooLarge), errors.Is(err, ErrProtocol), errors.Is(err, ErrTooDeep))
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "10 bytes") {
		t.Errorf("errors.As(%v) = %v, want a *ProtocolError naming the length", err, pe)
	}
	if errors.Is(firstError(t, "?\r\n", 0), ErrBulkTooLarge) {
		t.Error("a plain protocol error matches ErrBulkTooLarge")
	}
}

// RESP3 streamed strings and aggregates ('?' lengths, ';' chunks, '.'
// ends) are not supported, and the error says so rather than calling the
// length invalid.
func TestStreamedTypesAreNamedUnsupported(t *testing.T) {
	for _, in := range []string{
		"$?\r\n;4\r\nHell\r\n;0\r\n",
		"=?\r\n;4\r\ntxt:\r\n;0\r\n",
		"!?\r\n;3\r\nERR\r\n;0\r\n",
		"*?\r\n:1\r\n.\r\n",
		"%?\r\n+a\r\n:1\r\n.\r\n",
		"~?\r\n:1\r\n.\r\n",
		">?\r\n:1\r\n.\r\n",
		"|?\r\n+a\r\n:1\r\n.\r\n:2\r\n",
		"*1\r\n$?\r\n;1\r\nx\r\n;0\r\n",
	} {
		err := firstError(t, in, 0)
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "streamed") || !strings.Contains(pe.Reason, "not supported") {
			t.Errorf("%q: got %v, want a protocol error saying streamed values are not supported", in, err)
		}
	}
}

func firstError(t *testing.T, in string, maxBulk int64) error {
	t.Helper()
	r := NewReader(strings.NewReader(in))
	r.MaxBulk = maxBulk
	_, err := r.ReadValue()
	return err
}

func TestMaxBulk(t *testing.T) {
	tests := []struct {
		in      string
		maxBulk int64
		want    error
	}{
		{"$5\r\nhello\r\n", 5, nil},
		{"$6\r\nhello!\r\n", 5, ErrBulkTooLarge},
		{"!6\r\nERR ab\r\n", 5, ErrBulkTooLarge},
		{"=9\r\ntxt:hello\r\n", 8, ErrBulkTooLarge},
		{"*2\r\n$1\r\na\r\n$9\r\n", 8, ErrBulkTooLarge},
		{"$9223372036854775807\r\n", math.MaxInt64, ErrBulkTooLarge},
		{"$536870912\r\n", 0, io.ErrUnexpectedEOF}, // the default admits 512 MiB
		{"$536870913\r\n", 0, ErrBulkTooLarge},
	}
	for _, tt := range tests {
		err := firstError(t, tt.in, tt.maxBulk)
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("%q with MaxBulk %d: got %v, want %v", tt.in, tt.maxBulk, err, tt.want)
		}
		if errors.Is(tt.want, ErrBulkTooLarge) && !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v does not match ErrProtocol", tt.in, err)
		}
	}
}

func TestAnnouncedLengthsAllocateWhatArrives(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		maxBulk int64
		want    error
	}{
		{"bulk over the limit", "$1073741824\r\nabc", 1 << 20, ErrBulkTooLarge},
		{"1 GiB bulk under a 1 GiB limit", "$1073741824\r\nabc", 1 << 30, io.ErrUnexpectedEOF},
		{"512 MiB bulk under the default", "$536870912\r\n" + strings.Repeat("x", 100_000), 0, io.ErrUnexpectedEOF},
		{"array of 2^40", "*1099511627776\r\n", 0, io.ErrUnexpectedEOF},
		{"map of 2^40", "%1099511627776\r\n+k\r\n", 0, io.ErrUnexpectedEOF},
		{"nested arrays of 2^40", strings.Repeat("*1099511627776\r\n", DefaultMaxDepth), 0, io.ErrUnexpectedEOF},
		{"nested arrays of 4096", strings.Repeat("*4096\r\n", DefaultMaxDepth), 0, io.ErrUnexpectedEOF},
		{"nested arrays of 64", strings.Repeat("*64\r\n", DefaultMaxDepth), 0, io.ErrUnexpectedEOF},
		{"nested maps of 2^30", strings.Repeat("%1073741824\r\n", DefaultMaxDepth), 0, io.ErrUnexpectedEOF},
	}
	// The 32 KiB buffer and the first arenas fit many times over. Beyond
	// it, what arrives may justify what is allocated: each buffered byte
	// a third of an 80-byte element slot, twice over as arenas double.
	const budget, perByte = 2 << 20, 64
	for _, tt := range tests {
		for _, rk := range readerKinds[:3] {
			var err error
			start := time.Now()
			n := allocated(func() {
				r := NewReader(rk.wrap([]byte(tt.in)))
				r.MaxBulk = tt.maxBulk
				_, err = r.ReadValue()
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("%s, %s: got %v, want %v", tt.name, rk.name, err, tt.want)
			}
			if limit := budget + perByte*uint64(len(tt.in)); n > limit {
				t.Errorf("%s, %s: allocated %d bytes for %d bytes of input, want at most %d", tt.name, rk.name, n, len(tt.in), limit)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s, %s: took %v", tt.name, rk.name, d)
			}
		}
	}
}

func TestOverLimitBulkDoesNotAllocate(t *testing.T) {
	in := []byte("$1073741824\r\n")
	src := bytes.NewReader(in)
	r := NewReader(src)
	r.MaxBulk = 1 << 20
	r.ReadValue() // warm up: the first read allocates the buffer
	allocs := testing.AllocsPerRun(100, func() {
		src.Reset(in)
		r.Reset(src)
		if _, err := r.ReadValue(); !errors.Is(err, ErrBulkTooLarge) {
			t.Fatalf("got %v, want ErrBulkTooLarge", err)
		}
	})
	if allocs > 3 { // the error value and its reason text
		t.Errorf("rejecting an over-limit bulk made %v allocations, want at most 3", allocs)
	}
}

func TestMaxDepth(t *testing.T) {
	nest := func(depth int, open string) string {
		return strings.Repeat(open, depth) + ":1\r\n"
	}
	tests := []struct {
		name     string
		in       string
		maxDepth int
		want     error
	}{
		{"default depth", nest(DefaultMaxDepth, "*1\r\n"), 0, nil},
		{"default depth plus one", nest(DefaultMaxDepth+1, "*1\r\n"), 0, ErrTooDeep},
		{"custom depth", nest(3, "*1\r\n"), 3, nil},
		{"custom depth plus one", nest(4, "*1\r\n"), 3, ErrTooDeep},
		{"maps", nest(4, "%1\r\n+k\r\n"), 3, ErrTooDeep},
		{"sets", nest(4, "~1\r\n"), 3, ErrTooDeep},
		{"pushes", nest(4, ">1\r\n"), 3, ErrTooDeep},
		{"attributes count", "*1\r\n*1\r\n|1\r\n+k\r\n+v\r\n:1\r\n", 2, ErrTooDeep},
		{"attribute values count", "|1\r\n+k\r\n*1\r\n*1\r\n:1\r\n:1\r\n", 2, ErrTooDeep},
		{"scalars do not count", "*1\r\n*1\r\n$1\r\nx\r\n", 2, nil},
		{"very deep", strings.Repeat("*1\r\n", 1_000_000), 0, ErrTooDeep},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.in))
		r.MaxDepth = tt.maxDepth
		_, err := r.ReadValue()
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
		if tt.want != nil && !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v does not match ErrProtocol", tt.name, err)
		}
	}
}

func TestLongAttributeChainDoesNotOverflowTheStack(t *testing.T) {
	in := strings.Repeat("|0\r\n", 1<<20) + ":1\r\n"
	_, err := NewReader(strings.NewReader(in)).ReadValue()
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v, want ErrProtocol", err)
	}
}

func TestLineLimit(t *testing.T) {
	atLimit := "+" + strings.Repeat("a", MaxLine-1) + "\r\n"
	overLimit := "+" + strings.Repeat("a", MaxLine) + "\r\n"
	bigBulk := string(AppendBulkString(nil, strings.Repeat("b", 300_000)))
	tests := []struct {
		name string
		in   string
		want error // of the last value
	}{
		{"at the limit", atLimit, nil},
		{"over the limit", overLimit, ErrLineTooLong},
		// A big bulk first grows the buffer past 64 KiB, so the long
		// line arrives whole; it must fail all the same.
		{"over the limit in a large buffer", bigBulk + overLimit, ErrLineTooLong},
		{"at the limit in a large buffer", bigBulk + atLimit, nil},
		{"header over the limit", "$" + strings.Repeat("1", MaxLine) + "\r\n", ErrLineTooLong},
	}
	for _, tt := range tests {
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap([]byte(tt.in)))
			var err error
			for err == nil {
				_, err = r.ReadValue()
			}
			if err == io.EOF {
				err = nil
			}
			if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
				t.Errorf("%s, %s: got %v, want %v", tt.name, rk.name, err, tt.want)
			}
		}
	}
	cmd := "GET " + strings.Repeat("k", MaxLine) + "\r\n"
	if _, _, err := NewReader(strings.NewReader(cmd)).ReadCommand(nil); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("long inline command: got %v, want ErrLineTooLong", err)
	}
}

// sampleValues covers every type, with attributes, in the values a Reader
// returns (doubles carry no text here; Equal ignores it).
func sampleValues() []Value {
	return []Value{
		simple("OK"),
		simple(""),
		Value{Type: SimpleError, Str: []byte("ERR wrong number of arguments")},
		integer(0), integer(-1), integer(math.MaxInt64), integer(math.MinInt64),
		bulk("hello"), bulk(""), bulk("binary\r\n\x00\xff"),
		Value{Type: Null},
		Value{Type: Boolean, Int: 1}, Value{Type: Boolean},
		double(3.5), double(-0.1), double(1e300), double(-2.5e-300), double(math.Inf(1)), double(math.Inf(-1)), double(math.NaN()),
		double(math.MaxFloat64), double(math.SmallestNonzeroFloat64),
		Value{Type: BigNumber, Str: []byte("3492890328409238509324850943850943825024385")},
		Value{Type: BigNumber, Str: []byte("-1")},
		Value{Type: BulkError, Str: []byte("SYNTAX invalid syntax")},
		Value{Type: Verbatim, Str: []byte("txt:Some string")},
		Value{Type: Verbatim, Str: []byte("mkd:")},
		agg(Array), agg(Map), agg(Set), agg(Push),
		agg(Array, bulk("a"), integer(1), Value{Type: Null}, agg(Array, bulk("nested"))),
		agg(Map, simple("first"), integer(1), bulk("second"), agg(Set, double(2), Value{Type: Boolean})),
		agg(Set, bulk("x"), bulk("y")),
		agg(Push, simple("message"), bulk("channel"), bulk("payload")),
		withAttrs(agg(Array, integer(2039123), integer(9543892)),
			simple("key-popularity"), agg(Map, bulk("a"), double(0.1923), bulk("b"), double(0.0012))),
		agg(Array, withAttrs(bulk("v"), simple("ttl"), integer(10)), agg(Map, withAttrs(simple("k"), simple("a"), simple("b")), integer(1))),
		bulk(strings.Repeat("0123456789abcdef", 4096)), // 64 KiB
		agg(Array, bulk(strings.Repeat("x", 40_000)), bulk(strings.Repeat("y", 40_000)), bulk(strings.Repeat("z", 40_000))),
	}
}

// downgrade returns what v reads back as after a RESP2 encoding.
func downgrade(v Value) Value {
	var out Value
	switch v.Type {
	case Boolean:
		out = integer(v.Int)
	case Double:
		out = bulk(string(appendFloat(nil, v.Float)))
	case BigNumber:
		out = bulk(string(v.Str))
	case Verbatim:
		out = bulk(v.Text())
	case BulkError:
		out = Value{Type: SimpleError, Str: []byte(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(v.Str)))}
	case Array, Map, Set, Push:
		out = Value{Type: Array, Elems: make([]Value, len(v.Elems))}
		for i, e := range v.Elems {
			out.Elems[i] = downgrade(e)
		}
	default:
		out = v
		out.Attrs = nil
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for _, v := range sampleValues() {
			want := v
			if proto == 2 {
				want = downgrade(v)
			}
			enc := AppendValue(nil, v, proto)
			for _, rk := range readerKinds {
				got, raw, err := NewReader(rk.wrap(enc)).ReadValueRaw()
				if err != nil {
					t.Errorf("RESP%d %s %.60q: %v", proto, rk.name, enc, err)
					continue
				}
				if !same(got, want) {
					t.Errorf("RESP%d %s: got %.200s, want %.200s", proto, rk.name, show(got), show(want))
				}
				if !bytes.Equal(raw, enc) {
					t.Errorf("RESP%d %s: raw %.60q, want %.60q", proto, rk.name, raw, enc)
				}
				if again := AppendValue(nil, got, proto); !bytes.Equal(again, enc) {
					t.Errorf("RESP%d %s: re-encoded %.60q, want %.60q", proto, rk.name, again, enc)
				}
			}
		}
	}
}

// stream returns many values, their encodings concatenated, and each
// encoding, with values large enough that the reader must relocate its
// buffer in the middle of values.
func stream(proto int) (vals []Value, all []byte, encs [][]byte) {
	samples := sampleValues()
	for i := range 300 {
		v := samples[(i*7)%len(samples)]
		switch i % 50 {
		case 10:
			v = bulk(strings.Repeat("L", 33_000+i))
		case 20:
			v = agg(Array, bulk("first"), bulk(strings.Repeat("M", 70_000)), agg(Map, bulk("k"), bulk(strings.Repeat("N", 40_000))))
		case 30:
			v = bulk(strings.Repeat("H", 1_200_000)) // beyond what the reader retains
		}
		if proto == 2 {
			v = downgrade(v)
		}
		enc := AppendValue(nil, v, proto)
		vals, encs = append(vals, v), append(encs, enc)
		all = append(all, enc...)
	}
	return vals, all, encs
}

func TestReadValueRawStream(t *testing.T) {
	for _, proto := range []int{2, 3} {
		vals, all, encs := stream(proto)
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap(all))
			kept := make([]Value, 0, len(vals))
			for i := range vals {
				got, raw, err := r.ReadValueRaw()
				if err != nil {
					t.Fatalf("RESP%d %s: value %d: %v", proto, rk.name, i, err)
				}
				if !bytes.Equal(raw, encs[i]) {
					t.Fatalf("RESP%d %s: value %d: raw %.60q (%d bytes), want %.60q (%d bytes)",
						proto, rk.name, i, raw, len(raw), encs[i], len(encs[i]))
				}
				if !same(got, vals[i]) {
					t.Fatalf("RESP%d %s: value %d: got %.100s, want %.100s", proto, rk.name, i, show(got), show(vals[i]))
				}
				kept = append(kept, got.Clone())
			}
			if _, err := r.ReadValue(); err != io.EOF {
				t.Errorf("RESP%d %s: at the end got %v, want io.EOF", proto, rk.name, err)
			}
			// Clones survive everything the reader did afterwards.
			for i, k := range kept {
				if !same(k, vals[i]) {
					t.Fatalf("RESP%d %s: clone %d changed: %.100s", proto, rk.name, i, show(k))
				}
			}
		}
	}
}

// boundaries returns the offsets at which each value of encs ends.
func boundaries(encs [][]byte) []int {
	var ends []int
	off := 0
	for _, e := range encs {
		off += len(e)
		ends = append(ends, off)
	}
	return ends
}

func TestTruncatedAtEveryOffset(t *testing.T) {
	var encs [][]byte
	for _, v := range sampleValues() {
		if enc := AppendValue(nil, v, 3); len(enc) < 1000 {
			encs = append(encs, enc)
		}
	}
	encs = append(encs, []byte("$-1\r\n"), []byte("*-1\r\n"), []byte(":+5\r\n"), []byte(",1.50e+2\r\n"))
	all := bytes.Join(encs, nil)
	ends := boundaries(encs)
	for cut := 0; cut <= len(all); cut++ {
		for _, rk := range readerKinds[:3] {
			r := NewReader(rk.wrap(all[:cut]))
			n := 0
			var err error
			for {
				if _, err = r.ReadValue(); err != nil {
					break
				}
				n++
			}
			complete := 0
			for complete < len(ends) && ends[complete] <= cut {
				complete++
			}
			want := io.ErrUnexpectedEOF
			if complete == 0 && cut == 0 || complete > 0 && ends[complete-1] == cut {
				want = io.EOF
			}
			if n != complete || err != want {
				t.Fatalf("cut at %d of %d, %s: read %d values then %v, want %d then %v", cut, len(all), rk.name, n, err, complete, want)
			}
		}
	}
}

// A stream of every sample value, with pushes and attributes between
// replies and the RESP2 nulls, read in two pieces split at every byte
// offset, decodes to the same values, raw bytes and end as read whole.
func TestSplitAtEveryOffset(t *testing.T) {
	var all []byte
	for _, v := range sampleValues() {
		if enc := AppendValue(nil, v, 3); len(enc) < 1000 {
			all = append(all, enc...)
		}
	}
	all = append(all, "$-1\r\n>2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n*-1\r\n|1\r\n+ttl\r\n:3\r\n:+5\r\n,1.50e+2\r\n"...)
	whole := readAll(bytes.NewReader(all))
	if n := len(whole); n < 30 || whole[n-1].err != io.EOF {
		t.Fatalf("whole stream: %d results ending with %v, want many ending with EOF", n, whole[n-1].err)
	}
	for cut := 0; cut <= len(all); cut++ {
		split := readAll(io.MultiReader(bytes.NewReader(all[:cut]), bytes.NewReader(all[cut:])))
		if len(split) != len(whole) {
			t.Fatalf("split at %d: %d results, whole %d", cut, len(split), len(whole))
		}
		for i := range whole {
			if split[i].err != whole[i].err || !same(split[i].v, whole[i].v) || !bytes.Equal(split[i].raw, whole[i].raw) {
				t.Fatalf("split at %d, result %d: %s %v, whole %s %v", cut, i, show(split[i].v), split[i].err, show(whole[i].v), whole[i].err)
			}
		}
	}
}

func TestTruncatedLargeValue(t *testing.T) {
	v := agg(Array, bulk(strings.Repeat("a", 50_000)), agg(Map, bulk("k"), bulk(strings.Repeat("b", 50_000))), integer(7))
	enc := AppendValue(nil, v, 3)
	for cut := 0; cut < len(enc); cut += 1 + cut/16 {
		_, err := NewReader(newChunkReader(enc[:cut], uint64(cut), 20_000)).ReadValue()
		want := io.ErrUnexpectedEOF
		if cut == 0 {
			want = io.EOF
		}
		if err != want {
			t.Fatalf("cut at %d of %d: got %v, want %v", cut, len(enc), err, want)
		}
	}
}

func TestReadCommand(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][]string // one per command
		raws []string
	}{
		{"array", "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
			[][]string{{"SET", "key", "value"}}, []string{"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"}},
		{"binary arguments", "*2\r\n$4\r\nECHO\r\n$4\r\n\r\n\x00 \r\n", [][]string{{"ECHO", "\r\n\x00 "}}, []string{"*2\r\n$4\r\nECHO\r\n$4\r\n\r\n\x00 \r\n"}},
		{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", [][]string{{"ECHO", ""}}, []string{"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"}},
		{"inline", "PING\r\n", [][]string{{"PING"}}, []string{"PING\r\n"}},
		{"inline arguments", "SET  key\tvalue \r\n", [][]string{{"SET", "key", "value"}}, []string{"SET  key\tvalue \r\n"}},
		{"blank inline lines are skipped", "\r\n  \r\n\t\r\nPING\r\n", [][]string{{"PING"}}, []string{"PING\r\n"}},
		{"inline starting with another type byte", "$3 x\r\n", [][]string{{"$3", "x"}}, []string{"$3 x\r\n"}},
		{"mixed", "PING\r\n*1\r\n$4\r\nPING\r\nGET k\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
			[][]string{{"PING"}, {"PING"}, {"GET", "k"}, {"GET", "k"}},
			[]string{"PING\r\n", "*1\r\n$4\r\nPING\r\n", "GET k\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"}},
		{"large argument", "*2\r\n$3\r\nSET\r\n$70000\r\n" + strings.Repeat("v", 70_000) + "\r\n",
			[][]string{{"SET", strings.Repeat("v", 70_000)}}, []string{"*2\r\n$3\r\nSET\r\n$70000\r\n" + strings.Repeat("v", 70_000) + "\r\n"}},
	}
	for _, tt := range tests {
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap([]byte(tt.in)))
			for i, want := range tt.want {
				prefix := [][]byte{[]byte("kept")}
				args, raw, err := r.ReadCommand(prefix)
				if err != nil {
					t.Fatalf("%s, %s: command %d: %v", tt.name, rk.name, i, err)
				}
				got := make([]string, len(args))
				for j, a := range args {
					got[j] = string(a)
				}
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", append([]string{"kept"}, want...)) {
					t.Errorf("%s, %s: command %d: got %.80q, want %.80q", tt.name, rk.name, i, got, want)
				}
				if string(raw) != tt.raws[i] {
					t.Errorf("%s, %s: command %d: raw %.80q, want %.80q", tt.name, rk.name, i, raw, tt.raws[i])
				}
			}
			if args, _, err := r.ReadCommand(nil); err != io.EOF || len(args) != 0 {
				t.Errorf("%s, %s: at the end got %q, %v; want io.EOF", tt.name, rk.name, args, err)
			}
		}
	}
}

func TestReadCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty array", "*0\r\n", ErrProtocol},
		{"null array", "*-1\r\n", ErrProtocol},
		{"integer argument", "*2\r\n$3\r\nGET\r\n:1\r\n", ErrProtocol},
		{"null argument", "*2\r\n$3\r\nGET\r\n$-1\r\n", ErrProtocol},
		{"nested array", "*1\r\n*1\r\n$1\r\na\r\n", ErrProtocol},
		{"bare LF inline", "PING\n", ErrProtocol},
		{"bad bulk", "*1\r\n$x\r\n", ErrProtocol},
		{"bulk too large", "*1\r\n$536870913\r\n", ErrBulkTooLarge},
		{"truncated array", "*2\r\n$3\r\nGET\r\n", io.ErrUnexpectedEOF},
		{"truncated inline", "PIN", io.ErrUnexpectedEOF},
		{"truncated after blank lines", "\r\n\r\nPI", io.ErrUnexpectedEOF},
		{"array header only", "*", io.ErrUnexpectedEOF},
		{"blank lines only", "\r\n\r\n", io.EOF},
		{"empty", "", io.EOF},
	}
	for _, tt := range tests {
		for _, rk := range readerKinds {
			r := NewReader(rk.wrap([]byte(tt.in)))
			prefix := [][]byte{[]byte("kept")}
			args, raw, err := r.ReadCommand(prefix)
			if !errors.Is(err, tt.want) {
				t.Errorf("%s, %s: got %q, %v; want %v", tt.name, rk.name, args, err, tt.want)
			}
			if len(args) != 1 || raw != nil {
				t.Errorf("%s, %s: on error got args %q, raw %q; want the caller's args and no raw", tt.name, rk.name, args, raw)
			}
			if _, _, err2 := r.ReadCommand(nil); err2 != err {
				t.Errorf("%s, %s: second call got %v, want the sticky %v", tt.name, rk.name, err2, err)
			}
		}
	}
}

func TestReadCommandTruncatedAtEveryOffset(t *testing.T) {
	cmds := []string{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n", "PING\r\n", "*1\r\n$4\r\nQUIT\r\n", "GET k\r\n"}
	all := strings.Join(cmds, "")
	var ends []int
	off := 0
	for _, c := range cmds {
		off += len(c)
		ends = append(ends, off)
	}
	for cut := 0; cut <= len(all); cut++ {
		r := NewReader(iotest.OneByteReader(strings.NewReader(all[:cut])))
		n := 0
		var err error
		for {
			if _, _, err = r.ReadCommand(nil); err != nil {
				break
			}
			n++
		}
		complete := 0
		for complete < len(ends) && ends[complete] <= cut {
			complete++
		}
		want := io.ErrUnexpectedEOF
		if cut == 0 || complete > 0 && ends[complete-1] == cut {
			want = io.EOF
		}
		if n != complete || err != want {
			t.Fatalf("cut at %d: read %d commands then %v, want %d then %v", cut, n, err, complete, want)
		}
	}
}

func TestResetAndBuffered(t *testing.T) {
	r := NewReader(strings.NewReader("+a\r\n+b\r\n:1\r\n"))
	if got := r.Buffered(); got != 0 {
		t.Errorf("Buffered before reading = %d, want 0", got)
	}
	if v, err := r.ReadValue(); err != nil || string(v.Str) != "a" {
		t.Fatalf("got %s, %v", show(v), err)
	}
	if got, want := r.Buffered(), len("+b\r\n:1\r\n"); got != want {
		t.Errorf("Buffered after one value = %d, want %d", got, want)
	}
	r.Reset(strings.NewReader("-ERR x\r\n"))
	if got := r.Buffered(); got != 0 {
		t.Errorf("Buffered after Reset = %d, want 0", got)
	}
	if v, err := r.ReadValue(); err != nil || !v.IsError() {
		t.Fatalf("after Reset got %s, %v; want the new input's error value", show(v), err)
	}

	// Reset clears a sticky error and keeps the limits.
	r.MaxBulk, r.MaxDepth = 3, 1
	r.Reset(strings.NewReader("?\r\n"))
	if _, err := r.ReadValue(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v, want ErrProtocol", err)
	}
	r.Reset(strings.NewReader("$3\r\nabc\r\n$4\r\n"))
	if v, err := r.ReadValue(); err != nil || string(v.Str) != "abc" {
		t.Fatalf("after Reset got %s, %v; want abc", show(v), err)
	}
	if _, err := r.ReadValue(); !errors.Is(err, ErrBulkTooLarge) {
		t.Errorf("MaxBulk lost by Reset: got %v", err)
	}
	r.Reset(strings.NewReader("*1\r\n*1\r\n:1\r\n"))
	if _, err := r.ReadValue(); !errors.Is(err, ErrTooDeep) {
		t.Errorf("MaxDepth lost by Reset: got %v", err)
	}

	// Reset in the middle of a value starts clean.
	r = NewReader(strings.NewReader("*2\r\n:1\r\n"))
	if _, err := r.ReadValue(); err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	r.Reset(strings.NewReader(":2\r\n"))
	if v, err := r.ReadValue(); err != nil || v.Int != 2 {
		t.Fatalf("after Reset got %s, %v; want 2", show(v), err)
	}
	if _, err := r.ReadValue(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
	var nilReader Reader
	if _, err := nilReader.ReadValue(); err != io.EOF {
		t.Errorf("zero Reader: got %v, want io.EOF", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestReaderErrorsFromTheSource(t *testing.T) {
	if _, err := NewReader(zeroReader{}).ReadValue(); err != io.ErrNoProgress {
		t.Errorf("a reader that returns nothing: got %v, want io.ErrNoProgress", err)
	}
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("*2\r\n:1\r\n"), errReader{boom}))
	if _, err := r.ReadValue(); err != boom {
		t.Errorf("got %v, want the source's error", err)
	}
	if _, err := r.ReadValue(); err != boom {
		t.Errorf("second read got %v, want the sticky source error", err)
	}
}

// deadlineReader returns its chunks one per Read, failing with
// os.ErrDeadlineExceeded where a chunk is nil.
type deadlineReader struct{ chunks [][]byte }

func (d *deadlineReader) Read(p []byte) (int, error) {
	if len(d.chunks) == 0 {
		return 0, io.EOF
	}
	c := d.chunks[0]
	d.chunks = d.chunks[1:]
	if c == nil {
		return 0, fmt.Errorf("read: %w", os.ErrDeadlineExceeded)
	}
	return copy(p, c), nil
}

// TestReadDeadlineResumesValue proves that a read deadline in the middle
// of a value is not a protocol failure: the next ReadValue decodes the
// whole value from its first byte, then the values after it.
func TestReadDeadlineResumesValue(t *testing.T) {
	d := &deadlineReader{chunks: [][]byte{
		[]byte("*2\r\n$3\r\nfo"), nil, []byte("o\r\n:7\r\n"), nil, []byte("+OK\r\n"),
	}}
	r := NewReader(d)
	if _, err := r.ReadValue(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("first ReadValue: got %v, want the deadline error", err)
	}
	v, err := r.ReadValue()
	if err != nil || v.Type != Array || len(v.Elems) != 2 || string(v.Elems[0].Str) != "foo" || v.Elems[1].Int != 7 {
		t.Fatalf("resumed ReadValue: got %v, %v; want [foo 7]", v, err)
	}
	if _, err := r.ReadValue(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("deadline between values: got %v", err)
	}
	if v, err := r.ReadValue(); err != nil || string(v.Str) != "OK" {
		t.Fatalf("value after the deadline: got %v, %v; want OK", v, err)
	}
}

// TestReadDeadlineResumesCommand: ReadCommand, like ReadValue, survives a
// read deadline, between commands and inside an inline or array command:
// the next call reads the interrupted command from its first byte.
func TestReadDeadlineResumesCommand(t *testing.T) {
	d := &deadlineReader{chunks: [][]byte{
		nil, []byte("PI"), nil, []byte("NG\r\n*1\r\n$4\r\nEC"), nil, []byte("HO\r\n"), nil, []byte("GET k\r\n"),
	}}
	r := NewReader(d)
	deadlines := 0
	for _, want := range []string{"PING", "ECHO", "GET k"} {
		for {
			args, raw, err := r.ReadCommand(nil)
			if errors.Is(err, os.ErrDeadlineExceeded) && deadlines < 4 {
				deadlines++
				if len(args) != 0 || raw != nil {
					t.Fatalf("deadline error with args %q, raw %q", args, raw)
				}
				continue
			}
			if err != nil {
				t.Fatalf("reading %s: got %v after a deadline, want the command", want, err)
			}
			if got := string(bytes.Join(args, []byte(" "))); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			break
		}
	}
	if _, _, err := r.ReadCommand(nil); err != io.EOF {
		t.Fatalf("at the end got %v, want io.EOF", err)
	}
}

// countingSource hands out its bytes in one read and then counts every
// further read, which fails: a read after that would have blocked on a
// connection.
type countingSource struct {
	data  []byte
	after int
}

func (s *countingSource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		s.after++
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// TestNextBufferedPromisesNoIO: after a first value, NextBuffered answers
// for every prefix of the next one; when it answers true the next value
// decodes with no read at all, and for a whole scalar it answers true.
func TestNextBufferedPromisesNoIO(t *testing.T) {
	next := []struct {
		enc    string
		scalar bool
	}{
		{"+OK\r\n", true},
		{"-ERR boom\r\n", true},
		{":-42\r\n", true},
		{"_\r\n", true},
		{"#t\r\n", true},
		{",1.5\r\n", true},
		{"(123456789012345678901\r\n", true},
		{"$5\r\nhello\r\n", true},
		{"$0\r\n\r\n", true},
		{"$-1\r\n", true},
		{"!3\r\nbad\r\n", true},
		{"=7\r\ntxt:abc\r\n", true},
		{"$12\r\nline\r\nbreaks\r\n", true},
		{"*2\r\n:1\r\n:2\r\n", false},
		{"%1\r\n+k\r\n+v\r\n", false},
		{">2\r\n+message\r\n+x\r\n", false},
		{"|1\r\n+a\r\n+b\r\n+OK\r\n", false},
		{"*-1\r\n", false},
	}
	for _, tc := range next {
		for cut := 0; cut <= len(tc.enc); cut++ {
			src := &countingSource{data: []byte("+first\r\n" + tc.enc[:cut])}
			r := NewReader(src)
			if v, err := r.ReadValue(); err != nil || string(v.Str) != "first" {
				t.Fatalf("%q: first value %s, %v", tc.enc, show(v), err)
			}
			got := r.NextBuffered()
			whole := cut == len(tc.enc)
			if whole && tc.scalar && !got {
				t.Errorf("%q whole and scalar: NextBuffered = false, want true", tc.enc)
			}
			if got && (!whole || !tc.scalar) {
				t.Errorf("%q cut at %d: NextBuffered = true for partial or aggregate input", tc.enc, cut)
			}
			if got {
				before := src.after
				if _, err := r.ReadValue(); err != nil {
					t.Errorf("%q: ReadValue after NextBuffered: %v", tc.enc, err)
				}
				if src.after != before {
					t.Errorf("%q: ReadValue after NextBuffered read the source %d times", tc.enc, src.after-before)
				}
			}
		}
	}
	var empty Reader
	if empty.NextBuffered() {
		t.Error("a reader with nothing buffered answered true")
	}
	bad := NewReader(strings.NewReader("?\r\n+OK\r\n"))
	if _, err := bad.ReadValue(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v, want ErrProtocol", err)
	}
	if bad.NextBuffered() {
		t.Error("a reader with a sticky error answered true")
	}
}

// TestShrinkLetsGoOfLargeBuffersBetweenValues proves that Shrink, between
// values with nothing unread, drops the buffer grown for a 4 MiB bulk and
// the element slots of a 100 000-element array, that a value read before
// stays intact, and that the reader then reads on; with a value still
// buffered, Shrink keeps it and it is read whole.
func TestShrinkLetsGoOfLargeBuffersBetweenValues(t *testing.T) {
	big := strings.Repeat("b", 4<<20)
	arr := "*100000\r\n" + strings.Repeat(":1\r\n", 100000)
	var in bytes.Buffer
	r := NewReader(&in)
	in.WriteString("$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n")
	v, err := r.ReadValue()
	if err != nil || string(v.Str) != big {
		t.Fatalf("bulk: %v", err)
	}
	r.Shrink()
	if len(r.buf) > initialBufSize || r.spare != nil {
		t.Fatalf("after Shrink the reader holds %d bytes of buffer and a spare of %d", len(r.buf), len(r.spare))
	}
	if string(v.Str) != big {
		t.Fatal("the value read before Shrink changed")
	}
	in.WriteString(arr)
	if v, err = r.ReadValue(); err != nil || len(v.Elems) != 100000 {
		t.Fatalf("array: %v", err)
	}
	r.Shrink()
	if len(r.arena) > retainArenaSize || len(r.buf) > retainBufSize {
		t.Fatalf("after Shrink the reader holds %d slots and %d bytes", len(r.arena), len(r.buf))
	}
	in.WriteString("$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n+after\r\n")
	if v, err = r.ReadValue(); err != nil || string(v.Str) != big {
		t.Fatalf("second bulk: %v", err)
	}
	r.Shrink() // "+after" is buffered: nothing is dropped
	if v, err = r.ReadValue(); err != nil || string(v.Str) != "after" {
		t.Fatalf("the value buffered at Shrink: %q, %v", v.Str, err)
	}
}

// TestLargeBulkBufferFitsTheBulk proves that a 5 MiB bulk arriving up to
// 64 KiB at a time is read into a buffer no larger than its encoding
// (doubling went past it), and that the buffers it outgrew past 1 MiB
// are not kept as the spare while it arrives.
func TestLargeBulkBufferFitsTheBulk(t *testing.T) {
	big := strings.Repeat("f", 5<<20)
	in := "$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n"
	r := NewReader(&chunkReader{data: []byte(in), rnd: rand.New(rand.NewPCG(1, 2)), max: 64 << 10})
	v, err := r.ReadValue()
	if err != nil || string(v.Str) != big {
		t.Fatalf("bulk: %v", err)
	}
	if len(r.buf) > len(in) {
		t.Errorf("the buffer holds %d bytes for a bulk of %d encoded, want at most that", len(r.buf), len(in))
	}
	if len(r.spare) > retainBufSize {
		t.Errorf("the spare buffer holds %d bytes, want at most %d", len(r.spare), retainBufSize)
	}
}
