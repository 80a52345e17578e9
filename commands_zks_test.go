package respire

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// zksCase is one row of the sorted-set, key and string command tables:
// setup prepares the row's own key k, call runs the method under test and
// returns its decoded results (several as []any), and the results must
// equal want. With err set, the error must match it instead; with
// serverErr, it must be a *ServerError.
type zksCase struct {
	name      string
	setup     func(ctx context.Context, c *Client, k string) error
	call      func(ctx context.Context, c *Client, k string) (any, error)
	want      any
	err       error
	serverErr bool
}

// runZKS runs every row under RESP2 and RESP3 against the real server.
func runZKS(t *testing.T, cases []zksCase) {
	t.Helper()
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				ctx, k := testCtx(t), key(t, "k")
				if tt.setup != nil {
					if err := tt.setup(ctx, c, k); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				got, err := tt.call(ctx, c, k)
				var se *ServerError
				switch {
				case tt.serverErr:
					if !errors.As(err, &se) {
						t.Errorf("got %#v, %v; want a *ServerError", got, err)
					}
				case tt.err != nil:
					if !errors.Is(err, tt.err) {
						t.Errorf("got %#v, %v; want error %v", got, err, tt.err)
					}
				case err != nil || !reflect.DeepEqual(got, tt.want):
					t.Errorf("got %#v, %v; want %#v, nil", got, err, tt.want)
				}
			})
		}
	})
}

// badInput is a call that must fail with ErrInvalidArgument, naming field
// in its message, before anything is sent.
type badInput struct {
	name  string
	field string
	do    func(ctx context.Context, c *Client) error
}

// runBadInput runs each row under both protocols through a recording
// proxy and checks that the server received no frame.
func runBadInput(t *testing.T, cases []badInput) {
	t.Helper()
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			rec := newRecorder(t, "")
			c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}, Protocol: p})
			ctx := testCtx(t)
			before := rec.count()
			for _, tt := range cases {
				t.Run(tt.name, func(t *testing.T) {
					err := tt.do(ctx, c)
					if !errors.Is(err, ErrInvalidArgument) {
						t.Fatalf("error = %v; want ErrInvalidArgument", err)
					}
					if !strings.Contains(err.Error(), tt.field) {
						t.Errorf("error = %q; want it to name %q", err, tt.field)
					}
				})
			}
			if n := rec.count() - before; n != 0 {
				t.Errorf("the server received %d frames (last %q); want 0", n, rec.last())
			}
		})
	}
}

