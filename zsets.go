package respire

import (
	"context"
	"math"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specZADD         = specOf(catalog.SortedSet.ZADD())
	specZADDLastWins = &spec{name: "ZADD", cat: WriteLastWins, desc: catalog.SortedSet.ZADD()}
	specZADDChecked  = &spec{name: "ZADD", cat: WriteChecked, desc: catalog.SortedSet.ZADD()}
	specZRANGE       = specOf(catalog.SortedSet.ZRANGE())
	specZSCORE       = specOf(catalog.SortedSet.ZSCORE())
	specZREM         = specOf(catalog.SortedSet.ZREM())
	specZCARD        = specOf(catalog.SortedSet.ZCARD())
	specZCOUNT       = specOf(catalog.SortedSet.ZCOUNT())
	specZINCRBY      = specOf(catalog.SortedSet.ZINCRBY())
	specZRANK        = specOf(catalog.SortedSet.ZRANK())
	specZREVRANK     = specOf(catalog.SortedSet.ZREVRANK())
	specZREVRANGE    = specOf(catalog.SortedSet.ZREVRANGE())
	specZPOPMIN      = specOf(catalog.SortedSet.ZPOPMIN())
	specZPOPMAX      = specOf(catalog.SortedSet.ZPOPMAX())
	specZMSCORE      = specOf(catalog.SortedSet.ZMSCORE())
)

// Z is a sorted-set member with its score.
type Z struct {
	Score  float64
	Member string
}

// ZCompare restricts ZADD updates by comparing scores.
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
// Compare, Changed or ZAddIncr, keeps the conservative WriteAccumulating.
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
func (c *Client) ZAdd(ctx context.Context, key string, opt ZAddOptions, members ...Z) (int64, error) {
	if len(members) == 0 {
		return 0, errInvalid("ZADD", "no members")
	}
	f, s, err := c.zaddFrame(key, opt, false, members)
	if err != nil {
		return 0, err
	}
	return c.doInt(ctx, f, s)
}

// ZAddIncr increments member's score like ZINCRBY, with ZADD's options
// (ZADD ... INCR), and returns the new score; [ErrNil] when an option
// prevented the update.
func (c *Client) ZAddIncr(ctx context.Context, key string, opt ZAddOptions, member Z) (float64, error) {
	f, s, err := c.zaddFrame(key, opt, true, []Z{member})
	if err != nil {
		return 0, err
	}
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return 0, err
	}
	return toFloat64(v)
}

func (c *Client) zaddFrame(key string, opt ZAddOptions, incr bool, members []Z) (*wire.Frame, *spec, error) {
	if opt.Condition > SetIfExists || opt.Compare > ZLess {
		return nil, nil, errInvalid("ZADD", "undefined option value")
	}
	if opt.Condition == SetIfNotExists && opt.Compare != ZAnyScore {
		return nil, nil, errInvalid("ZADD", "NX cannot be combined with GT or LT")
	}
	for _, m := range members {
		if math.IsNaN(m.Score) {
			return nil, nil, errInvalid("ZADD", "score is NaN")
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

// ZRange returns the members ranked start to stop (inclusive; negative
// ranks count from the end), lowest score first.
func (c *Client) ZRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	return c.doStrings(ctx, c.rangeFrame(specZRANGE, key, start, stop), specZRANGE)
}

// ZRangeWithScores is [Client.ZRange] with each member's score.
func (c *Client) ZRangeWithScores(ctx context.Context, key string, start, stop int64) ([]Z, error) {
	f := c.newFrame(5, "ZRANGE")
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	arg(f, "WITHSCORES")
	v, err := c.doValue(ctx, f, specZRANGE)
	if err != nil {
		return nil, err
	}
	return toZs(v)
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
			score, err := toFloat64(p.Elems[1])
			if err != nil {
				return nil, err
			}
			out = append(out, Z{Member: string(p.Elems[0].TextBytes()), Score: score})
		}
		return out, nil
	}
	if len(v.Elems)%2 != 0 {
		return nil, unexpected("member-score pairs", v)
	}
	out = make([]Z, 0, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		score, err := toFloat64(v.Elems[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, Z{Member: string(v.Elems[i].TextBytes()), Score: score})
	}
	return out, nil
}

// ZScore returns member's score, or [ErrNil] when it is not a member.
func (c *Client) ZScore(ctx context.Context, key, member string) (float64, error) {
	f := c.newFrame(3, "ZSCORE")
	arg(f, key)
	arg(f, member)
	v, err := c.doValue(ctx, f, specZSCORE)
	if err != nil {
		return 0, err
	}
	return toFloat64(v)
}

// ZRem removes members from the sorted set at key (ZREM) and returns how
// many were removed. No members fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating.
func (c *Client) ZRem(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyArgsInt(ctx, specZREM, key, members, "members")
}

// ZCard returns the number of members of the sorted set at key (ZCARD),
// 0 when it does not exist. Its retry category is ReadOnly.
func (c *Client) ZCard(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "ZCARD")
	arg(f, key)
	return c.doInt(ctx, f, specZCARD)
}

