package main

import (
	"testing"

	"github.com/respire-go/respire/resp"
)

// bulk returns a bulk string reply of s.
func bulk(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }

// TestFormatReply compares the rendering of each reply type.
func TestFormatReply(t *testing.T) {
	tests := []struct {
		name string
		v    resp.Value
		want string
	}{
		{"status", resp.Value{Type: resp.SimpleString, Str: []byte("OK")}, "OK\n"},
		{"bulk", bulk("hello"), "\"hello\"\n"},
		{"bulk escapes", bulk("a\"b\\c\n\r\t\x00\xff"), "\"a\\\"b\\\\c\\n\\r\\t\\x00\\xff\"\n"},
		{"empty bulk", bulk(""), "\"\"\n"},
		{"integer", resp.Value{Type: resp.Integer, Int: -42}, "(integer) -42\n"},
		{"null", resp.Value{Type: resp.Null}, "(nil)\n"},
		{"true", resp.Value{Type: resp.Boolean, Int: 1}, "(true)\n"},
		{"false", resp.Value{Type: resp.Boolean}, "(false)\n"},
		{"double", resp.Value{Type: resp.Double, Str: []byte("3.14"), Float: 3.14}, "(double) 3.14\n"},
		{"big number", resp.Value{Type: resp.BigNumber, Str: []byte("123456789012345678901234567890")}, "(big number) 123456789012345678901234567890\n"},
		{"verbatim", resp.Value{Type: resp.Verbatim, Str: []byte("txt:line 1\nline 2")}, "line 1\nline 2\n"},
		{"error", resp.Value{Type: resp.SimpleError, Str: []byte("ERR boom")}, "(error) ERR boom\n"},
		{"empty array", resp.Value{Type: resp.Array}, "(empty array)\n"},
		{"empty set", resp.Value{Type: resp.Set}, "(empty set)\n"},
		{"array", resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("a"), {Type: resp.Integer, Int: 1}, {Type: resp.Null}}},
			"1) \"a\"\n2) (integer) 1\n3) (nil)\n"},
		{"nested array", resp.Value{Type: resp.Array, Elems: []resp.Value{
			{Type: resp.Array, Elems: []resp.Value{bulk("a"), bulk("b")}},
			bulk("c"),
		}}, "1) 1) \"a\"\n   2) \"b\"\n2) \"c\"\n"},
		{"wide array", resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("1"), bulk("2"), bulk("3"), bulk("4"), bulk("5"), bulk("6"), bulk("7"), bulk("8"), bulk("9"),
			{Type: resp.Array, Elems: []resp.Value{bulk("x"), bulk("y")}},
		}}, " 1) \"1\"\n 2) \"2\"\n 3) \"3\"\n 4) \"4\"\n 5) \"5\"\n 6) \"6\"\n 7) \"7\"\n 8) \"8\"\n 9) \"9\"\n10) 1) \"x\"\n    2) \"y\"\n"},
		{"set", resp.Value{Type: resp.Set, Elems: []resp.Value{bulk("a"), bulk("b")}}, "1~ \"a\"\n2~ \"b\"\n"},
		{"map", resp.Value{Type: resp.Map, Elems: []resp.Value{bulk("f1"), bulk("v1"), bulk("f2"), {Type: resp.Integer, Int: 2}}},
			"1# \"f1\" => \"v1\"\n2# \"f2\" => (integer) 2\n"},
		{"empty map", resp.Value{Type: resp.Map}, "(empty hash)\n"},
		// redis-cli 7 starts a map's value on a new line, indented under
		// the key, when the value takes more than one line.
		{"map of multi-line values", resp.Value{Type: resp.Map, Elems: []resp.Value{
			bulk("one"), {Type: resp.Array, Elems: []resp.Value{bulk("x")}},
			bulk("two"), {Type: resp.Array, Elems: []resp.Value{bulk("x"), bulk("y")}},
			bulk("nested"), {Type: resp.Map, Elems: []resp.Value{
				bulk("k"), {Type: resp.Set, Elems: []resp.Value{bulk("a"), bulk("b")}},
			}},
		}}, "1# \"one\" => 1) \"x\"\n" +
			"2# \"two\" => \n   1) \"x\"\n   2) \"y\"\n" +
			"3# \"nested\" => \n   1# \"k\" => \n      1~ \"a\"\n      2~ \"b\"\n"},
		// What counts is the value's structure: an aggregate of two or
		// more elements (pairs), or of one that counts; never a scalar,
		// even a verbatim string of several lines.
		{"map of values multi-line by structure only", resp.Value{Type: resp.Map, Elems: []resp.Value{
			bulk("v"), {Type: resp.Verbatim, Str: []byte("txt:a\nb")},
			bulk("av"), {Type: resp.Array, Elems: []resp.Value{{Type: resp.Verbatim, Str: []byte("txt:c\nd")}}},
			bulk("ae"), {Type: resp.Array, Elems: []resp.Value{{Type: resp.Array}}},
			bulk("aa"), {Type: resp.Array, Elems: []resp.Value{{Type: resp.Array, Elems: []resp.Value{bulk("x"), bulk("y")}}}},
			bulk("m"), {Type: resp.Map, Elems: []resp.Value{{Type: resp.Array, Elems: []resp.Value{bulk("k1"), bulk("k2")}}, bulk("z")}},
		}}, "1# \"v\" => a\nb\n" +
			"2# \"av\" => 1) c\nd\n" +
			"3# \"ae\" => 1) (empty array)\n" +
			"4# \"aa\" => \n   1) 1) \"x\"\n      2) \"y\"\n" +
			"5# \"m\" => 1# 1) \"k1\"\n      2) \"k2\" => \"z\"\n"},
		// redis-cli ends a verbatim string with a newline of its own.
		{"verbatim ending in a newline", resp.Value{Type: resp.Verbatim, Str: []byte("txt:a\nb\n")}, "a\nb\n\n"},
		{"array of a map of a multi-line value", resp.Value{Type: resp.Array, Elems: []resp.Value{
			{Type: resp.Map, Elems: []resp.Value{bulk("a"), {Type: resp.Array, Elems: []resp.Value{bulk("x"), bulk("y")}}}},
			bulk("z"),
		}}, "1) 1# \"a\" => \n      1) \"x\"\n      2) \"y\"\n2) \"z\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatReply(tt.v); got != tt.want {
				t.Errorf("formatReply() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
