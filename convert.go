package respire

import (
	"errors"
	"strconv"

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

func (e *argError) Error() string { return "respire: " + e.command + ": invalid argument: " + e.reason }

func (e *argError) Is(target error) bool { return target == ErrInvalidArgument }

func toInt64(v resp.Value) (int64, error) {
	switch v.Type {
	case resp.Integer, resp.Boolean:
		return v.Int, nil
	case resp.BulkString, resp.SimpleString, resp.BigNumber:
		n, err := strconv.ParseInt(string(v.Str), 10, 64)
		if err != nil {
			return 0, errors.Join(ErrUnexpectedReply, err)
		}
		return n, nil
	case resp.Double: // integral values only, as their RESP2 text
		return convInt64(v)
	case resp.Null, 0:
		return 0, ErrNil
	}
	return 0, unexpected("integer", v)
}

func toFloat64(v resp.Value) (float64, error) {
	switch v.Type {
	case resp.Double:
		return v.Float, nil
	case resp.Integer:
		return float64(v.Int), nil
	case resp.BulkString, resp.SimpleString, resp.BigNumber:
		return parseFloat(v.Str)
	case resp.Null, 0:
		return 0, ErrNil
	}
	return 0, unexpected("double", v)
}

func parseFloat(b []byte) (float64, error) {
	s := string(b)
	switch s {
	case "inf", "+inf":
		s = "+Inf"
	case "-inf":
		s = "-Inf"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.Join(ErrUnexpectedReply, err)
	}
	return f, nil
}

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
