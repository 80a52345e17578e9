package respire

import (
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
