package respire

import (
	"context"
	"math"

	"github.com/respire-go/respire/catalog"
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
func (c *Client) HSet(ctx context.Context, key string, pairs ...string) (int64, error) {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return 0, errInvalid("HSET", "want field-value pairs")
	}
	return c.keyArgsInt(ctx, specHSET, key, pairs, "fields")
}

// HGet returns the value of field in the hash at key, or [ErrNil].
func (c *Client) HGet(ctx context.Context, key, field string) (string, error) {
	f := c.newFrame(3, "HGET")
	arg(f, key)
	arg(f, field)
	return c.doString(ctx, f, specHGET)
}

// HGetAll returns every field and value of the hash at key (empty when
// the key does not exist).
func (c *Client) HGetAll(ctx context.Context, key string) (map[string]string, error) {
	f := c.newFrame(2, "HGETALL")
	arg(f, key)
	v, err := c.doValue(ctx, f, specHGETALL)
	if err != nil {
		return nil, err
	}
	return toStringMap(v)
}

// HDel removes fields from the hash at key and returns how many existed.
func (c *Client) HDel(ctx context.Context, key string, fields ...string) (int64, error) {
	return c.keyArgsInt(ctx, specHDEL, key, fields, "fields")
}

// HIncrBy adds delta to the integer value of field in the hash at key (a
// missing field counts as 0) and returns the new value as an int64. Its
// retry category is [WriteAccumulating]: a resend adds delta again.
func (c *Client) HIncrBy(ctx context.Context, key, field string, delta int64) (int64, error) {
	f := c.newFrame(4, "HINCRBY")
	arg(f, key)
	arg(f, field)
	argInt(f, delta)
	return c.doInt(ctx, f, specHINCRBY)
}

// HIncrByFloat adds delta to the number held by field in the hash at key
// (a missing field counts as 0) and returns the new value as a float64.
// A NaN or infinite delta, which Redis refuses, fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend adds delta again.
func (c *Client) HIncrByFloat(ctx context.Context, key, field string, delta float64) (float64, error) {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return 0, errInvalid("HINCRBYFLOAT", "delta must be finite")
	}
	f := c.newFrame(4, "HINCRBYFLOAT")
	arg(f, key)
	arg(f, field)
	argFloat(f, delta)
	v, err := c.doValue(ctx, f, specHINCRBYFLOAT)
	if err != nil {
		return 0, err
	}
	return toFloat64(v)
}

// HExists reports whether field exists in the hash at key (false when
// the key does not exist). Its retry category is [ReadOnly].
func (c *Client) HExists(ctx context.Context, key, field string) (bool, error) {
	f := c.newFrame(3, "HEXISTS")
	arg(f, key)
	arg(f, field)
	return c.doBool(ctx, f, specHEXISTS)
}

// HLen returns the number of fields in the hash at key as an int64 (0
// when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) HLen(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "HLEN")
	arg(f, key)
	return c.doInt(ctx, f, specHLEN)
}

// HKeys returns the fields of the hash at key as a []string, in no
// particular order (empty when the key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) HKeys(ctx context.Context, key string) ([]string, error) {
	f := c.newFrame(2, "HKEYS")
	arg(f, key)
	return c.doStrings(ctx, f, specHKEYS)
}

// HVals returns the values of the hash at key as a []string, in the
// order [Client.HKeys] returns their fields (empty when the key does not
// exist). Its retry category is [ReadOnly].
func (c *Client) HVals(ctx context.Context, key string) ([]string, error) {
	f := c.newFrame(2, "HVALS")
	arg(f, key)
	return c.doStrings(ctx, f, specHVALS)
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
func (c *Client) HSetNX(ctx context.Context, key, field, value string) (bool, error) {
	f := c.newFrame(4, "HSETNX")
	arg(f, key)
	arg(f, field)
	arg(f, value)
	return c.doBool(ctx, f, specHSETNX)
}

// HStrLen returns the length in bytes of the value of field in the hash
// at key as an int64 (0 when the field or key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) HStrLen(ctx context.Context, key, field string) (int64, error) {
	f := c.newFrame(3, "HSTRLEN")
	arg(f, key)
	arg(f, field)
	return c.doInt(ctx, f, specHSTRLEN)
}

// HRandField returns random fields of the hash at key as a []string
// (HRANDFIELD key count): with a positive count, up to count distinct
// fields; with a negative count, exactly -count fields that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is [ReadOnly].
func (c *Client) HRandField(ctx context.Context, key string, count int64) ([]string, error) {
	f := c.newFrame(3, "HRANDFIELD")
	arg(f, key)
	argInt(f, count)
	return c.doStrings(ctx, f, specHRANDFIELD)
}
