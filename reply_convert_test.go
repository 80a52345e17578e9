package respire

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// Hand-built reply values. The cv prefix keeps them apart from the other
// test files' helpers.
func cvBulk(s string) resp.Value   { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
func cvSimple(s string) resp.Value { return resp.Value{Type: resp.SimpleString, Str: []byte(s)} }
func cvInt(n int64) resp.Value     { return resp.Value{Type: resp.Integer, Int: n} }
func cvBig(s string) resp.Value    { return resp.Value{Type: resp.BigNumber, Str: []byte(s)} }
func cvVerb(s string) resp.Value   { return resp.Value{Type: resp.Verbatim, Str: []byte("txt:" + s)} }
func cvErr(s string) resp.Value    { return resp.Value{Type: resp.SimpleError, Str: []byte(s)} }

// cvDouble is a RESP3 double as the reader decodes it: text and value.
func cvDouble(f float64) resp.Value {
	return resp.Value{Type: resp.Double, Float: f, Str: []byte(fmt.Sprint(f))}
}

func cvBool(b bool) resp.Value {
	v := resp.Value{Type: resp.Boolean}
	if b {
		v.Int = 1
	}
	return v
}

var cvNull = resp.Value{Type: resp.Null}

func cvAgg(t resp.Type, elems ...resp.Value) resp.Value {
	return resp.Value{Type: t, Elems: elems}
}
func cvArr(elems ...resp.Value) resp.Value { return cvAgg(resp.Array, elems...) }
func cvMap(elems ...resp.Value) resp.Value { return cvAgg(resp.Map, elems...) }
func cvSet(elems ...resp.Value) resp.Value { return cvAgg(resp.Set, elems...) }

// convCase is one reply, in each shape the protocols send it (RESP2's and
// RESP3's, or one shape when they agree), and what it converts to.
type convCase[T any] struct {
	name   string
	shapes []resp.Value
	want   T
	err    error  // matched with errors.Is; nil when the conversion succeeds
	errHas string // a part of the error message, when err is set
}

// runConvCases checks conv on every shape of every case: each shape must
// give the same result, so a reply converts the same in both protocols.
func runConvCases[T any](t *testing.T, conv func(Reply) (T, error), cases []convCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, v := range tc.shapes {
				got, err := conv(Reply{v: v})
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Errorf("shape %d (%v): error %v; want one matching %v", i, v.Type, err, tc.err)
					} else if !strings.Contains(err.Error(), tc.errHas) {
						t.Errorf("shape %d (%v): error %q; want it to contain %q", i, v.Type, err, tc.errHas)
					}
					continue
				}
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("shape %d (%v): got %#v, %v; want %#v, nil", i, v.Type, got, err, tc.want)
				}
			}
		})
	}
}

func TestReplyInt64s(t *testing.T) {
	runConvCases(t, Reply.Int64s, []convCase[[]int64]{
		{name: "Integers", shapes: []resp.Value{cvArr(cvInt(1), cvInt(-2)), cvSet(cvInt(1), cvInt(-2))}, want: []int64{1, -2}},
		{name: "Text", shapes: []resp.Value{cvArr(cvBulk("1"), cvSimple("-2")), cvArr(cvBig("1"), cvVerb("-2"))}, want: []int64{1, -2}},
		{name: "IntegralDoubles", shapes: []resp.Value{cvArr(cvBulk("3"), cvBulk("-4")), cvArr(cvDouble(3), cvDouble(-4))}, want: []int64{3, -4}},
		{name: "Booleans", shapes: []resp.Value{cvArr(cvInt(1), cvInt(0)), cvArr(cvBool(true), cvBool(false))}, want: []int64{1, 0}},
		{name: "MapFlattened", shapes: []resp.Value{cvArr(cvBulk("10"), cvInt(20)), cvMap(cvBulk("10"), cvInt(20))}, want: []int64{10, 20}},
		{name: "Empty", shapes: []resp.Value{cvArr(), cvSet()}, want: []int64{}},
		{name: "NullReply", shapes: []resp.Value{cvNull, {}}, want: nil},
		{name: "NullElement", shapes: []resp.Value{cvArr(cvInt(1), cvNull)}, err: ErrNil, errHas: "element 1"},
		{name: "NotANumber", shapes: []resp.Value{cvArr(cvBulk("abc"))}, err: ErrUnexpectedReply, errHas: `element 0: cannot convert bulk string "abc" to integer`},
		{name: "Fraction", shapes: []resp.Value{cvArr(cvBulk("1.5")), cvArr(cvDouble(1.5))}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "Overflow", shapes: []resp.Value{cvArr(cvBulk("9223372036854775808")), cvArr(cvBig("9223372036854775808")), cvArr(cvDouble(1e19))}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "NestedArray", shapes: []resp.Value{cvArr(cvArr(cvInt(1)))}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "ErrorElement", shapes: []resp.Value{cvArr(cvErr("ERR x"))}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "Scalar", shapes: []resp.Value{cvInt(1), cvBulk("1")}, err: ErrUnexpectedReply, errHas: "array of integers"},
	})
}

