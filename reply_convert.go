package respire

import (
	"encoding"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/resp"
)

// This file holds the Reply converters that give the same Go value for a
// reply whatever protocol carried it: a RESP3 map and RESP2's flat array
// of pairs, a RESP3 array of [member, score] pairs and RESP2's flat list,
// a RESP3 double and a RESP2 bulk string holding the number, a RESP3
// boolean and a RESP2 integer 0 or 1, a RESP3 null and RESP2's null bulk
// string or null array.

// Int64s converts an array, set or push of integers. Each element may be
// an integer, a boolean (0 or 1, as RESP2 sends it), a string or big number
// holding a decimal integer, or a double holding an integral value (so
// that a RESP3 double 1.5 fails as its RESP2 text "1.5" does). A map
// converts as its flat key-value list, as RESP2 sends it. A null reply returns nil and no error; a null element returns
// an error matching [ErrNil] that names the element's index.
func (r Reply) Int64s() ([]int64, error) {
	if r.IsNull() {
		return nil, nil
	}
	if err := convList(r.v, "array of integers"); err != nil {
		return nil, err
	}
	out := make([]int64, len(r.v.Elems))
	for i, e := range r.v.Elems {
		n, err := convInt64(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = n
	}
	return out, nil
}

// Float64s converts an array, set or push of numbers, such as ZMSCORE's
// reply: RESP3 doubles, integers, booleans (0 or 1), and strings holding a
// number ("inf" and "-inf" included) as RESP2 sends doubles. A map
// converts as its flat key-value list. A null reply returns nil and no
// error; a null element (ZMSCORE's missing member) returns an error
// matching [ErrNil] that names the element's index: use [Reply.Slice] to
// keep the nulls.
func (r Reply) Float64s() ([]float64, error) {
	if r.IsNull() {
		return nil, nil
	}
	if err := convList(r.v, "array of numbers"); err != nil {
		return nil, err
	}
	out := make([]float64, len(r.v.Elems))
	for i, e := range r.v.Elems {
		f, err := convFloat64(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = f
	}
	return out, nil
}

// Float64Map converts a reply of names and numbers: a RESP3 map, a RESP2
// flat array of pairs, or a RESP3 array of [member, score] pairs, so that
// ZRANGE ... WITHSCORES (and ZRANDMEMBER, ZPOPMIN with a count) give the
// same map in both protocols. Values convert as in [Reply.Float64s]; when
// a name repeats, the last value wins. A null reply returns an empty map;
// a null value returns an error matching [ErrNil] that names its key.
func (r Reply) Float64Map() (map[string]float64, error) {
	if r.IsNull() {
		return map[string]float64{}, nil
	}
	out := make(map[string]float64, convPairCount(r.v))
	err := convPairs(r.v, func(k []byte, v resp.Value) error {
		f, err := convFloat64(v)
		if err != nil {
			return atValue(k, err)
		}
		out[string(k)] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Int64Map converts a reply of names and integers (a RESP3 map, a RESP2
// flat array of pairs, or an array of pairs), such as PUBSUB NUMSUB's or
// HGETALL's of a hash of counters. Values convert as in [Reply.Int64s];
// when a name repeats, the last value wins. A null reply returns an empty
// map; a null value returns an error matching [ErrNil] that names its key.
func (r Reply) Int64Map() (map[string]int64, error) {
	if r.IsNull() {
		return map[string]int64{}, nil
	}
	out := make(map[string]int64, convPairCount(r.v))
	err := convPairs(r.v, func(k []byte, v resp.Value) error {
		n, err := convInt64(v)
		if err != nil {
			return atValue(k, err)
		}
		out[string(k)] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Slice converts an array, set or push to its elements as plain Go values
// (see [Reply.Any]). A map converts to its flat key-value list, as RESP2
// sends it, so that HGETALL's reply is the same slice in both protocols. A
// null reply returns nil and no error.
func (r Reply) Slice() ([]any, error) {
	if r.IsNull() {
		return nil, nil
	}
	if err := convList(r.v, "array"); err != nil {
		return nil, err
	}
	out := make([]any, len(r.v.Elems))
	for i, e := range r.v.Elems {
		a, err := convAny(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = a
	}
	return out, nil
}

// Any converts the reply to plain Go values:
//
//   - simple, bulk and verbatim strings to string (a verbatim string
//     without its "txt:" format prefix);
//   - big numbers to their decimal string, which is what RESP2 sends in
//     their place (parse it with [math/big.Int.SetString] when needed);
//   - integers to int64, doubles to float64, booleans to bool;
//   - null to nil;
//   - arrays, sets and pushes to []any;
//   - maps (and attributes) to map[string]any, keyed by the keys' text
//     (integer keys in decimal); a map with a null or aggregate key is an
//     error matching [ErrUnexpectedReply];
//   - an error reply inside an aggregate (a script's nested error) to a
//     [*ServerError] whose Command is empty; an error reply at the top
//     level is returned as the error.
//
// Any mirrors the reply's shape, so its result differs between protocols
// where the server's replies do (a RESP3 map is a RESP2 flat array, a
// RESP3 double a RESP2 string): use [Reply.Slice] or the typed converters
// for results that do not depend on the protocol. Attributes attached to a
// value are dropped.
func (r Reply) Any() (any, error) {
	if r.v.IsError() {
		return nil, newServerError("", r.v.Str)
	}
	return convAny(r.v)
}

// convAny converts v (and its elements) for [Reply.Any].
func convAny(v resp.Value) (any, error) {
	switch v.Type {
	case resp.Null, 0:
		return nil, nil
	case resp.SimpleString, resp.BulkString, resp.Verbatim, resp.BigNumber:
		return string(v.TextBytes()), nil
	case resp.Integer:
		return v.Int, nil
	case resp.Double:
		return v.Float, nil
	case resp.Boolean:
		return v.Int != 0, nil
	case resp.SimpleError, resp.BulkError:
		return newServerError("", v.Str), nil
	case resp.Array, resp.Set, resp.Push:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			a, err := convAny(e)
			if err != nil {
				return nil, atElement(i, err)
			}
			out[i] = a
		}
		return out, nil
	case resp.Map, resp.Attribute:
		if len(v.Elems)%2 != 0 {
			return nil, unexpected("map with key-value pairs", v)
		}
		out := make(map[string]any, len(v.Elems)/2)
		for i := 0; i < len(v.Elems); i += 2 {
			k, err := convKey(v.Elems[i])
			if err != nil {
				return nil, err
			}
			a, err := convAny(v.Elems[i+1])
			if err != nil {
				return nil, atValue(k, err)
			}
			out[string(k)] = a
		}
		return out, nil
	}
	return nil, unexpected("value", v)
}

// convList checks that v is an aggregate whose elements Int64s, Float64s
// and Slice convert: an array, set, push, or a map taken as its flat list.
func convList(v resp.Value, want string) error {
	switch v.Type {
	case resp.Array, resp.Set, resp.Push, resp.Map:
		return nil
	}
	return unexpected(want, v)
}

// convPairs calls fn with each key and value of a map reply in its three
// shapes: a RESP3 map (or attribute), a flat array of alternating keys and
// values (RESP2), or an array of two-element arrays (RESP3's form of
// ZRANGE WITHSCORES and its kin). The array of pairs is recognized by its
// first element: a flat array's keys are never arrays. A null v has no
// pairs.
func convPairs(v resp.Value, fn func(key []byte, val resp.Value) error) error {
	switch v.Type {
	case resp.Null, 0:
		return nil
	case resp.Map, resp.Attribute, resp.Array:
	default:
		return unexpected("map", v)
	}
	if v.Type == resp.Array && len(v.Elems) > 0 && v.Elems[0].Type == resp.Array {
		for i, p := range v.Elems {
			if p.Type != resp.Array || len(p.Elems) != 2 {
				return atElement(i, unexpected("two-element array", p))
			}
			k, err := convKey(p.Elems[0])
			if err != nil {
				return atElement(i, err)
			}
			if err := fn(k, p.Elems[1]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(v.Elems)%2 != 0 {
		return unexpected("map with key-value pairs", v)
	}
	for i := 0; i < len(v.Elems); i += 2 {
		k, err := convKey(v.Elems[i])
		if err != nil {
			return atElement(i, err)
		}
		if err := fn(k, v.Elems[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// convPairCount returns how many pairs convPairs would visit, for sizing.
func convPairCount(v resp.Value) int {
	if v.Type == resp.Array && len(v.Elems) > 0 && v.Elems[0].Type == resp.Array {
		return len(v.Elems)
	}
	return len(v.Elems) / 2
}

// convKey returns the text of a map key: any scalar but null and errors.
func convKey(v resp.Value) ([]byte, error) {
	if v.Type.Aggregate() || v.Type == resp.Null || v.Type == 0 || v.IsError() {
		return nil, unexpected("string key", v)
	}
	return v.TextBytes(), nil
}

// convScalar returns the text of a string-like value that a number or
// text may be parsed from, or an error for null, errors and aggregates.
func convScalar(v resp.Value, want string) ([]byte, error) {
	switch v.Type {
	case resp.Null, 0:
		return nil, ErrNil
	case resp.SimpleString, resp.BulkString, resp.Verbatim, resp.BigNumber, resp.Double, resp.Integer, resp.Boolean:
		return v.TextBytes(), nil
	}
	return nil, unexpected(want, v)
}

// convInt64 converts an integer, a boolean (0 or 1), a double holding an
// integral value, or a string or big number holding a decimal integer.
func convInt64(v resp.Value) (int64, error) {
	switch v.Type {
	case resp.Integer, resp.Boolean:
		return v.Int, nil
	case resp.Double:
		if v.Float != math.Trunc(v.Float) || v.Float < -(1<<63) || v.Float >= 1<<63 {
			return 0, badValue("integer", v, "not an integer in range")
		}
		return int64(v.Float), nil
	}
	b, err := convScalar(v, "integer")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, badValue("integer", v, numError(err))
	}
	return n, nil
}

// convUint64 is convInt64 for unsigned targets: negative values fail, and
// strings and big numbers up to the largest uint64 convert.
func convUint64(v resp.Value) (uint64, error) {
	switch v.Type {
	case resp.Integer, resp.Boolean:
		if v.Int < 0 {
			return 0, badValue("unsigned integer", v, "negative")
		}
		return uint64(v.Int), nil
	case resp.Double:
		if v.Float != math.Trunc(v.Float) || v.Float < 0 || v.Float >= 1<<64 {
			return 0, badValue("unsigned integer", v, "not an unsigned integer in range")
		}
		return uint64(v.Float), nil
	}
	b, err := convScalar(v, "unsigned integer")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, badValue("unsigned integer", v, numError(err))
	}
	return n, nil
}

// convFloat64 converts a double, an integer, a boolean (0 or 1), or a
// string or big number holding a number ("inf", "+inf", "-inf" included).
func convFloat64(v resp.Value) (float64, error) {
	switch v.Type {
	case resp.Double:
		return v.Float, nil
	case resp.Integer, resp.Boolean:
		return float64(v.Int), nil
	}
	b, err := convScalar(v, "number")
	if err != nil {
		return 0, err
	}
	// ParseFloat reads Redis's "inf", "+inf" and "-inf" too.
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, badValue("number", v, numError(err))
	}
	return f, nil
}

// convBool converts a boolean, an integer 0 or 1, or a string "1", "t",
// "true", "yes", "0", "f", "false", "no" (any case), as CONFIG GET and
// hashes hold flags.
func convBool(v resp.Value) (bool, error) {
	switch v.Type {
	case resp.Boolean:
		return v.Int != 0, nil
	case resp.Integer:
		if v.Int == 0 || v.Int == 1 {
			return v.Int == 1, nil
		}
		return false, badValue("boolean", v, "not 0 or 1")
	}
	b, err := convScalar(v, "boolean")
	if err != nil {
		return false, err
	}
	switch strings.ToLower(string(b)) {
	case "1", "t", "true", "yes":
		return true, nil
	case "0", "f", "false", "no":
		return false, nil
	}
	return false, badValue("boolean", v, "")
}

// numError returns the reason of a strconv error, without its function
// name and input (which badValue reports itself).
func numError(err error) string {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err.Error()
	}
	return err.Error()
}

// badValue reports a scalar reply value that does not convert to want.
func badValue(want string, v resp.Value, reason string) error {
	return &valueError{want: want, got: v.Type, text: string(v.TextBytes()), reason: reason}
}

// valueError is a scalar value that does not convert; it matches
// [ErrUnexpectedReply].
type valueError struct {
	want   string    // the Go value asked for, such as "integer"
	got    resp.Type // the value's RESP type
	text   string    // the value's text
	reason string    // why, such as "value out of range"; may be ""
}

func (e *valueError) Error() string {
	s := "respire: cannot convert " + e.got.String() + " " + strconv.Quote(e.text) + " to " + e.want
	if e.reason != "" {
		s += ": " + e.reason
	}
	return s
}

func (e *valueError) Is(target error) bool { return target == ErrUnexpectedReply }

// locError says where in a reply a conversion failed; it wraps the cause,
// so it matches what the cause matches ([ErrUnexpectedReply], [ErrNil]).
type locError struct {
	at  string // "element 3", `value of "f"`, `field T.F (key "f")`
	err error
}

func (e *locError) Error() string {
	return "respire: " + e.at + ": " + strings.TrimPrefix(e.err.Error(), "respire: ")
}

func (e *locError) Unwrap() error { return e.err }

func atElement(i int, err error) error {
	return &locError{at: "element " + strconv.Itoa(i), err: err}
}

func atValue(key []byte, err error) error {
	return &locError{at: "value of " + strconv.Quote(string(key)), err: err}
}

// Scan stores a map reply into the struct dst points to: HGETALL's, CONFIG
// GET's, or another reply of names and values (a RESP3 map, a RESP2 flat
// array of pairs, or an array of pairs, as [Reply.Float64Map] reads them).
//
// Each key goes to the exported field tagged with it, `redis:"name"` (the
// text before a comma, if any, is the name); an exported field without a
// tag takes its Go name as is (keys match case-sensitively); `redis:"-"`
// skips a field; unexported fields are skipped. Fields of untagged
// embedded structs are promoted as encoding/json promotes them (an
// embedded pointer to a struct is not supported: tag it "-"); a shallower
// field hides a deeper one of the same name, and two at the same depth are
// an error. Keys without a field are ignored, and fields without a key are
// left as they were. When a key repeats, the last value wins.
//
// Supported field types, and the values they accept:
//
//   - string: any string-like value (numbers as their text);
//   - []byte: the same, copied;
//   - bool: a boolean, an integer 0 or 1, or "1", "t", "true", "yes", "0",
//     "f", "false", "no" in any case;
//   - int, int8 … int64 and uint, uint8 … uint64, uintptr: an integer, a
//     boolean, an integral double, or a decimal string; a value that does
//     not fit the field is an error;
//   - float32, float64: a double, an integer, or a string holding a number
//     ("inf" and "-inf" included); a finite value beyond float32's range
//     is an error;
//   - time.Duration: an integer number of milliseconds (or a decimal string
//     of them), as Redis reports idle times;
//   - a type whose pointer implements [encoding.TextUnmarshaler]: its
//     UnmarshalText gets the value's text (this comes first, so a named
//     string or integer type with the method uses it);
//   - a pointer to any of those, allocated when the value is not null.
//
// A null value sets a pointer field to nil and any other field to its zero
// value. A null reply returns [ErrNil] and changes nothing.
//
// dst must be a non-nil pointer to a struct whose fields all have
// supported types (skip others with `redis:"-"`); otherwise Scan returns
// an error matching [ErrInvalidArgument] that names the type or field,
// before storing anything. A value that does not convert returns an error
// matching [ErrUnexpectedReply] that names the field and its key; the
// fields stored before it keep their new values.
//
// Scan examines each struct type once and caches what it learned, so
// repeated scans into a type do not repeat the reflection on its fields.
// Like the other Reply methods it may run in several goroutines at once,
// into distinct destinations.
func (r Reply) Scan(dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return errInvalid("Scan", "dst must be a non-nil pointer to a struct, got "+describeDst(dst))
	}
	plan := scanPlanOf(rv.Type().Elem())
	if plan.err != nil {
		return plan.err
	}
	if r.IsNull() {
		return ErrNil
	}
	s := rv.Elem()
	return convPairs(r.v, func(k []byte, v resp.Value) error {
		f := plan.fields[string(k)]
		if f == nil {
			return nil
		}
		if err := f.set(s.FieldByIndex(f.index), v); err != nil {
			return &locError{at: "field " + plan.typeName + "." + f.goName + " (key " + strconv.Quote(string(k)) + ")", err: err}
		}
		return nil
	})
}

// describeDst names what dst is, for the error of a bad Scan target.
func describeDst(dst any) string {
	if dst == nil {
		return "nil"
	}
	t := reflect.TypeOf(dst)
	if t.Kind() == reflect.Pointer && reflect.ValueOf(dst).IsNil() {
		return "nil " + t.String()
	}
	return t.String()
}

// scanPlan is what Scan needs to know of a struct type: the field of each
// key. Plans are immutable once stored in scanPlans.
type scanPlan struct {
	typeName string                // the struct type's name, for errors
	fields   map[string]*scanField // by key
	err      error                 // the type's unsupported field, if any
}

// scanField is one settable field of a plan.
type scanField struct {
	index  []int  // for reflect.Value.FieldByIndex
	goName string // the field's name, through embedded structs ("Base.ID")
	depth  int    // how many embedded structs hold it
	set    func(reflect.Value, resp.Value) error
}

// scanPlans caches a *scanPlan per struct reflect.Type.
var scanPlans sync.Map

// scanPlanOf returns the cached plan of struct type t, building it on
// first use. Two goroutines may both build it; one plan wins.
func scanPlanOf(t reflect.Type) *scanPlan {
	if p, ok := scanPlans.Load(t); ok {
		return p.(*scanPlan)
	}
	p := buildScanPlan(t)
	actual, _ := scanPlans.LoadOrStore(t, p)
	return actual.(*scanPlan)
}

func buildScanPlan(t reflect.Type) *scanPlan {
	name := t.Name()
	if name == "" {
		name = "struct"
	}
	p := &scanPlan{typeName: name, fields: map[string]*scanField{}}
	ambiguous := map[string]*scanField{}
	p.err = collectFields(p, t, nil, "", ambiguous)
	if p.err == nil {
		for k, f := range ambiguous {
			if cur := p.fields[k]; cur != nil && cur.depth == f.depth {
				p.err = errInvalid("Scan", "struct "+t.String()+": fields "+cur.goName+" and "+f.goName+" both take key "+strconv.Quote(k))
				break
			}
		}
	}
	return p
}

// collectFields adds the fields of struct type t (at index path prefix,
// named under goPrefix) to p. A key already held by a field at the same
// depth is recorded in ambiguous, an error unless a shallower field takes
// the key. Embedded structs cannot cycle: only pointers could, and those
// are not followed.
func collectFields(p *scanPlan, t reflect.Type, prefix []int, goPrefix string, ambiguous map[string]*scanField) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("redis")
		if tag == "-" {
			continue
		}
		key, _, _ := strings.Cut(tag, ",")
		index := append(append([]int(nil), prefix...), i)
		goName := goPrefix + sf.Name
		if sf.Anonymous && key == "" && sf.Type.Kind() == reflect.Struct && !isTextUnmarshaler(sf.Type) {
			if err := collectFields(p, sf.Type, index, goName+".", ambiguous); err != nil {
				return err
			}
			continue
		}
		if sf.Anonymous && key == "" && sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct && !isTextUnmarshaler(sf.Type.Elem()) {
			return errInvalid("Scan", "field "+p.typeName+"."+goName+": embedded pointer "+sf.Type.String()+" is not supported (embed the struct, or skip it with `redis:\"-\"`)")
		}
		if !sf.IsExported() {
			continue
		}
		if !tagged || key == "" {
			key = sf.Name
		}
		set := fieldSetter(sf.Type)
		if set == nil {
			return errInvalid("Scan", "field "+p.typeName+"."+goName+" has unsupported type "+sf.Type.String()+" (skip it with `redis:\"-\"`)")
		}
		f := &scanField{index: index, goName: goName, depth: len(prefix), set: set}
		switch cur := p.fields[key]; {
		case cur == nil || f.depth < cur.depth:
			p.fields[key] = f
		case f.depth == cur.depth:
			ambiguous[key] = f
		}
	}
	return nil
}

var (
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
)

// isTextUnmarshaler reports whether a pointer to a t implements
// encoding.TextUnmarshaler.
func isTextUnmarshaler(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// fieldSetter returns the function that stores a value into a field of
// type t, or nil when Scan does not support t.
func fieldSetter(t reflect.Type) func(reflect.Value, resp.Value) error {
	if t.Kind() == reflect.Pointer {
		elem := scalarSetter(t.Elem())
		if elem == nil {
			return nil
		}
		return func(f reflect.Value, v resp.Value) error {
			if v.Type == resp.Null {
				f.SetZero()
				return nil
			}
			p := reflect.New(t.Elem())
			if err := elem(p.Elem(), v); err != nil {
				return err
			}
			f.Set(p)
			return nil
		}
	}
	set := scalarSetter(t)
	if set == nil {
		return nil
	}
	return func(f reflect.Value, v resp.Value) error {
		if v.Type == resp.Null {
			f.SetZero()
			return nil
		}
		return set(f, v)
	}
}

// scalarSetter returns the function that stores a non-null value into a
// field of non-pointer type t, or nil when Scan does not support t.
func scalarSetter(t reflect.Type) func(reflect.Value, resp.Value) error {
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && isTextUnmarshaler(t) {
		return setText
	}
	if t == durationType {
		return setDuration
	}
	switch t.Kind() {
	case reflect.String:
		return setString
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return setBytes
		}
	case reflect.Bool:
		return setBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return setInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return setUint
	case reflect.Float32, reflect.Float64:
		return setFloat
	}
	return nil
}

func setText(f reflect.Value, v resp.Value) error {
	b, err := convScalar(v, "text")
	if err != nil {
		return err
	}
	if err := f.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText(b); err != nil {
		return &valueError{want: f.Type().String(), got: v.Type, text: string(b), reason: err.Error()}
	}
	return nil
}

func setString(f reflect.Value, v resp.Value) error {
	b, err := convScalar(v, "string")
	if err != nil {
		return err
	}
	f.SetString(string(b))
	return nil
}

func setBytes(f reflect.Value, v resp.Value) error {
	b, err := convScalar(v, "string")
	if err != nil {
		return err
	}
	f.SetBytes(append(make([]byte, 0, len(b)), b...))
	return nil
}

func setBool(f reflect.Value, v resp.Value) error {
	b, err := convBool(v)
	if err != nil {
		return err
	}
	f.SetBool(b)
	return nil
}

func setInt(f reflect.Value, v resp.Value) error {
	n, err := convInt64(v)
	if err != nil {
		return err
	}
	if f.OverflowInt(n) {
		return badValue(f.Type().String(), v, "value out of range")
	}
	f.SetInt(n)
	return nil
}

func setUint(f reflect.Value, v resp.Value) error {
	n, err := convUint64(v)
	if err != nil {
		return err
	}
	if f.OverflowUint(n) {
		return badValue(f.Type().String(), v, "value out of range")
	}
	f.SetUint(n)
	return nil
}

func setFloat(f reflect.Value, v resp.Value) error {
	x, err := convFloat64(v)
	if err != nil {
		return err
	}
	if f.OverflowFloat(x) {
		return badValue(f.Type().String(), v, "value out of range")
	}
	f.SetFloat(x)
	return nil
}

// setDuration reads an integer number of milliseconds.
func setDuration(f reflect.Value, v resp.Value) error {
	ms, err := convInt64(v)
	if err != nil {
		return err
	}
	const limit = math.MaxInt64 / int64(time.Millisecond)
	if ms > limit || ms < -limit {
		return badValue("time.Duration in milliseconds", v, "value out of range")
	}
	f.SetInt(ms * int64(time.Millisecond))
	return nil
}
