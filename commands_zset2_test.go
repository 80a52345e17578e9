package respire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// Family B: the sorted-set commands left without a Batch member.
var _ = exclude(unbatchedCommands, map[string]string{
	"BZPOPMIN": "blocking: a batch refuses blocking commands, which hold the connection; use Client.BZPopMin (or Batch.ZPopMin, which does not block)",
	"BZPOPMAX": "blocking: a batch refuses blocking commands, which hold the connection; use Client.BZPopMax (or Batch.ZPopMax, which does not block)",
	"BZMPOP":   "blocking: a batch refuses blocking commands, which hold the connection; use Client.BZMPop (or Batch.ZMPop, which does not block)",
	"ZSCAN":    "cursor iterator: Client.ZScan and ZScanPages follow the cursor from page to page, which one batch member cannot; queue one page with Batch.Do(catalog.SortedSet.ZSCAN(), key, cursor)",
	"ZMSCORE":  "two results: Client.ZMScore returns scores and found flags, which one Future does not hold; queue Batch.ZScore per member, or Batch.Do(catalog.SortedSet.ZMSCORE(), key, members...)",
})

// zsets2 returns a setup that fills the row's key with first and the key
// k+"2" with second; a nil set leaves its key empty.
func zsets2(first, second []Z) func(ctx context.Context, c *Client, k string) error {
	return func(ctx context.Context, c *Client, k string) error {
		for _, s := range []struct {
			key     string
			members []Z
		}{{k, first}, {k + "2", second}} {
			if len(s.members) == 0 {
				continue // nil leaves the key empty
			}
			if _, err := c.ZAdd(ctx, s.key, ZAddOptions{}, s.members...); err != nil {
				return err
			}
		}
		return nil
	}
}

var (
	zA = []Z{{1, "a"}, {2, "b"}, {3, "c"}}
	zB = []Z{{10, "b"}, {20, "c"}, {30, "d"}}
)

// zthen returns n with the members of key (scores included) read after
// the call, or the first error.
func zthen(ctx context.Context, c *Client, n any, err error, key string) (any, error) {
	if err != nil {
		return nil, err
	}
	rest, err := c.ZRangeWithScores(ctx, key, 0, -1)
	return []any{n, rest}, err
}

