package respire

// Sorted set ranges: ZRANGE and its options, the older ZREVRANGE,
// ZRANGEBYSCORE and ZRANGEBYLEX forms, ZRANGESTORE and ZREMRANGEBY*.

import (
	"github.com/respire-go/respire/internal/wire"
)

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
