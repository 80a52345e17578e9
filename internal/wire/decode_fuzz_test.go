package wire

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/respire-go/respire/resp"
)

// FuzzDecode feeds every reply a reader decodes from arbitrary input to
// decode, with each Want and as one reply of a multi-reply frame: decode
// must not panic, must convert as documented, and must keep nothing of the
// reader's memory, which the next read reuses.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"$5\r\nhello\r\n", ":-42\r\n", "_\r\n$-1\r\n*-1\r\n", "-ERR x\r\n!3\r\nbad\r\n",
		"=7\r\ntxt:abc\r\n,1.5\r\n#t\r\n(123\r\n", "*2\r\n+a\r\n%1\r\n+k\r\n|1\r\n+x\r\n+y\r\n:1\r\n",
	} {
		f.Add([]byte(s), byte(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, prelude byte) {
		rd := resp.NewReader(bytes.NewReader(data))
		multi := GetFrame()
		defer multi.Release()
		multi.Want = WantValue
		multi.Replies = 8
		multi.Prelude = int(prelude % 3)
		callers := append(make([]byte, 0, 64), "keep"...)
		multi.Arena = callers
		for idx := 0; idx < multi.Replies; idx++ {
			v, raw, err := rd.ReadValueRaw()
			if err != nil {
				break
			}
			want := v.Clone()
			for _, w := range []Want{WantBytes, WantInt, WantValue, WantNone} {
				fr := GetFrame()
				fr.Want = w
				decode(fr, v, 0)
				checkDecoded(t, fr, want)
				for _, p := range appendResults(nil, fr) {
					if overlaps(p, raw) {
						t.Fatalf("Want %d of %q: a result points into the reader's buffer", w, raw)
					}
				}
				fr.Release()
			}
			decode(multi, v, idx)
			if idx >= multi.Prelude {
				last := multi.Values[len(multi.Values)-1]
				if !last.Equal(want) {
					t.Fatalf("reply %d: Values holds %v, want %v", idx, last, want)
				}
			}
			for _, p := range appendResults(nil, multi) {
				if overlaps(p, raw) {
					t.Fatalf("reply %d %q: a multi-reply result points into the reader's buffer", idx, raw)
				}
			}
		}
		if string(callers) != "keep" {
			t.Fatalf("the caller's arena bytes became %q", callers)
		}
	})
}

// checkDecoded checks one reply decoded alone into f against want.
func checkDecoded(t *testing.T, f *Frame, want resp.Value) {
	t.Helper()
	if want.IsError() {
		if !f.IsErr || f.ErrIndex != 0 || !bytes.Equal(f.ErrReply, want.Str) {
			t.Fatalf("error %v: IsErr %v ErrReply %q", want, f.IsErr, f.ErrReply)
		}
		return
	}
	if f.IsErr || f.Null != want.IsNull() {
		t.Fatalf("%v: IsErr %v Null %v", want, f.IsErr, f.Null)
	}
	switch f.Want {
	case WantBytes:
		if want.Type.Aggregate() {
			if !f.Value.Equal(want) {
				t.Fatalf("aggregate %v kept as %v", want, f.Value)
			}
		} else if !bytes.Equal(f.Bytes, want.TextBytes()) {
			t.Fatalf("%v: Bytes %q, want %q", want, f.Bytes, want.TextBytes())
		}
	case WantInt:
		switch want.Type {
		case resp.Integer, resp.Boolean:
			if f.Int != want.Int {
				t.Fatalf("%v: Int %d", want, f.Int)
			}
		case resp.Null:
		default:
			if !f.Value.Equal(want) {
				t.Fatalf("%v kept as %v", want, f.Value)
			}
		}
	case WantValue:
		if !f.Value.Equal(want) {
			t.Fatalf("Value %v, want %v", f.Value, want)
		}
	case WantNone:
		switch want.Type {
		case resp.SimpleString, resp.Null:
			if f.Value.Type != 0 {
				t.Fatalf("status %v kept as %v", want, f.Value)
			}
		default:
			if !f.Value.Equal(want) {
				t.Fatalf("%v kept as %v", want, f.Value)
			}
		}
	}
}

// appendResults appends every byte slice of f's results.
func appendResults(out [][]byte, f *Frame) [][]byte {
	out = append(out, f.Bytes, f.ErrReply)
	out = appendValueBytes(out, f.Value)
	for _, v := range f.Values {
		out = appendValueBytes(out, v)
	}
	return out
}

func appendValueBytes(out [][]byte, v resp.Value) [][]byte {
	out = append(out, v.Str)
	for _, e := range v.Elems {
		out = appendValueBytes(out, e)
	}
	if v.Attrs != nil {
		out = appendValueBytes(out, *v.Attrs)
	}
	return out
}

// overlaps reports whether p and q share memory.
func overlaps(p, q []byte) bool {
	if len(p) == 0 || len(q) == 0 {
		return false
	}
	p0, q0 := uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(unsafe.Pointer(unsafe.SliceData(q)))
	return p0 < q0+uintptr(len(q)) && q0 < p0+uintptr(len(p))
}
