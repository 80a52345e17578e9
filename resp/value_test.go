package resp

import (
	"math"
	"testing"
)

func TestTypeString(t *testing.T) {
	tests := []struct {
		t    Type
		want string
	}{
		{SimpleString, "simple string"}, {SimpleError, "simple error"}, {Integer, "integer"},
		{BulkString, "bulk string"}, {Array, "array"}, {Null, "null"}, {Boolean, "boolean"},
		{Double, "double"}, {BigNumber, "big number"}, {BulkError, "bulk error"},
		{Verbatim, "verbatim string"}, {Map, "map"}, {Set, "set"}, {Attribute, "attribute"},
		{Push, "push"}, {Type('x'), "type 'x'"}, {Type(0), `type '\x00'`},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("Type(%q).String() = %q, want %q", byte(tt.t), got, tt.want)
		}
	}
}

func TestTypeAggregate(t *testing.T) {
	for _, typ := range []Type{SimpleString, SimpleError, Integer, BulkString, Array, Null, Boolean,
		Double, BigNumber, BulkError, Verbatim, Map, Set, Attribute, Push} {
		want := typ == Array || typ == Map || typ == Set || typ == Attribute || typ == Push
		if got := typ.Aggregate(); got != want {
			t.Errorf("%v.Aggregate() = %v, want %v", typ, got, want)
		}
	}
}

func TestValuePredicatesAndLen(t *testing.T) {
	tests := []struct {
		v              Value
		null, isErr    bool
		wantLen        int
		wantText       string
		wantTextIsNull bool
	}{
		{v: Value{Type: Null}, null: true, wantTextIsNull: true},
		{v: Value{Type: SimpleError, Str: []byte("ERR x")}, isErr: true, wantText: "ERR x"},
		{v: Value{Type: BulkError, Str: []byte("SYNTAX bad")}, isErr: true, wantText: "SYNTAX bad"},
		{v: simple("OK"), wantText: "OK"},
		{v: bulk("hello"), wantText: "hello"},
		{v: Value{Type: BigNumber, Str: []byte("-123456789012345678901234567890")}, wantText: "-123456789012345678901234567890"},
		{v: Value{Type: Double, Str: []byte("1.50"), Float: 1.5}, wantText: "1.50"},
		{v: double(math.Inf(-1)), wantText: "-inf"},
		{v: double(2.5e-10), wantText: "2.5e-10"},
		{v: Value{Type: Verbatim, Str: []byte("txt:Some string")}, wantText: "Some string"},
		{v: Value{Type: Verbatim, Str: []byte("odd")}, wantText: "odd"},
		{v: integer(math.MinInt64), wantText: "-9223372036854775808"},
		{v: Value{Type: Boolean, Int: 1}, wantText: "1"},
		{v: Value{Type: Boolean}, wantText: "0"},
		{v: agg(Array, integer(1), integer(2), integer(3)), wantLen: 3, wantTextIsNull: true},
		{v: agg(Map, simple("a"), integer(1), simple("b"), integer(2)), wantLen: 2, wantTextIsNull: true},
		{v: agg(Attribute, simple("a"), integer(1)), wantLen: 1, wantTextIsNull: true},
		{v: agg(Set, integer(1)), wantLen: 1, wantTextIsNull: true},
		{v: agg(Push), wantLen: 0, wantTextIsNull: true},
	}
	for _, tt := range tests {
		if got := tt.v.IsNull(); got != tt.null {
			t.Errorf("%s: IsNull() = %v, want %v", show(tt.v), got, tt.null)
		}
		if got := tt.v.IsError(); got != tt.isErr {
			t.Errorf("%s: IsError() = %v, want %v", show(tt.v), got, tt.isErr)
		}
		if got := tt.v.Len(); got != tt.wantLen {
			t.Errorf("%s: Len() = %d, want %d", show(tt.v), got, tt.wantLen)
		}
		if got := tt.v.Text(); got != tt.wantText {
			t.Errorf("%s: Text() = %q, want %q", show(tt.v), got, tt.wantText)
		}
		if got := tt.v.TextBytes(); (got == nil) != tt.wantTextIsNull {
			t.Errorf("%s: TextBytes() = %q, want nil: %v", show(tt.v), got, tt.wantTextIsNull)
		}
	}
}

