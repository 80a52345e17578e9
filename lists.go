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
	specRPOP   = specOf(catalog.List.RPOP())
	specLLEN   = specOf(catalog.List.LLEN())
	specLINDEX = specOf(catalog.List.LINDEX())
	specLSET   = specOf(catalog.List.LSET())
	specLREM   = specOf(catalog.List.LREM())
	specLTRIM  = specOf(catalog.List.LTRIM())
	specLINSRT = specOf(catalog.List.LINSERT())
	specLPOS   = specOf(catalog.List.LPOS())
	specLMOVE  = specOf(catalog.List.LMOVE())
	specLPUSHX = specOf(catalog.List.LPUSHX())
	specRPUSHX = specOf(catalog.List.RPUSHX())
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
	return c.doStrings(ctx, c.rangeFrame(specLRANGE, key, start, stop), specLRANGE)
}

// RPop removes and returns the last element of the list at key as a
// string, or [ErrNil] when the list is empty or missing. Its retry
// category is [WriteAccumulating]: a resend pops another element.
func (c *Client) RPop(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "RPOP")
	arg(f, key)
	return c.doString(ctx, f, specRPOP)
}

// LLen returns the length of the list at key as an int64 (0 when the key
// does not exist). Its retry category is [ReadOnly].
func (c *Client) LLen(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "LLEN")
	arg(f, key)
	return c.doInt(ctx, f, specLLEN)
}

// LIndex returns the element at index of the list at key as a string
// (negative indexes count from the end), or [ErrNil] when index is out of
// range or the key does not exist. Its retry category is [ReadOnly].
func (c *Client) LIndex(ctx context.Context, key string, index int64) (string, error) {
	f := c.newFrame(3, "LINDEX")
	arg(f, key)
	argInt(f, index)
	return c.doString(ctx, f, specLINDEX)
}

// LSet sets the element at index of the list at key to value (negative
// indexes count from the end). An index out of range, or a missing key,
// is a [*ServerError]. Its retry category is [WriteLastWins].
func (c *Client) LSet(ctx context.Context, key string, index int64, value string) error {
	f := c.newFrame(4, "LSET")
	arg(f, key)
	argInt(f, index)
	arg(f, value)
	return c.doStatus(ctx, f, specLSET)
}

// LRem removes elements equal to value from the list at key and returns
// how many it removed, as an int64: with count > 0 the first count from
// the head, with count < 0 the first -count from the tail, with count 0
// all of them. Its retry category is [WriteAccumulating].
func (c *Client) LRem(ctx context.Context, key string, count int64, value string) (int64, error) {
	f := c.newFrame(4, "LREM")
	arg(f, key)
	argInt(f, count)
	arg(f, value)
	return c.doInt(ctx, f, specLREM)
}

// LTrim trims the list at key to the elements from start to stop
// (inclusive; negative indexes count from the end). Its retry category is
// [WriteAccumulating]: a resend trims the already trimmed list again,
// which may remove more elements.
func (c *Client) LTrim(ctx context.Context, key string, start, stop int64) error {
	f := c.newFrame(4, "LTRIM")
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	return c.doStatus(ctx, f, specLTRIM)
}

// LInsert inserts value into the list at key just before (before true) or
// after the first element equal to pivot. It returns the new length as an
// int64, -1 when pivot is not in the list, or 0 when the key does not
// exist. Its retry category is [WriteAccumulating].
func (c *Client) LInsert(ctx context.Context, key string, before bool, pivot, value string) (int64, error) {
	f := c.newFrame(5, "LINSERT")
	arg(f, key)
	if before {
		arg(f, "BEFORE")
	} else {
		arg(f, "AFTER")
	}
	arg(f, pivot)
	arg(f, value)
	return c.doInt(ctx, f, specLINSRT)
}

// LPos returns the index of the first element equal to element in the
// list at key as an int64, or [ErrNil] when there is none. Its retry
// category is [ReadOnly].
func (c *Client) LPos(ctx context.Context, key, element string) (int64, error) {
	f := c.newFrame(3, "LPOS")
	arg(f, key)
	arg(f, element)
	return c.doInt(ctx, f, specLPOS)
}

// LMove pops an element from the from end of the list at src, pushes it
// onto the to end of the list at dst (src and dst may be the same list)
// and returns it as a string, or [ErrNil] when src is empty or missing.
// It is [Client.BLMove] without blocking. A side other than [ListLeft]
// or [ListRight] fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating]: a resend moves another
// element.
func (c *Client) LMove(ctx context.Context, src, dst string, from, to ListSide) (string, error) {
	fw, ok1 := from.arg()
	tw, ok2 := to.arg()
	if !ok1 || !ok2 {
		return "", errInvalid("LMOVE", "list side must be ListLeft or ListRight")
	}
	f := c.newFrame(5, "LMOVE")
	arg(f, src)
	arg(f, dst)
	arg(f, fw)
	arg(f, tw)
	return c.doString(ctx, f, specLMOVE)
}

// LPushX prepends values to the list at key only if the key holds a list,
// and returns its new length as an int64 (0 when the key does not exist).
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) LPushX(ctx context.Context, key string, values ...string) (int64, error) {
	return c.keyArgsInt(ctx, specLPUSHX, key, values, "values")
}

// RPushX appends values to the list at key only if the key holds a list,
// and returns its new length as an int64 (0 when the key does not exist).
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) RPushX(ctx context.Context, key string, values ...string) (int64, error) {
	return c.keyArgsInt(ctx, specRPUSHX, key, values, "values")
}