func TestReplyFloat64s(t *testing.T) {
	inf := math.Inf(1)
	runConvCases(t, Reply.Float64s, []convCase[[]float64]{
		{name: "ZMSCORE", shapes: []resp.Value{cvArr(cvBulk("1.5"), cvBulk("-inf"), cvBulk("inf")), cvArr(cvDouble(1.5), cvDouble(-inf), cvDouble(inf))}, want: []float64{1.5, -inf, inf}},
		{name: "Integers", shapes: []resp.Value{cvArr(cvInt(2), cvBulk("3")), cvArr(cvInt(2), cvDouble(3))}, want: []float64{2, 3}},
		{name: "Booleans", shapes: []resp.Value{cvArr(cvInt(1), cvInt(0)), cvArr(cvBool(true), cvBool(false))}, want: []float64{1, 0}},
		{name: "BigAndVerbatim", shapes: []resp.Value{cvArr(cvBulk("12"), cvBulk("0.25")), cvArr(cvBig("12"), cvVerb("0.25"))}, want: []float64{12, 0.25}},
		{name: "MapFlattened", shapes: []resp.Value{cvArr(cvBulk("1"), cvBulk("2.5")), cvMap(cvBulk("1"), cvDouble(2.5))}, want: []float64{1, 2.5}},
		{name: "Empty", shapes: []resp.Value{cvArr()}, want: []float64{}},
		{name: "NullReply", shapes: []resp.Value{cvNull, {}}, want: nil},
		{name: "NullElement", shapes: []resp.Value{cvArr(cvDouble(1), cvNull), cvArr(cvBulk("1"), cvNull)}, err: ErrNil, errHas: "element 1: nil reply"},
		{name: "NotANumber", shapes: []resp.Value{cvArr(cvBulk("x"))}, err: ErrUnexpectedReply, errHas: `cannot convert bulk string "x" to number`},
		{name: "NestedArray", shapes: []resp.Value{cvArr(cvArr())}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "Scalar", shapes: []resp.Value{cvDouble(1), cvBulk("1")}, err: ErrUnexpectedReply, errHas: "array of numbers"},
	})
}

func TestReplyFloat64Map(t *testing.T) {
	want := map[string]float64{"a": 1, "b": 2.5, "c": math.Inf(-1)}
	runConvCases(t, Reply.Float64Map, []convCase[map[string]float64]{
		{name: "WithScores", shapes: []resp.Value{
			cvArr(cvBulk("a"), cvBulk("1"), cvBulk("b"), cvBulk("2.5"), cvBulk("c"), cvBulk("-inf")),                              // RESP2
			cvArr(cvArr(cvBulk("a"), cvDouble(1)), cvArr(cvBulk("b"), cvDouble(2.5)), cvArr(cvBulk("c"), cvDouble(math.Inf(-1)))), // RESP3 pairs
			cvArr(cvBulk("a"), cvDouble(1), cvBulk("b"), cvDouble(2.5), cvBulk("c"), cvDouble(math.Inf(-1))),                      // flat doubles
			cvMap(cvBulk("a"), cvDouble(1), cvBulk("b"), cvDouble(2.5), cvBulk("c"), cvDouble(math.Inf(-1))),                      // map
		}, want: want},
		{name: "OnePair", shapes: []resp.Value{cvArr(cvBulk("a"), cvBulk("1")), cvArr(cvBulk("a"), cvDouble(1)), cvArr(cvArr(cvBulk("a"), cvDouble(1)))}, want: map[string]float64{"a": 1}},
		{name: "RepeatedKeyLastWins", shapes: []resp.Value{cvArr(cvBulk("a"), cvInt(1), cvBulk("a"), cvInt(2))}, want: map[string]float64{"a": 2}},
		{name: "Empty", shapes: []resp.Value{cvArr(), cvMap()}, want: map[string]float64{}},
		{name: "NullReply", shapes: []resp.Value{cvNull, {}}, want: map[string]float64{}},
		{name: "NullValue", shapes: []resp.Value{cvArr(cvBulk("a"), cvNull), cvMap(cvBulk("a"), cvNull)}, err: ErrNil, errHas: `value of "a"`},
		{name: "BadValue", shapes: []resp.Value{cvArr(cvBulk("a"), cvBulk("one")), cvArr(cvArr(cvBulk("a"), cvBulk("one")))}, err: ErrUnexpectedReply, errHas: `value of "a": cannot convert bulk string "one" to number`},
		{name: "OddFlat", shapes: []resp.Value{cvArr(cvBulk("a"), cvBulk("1"), cvBulk("b"))}, err: ErrUnexpectedReply, errHas: "key-value pairs"},
		{name: "ShortPair", shapes: []resp.Value{cvArr(cvArr(cvBulk("a"), cvDouble(1)), cvArr(cvBulk("b")))}, err: ErrUnexpectedReply, errHas: "element 1"},
		{name: "MixedShapes", shapes: []resp.Value{cvArr(cvArr(cvBulk("a"), cvDouble(1)), cvBulk("b"))}, err: ErrUnexpectedReply, errHas: "element 1"},
		{name: "AggregateKey", shapes: []resp.Value{cvMap(cvArr(), cvInt(1))}, err: ErrUnexpectedReply, errHas: "string key"},
		{name: "NullKey", shapes: []resp.Value{cvArr(cvNull, cvInt(1))}, err: ErrUnexpectedReply, errHas: "string key"},
		{name: "Scalar", shapes: []resp.Value{cvBulk("a"), cvSet(cvBulk("a"), cvBulk("1"))}, err: ErrUnexpectedReply, errHas: "want map"},
	})
}

