package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
)

var (
	specLPUSH  = specOf(catalog.List.LPUSH())
	specRPUSH  = specOf(catalog.List.RPUSH())
	specLPOP   = specOf(catalog.List.LPOP())
	specLRANGE = specOf(catalog.List.LRANGE())
	specSADD   = specOf(catalog.Set.SADD())
	specSMEM   = specOf(catalog.Set.SMEMBERS())
)

// LPush prepends values to the list at key and returns its new length.
func (c *Client) LPush(ctx context.Context, key string, values ...string) (int64, error) {
	return c.keyArgsInt(ctx, specLPUSH, key, values, "values")
}

// RPush appends values to the list at key and returns its new length.
func (c *Client) RPush(ctx context.Context, key string, values ...string) (int64, error) {
	return c.keyArgsInt(ctx, specRPUSH, key, values, "values")
}

// LPop removes and returns the first element of the list at key, or
// [ErrNil] when the list is empty or missing.
func (c *Client) LPop(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "LPOP")
	arg(f, key)
	return c.doString(ctx, f, specLPOP)
}

// LRange returns the elements from start to stop (inclusive; negative
// indexes count from the end).
func (c *Client) LRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	f := c.newFrame(4, "LRANGE")
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	return c.doStrings(ctx, f, specLRANGE)
}

// SAdd adds members to the set at key and returns how many were new.
func (c *Client) SAdd(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSADD, key, members, "members")
}

// SMembers returns every member of the set at key.
func (c *Client) SMembers(ctx context.Context, key string) ([]string, error) {
	f := c.newFrame(2, "SMEMBERS")
	arg(f, key)
	return c.doStrings(ctx, f, specSMEM)
}
