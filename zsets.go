package respire

import (
	"context"
	"math"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specZADD             = specOf(catalog.SortedSet.ZADD())
	specZADDLastWins     = &spec{name: "ZADD", cat: WriteLastWins, desc: catalog.SortedSet.ZADD()}
	specZADDChecked      = &spec{name: "ZADD", cat: WriteChecked, desc: catalog.SortedSet.ZADD()}
	specZRANGE           = specOf(catalog.SortedSet.ZRANGE())
	specZSCORE           = specOf(catalog.SortedSet.ZSCORE())
	specZREM             = specOf(catalog.SortedSet.ZREM())
	specZCARD            = specOf(catalog.SortedSet.ZCARD())
	specZCOUNT           = specOf(catalog.SortedSet.ZCOUNT())
	specZINCRBY          = specOf(catalog.SortedSet.ZINCRBY())
	specZRANK            = specOf(catalog.SortedSet.ZRANK())
	specZREVRANK         = specOf(catalog.SortedSet.ZREVRANK())
	specZREVRANGE        = specOf(catalog.SortedSet.ZREVRANGE())
	specZPOPMIN          = specOf(catalog.SortedSet.ZPOPMIN())
	specZPOPMAX          = specOf(catalog.SortedSet.ZPOPMAX())
	specZMSCORE          = specOf(catalog.SortedSet.ZMSCORE())
	specZDIFF            = specOf(catalog.SortedSet.ZDIFF())
	specZDIFFSTORE       = specOf(catalog.SortedSet.ZDIFFSTORE())
	specZINTER           = specOf(catalog.SortedSet.ZINTER())
	specZINTERCARD       = specOf(catalog.SortedSet.ZINTERCARD())
	specZINTERSTORE      = specOf(catalog.SortedSet.ZINTERSTORE())
	specZUNION           = specOf(catalog.SortedSet.ZUNION())
	specZUNIONSTORE      = specOf(catalog.SortedSet.ZUNIONSTORE())
	specZLEXCOUNT        = specOf(catalog.SortedSet.ZLEXCOUNT())
	specZMPOP            = specOf(catalog.SortedSet.ZMPOP())
	specBZMPOP           = &spec{name: "BZMPOP", cat: Never, desc: catalog.SortedSet.BZMPOP()}
	specZRANDMEMBER      = specOf(catalog.SortedSet.ZRANDMEMBER())
	specZRANGESTORE      = specOf(catalog.SortedSet.ZRANGESTORE())
	specZREMRANGEBYLEX   = specOf(catalog.SortedSet.ZREMRANGEBYLEX())
	specZREMRANGEBYRANK  = specOf(catalog.SortedSet.ZREMRANGEBYRANK())
	specZREMRANGEBYSCORE = specOf(catalog.SortedSet.ZREMRANGEBYSCORE())
	specZRANGEBYSCORE    = specOf(catalog.SortedSet.ZRANGEBYSCORE())
	specZREVRANGEBYSCORE = specOf(catalog.SortedSet.ZREVRANGEBYSCORE())
	specZRANGEBYLEX      = specOf(catalog.SortedSet.ZRANGEBYLEX())
	specZREVRANGEBYLEX   = specOf(catalog.SortedSet.ZREVRANGEBYLEX())
)

// Z is a sorted-set member with its score. A call only reads it and keeps no
// reference to it, so one value may serve concurrent calls while nobody
// changes it.
type Z struct {
	Score  float64
	Member string
}

// ZCompare restricts ZADD updates by comparing scores. Its values are plain
// constants, safe for concurrent use.
type ZCompare uint8

// ZADD comparisons.
const (
	// ZAnyScore updates whatever the new score (the default).
	ZAnyScore ZCompare = iota
	// ZGreater updates only when the new score is greater (GT).
	ZGreater
	// ZLess updates only when the new score is less (LT).
	ZLess
)

// ZAddOptions are ZADD's options. The zero value is a plain ZADD.
//
// Retry categories: Condition [SetIfExists] alone (XX) is WriteLastWins;
// [SetIfNotExists] alone (NX) is WriteChecked. A plain ZADD, or any use of
// Compare, Changed or ZAddIncr, keeps the conservative WriteAccumulating. A
// call only reads it and keeps no reference to it, so one value may serve
// concurrent calls while nobody changes it.
type ZAddOptions struct {
	// Condition is NX (add only) or XX (update only).
	Condition SetCondition
	// Compare is GT or LT.
	Compare ZCompare
	// Changed counts updated members too (CH).
	Changed bool
}

// ZAdd adds or updates members of the sorted set at key and returns how
// many were added (or changed, with Changed).
func (c *Client) cmdZAdd(key string, opt ZAddOptions, members ...Z) cmd[int64] {
	if len(members) == 0 {
		return invalidCmd[int64](specZADD, "no members")
	}
	f, s, err := c.zaddFrame(key, opt, false, members)
	return frameCmd(f, s, err, wire.WantInt, intOf)
}

