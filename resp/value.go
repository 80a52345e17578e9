package resp

import (
	"math"
	"strconv"
	"unsafe"
)

// Type is a RESP type, spelled as its leading byte on the wire. Its values
// are plain constants, safe for concurrent use.
type Type byte

// The RESP2 and RESP3 types.
const (
	SimpleString Type = '+' // +OK
	SimpleError  Type = '-' // -ERR message
	Integer      Type = ':' // :42
	BulkString   Type = '$' // $3 foo
	Array        Type = '*' // *2 ...
	Null         Type = '_' // RESP3 null; RESP2 $-1 and *-1 read as Null too
	Boolean      Type = '#' // #t, #f
	Double       Type = ',' // ,3.14
	BigNumber    Type = '(' // (3492890328409238509324850943850943825024385
	BulkError    Type = '!' // !21 SYNTAX invalid syntax
	Verbatim     Type = '=' // =15 txt:Some string
	Map          Type = '%' // %2 key value key value
	Set          Type = '~' // ~3 ...
	Attribute    Type = '|' // |1 key value, then the value it describes
	Push         Type = '>' // >2 invalidate ...
)

// String returns the type's name, such as "bulk string".
func (t Type) String() string {
	switch t {
	case SimpleString:
		return "simple string"
	case SimpleError:
		return "simple error"
	case Integer:
		return "integer"
	case BulkString:
		return "bulk string"
	case Array:
		return "array"
	case Null:
		return "null"
	case Boolean:
		return "boolean"
	case Double:
		return "double"
	case BigNumber:
		return "big number"
	case BulkError:
		return "bulk error"
	case Verbatim:
		return "verbatim string"
	case Map:
		return "map"
	case Set:
		return "set"
	case Attribute:
		return "attribute"
	case Push:
		return "push"
	}
	return "type " + strconv.QuoteRune(rune(t))
}

// Aggregate reports whether values of type t hold elements.
func (t Type) Aggregate() bool {
	switch t {
	case Array, Map, Set, Attribute, Push:
		return true
	}
	return false
}

// Value is one decoded RESP value.
//
// Which fields are set depends on Type: Str for simple strings, errors,
// bulk strings, verbatim strings (the whole payload, "txt:" prefix
// included), big numbers and doubles (their text); Int for integers and
// booleans (0 or 1); Float for doubles; Elems for arrays, sets, pushes, and
// for maps and attributes as alternating keys and values. Attrs holds the
// attribute map that preceded the value, if any.
//
// A Value returned by a [Reader] borrows the reader's memory until the
// reader's next Read call; [Value.Clone] makes an independent copy. A Value
// is not safe for concurrent use while its reader may still reuse its
// memory; a clone is safe for concurrent reads.
type Value struct {
	Type  Type
	Str   []byte
	Int   int64
	Float float64
	Elems []Value
	Attrs *Value
}

// IsNull reports whether v is a null (RESP3 null, or RESP2 null bulk string
// or null array).
func (v Value) IsNull() bool { return v.Type == Null }

// IsError reports whether v is a simple or bulk error.
func (v Value) IsError() bool { return v.Type == SimpleError || v.Type == BulkError }

// Len returns the number of logical elements: entries for maps and
// attributes, elements for other aggregates, and 0 for scalars.
func (v Value) Len() int {
	if v.Type == Map || v.Type == Attribute {
		return len(v.Elems) / 2
	}
	return len(v.Elems)
}

// Text returns the textual payload of a string-like value as a string
// (allocating): simple and bulk strings, errors, big numbers and doubles as
// sent (a double without text is formatted from Float), verbatim strings
// without their format prefix, integers in decimal, booleans as "1" or "0".
// Other types return "".
func (v Value) Text() string { return string(v.TextBytes()) }

