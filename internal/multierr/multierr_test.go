package multierr

import (
	"errors"
	"io"
	"testing"
)

var (
	errKind  = errors.New("respire: protocol error")
	errOther = errors.New("respire: client closed")
)

// TestErrorSaysEveryErrorOnOneLine: Join and With say their errors on one
// line, "respire: " once, and errors.Is finds each of them; a line break
// inside an error is said as "; ", a text said already (alone or inside
// another) is not repeated.
func TestErrorSaysEveryErrorOnOneLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
		is   []error
	}{
		{"Join", Join(errKind, nil, errOther, io.EOF), "respire: protocol error; client closed; EOF", []error{errKind, errOther, io.EOF}},
		{"With", With(errKind, errOther), "respire: protocol error: client closed", []error{errKind, errOther}},
		{"nested", With(errKind, Join(io.EOF, errOther)), "respire: protocol error: EOF; client closed", []error{errKind, errOther, io.EOF}},
		{"said once", Join(errOther, io.EOF, errOther), "respire: client closed; EOF", []error{errOther, io.EOF}},
		{"said inside another", With(errKind, errors.New("resp: protocol error: bad length")), "respire: resp: protocol error: bad length", []error{errKind}},
		{"line breaks", Join(errors.Join(io.EOF, errOther), io.ErrUnexpectedEOF), "EOF; respire: client closed; unexpected EOF", []error{io.EOF, errOther, io.ErrUnexpectedEOF}},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		for _, target := range tt.is {
			if !errors.Is(tt.err, target) {
				t.Errorf("%s: %q does not match %v", tt.name, tt.err, target)
			}
		}
	}
}

// TestJoinAndWithKeepOneError: Join of no error is nil, of one error that
// error; With of no detail is the kind itself.
func TestJoinAndWithKeepOneError(t *testing.T) {
	if err := Join(nil, nil); err != nil {
		t.Errorf("Join(nil, nil) = %v, want nil", err)
	}
	if err := Join(nil, io.EOF); err != io.EOF {
		t.Errorf("Join(nil, EOF) = %#v, want io.EOF itself", err)
	}
	if err := With(errKind, nil); err != errKind {
		t.Errorf("With(kind, nil) = %#v, want the kind itself", err)
	}
}

// TestOneLine: line breaks, and the spaces and empty lines around them,
// become "; "; a text of one line is returned as it is.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a b":             "a b",
		"a\nb":            "a; b",
		"a \r\n\r\n  b\n": "a; b",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