func TestZSet2Commands(t *testing.T) {
	revRankWithScore := zksCase{
		name: "ZRevRankWithScore", setup: zABC, want: []any{int64(0), 3.0},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			r, s, err := c.ZRevRankWithScore(ctx, k, "c")
			return []any{r, s}, err
		},
	}
	if !serverAtLeast(t, 7, 2) {
		revRankWithScore.name += "NeedsRedis7.2"
		revRankWithScore.serverErr = true
	}
	two := func(k string) []string { return []string{k, k + "2"} }
	runZKS(t, []zksCase{
		revRankWithScore,
		{name: "ZLexCount", setup: zLex, want: int64(2),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZLexCount(ctx, k, "(a", "[c") }},
		{name: "ZLexCountAll", setup: zLex, want: int64(4),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZLexCount(ctx, k, "-", "+") }},
		{name: "ZLexCountBadBound", setup: zLex, serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZLexCount(ctx, k, "a", "+") }},
		{name: "ZRevRangeWithScores", setup: zABC, want: []Z{{3, "c"}, {2, "b"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRevRangeWithScores(ctx, k, 0, 1)
			}},
		{name: "ZRevRangeWithScoresMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRevRangeWithScores(ctx, k, 0, -1)
			}},
		{name: "ZRangeByScore", setup: zABC, want: []string{"b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByScore(ctx, k, "(1", "+inf", ZLimit{})
			}},
		{name: "ZRangeByScoreLimit", setup: zABC, want: []string{"b"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByScore(ctx, k, "-inf", "+inf", ZLimit{Offset: 1, Count: 1})
			}},
		{name: "ZRangeByScoreOffsetOnly", setup: zABC, want: []string{"c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByScore(ctx, k, "-inf", "+inf", ZLimit{Offset: 2})
			}},
		{name: "ZRangeByScoreWithScores", setup: zABC, want: []Z{{1, "a"}, {2, "b"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByScoreWithScores(ctx, k, "1", "2", ZLimit{Count: -1})
			}},
		{name: "ZRangeByScoreWithScoresMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByScoreWithScores(ctx, k, "-inf", "+inf", ZLimit{})
			}},
		{name: "ZRevRangeByScore", setup: zABC, want: []string{"c", "b"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRevRangeByScore(ctx, k, "+inf", "(1", ZLimit{})
			}},
		{name: "ZRevRangeByScoreWithScoresLimit", setup: zABC, want: []Z{{2, "b"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRevRangeByScoreWithScores(ctx, k, "+inf", "-inf", ZLimit{Offset: 1, Count: 1})
			}},
		{name: "ZRangeByLex", setup: zLex, want: []string{"b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByLex(ctx, k, "[b", "(d", ZLimit{})
			}},
		{name: "ZRangeByLexLimit", setup: zLex, want: []string{"c", "d"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeByLex(ctx, k, "-", "+", ZLimit{Offset: 2, Count: 5})
			}},
		{name: "ZRevRangeByLex", setup: zLex, want: []string{"d", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRevRangeByLex(ctx, k, "+", "(b", ZLimit{})
			}},
		{name: "ZRemRangeByRank", setup: zABC, want: []any{int64(2), []Z{{3, "c"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRemRangeByRank(ctx, k, 0, -2)
				return zthen(ctx, c, n, err, k)
			}},
		{name: "ZRemRangeByScore", setup: zABC, want: []any{int64(1), []Z{{1, "a"}, {2, "b"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRemRangeByScore(ctx, k, "(2", "+inf")
				return zthen(ctx, c, n, err, k)
			}},
		{name: "ZRemRangeByLex", setup: zLex, want: []any{int64(2), []Z{{0, "a"}, {0, "d"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRemRangeByLex(ctx, k, "[b", "[c")
				return zthen(ctx, c, n, err, k)
			}},
		{name: "ZRemRangeByRankMissing", want: int64(0),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRemRangeByRank(ctx, k, 0, -1) }},
		{name: "ZRangeStoreByScore", setup: zABC, want: []any{int64(2), []Z{{2, "b"}, {3, "c"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRangeStore(ctx, k+"d", k, "(1", "+inf", ZRangeOptions{By: ZByScore})
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZRangeStoreByScoreRevLimit", setup: zABC, want: []any{int64(1), []Z{{2, "b"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRangeStore(ctx, k+"d", k, "+inf", "-inf", ZRangeOptions{By: ZByScore, Rev: true, Offset: 1, Count: 1})
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZRangeStoreByRank", setup: zABC, want: []any{int64(2), []Z{{1, "a"}, {2, "b"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRangeStore(ctx, k+"d", k, "0", "1", ZRangeOptions{})
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZRangeStoreByLex", setup: zLex, want: []any{int64(2), []Z{{0, "b"}, {0, "c"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRangeStore(ctx, k+"d", k, "(a", "[c", ZRangeOptions{By: ZByLex})
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZRangeStoreEmptyDeletes", setup: zABC, want: []any{int64(0), int64(0)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if _, err := c.ZAdd(ctx, k+"d", ZAddOptions{}, Z{1, "old"}); err != nil {
					return nil, err
				}
				n, err := c.ZRangeStore(ctx, k+"d", k, "10", "20", ZRangeOptions{By: ZByScore})
				if err != nil {
					return nil, err
				}
				exists, err := c.Exists(ctx, k+"d")
				return []any{n, exists}, err
			}},
		{name: "ZDiff", setup: zsets2(zA, zB), want: []string{"a"},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZDiff(ctx, two(k)...) }},
		{name: "ZDiffOneKey", setup: zABC, want: []string{"a", "b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZDiff(ctx, k) }},
		{name: "ZDiffWithScores", setup: zsets2(zA, []Z{{0, "a"}}), want: []Z{{2, "b"}, {3, "c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZDiffWithScores(ctx, two(k)...) }},
		{name: "ZDiffWithScoresMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZDiffWithScores(ctx, two(k)...) }},
		{name: "ZDiffStore", setup: zsets2(zA, zB), want: []any{int64(1), []Z{{1, "a"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZDiffStore(ctx, k+"d", two(k)...)
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZInter", setup: zsets2(zA, zB), want: []string{"b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZInter(ctx, ZCombineOptions{}, two(k)...)
			}},
		{name: "ZInterWithScoresSum", setup: zsets2(zA, zB), want: []Z{{12, "b"}, {23, "c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZInterWithScores(ctx, ZCombineOptions{}, two(k)...)
			}},
		{name: "ZInterWithScoresWeightsMax", setup: zsets2(zA, zB), want: []Z{{10, "b"}, {20, "c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZInterWithScores(ctx, ZCombineOptions{Weights: []float64{4, 1}, Aggregate: ZAggregateMax}, two(k)...)
			}},
		{name: "ZInterWithScoresWeightsMin", setup: zsets2(zA, zB), want: []Z{{2.5, "b"}, {3.75, "c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZInterWithScores(ctx, ZCombineOptions{Weights: []float64{1.25, 0.25}, Aggregate: ZAggregateMin}, two(k)...)
			}},
		{name: "ZInterStore", setup: zsets2(zA, zB), want: []any{int64(2), []Z{{-17, "c"}, {-8, "b"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZInterStore(ctx, k+"d", ZCombineOptions{Weights: []float64{1, -1}}, two(k)...)
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZInterCard", setup: zsets2(zA, zB), want: int64(2),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZInterCard(ctx, 0, two(k)...) }},
		{name: "ZInterCardLimit", setup: zsets2(zA, zB), want: int64(1),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZInterCard(ctx, 1, two(k)...) }},
		{name: "ZInterCardMissing", want: int64(0),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZInterCard(ctx, 0, k) }},
		{name: "ZUnion", setup: zsets2(zA, zB), want: []string{"a", "b", "c", "d"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZUnion(ctx, ZCombineOptions{}, two(k)...)
			}},
		{name: "ZUnionWithScoresMin", setup: zsets2(zA, zB), want: []Z{{1, "a"}, {2, "b"}, {3, "c"}, {30, "d"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZUnionWithScores(ctx, ZCombineOptions{Aggregate: ZAggregateMin}, two(k)...)
			}},
		{name: "ZUnionWithScoresInfiniteWeight", setup: zsets2(zA, zB),
			want: []Z{{1, "a"}, {math.Inf(1), "b"}, {math.Inf(1), "c"}, {math.Inf(1), "d"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZUnionWithScores(ctx, ZCombineOptions{Weights: []float64{1, math.Inf(1)}}, two(k)...)
			}},
		{name: "ZUnionStore", setup: zsets2(zA, zB), want: []any{int64(4), []Z{{1, "a"}, {12, "b"}, {23, "c"}, {30, "d"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZUnionStore(ctx, k+"d", ZCombineOptions{}, two(k)...)
				return zthen(ctx, c, n, err, k+"d")
			}},
		{name: "ZUnionStoreOntoSource", setup: zsets2(zA, zB), want: []any{int64(4), []Z{{1, "a"}, {10, "b"}, {20, "c"}, {30, "d"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZUnionStore(ctx, k, ZCombineOptions{Aggregate: ZAggregateMax}, two(k)...)
				return zthen(ctx, c, n, err, k)
			}},
		{name: "ZMPopMin", setup: zsets2(nil, zA), want: []any{"2", []Z{{1, "a"}, {2, "b"}}, []string{"c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				r, err := c.ZMPop(ctx, ZMin, 2, two(k)...)
				if err != nil {
					return nil, err
				}
				rest, err := c.ZRange(ctx, k+"2", 0, -1)
				return []any{strings.TrimPrefix(r.Key, k), r.Members, rest}, err
			}},
		{name: "ZMPopMaxMoreThanThere", setup: zABC, want: []any{"", []Z{{3, "c"}, {2, "b"}, {1, "a"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				r, err := c.ZMPop(ctx, ZMax, 10, k)
				return []any{strings.TrimPrefix(r.Key, k), r.Members}, err
			}},
		{name: "ZMPopZeroCountPopsOne", setup: zABC, want: []any{"", []Z{{1, "a"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				r, err := c.ZMPop(ctx, ZMin, 0, k)
				return []any{strings.TrimPrefix(r.Key, k), r.Members}, err
			}},
		{name: "BZMPopZeroCountPopsOne", setup: zABC, want: []any{"", []Z{{3, "c"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				r, err := c.BZMPop(ctx, time.Second, ZMax, 0, k)
				return []any{strings.TrimPrefix(r.Key, k), r.Members}, err
			}},
		{name: "ZMPopAllEmpty", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZMPop(ctx, ZMin, 1, two(k)...) }},
		{name: "ZMPopWrongType", setup: set("v"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZMPop(ctx, ZMin, 1, k) }},
		{name: "BZMPopReady", setup: zsets2(nil, zA), want: []any{"2", []Z{{3, "c"}}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				r, err := c.BZMPop(ctx, time.Second, ZMax, 1, two(k)...)
				return []any{strings.TrimPrefix(r.Key, k), r.Members}, err
			}},
		{name: "BZMPopTimesOut", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.BZMPop(ctx, 20*time.Millisecond, ZMin, 1, two(k)...)
			}},
		{name: "ZRandMemberAll", setup: zABC, want: []string{"a", "b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				got, err := c.ZRandMember(ctx, k, 10)
				slices.Sort(got)
				return got, err
			}},
		{name: "ZRandMemberRepeats", setup: zadd(Z{5, "x"}), want: []string{"x", "x", "x"},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRandMember(ctx, k, -3) }},
		{name: "ZRandMemberMissing", want: []string{},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRandMember(ctx, k, 2) }},
		{name: "ZRandMemberWithScores", setup: zadd(Z{5, "x"}), want: []Z{{5, "x"}, {5, "x"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRandMemberWithScores(ctx, k, -2)
			}},
		{name: "ZRandMemberWithScoresAll", setup: zABC, want: zA,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				got, err := c.ZRandMemberWithScores(ctx, k, 3)
				slices.SortFunc(got, func(a, b Z) int { return strings.Compare(a.Member, b.Member) })
				return got, err
			}},
		{name: "ZRandMemberWithScoresMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRandMemberWithScores(ctx, k, 2) }},
	})
}

func TestZSet2BadInput(t *testing.T) {
	nan := math.NaN()
	runBadInput(t, []badInput{
		{"ZRangeByScoreNegativeOffset", "Offset", func(ctx context.Context, c *Client) error {
			_, err := c.ZRangeByScore(ctx, "k", "-inf", "+inf", ZLimit{Offset: -1})
			return err
		}},
		{"ZRevRangeByLexNegativeCount", "Count", func(ctx context.Context, c *Client) error {
			_, err := c.ZRevRangeByLex(ctx, "k", "+", "-", ZLimit{Count: -2})
			return err
		}},
		{"ZRangeStoreOffsetByRank", "Offset", func(ctx context.Context, c *Client) error {
			_, err := c.ZRangeStore(ctx, "d", "k", "0", "-1", ZRangeOptions{Offset: 1})
			return err
		}},
		{"ZRangeStoreUndefinedBy", "By", func(ctx context.Context, c *Client) error {
			_, err := c.ZRangeStore(ctx, "d", "k", "0", "-1", ZRangeOptions{By: 7})
			return err
		}},
		{"ZDiffNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.ZDiff(ctx); return err }},
		{"ZDiffStoreNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.ZDiffStore(ctx, "d"); return err }},
		{"ZInterNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.ZInter(ctx, ZCombineOptions{}); return err }},
		{"ZUnionWeightsLength", "Weights", func(ctx context.Context, c *Client) error {
			_, err := c.ZUnion(ctx, ZCombineOptions{Weights: []float64{1}}, "a", "b")
			return err
		}},
		{"ZUnionEmptyWeights", "Weights", func(ctx context.Context, c *Client) error {
			_, err := c.ZUnion(ctx, ZCombineOptions{Weights: []float64{}}, "a")
			return err
		}},
		{"ZInterStoreNaNWeight", "NaN", func(ctx context.Context, c *Client) error {
			_, err := c.ZInterStore(ctx, "d", ZCombineOptions{Weights: []float64{nan}}, "a")
			return err
		}},
		{"ZUnionStoreUndefinedAggregate", "Aggregate", func(ctx context.Context, c *Client) error {
			_, err := c.ZUnionStore(ctx, "d", ZCombineOptions{Aggregate: 3}, "a")
			return err
		}},
		{"ZInterCardNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.ZInterCard(ctx, 0); return err }},
		{"ZInterCardNegativeLimit", "limit", func(ctx context.Context, c *Client) error { _, err := c.ZInterCard(ctx, -1, "a"); return err }},
		{"ZMPopNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.ZMPop(ctx, ZMin, 1); return err }},
		{"ZMPopUndefinedEnd", "end", func(ctx context.Context, c *Client) error { _, err := c.ZMPop(ctx, 2, 1, "a"); return err }},
		{"ZMPopNegativeCount", "count", func(ctx context.Context, c *Client) error { _, err := c.ZMPop(ctx, ZMax, -1, "a"); return err }},
		{"BZMPopNegativeTimeout", "timeout", func(ctx context.Context, c *Client) error {
			_, err := c.BZMPop(ctx, -time.Second, ZMin, 1, "a")
			return err
		}},
		{"BZMPopSubMillisecond", "millisecond", func(ctx context.Context, c *Client) error {
			_, err := c.BZMPop(ctx, time.Microsecond, ZMin, 1, "a")
			return err
		}},
		{"BZMPopNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.BZMPop(ctx, time.Second, ZMin, 1); return err }},
		{"BZMPopNegativeCount", "count", func(ctx context.Context, c *Client) error {
			_, err := c.BZMPop(ctx, time.Second, ZMin, -1, "a")
			return err
		}},
		{"BatchZInterNoKeys", "keys", func(ctx context.Context, c *Client) error {
			b := c.NewBatch()
			b.ZCard("a")
			b.ZInter(ZCombineOptions{})
			return b.Execute(ctx)
		}},
		{"BatchZRangeByScoreNegativeOffset", "Offset", func(ctx context.Context, c *Client) error {
			b := c.NewBatch()
			f := b.ZRangeByScore("k", "-inf", "+inf", ZLimit{Offset: -1})
			if err := b.Execute(ctx); err == nil {
				return errors.New("Execute succeeded")
			}
			_, err := f.Result()
			return err
		}},
		{"BatchZPopMinNegative", "count", func(ctx context.Context, c *Client) error {
			b := c.NewBatch()
			b.ZPopMin("k", -1)
			return b.Execute(ctx)
		}},
	})
}

// zpair is one sorted-set Batch member and the Client call it must agree
// with; k names the side's keys.
type zpair struct {
	name   string
	batch  func(b *Batch, k func(string) string) func() (any, error)
	client func(ctx context.Context, c *Client, k func(string) string) (any, error)
}

// fut reads a Future as the pair's result.
func fut[T any](f Future[T]) func() (any, error) {
	return func() (any, error) { return f.Result() }
}

// zpopKey makes a ZMPop result comparable across sides: its key without
// the side's prefix.
func zpopKey(k func(string) string, r ZMPopResult) ZMPopResult {
	r.Key = strings.TrimPrefix(r.Key, k(""))
	return r
}

var zpairs = []zpair{
	{"ZCard", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZCard(k("z1"))) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.ZCard(ctx, k("z1")) }},
	{"ZCount", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZCount(k("z1"), "(1", "+inf")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZCount(ctx, k("z1"), "(1", "+inf")
		}},
	{"ZLexCount", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZLexCount(k("lex"), "[b", "+"))
	},
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZLexCount(ctx, k("lex"), "[b", "+")
		}},
	{"ZScore", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZScore(k("z1"), "b")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZScore(ctx, k("z1"), "b")
		}},
	{"ZScoreMissing", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZScore(k("z1"), "nope")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZScore(ctx, k("z1"), "nope")
		}},
	{"ZRank", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRank(k("z1"), "c")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRank(ctx, k("z1"), "c")
		}},
	{"ZRankMissing", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRank(k("z1"), "nope")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRank(ctx, k("z1"), "nope")
		}},
	{"ZRevRank", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRevRank(k("z1"), "c")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRevRank(ctx, k("z1"), "c")
		}},
	{"ZRange", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRange(k("z1"), 0, -1)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRange(ctx, k("z1"), 0, -1)
		}},
	{"ZRangeWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeWithScores(k("z1"), 0, -1))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeWithScores(ctx, k("z1"), 0, -1)
	}},
	{"ZRevRange", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRevRange(k("z1"), 0, 1)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRevRange(ctx, k("z1"), 0, 1)
		}},
	{"ZRevRangeWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRevRangeWithScores(k("z1"), 0, -1))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRevRangeWithScores(ctx, k("z1"), 0, -1)
	}},
	{"ZRangeArgs", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeArgs(k("z1"), "+inf", "-inf", ZRangeOptions{By: ZByScore, Rev: true, Count: 2}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeArgs(ctx, k("z1"), "+inf", "-inf", ZRangeOptions{By: ZByScore, Rev: true, Count: 2})
	}},
	{"ZRangeArgsWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeArgsWithScores(k("z1"), "(1", "+inf", ZRangeOptions{By: ZByScore}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeArgsWithScores(ctx, k("z1"), "(1", "+inf", ZRangeOptions{By: ZByScore})
	}},
	{"ZRangeByScore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeByScore(k("z1"), "-inf", "+inf", ZLimit{Offset: 1}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeByScore(ctx, k("z1"), "-inf", "+inf", ZLimit{Offset: 1})
	}},
	{"ZRangeByScoreWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeByScoreWithScores(k("z1"), "2", "3", ZLimit{}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeByScoreWithScores(ctx, k("z1"), "2", "3", ZLimit{})
	}},
	{"ZRevRangeByScore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRevRangeByScore(k("z1"), "+inf", "-inf", ZLimit{Count: 2}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRevRangeByScore(ctx, k("z1"), "+inf", "-inf", ZLimit{Count: 2})
	}},
	{"ZRevRangeByScoreWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRevRangeByScoreWithScores(k("z1"), "+inf", "(1", ZLimit{}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRevRangeByScoreWithScores(ctx, k("z1"), "+inf", "(1", ZLimit{})
	}},
	{"ZRangeByLex", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeByLex(k("lex"), "(a", "+", ZLimit{Count: 2}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeByLex(ctx, k("lex"), "(a", "+", ZLimit{Count: 2})
	}},
	{"ZRevRangeByLex", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRevRangeByLex(k("lex"), "+", "-", ZLimit{}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRevRangeByLex(ctx, k("lex"), "+", "-", ZLimit{})
	}},
	{"ZDiff", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZDiff(k("z1"), k("z2"))) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZDiff(ctx, k("z1"), k("z2"))
		}},
	{"ZDiffWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZDiffWithScores(k("z2"), k("z1")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZDiffWithScores(ctx, k("z2"), k("z1"))
	}},
	{"ZInter", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZInter(ZCombineOptions{}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZInter(ctx, ZCombineOptions{}, k("z1"), k("z2"))
	}},
	{"ZInterWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZInterWithScores(ZCombineOptions{Weights: []float64{2, 0.5}, Aggregate: ZAggregateMin}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZInterWithScores(ctx, ZCombineOptions{Weights: []float64{2, 0.5}, Aggregate: ZAggregateMin}, k("z1"), k("z2"))
	}},
	{"ZInterCard", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZInterCard(1, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZInterCard(ctx, 1, k("z1"), k("z2"))
	}},
	{"ZUnion", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZUnion(ZCombineOptions{}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZUnion(ctx, ZCombineOptions{}, k("z1"), k("z2"))
	}},
	{"ZUnionWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZUnionWithScores(ZCombineOptions{Aggregate: ZAggregateMax}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZUnionWithScores(ctx, ZCombineOptions{Aggregate: ZAggregateMax}, k("z1"), k("z2"))
	}},
	{"ZRandMember", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRandMember(k("one"), -2)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRandMember(ctx, k("one"), -2)
		}},
	{"ZRandMemberWithScores", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRandMemberWithScores(k("one"), -2))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRandMemberWithScores(ctx, k("one"), -2)
	}},
	// Writes, after the reads.
	{"ZAdd", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZAdd(k("w"), ZAddOptions{}, Z{1, "m"}, Z{2, "n"}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZAdd(ctx, k("w"), ZAddOptions{}, Z{1, "m"}, Z{2, "n"})
	}},
	{"ZAddIncr", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZAddIncr(k("w"), ZAddOptions{Condition: SetIfExists}, Z{0.5, "m"}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZAddIncr(ctx, k("w"), ZAddOptions{Condition: SetIfExists}, Z{0.5, "m"})
	}},
	{"ZAddIncrBlocked", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZAddIncr(k("w"), ZAddOptions{Condition: SetIfNotExists}, Z{1, "m"}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZAddIncr(ctx, k("w"), ZAddOptions{Condition: SetIfNotExists}, Z{1, "m"})
	}},
	{"ZIncrBy", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZIncrBy(k("w"), -4, "n")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZIncrBy(ctx, k("w"), -4, "n")
		}},
	{"ZRem", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZRem(k("w"), "m", "nope")) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZRem(ctx, k("w"), "m", "nope")
		}},
	{"ZPopMin", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZPopMin(k("pop"), 1)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZPopMin(ctx, k("pop"), 1)
		}},
	{"ZPopMax", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZPopMax(k("pop"), 1)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZPopMax(ctx, k("pop"), 1)
		}},
	{"ZPopMinMissing", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZPopMin(k("none"), 1)) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZPopMin(ctx, k("none"), 1)
		}},
	{"ZMPop", func(b *Batch, k func(string) string) func() (any, error) {
		f := b.ZMPop(ZMax, 1, k("none"), k("pop"))
		return func() (any, error) { r, err := f.Result(); return zpopKey(k, r), err }
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		r, err := c.ZMPop(ctx, ZMax, 1, k("none"), k("pop"))
		return zpopKey(k, r), err
	}},
	{"ZMPopEmpty", func(b *Batch, k func(string) string) func() (any, error) { return fut(b.ZMPop(ZMin, 1, k("none"))) },
		func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.ZMPop(ctx, ZMin, 1, k("none"))
		}},
	{"ZRemRangeByRank", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRemRangeByRank(k("pop"), 0, 0))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRemRangeByRank(ctx, k("pop"), 0, 0)
	}},
	{"ZRemRangeByScore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRemRangeByScore(k("z3"), "-inf", "(3"))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRemRangeByScore(ctx, k("z3"), "-inf", "(3")
	}},
	{"ZRemRangeByLex", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRemRangeByLex(k("lex2"), "[b", "+"))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRemRangeByLex(ctx, k("lex2"), "[b", "+")
	}},
	{"ZRangeStore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZRangeStore(k("d1"), k("z2"), "0", "1", ZRangeOptions{}))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZRangeStore(ctx, k("d1"), k("z2"), "0", "1", ZRangeOptions{})
	}},
	{"ZDiffStore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZDiffStore(k("d2"), k("z2"), k("z1")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZDiffStore(ctx, k("d2"), k("z2"), k("z1"))
	}},
	{"ZInterStore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZInterStore(k("d3"), ZCombineOptions{Weights: []float64{1, 2}}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZInterStore(ctx, k("d3"), ZCombineOptions{Weights: []float64{1, 2}}, k("z1"), k("z2"))
	}},
	{"ZUnionStore", func(b *Batch, k func(string) string) func() (any, error) {
		return fut(b.ZUnionStore(k("d4"), ZCombineOptions{}, k("z1"), k("z2")))
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.ZUnionStore(ctx, k("d4"), ZCombineOptions{}, k("z1"), k("z2"))
	}},
	{"StoredSets", func(b *Batch, k func(string) string) func() (any, error) {
		fs := []Future[[]Z]{b.ZRangeWithScores(k("d1"), 0, -1), b.ZRangeWithScores(k("d2"), 0, -1),
			b.ZRangeWithScores(k("d3"), 0, -1), b.ZRangeWithScores(k("d4"), 0, -1), b.ZRangeWithScores(k("w"), 0, -1)}
		return func() (any, error) {
			var out [][]Z
			for _, f := range fs {
				v, err := f.Result()
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			return out, nil
		}
	}, func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		var out [][]Z
		for _, name := range []string{"d1", "d2", "d3", "d4", "w"} {
			v, err := c.ZRangeWithScores(ctx, k(name), 0, -1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}},
}

// TestZSet2BatchMatchesClient: every sorted-set Batch member gives what
// its Client method gives, under RESP2 and RESP3. The batch and the
// direct calls run the same sequence on two identical copies of the data.
func TestZSet2BatchMatchesClient(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		side := func(s string) func(string) string {
			return func(name string) string { return key(t, s, name) }
		}
		bk, ck := side("batch"), side("client")
		for _, k := range []func(string) string{bk, ck} {
			seed := c.NewBatch()
			seed.ZAdd(k("z1"), ZAddOptions{}, zA...)
			seed.ZAdd(k("z2"), ZAddOptions{}, zB...)
			seed.ZAdd(k("z3"), ZAddOptions{}, zB...)
			seed.ZAdd(k("lex"), ZAddOptions{}, Z{0, "a"}, Z{0, "b"}, Z{0, "c"}, Z{0, "d"})
			seed.ZAdd(k("lex2"), ZAddOptions{}, Z{0, "a"}, Z{0, "b"}, Z{0, "c"})
			seed.ZAdd(k("pop"), ZAddOptions{}, Z{1, "p"}, Z{2, "q"}, Z{3, "r"}, Z{4, "s"}, Z{5, "t"})
			seed.ZAdd(k("one"), ZAddOptions{}, Z{7, "x"})
			if err := seed.Execute(ctx); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
		b := c.NewBatch()
		results := make([]func() (any, error), len(zpairs))
		for i, p := range zpairs {
			results[i] = p.batch(b, bk)
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		for i, p := range zpairs {
			got, gotErr := results[i]()
			want, wantErr := p.client(ctx, c, ck)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Batch gives %#v, %v; Client gives %#v, %v", p.name, got, gotErr, want, wantErr)
			}
		}
	})
}