// serverAtLeast reports whether the standalone server's version is at
// least major.minor.
func serverAtLeast(t *testing.T, major, minor int) bool {
	t.Helper()
	info, err := admin(t, standaloneAddr(t), "INFO", "server").String()
	if err != nil {
		t.Fatalf("INFO server: %v", err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !ok {
			continue
		}
		parts := strings.Split(v, ".")
		maj, _ := strconv.Atoi(parts[0])
		var mnr int
		if len(parts) > 1 {
			mnr, _ = strconv.Atoi(parts[1])
		}
		return maj > major || maj == major && mnr >= minor
	}
	t.Fatalf("INFO server has no redis_version")
	return false
}

// zadd returns a setup that adds members to the row's key.
func zadd(members ...Z) func(ctx context.Context, c *Client, k string) error {
	return func(ctx context.Context, c *Client, k string) error {
		_, err := c.ZAdd(ctx, k, ZAddOptions{}, members...)
		return err
	}
}

var (
	zABC = zadd(Z{1, "a"}, Z{2, "b"}, Z{3, "c"})
	zLex = zadd(Z{0, "a"}, Z{0, "b"}, Z{0, "c"}, Z{0, "d"})
)

func TestZKSSortedSets(t *testing.T) {
	rankWithScore := zksCase{
		name: "ZRankWithScore", setup: zABC, want: []any{int64(1), 2.0},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			r, s, err := c.ZRankWithScore(ctx, k, "b")
			return []any{r, s}, err
		},
	}
	if !serverAtLeast(t, 7, 2) {
		rankWithScore.name += "NeedsRedis7.2"
		rankWithScore.serverErr = true
	}
	runZKS(t, []zksCase{
		{name: "ZRem", setup: zABC, want: []any{int64(2), []string{"b"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.ZRem(ctx, k, "a", "c", "nope")
				if err != nil {
					return nil, err
				}
				rest, err := c.ZRange(ctx, k, 0, -1)
				return []any{n, rest}, err
			}},
		{name: "ZCard", setup: zABC, want: int64(3),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZCard(ctx, k) }},
		{name: "ZCardMissing", want: int64(0),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZCard(ctx, k) }},
		{name: "ZCountExclusive", setup: zABC, want: int64(2),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZCount(ctx, k, "(1", "+inf") }},
		{name: "ZCountAll", setup: zABC, want: int64(3),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZCount(ctx, k, "-inf", "+inf") }},
		{name: "ZIncrBy", setup: zABC, want: 3.5,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZIncrBy(ctx, k, 1.5, "b") }},
		{name: "ZIncrByNewMember", want: -0.25,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZIncrBy(ctx, k, -0.25, "m") }},
		{name: "ZRank", setup: zABC, want: int64(1),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRank(ctx, k, "b") }},
		{name: "ZRankMissingMember", setup: zABC, err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRank(ctx, k, "nope") }},
		{name: "ZRankMissingKey", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRank(ctx, k, "a") }},
		{name: "ZRevRank", setup: zABC, want: int64(2),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRevRank(ctx, k, "a") }},
		{name: "ZRevRankMissingMember", setup: zABC, err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRevRank(ctx, k, "nope") }},
		rankWithScore,
		{name: "ZRevRange", setup: zABC, want: []string{"c", "b", "a"},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRevRange(ctx, k, 0, -1) }},
		{name: "ZRevRangeOne", setup: zABC, want: []string{"c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRevRange(ctx, k, 0, 0) }},
		{name: "ZRevRangeMissing", want: []string{},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZRevRange(ctx, k, 0, -1) }},
		{name: "ZRangeArgsByRankRev", setup: zABC, want: []string{"c", "b"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "0", "1", ZRangeOptions{Rev: true})
			}},
		{name: "ZRangeArgsByScore", setup: zABC, want: []string{"b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "(1", "+inf", ZRangeOptions{By: ZByScore})
			}},
		{name: "ZRangeArgsByScoreRevLimit", setup: zABC, want: []string{"b"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "+inf", "-inf", ZRangeOptions{By: ZByScore, Rev: true, Offset: 1, Count: 1})
			}},
		{name: "ZRangeArgsOffsetWithoutCount", setup: zABC, want: []string{"b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "-inf", "+inf", ZRangeOptions{By: ZByScore, Offset: 1})
			}},
		{name: "ZRangeArgsCountMinusOne", setup: zABC, want: []string{"a", "b", "c"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "-inf", "+inf", ZRangeOptions{By: ZByScore, Count: -1})
			}},
		{name: "ZRangeArgsByLex", setup: zLex, want: []string{"b", "c", "d"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "[b", "+", ZRangeOptions{By: ZByLex})
			}},
		{name: "ZRangeArgsByLexRevLimit", setup: zLex, want: []string{"c", "b"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgs(ctx, k, "(d", "-", ZRangeOptions{By: ZByLex, Rev: true, Count: 2})
			}},
		{name: "ZRangeArgsWithScoresByScore", setup: zABC, want: []Z{{2, "b"}, {3, "c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgsWithScores(ctx, k, "2", "3", ZRangeOptions{By: ZByScore})
			}},
		{name: "ZRangeArgsWithScoresInfinite", setup: zadd(Z{math.Inf(1), "p"}, Z{math.Inf(-1), "n"}, Z{0.5, "h"}),
			want: []Z{{math.Inf(1), "p"}, {0.5, "h"}, {math.Inf(-1), "n"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgsWithScores(ctx, k, "0", "-1", ZRangeOptions{Rev: true})
			}},
		{name: "ZRangeArgsWithScoresMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.ZRangeArgsWithScores(ctx, k, "-inf", "+inf", ZRangeOptions{By: ZByScore})
			}},
		{name: "ZPopMin", setup: zABC, want: []any{[]Z{{1, "a"}, {2, "b"}}, []string{"c"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				got, err := c.ZPopMin(ctx, k, 2)
				if err != nil {
					return nil, err
				}
				rest, err := c.ZRange(ctx, k, 0, -1)
				return []any{got, rest}, err
			}},
		{name: "ZPopMinOne", setup: zABC, want: []Z{{1, "a"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZPopMin(ctx, k, 1) }},
		{name: "ZPopMax", setup: zABC, want: []Z{{3, "c"}, {2, "b"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZPopMax(ctx, k, 2) }},
		{name: "ZPopMaxMoreThanThere", setup: zABC, want: []Z{{3, "c"}, {2, "b"}, {1, "a"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZPopMax(ctx, k, 10) }},
		{name: "ZPopMinZero", setup: zABC, want: []any{[]Z{}, int64(3)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				got, err := c.ZPopMin(ctx, k, 0)
				if err != nil {
					return nil, err
				}
				n, err := c.ZCard(ctx, k)
				return []any{got, n}, err
			}},
		{name: "ZPopMinMissing", want: []Z{},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ZPopMin(ctx, k, 2) }},
		{name: "ZMScore", setup: zABC, want: []any{[]float64{1, 0, 3}, []bool{true, false, true}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				s, f, err := c.ZMScore(ctx, k, "a", "nope", "c")
				return []any{s, f}, err
			}},
		{name: "ZMScoreMissingKey", want: []any{[]float64{0, 0}, []bool{false, false}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				s, f, err := c.ZMScore(ctx, k, "a", "b")
				return []any{s, f}, err
			}},
	})
}

func TestZKSSortedSetBadInput(t *testing.T) {
	rng := func(opt ZRangeOptions) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error {
			_, err := c.ZRangeArgs(ctx, "k", "0", "-1", opt)
			return err
		}
	}
	runBadInput(t, []badInput{
		{"ZRemNoMembers", "members", func(ctx context.Context, c *Client) error { _, err := c.ZRem(ctx, "k"); return err }},
		{"ZMScoreNoMembers", "members", func(ctx context.Context, c *Client) error { _, _, err := c.ZMScore(ctx, "k"); return err }},
		{"ZIncrByNaN", "NaN", func(ctx context.Context, c *Client) error { _, err := c.ZIncrBy(ctx, "k", math.NaN(), "m"); return err }},
		{"ZPopMinNegative", "count", func(ctx context.Context, c *Client) error { _, err := c.ZPopMin(ctx, "k", -1); return err }},
		{"ZPopMaxNegative", "count", func(ctx context.Context, c *Client) error { _, err := c.ZPopMax(ctx, "k", -1); return err }},
		{"ZRangeArgsUndefinedBy", "By", rng(ZRangeOptions{By: 9})},
		{"ZRangeArgsOffsetByRank", "Offset", rng(ZRangeOptions{Offset: 1})},
		{"ZRangeArgsCountByRank", "Count", rng(ZRangeOptions{Count: 2})},
		{"ZRangeArgsNegativeCount", "Count", rng(ZRangeOptions{By: ZByScore, Count: -2})},
		{"ZRangeArgsNegativeOffset", "Offset", rng(ZRangeOptions{By: ZByScore, Offset: -1})},
		{"ZRangeArgsWithScoresByLex", "By", func(ctx context.Context, c *Client) error {
			_, err := c.ZRangeArgsWithScores(ctx, "k", "-", "+", ZRangeOptions{By: ZByLex})
			return err
		}},
	})
}

