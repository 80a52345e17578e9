package resp

import (
	"bytes"
	"testing"
	"testing/iotest"
)

func TestSmokeRoundTrip(t *testing.T) {
	var b []byte
	v := Value{Type: Array, Elems: []Value{
		{Type: BulkString, Str: []byte("hello")},
		{Type: Integer, Int: -42},
		{Type: Map, Elems: []Value{{Type: SimpleString, Str: []byte("k")}, {Type: Double, Float: 1.5, Str: []byte("1.5")}}},
		{Type: Null},
		{Type: Boolean, Int: 1},
		{Type: Verbatim, Str: []byte("txt:hi there")},
		{Type: Push, Elems: []Value{{Type: BigNumber, Str: []byte("123456789012345678901234567890")}}},
	}}
	for i := 0; i < 1000; i++ {
		b = AppendValue(b, v, 3)
	}
	r := NewReader(iotest.OneByteReader(bytes.NewReader(b)))
	var kept []Value
	for i := 0; i < 1000; i++ {
		got, err := r.ReadValue()
		if err != nil {
			t.Fatal(i, err)
		}
		if !got.Equal(v) {
			t.Fatalf("%d: got %+v", i, got)
		}
		kept = append(kept, got.Clone())
	}
	for _, k := range kept {
		if !k.Equal(v) {
			t.Fatal("clone changed")
		}
	}
	if _, err := r.ReadValue(); err == nil {
		t.Fatal("want EOF")
	}
}