// TestZSet2ZRevRankWithScoreReplies checks ZRevRankWithScore's decoding of
// the replies Redis 7.2 sends (the test server may be older), injected by
// a proxy, and the frame it sends.
func TestZSet2ZRevRankWithScoreReplies(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		raw   string
		rank  int64
		score float64
		err   error
	}{
		{"RESP2", 2, "*2\r\n:2\r\n$3\r\n0.5\r\n", 2, 0.5, nil},
		{"RESP3", 3, "*2\r\n:2\r\n,0.5\r\n", 2, 0.5, nil},
		{"RESP3NegInf", 3, "*2\r\n:0\r\n,-inf\r\n", 0, math.Inf(-1), nil},
		{"RESP2Null", 2, "*-1\r\n", 0, 0, ErrNil},
		{"RESP3Null", 3, "_\r\n", 0, 0, ErrNil},
		{"WrongShape", 2, ":3\r\n", 0, 0, ErrUnexpectedReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := realProxy(t, standaloneAddr(t))
			sent := make(chan []string, 1)
			p.MustAddRule(t, respiretest.Rule{Command: "ZREVRANK", Times: respiretest.Always,
				OnReceive: func(args []string) { sent <- args }, Action: respiretest.Reply([]byte(tt.raw))})
			c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: tt.proto})
			rank, score, err := c.ZRevRankWithScore(testCtx(t), "k", "m")
			if got, want := <-sent, []string{"ZREVRANK", "k", "m", "WITHSCORE"}; !slices.Equal(got, want) {
				t.Errorf("sent %q; want %q", got, want)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("ZRevRankWithScore = %d, %v, %v; want error %v", rank, score, err, tt.err)
				}
				return
			}
			if err != nil || rank != tt.rank || score != tt.score {
				t.Errorf("ZRevRankWithScore = %d, %v, %v; want %d, %v, nil", rank, score, err, tt.rank, tt.score)
			}
		})
	}
}

