package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
)

var (
	specHSET    = specOf(catalog.Hash.HSET())
	specHGET    = specOf(catalog.Hash.HGET())
	specHGETALL = specOf(catalog.Hash.HGETALL())
	specHDEL    = specOf(catalog.Hash.HDEL())
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