// TextBytes is [Value.Text] without the copy for string-like values; the
// result borrows v's memory. Integers, booleans and doubles without text
// are formatted into a new slice.
func (v Value) TextBytes() []byte {
	switch v.Type {
	case SimpleString, SimpleError, BulkString, BulkError, BigNumber:
		return v.Str
	case Double:
		if len(v.Str) == 0 {
			return appendFloat(nil, v.Float)
		}
		return v.Str
	case Verbatim:
		if len(v.Str) >= 4 && v.Str[3] == ':' {
			return v.Str[4:]
		}
		return v.Str
	case Integer, Boolean:
		return strconv.AppendInt(nil, v.Int, 10)
	}
	return nil
}

// Clone returns a deep copy of v that shares no memory with v.
func (v Value) Clone() Value {
	size, count := v.cloneSize()
	c := cloner{bytes: make([]byte, 0, size)}
	if count > 0 {
		c.vals = make([]Value, count)
	}
	return c.clone(v)
}

// CloneAppend is [Value.Clone] with the bytes copied into the free
// capacity of arena, which it returns extended; when they do not fit it
// starts a new arena (at least twice as large), leaving the old one to
// the values that alias it. Bytes already in arena are never written, and
// every returned slice is capped so that appending to it copies. Nested
// values still get a slice of their own.
func (v Value) CloneAppend(arena []byte) (Value, []byte) {
	if v.Elems == nil && v.Attrs == nil { // a scalar: most replies
		out := Value{Type: v.Type, Int: v.Int, Float: v.Float}
		if v.Str != nil {
			if cap(arena)-len(arena) < len(v.Str) {
				arena = make([]byte, 0, max(len(v.Str), 2*cap(arena), minArena))
			}
			start := len(arena)
			arena = append(arena, v.Str...)
			out.Str = arena[start:len(arena):len(arena)]
		}
		return out, arena
	}
	size, count := v.cloneSize()
	if cap(arena)-len(arena) < size {
		arena = make([]byte, 0, max(size, 2*cap(arena), minArena))
	}
	c := cloner{bytes: arena}
	if count > 0 {
		c.vals = make([]Value, count)
	}
	out := c.clone(v)
	return out, c.bytes
}

// minArena is the smallest arena CloneAppend starts.
const minArena = 512

func (v Value) cloneSize() (bytes, values int) {
	bytes = len(v.Str)
	for _, e := range v.Elems {
		b, n := e.cloneSize()
		bytes += b
		values += n + 1
	}
	if v.Attrs != nil {
		b, n := v.Attrs.cloneSize()
		bytes += b
		values += n + 1
	}
	return bytes, values
}

type cloner struct {
	bytes []byte
	vals  []Value
}

func (c *cloner) clone(v Value) Value {
	out := Value{Type: v.Type, Int: v.Int, Float: v.Float}
	if v.Str != nil {
		start := len(c.bytes)
		c.bytes = append(c.bytes, v.Str...)
		out.Str = c.bytes[start:len(c.bytes):len(c.bytes)]
	}
	if v.Elems != nil {
		elems := c.vals[:len(v.Elems):len(v.Elems)]
		c.vals = c.vals[len(v.Elems):]
		for i, e := range v.Elems {
			elems[i] = c.clone(e)
		}
		out.Elems = elems
	}
	if v.Attrs != nil {
		a := &c.vals[0]
		c.vals = c.vals[1:]
		*a = c.clone(*v.Attrs)
		out.Attrs = a
	}
	return out
}

// Equal reports whether v and w have the same type and content, ignoring
// attributes. Doubles compare by value, with NaN equal to NaN, whatever
// their text (",1.50" equals ",1.5").
func (v Value) Equal(w Value) bool {
	if v.Type != w.Type || v.Int != w.Int || len(v.Elems) != len(w.Elems) {
		return false
	}
	if v.Type == Double {
		if v.Float != w.Float && !(math.IsNaN(v.Float) && math.IsNaN(w.Float)) {
			return false
		}
	} else if string(v.Str) != string(w.Str) || v.Float != w.Float && !(math.IsNaN(v.Float) && math.IsNaN(w.Float)) {
		return false
	}
	for i := range v.Elems {
		if !v.Elems[i].Equal(w.Elems[i]) {
			return false
		}
	}
	return true
}

// unsafeString views b as a string without copying; b must not change
// while the string is in use.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