// set returns a setup that sets the row's key, and then each of more's
// keys (suffixes of it) to the values that follow them.
func set(value string, more ...string) func(ctx context.Context, c *Client, k string) error {
	return func(ctx context.Context, c *Client, k string) error {
		if err := c.Set(ctx, k, value); err != nil {
			return err
		}
		for i := 0; i+1 < len(more); i += 2 {
			if err := c.Set(ctx, k+more[i], more[i+1]); err != nil {
				return err
			}
		}
		return nil
	}
}

// farFuture is an expiry time that no test outlives: 2100-01-01 plus 123ms.
var farFuture = time.UnixMilli(4102444800123)

func TestZKSKeys(t *testing.T) {
	runZKS(t, []zksCase{
		{name: "TypeString", setup: set("v"), want: "string",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Type(ctx, k) }},
		{name: "TypeZSet", setup: zABC, want: "zset",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Type(ctx, k) }},
		{name: "TypeMissing", want: "none",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Type(ctx, k) }},
		{name: "Rename", setup: set("v", ":2", "old"), want: []any{"v", int64(0)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if err := c.Rename(ctx, k, k+":2"); err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k+":2")
				if err != nil {
					return nil, err
				}
				n, err := c.Exists(ctx, k)
				return []any{v, n}, err
			}},
		{name: "RenameMissing", serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return nil, c.Rename(ctx, k, k+":2") }},
		{name: "RenameNX", setup: set("v", ":2", "taken"), want: []any{false, true, "v"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				taken, err := c.RenameNX(ctx, k, k+":2")
				if err != nil {
					return nil, err
				}
				free, err := c.RenameNX(ctx, k, k+":3")
				if err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k+":3")
				return []any{taken, free, v}, err
			}},
		{name: "RenameNXMissing", serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.RenameNX(ctx, k, k+":2") }},
		{name: "Persist", setup: set("v"), want: []any{true, TTLPersistent},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if _, err := c.Expire(ctx, k, time.Hour); err != nil {
					return nil, err
				}
				ok, err := c.Persist(ctx, k)
				if err != nil {
					return nil, err
				}
				ttl, err := c.TTL(ctx, k)
				return []any{ok, ttl}, err
			}},
		{name: "PersistWithoutExpiry", setup: set("v"), want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Persist(ctx, k) }},
		{name: "PersistMissing", want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Persist(ctx, k) }},
		{name: "ExpireAtTruncatesToSeconds", setup: set("v"), want: []any{true, farFuture.Unix()},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.ExpireAt(ctx, k, farFuture)
				if err != nil {
					return nil, err
				}
				at, err := c.ExpireTime(ctx, k)
				return []any{ok, at.Unix()}, err
			}},
		{name: "ExpireAtMissing", want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ExpireAt(ctx, k, farFuture) }},
		{name: "ExpireAtPastDeletes", setup: set("v"), want: []any{true, int64(0)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.ExpireAt(ctx, k, time.Unix(1, 0))
				if err != nil {
					return nil, err
				}
				n, err := c.Exists(ctx, k)
				return []any{ok, n}, err
			}},
		{name: "PExpireAt", setup: set("v"), want: []any{true, farFuture.UnixMilli(), farFuture.Unix()},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.PExpireAt(ctx, k, farFuture)
				if err != nil {
					return nil, err
				}
				ms, err := c.PExpireTime(ctx, k)
				if err != nil {
					return nil, err
				}
				s, err := c.ExpireTime(ctx, k)
				return []any{ok, ms.UnixMilli(), s.Unix()}, err
			}},
		{name: "PExpireAtMissing", want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.PExpireAt(ctx, k, farFuture) }},
		{name: "ExpireTimeMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ExpireTime(ctx, k) }},
		{name: "ExpireTimePersistentIsZero", setup: set("v"), want: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				at, err := c.ExpireTime(ctx, k)
				return at.IsZero(), err
			}},
		{name: "PExpireTimeMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.PExpireTime(ctx, k) }},
		{name: "PExpireTimePersistentIsZero", setup: set("v"), want: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				at, err := c.PExpireTime(ctx, k)
				return at.IsZero(), err
			}},
		{name: "Unlink", setup: set("v", ":2", "w"), want: []any{int64(2), int64(0)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.Unlink(ctx, k, k+":2", k+":missing")
				if err != nil {
					return nil, err
				}
				left, err := c.Exists(ctx, k, k+":2")
				return []any{n, left}, err
			}},
		{name: "Touch", setup: set("v"), want: int64(2),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Touch(ctx, k, k+":missing", k) }},
		{name: "Copy", setup: set("v"), want: []any{true, "v", "v"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.Copy(ctx, k, k+":2", false)
				if err != nil {
					return nil, err
				}
				src, err := c.Get(ctx, k)
				if err != nil {
					return nil, err
				}
				dst, err := c.Get(ctx, k+":2")
				return []any{ok, src, dst}, err
			}},
		{name: "CopyOntoExisting", setup: set("new", ":2", "old"), want: []any{false, "old", true, "new"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				kept, err := c.Copy(ctx, k, k+":2", false)
				if err != nil {
					return nil, err
				}
				before, err := c.Get(ctx, k+":2")
				if err != nil {
					return nil, err
				}
				replaced, err := c.Copy(ctx, k, k+":2", true)
				if err != nil {
					return nil, err
				}
				after, err := c.Get(ctx, k+":2")
				return []any{kept, before, replaced, after}, err
			}},
		{name: "CopyMissing", want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.Copy(ctx, k, k+":2", true) }},
		{name: "ObjectEncodingInt", setup: set("12345"), want: "int",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ObjectEncoding(ctx, k) }},
		{name: "ObjectEncodingEmbstr", setup: set("short text"), want: "embstr",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ObjectEncoding(ctx, k) }},
		{name: "ObjectEncodingMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.ObjectEncoding(ctx, k) }},
	})
}