// ZAddIncr increments member's score like ZINCRBY, with ZADD's options
// (ZADD ... INCR), and returns the new score; [ErrNil] when an option
// prevented the update.
func (c *Client) cmdZAddIncr(key string, opt ZAddOptions, member Z) cmd[float64] {
	f, s, err := c.zaddFrame(key, opt, true, []Z{member})
	return frameCmd(f, s, err, wire.WantBytes, floatOf)
}

func (c *Client) zaddFrame(key string, opt ZAddOptions, incr bool, members []Z) (*wire.Frame, *spec, error) {
	if opt.Condition > SetIfExists || opt.Compare > ZLess {
		return nil, specZADD, errInvalid("ZADD", "undefined option value")
	}
	if opt.Condition == SetIfNotExists && opt.Compare != ZAnyScore {
		return nil, specZADD, errInvalid("ZADD", "NX cannot be combined with GT or LT")
	}
	for _, m := range members {
		if math.IsNaN(m.Score) {
			return nil, specZADD, errInvalid("ZADD", "score is NaN")
		}
	}
	n := 2 + 2*len(members)
	if opt.Condition != SetAlways {
		n++
	}
	if opt.Compare != ZAnyScore {
		n++
	}
	if opt.Changed {
		n++
	}
	if incr {
		n++
	}
	f := c.newFrame(n, "ZADD")
	arg(f, key)
	switch opt.Condition {
	case SetIfNotExists:
		arg(f, "NX")
	case SetIfExists:
		arg(f, "XX")
	}
	switch opt.Compare {
	case ZGreater:
		arg(f, "GT")
	case ZLess:
		arg(f, "LT")
	}
	if opt.Changed {
		arg(f, "CH")
	}
	if incr {
		arg(f, "INCR")
	}
	for _, m := range members {
		argFloat(f, m.Score)
		arg(f, m.Member)
	}
	s := specZADD
	if !incr && !opt.Changed && opt.Compare == ZAnyScore {
		switch opt.Condition {
		case SetIfExists:
			s = specZADDLastWins
		case SetIfNotExists:
			s = specZADDChecked
		}
	}
	return f, s, nil
}

// toZs reads RESP3 [[member, score], ...] or RESP2 [member, score, ...].
func toZs(v resp.Value) ([]Z, error) {
	if v.Type != resp.Array && v.Type != resp.Set {
		return nil, unexpected("array", v)
	}
	var out []Z
	if len(v.Elems) > 0 && v.Elems[0].Type == resp.Array {
		out = make([]Z, 0, len(v.Elems))
		for _, p := range v.Elems {
			if len(p.Elems) != 2 {
				return nil, unexpected("member-score pair", p)
			}
			z, err := zOf(p.Elems[0], p.Elems[1])
			if err != nil {
				return nil, err
			}
			out = append(out, z)
		}
		return out, nil
	}
	if len(v.Elems)%2 != 0 {
		return nil, unexpected("member-score pairs", v)
	}
	out = make([]Z, 0, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		z, err := zOf(v.Elems[i], v.Elems[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, z)
	}
	return out, nil
}

// zOf converts one member and its score; the member must be a string
// (not an aggregate, a null or an error).
func zOf(member, score resp.Value) (Z, error) {
	m, err := convKey(member)
	if err != nil {
		return Z{}, err
	}
	f, err := convFloat64(score)
	if err != nil {
		return Z{}, err
	}
	return Z{Member: string(m), Score: f}, nil
}

// zsOrEmpty is toZs reading a null reply as no members.
func zsOrEmpty(v resp.Value) ([]Z, error) {
	if v.IsNull() {
		return []Z{}, nil
	}
	return toZs(v)
}

// ZScore returns member's score, or [ErrNil] when it is not a member.
func (c *Client) cmdZScore(key, member string) cmd[float64] {
	f := c.newFrame(3, "ZSCORE")
	arg(f, key)
	arg(f, member)
	return typedCmd(f, specZSCORE, wire.WantBytes, floatOf)
}

// ZRem removes members from the sorted set at key (ZREM) and returns how
// many were removed. No members fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating.
func (c *Client) cmdZRem(key string, members ...string) cmd[int64] {
	if len(members) == 0 {
		return invalidCmd[int64](specZREM, "no members")
	}
	return keyArgsCmd(c, specZREM, key, members, intOf)
}

// ZCard returns the number of members of the sorted set at key (ZCARD),
// 0 when it does not exist. Its retry category is ReadOnly.
func (c *Client) cmdZCard(key string) cmd[int64] {
	f := c.newFrame(2, "ZCARD")
	arg(f, key)
	return typedCmd(f, specZCARD, wire.WantInt, intOf)
}

// keyBoundsCmd defines "NAME key a b" with an integer reply.
func keyBoundsCmd(c *Client, s *spec, key, a, b string) cmd[int64] {
	f := c.newFrame(4, s.name)
	arg(f, key)
	arg(f, a)
	arg(f, b)
	return typedCmd(f, s, wire.WantInt, intOf)
}

// ZCount returns how many members have a score between min and max
// (ZCOUNT). The bounds are in Redis's syntax: a number, inclusive by
// default, exclusive after "(" ("(1.5"), or "-inf" and "+inf". Its retry
// category is ReadOnly.
func (c *Client) cmdZCount(key, min, max string) cmd[int64] {
	return keyBoundsCmd(c, specZCOUNT, key, min, max)
}

// ZLexCount returns how many members lie between the lexicographic bounds
// min and max (ZLEXCOUNT), for a sorted set whose members share one score.
// The bounds are in Redis's syntax: "[a" (inclusive), "(a" (exclusive),
// "-" and "+" (the ends). Its retry category is ReadOnly.
func (c *Client) cmdZLexCount(key, min, max string) cmd[int64] {
	return keyBoundsCmd(c, specZLEXCOUNT, key, min, max)
}

// ZIncrBy adds increment to member's score (ZINCRBY), adding the member
// when absent, and returns the new score. A NaN increment fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) cmdZIncrBy(key string, increment float64, member string) cmd[float64] {
	if math.IsNaN(increment) {
		return invalidCmd[float64](specZINCRBY, "increment is NaN")
	}
	f := c.newFrame(4, "ZINCRBY")
	arg(f, key)
	argFloat(f, increment)
	arg(f, member)
	return typedCmd(f, specZINCRBY, wire.WantBytes, floatOf)
}