func TestReplyInt64Map(t *testing.T) {
	runConvCases(t, Reply.Int64Map, []convCase[map[string]int64]{
		{name: "Counts", shapes: []resp.Value{
			cvArr(cvBulk("ch1"), cvInt(2), cvBulk("ch2"), cvInt(0)),
			cvMap(cvBulk("ch1"), cvInt(2), cvBulk("ch2"), cvInt(0)),
			cvArr(cvBulk("ch1"), cvBulk("2"), cvBulk("ch2"), cvBulk("0")),
			cvArr(cvArr(cvBulk("ch1"), cvInt(2)), cvArr(cvBulk("ch2"), cvInt(0))),
		}, want: map[string]int64{"ch1": 2, "ch2": 0}},
		{name: "Booleans", shapes: []resp.Value{cvArr(cvBulk("ok"), cvInt(1)), cvMap(cvBulk("ok"), cvBool(true))}, want: map[string]int64{"ok": 1}},
		{name: "IntegerKeys", shapes: []resp.Value{cvArr(cvBulk("7"), cvInt(1)), cvMap(cvInt(7), cvInt(1))}, want: map[string]int64{"7": 1}},
		{name: "NullReply", shapes: []resp.Value{cvNull}, want: map[string]int64{}},
		{name: "NullValue", shapes: []resp.Value{cvMap(cvBulk("k"), cvNull)}, err: ErrNil, errHas: `value of "k"`},
		{name: "Fraction", shapes: []resp.Value{cvArr(cvBulk("k"), cvBulk("0.5")), cvMap(cvBulk("k"), cvDouble(0.5))}, err: ErrUnexpectedReply, errHas: `value of "k"`},
		{name: "Scalar", shapes: []resp.Value{cvInt(3)}, err: ErrUnexpectedReply, errHas: "want map"},
	})
}

func TestReplySlice(t *testing.T) {
	runConvCases(t, Reply.Slice, []convCase[[]any]{
		{name: "HGETALL", shapes: []resp.Value{
			cvArr(cvBulk("f"), cvBulk("v"), cvBulk("n"), cvBulk("1")),
			cvMap(cvBulk("f"), cvBulk("v"), cvBulk("n"), cvBulk("1")),
		}, want: []any{"f", "v", "n", "1"}},
		{name: "SetAsArray", shapes: []resp.Value{cvArr(cvBulk("a"), cvBulk("b")), cvSet(cvBulk("a"), cvBulk("b")), cvAgg(resp.Push, cvBulk("a"), cvBulk("b"))}, want: []any{"a", "b"}},
		{name: "Nulls", shapes: []resp.Value{cvArr(cvBulk("x"), cvNull)}, want: []any{"x", nil}},
		{name: "Nested", shapes: []resp.Value{cvArr(cvArr(cvBulk("a"), cvInt(1)), cvArr())}, want: []any{[]any{"a", int64(1)}, []any{}}},
		{name: "VerbatimAndBigNumber", shapes: []resp.Value{
			cvArr(cvBulk("hi"), cvBulk("123456789012345678901234567890")),
			cvArr(cvVerb("hi"), cvBig("123456789012345678901234567890")),
		}, want: []any{"hi", "123456789012345678901234567890"}},
		{name: "Scalars", shapes: []resp.Value{cvArr(cvSimple("OK"), cvInt(-3), cvDouble(0.5), cvBool(false))}, want: []any{"OK", int64(-3), 0.5, false}},
		{name: "Empty", shapes: []resp.Value{cvArr(), cvMap()}, want: []any{}},
		{name: "NullReply", shapes: []resp.Value{cvNull, {}}, want: nil},
		{name: "NestedBadMap", shapes: []resp.Value{cvArr(cvInt(1), cvMap(cvArr(), cvInt(1)))}, err: ErrUnexpectedReply, errHas: "element 1"},
		{name: "Scalar", shapes: []resp.Value{cvBulk("a"), cvInt(1)}, err: ErrUnexpectedReply, errHas: "want array"},
	})
}

func TestReplyAny(t *testing.T) {
	runConvCases(t, Reply.Any, []convCase[any]{
		{name: "SimpleString", shapes: []resp.Value{cvSimple("OK")}, want: "OK"},
		{name: "BulkVerbatim", shapes: []resp.Value{cvBulk("hi"), cvVerb("hi")}, want: "hi"},
		{name: "EmptyBulk", shapes: []resp.Value{cvBulk("")}, want: ""},
		{name: "BigNumber", shapes: []resp.Value{cvBulk("-123456789012345678901234567890"), cvBig("-123456789012345678901234567890")}, want: "-123456789012345678901234567890"},
		{name: "Integer", shapes: []resp.Value{cvInt(42)}, want: int64(42)},
		{name: "Double", shapes: []resp.Value{cvDouble(2.5)}, want: 2.5},
		{name: "DoubleWithoutText", shapes: []resp.Value{{Type: resp.Double, Float: math.Inf(1)}}, want: math.Inf(1)},
		{name: "Boolean", shapes: []resp.Value{cvBool(true)}, want: true},
		{name: "Null", shapes: []resp.Value{cvNull, {}}, want: nil},
		{name: "Array", shapes: []resp.Value{cvArr(cvBulk("a"), cvNull, cvArr(cvInt(1))), cvSet(cvBulk("a"), cvNull, cvSet(cvInt(1)))}, want: []any{"a", nil, []any{int64(1)}}},
		{name: "Map", shapes: []resp.Value{cvMap(cvBulk("name"), cvBulk("x"), cvSimple("n"), cvInt(3), cvInt(7), cvBool(true), cvBulk("sub"), cvMap(cvBulk("k"), cvNull))},
			want: map[string]any{"name": "x", "n": int64(3), "7": true, "sub": map[string]any{"k": nil}}},
		{name: "MapInArray", shapes: []resp.Value{cvArr(cvMap(cvBulk("a"), cvDouble(1)))}, want: []any{map[string]any{"a": 1.0}}},
		{name: "AttributeIgnored", shapes: []resp.Value{{Type: resp.Integer, Int: 5, Attrs: &resp.Value{Type: resp.Attribute, Elems: []resp.Value{cvBulk("ttl"), cvInt(3)}}}}, want: int64(5)},
		{name: "NestedError", shapes: []resp.Value{cvArr(cvInt(1), cvErr("WRONGTYPE bad"))}, want: []any{int64(1), &ServerError{Code: "WRONGTYPE", Message: "WRONGTYPE bad"}}},
		{name: "TopLevelError", shapes: []resp.Value{cvErr("ERR boom")}, err: &ServerError{Code: "ERR"}, errHas: "ERR boom"},
		{name: "AggregateKey", shapes: []resp.Value{cvMap(cvArr(), cvInt(1))}, err: ErrUnexpectedReply, errHas: "want string key, got array"},
		{name: "NullKeyNested", shapes: []resp.Value{cvArr(cvMap(cvNull, cvInt(1)))}, err: ErrUnexpectedReply, errHas: "element 0"},
		{name: "BadValueNested", shapes: []resp.Value{cvMap(cvBulk("k"), cvMap(cvBulk("a")))}, err: ErrUnexpectedReply, errHas: `value of "k"`},
	})
}

