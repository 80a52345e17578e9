package resp

import (
	"bytes"
	"math"
	"testing"
)

// The wire forms below are the examples of the RESP3 specification
// (github.com/redis/redis-specifications, spec/protocol/RESP3.md) and of
// the RESP2 section of the Redis protocol documentation.
func TestAppendFunctions(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"simple string", AppendSimpleString(nil, "OK"), "+OK\r\n"},
		{"empty simple string", AppendSimpleString(nil, ""), "+\r\n"},
		{"simple string CRLF", AppendSimpleString(nil, "a\r\nb\rc\nd"), "+a  b c d\r\n"},
		{"error", AppendError(nil, "ERR unknown command 'foobar'"), "-ERR unknown command 'foobar'\r\n"},
		{"error CRLF", AppendError(nil, "ERR\r\ninjected"), "-ERR  injected\r\n"},
		{"integer", AppendInteger(nil, 1000), ":1000\r\n"},
		{"negative integer", AppendInteger(nil, -1), ":-1\r\n"},
		{"zero", AppendInteger(nil, 0), ":0\r\n"},
		{"max int64", AppendInteger(nil, math.MaxInt64), ":9223372036854775807\r\n"},
		{"min int64", AppendInteger(nil, math.MinInt64), ":-9223372036854775808\r\n"},
		{"bulk string", AppendBulkString(nil, "hello"), "$5\r\nhello\r\n"},
		{"empty bulk string", AppendBulkString(nil, ""), "$0\r\n\r\n"},
		{"binary bulk", AppendBulkString(nil, "a\r\n\x00b"), "$5\r\na\r\n\x00b\r\n"},
		{"bulk bytes", AppendBulk(nil, []byte("foobar")), "$6\r\nfoobar\r\n"},
		{"nil bulk bytes is empty", AppendBulk(nil, nil), "$0\r\n\r\n"},
		{"bulk int", AppendBulkInt(nil, -42), "$3\r\n-42\r\n"},
		{"bulk int min", AppendBulkInt(nil, math.MinInt64), "$20\r\n-9223372036854775808\r\n"},
		{"bulk float", AppendBulkFloat(nil, 3.14), "$4\r\n3.14\r\n"},
		{"bulk float inf", AppendBulkFloat(nil, math.Inf(1)), "$3\r\ninf\r\n"},
		{"bulk float -inf", AppendBulkFloat(nil, math.Inf(-1)), "$4\r\n-inf\r\n"},
		{"bulk float exponent", AppendBulkFloat(nil, 1e21), "$5\r\n1e+21\r\n"},
		{"null", AppendNull(nil), "_\r\n"},
		{"null bulk", AppendNullBulk(nil), "$-1\r\n"},
		{"null array", AppendNullArray(nil), "*-1\r\n"},
		{"true", AppendBoolean(nil, true), "#t\r\n"},
		{"false", AppendBoolean(nil, false), "#f\r\n"},
		{"double", AppendDouble(nil, 1.23), ",1.23\r\n"},
		{"integral double", AppendDouble(nil, 10), ",10\r\n"},
		{"double inf", AppendDouble(nil, math.Inf(1)), ",inf\r\n"},
		{"double -inf", AppendDouble(nil, math.Inf(-1)), ",-inf\r\n"},
		{"double nan", AppendDouble(nil, math.NaN()), ",nan\r\n"},
		{"double exponent", AppendDouble(nil, 1.5e300), ",1.5e+300\r\n"},
		{"double negative exponent", AppendDouble(nil, -2.5e-8), ",-2.5e-08\r\n"},
		{"double negative zero", AppendDouble(nil, math.Copysign(0, -1)), ",-0\r\n"},
		{"double max", AppendDouble(nil, math.MaxFloat64), ",1.7976931348623157e+308\r\n"},
		{"double smallest", AppendDouble(nil, math.SmallestNonzeroFloat64), ",5e-324\r\n"},
		{"big number", AppendBigNumber(nil, "3492890328409238509324850943850943825024385"), "(3492890328409238509324850943850943825024385\r\n"},
		{"negative big number", AppendBigNumber(nil, "-3492890328409238509324850943850943825024385"), "(-3492890328409238509324850943850943825024385\r\n"},
		{"bulk error", AppendBulkError(nil, "SYNTAX invalid syntax"), "!21\r\nSYNTAX invalid syntax\r\n"},
		{"verbatim", AppendVerbatim(nil, "txt", "Some string"), "=15\r\ntxt:Some string\r\n"},
		{"verbatim markdown", AppendVerbatim(nil, "mkd", "# hi"), "=8\r\nmkd:# hi\r\n"},
		{"verbatim bad format", AppendVerbatim(nil, "text", "x"), "=5\r\ntxt:x\r\n"},
		{"array header", AppendArrayHeader(nil, 2), "*2\r\n"},
		{"empty array header", AppendArrayHeader(nil, 0), "*0\r\n"},
		{"map header", AppendMapHeader(nil, 2), "%2\r\n"},
		{"set header", AppendSetHeader(nil, 5), "~5\r\n"},
		{"push header", AppendPushHeader(nil, 4), ">4\r\n"},
		{"attribute header", AppendAttributeHeader(nil, 1), "|1\r\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestAppendExtendsPrefix(t *testing.T) {
	b := make([]byte, 0, 64)
	b = append(b, "prefix"...)
	b = AppendArrayHeader(b, 3)
	b = AppendBulkString(b, "SET")
	b = AppendBulk(b, []byte("key"))
	b = AppendBulkInt(b, 7)
	const want = "prefix*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1\r\n7\r\n"
	if string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
}

