package respire

import (
	"context"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specLPUSH     = specOf(catalog.List.LPUSH())
	specRPUSH     = specOf(catalog.List.RPUSH())
	specLPOP      = specOf(catalog.List.LPOP())
	specLRANGE    = specOf(catalog.List.LRANGE())
	specRPOP      = specOf(catalog.List.RPOP())
	specLLEN      = specOf(catalog.List.LLEN())
	specLINDEX    = specOf(catalog.List.LINDEX())
	specLSET      = specOf(catalog.List.LSET())
	specLREM      = specOf(catalog.List.LREM())
	specLTRIM     = specOf(catalog.List.LTRIM())
	specLINSRT    = specOf(catalog.List.LINSERT())
	specLPOS      = specOf(catalog.List.LPOS())
	specLMOVE     = specOf(catalog.List.LMOVE())
	specLPUSHX    = specOf(catalog.List.LPUSHX())
	specRPUSHX    = specOf(catalog.List.RPUSHX())
	specRPOPLPUSH = specOf(catalog.List.RPOPLPUSH())
	specLMPOP     = specOf(catalog.List.LMPOP())

	// The blocking list commands without a Batch member; like the others
	// in blocking.go they are never resent.
	specBLMPOP     = &spec{name: "BLMPOP", cat: Never, desc: catalog.List.BLMPOP()}
	specBRPOPLPUSH = &spec{name: "BRPOPLPUSH", cat: Never, desc: catalog.List.BRPOPLPUSH()}
)

// keyValuesCmd defines "NAME key values..." with an integer reply (LPUSH,
// SADD, SINTERSTORE ...). No values is refused, the error naming what is
// missing.
func keyValuesCmd(c *Client, s *spec, key string, values []string, what string) cmd[int64] {
	if len(values) == 0 {
		return invalidCmd[int64](s, "no "+what)
	}
	f := c.newFrame(2+len(values), s.name)
	arg(f, key)
	for _, v := range values {
		arg(f, v)
	}
	return typedCmd(f, s, wire.WantInt, intOf)
}

// keyStringCmd defines "NAME key" with a string reply; null is [ErrNil].
func keyStringCmd(c *Client, s *spec, key string) cmd[string] {
	f := c.newFrame(2, s.name)
	arg(f, key)
	return stringCmd(f, s)
}

// keyIntCmd defines "NAME key" with an integer reply.
func keyIntCmd(c *Client, s *spec, key string) cmd[int64] {
	f := c.newFrame(2, s.name)
	arg(f, key)
	return typedCmd(f, s, wire.WantInt, intOf)
}

// LPush prepends values to the list at key and returns its new length.
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) cmdLPush(key string, values ...string) cmd[int64] {
	return keyValuesCmd(c, specLPUSH, key, values, "values")
}

// RPush appends values to the list at key and returns its new length.
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) cmdRPush(key string, values ...string) cmd[int64] {
	return keyValuesCmd(c, specRPUSH, key, values, "values")
}

// LPop removes and returns the first element of the list at key, or
// [ErrNil] when the list is empty or missing. Its retry category is
// [WriteAccumulating]: a resend pops another element.
func (c *Client) cmdLPop(key string) cmd[string] {
	return keyStringCmd(c, specLPOP, key)
}

// LRange returns the elements from start to stop (inclusive; negative
// indexes count from the end). Its retry category is [ReadOnly].
func (c *Client) cmdLRange(key string, start, stop int64) cmd[[]string] {
	return typedCmd(c.rangeFrame(specLRANGE, key, start, stop), specLRANGE, wire.WantValue, strsOf)
}

// RPop removes and returns the last element of the list at key as a
// string, or [ErrNil] when the list is empty or missing. Its retry
// category is [WriteAccumulating]: a resend pops another element.
func (c *Client) cmdRPop(key string) cmd[string] {
	return keyStringCmd(c, specRPOP, key)
}

// LLen returns the length of the list at key as an int64 (0 when the key
// does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdLLen(key string) cmd[int64] {
	return keyIntCmd(c, specLLEN, key)
}

// LIndex returns the element at index of the list at key as a string
// (negative indexes count from the end), or [ErrNil] when index is out of
// range or the key does not exist. Its retry category is [ReadOnly].
func (c *Client) cmdLIndex(key string, index int64) cmd[string] {
	f := c.newFrame(3, "LINDEX")
	arg(f, key)
	argInt(f, index)
	return stringCmd(f, specLINDEX)
}

// LSet is the command of [Client.LSet]; its Batch member's Future holds
// struct{} on success.
//
// respire:client manual
func (c *Client) cmdLSet(key string, index int64, value string) cmd[struct{}] {
	f := c.newFrame(4, "LSET")
	arg(f, key)
	argInt(f, index)
	arg(f, value)
	return typedCmd(f, specLSET, wire.WantNone, statusOf)
}