// ZRank returns member's rank (ZRANK), 0 for the lowest score, or
// [ErrNil] when member or key does not exist. Its retry category is
// ReadOnly.
func (c *Client) cmdZRank(key, member string) cmd[int64] {
	f := c.newFrame(3, "ZRANK")
	arg(f, key)
	arg(f, member)
	return typedCmd(f, specZRANK, wire.WantInt, intOf)
}

// ZRevRank returns member's rank counted from the highest score
// (ZREVRANK), or [ErrNil] when member or key does not exist. Its retry
// category is ReadOnly.
func (c *Client) cmdZRevRank(key, member string) cmd[int64] {
	f := c.newFrame(3, "ZREVRANK")
	arg(f, key)
	arg(f, member)
	return typedCmd(f, specZREVRANK, wire.WantInt, intOf)
}

// ZRankWithScore returns member's rank and score (ZRANK ... WITHSCORE,
// Redis 7.2 or later; older servers reply with a [*ServerError]), or
// [ErrNil] when member or key does not exist. Its retry category is
// ReadOnly.
func (c *Client) ZRankWithScore(ctx context.Context, key, member string) (rank int64, score float64, err error) {
	return c.rankWithScore(ctx, specZRANK, key, member)
}

// ZRevRankWithScore is [Client.ZRankWithScore] counting ranks from the
// highest score (ZREVRANK ... WITHSCORE, Redis 7.2 or later). Its retry
// category is ReadOnly.
func (c *Client) ZRevRankWithScore(ctx context.Context, key, member string) (rank int64, score float64, err error) {
	return c.rankWithScore(ctx, specZREVRANK, key, member)
}

func (c *Client) rankWithScore(ctx context.Context, s *spec, key, member string) (rank int64, score float64, err error) {
	f := c.newFrame(4, s.name)
	arg(f, key)
	arg(f, member)
	arg(f, "WITHSCORE")
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return 0, 0, err
	}
	if v.IsNull() {
		return 0, 0, ErrNil
	}
	if v.Type != resp.Array || len(v.Elems) != 2 {
		return 0, 0, unexpected("rank-score pair", v)
	}
	if rank, err = convInt64(v.Elems[0]); err != nil {
		return 0, 0, err
	}
	if score, err = convFloat64(v.Elems[1]); err != nil {
		return 0, 0, err
	}
	return rank, score, nil
}

// ZMScore returns the scores of members (ZMSCORE; Redis 6.2 or later);
// found[i] reports whether members[i] is a member (scores[i] is 0 when it
// is not). No members fails with [ErrInvalidArgument]. Its retry category
// is ReadOnly.
func (c *Client) ZMScore(ctx context.Context, key string, members ...string) (scores []float64, found []bool, err error) {
	if len(members) == 0 {
		return nil, nil, errInvalid("ZMSCORE", "no members")
	}
	f := c.newFrame(2+len(members), "ZMSCORE")
	arg(f, key)
	for _, m := range members {
		arg(f, m)
	}
	v, err := c.doValue(ctx, f, specZMSCORE)
	if err != nil {
		return nil, nil, err
	}
	if v.Type != resp.Array || len(v.Elems) != len(members) {
		return nil, nil, unexpected("array of one score per member", v)
	}
	scores, found = make([]float64, len(members)), make([]bool, len(members))
	for i, e := range v.Elems {
		if e.IsNull() {
			continue
		}
		if scores[i], err = convFloat64(e); err != nil {
			return nil, nil, err
		}
		found[i] = true
	}
	return scores, found, nil
}
