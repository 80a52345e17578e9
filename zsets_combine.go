package respire

// Sorted sets combined: ZINTER, ZUNION, ZDIFF and their STORE and CARD
// forms.

import (
	"math"

	"github.com/respire-go/respire/internal/wire"
)

// ZAggregate says how ZINTER and ZUNION combine a member's scores. Its
// values are plain constants, safe for concurrent use.
type ZAggregate uint8

// Score aggregations.
const (
	// ZAggregateSum adds the (weighted) scores (the default).
	ZAggregateSum ZAggregate = iota
	// ZAggregateMin keeps the lowest score (AGGREGATE MIN).
	ZAggregateMin
	// ZAggregateMax keeps the highest score (AGGREGATE MAX).
	ZAggregateMax
)

// ZCombineOptions are the options of [Client.ZInter], [Client.ZUnion]
// and their WithScores and Store forms. The zero value sums the scores of
// every key with weight 1. A call only reads it and keeps no reference to
// it, so one value may serve concurrent calls while nobody changes it.
type ZCombineOptions struct {
	// Weights multiplies the scores of each key by its weight (WEIGHTS):
	// one weight per key, in order, none NaN. Defaults to nil (every
	// weight 1).
	Weights []float64
	// Aggregate says how a member's scores combine (AGGREGATE). Defaults
	// to ZAggregateSum.
	Aggregate ZAggregate
}

// zcombineFrame validates keys and opt and encodes "NAME [destination]
// numkeys keys... [WEIGHTS w...] [AGGREGATE a] [WITHSCORES]". ZDIFF and
// ZDIFFSTORE take no options (opt is the zero value).
func (c *Client) zcombineFrame(s *spec, store bool, destination string, keys []string, opt ZCombineOptions, withScores bool) (*wire.Frame, error) {
	switch {
	case len(keys) == 0:
		return nil, errInvalid(s.name, "no keys")
	case opt.Weights != nil && len(opt.Weights) != len(keys):
		return nil, errInvalid(s.name, "Weights needs one weight per key")
	case opt.Aggregate > ZAggregateMax:
		return nil, errInvalid(s.name, "undefined Aggregate")
	}
	for _, w := range opt.Weights {
		if math.IsNaN(w) {
			return nil, errInvalid(s.name, "Weights holds NaN")
		}
	}
	n := 2 + len(keys)
	if store {
		n++
	}
	if opt.Weights != nil {
		n += 1 + len(opt.Weights)
	}
	if opt.Aggregate != ZAggregateSum {
		n += 2
	}
	if withScores {
		n++
	}
	f := c.newFrame(n, s.name)
	if store {
		arg(f, destination)
	}
	argInt(f, int64(len(keys)))
	for _, k := range keys {
		arg(f, k)
	}
	if opt.Weights != nil {
		arg(f, "WEIGHTS")
		for _, w := range opt.Weights {
			argFloat(f, w)
		}
	}
	switch opt.Aggregate {
	case ZAggregateMin:
		arg(f, "AGGREGATE")
		arg(f, "MIN")
	case ZAggregateMax:
		arg(f, "AGGREGATE")
		arg(f, "MAX")
	}
	if withScores {
		arg(f, "WITHSCORES")
	}
	return f, nil
}

func zcombineCmd(c *Client, s *spec, keys []string, opt ZCombineOptions) cmd[[]string] {
	f, err := c.zcombineFrame(s, false, "", keys, opt, false)
	return frameCmd(f, s, err, wire.WantValue, strsOf)
}

func zcombineScoresCmd(c *Client, s *spec, keys []string, opt ZCombineOptions) cmd[[]Z] {
	f, err := c.zcombineFrame(s, false, "", keys, opt, true)
	return frameCmd(f, s, err, wire.WantValue, toZs)
}

func zcombineStoreCmd(c *Client, s *spec, destination string, keys []string, opt ZCombineOptions) cmd[int64] {
	f, err := c.zcombineFrame(s, true, destination, keys, opt, false)
	return frameCmd(f, s, err, wire.WantInt, intOf)
}