func TestAppendValue(t *testing.T) {
	spec := []struct {
		name   string
		v      Value
		resp3  string
		resp2  string
		sameV2 bool // the RESP2 encoding equals the RESP3 one
	}{
		{name: "simple string", v: simple("OK"), resp3: "+OK\r\n", sameV2: true},
		{name: "simple string CRLF", v: simple("a\r\nb"), resp3: "+a  b\r\n", sameV2: true},
		{name: "simple error", v: Value{Type: SimpleError, Str: []byte("ERR x")}, resp3: "-ERR x\r\n", sameV2: true},
		{name: "integer", v: integer(-7), resp3: ":-7\r\n", sameV2: true},
		{name: "bulk", v: bulk("hello"), resp3: "$5\r\nhello\r\n", sameV2: true},
		{name: "empty bulk", v: bulk(""), resp3: "$0\r\n\r\n", sameV2: true},
		{name: "null", v: Value{Type: Null}, resp3: "_\r\n", resp2: "$-1\r\n"},
		{name: "true", v: Value{Type: Boolean, Int: 1}, resp3: "#t\r\n", resp2: ":1\r\n"},
		{name: "false", v: Value{Type: Boolean}, resp3: "#f\r\n", resp2: ":0\r\n"},
		{name: "double", v: double(1.23), resp3: ",1.23\r\n", resp2: "$4\r\n1.23\r\n"},
		{name: "double keeps value not text", v: Value{Type: Double, Float: 1.5, Str: []byte("1.50")}, resp3: ",1.5\r\n", resp2: "$3\r\n1.5\r\n"},
		{name: "double inf", v: double(math.Inf(1)), resp3: ",inf\r\n", resp2: "$3\r\ninf\r\n"},
		{name: "double nan", v: double(math.NaN()), resp3: ",nan\r\n", resp2: "$3\r\nnan\r\n"},
		{name: "big number", v: Value{Type: BigNumber, Str: []byte("3492890328409238509324850943850943825024385")},
			resp3: "(3492890328409238509324850943850943825024385\r\n",
			resp2: "$43\r\n3492890328409238509324850943850943825024385\r\n"},
		{name: "bulk error", v: Value{Type: BulkError, Str: []byte("SYNTAX invalid syntax")},
			resp3: "!21\r\nSYNTAX invalid syntax\r\n", resp2: "-SYNTAX invalid syntax\r\n"},
		{name: "bulk error with CRLF", v: Value{Type: BulkError, Str: []byte("ERR a\r\nb")},
			resp3: "!8\r\nERR a\r\nb\r\n", resp2: "-ERR a  b\r\n"},
		{name: "verbatim", v: Value{Type: Verbatim, Str: []byte("txt:Some string")},
			resp3: "=15\r\ntxt:Some string\r\n", resp2: "$11\r\nSome string\r\n"},
		{name: "verbatim without prefix", v: Value{Type: Verbatim, Str: []byte("hi")},
			resp3: "=6\r\ntxt:hi\r\n", resp2: "$2\r\nhi\r\n"},
		{name: "array", v: agg(Array, bulk("hello"), bulk("world")),
			resp3: "*2\r\n$5\r\nhello\r\n$5\r\nworld\r\n", sameV2: true},
		{name: "empty array", v: agg(Array), resp3: "*0\r\n", sameV2: true},
		{name: "nested array", v: agg(Array, agg(Array, integer(1), integer(2), integer(3)), agg(Array, simple("Hello"), Value{Type: SimpleError, Str: []byte("World")})),
			resp3: "*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n", sameV2: true},
		{name: "map", v: agg(Map, simple("first"), integer(1), simple("second"), integer(2)),
			resp3: "%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", resp2: "*4\r\n+first\r\n:1\r\n+second\r\n:2\r\n"},
		{name: "odd map", v: agg(Map, simple("k")), resp3: "%1\r\n+k\r\n_\r\n", resp2: "*2\r\n+k\r\n$-1\r\n"},
		{name: "set", v: agg(Set, simple("orange"), simple("apple"), Value{Type: Boolean, Int: 1}, integer(100), integer(999)),
			resp3: "~5\r\n+orange\r\n+apple\r\n#t\r\n:100\r\n:999\r\n", resp2: "*5\r\n+orange\r\n+apple\r\n:1\r\n:100\r\n:999\r\n"},
		{name: "push", v: agg(Push, simple("pubsub"), simple("message"), simple("somechannel"), simple("this is the message")),
			resp3: ">4\r\n+pubsub\r\n+message\r\n+somechannel\r\n+this is the message\r\n",
			resp2: "*4\r\n+pubsub\r\n+message\r\n+somechannel\r\n+this is the message\r\n"},
		{name: "attribute", v: withAttrs(agg(Array, integer(2039123), integer(9543892)),
			simple("key-popularity"), agg(Map, bulk("a"), Value{Type: Double, Float: 0.1923}, bulk("b"), Value{Type: Double, Float: 0.0012})),
			resp3: "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
			resp2: "*2\r\n:2039123\r\n:9543892\r\n"},
		{name: "attribute inside aggregate", v: agg(Array, withAttrs(integer(1), simple("ttl"), integer(3600)), integer(2)),
			resp3: "*2\r\n|1\r\n+ttl\r\n:3600\r\n:1\r\n:2\r\n", resp2: "*2\r\n:1\r\n:2\r\n"},
		{name: "attribute with odd pairs", v: withAttrs(integer(1), simple("k")),
			resp3: "|1\r\n+k\r\n_\r\n:1\r\n", resp2: ":1\r\n"},
		{name: "unknown type", v: Value{Type: 'x'}, resp3: "_\r\n", resp2: "$-1\r\n"},
		{name: "big number not decimal", v: Value{Type: BigNumber, Str: []byte("12a")},
			resp3: "$3\r\n12a\r\n", resp2: "$3\r\n12a\r\n"},
		{name: "big number empty", v: Value{Type: BigNumber}, resp3: "$0\r\n\r\n", resp2: "$0\r\n\r\n"},
		{name: "attribute-typed value", v: agg(Attribute, simple("k"), simple("v")),
			resp3: "%1\r\n+k\r\n+v\r\n", resp2: "*2\r\n+k\r\n+v\r\n"},
	}
	for _, tt := range spec {
		want2 := tt.resp2
		if tt.sameV2 {
			want2 = tt.resp3
		}
		if got := AppendValue(nil, tt.v, 3); string(got) != tt.resp3 {
			t.Errorf("%s: RESP3 got %q, want %q", tt.name, got, tt.resp3)
		}
		if got := AppendValue(nil, tt.v, 2); string(got) != want2 {
			t.Errorf("%s: RESP2 got %q, want %q", tt.name, got, want2)
		}
		if got := AppendValue([]byte("x"), tt.v, 3); string(got) != "x"+tt.resp3 {
			t.Errorf("%s: appending to a prefix got %q", tt.name, got)
		}
	}
}