func TestEqual(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		a, b Value
		want bool
	}{
		{"same bulk", bulk("a"), bulk("a"), true},
		{"nil and empty bulk", Value{Type: BulkString}, bulk(""), true},
		{"different bulk", bulk("a"), bulk("b"), false},
		{"bulk vs simple", bulk("a"), simple("a"), false},
		{"integers", integer(5), integer(5), true},
		{"different integers", integer(5), integer(-5), false},
		{"nan equals nan", double(nan), double(nan), true},
		{"doubles by value, not text", Value{Type: Double, Float: 1.5, Str: []byte("1.50")}, Value{Type: Double, Float: 1.5, Str: []byte("1.5")}, true},
		{"zero and negative zero", double(0), double(math.Copysign(0, -1)), true},
		{"different doubles", double(1), double(2), false},
		{"nan vs number", double(nan), double(1), false},
		{"booleans", Value{Type: Boolean, Int: 1}, Value{Type: Boolean}, false},
		{"nested equal", agg(Array, agg(Map, simple("k"), bulk("v"))), agg(Array, agg(Map, simple("k"), bulk("v"))), true},
		{"nested differs", agg(Array, agg(Map, simple("k"), bulk("v"))), agg(Array, agg(Map, simple("k"), bulk("w"))), false},
		{"lengths differ", agg(Array, integer(1)), agg(Array, integer(1), integer(1)), false},
		{"array vs set", agg(Array), agg(Set), false},
		{"attributes ignored", withAttrs(integer(1), simple("a"), simple("b")), integer(1), true},
		{"nulls", Value{Type: Null}, Value{Type: Null}, true},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.b.Equal(tt.a); got != tt.want {
			t.Errorf("%s: reversed Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCloneIsDeepAndIndependent(t *testing.T) {
	orig := agg(Array,
		withAttrs(bulk("value"), simple("ttl"), integer(3)),
		agg(Map, simple("k"), agg(Set, bulk("x"), bulk("y"))),
		bulk(""),
		agg(Push),
		Value{Type: Double, Float: 0.25, Str: []byte("0.25")},
		Value{Type: Null},
	)
	orig = withAttrs(orig, simple("top"), agg(Array, bulk("nested attr")))
	c := orig.Clone()
	if !same(c, orig) {
		t.Fatalf("Clone = %s, want %s", show(c), show(orig))
	}
	// Scribble over every byte and element of the original.
	var scribble func(v *Value)
	scribble = func(v *Value) {
		for i := range v.Str {
			v.Str[i] = '#'
		}
		for i := range v.Elems {
			scribble(&v.Elems[i])
		}
		if v.Attrs != nil {
			scribble(v.Attrs)
		}
		v.Int++
	}
	want := orig.Clone()
	scribble(&orig)
	if !same(c, want) {
		t.Fatalf("Clone changed with its original: %s, want %s", show(c), show(want))
	}
	if got := c.Elems[2].Str; got == nil || len(got) != 0 {
		t.Errorf("Clone of an empty bulk = %#v, want empty non-nil", got)
	}
	if c := (Value{Type: Null}).Clone(); !c.IsNull() || c.Str != nil || c.Elems != nil {
		t.Errorf("Clone of null = %s", show(c))
	}
}

func TestCloneAppendDoesNotClobber(t *testing.T) {
	c := agg(Array, bulk("ab"), bulk("cd")).Clone()
	_ = append(c.Elems[0].Str, 'X') // capacity is clipped: must not reach "cd"
	if got := string(c.Elems[1].Str); got != "cd" {
		t.Fatalf("second element = %q after append to the first, want %q", got, "cd")
	}
}

// TestCloneAppend: clones land in the arena's free capacity, capped so
// that appending to one copies, and a full arena starts a new one without
// touching the bytes already handed out; nested values clone whole.
func TestCloneAppend(t *testing.T) {
	arena := make([]byte, 0, 8)
	a, arena := Value{Type: BulkString, Str: []byte("abcd")}.CloneAppend(arena)
	b, arena := Value{Type: BulkString, Str: []byte("efgh")}.CloneAppend(arena)
	if string(a.Str) != "abcd" || string(b.Str) != "efgh" || cap(a.Str) != 4 {
		t.Fatalf("clones %q %q (cap %d)", a.Str, b.Str, cap(a.Str))
	}
	first := arena
	c, arena := Value{Type: SimpleString, Str: []byte("overflow")}.CloneAppend(arena)
	if &arena[0] == &first[0] || string(c.Str) != "overflow" {
		t.Fatalf("a full arena was reused")
	}
	_ = append(a.Str, 'X') // must copy, not overwrite b
	if string(b.Str) != "efgh" {
		t.Errorf("appending to a clone overwrote the next one: %q", b.Str)
	}
	n, _ := Value{Type: Integer, Int: 7}.CloneAppend(nil)
	if n.Int != 7 || n.Str != nil {
		t.Errorf("integer clone = %+v", n)
	}
	nested := Value{Type: Array, Elems: []Value{{Type: BulkString, Str: []byte("x")}, {Type: Null}}}
	cl, _ := nested.CloneAppend(nil)
	nested.Elems[0].Str[0] = 'y'
	if !cl.Equal(Value{Type: Array, Elems: []Value{{Type: BulkString, Str: []byte("x")}, {Type: Null}}}) {
		t.Errorf("nested clone shares memory: %+v", cl)
	}
}