// ZDiff returns the members of the first key's sorted set that are in
// none of the others (ZDIFF; Redis 6.2 or later), lowest score first. No
// keys fails with [ErrInvalidArgument]. On a Cluster client the keys must
// share a slot. Its retry category is ReadOnly.
func (c *Client) cmdZDiff(keys ...string) cmd[[]string] {
	return zcombineCmd(c, specZDIFF, keys, ZCombineOptions{})
}

// ZDiffWithScores is [Client.ZDiff] with each member's score (from the
// first key; WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZDiffWithScores(keys ...string) cmd[[]Z] {
	return zcombineScoresCmd(c, specZDIFF, keys, ZCombineOptions{})
}

// ZDiffStore stores what [Client.ZDiff] of keys returns, with the
// scores, in the sorted set destination, replacing it, and returns its
// size (ZDIFFSTORE). Its retry category is WriteAccumulating.
func (c *Client) cmdZDiffStore(destination string, keys ...string) cmd[int64] {
	return zcombineStoreCmd(c, specZDIFFSTORE, destination, keys, ZCombineOptions{})
}

// ZInter returns the members present in every key's sorted set (ZINTER;
// Redis 6.2 or later), ordered by their combined score (see
// [ZCombineOptions]). No keys, a Weights of another length than keys, a
// NaN weight or an undefined Aggregate fails with [ErrInvalidArgument]. On
// a Cluster client the keys must share a slot. Its retry category is
// ReadOnly.
func (c *Client) cmdZInter(opt ZCombineOptions, keys ...string) cmd[[]string] {
	return zcombineCmd(c, specZINTER, keys, opt)
}

// ZInterWithScores is [Client.ZInter] with each member's combined score
// (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZInterWithScores(opt ZCombineOptions, keys ...string) cmd[[]Z] {
	return zcombineScoresCmd(c, specZINTER, keys, opt)
}

// ZInterStore stores what [Client.ZInterWithScores] returns in the sorted
// set destination, replacing it, and returns its size (ZINTERSTORE). Its
// retry category is WriteAccumulating.
func (c *Client) cmdZInterStore(destination string, opt ZCombineOptions, keys ...string) cmd[int64] {
	return zcombineStoreCmd(c, specZINTERSTORE, destination, keys, opt)
}

// ZInterCard returns how many members are present in every key's sorted
// set (ZINTERCARD; Redis 7.0 or later), counting no further than limit
// when it is positive (0: no limit). No keys or a negative limit fails
// with [ErrInvalidArgument]. Its retry category is ReadOnly.
func (c *Client) cmdZInterCard(limit int64, keys ...string) cmd[int64] {
	return interCardCmd(c, specZINTERCARD, limit, keys)
}

// ZUnion returns the members present in any key's sorted set (ZUNION;
// Redis 6.2 or later), ordered by their combined score (see
// [ZCombineOptions]). Its arguments are checked as [Client.ZInter] checks
// them. Its retry category is ReadOnly.
func (c *Client) cmdZUnion(opt ZCombineOptions, keys ...string) cmd[[]string] {
	return zcombineCmd(c, specZUNION, keys, opt)
}

// ZUnionWithScores is [Client.ZUnion] with each member's combined score
// (WITHSCORES). Its retry category is ReadOnly.
func (c *Client) cmdZUnionWithScores(opt ZCombineOptions, keys ...string) cmd[[]Z] {
	return zcombineScoresCmd(c, specZUNION, keys, opt)
}

// ZUnionStore stores what [Client.ZUnionWithScores] returns in the sorted
// set destination, replacing it, and returns its size (ZUNIONSTORE). Its
// retry category is WriteAccumulating.
func (c *Client) cmdZUnionStore(destination string, opt ZCombineOptions, keys ...string) cmd[int64] {
	return zcombineStoreCmd(c, specZUNIONSTORE, destination, keys, opt)
}