// cvLevel implements encoding.TextUnmarshaler: "low" or "high".
type cvLevel int

func (l *cvLevel) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("unknown level")
	}
	return nil
}

type cvBase struct {
	ID   int64  `redis:"id"`
	Name string `redis:"name"` // hidden by cvProfile.Name, which is shallower
}

// cvProfile has a field of each kind Scan supports.
type cvProfile struct {
	cvBase
	Name    string        `redis:"name"`
	Raw     []byte        `redis:"raw"`
	Admin   bool          `redis:"admin"`
	Age     int           `redis:"age"`
	Small   int8          `redis:"small"`
	Count   uint32        `redis:"count"`
	Big     uint64        `redis:"big"`
	Ratio   float64       `redis:"ratio"`
	Ratio32 float32       `redis:"ratio32"`
	Idle    time.Duration `redis:"idle"`
	Nick    *string       `redis:"nick"`
	Score   *float64      `redis:"score"`
	Level   cvLevel       `redis:"level"`
	Born    *time.Time    `redis:"born"`
	Skipped string        `redis:"-"`
	Plain   string        // untagged: key "Plain"
	Opt     string        `redis:"opt,omitempty"`
	hidden  string
}

func TestReplyScan(t *testing.T) {
	born := time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC)
	nick, score := "ada", 9.5
	want := cvProfile{
		cvBase: cvBase{ID: 7}, Name: "Ada", Raw: []byte("\x00raw"), Admin: true, Age: 36, Small: -128,
		Count: 4000000000, Big: math.MaxUint64, Ratio: 0.5, Ratio32: 0.25, Idle: 1500 * time.Millisecond,
		Nick: &nick, Score: &score, Level: 2, Born: &born, Plain: "p", Opt: "o",
	}
	kv := func(typ resp.Type, pairs ...resp.Value) resp.Value { return cvAgg(typ, pairs...) }
	resp2 := kv(resp.Array,
		cvBulk("id"), cvBulk("7"), cvBulk("name"), cvBulk("Ada"), cvBulk("raw"), cvBulk("\x00raw"),
		cvBulk("admin"), cvBulk("1"), cvBulk("age"), cvBulk("36"), cvBulk("small"), cvBulk("-128"),
		cvBulk("count"), cvBulk("4000000000"), cvBulk("big"), cvBulk("18446744073709551615"),
		cvBulk("ratio"), cvBulk("0.5"), cvBulk("ratio32"), cvBulk("0.25"), cvBulk("idle"), cvBulk("1500"),
		cvBulk("nick"), cvBulk("ada"), cvBulk("score"), cvBulk("9.5"), cvBulk("level"), cvBulk("high"),
		cvBulk("born"), cvBulk("1815-12-10T00:00:00Z"), cvBulk("Skipped"), cvBulk("no"), cvBulk("skipped"), cvBulk("no"),
		cvBulk("Plain"), cvBulk("p"), cvBulk("opt"), cvBulk("o"), cvBulk("hidden"), cvBulk("no"), cvBulk("unknown"), cvBulk("x"),
	)
	resp3 := kv(resp.Map,
		cvBulk("id"), cvInt(7), cvBulk("name"), cvVerb("Ada"), cvBulk("raw"), cvBulk("\x00raw"),
		cvBulk("admin"), cvBool(true), cvBulk("age"), cvDouble(36), cvBulk("small"), cvInt(-128),
		cvBulk("count"), cvInt(4000000000), cvBulk("big"), cvBig("18446744073709551615"),
		cvBulk("ratio"), cvDouble(0.5), cvBulk("ratio32"), cvDouble(0.25), cvBulk("idle"), cvInt(1500),
		cvBulk("nick"), cvSimple("ada"), cvBulk("score"), cvDouble(9.5), cvBulk("level"), cvBulk("high"),
		cvBulk("born"), cvBulk("1815-12-10T00:00:00Z"), cvBulk("Skipped"), cvBulk("no"),
		cvBulk("Plain"), cvBulk("p"), cvBulk("opt"), cvBulk("o"), cvBulk("unknown"), cvArr(cvInt(1)),
	)
	var pairs []resp.Value
	for i := 0; i < len(resp3.Elems); i += 2 {
		pairs = append(pairs, cvArr(resp3.Elems[i], resp3.Elems[i+1]))
	}
	for _, v := range []resp.Value{resp2, resp3, cvArr(pairs...)} {
		var got cvProfile
		if err := (Reply{v: v}).Scan(&got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: Scan = %v\n got %+v\nwant %+v", v.Type, err, got, want)
		}
	}

	t.Run("BytesAreCopied", func(t *testing.T) {
		v := cvMap(cvBulk("raw"), cvBulk("abc"))
		var got cvProfile
		if err := (Reply{v: v}).Scan(&got); err != nil {
			t.Fatal(err)
		}
		v.Elems[1].Str[0] = 'X'
		if string(got.Raw) != "abc" {
			t.Errorf("Raw = %q after the reply changed; want \"abc\"", got.Raw)
		}
	})

	t.Run("NullValues", func(t *testing.T) {
		old := "old"
		got := cvProfile{Nick: &old, Age: 5, Name: "n", Level: 1, Born: &born, Raw: []byte("r")}
		v := cvArr(cvBulk("nick"), cvNull, cvBulk("age"), cvNull, cvBulk("name"), cvNull, cvBulk("level"), cvNull, cvBulk("born"), cvNull, cvBulk("raw"), cvNull, cvBulk("score"), cvNull)
		if err := (Reply{v: v}).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cvProfile{}) {
			t.Errorf("after null values got %+v; want the zero cvProfile", got)
		}
	})

	t.Run("UntouchedAndRepeated", func(t *testing.T) {
		got := cvProfile{Plain: "kept"}
		if err := (Reply{v: cvMap(cvBulk("age"), cvInt(1), cvBulk("age"), cvInt(2))}).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got.Plain != "kept" || got.Age != 2 {
			t.Errorf("got Plain %q, Age %d; want \"kept\", 2 (fields without keys are left, the last value wins)", got.Plain, got.Age)
		}
	})

	t.Run("EmptyAndNullReply", func(t *testing.T) {
		got := cvProfile{Age: 3}
		if err := (Reply{v: cvArr()}).Scan(&got); err != nil || got.Age != 3 {
			t.Errorf("empty map: Scan = %v, Age %d; want nil, 3", err, got.Age)
		}
		for _, v := range []resp.Value{cvNull, {}} {
			if err := (Reply{v: v}).Scan(&got); !errors.Is(err, ErrNil) || got.Age != 3 {
				t.Errorf("null reply %v: Scan = %v, Age %d; want ErrNil, 3", v.Type, err, got.Age)
			}
		}
	})

	t.Run("Bools", func(t *testing.T) {
		for _, tc := range []struct {
			v    resp.Value
			want bool
		}{
			{cvBulk("yes"), true}, {cvBulk("no"), false}, {cvBulk("TRUE"), true}, {cvBulk("f"), false},
			{cvInt(0), false}, {cvInt(1), true}, {cvBool(false), false}, {cvSimple("1"), true},
		} {
			got := cvProfile{Admin: !tc.want}
			if err := (Reply{v: cvMap(cvBulk("admin"), tc.v)}).Scan(&got); err != nil || got.Admin != tc.want {
				t.Errorf("admin %v %q: got %v, %v; want %v", tc.v.Type, tc.v.TextBytes(), got.Admin, err, tc.want)
			}
		}
	})
}