func TestZKSKeysBadInput(t *testing.T) {
	runBadInput(t, []badInput{
		{"UnlinkNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.Unlink(ctx); return err }},
		{"TouchNoKeys", "keys", func(ctx context.Context, c *Client) error { _, err := c.Touch(ctx); return err }},
		{"ExpireAtZeroTime", "zero time", func(ctx context.Context, c *Client) error {
			_, err := c.ExpireAt(ctx, "k", time.Time{})
			return err
		}},
		{"PExpireAtZeroTime", "zero time", func(ctx context.Context, c *Client) error {
			_, err := c.PExpireAt(ctx, "k", time.Time{})
			return err
		}},
	})
}

func TestZKSStrings(t *testing.T) {
	// getEx runs GETEX with opt and returns the value and the key's PTTL
	// (or PEXPIRETIME, with at) after it.
	getEx := func(opt GetExOptions, at bool) func(ctx context.Context, c *Client, k string) (any, error) {
		return func(ctx context.Context, c *Client, k string) (any, error) {
			v, err := c.GetEx(ctx, k, opt)
			if err != nil {
				return nil, err
			}
			if at {
				tm, err := c.PExpireTime(ctx, k)
				return []any{v, tm.UnixMilli()}, err
			}
			ttl, err := c.PTTL(ctx, k)
			// Round the remaining time up to the whole second it started at.
			if ttl > 0 {
				ttl = ttl.Round(time.Second)
			}
			return []any{v, ttl}, err
		}
	}
	withTTL := func(ctx context.Context, c *Client, k string) error {
		_, err := c.SetWithOptions(ctx, k, "v", SetOptions{TTL: time.Hour})
		return err
	}
	runZKS(t, []zksCase{
		{name: "GetDel", setup: set("v"), want: []any{"v", int64(0)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				v, err := c.GetDel(ctx, k)
				if err != nil {
					return nil, err
				}
				n, err := c.Exists(ctx, k)
				return []any{v, n}, err
			}},
		{name: "GetDelMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.GetDel(ctx, k) }},
		{name: "GetRange", setup: set("Hello, world"), want: "world",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.GetRange(ctx, k, -5, -1) }},
		{name: "GetRangeEmpty", setup: set("abc"), want: "",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.GetRange(ctx, k, 10, 20) }},
		{name: "GetRangeMissing", want: "",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.GetRange(ctx, k, 0, -1) }},
		{name: "SetRange", setup: set("Hello, world"), want: []any{int64(12), "Hello, Redis"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.SetRange(ctx, k, 7, "Redis")
				if err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				return []any{n, v}, err
			}},
		{name: "SetRangePadsMissing", want: []any{int64(5), "\x00\x00abc"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.SetRange(ctx, k, 2, "abc")
				if err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				return []any{n, v}, err
			}},
		{name: "IncrByFloat", setup: set("10.5"), want: 10.6,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.IncrByFloat(ctx, k, 0.1) }},
		{name: "IncrByFloatMissing", want: -2.5e3,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.IncrByFloat(ctx, k, -2.5e3) }},
		{name: "IncrByFloatNotANumber", setup: set("abc"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.IncrByFloat(ctx, k, 1) }},
		{name: "DecrBy", setup: set("10"), want: int64(-5),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.DecrBy(ctx, k, 15) }},
		{name: "DecrByMissing", want: int64(-3),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return c.DecrBy(ctx, k, 3) }},
		{name: "MSetNX", want: []any{true, false, []string{"1", "2", ""}, []bool{true, true, false}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.MSetNX(ctx, k, "1", k+":2", "2")
				if err != nil {
					return nil, err
				}
				again, err := c.MSetNX(ctx, k+":3", "3", k, "x")
				if err != nil {
					return nil, err
				}
				vals, found, err := c.MGet(ctx, k, k+":2", k+":3")
				return []any{ok, again, vals, found}, err
			}},
		{name: "SetNX", want: []any{true, false, "first"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				first, err := c.SetNX(ctx, k, "first")
				if err != nil {
					return nil, err
				}
				second, err := c.SetNX(ctx, k, "second")
				if err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				return []any{first, second, v}, err
			}},
		{name: "GetExNoOptionKeepsExpiry", setup: withTTL, want: []any{"v", time.Hour},
			call: getEx(GetExOptions{}, false)},
		{name: "GetExNoOptionPersistent", setup: set("v"), want: []any{"v", TTLPersistent},
			call: getEx(GetExOptions{}, false)},
		{name: "GetExTTLSeconds", setup: set("v"), want: []any{"v", 100 * time.Second},
			call: getEx(GetExOptions{TTL: 100 * time.Second}, false)},
		{name: "GetExTTLMilliseconds", setup: set("v"), want: []any{"v", true},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ttl := 100*time.Second + 300*time.Millisecond
				v, err := c.GetEx(ctx, k, GetExOptions{TTL: ttl})
				if err != nil {
					return nil, err
				}
				left, err := c.PTTL(ctx, k)
				// Sent as PX: more than the whole seconds remain.
				return []any{v, left > 100*time.Second && left <= ttl}, err
			}},
		{name: "GetExExpireAtSeconds", setup: set("v"), want: []any{"v", farFuture.Truncate(time.Second).UnixMilli()},
			call: getEx(GetExOptions{ExpireAt: farFuture.Truncate(time.Second)}, true)},
		{name: "GetExExpireAtMilliseconds", setup: set("v"), want: []any{"v", farFuture.UnixMilli()},
			call: getEx(GetExOptions{ExpireAt: farFuture}, true)},
		{name: "GetExPersist", setup: withTTL, want: []any{"v", TTLPersistent},
			call: getEx(GetExOptions{Persist: true}, false)},
		{name: "GetExMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return c.GetEx(ctx, k, GetExOptions{TTL: time.Minute})
			}},
	})
}

