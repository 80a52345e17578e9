package respire

// Popping and sampling sorted sets: ZPOPMIN, ZPOPMAX, ZMPOP, BZMPOP and
// ZRANDMEMBER.

import (
	"context"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// ZPopMin removes and returns up to count members with the lowest scores
// (ZPOPMIN key count), lowest first; an empty slice when key does not
// exist. A negative count fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating (a resend pops more members).
func (c *Client) cmdZPopMin(key string, count int64) cmd[[]Z] {
	return c.zpop(specZPOPMIN, key, count)
}

// ZPopMax removes and returns up to count members with the highest scores
// (ZPOPMAX key count), highest first; an empty slice when key does not
// exist. A negative count fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating (a resend pops more members).
func (c *Client) cmdZPopMax(key string, count int64) cmd[[]Z] {
	return c.zpop(specZPOPMAX, key, count)
}

func (c *Client) zpop(s *spec, key string, count int64) cmd[[]Z] {
	if count < 0 {
		return invalidCmd[[]Z](s, "count is negative")
	}
	f := c.newFrame(3, s.name)
	arg(f, key)
	argInt(f, count)
	return typedCmd(f, s, wire.WantValue, zsOrEmpty)
}

// ZRandMember returns random members of the sorted set at key
// (ZRANDMEMBER key count): with a positive count, up to count distinct
// members; with a negative count, exactly -count members that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is ReadOnly.
func (c *Client) cmdZRandMember(key string, count int64) cmd[[]string] {
	f := c.newFrame(3, "ZRANDMEMBER")
	arg(f, key)
	argInt(f, count)
	return typedCmd(f, specZRANDMEMBER, wire.WantValue, strsOf)
}

// ZRandMemberWithScores is [Client.ZRandMember] with each member's score
// (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZRandMemberWithScores(key string, count int64) cmd[[]Z] {
	f := c.newFrame(4, "ZRANDMEMBER")
	arg(f, key)
	argInt(f, count)
	arg(f, "WITHSCORES")
	return typedCmd(f, specZRANDMEMBER, wire.WantValue, zsOrEmpty)
}

// ZEnd names the end of a sorted set that ZMPOP and BZMPOP pop from. Its
// values are plain constants, safe for concurrent use.
type ZEnd uint8

// Sorted-set ends.
const (
	// ZMin is the end of the lowest scores (MIN).
	ZMin ZEnd = iota
	// ZMax is the end of the highest scores (MAX).
	ZMax
)

// ZMPopResult is what [Client.ZMPop] and [Client.BZMPop] popped: the key
// of the sorted set and its members, in pop order. It is a plain value that
// the library neither keeps nor changes once returned: safe for concurrent
// reads.
type ZMPopResult struct {
	Key     string
	Members []Z
}

// zmpopFrame validates and encodes "NAME [timeout] numkeys keys...
// MIN|MAX [COUNT count]" (timeout when secs is set; COUNT when count > 0).
func (c *Client) zmpopFrame(s *spec, secs string, end ZEnd, count int64, keys []string) (*wire.Frame, error) {
	switch {
	case len(keys) == 0:
		return nil, errInvalid(s.name, "no keys")
	case end > ZMax:
		return nil, errInvalid(s.name, "end must be ZMin or ZMax")
	case count < 0:
		return nil, errInvalid(s.name, "negative count")
	}
	n := 3 + len(keys)
	if secs != "" {
		n++
	}
	if count > 0 {
		n += 2
	}
	f := c.newFrame(n, s.name)
	if secs != "" {
		arg(f, secs)
	}
	argInt(f, int64(len(keys)))
	for _, k := range keys {
		arg(f, k)
	}
	if end == ZMin {
		arg(f, "MIN")
	} else {
		arg(f, "MAX")
	}
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	return f, nil
}

// zmpopOf converts a ZMPOP or BZMPOP reply; null is [ErrNil].
func zmpopOf(v resp.Value) (ZMPopResult, error) {
	if v.IsNull() {
		return ZMPopResult{}, ErrNil
	}
	if v.Type != resp.Array || len(v.Elems) != 2 || v.Elems[0].Type.Aggregate() {
		return ZMPopResult{}, unexpected("array of key and members", v)
	}
	members, err := toZs(v.Elems[1])
	if err != nil {
		return ZMPopResult{}, err
	}
	return ZMPopResult{Key: string(v.Elems[0].TextBytes()), Members: members}, nil
}

// ZMPop removes and returns up to count members (count 0: one, as the
// server does by default) from the end end of the first non-empty sorted
// set among keys, with its key (ZMPOP; Redis 7.0 or later); [ErrNil] when
// every one is empty. No keys, an undefined end or a negative count fails
// with [ErrInvalidArgument], as for [Client.LMPop]. On a Cluster client
// the keys must share a slot. Its retry category is WriteAccumulating (a
// resend pops more members).
func (c *Client) cmdZMPop(end ZEnd, count int64, keys ...string) cmd[ZMPopResult] {
	f, err := c.zmpopFrame(specZMPOP, "", end, count, keys)
	return frameCmd(f, specZMPOP, err, wire.WantValue, zmpopOf)
}

// BZMPop is [Client.ZMPop] blocking up to timeout while every sorted set
// among keys is empty (BZMPOP; 0 blocks until a member arrives or ctx
// ends). When timeout passes first it returns [ErrNil]. No keys, an
// undefined end, a negative count, or a negative or sub-millisecond
// timeout fails with [ErrInvalidArgument]. It runs on a dedicated
// connection and is never resent.
func (c *Client) BZMPop(ctx context.Context, timeout time.Duration, end ZEnd, count int64, keys ...string) (ZMPopResult, error) {
	secs, err := timeoutSeconds("BZMPOP", timeout)
	if err != nil {
		return ZMPopResult{}, err
	}
	f, err := c.zmpopFrame(specBZMPOP, secs, end, count, keys)
	if err != nil {
		return ZMPopResult{}, err
	}
	v, err := c.blockingValue(ctx, f, specBZMPOP, blockTime{d: timeout, forever: timeout == 0})
	if err != nil {
		return ZMPopResult{}, err
	}
	return zmpopOf(v)
}
