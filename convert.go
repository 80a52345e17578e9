package respire

import (
	"github.com/respire-go/respire/resp"
)

// unexpected reports a reply of the wrong type for a conversion.
func unexpected(want string, v resp.Value) error {
	return &replyTypeError{want: want, got: v.Type}
}

type replyTypeError struct {
	want string
	got  resp.Type
}

func (e *replyTypeError) Error() string {
	return "respire: unexpected reply type: want " + e.want + ", got " + e.got.String()
}

func (e *replyTypeError) Is(target error) bool { return target == ErrUnexpectedReply }

func errInvalid(command, reason string) error {
	return &argError{command: command, reason: reason}
}

type argError struct{ command, reason string }

// errNilContext is the error of a call given a nil context, which it
// refuses before anything is sent.
func errNilContext(command string) error { return errInvalid(command, "nil context") }

func (e *argError) Error() string { return "respire: " + e.command + ": invalid argument: " + e.reason }

func (e *argError) Is(target error) bool { return target == ErrInvalidArgument }

// toStrings converts an array, set or push; a map (RESP3's form of
// replies that RESP2 sends as flat arrays) converts to its flat
// key-value list so both protocols give the same result.
func toStrings(v resp.Value) ([]string, error) {
	switch v.Type {
	case resp.Array, resp.Set, resp.Push, resp.Map:
	case resp.Null:
		return nil, nil
	default:
		return nil, unexpected("array", v)
	}
	out := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		switch {
		case e.Type.Aggregate():
			return nil, unexpected("string element", e)
		case e.IsError(): // a proxy's per-key failure: not a value
			return nil, atElement(i, unexpected("string element", e))
		}
		out[i] = string(e.TextBytes())
	}
	return out, nil
}

// toStringMap converts a map in the three shapes convPairs reads (a
// RESP3 map, a RESP2 flat array, an array of pairs such as RESP3's ZRANGE
// WITHSCORES); a null value becomes "", an aggregate value is an error.
func toStringMap(v resp.Value) (map[string]string, error) {
	if v.Type == resp.Null {
		return map[string]string{}, nil
	}
	out := make(map[string]string, convPairCount(v))
	err := convPairs(v, func(k []byte, val resp.Value) error {
		switch {
		case val.Type.Aggregate():
			return atValue(k, unexpected("string value", val))
		case val.IsError():
			return atValue(k, unexpected("string value", val))
		}
		out[string(k)] = string(val.TextBytes())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// countedOf wraps conv, the converter of an array of one result per
// argument, to refuse a reply of another length than n: callers index
// the results by their arguments, so a short or long reply is
// unexpected (want names the array), as HMGET's and SMISMEMBER's are.
func countedOf[T any](n int, want string, conv func(resp.Value) ([]T, error)) func(resp.Value) ([]T, error) {
	return func(v resp.Value) ([]T, error) {
		if !v.Type.Aggregate() || len(v.Elems) != n {
			return nil, unexpected(want, v)
		}
		return conv(v)
	}
}