// TestZSet2Frames pins the frames of the commands with the most options,
// as the server receives them.
func TestZSet2Frames(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	a, b, d, s := key(t, "a"), key(t, "b"), key(t, "d"), key(t, "s")
	if _, err := c.ZAdd(ctx, a, ZAddOptions{}, zA...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want []string
	}{
		{"ZInterWithScores", func() error {
			_, err := c.ZInterWithScores(ctx, ZCombineOptions{Weights: []float64{2, 0.5}, Aggregate: ZAggregateMax}, a, b)
			return err
		}, []string{"ZINTER", "2", a, b, "WEIGHTS", "2", "0.5", "AGGREGATE", "MAX", "WITHSCORES"}},
		{"ZUnionStore", func() error {
			_, err := c.ZUnionStore(ctx, d, ZCombineOptions{Aggregate: ZAggregateMin}, b)
			return err
		}, []string{"ZUNIONSTORE", d, "1", b, "AGGREGATE", "MIN"}},
		{"ZDiffStore", func() error { _, err := c.ZDiffStore(ctx, d, b, a); return err },
			[]string{"ZDIFFSTORE", d, "2", b, a}},
		{"ZInterCardLimit", func() error { _, err := c.ZInterCard(ctx, 5, a, b); return err },
			[]string{"ZINTERCARD", "2", a, b, "LIMIT", "5"}},
		{"ZInterCardNoLimit", func() error { _, err := c.ZInterCard(ctx, 0, a); return err },
			[]string{"ZINTERCARD", "1", a}},
		{"ZMPop", func() error { _, err := c.ZMPop(ctx, ZMax, 3, b, d); return err },
			[]string{"ZMPOP", "2", b, d, "MAX", "COUNT", "3"}},
		{"BZMPop", func() error { _, err := c.BZMPop(ctx, 1500*time.Millisecond, ZMin, 1, b, a); return err },
			[]string{"BZMPOP", "1.5", "2", b, a, "MIN", "COUNT", "1"}},
		{"ZRangeStore", func() error {
			_, err := c.ZRangeStore(ctx, d, s, "(1", "+inf", ZRangeOptions{By: ZByScore, Rev: true, Count: 2})
			return err
		}, []string{"ZRANGESTORE", d, s, "(1", "+inf", "BYSCORE", "REV", "LIMIT", "0", "2"}},
		{"ZRangeByScoreWithScores", func() error {
			_, err := c.ZRangeByScoreWithScores(ctx, s, "1", "2", ZLimit{Offset: 1})
			return err
		}, []string{"ZRANGEBYSCORE", s, "1", "2", "WITHSCORES", "LIMIT", "1", "-1"}},
		{"ZRevRangeByLex", func() error { _, err := c.ZRevRangeByLex(ctx, s, "+", "-", ZLimit{}); return err },
			[]string{"ZREVRANGEBYLEX", s, "+", "-"}},
		{"ZRandMemberWithScores", func() error { _, err := c.ZRandMemberWithScores(ctx, s, -2); return err },
			[]string{"ZRANDMEMBER", s, "-2", "WITHSCORES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); err != nil && !errors.Is(err, ErrNil) {
				t.Fatalf("call: %v", err)
			}
			if got := rec.last(); !slices.Equal(got, tt.want) {
				t.Errorf("sent %q; want %q", got, tt.want)
			}
		})
	}
}