// LSet sets the element at index of the list at key to value (negative
// indexes count from the end). An index out of range, or a missing key,
// is a [*ServerError]. Its retry category is [WriteLastWins].
func (c *Client) LSet(ctx context.Context, key string, index int64, value string) error {
	_, err := call(ctx, c, c.cmdLSet(key, index, value))
	return err
}

// LRem removes elements equal to value from the list at key and returns
// how many it removed, as an int64: with count > 0 the first count from
// the head, with count < 0 the first -count from the tail, with count 0
// all of them. Its retry category is [WriteAccumulating].
func (c *Client) cmdLRem(key string, count int64, value string) cmd[int64] {
	f := c.newFrame(4, "LREM")
	arg(f, key)
	argInt(f, count)
	arg(f, value)
	return typedCmd(f, specLREM, wire.WantInt, intOf)
}

// LTrim is the command of [Client.LTrim]; its Batch member's Future holds
// struct{} on success.
//
// respire:client manual
func (c *Client) cmdLTrim(key string, start, stop int64) cmd[struct{}] {
	return typedCmd(c.rangeFrame(specLTRIM, key, start, stop), specLTRIM, wire.WantNone, statusOf)
}

// LTrim trims the list at key to the elements from start to stop
// (inclusive; negative indexes count from the end). Its retry category is
// [WriteAccumulating]: a resend trims the already trimmed list again,
// which may remove more elements.
func (c *Client) LTrim(ctx context.Context, key string, start, stop int64) error {
	_, err := call(ctx, c, c.cmdLTrim(key, start, stop))
	return err
}

// LInsert inserts value into the list at key just before (before true) or
// after the first element equal to pivot. It returns the new length as an
// int64, -1 when pivot is not in the list, or 0 when the key does not
// exist. Its retry category is [WriteAccumulating].
func (c *Client) cmdLInsert(key string, before bool, pivot, value string) cmd[int64] {
	f := c.newFrame(5, "LINSERT")
	arg(f, key)
	if before {
		arg(f, "BEFORE")
	} else {
		arg(f, "AFTER")
	}
	arg(f, pivot)
	arg(f, value)
	return typedCmd(f, specLINSRT, wire.WantInt, intOf)
}

// LPos returns the index of the first element equal to element in the
// list at key as an int64, or [ErrNil] when there is none. Its retry
// category is [ReadOnly].
func (c *Client) cmdLPos(key, element string) cmd[int64] {
	f := c.newFrame(3, "LPOS")
	arg(f, key)
	arg(f, element)
	return typedCmd(f, specLPOS, wire.WantInt, intOf)
}

// LMove pops an element from the from end of the list at src, pushes it
// onto the to end of the list at dst (src and dst may be the same list)
// and returns it as a string, or [ErrNil] when src is empty or missing.
// It is [Client.BLMove] without blocking. A side other than [ListLeft]
// or [ListRight] fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating]: a resend moves another
// element.
func (c *Client) cmdLMove(src, dst string, from, to ListSide) cmd[string] {
	fw, ok1 := from.arg()
	tw, ok2 := to.arg()
	if !ok1 || !ok2 {
		return invalidCmd[string](specLMOVE, "list side must be ListLeft or ListRight")
	}
	f := c.newFrame(5, "LMOVE")
	arg(f, src)
	arg(f, dst)
	arg(f, fw)
	arg(f, tw)
	return stringCmd(f, specLMOVE)
}

// LPushX prepends values to the list at key only if the key holds a list,
// and returns its new length as an int64 (0 when the key does not exist).
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) cmdLPushX(key string, values ...string) cmd[int64] {
	return keyValuesCmd(c, specLPUSHX, key, values, "values")
}

// RPushX appends values to the list at key only if the key holds a list,
// and returns its new length as an int64 (0 when the key does not exist).
// No values fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteAccumulating].
func (c *Client) cmdRPushX(key string, values ...string) cmd[int64] {
	return keyValuesCmd(c, specRPUSHX, key, values, "values")
}

// RPopLPush removes the last element of the list at src, prepends it to
// the list at dst (src and dst may be the same list: the list rotates) and
// returns it as a string, or [ErrNil] when src is empty or missing. Redis
// deprecates RPOPLPUSH in favour of LMOVE: it is [Client.LMove] with
// [ListRight] and [ListLeft]. Its retry category is [WriteAccumulating]: a
// resend moves another element.
func (c *Client) cmdRPopLPush(src, dst string) cmd[string] {
	f := c.newFrame(3, "RPOPLPUSH")
	arg(f, src)
	arg(f, dst)
	return stringCmd(f, specRPOPLPUSH)
}

// KeyElements is what [Client.LMPop] and [Client.BLMPop] return: the key
// of the list the elements were popped from, and the elements in the
// order they were popped. It is a plain value that the library neither keeps
// nor changes once returned: safe for concurrent reads.
type KeyElements struct {
	Key      string
	Elements []string
}