func TestReplyScanValueErrors(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		values []resp.Value // the same failure in each protocol's shape
		errHas string
	}{
		{"IntOverflow", "small", []resp.Value{cvBulk("300"), cvInt(300), cvDouble(300)}, `field cvProfile.Small (key "small"): cannot convert`},
		{"IntNotNumber", "age", []resp.Value{cvBulk("old")}, `field cvProfile.Age (key "age")`},
		{"IntFraction", "age", []resp.Value{cvBulk("1.5"), cvDouble(1.5)}, "cvProfile.Age"},
		{"IntFromBigNumber", "age", []resp.Value{cvBig("99999999999999999999")}, "value out of range"},
		{"UintNegative", "count", []resp.Value{cvBulk("-1"), cvInt(-1), cvDouble(-1)}, "cvProfile.Count"},
		{"UintOverflow", "count", []resp.Value{cvBulk("4294967296"), cvInt(1 << 32)}, "value out of range"},
		{"Uint64Overflow", "big", []resp.Value{cvBulk("18446744073709551616"), cvBig("18446744073709551616")}, "cvProfile.Big"},
		{"BoolWord", "admin", []resp.Value{cvBulk("maybe")}, `cannot convert bulk string "maybe" to boolean`},
		{"BoolInteger", "admin", []resp.Value{cvBulk("2"), cvInt(2)}, "cvProfile.Admin"},
		{"Float", "ratio", []resp.Value{cvBulk("half")}, "cvProfile.Ratio"},
		{"Float32Overflow", "ratio32", []resp.Value{cvBulk("1e300"), cvDouble(1e300)}, "cvProfile.Ratio32"},
		{"DurationOverflow", "idle", []resp.Value{cvBulk("9223372036854775"), cvInt(9223372036854775)}, "cvProfile.Idle"},
		{"DurationText", "idle", []resp.Value{cvBulk("1s")}, "cvProfile.Idle"},
		{"TextUnmarshaler", "level", []resp.Value{cvBulk("mid")}, `field cvProfile.Level (key "level"): cannot convert bulk string "mid" to respire.cvLevel: unknown level`},
		{"PointerTextUnmarshaler", "born", []resp.Value{cvBulk("yesterday")}, "cvProfile.Born"},
		{"PointerTarget", "score", []resp.Value{cvBulk("x")}, "cvProfile.Score"},
		{"AggregateIntoString", "name", []resp.Value{cvArr(cvBulk("a")), cvMap()}, "cvProfile.Name"},
		{"ErrorIntoString", "name", []resp.Value{cvErr("ERR no")}, "cvProfile.Name"},
		{"AggregateIntoText", "level", []resp.Value{cvSet()}, "cvProfile.Level"},
		{"PromotedField", "id", []resp.Value{cvBulk("x")}, `field cvProfile.cvBase.ID (key "id")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.values {
				for _, typ := range []resp.Type{resp.Array, resp.Map} {
					var got cvProfile
					err := Reply{v: cvAgg(typ, cvBulk(tc.key), v)}.Scan(&got)
					if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tc.errHas) {
						t.Errorf("%v %v %q: Scan = %v; want ErrUnexpectedReply containing %q", typ, v.Type, v.TextBytes(), err, tc.errHas)
					}
				}
			}
		})
	}

	shapes := []struct {
		name   string
		v      resp.Value
		errHas string
	}{
		{"Scalar", cvBulk("x"), "want map, got bulk string"},
		{"Set", cvSet(cvBulk("a"), cvBulk("b")), "want map, got set"},
		{"OddFlat", cvArr(cvBulk("a")), "key-value pairs"},
		{"AggregateKey", cvArr(cvArr(cvArr(), cvInt(1))), "string key"},
	}
	for _, tc := range shapes {
		var got cvProfile
		if err := (Reply{v: tc.v}).Scan(&got); !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: Scan = %v; want ErrUnexpectedReply containing %q", tc.name, err, tc.errHas)
		}
	}
}

func TestReplyScanBadDestination(t *testing.T) {
	type withMap struct {
		A int               `redis:"a"`
		M map[string]string `redis:"m"`
	}
	type withSkippedMap struct {
		A int               `redis:"a"`
		M map[string]string `redis:"-"`
		c chan int
	}
	type withSlice struct{ S []string }
	type withPtrPtr struct{ P **int }
	type withEmbeddedPtr struct{ *cvBase }
	type withEmbeddedExportedPtr struct {
		A int `redis:"a"`
		*strings.Builder
	}
	type inner struct{ X int }
	type withStruct struct{ In inner }
	type left struct {
		ID int `redis:"id"`
	}
	type right struct {
		Key int `redis:"id"`
	}
	type ambiguous struct {
		left
		right
	}
	var nilProfile *cvProfile
	var n int
	v := cvMap(cvBulk("a"), cvInt(1))
	tests := []struct {
		name   string
		dst    any
		errHas string
	}{
		{"Nil", nil, "non-nil pointer to a struct, got nil"},
		{"NonPointer", cvProfile{}, "got respire.cvProfile"},
		{"NilPointer", nilProfile, "got nil *respire.cvProfile"},
		{"PointerToInt", &n, "got *int"},
		{"PointerToPointer", &nilProfile, "got **respire.cvProfile"},
		{"Map", map[string]string{}, "got map[string]string"},
		{"MapField", &withMap{}, "field withMap.M has unsupported type map[string]string"},
		{"SliceField", &withSlice{}, "field withSlice.S has unsupported type []string"},
		{"PointerToPointerField", &withPtrPtr{}, "withPtrPtr.P has unsupported type **int"},
		{"EmbeddedPointer", &withEmbeddedPtr{}, "field withEmbeddedPtr.cvBase: embedded pointer *respire.cvBase is not supported"},
		{"EmbeddedExportedPointer", &withEmbeddedExportedPtr{}, "embedded pointer *strings.Builder is not supported"},
		{"StructField", &withStruct{}, "withStruct.In has unsupported type respire.inner"},
		{"Ambiguous", &ambiguous{}, `fields left.ID and right.Key both take key "id"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the second call reads the cached plan
				err := Reply{v: v}.Scan(tc.dst)
				if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("Scan(%T) = %v; want ErrInvalidArgument containing %q", tc.dst, err, tc.errHas)
				}
			}
		})
	}
	// A bad field type fails even when the reply is null or lacks its key,
	// and before anything is stored.
	got := withMap{A: 5}
	for _, r := range []resp.Value{cvNull, cvMap(), v} {
		if err := (Reply{v: r}).Scan(&got); !errors.Is(err, ErrInvalidArgument) || got.A != 5 {
			t.Errorf("%v: Scan(&withMap) = %v, A %d; want ErrInvalidArgument, 5", r.Type, err, got.A)
		}
	}
	ok := withSkippedMap{}
	if err := (Reply{v: v}).Scan(&ok); err != nil || ok.A != 1 {
		t.Errorf("Scan(&withSkippedMap) = %v, A %d; want nil, 1 (tagged \"-\" and unexported fields are skipped)", err, ok.A)
	}
}