// ZCount returns how many members have a score between min and max
// (ZCOUNT). The bounds are in Redis's syntax: a number, inclusive by
// default, exclusive after "(" ("(1.5"), or "-inf" and "+inf". Its retry
// category is ReadOnly.
func (c *Client) ZCount(ctx context.Context, key, min, max string) (int64, error) {
	f := c.newFrame(4, "ZCOUNT")
	arg(f, key)
	arg(f, min)
	arg(f, max)
	return c.doInt(ctx, f, specZCOUNT)
}

// ZIncrBy adds increment to member's score (ZINCRBY), adding the member
// when absent, and returns the new score. A NaN increment fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) ZIncrBy(ctx context.Context, key string, increment float64, member string) (float64, error) {
	if math.IsNaN(increment) {
		return 0, errInvalid("ZINCRBY", "increment is NaN")
	}
	f := c.newFrame(4, "ZINCRBY")
	arg(f, key)
	argFloat(f, increment)
	arg(f, member)
	v, err := c.doValue(ctx, f, specZINCRBY)
	if err != nil {
		return 0, err
	}
	return toFloat64(v)
}

// ZRank returns member's rank (ZRANK), 0 for the lowest score, or
// [ErrNil] when member or key does not exist. Its retry category is
// ReadOnly.
func (c *Client) ZRank(ctx context.Context, key, member string) (int64, error) {
	f := c.newFrame(3, "ZRANK")
	arg(f, key)
	arg(f, member)
	return c.doInt(ctx, f, specZRANK)
}

// ZRevRank returns member's rank counted from the highest score
// (ZREVRANK), or [ErrNil] when member or key does not exist. Its retry
// category is ReadOnly.
func (c *Client) ZRevRank(ctx context.Context, key, member string) (int64, error) {
	f := c.newFrame(3, "ZREVRANK")
	arg(f, key)
	arg(f, member)
	return c.doInt(ctx, f, specZREVRANK)
}

// ZRankWithScore returns member's rank and score (ZRANK ... WITHSCORE,
// Redis 7.2 or later; older servers reply with a [*ServerError]), or
// [ErrNil] when member or key does not exist. Its retry category is
// ReadOnly.
func (c *Client) ZRankWithScore(ctx context.Context, key, member string) (rank int64, score float64, err error) {
	f := c.newFrame(4, "ZRANK")
	arg(f, key)
	arg(f, member)
	arg(f, "WITHSCORE")
	v, err := c.doValue(ctx, f, specZRANK)
	if err != nil {
		return 0, 0, err
	}
	if v.IsNull() {
		return 0, 0, ErrNil
	}
	if v.Type != resp.Array || len(v.Elems) != 2 {
		return 0, 0, unexpected("rank-score pair", v)
	}
	if rank, err = toInt64(v.Elems[0]); err != nil {
		return 0, 0, err
	}
	if score, err = toFloat64(v.Elems[1]); err != nil {
		return 0, 0, err
	}
	return rank, score, nil
}

// ZRevRange returns the members ranked start to stop counted from the
// highest score (ZREVRANGE; negative ranks count from the end). Its retry
// category is ReadOnly.
func (c *Client) ZRevRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	return c.doStrings(ctx, c.rangeFrame(specZREVRANGE, key, start, stop), specZREVRANGE)
}

// ZRangeBy says how [Client.ZRangeArgs] reads its start and stop.
type ZRangeBy uint8

// ZRANGE interpretations of start and stop.
const (
	// ZByRank takes start and stop as ranks, such as "0" and "-1" (the
	// default).
	ZByRank ZRangeBy = iota
	// ZByScore takes them as scores, such as "1", "(1.5" or "+inf"
	// (BYSCORE).
	ZByScore
	// ZByLex takes them as lexicographic bounds, such as "[a", "(b", "-"
	// or "+" (BYLEX), for a sorted set whose members share one score.
	ZByLex
)

// ZRangeOptions are the options of [Client.ZRangeArgs] and
// [Client.ZRangeArgsWithScores]. The zero value is a plain ZRANGE by rank.
type ZRangeOptions struct {
	// By says how start and stop are read. Defaults to ZByRank.
	By ZRangeBy
	// Rev reverses the order, highest first (REV). With ZByScore or
	// ZByLex, start is then the upper bound and stop the lower one.
	Rev bool
	// Offset skips that many members of the range (LIMIT). Must not be
	// negative; only with ZByScore or ZByLex. Defaults to 0.
	Offset int64
	// Count returns at most that many members (LIMIT); 0 or -1 means no
	// limit. Other negative values are invalid; only with ZByScore or
	// ZByLex. Defaults to 0 (no limit).
	Count int64
}