// TestZSet2Cluster: the multi-key sorted-set commands route to the slot
// their keys share on a Cluster client, and keys in different slots fail
// before anything is sent.
func TestZSet2Cluster(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	a, b, d := p+"{z}a", p+"{z}b", p+"{z}d"
	other := p + "{other}x"
	if route.Slot(a) == route.Slot(other) {
		t.Fatal("test keys share a slot")
	}
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), a, b, d) })
	if _, err := c.ZAdd(ctx, a, ZAddOptions{}, zA...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ZAdd(ctx, b, ZAddOptions{}, zB...); err != nil {
		t.Fatal(err)
	}
	if n, err := c.ZUnionStore(ctx, d, ZCombineOptions{}, a, b); err != nil || n != 4 {
		t.Errorf("ZUnionStore = %d, %v; want 4", n, err)
	}
	if got, err := c.ZInter(ctx, ZCombineOptions{}, a, b); err != nil || !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("ZInter = %q, %v; want [b c]", got, err)
	}
	if r, err := c.ZMPop(ctx, ZMax, 1, d, a); err != nil || r.Key != d || !slices.Equal(r.Members, []Z{{30, "d"}}) {
		t.Errorf("ZMPop = %+v, %v; want %s [{30 d}]", r, err, d)
	}
	if r, err := c.BZMPop(ctx, time.Second, ZMin, 1, a, b); err != nil || r.Key != a || !slices.Equal(r.Members, []Z{{1, "a"}}) {
		t.Errorf("BZMPop = %+v, %v; want %s [{1 a}]", r, err, a)
	}
	for name, call := range map[string]func() error{
		"ZUnion":      func() error { _, err := c.ZUnion(ctx, ZCombineOptions{}, a, other); return err },
		"ZInterStore": func() error { _, err := c.ZInterStore(ctx, other, ZCombineOptions{}, a, b); return err },
		"ZMPop":       func() error { _, err := c.ZMPop(ctx, ZMin, 1, a, other); return err },
		"ZRangeStore": func() error { _, err := c.ZRangeStore(ctx, other, a, "0", "-1", ZRangeOptions{}); return err },
	} {
		if err := call(); !errors.Is(err, ErrCrossSlot) {
			t.Errorf("%s across slots = %v; want ErrCrossSlot", name, err)
		}
	}
}

