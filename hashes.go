package respire

import (
	"context"
	"math"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specHSET         = specOf(catalog.Hash.HSET())
	specHGET         = specOf(catalog.Hash.HGET())
	specHGETALL      = specOf(catalog.Hash.HGETALL())
	specHDEL         = specOf(catalog.Hash.HDEL())
	specHINCRBY      = specOf(catalog.Hash.HINCRBY())
	specHINCRBYFLOAT = specOf(catalog.Hash.HINCRBYFLOAT())
	specHEXISTS      = specOf(catalog.Hash.HEXISTS())
	specHLEN         = specOf(catalog.Hash.HLEN())
	specHKEYS        = specOf(catalog.Hash.HKEYS())
	specHVALS        = specOf(catalog.Hash.HVALS())
	specHMGET        = specOf(catalog.Hash.HMGET())
	specHSETNX       = specOf(catalog.Hash.HSETNX())
	specHSTRLEN      = specOf(catalog.Hash.HSTRLEN())
	specHRANDFIELD   = specOf(catalog.Hash.HRANDFIELD())
)

// HSet sets fields of the hash at key; pairs alternate fields and values.
// It returns how many fields were added (not updated).
func (c *Client) cmdHSet(key string, pairs ...string) cmd[int64] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return invalidCmd[int64](specHSET, "want field-value pairs")
	}
	return keyArgsCmd(c, specHSET, key, pairs, intOf)
}

// HGet returns the value of field in the hash at key, or [ErrNil].
func (c *Client) cmdHGet(key, field string) cmd[string] {
	f := c.newFrame(3, "HGET")
	arg(f, key)
	arg(f, field)
	return typedCmd(f, specHGET, wire.WantBytes, strOf)
}

// HGetAll returns every field and value of the hash at key (empty when
// the key does not exist).
func (c *Client) cmdHGetAll(key string) cmd[map[string]string] {
	return keyArgsCmd(c, specHGETALL, key, nil, mapOf)
}

// HDel removes fields from the hash at key and returns how many existed.
// No fields fails with [ErrInvalidArgument] before anything is sent.
func (c *Client) cmdHDel(key string, fields ...string) cmd[int64] {
	if len(fields) == 0 {
		return invalidCmd[int64](specHDEL, "no fields")
	}
	return keyArgsCmd(c, specHDEL, key, fields, intOf)
}

// HIncrBy adds delta to the integer value of field in the hash at key (a
// missing field counts as 0) and returns the new value as an int64. Its
// retry category is [WriteAccumulating]: a resend adds delta again.
func (c *Client) cmdHIncrBy(key, field string, delta int64) cmd[int64] {
	f := c.newFrame(4, "HINCRBY")
	arg(f, key)
	arg(f, field)
	argInt(f, delta)
	return typedCmd(f, specHINCRBY, wire.WantInt, intOf)
}

// HIncrByFloat adds delta to the number held by field in the hash at key
// (a missing field counts as 0) and returns the new value as a float64.
// A NaN or infinite delta, which Redis refuses, fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend adds delta again.
func (c *Client) cmdHIncrByFloat(key, field string, delta float64) cmd[float64] {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return invalidCmd[float64](specHINCRBYFLOAT, "delta must be finite")
	}
	f := c.newFrame(4, "HINCRBYFLOAT")
	arg(f, key)
	arg(f, field)
	argFloat(f, delta)
	return typedCmd(f, specHINCRBYFLOAT, wire.WantBytes, floatOf)
}

// HExists reports whether field exists in the hash at key (false when
// the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdHExists(key, field string) cmd[bool] {
	f := c.newFrame(3, "HEXISTS")
	arg(f, key)
	arg(f, field)
	return typedCmd(f, specHEXISTS, wire.WantInt, flagOf)
}

// HLen returns the number of fields in the hash at key as an int64 (0
// when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdHLen(key string) cmd[int64] {
	return keyArgsCmd(c, specHLEN, key, nil, intOf)
}

// HKeys returns the fields of the hash at key as a []string, in no
// particular order (empty when the key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) cmdHKeys(key string) cmd[[]string] {
	return keyArgsCmd(c, specHKEYS, key, nil, strsOf)
}

// HVals returns the values of the hash at key as a []string, in the
// order [Client.HKeys] returns their fields (empty when the key does not
// exist). Its retry category is [ReadOnly].
func (c *Client) cmdHVals(key string) cmd[[]string] {
	return keyArgsCmd(c, specHVALS, key, nil, strsOf)
}

// HMGet returns the values of fields in the hash at key, one per field
// in order; found[i] reports whether fields[i] exists (values[i] is ""
// when it does not), as with [Client.MGet]. No fields fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly].
func (c *Client) HMGet(ctx context.Context, key string, fields ...string) (values []string, found []bool, err error) {
	if len(fields) == 0 {
		return nil, nil, errInvalid("HMGET", "no fields")
	}
	f := c.newFrame(2+len(fields), "HMGET")
	arg(f, key)
	for _, field := range fields {
		arg(f, field)
	}
	v, err := c.doValue(ctx, f, specHMGET)
	if err != nil {
		return nil, nil, err
	}
	return valuesFound(v, len(fields))
}

// valuesFound converts an array of n strings or nulls, such as HMGET's
// reply, to values and whether each was present.
func valuesFound(v resp.Value, n int) (values []string, found []bool, err error) {
	if !v.Type.Aggregate() || len(v.Elems) != n {
		return nil, nil, unexpected("array of one value per field", v)
	}
	values, found = make([]string, n), make([]bool, n)
	for i, e := range v.Elems {
		if e.Type.Aggregate() {
			return nil, nil, unexpected("string element", e)
		}
		found[i] = !e.IsNull()
		values[i] = string(e.TextBytes())
	}
	return values, found, nil
}

// HSetNX sets field in the hash at key to value only if the field does
// not exist, and reports whether it did so. Its retry category is
// [WriteChecked]: a resend re-checks the field, so it may report false
// for a write the first attempt made.
func (c *Client) cmdHSetNX(key, field, value string) cmd[bool] {
	f := c.newFrame(4, "HSETNX")
	arg(f, key)
	arg(f, field)
	arg(f, value)
	return typedCmd(f, specHSETNX, wire.WantInt, flagOf)
}

// HStrLen returns the length in bytes of the value of field in the hash
// at key as an int64 (0 when the field or key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) cmdHStrLen(key, field string) cmd[int64] {
	f := c.newFrame(3, "HSTRLEN")
	arg(f, key)
	arg(f, field)
	return typedCmd(f, specHSTRLEN, wire.WantInt, intOf)
}

// HRandField returns random fields of the hash at key as a []string
// (HRANDFIELD key count): with a positive count, up to count distinct
// fields; with a negative count, exactly -count fields that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is [ReadOnly].
func (c *Client) cmdHRandField(key string, count int64) cmd[[]string] {
	f := c.newFrame(3, "HRANDFIELD")
	arg(f, key)
	argInt(f, count)
	return typedCmd(f, specHRANDFIELD, wire.WantValue, strsOf)
}