// ZRangeArgs returns the members between start and stop read as opt.By
// says (ZRANGE with BYSCORE, BYLEX, REV and LIMIT; Redis 6.2 or later).
// Contradictory options (Offset or Count with ZByRank, a negative Offset,
// a negative Count other than -1, an undefined By) fail with
// [ErrInvalidArgument] naming the field before anything is sent. Its retry
// category is ReadOnly.
func (c *Client) ZRangeArgs(ctx context.Context, key, start, stop string, opt ZRangeOptions) ([]string, error) {
	f, err := c.zrangeArgsFrame(key, start, stop, opt, false)
	if err != nil {
		return nil, err
	}
	return c.doStrings(ctx, f, specZRANGE)
}

// ZRangeArgsWithScores is [Client.ZRangeArgs] with each member's score
// (WITHSCORES). Redis does not combine scores with ZByLex, so that fails
// with [ErrInvalidArgument] too. Its retry category is ReadOnly.
func (c *Client) ZRangeArgsWithScores(ctx context.Context, key, start, stop string, opt ZRangeOptions) ([]Z, error) {
	f, err := c.zrangeArgsFrame(key, start, stop, opt, true)
	if err != nil {
		return nil, err
	}
	v, err := c.doValue(ctx, f, specZRANGE)
	if err != nil {
		return nil, err
	}
	return toZs(v)
}

// zrangeArgsFrame validates opt and encodes ZRANGE with it.
func (c *Client) zrangeArgsFrame(key, start, stop string, opt ZRangeOptions, withScores bool) (*wire.Frame, error) {
	switch {
	case opt.By > ZByLex:
		return nil, errInvalid("ZRANGE", "undefined By")
	case withScores && opt.By == ZByLex:
		return nil, errInvalid("ZRANGE", "By ZByLex cannot be combined with scores")
	case opt.Offset < 0:
		return nil, errInvalid("ZRANGE", "Offset must not be negative")
	case opt.Count < -1:
		return nil, errInvalid("ZRANGE", "Count must be -1 (no limit) or at least 0")
	}
	limit := opt.Offset != 0 || opt.Count > 0
	if limit && opt.By == ZByRank {
		return nil, errInvalid("ZRANGE", "Offset and Count (LIMIT) need By ZByScore or ZByLex")
	}
	n := 4
	if opt.By != ZByRank {
		n++
	}
	if opt.Rev {
		n++
	}
	if limit {
		n += 3
	}
	if withScores {
		n++
	}
	f := c.newFrame(n, "ZRANGE")
	arg(f, key)
	arg(f, start)
	arg(f, stop)
	switch opt.By {
	case ZByScore:
		arg(f, "BYSCORE")
	case ZByLex:
		arg(f, "BYLEX")
	}
	if opt.Rev {
		arg(f, "REV")
	}
	if limit {
		count := opt.Count
		if count == 0 {
			count = -1
		}
		arg(f, "LIMIT")
		argInt(f, opt.Offset)
		argInt(f, count)
	}
	if withScores {
		arg(f, "WITHSCORES")
	}
	return f, nil
}

// ZPopMin removes and returns up to count members with the lowest scores
// (ZPOPMIN key count), lowest first; an empty slice when key does not
// exist. A negative count fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating (a resend pops more members).
func (c *Client) ZPopMin(ctx context.Context, key string, count int64) ([]Z, error) {
	return c.zpop(ctx, specZPOPMIN, key, count)
}

// ZPopMax removes and returns up to count members with the highest scores
// (ZPOPMAX key count), highest first; an empty slice when key does not
// exist. A negative count fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating (a resend pops more members).
func (c *Client) ZPopMax(ctx context.Context, key string, count int64) ([]Z, error) {
	return c.zpop(ctx, specZPOPMAX, key, count)
}

func (c *Client) zpop(ctx context.Context, s *spec, key string, count int64) ([]Z, error) {
	if count < 0 {
		return nil, errInvalid(s.name, "count is negative")
	}
	f := c.newFrame(3, s.name)
	arg(f, key)
	argInt(f, count)
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return nil, err
	}
	if v.IsNull() {
		return []Z{}, nil
	}
	return toZs(v)
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
		if scores[i], err = toFloat64(e); err != nil {
			return nil, nil, err
		}
		found[i] = true
	}
	return scores, found, nil
}
