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
	f := c.newFrame(4, "ZRANGE")
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	return c.doStrings(ctx, f, specZRANGE)
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
