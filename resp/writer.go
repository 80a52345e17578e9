package resp

import (
	"math"
	"strconv"
)

// AppendArrayHeader appends an array header announcing n elements.
func AppendArrayHeader(b []byte, n int) []byte { return appendHeader(b, '*', int64(n)) }

// AppendMapHeader appends a RESP3 map header announcing n key-value pairs.
func AppendMapHeader(b []byte, n int) []byte { return appendHeader(b, '%', int64(n)) }

// AppendSetHeader appends a RESP3 set header announcing n elements.
func AppendSetHeader(b []byte, n int) []byte { return appendHeader(b, '~', int64(n)) }

// AppendPushHeader appends a RESP3 push header announcing n elements.
func AppendPushHeader(b []byte, n int) []byte { return appendHeader(b, '>', int64(n)) }

// AppendAttributeHeader appends a RESP3 attribute header announcing n
// key-value pairs; the attribute's pairs and then the value it describes
// must follow.
func AppendAttributeHeader(b []byte, n int) []byte { return appendHeader(b, '|', int64(n)) }

// AppendBulkString appends s as a bulk string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendHeader(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendBulk appends p as a bulk string. A nil p is an empty bulk string,
// not a null.
func AppendBulk(b []byte, p []byte) []byte {
	b = appendHeader(b, '$', int64(len(p)))
	b = append(b, p...)
	return append(b, '\r', '\n')
}