// TestReplyScanCachesPlans checks that a type is examined once: the plan
// stored on the first Scan is the one later scans use, also when many
// goroutines scan a new type at once.
func TestReplyScanCachesPlans(t *testing.T) {
	type fresh struct {
		A int    `redis:"a"`
		B string `redis:"b"`
	}
	typ := reflect.TypeFor[fresh]()
	scanPlans.Delete(typ) // an earlier run of this test (-count) stored it
	v := cvArr(cvBulk("a"), cvBulk("1"), cvBulk("b"), cvBulk("x"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var got fresh
			if err := (Reply{v: v}).Scan(&got); err != nil || got != (fresh{1, "x"}) {
				t.Errorf("Scan = %+v, %v; want {1 x}, nil", got, err)
			}
		})
	}
	wg.Wait()
	first, ok := scanPlans.Load(typ)
	if !ok {
		t.Fatal("no plan stored after Scan")
	}
	if got := scanPlanOf(typ); got != first.(*scanPlan) {
		t.Error("scanPlanOf built a second plan for a cached type")
	}
	allocs := testing.AllocsPerRun(100, func() {
		var got fresh
		_ = Reply{v: v}.Scan(&got)
	})
	if allocs > 1 { // the string "x"
		t.Errorf("Scan with a cached plan allocates %v times; want at most 1 (the string field's value)", allocs)
	}
}