// TestAppendValueAttributeTypedValueKeepsFraming: a Value whose own Type
// is Attribute, wherever it sits, encodes as one whole value; an attribute
// header would make a reader take the value after it as the one it
// describes, shifting every reply behind it.
func TestAppendValueAttributeTypedValueKeepsFraming(t *testing.T) {
	attr := agg(Attribute, simple("k"), simple("v"))
	for _, v := range []Value{
		attr,
		agg(Array, attr, integer(1)),
		agg(Map, simple("m"), attr),
		withAttrs(integer(1), attr, integer(2)),
	} {
		readsBackFramed(t, v)
	}
}

// readsBackFramed asserts that what AppendValue writes for v, in RESP2 and
// RESP3, reads back as one value, the value after it included.
func readsBackFramed(t *testing.T, v Value) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		enc := AppendValue(nil, v, proto)
		r := NewReader(bytes.NewReader(AppendSimpleString(enc, "NEXT")))
		if _, err := r.ReadValue(); err != nil {
			t.Errorf("%s RESP%d: %q reads back with %v", show(v), proto, enc, err)
			continue
		}
		if next, err := r.ReadValue(); err != nil || string(next.Str) != "NEXT" {
			t.Errorf("%s RESP%d %q: the value after it read as %s, %v; want NEXT", show(v), proto, enc, show(next), err)
		}
	}
}

// TestAppendValueBigNumberReadsBack: a big number whose text is not
// decimal, which a Reader would refuse as a protocol error, is written as
// a bulk string.
func TestAppendValueBigNumberReadsBack(t *testing.T) {
	for _, v := range []Value{
		{Type: BigNumber},
		{Type: BigNumber, Str: []byte("-")},
		{Type: BigNumber, Str: []byte("1.5")},
		{Type: BigNumber, Str: []byte("12\r\n34")},
		agg(Array, Value{Type: BigNumber, Str: []byte("x")}, integer(1)),
	} {
		readsBackFramed(t, v)
	}
}