// AppendBulkInt appends n in decimal as a bulk string, the form commands
// take numeric arguments in.
func AppendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = appendHeader(b, '$', int64(len(d)))
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// AppendBulkFloat appends f as a bulk string in the shortest form that
// reads back exactly; infinities are "inf" and "-inf" as Redis spells them.
func AppendBulkFloat(b []byte, f float64) []byte {
	var tmp [32]byte
	d := appendFloat(tmp[:0], f)
	b = appendHeader(b, '$', int64(len(d)))
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// AppendSimpleString appends s as a simple string. s must not contain CR
// or LF; those bytes are replaced by spaces so the frame stays well formed.
func AppendSimpleString(b []byte, s string) []byte {
	b = append(b, '+')
	return appendLine(b, s)
}

// AppendError appends s as a simple error ("ERR message"). CR and LF in s
// are replaced by spaces.
func AppendError(b []byte, s string) []byte {
	b = append(b, '-')
	return appendLine(b, s)
}

// AppendBulkError appends s as a RESP3 bulk error.
func AppendBulkError(b []byte, s string) []byte {
	b = appendHeader(b, '!', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendInteger appends n as an integer.
func AppendInteger(b []byte, n int64) []byte { return appendHeader(b, ':', n) }

// AppendNull appends the RESP3 null.
func AppendNull(b []byte) []byte { return append(b, '_', '\r', '\n') }

// AppendNullBulk appends the RESP2 null bulk string ($-1).
func AppendNullBulk(b []byte) []byte { return append(b, '$', '-', '1', '\r', '\n') }

// AppendNullArray appends the RESP2 null array (*-1).
func AppendNullArray(b []byte) []byte { return append(b, '*', '-', '1', '\r', '\n') }

// AppendBoolean appends a RESP3 boolean.
func AppendBoolean(b []byte, t bool) []byte {
	if t {
		return append(b, '#', 't', '\r', '\n')
	}
	return append(b, '#', 'f', '\r', '\n')
}

// AppendDouble appends a RESP3 double.
func AppendDouble(b []byte, f float64) []byte {
	b = append(b, ',')
	b = appendFloat(b, f)
	return append(b, '\r', '\n')
}

// AppendBigNumber appends a RESP3 big number given as decimal digits with
// an optional leading '-'.
func AppendBigNumber(b []byte, digits string) []byte {
	b = append(b, '(')
	return appendLine(b, digits)
}

// AppendVerbatim appends a RESP3 verbatim string with a three-byte format
// such as "txt" or "mkd". A format of another length is replaced by "txt".
func AppendVerbatim(b []byte, format, text string) []byte {
	if len(format) != 3 {
		format = "txt"
	}
	b = appendHeader(b, '=', int64(len(text)+4))
	b = append(b, format...)
	b = append(b, ':')
	b = append(b, text...)
	return append(b, '\r', '\n')
}

// AppendValue appends v, and its attributes, encoded for protocol version
// proto (2 or 3). For RESP2 the RESP3-only types are downgraded the way
// Redis does it: maps, sets, attributes-free pushes become arrays (maps
// flattened), booleans integers, doubles, big numbers and verbatim strings
// bulk strings, bulk errors simple errors, and null a null bulk string;
// attributes are dropped.
//
// AppendValue keeps the stream well formed whatever v holds: a map or
// attribute with an odd number of elements gets a null as its last value,
// a verbatim string without a format prefix gets "txt:", a big number
// whose text is not decimal is written as a bulk string, a value whose own
// type is Attribute (a [Reader] never returns one: it attaches attributes
// to the value they describe) is written as a map, since an attribute
// header would take the next value as the one it describes, and a value
// of an unknown type is written as a null.
func AppendValue(b []byte, v Value, proto int) []byte {
	if proto != 2 && v.Attrs != nil && v.Attrs.Type == Attribute {
		b = appendPairs(b, '|', v.Attrs.Elems, proto)
	}
	switch v.Type {
	case SimpleString:
		b = append(b, '+')
		return appendLine(b, unsafeString(v.Str))
	case SimpleError:
		b = append(b, '-')
		return appendLine(b, unsafeString(v.Str))
	case Integer:
		return AppendInteger(b, v.Int)
	case BulkString:
		return AppendBulk(b, v.Str)
	case Null:
		if proto == 2 {
			return AppendNullBulk(b)
		}
		return AppendNull(b)
	case Boolean:
		if proto == 2 {
			return AppendInteger(b, v.Int)
		}
		return AppendBoolean(b, v.Int != 0)
	case Double:
		if proto == 2 {
			return AppendBulkFloat(b, v.Float)
		}
		return AppendDouble(b, v.Float)
	case BigNumber:
		if proto == 2 || !isDecimal(v.Str) {
			// Text that is not decimal would be refused by a reader.
			return AppendBulk(b, v.Str)
		}
		b = append(b, '(')
		return appendLine(b, unsafeString(v.Str))
	case BulkError:
		if proto == 2 {
			b = append(b, '-')
			return appendLine(b, unsafeString(v.Str))
		}
		return AppendBulkError(b, unsafeString(v.Str))
	case Verbatim:
		if proto == 2 {
			return AppendBulk(b, v.TextBytes())
		}
		if len(v.Str) < 4 || v.Str[3] != ':' {
			return AppendVerbatim(b, "txt", unsafeString(v.Str))
		}
		b = appendHeader(b, '=', int64(len(v.Str)))
		b = append(b, v.Str...)
		return append(b, '\r', '\n')
	case Map, Attribute:
		if proto == 2 {
			b = appendHeader(b, '*', int64(len(v.Elems)+len(v.Elems)%2))
			for _, e := range v.Elems {
				b = AppendValue(b, e, proto)
			}
			if len(v.Elems)%2 != 0 {
				b = AppendNullBulk(b)
			}
			return b
		}
		return appendPairs(b, byte(Map), v.Elems, proto)
	case Array, Set, Push:
		t := byte(v.Type)
		if proto == 2 {
			t = '*'
		}
		b = appendHeader(b, t, int64(len(v.Elems)))
		for _, e := range v.Elems {
			b = AppendValue(b, e, proto)
		}
		return b
	}
	// An unknown type cannot be encoded faithfully; write a null so the
	// stream stays well formed.
	if proto == 2 {
		return AppendNullBulk(b)
	}
	return AppendNull(b)
}

// appendPairs appends a map or attribute of alternating keys and values,
// completing an odd last pair with a null.
func appendPairs(b []byte, t byte, elems []Value, proto int) []byte {
	b = appendHeader(b, t, int64((len(elems)+1)/2))
	for _, e := range elems {
		b = AppendValue(b, e, proto)
	}
	if len(elems)%2 != 0 {
		b = AppendNull(b)
	}
	return b
}

func appendHeader(b []byte, t byte, n int64) []byte {
	switch {
	case n >= 0 && n < 10: // most headers: short arguments, few elements
		return append(b, t, byte('0'+n), '\r', '\n')
	case n >= 10 && n < 100:
		return append(b, t, byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	}
	b = append(b, t)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

func appendLine(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