// LMPop pops up to count elements (count 0: one, as the server does by
// default) from the from end of the first non-empty list among keys, and
// returns that list's key with the elements in the order they were
// popped, or [ErrNil] when every list is empty or missing. No keys, a
// negative count or a side other than [ListLeft] or [ListRight] fails with
// [ErrInvalidArgument] before anything is sent. On a Cluster client the
// keys must share a slot. It is [Client.BLMPop] without blocking. Its
// retry category is [WriteAccumulating]: a resend pops more elements.
func (c *Client) cmdLMPop(from ListSide, count int64, keys ...string) cmd[KeyElements] {
	f, err := c.mpopFrame(specLMPOP, "", from, count, keys)
	if err != "" {
		return invalidCmd[KeyElements](specLMPOP, err)
	}
	return typedCmd(f, specLMPOP, wire.WantValue, keyElementsOf)
}

// mpopFrame encodes "LMPOP numkeys keys... side [COUNT count]", or BLMPOP
// with timeout (in seconds, as the server reads it) in front of numkeys;
// or it returns why the arguments are refused.
func (c *Client) mpopFrame(s *spec, timeout string, from ListSide, count int64, keys []string) (*wire.Frame, string) {
	side, ok := from.arg()
	switch {
	case len(keys) == 0:
		return nil, "no keys"
	case !ok:
		return nil, "list side must be ListLeft or ListRight"
	case count < 0:
		return nil, "negative count"
	}
	n := 3 + len(keys)
	if timeout != "" {
		n++
	}
	if count > 0 {
		n += 2
	}
	f := c.newFrame(n, s.name)
	if timeout != "" {
		arg(f, timeout)
	}
	argInt(f, int64(len(keys)))
	for _, k := range keys {
		arg(f, k)
	}
	arg(f, side)
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	return f, ""
}

// keyElementsOf converts an LMPOP or BLMPOP reply, [key, [elements...]]
// under both protocols; null (nothing popped) is ErrNil.
func keyElementsOf(v resp.Value) (KeyElements, error) {
	if v.IsNull() || v.Type == 0 {
		return KeyElements{}, ErrNil
	}
	if v.Type != resp.Array || len(v.Elems) != 2 || v.Elems[0].Type.Aggregate() || !v.Elems[1].Type.Aggregate() {
		return KeyElements{}, unexpected("array of key and elements", v)
	}
	elems, err := toStrings(v.Elems[1])
	if err != nil {
		return KeyElements{}, atElement(1, err)
	}
	return KeyElements{Key: string(v.Elems[0].TextBytes()), Elements: elems}, nil
}

// BLMPop is [Client.LMPop] blocking up to timeout while every list among
// keys is empty (0 blocks until an element arrives or ctx ends). When
// timeout passes first it returns [ErrNil]. No keys, a negative count, a
// bad side, or a negative or sub-millisecond timeout fails with
// [ErrInvalidArgument] before anything is sent. It runs on a dedicated
// connection and is never resent; see [Client.Do] for how long it waits.
func (c *Client) BLMPop(ctx context.Context, timeout time.Duration, from ListSide, count int64, keys ...string) (KeyElements, error) {
	secs, err := timeoutSeconds("BLMPOP", timeout)
	if err != nil {
		return KeyElements{}, err
	}
	f, why := c.mpopFrame(specBLMPOP, secs, from, count, keys)
	if why != "" {
		return KeyElements{}, errInvalid("BLMPOP", why)
	}
	v, err := c.blockingValue(ctx, f, specBLMPOP, blockTime{d: timeout, forever: timeout == 0})
	if err != nil {
		return KeyElements{}, err
	}
	return keyElementsOf(v)
}

// BRPopLPush is [Client.RPopLPush] blocking up to timeout while src is
// empty (0 blocks until an element arrives or ctx ends). When timeout
// passes first it returns [ErrNil]. Redis deprecates BRPOPLPUSH in favour
// of BLMOVE: it is [Client.BLMove] with [ListRight] and [ListLeft]. It runs
// on a dedicated connection and is never resent.
func (c *Client) BRPopLPush(ctx context.Context, src, dst string, timeout time.Duration) (string, error) {
	secs, err := timeoutSeconds("BRPOPLPUSH", timeout)
	if err != nil {
		return "", err
	}
	f := c.newFrame(4, "BRPOPLPUSH")
	arg(f, src)
	arg(f, dst)
	arg(f, secs)
	v, err := c.blockingValue(ctx, f, specBRPOPLPUSH, blockTime{d: timeout, forever: timeout == 0})
	if err != nil {
		return "", err
	}
	if v.Type.Aggregate() {
		return "", unexpected("string", v)
	}
	return string(v.TextBytes()), nil
}