// TestZSet2RetryCategories pins the retry category each new method's doc
// comment states to what its spec (the catalog) says.
func TestZSet2RetryCategories(t *testing.T) {
	tests := []struct {
		spec *spec
		want RetryCategory
	}{
		{specZLEXCOUNT, ReadOnly},
		{specZRANGEBYSCORE, ReadOnly},
		{specZREVRANGEBYSCORE, ReadOnly},
		{specZRANGEBYLEX, ReadOnly},
		{specZREVRANGEBYLEX, ReadOnly},
		{specZRANDMEMBER, ReadOnly},
		{specZDIFF, ReadOnly},
		{specZINTER, ReadOnly},
		{specZINTERCARD, ReadOnly},
		{specZUNION, ReadOnly},
		{specZDIFFSTORE, WriteAccumulating},
		{specZINTERSTORE, WriteAccumulating},
		{specZUNIONSTORE, WriteAccumulating},
		{specZRANGESTORE, WriteAccumulating},
		{specZREMRANGEBYLEX, WriteAccumulating},
		{specZREMRANGEBYRANK, WriteAccumulating},
		{specZREMRANGEBYSCORE, WriteAccumulating},
		{specZMPOP, WriteAccumulating},
		{specBZMPOP, Never},
	}
	for _, tt := range tests {
		if got := tt.spec.cat; got != tt.want {
			t.Errorf("%s: category %v; want %v", tt.spec.name, got, tt.want)
		}
		if got := tt.spec.desc.Category(); got != tt.spec.cat {
			t.Errorf("%s: spec category %v differs from the catalog's %v", tt.spec.name, tt.spec.cat, got)
		}
	}
}