func TestZKSStringsBadInput(t *testing.T) {
	getEx := func(opt GetExOptions) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error { _, err := c.GetEx(ctx, "k", opt); return err }
	}
	runBadInput(t, []badInput{
		{"SetRangeNegativeOffset", "offset", func(ctx context.Context, c *Client) error {
			_, err := c.SetRange(ctx, "k", -1, "v")
			return err
		}},
		{"IncrByFloatNaN", "NaN", func(ctx context.Context, c *Client) error {
			_, err := c.IncrByFloat(ctx, "k", math.NaN())
			return err
		}},
		{"IncrByFloatInf", "infinite", func(ctx context.Context, c *Client) error {
			_, err := c.IncrByFloat(ctx, "k", math.Inf(1))
			return err
		}},
		{"MSetNXNoPairs", "pairs", func(ctx context.Context, c *Client) error { _, err := c.MSetNX(ctx); return err }},
		{"MSetNXOddPairs", "pairs", func(ctx context.Context, c *Client) error { _, err := c.MSetNX(ctx, "k", "v", "k2"); return err }},
		{"GetExTTLAndPersist", "mutually exclusive", getEx(GetExOptions{TTL: time.Second, Persist: true})},
		{"GetExTTLAndExpireAt", "mutually exclusive", getEx(GetExOptions{TTL: time.Second, ExpireAt: farFuture})},
		{"GetExExpireAtAndPersist", "mutually exclusive", getEx(GetExOptions{ExpireAt: farFuture, Persist: true})},
		{"GetExNegativeTTL", "TTL", getEx(GetExOptions{TTL: -time.Second})},
		{"GetExTTLBelowOneMillisecond", "TTL", getEx(GetExOptions{TTL: time.Microsecond})},
		{"GetExExpireAtBeforeEpoch", "ExpireAt", getEx(GetExOptions{ExpireAt: time.Unix(-10, 0)})},
	})
}

