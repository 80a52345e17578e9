package respire

import (
	"context"
	"math"
	"time"

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

// ZRange returns the members ranked start to stop (inclusive; negative
// ranks count from the end), lowest score first.
func (c *Client) cmdZRange(key string, start, stop int64) cmd[[]string] {
	return typedCmd(c.rangeFrame(specZRANGE, key, start, stop), specZRANGE, wire.WantValue, strsOf)
}

// ZRangeWithScores is [Client.ZRange] with each member's score.
func (c *Client) cmdZRangeWithScores(key string, start, stop int64) cmd[[]Z] {
	return typedCmd(c.rankRangeFrame(specZRANGE, key, start, stop, true), specZRANGE, wire.WantValue, toZs)
}

// rankRangeFrame encodes "NAME key start stop [WITHSCORES]".
func (c *Client) rankRangeFrame(s *spec, key string, start, stop int64, withScores bool) *wire.Frame {
	if !withScores {
		return c.rangeFrame(s, key, start, stop)
	}
	f := c.newFrame(5, s.name)
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	arg(f, "WITHSCORES")
	return f
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

// ZRevRange returns the members ranked start to stop counted from the
// highest score (ZREVRANGE; negative ranks count from the end). Its retry
// category is ReadOnly.
func (c *Client) cmdZRevRange(key string, start, stop int64) cmd[[]string] {
	return typedCmd(c.rangeFrame(specZREVRANGE, key, start, stop), specZREVRANGE, wire.WantValue, strsOf)
}

// ZRevRangeWithScores is [Client.ZRevRange] with each member's score
// (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZRevRangeWithScores(key string, start, stop int64) cmd[[]Z] {
	return typedCmd(c.rankRangeFrame(specZREVRANGE, key, start, stop, true), specZREVRANGE, wire.WantValue, toZs)
}

// ZRangeBy says how [Client.ZRangeArgs] reads its start and stop. Its values
// are plain constants, safe for concurrent use.
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

// ZRangeOptions are the options of [Client.ZRangeArgs],
// [Client.ZRangeArgsWithScores] and [Client.ZRangeStore]. The zero value
// is a plain ZRANGE by rank. A call only reads it and keeps no reference to
// it, so one value may serve concurrent calls while nobody changes it.
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
func (c *Client) cmdZRangeArgs(key, start, stop string, opt ZRangeOptions) cmd[[]string] {
	f, err := c.zrangeArgsFrame(specZRANGE, "", key, start, stop, opt, false)
	return frameCmd(f, specZRANGE, err, wire.WantValue, strsOf)
}

// ZRangeArgsWithScores is [Client.ZRangeArgs] with each member's score
// (WITHSCORES). Redis does not combine scores with ZByLex, so that fails
// with [ErrInvalidArgument] too. Its retry category is ReadOnly.
func (c *Client) cmdZRangeArgsWithScores(key, start, stop string, opt ZRangeOptions) cmd[[]Z] {
	f, err := c.zrangeArgsFrame(specZRANGE, "", key, start, stop, opt, true)
	return frameCmd(f, specZRANGE, err, wire.WantValue, toZs)
}

// ZRangeStore stores the members of source that [Client.ZRangeArgs] with
// start, stop and opt would return in the sorted set destination,
// replacing it, and returns how many it stored (ZRANGESTORE; Redis 6.2 or
// later). An empty range deletes destination. Its options are checked as
// ZRangeArgs checks them. Its retry category is WriteAccumulating.
func (c *Client) cmdZRangeStore(destination, source, start, stop string, opt ZRangeOptions) cmd[int64] {
	f, err := c.zrangeArgsFrame(specZRANGESTORE, destination, source, start, stop, opt, false)
	return frameCmd(f, specZRANGESTORE, err, wire.WantInt, intOf)
}

// zlimit checks the LIMIT offset and count of command name and reports
// whether LIMIT is sent, with the count to send (-1: no limit).
func zlimit(name string, offset, count int64) (limit bool, n int64, err error) {
	switch {
	case offset < 0:
		return false, 0, errInvalid(name, "Offset must not be negative")
	case count < -1:
		return false, 0, errInvalid(name, "Count must be -1 (no limit) or at least 0")
	}
	if count == 0 {
		count = -1
	}
	return offset != 0 || count > 0, count, nil
}

// zrangeArgsFrame validates opt and encodes ZRANGE (s is specZRANGE) or
// ZRANGESTORE destination (specZRANGESTORE) with it.
func (c *Client) zrangeArgsFrame(s *spec, destination, key, start, stop string, opt ZRangeOptions, withScores bool) (*wire.Frame, error) {
	switch {
	case opt.By > ZByLex:
		return nil, errInvalid(s.name, "undefined By")
	case withScores && opt.By == ZByLex:
		return nil, errInvalid(s.name, "By ZByLex cannot be combined with scores")
	}
	limit, count, err := zlimit(s.name, opt.Offset, opt.Count)
	if err != nil {
		return nil, err
	}
	if limit && opt.By == ZByRank {
		return nil, errInvalid(s.name, "Offset and Count (LIMIT) need By ZByScore or ZByLex")
	}
	store := s == specZRANGESTORE
	n := 4
	if store {
		n++
	}
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
	f := c.newFrame(n, s.name)
	if store {
		arg(f, destination)
	}
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
		arg(f, "LIMIT")
		argInt(f, opt.Offset)
		argInt(f, count)
	}
	if withScores {
		arg(f, "WITHSCORES")
	}
	return f, nil
}

