package main

import (
	"strconv"
	"strings"

	"github.com/respire-go/respire/resp"
)

// formatReply renders v like redis-cli does on a terminal, ending with a
// newline: "OK", "\"value\"", "(integer) 5", "(nil)", numbered aggregate
// elements with nested ones indented. Like redis-cli it adds its newline
// after a verbatim string that ends with one too.
func formatReply(v resp.Value) string {
	var b strings.Builder
	writeValue(&b, v, "")
	b.WriteString("\n")
	return b.String()
}

// writeValue writes v; indent is the width of the element prefixes that
// precede v on its first line, repeated on continuation lines.
func writeValue(b *strings.Builder, v resp.Value, indent string) {
	switch v.Type {
	case resp.SimpleString:
		b.Write(v.Str)
	case resp.SimpleError, resp.BulkError:
		b.WriteString("(error) ")
		b.Write(v.Str)
	case resp.Integer:
		b.WriteString("(integer) ")
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case resp.BulkString:
		b.WriteString(quote(v.Str))
	case resp.Null, 0:
		b.WriteString("(nil)")
	case resp.Boolean:
		if v.Int != 0 {
			b.WriteString("(true)")
		} else {
			b.WriteString("(false)")
		}
	case resp.Double:
		b.WriteString("(double) ")
		b.WriteString(v.Text())
	case resp.BigNumber:
		b.WriteString("(big number) ")
		b.Write(v.Str)
	case resp.Verbatim:
		b.WriteString(v.Text())
	case resp.Array, resp.Set, resp.Push:
		writeList(b, v, indent)
	case resp.Map, resp.Attribute:
		writeMap(b, v, indent)
	default:
		b.WriteString("(" + v.Type.String() + ")")
	}
}

// writeList writes an array, set or push reply: numbered elements, or
// the empty marker.
func writeList(b *strings.Builder, v resp.Value, indent string) {
	if len(v.Elems) == 0 {
		switch v.Type {
		case resp.Set:
			b.WriteString("(empty set)")
		default:
			b.WriteString("(empty array)")
		}
		return
	}
	sep := ") "
	if v.Type == resp.Set {
		sep = "~ "
	}
	width := len(strconv.Itoa(len(v.Elems)))
	for i, e := range v.Elems {
		if i > 0 {
			b.WriteString("\n")
			b.WriteString(indent)
		}
		prefix := padLeft(strconv.Itoa(i+1), width) + sep
		b.WriteString(prefix)
		writeValue(b, e, indent+strings.Repeat(" ", len(prefix)))
	}
}

// writeMap writes a map or attribute reply: numbered "key => value"
// pairs, or "(empty hash)". A [multiline] value begins on the line after
// its key.
func writeMap(b *strings.Builder, v resp.Value, indent string) {
	if len(v.Elems) < 2 {
		b.WriteString("(empty hash)")
		return
	}
	n := len(v.Elems) / 2
	width := len(strconv.Itoa(n))
	for i := range n {
		if i > 0 {
			b.WriteString("\n")
			b.WriteString(indent)
		}
		prefix := padLeft(strconv.Itoa(i+1), width) + "# "
		b.WriteString(prefix)
		inner := indent + strings.Repeat(" ", len(prefix))
		writeValue(b, v.Elems[2*i], inner)
		b.WriteString(" => ")
		// A value of more than one entry starts on the next line, under
		// the key, as redis-cli 7 prints it.
		if multiline(v.Elems[2*i+1]) {
			b.WriteString("\n")
			b.WriteString(inner)
		}
		writeValue(b, v.Elems[2*i+1], inner)
	}
}

// multiline reports whether redis-cli prints v as more than one entry: an
// aggregate of two or more elements (pairs, for a map), or of one element
// (value) that is itself multiline. A scalar never is, even a verbatim
// string of several lines.
func multiline(v resp.Value) bool {
	switch v.Type {
	case resp.Array, resp.Set, resp.Push:
		return len(v.Elems) > 1 || len(v.Elems) == 1 && multiline(v.Elems[0])
	case resp.Map, resp.Attribute:
		return len(v.Elems) > 2 || len(v.Elems) == 2 && multiline(v.Elems[1])
	}
	return false
}

// padLeft pads s with spaces on the left to width.
func padLeft(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return strings.Repeat(" ", width-len(s)) + s
}

// quoteString is [quote] for a string.
func quoteString(s string) string { return quote([]byte(s)) }

// quote quotes a bulk string like redis-cli: printable ASCII as is, the
// usual escapes for \n \r \t \a \b, \xHH for other bytes.
func quote(s []byte) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c < 0x20 || c > 0x7e {
				const hex = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