// TestZKSZRankWithScoreReplies checks ZRankWithScore's decoding of the
// replies Redis 7.2 sends (the test server may be older), injected by a
// proxy: a RESP2 [integer, bulk score], a RESP3 [integer, double], and
// each protocol's null for a missing member.
func TestZKSZRankWithScoreReplies(t *testing.T) {
	tests := []struct {
		name  string
		proto int
		raw   string
		rank  int64
		score float64
		err   error
	}{
		{"RESP2", 2, "*2\r\n:4\r\n$4\r\n-1.5\r\n", 4, -1.5, nil},
		{"RESP3", 3, "*2\r\n:4\r\n,-1.5\r\n", 4, -1.5, nil},
		{"RESP3Inf", 3, "*2\r\n:0\r\n,inf\r\n", 0, math.Inf(1), nil},
		{"RESP2Null", 2, "*-1\r\n", 0, 0, ErrNil},
		{"RESP2NullBulk", 2, "$-1\r\n", 0, 0, ErrNil},
		{"RESP3Null", 3, "_\r\n", 0, 0, ErrNil},
		{"WrongShape", 3, "*1\r\n:4\r\n", 0, 0, ErrUnexpectedReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := realProxy(t, standaloneAddr(t))
			p.MustAddRule(t, respiretest.Rule{Command: "ZRANK", Times: respiretest.Always, Action: respiretest.Reply([]byte(tt.raw))})
			c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: tt.proto})
			rank, score, err := c.ZRankWithScore(testCtx(t), "k", "m")
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("ZRankWithScore = %d, %v, %v; want error %v", rank, score, err, tt.err)
				}
				return
			}
			if err != nil || rank != tt.rank || score != tt.score {
				t.Errorf("ZRankWithScore = %d, %v, %v; want %d, %v, nil", rank, score, err, tt.rank, tt.score)
			}
		})
	}
}