// ZLimit is the LIMIT of [Client.ZRangeByScore] and the other ranges by
// score or lex: skip Offset members of the range and return at most
// Count. The zero value is no limit. A call only reads it and keeps no
// reference to it, so one value may serve concurrent calls while nobody
// changes it.
type ZLimit struct {
	// Offset skips that many members. Must not be negative. Defaults to 0.
	Offset int64
	// Count returns at most that many members; 0 or -1 means no limit.
	// Other negative values are invalid. Defaults to 0 (no limit).
	Count int64
}

// zrangeByFrame validates limit and encodes "NAME key a b [WITHSCORES]
// [LIMIT offset count]" (ZRANGEBYSCORE and its relatives).
func (c *Client) zrangeByFrame(s *spec, key, a, b string, limit ZLimit, withScores bool) (*wire.Frame, error) {
	send, count, err := zlimit(s.name, limit.Offset, limit.Count)
	if err != nil {
		return nil, err
	}
	n := 4
	if withScores {
		n++
	}
	if send {
		n += 3
	}
	f := c.newFrame(n, s.name)
	arg(f, key)
	arg(f, a)
	arg(f, b)
	if withScores {
		arg(f, "WITHSCORES")
	}
	if send {
		arg(f, "LIMIT")
		argInt(f, limit.Offset)
		argInt(f, count)
	}
	return f, nil
}

func zrangeByCmd(c *Client, s *spec, key, a, b string, limit ZLimit) cmd[[]string] {
	f, err := c.zrangeByFrame(s, key, a, b, limit, false)
	return frameCmd(f, s, err, wire.WantValue, strsOf)
}

func zrangeByScoresCmd(c *Client, s *spec, key, a, b string, limit ZLimit) cmd[[]Z] {
	f, err := c.zrangeByFrame(s, key, a, b, limit, true)
	return frameCmd(f, s, err, wire.WantValue, toZs)
}

// ZRangeByScore returns the members with a score between min and max,
// lowest first, within limit (ZRANGEBYSCORE). The bounds are in Redis's
// syntax, as for [Client.ZCount]. A negative Offset, or a negative Count
// other than -1, fails with [ErrInvalidArgument]. [Client.ZRangeArgs] with
// ZByScore does the same with ZRANGE. Its retry category is ReadOnly.
func (c *Client) cmdZRangeByScore(key, min, max string, limit ZLimit) cmd[[]string] {
	return zrangeByCmd(c, specZRANGEBYSCORE, key, min, max, limit)
}

// ZRangeByScoreWithScores is [Client.ZRangeByScore] with each member's
// score (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZRangeByScoreWithScores(key, min, max string, limit ZLimit) cmd[[]Z] {
	return zrangeByScoresCmd(c, specZRANGEBYSCORE, key, min, max, limit)
}

// ZRevRangeByScore is [Client.ZRangeByScore] highest first; the upper
// bound max comes first (ZREVRANGEBYSCORE). Its retry category is
// ReadOnly.
func (c *Client) cmdZRevRangeByScore(key, max, min string, limit ZLimit) cmd[[]string] {
	return zrangeByCmd(c, specZREVRANGEBYSCORE, key, max, min, limit)
}

// ZRevRangeByScoreWithScores is [Client.ZRevRangeByScore] with each
// member's score (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZRevRangeByScoreWithScores(key, max, min string, limit ZLimit) cmd[[]Z] {
	return zrangeByScoresCmd(c, specZREVRANGEBYSCORE, key, max, min, limit)
}

// ZRangeByLex returns the members between the lexicographic bounds min
// and max, within limit (ZRANGEBYLEX), for a sorted set whose members
// share one score. The bounds are in Redis's syntax, as for
// [Client.ZLexCount]; limit is checked as for [Client.ZRangeByScore].
// Its retry category is ReadOnly.
func (c *Client) cmdZRangeByLex(key, min, max string, limit ZLimit) cmd[[]string] {
	return zrangeByCmd(c, specZRANGEBYLEX, key, min, max, limit)
}

// ZRevRangeByLex is [Client.ZRangeByLex] in reverse order; the upper bound
// max comes first (ZREVRANGEBYLEX). Its retry category is ReadOnly.
func (c *Client) cmdZRevRangeByLex(key, max, min string, limit ZLimit) cmd[[]string] {
	return zrangeByCmd(c, specZREVRANGEBYLEX, key, max, min, limit)
}

// ZRemRangeByRank removes the members ranked start to stop (inclusive;
// negative ranks count from the end) and returns how many it removed
// (ZREMRANGEBYRANK). Its retry category is WriteAccumulating.
func (c *Client) cmdZRemRangeByRank(key string, start, stop int64) cmd[int64] {
	return typedCmd(c.rangeFrame(specZREMRANGEBYRANK, key, start, stop), specZREMRANGEBYRANK, wire.WantInt, intOf)
}

// ZRemRangeByScore removes the members with a score between min and max
// (bounds as for [Client.ZCount]) and returns how many it removed
// (ZREMRANGEBYSCORE). Its retry category is WriteAccumulating.
func (c *Client) cmdZRemRangeByScore(key, min, max string) cmd[int64] {
	return keyBoundsCmd(c, specZREMRANGEBYSCORE, key, min, max)
}

// ZRemRangeByLex removes the members between the lexicographic bounds min
// and max (as for [Client.ZLexCount]) and returns how many it removed
// (ZREMRANGEBYLEX). Its retry category is WriteAccumulating.
func (c *Client) cmdZRemRangeByLex(key, min, max string) cmd[int64] {
	return keyBoundsCmd(c, specZREMRANGEBYLEX, key, min, max)
}

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
