package respire

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
)

// appendAnyCommand appends cmd with args encoded as bulk strings to buf.
// The argument types [Client.Do] accepts are:
//
//   - string and []byte, as they are;
//   - every integer kind, in decimal;
//   - float32 and float64, in the shortest form that reads back exactly
//     (infinities as "inf" and "-inf");
//   - bool, as "1" or "0";
//   - time.Duration, as a whole number of milliseconds;
//   - encoding.BinaryMarshaler, its MarshalBinary bytes;
//   - fmt.Stringer, its String;
//   - types whose underlying kind is one of the above (type ID string).
//
// Any other argument, nil or a nil pointer included, is an
// [ErrInvalidArgument] naming its position and type; on error buf is
// returned as it came.
func appendAnyCommand(buf []byte, cmd Command, args []any) ([]byte, error) {
	start := len(buf)
	buf = appendCommandHead(buf, cmd, cmd.ArgPrefix()+len(args))
	for i, a := range args {
		var err error
		if buf, err = appendArg(buf, a); err != nil {
			return buf[:start], errInvalid(cmd.FullName(), "argument "+strconv.Itoa(i+1)+": "+err.Error())
		}
	}
	return buf, nil
}

// appendArg appends one argument; see appendAnyCommand.
func appendArg(buf []byte, a any) ([]byte, error) {
	switch v := a.(type) {
	case string:
		return resp.AppendBulkString(buf, v), nil
	case []byte:
		return resp.AppendBulk(buf, v), nil
	case int:
		return resp.AppendBulkInt(buf, int64(v)), nil
	case int64:
		return resp.AppendBulkInt(buf, v), nil
	case int32:
		return resp.AppendBulkInt(buf, int64(v)), nil
	case int16:
		return resp.AppendBulkInt(buf, int64(v)), nil
	case int8:
		return resp.AppendBulkInt(buf, int64(v)), nil
	case uint:
		return appendBulkUint(buf, uint64(v)), nil
	case uint64:
		return appendBulkUint(buf, v), nil
	case uint32:
		return appendBulkUint(buf, uint64(v)), nil
	case uint16:
		return appendBulkUint(buf, uint64(v)), nil
	case uint8:
		return appendBulkUint(buf, uint64(v)), nil
	case uintptr:
		return appendBulkUint(buf, uint64(v)), nil
	case float64:
		return resp.AppendBulkFloat(buf, v), nil
	case float32:
		return resp.AppendBulkFloat(buf, float64(v)), nil
	case bool:
		if v {
			return resp.AppendBulkString(buf, "1"), nil
		}
		return resp.AppendBulkString(buf, "0"), nil
	case time.Duration:
		return resp.AppendBulkInt(buf, v.Milliseconds()), nil
	case nil:
		return buf, fmt.Errorf("nil is not an argument")
	}
	return appendOtherArg(buf, a)
}

// appendOtherArg encodes the argument types that need an interface call
// or reflection. It is kept apart so that the common types above leave
// their arguments unescaped.
//
//go:noinline
func appendOtherArg(buf []byte, a any) ([]byte, error) {
	rv := reflect.ValueOf(a)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		// Its methods would run on a nil receiver: a value method
		// (time.Time's MarshalBinary) panics.
		return buf, fmt.Errorf("nil %T is not an argument", a)
	}
	switch v := a.(type) {
	case encoding.BinaryMarshaler:
		b, err := v.MarshalBinary()
		if err != nil {
			return buf, fmt.Errorf("%T.MarshalBinary: %w", a, err)
		}
		return resp.AppendBulk(buf, b), nil
	case fmt.Stringer:
		return resp.AppendBulkString(buf, v.String()), nil
	}
	switch rv.Kind() {
	case reflect.String:
		return resp.AppendBulkString(buf, rv.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return resp.AppendBulkInt(buf, rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendBulkUint(buf, rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return resp.AppendBulkFloat(buf, rv.Float()), nil
	case reflect.Bool:
		return appendArg(buf, rv.Bool())
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return resp.AppendBulk(buf, rv.Bytes()), nil
		}
	}
	return buf, fmt.Errorf("unsupported type %T (use a string, []byte, number, bool, time.Duration, encoding.BinaryMarshaler or fmt.Stringer)", a)
}

func appendBulkUint(buf []byte, n uint64) []byte {
	var tmp [20]byte
	return resp.AppendBulk(buf, strconv.AppendUint(tmp[:0], n, 10))
}

// argWords returns the arguments of the encoded command buf of cmd (the
// words after its name and subcommand), appended to small. The
// "subcommand" of a command that has none (NewCommand("XREAD BLOCK")) is
// its first argument.
func argWords(cmd Command, buf []byte, small [][]byte) [][]byte {
	w := frameArgs(buf, small)
	p := cmd.ArgPrefix()
	if p > 1 && cmd.Group() == "" && !catalog.HasSubcommands(cmd.Name()) { // a NewCommand's name
		if _, known := catalog.Lookup(cmd.Name(), ""); known {
			p = 1
		}
	}
	if len(w) >= p {
		return w[p:]
	}
	return nil
}

// wordStrings converts arguments to strings, for the dispatch checks of
// blocking and cursor commands.
func wordStrings(words [][]byte) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = string(w)
	}
	return out
}
