package wire

import (
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/resp"
)

// TestDecode proves how each Want converts replies, including multi-reply
// frames, error replies (IsErr, ErrReply, ErrIndex) and nulls.
func TestDecode(t *testing.T) {
	type check func(t *testing.T, f *Frame)
	str := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	tests := []struct {
		name    string
		want    Want
		replies int
		bytes   []byte // initial Bytes
		reply   string
		check   check
	}{
		{"bytes bulk", WantBytes, 0, nil, "$5\r\nhello\r\n", func(t *testing.T, f *Frame) {
			if string(f.Bytes) != "hello" || f.Null || f.IsErr {
				t.Errorf("got Bytes %q Null %v IsErr %v, want hello", f.Bytes, f.Null, f.IsErr)
			}
		}},
		{"bytes appended to initial buffer", WantBytes, 0, []byte("pre:"), "+OK\r\n", func(t *testing.T, f *Frame) {
			if string(f.Bytes) != "pre:OK" {
				t.Errorf("got Bytes %q, want pre:OK", f.Bytes)
			}
		}},
		{"bytes RESP2 null", WantBytes, 0, nil, "$-1\r\n", func(t *testing.T, f *Frame) {
			if !f.Null || len(f.Bytes) != 0 {
				t.Errorf("got Null %v Bytes %q, want null and empty", f.Null, f.Bytes)
			}
		}},
		{"bytes RESP3 null", WantBytes, 0, nil, "_\r\n", func(t *testing.T, f *Frame) {
			if !f.Null {
				t.Errorf("got Null %v, want true", f.Null)
			}
		}},
		{"string bulk", WantString, 0, nil, "$5\r\nhello\r\n", func(t *testing.T, f *Frame) {
			if f.Str != "hello" || f.Null || f.IsErr || f.Bytes != nil {
				t.Errorf("got Str %q Null %v IsErr %v Bytes %q, want hello in Str alone", f.Str, f.Null, f.IsErr, f.Bytes)
			}
		}},
		{"string from a status and a RESP3 verbatim string", WantString, 2, nil, "+OK\r\n=9\r\ntxt:hello\r\n", func(t *testing.T, f *Frame) {
			if f.Str != "hello" {
				t.Errorf("got Str %q, want the verbatim string's text hello", f.Str)
			}
		}},
		{"string null", WantString, 0, nil, "$-1\r\n", func(t *testing.T, f *Frame) {
			if !f.Null || f.Str != "" {
				t.Errorf("got Null %v Str %q, want null and empty", f.Null, f.Str)
			}
		}},
		{"string with unexpected shape keeps the value", WantString, 0, nil, "*1\r\n$2\r\nhi\r\n", func(t *testing.T, f *Frame) {
			if want := (resp.Value{Type: resp.Array, Elems: []resp.Value{str("hi")}}); !f.Value.Equal(want) || f.Str != "" {
				t.Errorf("got Value %+v Str %q, want the array kept and no Str", f.Value, f.Str)
			}
		}},
		{"string error reply", WantString, 0, nil, "-ERR no\r\n", func(t *testing.T, f *Frame) {
			if !f.IsErr || string(f.ErrReply) != "ERR no" || f.Str != "" {
				t.Errorf("got IsErr %v ErrReply %q Str %q, want the error alone", f.IsErr, f.ErrReply, f.Str)
			}
		}},
		{"int", WantInt, 0, nil, ":-42\r\n", func(t *testing.T, f *Frame) {
			if f.Int != -42 || f.Null {
				t.Errorf("got Int %d Null %v, want -42", f.Int, f.Null)
			}
		}},
		{"int from boolean", WantInt, 0, nil, "#t\r\n", func(t *testing.T, f *Frame) {
			if f.Int != 1 {
				t.Errorf("got Int %d, want 1", f.Int)
			}
		}},
		{"int null", WantInt, 0, nil, "_\r\n", func(t *testing.T, f *Frame) {
			if !f.Null || f.Int != 0 {
				t.Errorf("got Null %v Int %d, want null", f.Null, f.Int)
			}
		}},
		{"int with unexpected shape keeps the value", WantInt, 0, nil, "$2\r\nhi\r\n", func(t *testing.T, f *Frame) {
			if !f.Value.Equal(str("hi")) {
				t.Errorf("got Value %+v, want the bulk string kept", f.Value)
			}
		}},
		{"value array", WantValue, 0, nil, "*2\r\n$1\r\na\r\n:1\r\n", func(t *testing.T, f *Frame) {
			want := resp.Value{Type: resp.Array, Elems: []resp.Value{str("a"), {Type: resp.Integer, Int: 1}}}
			if !f.Value.Equal(want) || f.Values != nil {
				t.Errorf("got Value %+v Values %v, want %+v and no Values", f.Value, f.Values, want)
			}
		}},
		{"none", WantNone, 0, nil, "+OK\r\n", func(t *testing.T, f *Frame) {
			if f.IsErr || f.Bytes != nil || f.Value.Type != 0 {
				t.Errorf("got %+v, want nothing kept", f)
			}
		}},
		{"none integer kept", WantNone, 0, nil, ":1\r\n", func(t *testing.T, f *Frame) {
			if want := (resp.Value{Type: resp.Integer, Int: 1}); !f.Value.Equal(want) || f.Null {
				t.Errorf("got Value %+v Null %v, want the integer kept", f.Value, f.Null)
			}
		}},
		{"none null", WantNone, 0, nil, "_\r\n", func(t *testing.T, f *Frame) {
			if !f.Null || f.Value.Type != 0 {
				t.Errorf("got Null %v Value %+v, want null and nothing kept", f.Null, f.Value)
			}
		}},
		{"simple error", WantBytes, 0, nil, "-ERR wrong type\r\n", func(t *testing.T, f *Frame) {
			if !f.IsErr || string(f.ErrReply) != "ERR wrong type" || f.ErrIndex != 0 || f.Err != nil {
				t.Errorf("got IsErr %v ErrReply %q ErrIndex %d Err %v, want the error reply", f.IsErr, f.ErrReply, f.ErrIndex, f.Err)
			}
		}},
		{"bulk error", WantInt, 0, nil, "!9\r\nBUSY busy\r\n", func(t *testing.T, f *Frame) {
			if !f.IsErr || string(f.ErrReply) != "BUSY busy" {
				t.Errorf("got IsErr %v ErrReply %q, want BUSY busy", f.IsErr, f.ErrReply)
			}
		}},
		{"multi value", WantValue, 3, nil, "+OK\r\n:7\r\n$-1\r\n", func(t *testing.T, f *Frame) {
			want := []resp.Value{{Type: resp.SimpleString, Str: []byte("OK")}, {Type: resp.Integer, Int: 7}, {Type: resp.Null}}
			if len(f.Values) != 3 {
				t.Fatalf("got %d Values, want 3", len(f.Values))
			}
			for i := range want {
				if !f.Values[i].Equal(want[i]) {
					t.Errorf("Values[%d] = %+v, want %+v", i, f.Values[i], want[i])
				}
			}
			if !f.Value.Equal(want[2]) || !f.Null {
				t.Errorf("got Value %+v Null %v, want the last reply (null)", f.Value, f.Null)
			}
		}},
		{"multi value with errors: first error index", WantValue, 3, nil, "+OK\r\n-ERR first\r\n-ERR second\r\n", func(t *testing.T, f *Frame) {
			if !f.IsErr || f.ErrIndex != 1 || string(f.ErrReply) != "ERR first" {
				t.Errorf("got IsErr %v ErrIndex %d ErrReply %q, want index 1 ERR first", f.IsErr, f.ErrIndex, f.ErrReply)
			}
			if len(f.Values) != 3 || !f.Values[2].IsError() {
				t.Errorf("got Values %+v, want 3 with the errors kept", f.Values)
			}
		}},
		{"multi int: the last integer", WantInt, 2, nil, ":1\r\n:2\r\n", func(t *testing.T, f *Frame) {
			if f.Int != 2 {
				t.Errorf("got Int %d, want 2", f.Int)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fc := startFake(t, 3, nil)
			f := GetFrame()
			for range max(tt.replies, 1) {
				f.Buf = append(f.Buf, cmd("PING")...)
			}
			f.Want, f.Replies, f.Bytes = tt.want, tt.replies, tt.bytes
			submit(t, c, f)
			fc.waitWritten(t, f.Buf)
			fc.reply([]byte(tt.reply))
			waitOK(t, f)
			if f.Err != nil {
				t.Fatalf("Err = %v, want nil", f.Err)
			}
			tt.check(t, f)
			f.Release()
		})
	}
}

// TestValueIsOwned proves that a WantValue result survives the reader's
// next reply (it is a copy, not borrowed memory).
func TestValueIsOwned(t *testing.T) {
	c, fc := startFake(t, 3, nil)
	f := newFrame(WantValue, "GET", "a")
	g := newFrame(WantValue, "GET", "b")
	submit(t, c, f)
	submit(t, c, g)
	fc.waitWritten(t, g.Buf)
	fc.reply(bulk("first"))
	waitOK(t, f)
	fc.reply(bulk(strings.Repeat("x", 5000)))
	waitOK(t, g)
	if got := string(f.Value.Str); got != "first" {
		t.Fatalf("first value became %q after the next reply, want first", got)
	}
	f.Release()
	g.Release()
}

// TestPushRouting proves that RESP3 push frames go to OnPush, before,
// between and inside the replies of a multi-reply frame, without consuming
// a FIFO slot.
func TestPushRouting(t *testing.T) {
	var mu sync.Mutex
	var pushes []string
	onPush := func(v resp.Value) {
		mu.Lock()
		defer mu.Unlock()
		pushes = append(pushes, string(v.Elems[1].Str))
	}
	c, fc := startFake(t, 3, onPush)
	push := func(s string) []byte {
		b := resp.AppendPushHeader(nil, 2)
		b = resp.AppendBulkString(b, "message")
		return resp.AppendBulkString(b, s)
	}
	f := newFrame(WantBytes, "GET", "a")
	m := GetFrame()
	m.Buf = append(append(m.Buf[:0], cmd("INCR", "x")...), cmd("INCR", "y")...)
	m.Want, m.Replies = WantInt, 2
	submit(t, c, f)
	submit(t, c, m)
	fc.waitWritten(t, m.Buf)
	var in []byte
	in = append(in, push("p1")...)
	in = append(in, bulk("A")...)
	in = append(in, push("p2")...)
	in = append(in, ":1\r\n"...)
	in = append(in, push("p3")...)
	in = append(in, ":2\r\n"...)
	fc.reply(in)
	waitOK(t, f)
	waitOK(t, m)
	if string(f.Bytes) != "A" || m.Int != 2 || m.Err != nil {
		t.Fatalf("got f=%q m.Int=%d m.Err=%v, want A and 2", f.Bytes, m.Int, m.Err)
	}
	f.Release()
	m.Release()
	mu.Lock()
	got := strings.Join(pushes, ",")
	mu.Unlock()
	if got != "p1,p2,p3" {
		t.Fatalf("OnPush got %q, want p1,p2,p3", got)
	}
	if n := fifoLen(c); n != 0 {
		t.Fatalf("FIFO holds %d frames, want 0", n)
	}
}
