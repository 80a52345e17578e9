package respire

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/respire-go/respire/resp"
)

// TestReplyStringsFlattensMaps proves that Reply.Strings gives the same
// flat field-value list for a RESP3 map as for RESP2's flat array, so a raw
// HGETALL converts the same way in both protocols.
func TestReplyStringsFlattensMaps(t *testing.T) {
	bulk := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	want := []string{"f1", "v1", "f2", "v2"}
	for _, typ := range []resp.Type{resp.Map, resp.Array} {
		r := Reply{v: resp.Value{Type: typ, Elems: []resp.Value{bulk("f1"), bulk("v1"), bulk("f2"), bulk("v2")}}}
		got, err := r.Strings()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%v: Strings() = %q, %v; want %q, nil", typ, got, err, want)
		}
	}
}

// TestZeroReplyConvertsAsNull proves the documented "the zero Reply is an
// absent value": every converter gives the zero Reply the result and the
// error it gives a null reply.
func TestZeroReplyConvertsAsNull(t *testing.T) {
	null := Reply{v: resp.Value{Type: resp.Null}}
	convs := map[string]func(Reply) (any, error){
		"String":     func(r Reply) (any, error) { return r.String() },
		"Int64":      func(r Reply) (any, error) { return r.Int64() },
		"Float64":    func(r Reply) (any, error) { return r.Float64() },
		"Bool":       func(r Reply) (any, error) { return r.Bool() },
		"Strings":    func(r Reply) (any, error) { return r.Strings() },
		"StringMap":  func(r Reply) (any, error) { return r.StringMap() },
		"Int64s":     func(r Reply) (any, error) { return r.Int64s() },
		"Float64s":   func(r Reply) (any, error) { return r.Float64s() },
		"Int64Map":   func(r Reply) (any, error) { return r.Int64Map() },
		"Float64Map": func(r Reply) (any, error) { return r.Float64Map() },
		"Slice":      func(r Reply) (any, error) { return r.Slice() },
		"Any":        func(r Reply) (any, error) { return r.Any() },
	}
	for name, conv := range convs {
		got, err := conv(Reply{})
		want, wantErr := conv(null)
		if !reflect.DeepEqual(got, want) || !errors.Is(err, wantErr) {
			t.Errorf("%s: zero Reply gives %#v, %v; a null reply gives %#v, %v", name, got, err, want, wantErr)
		}
	}
}

// TestReplyFormatPrintsTheValue: fmt prints a Reply as its value (what
// Any returns; null as <nil>, an error reply as its text), not as the
// struct's internals, with the verb's flags applied.
func TestReplyFormatPrintsTheValue(t *testing.T) {
	bulk := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	for _, tt := range []struct {
		r      Reply
		format string
		want   string
	}{
		{Reply{v: bulk("hello")}, "%v", "hello"},
		{Reply{v: bulk("hello")}, "%q", `"hello"`},
		{Reply{v: resp.Value{Type: resp.Integer, Int: 58}}, "%v", "58"},
		{Reply{v: resp.Value{Type: resp.Integer, Int: 58}}, "%5d", "   58"},
		{Reply{v: resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("a"), bulk("b")}}}, "%v", "[a b]"},
		{Reply{v: resp.Value{Type: resp.Null}}, "%v", "<nil>"},
		{Reply{}, "%v", "<nil>"},
		{Reply{v: resp.Value{Type: resp.SimpleError, Str: []byte("ERR unknown command")}}, "%v", "ERR unknown command"},
	} {
		if got := fmt.Sprintf(tt.format, tt.r); got != tt.want {
			t.Errorf("Sprintf(%q, %v reply) = %q, want %q", tt.format, tt.r.v.Type, got, tt.want)
		}
	}
}