// TestReplyConvertRealServer runs commands whose replies differ in shape
// between RESP2 and RESP3 and checks that the converters give identical
// Go values in both protocols, and the values expected.
func TestReplyConvertRealServer(t *testing.T) {
	type user struct {
		Name   string        `redis:"name"`
		Visits uint16        `redis:"visits"`
		Admin  bool          `redis:"admin"`
		Idle   time.Duration `redis:"idle"`
		Ratio  float32       `redis:"ratio"`
		Email  *string       `redis:"email"`
	}
	type scripted struct {
		Score float64 `redis:"score"`
		N     int8    `redis:"n"`
		OK    bool    `redis:"ok"`
		Name  string  `redis:"name"`
		Big   uint64  `redis:"big"`
	}
	type config struct {
		MaxMemory  uint64 `redis:"maxmemory"`
		Policy     string `redis:"maxmemory-policy"`
		AppendOnly bool   `redis:"appendonly"`
	}
	type stream struct {
		Length  int64  `redis:"length"`
		LastID  string `redis:"last-generated-id"`
		Groups  int    `redis:"groups"`
		Missing *int   `redis:"no-such-field"`
	}
	inf := math.Inf(1)
	want := map[string]any{
		"ZRANGE WITHSCORES":      map[string]float64{"c": -inf, "a": 1, "b": 2.5, "d": inf},
		"ZRANDMEMBER WITHSCORES": map[string]float64{"c": -inf, "a": 1, "b": 2.5, "d": inf},
		"ZPOPMIN 2":              map[string]float64{"c": -inf, "a": 1},
		"ZMSCORE":                []float64{2.5, inf},
		"ZMSCORE missing":        true, // errors.Is(err, ErrNil)
		"ZMSCORE Slice length":   2,
		"HGETALL Scan":           user{Name: "Ada", Visits: 42, Admin: true, Idle: 1500 * time.Millisecond, Ratio: 0.75},
		"HGETALL StringMap":      map[string]string{"name": "Ada", "visits": "42", "admin": "true", "idle": "1500", "ratio": "0.75"},
		"HGETALL Slice":          []any{"name", "Ada", "visits", "42", "admin", "true", "idle", "1500", "ratio", "0.75"},
		"HGETALL Int64Map":       map[string]int64{"a": 1, "b": -2},
		"HGETALL Float64Map":     map[string]float64{"a": 1, "b": -2},
		"SMISMEMBER":             []int64{1, 0},
		"PUBSUB NUMSUB":          map[string]int64{"respire-none-1": 0, "respire-none-2": 0},
		"EVAL booleans":          []int64{1, 0, 7},
		"EVAL map Scan":          scripted{Score: 2.5, N: 3, OK: true, Name: "x", Big: 12345678901234567890},
		"EVAL big number":        "-123456789012345678901234567890",
		"EVAL verbatim":          "hello",
		"LRANGE Slice":           []any{"a", "b", "c"},
		"LRANGE Any":             []any{"a", "b", "c"},
		"MGET Slice":             []any{"v", nil},
		"SMEMBERS Slice":         []any{"only"},
		"XINFO STREAM Scan":      stream{Length: 2, LastID: "2-1"},
	}
	got := map[int]map[string]any{}
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		res := map[string]any{}
		got[c.ep.Current().Proto()] = res
		do := func(cmd string, args ...string) Reply {
			t.Helper()
			// Each call spells its arguments out, so that it compiles
			// whatever the variadic type of Do.
			var r Reply
			var err error
			switch len(args) {
			case 1:
				r, err = c.Do(ctx, NewCommand(cmd), args[0])
			case 2:
				r, err = c.Do(ctx, NewCommand(cmd), args[0], args[1])
			case 3:
				r, err = c.Do(ctx, NewCommand(cmd), args[0], args[1], args[2])
			case 4:
				r, err = c.Do(ctx, NewCommand(cmd), args[0], args[1], args[2], args[3])
			default:
				t.Fatalf("do %s: %d arguments", cmd, len(args))
			}
			if err != nil {
				t.Fatalf("%s %q: %v", cmd, args, err)
			}
			return r
		}
		record := func(name string, v any, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			res[name] = v
		}
		z, z2, h, counters, set, list, str, xs := key(t, "z"), key(t, "z2"), key(t, "h"), key(t, "counters"), key(t, "set"), key(t, "list"), key(t, "str"), key(t, "stream")

		for _, k := range []string{z, z2} {
			if _, err := c.Do(ctx, NewCommand("ZADD"), k, "1", "a", "2.5", "b", "-inf", "c", "+inf", "d"); err != nil {
				t.Fatal(err)
			}
		}
		m, err := do("ZRANGE", z, "0", "-1", "WITHSCORES").Float64Map()
		record("ZRANGE WITHSCORES", m, err)
		m, err = do("ZRANDMEMBER", z, "4", "WITHSCORES").Float64Map()
		record("ZRANDMEMBER WITHSCORES", m, err)
		m, err = do("ZPOPMIN", z2, "2").Float64Map()
		record("ZPOPMIN 2", m, err)
		fs, err := do("ZMSCORE", z, "b", "d").Float64s()
		record("ZMSCORE", fs, err)
		missing := do("ZMSCORE", z, "a", "nope")
		_, err = missing.Float64s()
		res["ZMSCORE missing"] = errors.Is(err, ErrNil)
		sl, err := missing.Slice()
		record("ZMSCORE Slice length", len(sl), err)

		if _, err := c.Do(ctx, NewCommand("HSET"), h, "name", "Ada", "visits", "42", "admin", "true", "idle", "1500", "ratio", "0.75"); err != nil {
			t.Fatal(err)
		}
		var u user
		err = do("HGETALL", h).Scan(&u)
		record("HGETALL Scan", u, err)
		sm, err := do("HGETALL", h).StringMap()
		record("HGETALL StringMap", sm, err)
		sl, err = do("HGETALL", h).Slice()
		record("HGETALL Slice", sl, err)
		if _, err := c.Do(ctx, NewCommand("HSET"), counters, "a", "1", "b", "-2"); err != nil {
			t.Fatal(err)
		}
		im, err := do("HGETALL", counters).Int64Map()
		record("HGETALL Int64Map", im, err)
		m, err = do("HGETALL", counters).Float64Map()
		record("HGETALL Float64Map", m, err)

		if _, err := c.Do(ctx, NewCommand("SADD"), set, "only"); err != nil {
			t.Fatal(err)
		}
		is, err := do("SMISMEMBER", set, "only", "nope").Int64s()
		record("SMISMEMBER", is, err)
		sl, err = do("SMEMBERS", set).Slice()
		record("SMEMBERS Slice", sl, err)
		im, err = do("PUBSUB", "NUMSUB", "respire-none-1", "respire-none-2").Int64Map()
		record("PUBSUB NUMSUB", im, err)

		// redis.setresp(3) makes a script's booleans, maps, doubles and big
		// numbers RESP3 types for a RESP3 client; a RESP2 client gets
		// integers, flat arrays and bulk strings.
		is, err = do("EVAL", "redis.setresp(3); return {true, false, 7}", "0").Int64s()
		record("EVAL booleans", is, err)
		var s scripted
		err = do("EVAL", "redis.setresp(3); return {map={score={double=2.5}, n=3, ok=true, name='x', big={big_number='12345678901234567890'}}}", "0").Scan(&s)
		record("EVAL map Scan", s, err)
		a, err := do("EVAL", "return {big_number='-123456789012345678901234567890'}", "0").Any()
		record("EVAL big number", a, err)
		a, err = do("EVAL", "return {verbatim_string={format='txt', string='hello'}}", "0").Any()
		record("EVAL verbatim", a, err)

		if _, err := c.Do(ctx, NewCommand("RPUSH"), list, "a", "b", "c"); err != nil {
			t.Fatal(err)
		}
		sl, err = do("LRANGE", list, "0", "-1").Slice()
		record("LRANGE Slice", sl, err)
		a, err = do("LRANGE", list, "0", "-1").Any()
		record("LRANGE Any", a, err)
		if _, err := c.Do(ctx, NewCommand("SET"), str, "v"); err != nil {
			t.Fatal(err)
		}
		sl, err = do("MGET", str, key(t, "missing")).Slice()
		record("MGET Slice", sl, err)

		// The RESP3 replies must really have RESP3 shapes, or the test
		// compares RESP2 with RESP2.
		if c.ep.Current().Proto() == 3 {
			shapes := []struct {
				name string
				got  resp.Value
				want resp.Type
			}{
				{"HGETALL", do("HGETALL", h).Value(), resp.Map},
				{"ZRANGE WITHSCORES pair", do("ZRANGE", z, "0", "0", "WITHSCORES").Value().Elems[0], resp.Array},
				{"ZMSCORE element", do("ZMSCORE", z, "b").Value().Elems[0], resp.Double},
				{"SMEMBERS", do("SMEMBERS", set).Value(), resp.Set},
				{"EVAL boolean", do("EVAL", "redis.setresp(3); return {true}", "0").Value().Elems[0], resp.Boolean},
				{"EVAL map", do("EVAL", "redis.setresp(3); return {map={a=1}}", "0").Value(), resp.Map},
				{"EVAL big number", do("EVAL", "return {big_number='1'}", "0").Value(), resp.BigNumber},
				{"EVAL verbatim", do("EVAL", "return {verbatim_string={format='txt', string='x'}}", "0").Value(), resp.Verbatim},
			}
			for _, sh := range shapes {
				if sh.got.Type != sh.want {
					t.Errorf("RESP3 %s is a %v; want a %v", sh.name, sh.got.Type, sh.want)
				}
			}
		}

		var cfg config
		err = do("CONFIG", "GET", "maxmemory", "maxmemory-policy").Scan(&cfg)
		if err == nil {
			err = do("CONFIG", "GET", "appendonly").Scan(&cfg)
		}
		if cfg.Policy == "" {
			t.Errorf("CONFIG GET Scan: Policy is empty in %+v", cfg)
		}
		res["CONFIG GET Scan"] = cfg // compared across protocols only
		if err != nil {
			t.Errorf("CONFIG GET Scan: %v", err)
		}

		if _, err := c.Do(ctx, NewCommand("XADD"), xs, "1-1", "f", "v"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(ctx, NewCommand("XADD"), xs, "2-1", "g", "w"); err != nil {
			t.Fatal(err)
		}
		st := stream{Missing: new(int)} // no key: left as it was
		err = do("XINFO", "STREAM", xs).Scan(&st)
		if st.Missing == nil {
			t.Error("XINFO STREAM Scan cleared a field without a key")
		}
		st.Missing = nil
		record("XINFO STREAM Scan", st, err)
	})

	r2, r3 := got[2], got[3]
	if r2 == nil || r3 == nil {
		t.Fatalf("results for RESP2 %v and RESP3 %v; want both", r2 != nil, r3 != nil)
	}
	for name, v2 := range r2 {
		if v3 := r3[name]; !reflect.DeepEqual(v2, v3) {
			t.Errorf("%s: RESP2 %#v, RESP3 %#v; want identical", name, v2, v3)
		}
		if w, ok := want[name]; ok && !reflect.DeepEqual(v2, w) {
			t.Errorf("%s: got %#v; want %#v", name, v2, w)
		}
	}
	for name := range want {
		if _, ok := r2[name]; !ok {
			t.Errorf("%s: no result", name)
		}
	}
}
