package respire

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

// hlsCase is one row of TestHashListSetCommands: setup seeds the keys
// (named with k), do runs the method under test and returns what it
// observed, which must deeply equal want; or, when wantErr is set, do's
// error must match it. A row whose wantErr is ErrInvalidArgument must
// send nothing.
type hlsCase struct {
	name    string
	setup   func(ctx context.Context, c *Client, k func(string) string) error
	do      func(ctx context.Context, c *Client, k func(string) string) (any, error)
	want    any
	wantErr error
}

// mget is the result of HMGet, for comparing.
type mget struct {
	Values []string
	Found  []bool
}

// sorted sorts the result of a call returning members in no set order.
func sorted(ss []string, err error) ([]string, error) {
	slices.Sort(ss)
	return ss, err
}

// after returns the result of a call and then, if it succeeded, what
// check observed afterwards, as [result, observed].
func after[T any](v T, err error, check func() (any, error)) (any, error) {
	if err != nil {
		return nil, err
	}
	got, err := check()
	if err != nil {
		return nil, err
	}
	return []any{v, got}, nil
}

// seedHash: h = {f1: v1, f2: v2, n: 10, x: 1.5}, one = {f: v}, str is a
// string.
func seedHash(ctx context.Context, c *Client, k func(string) string) error {
	if _, err := c.HSet(ctx, k("h"), "f1", "v1", "f2", "v2", "n", "10", "x", "1.5"); err != nil {
		return err
	}
	if _, err := c.HSet(ctx, k("one"), "f", "v"); err != nil {
		return err
	}
	return c.Set(ctx, k("str"), "s")
}

// seedList: l = [a b c b d], str is a string.
func seedList(ctx context.Context, c *Client, k func(string) string) error {
	if _, err := c.RPush(ctx, k("l"), "a", "b", "c", "b", "d"); err != nil {
		return err
	}
	return c.Set(ctx, k("str"), "s")
}

// seedSet: s1 = {a b c d}, s2 = {c d e}, s3 = {d e f}, one = {x}, l is a
// list.
func seedSet(ctx context.Context, c *Client, k func(string) string) error {
	for _, s := range []struct {
		key     string
		members []string
	}{
		{"s1", []string{"a", "b", "c", "d"}},
		{"s2", []string{"c", "d", "e"}},
		{"s3", []string{"d", "e", "f"}},
		{"one", []string{"x"}},
	} {
		if _, err := c.SAdd(ctx, k(s.key), s.members...); err != nil {
			return err
		}
	}
	_, err := c.RPush(ctx, k("l"), "a")
	return err
}

var hashCases = []hlsCase{
	{name: "HIncrByExisting", setup: seedHash, want: int64(15),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrBy(ctx, k("h"), "n", 5)
		}},
	{name: "HIncrByMissingField", setup: seedHash, want: int64(-3),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrBy(ctx, k("h"), "new", -3)
		}},
	{name: "HIncrByNotAnInteger", setup: seedHash, wantErr: &ServerError{Code: "ERR", Command: "HINCRBY"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrBy(ctx, k("h"), "f1", 1)
		}},
	{name: "HIncrByFloat", setup: seedHash, want: 1.75,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrByFloat(ctx, k("h"), "x", 0.25)
		}},
	{name: "HIncrByFloatOnInteger", setup: seedHash, want: 9.5,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrByFloat(ctx, k("h"), "n", -0.5)
		}},
	{name: "HIncrByFloatMissingKey", want: 2.5,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrByFloat(ctx, k("missing"), "f", 2.5)
		}},
	{name: "HIncrByFloatNaN", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrByFloat(ctx, k("h"), "x", math.NaN())
		}},
	{name: "HIncrByFloatInf", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HIncrByFloat(ctx, k("h"), "x", math.Inf(-1))
		}},
	{name: "HExistsTrue", setup: seedHash, want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HExists(ctx, k("h"), "f1")
		}},
	{name: "HExistsFalse", setup: seedHash, want: false,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HExists(ctx, k("h"), "nope")
		}},
	{name: "HExistsMissingKey", want: false,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HExists(ctx, k("missing"), "f")
		}},
	{name: "HLen", setup: seedHash, want: int64(4),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.HLen(ctx, k("h")) }},
	{name: "HLenMissingKey", want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HLen(ctx, k("missing"))
		}},
	{name: "HLenWrongType", setup: seedHash, wantErr: &ServerError{Code: "WRONGTYPE"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.HLen(ctx, k("str")) }},
	{name: "HKeys", setup: seedHash, want: []string{"f1", "f2", "n", "x"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.HKeys(ctx, k("h")))
		}},
	{name: "HKeysMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HKeys(ctx, k("missing"))
		}},
	{name: "HVals", setup: seedHash, want: []string{"1.5", "10", "v1", "v2"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.HVals(ctx, k("h")))
		}},
	{name: "HValsInHKeysOrder", setup: seedHash, want: map[string]string{"f1": "v1", "f2": "v2", "n": "10", "x": "1.5"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			fields, err := c.HKeys(ctx, k("h"))
			if err != nil {
				return nil, err
			}
			vals, err := c.HVals(ctx, k("h"))
			if err != nil || len(vals) != len(fields) {
				return vals, err
			}
			m := make(map[string]string, len(fields))
			for i, f := range fields {
				m[f] = vals[i]
			}
			return m, nil
		}},
	{name: "HValsMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HVals(ctx, k("missing"))
		}},
	{name: "HMGet", setup: seedHash, want: mget{[]string{"v1", "", "v2"}, []bool{true, false, true}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, f, err := c.HMGet(ctx, k("h"), "f1", "nope", "f2")
			return mget{v, f}, err
		}},
	{name: "HMGetMissingKey", want: mget{[]string{"", ""}, []bool{false, false}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, f, err := c.HMGet(ctx, k("missing"), "a", "b")
			return mget{v, f}, err
		}},
	{name: "HMGetNoFields", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, f, err := c.HMGet(ctx, k("h"))
			return mget{v, f}, err
		}},
	{name: "HSetNXNewField", setup: seedHash, want: []any{true, "new"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			ok, err := c.HSetNX(ctx, k("h"), "f3", "new")
			return after(ok, err, func() (any, error) { return c.HGet(ctx, k("h"), "f3") })
		}},
	{name: "HSetNXExistingField", setup: seedHash, want: []any{false, "v1"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			ok, err := c.HSetNX(ctx, k("h"), "f1", "new")
			return after(ok, err, func() (any, error) { return c.HGet(ctx, k("h"), "f1") })
		}},
	{name: "HStrLen", setup: seedHash, want: int64(3),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HStrLen(ctx, k("h"), "x")
		}},
	{name: "HStrLenMissingField", setup: seedHash, want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HStrLen(ctx, k("h"), "nope")
		}},
	{name: "HRandFieldAll", setup: seedHash, want: []string{"f1", "f2", "n", "x"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.HRandField(ctx, k("h"), 4))
		}},
	{name: "HRandFieldCountAboveSize", setup: seedHash, want: []string{"f1", "f2", "n", "x"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.HRandField(ctx, k("h"), 10))
		}},
	{name: "HRandFieldNegativeCountRepeats", setup: seedHash, want: []string{"f", "f", "f"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HRandField(ctx, k("one"), -3)
		}},
	{name: "HRandFieldZero", setup: seedHash, want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HRandField(ctx, k("h"), 0)
		}},
	{name: "HRandFieldMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.HRandField(ctx, k("missing"), 3)
		}},
}

// rangeOf returns a check reading the whole list at key.
func rangeOf(ctx context.Context, c *Client, key string) func() (any, error) {
	return func() (any, error) { return c.LRange(ctx, key, 0, -1) }
}

var listCases = []hlsCase{
	{name: "RPop", setup: seedList, want: []any{"d", []string{"a", "b", "c", "b"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.RPop(ctx, k("l"))
			return after(v, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "RPopMissingKey", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.RPop(ctx, k("missing"))
		}},
	{name: "LLen", setup: seedList, want: int64(5),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.LLen(ctx, k("l")) }},
	{name: "LLenMissingKey", want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LLen(ctx, k("missing"))
		}},
	{name: "LLenWrongType", setup: seedList, wantErr: &ServerError{Code: "WRONGTYPE", Command: "LLEN"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.LLen(ctx, k("str")) }},
	{name: "LIndexFirst", setup: seedList, want: "a",
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LIndex(ctx, k("l"), 0)
		}},
	{name: "LIndexNegative", setup: seedList, want: "d",
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LIndex(ctx, k("l"), -1)
		}},
	{name: "LIndexOutOfRange", setup: seedList, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LIndex(ctx, k("l"), 5)
		}},
	{name: "LIndexNegativeOutOfRange", setup: seedList, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LIndex(ctx, k("l"), -6)
		}},
	{name: "LIndexMissingKey", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LIndex(ctx, k("missing"), 0)
		}},
	{name: "LSet", setup: seedList, want: []string{"a", "B", "c", "b", "D"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			if err := c.LSet(ctx, k("l"), 1, "B"); err != nil {
				return nil, err
			}
			if err := c.LSet(ctx, k("l"), -1, "D"); err != nil {
				return nil, err
			}
			return c.LRange(ctx, k("l"), 0, -1)
		}},
	{name: "LSetOutOfRange", setup: seedList, wantErr: &ServerError{Code: "ERR", Command: "LSET"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return nil, c.LSet(ctx, k("l"), 5, "x")
		}},
	{name: "LSetMissingKey", wantErr: &ServerError{Code: "ERR", Command: "LSET"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return nil, c.LSet(ctx, k("missing"), 0, "x")
		}},
	{name: "LRemAll", setup: seedList, want: []any{int64(2), []string{"a", "c", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LRem(ctx, k("l"), 0, "b")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LRemFromHead", setup: seedList, want: []any{int64(1), []string{"a", "c", "b", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LRem(ctx, k("l"), 1, "b")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LRemFromTail", setup: seedList, want: []any{int64(1), []string{"a", "b", "c", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LRem(ctx, k("l"), -1, "b")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LRemNoMatch", setup: seedList, want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LRem(ctx, k("l"), 0, "z")
		}},
	{name: "LTrim", setup: seedList, want: []string{"b", "c", "b"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			if err := c.LTrim(ctx, k("l"), 1, -2); err != nil {
				return nil, err
			}
			return c.LRange(ctx, k("l"), 0, -1)
		}},
	{name: "LTrimEverything", setup: seedList, want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			if err := c.LTrim(ctx, k("l"), 10, 20); err != nil {
				return nil, err
			}
			return c.LLen(ctx, k("l"))
		}},
	{name: "LInsertBefore", setup: seedList, want: []any{int64(6), []string{"a", "b", "x", "c", "b", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LInsert(ctx, k("l"), true, "c", "x")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LInsertAfterFirstMatch", setup: seedList, want: []any{int64(6), []string{"a", "b", "x", "c", "b", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LInsert(ctx, k("l"), false, "b", "x")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LInsertMissingPivot", setup: seedList, want: int64(-1),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LInsert(ctx, k("l"), true, "z", "x")
		}},
	{name: "LInsertMissingKey", want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LInsert(ctx, k("missing"), true, "a", "x")
		}},
	{name: "LPosFirstMatch", setup: seedList, want: int64(1),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LPos(ctx, k("l"), "b")
		}},
	{name: "LPosLast", setup: seedList, want: int64(4),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LPos(ctx, k("l"), "d")
		}},
	{name: "LPosAbsent", setup: seedList, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LPos(ctx, k("l"), "z")
		}},
	{name: "LPosMissingKey", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LPos(ctx, k("missing"), "a")
		}},
	{name: "LMoveLeftToRight", setup: seedList, want: []any{"a", []any{[]string{"b", "c", "b", "d"}, []string{"a"}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			if _, err := c.RPush(ctx, k("dst"), "z"); err != nil {
				return nil, err
			}
			if _, err := c.LPop(ctx, k("dst")); err != nil { // dst now missing
				return nil, err
			}
			v, err := c.LMove(ctx, k("l"), k("dst"), ListLeft, ListRight)
			return after(v, err, func() (any, error) {
				src, err := c.LRange(ctx, k("l"), 0, -1)
				return after(src, err, rangeOf(ctx, c, k("dst")))
			})
		}},
	{name: "LMoveRightToLeftOntoExisting", setup: seedList, want: []any{"d", []string{"d", "z"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			if _, err := c.RPush(ctx, k("dst"), "z"); err != nil {
				return nil, err
			}
			v, err := c.LMove(ctx, k("l"), k("dst"), ListRight, ListLeft)
			return after(v, err, rangeOf(ctx, c, k("dst")))
		}},
	{name: "LMoveRotate", setup: seedList, want: []any{"d", []string{"d", "a", "b", "c", "b"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.LMove(ctx, k("l"), k("l"), ListRight, ListLeft)
			return after(v, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LMoveMissingSource", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMove(ctx, k("missing"), k("dst"), ListLeft, ListLeft)
		}},
	{name: "LMoveBadSide", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMove(ctx, k("l"), k("dst"), ListLeft, ListSide(9))
		}},
	{name: "LPushX", setup: seedList, want: []any{int64(7), []string{"z", "y", "a", "b", "c", "b", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LPushX(ctx, k("l"), "y", "z")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LPushXMissingKey", want: []any{int64(0), int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.LPushX(ctx, k("missing"), "a")
			return after(n, err, func() (any, error) { return c.LLen(ctx, k("missing")) })
		}},
	{name: "LPushXNoValues", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.LPushX(ctx, k("l")) }},
	{name: "RPushX", setup: seedList, want: []any{int64(6), []string{"a", "b", "c", "b", "d", "y"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.RPushX(ctx, k("l"), "y")
			return after(n, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "RPushXMissingKey", want: []any{int64(0), int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.RPushX(ctx, k("missing"), "a", "b")
			return after(n, err, func() (any, error) { return c.LLen(ctx, k("missing")) })
		}},
	{name: "RPushXNoValues", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.RPushX(ctx, k("l")) }},
	{name: "LMPopLeftFromFirstNonEmpty", setup: seedList, want: []any{true, []any{[]string{"a"}, []string{"b", "c", "b", "d"}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			r, err := c.LMPop(ctx, ListLeft, 0, k("missing"), k("l"))
			return after(r.Key == k("l"), err, func() (any, error) {
				return after(r.Elements, nil, rangeOf(ctx, c, k("l")))
			})
		}},
	{name: "LMPopRightCount", setup: seedList, want: []any{[]string{"d", "b"}, []string{"a", "b", "c"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			r, err := c.LMPop(ctx, ListRight, 2, k("l"))
			return after(r.Elements, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "LMPopCountAboveLengthDeletesList", setup: seedList, want: []any{[]string{"a", "b", "c", "b", "d"}, int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			r, err := c.LMPop(ctx, ListLeft, 10, k("l"))
			return after(r.Elements, err, func() (any, error) { return c.Exists(ctx, k("l")) })
		}},
	{name: "LMPopAllMissing", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMPop(ctx, ListLeft, 3, k("missing"), k("missing2"))
		}},
	{name: "LMPopWrongType", setup: seedList, wantErr: &ServerError{Code: "WRONGTYPE", Command: "LMPOP"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMPop(ctx, ListLeft, 0, k("str"), k("l"))
		}},
	{name: "LMPopNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMPop(ctx, ListLeft, 1)
		}},
	{name: "LMPopNegativeCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMPop(ctx, ListLeft, -1, k("l"))
		}},
	{name: "LMPopBadSide", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.LMPop(ctx, ListSide(2), 1, k("l"))
		}},
	{name: "RPopLPush", setup: seedList, want: []any{"d", []any{[]string{"a", "b", "c", "b"}, []string{"d"}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.RPopLPush(ctx, k("l"), k("dst"))
			return after(v, err, func() (any, error) {
				src, err := c.LRange(ctx, k("l"), 0, -1)
				return after(src, err, rangeOf(ctx, c, k("dst")))
			})
		}},
	{name: "RPopLPushRotate", setup: seedList, want: []any{"d", []string{"d", "a", "b", "c", "b"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.RPopLPush(ctx, k("l"), k("l"))
			return after(v, err, rangeOf(ctx, c, k("l")))
		}},
	{name: "RPopLPushMissingSource", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.RPopLPush(ctx, k("missing"), k("dst"))
		}},
	{name: "RPopLPushWrongTypeDestination", setup: seedList, wantErr: &ServerError{Code: "WRONGTYPE", Command: "RPOPLPUSH"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.RPopLPush(ctx, k("l"), k("str"))
		}},
}

// membersOf returns a check reading the sorted members of the set at key.
func membersOf(ctx context.Context, c *Client, key string) func() (any, error) {
	return func() (any, error) { return sorted(c.SMembers(ctx, key)) }
}

var setCases = []hlsCase{
	{name: "SRem", setup: seedSet, want: []any{int64(1), []string{"b", "c", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SRem(ctx, k("s1"), "a", "z")
			return after(n, err, membersOf(ctx, c, k("s1")))
		}},
	{name: "SRemNoMembers", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SRem(ctx, k("s1")) }},
	{name: "SCard", setup: seedSet, want: int64(4),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SCard(ctx, k("s1")) }},
	{name: "SCardMissingKey", want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SCard(ctx, k("missing"))
		}},
	{name: "SCardWrongType", setup: seedSet, wantErr: &ServerError{Code: "WRONGTYPE", Command: "SCARD"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SCard(ctx, k("l")) }},
	{name: "SIsMemberTrue", setup: seedSet, want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SIsMember(ctx, k("s1"), "a")
		}},
	{name: "SIsMemberFalse", setup: seedSet, want: false,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SIsMember(ctx, k("s1"), "z")
		}},
	{name: "SIsMemberMissingKey", want: false,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SIsMember(ctx, k("missing"), "a")
		}},
	{name: "SMIsMember", setup: seedSet, want: []bool{true, false, true},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SMIsMember(ctx, k("s1"), "a", "z", "d")
		}},
	{name: "SMIsMemberMissingKey", want: []bool{false, false},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SMIsMember(ctx, k("missing"), "a", "b")
		}},
	{name: "SMIsMemberNoMembers", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SMIsMember(ctx, k("s1"))
		}},
	{name: "SInterTwo", setup: seedSet, want: []string{"c", "d"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SInter(ctx, k("s1"), k("s2")))
		}},
	{name: "SInterThree", setup: seedSet, want: []string{"d"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SInter(ctx, k("s1"), k("s2"), k("s3")))
		}},
	{name: "SInterWithMissingKey", setup: seedSet, want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInter(ctx, k("s1"), k("missing"))
		}},
	{name: "SInterNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SInter(ctx) }},
	{name: "SUnion", setup: seedSet, want: []string{"a", "b", "c", "d", "e"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SUnion(ctx, k("s1"), k("s2"), k("missing")))
		}},
	{name: "SUnionMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SUnion(ctx, k("missing"))
		}},
	{name: "SUnionNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SUnion(ctx) }},
	{name: "SDiff", setup: seedSet, want: []string{"a", "b"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SDiff(ctx, k("s1"), k("s2"), k("s3")))
		}},
	{name: "SDiffOrderMatters", setup: seedSet, want: []string{"e"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SDiff(ctx, k("s2"), k("s1")))
		}},
	{name: "SDiffNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SDiff(ctx) }},
	{name: "SPopLastMember", setup: seedSet, want: []any{"x", int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.SPop(ctx, k("one"))
			return after(v, err, func() (any, error) { return c.SCard(ctx, k("one")) })
		}},
	{name: "SPopRemovesTheMember", setup: seedSet, want: []any{false, int64(3)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, err := c.SPop(ctx, k("s1"))
			if err != nil {
				return nil, err
			}
			if !slices.Contains([]string{"a", "b", "c", "d"}, v) {
				return nil, errors.New("SPop returned " + v + ", not a member of s1")
			}
			in, err := c.SIsMember(ctx, k("s1"), v)
			return after(in, err, func() (any, error) { return c.SCard(ctx, k("s1")) })
		}},
	{name: "SPopMissingKey", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SPop(ctx, k("missing"))
		}},
	{name: "SRandMemberCountAboveSize", setup: seedSet, want: []string{"a", "b", "c", "d"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return sorted(c.SRandMember(ctx, k("s1"), 10))
		}},
	{name: "SRandMemberDistinctSubset", setup: seedSet, want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			got, err := sorted(c.SRandMember(ctx, k("s1"), 2))
			if err != nil {
				return nil, err
			}
			return len(got) == 2 && got[0] != got[1] &&
				slices.Contains([]string{"a", "b", "c", "d"}, got[0]) &&
				slices.Contains([]string{"a", "b", "c", "d"}, got[1]), nil
		}},
	{name: "SRandMemberNegativeCountRepeats", setup: seedSet, want: []string{"x", "x", "x"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SRandMember(ctx, k("one"), -3)
		}},
	{name: "SRandMemberZero", setup: seedSet, want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SRandMember(ctx, k("s1"), 0)
		}},
	{name: "SRandMemberMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SRandMember(ctx, k("missing"), 2)
		}},
	{name: "SMove", setup: seedSet, want: []any{true, []any{[]string{"b", "c", "d"}, []string{"a", "c", "d", "e"}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			ok, err := c.SMove(ctx, k("s1"), k("s2"), "a")
			return after(ok, err, func() (any, error) {
				src, err := sorted(c.SMembers(ctx, k("s1")))
				return after(src, err, membersOf(ctx, c, k("s2")))
			})
		}},
	{name: "SMoveNotAMember", setup: seedSet, want: []any{false, []string{"c", "d", "e"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			ok, err := c.SMove(ctx, k("s1"), k("s2"), "z")
			return after(ok, err, membersOf(ctx, c, k("s2")))
		}},
	{name: "SMoveMissingSource", setup: seedSet, want: false,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SMove(ctx, k("missing"), k("s2"), "c")
		}},
	{name: "SInterStore", setup: seedSet, want: []any{int64(2), []string{"c", "d"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SInterStore(ctx, k("dst"), k("s1"), k("s2"))
			return after(n, err, membersOf(ctx, c, k("dst")))
		}},
	{name: "SInterStoreEmptyDeletesDst", setup: seedSet, want: []any{int64(0), int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SInterStore(ctx, k("one"), k("s1"), k("missing"))
			return after(n, err, func() (any, error) { return c.Exists(ctx, k("one")) })
		}},
	{name: "SInterStoreNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterStore(ctx, k("dst"))
		}},
	{name: "SUnionStoreReplacesDst", setup: seedSet, want: []any{int64(5), []string{"a", "b", "c", "d", "e"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SUnionStore(ctx, k("l"), k("s1"), k("s2"))
			return after(n, err, membersOf(ctx, c, k("l")))
		}},
	{name: "SUnionStoreNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SUnionStore(ctx, k("dst"))
		}},
	{name: "SDiffStore", setup: seedSet, want: []any{int64(2), []string{"a", "b"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SDiffStore(ctx, k("dst"), k("s1"), k("s2"))
			return after(n, err, membersOf(ctx, c, k("dst")))
		}},
	{name: "SDiffStoreOntoSource", setup: seedSet, want: []any{int64(1), []string{"e"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.SDiffStore(ctx, k("s2"), k("s2"), k("s1"))
			return after(n, err, membersOf(ctx, c, k("s2")))
		}},
	{name: "SDiffStoreNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SDiffStore(ctx, k("dst"))
		}},
	{name: "SInterCard", setup: seedSet, want: int64(2),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 0, k("s1"), k("s2"))
		}},
	{name: "SInterCardThree", setup: seedSet, want: int64(1),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 0, k("s1"), k("s2"), k("s3"))
		}},
	{name: "SInterCardLimitStopsCounting", setup: seedSet, want: int64(1),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 1, k("s1"), k("s2"))
		}},
	{name: "SInterCardLimitAboveCount", setup: seedSet, want: int64(4),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 10, k("s1"))
		}},
	{name: "SInterCardWithMissingKey", setup: seedSet, want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 0, k("s1"), k("missing"))
		}},
	{name: "SInterCardWrongType", setup: seedSet, wantErr: &ServerError{Code: "WRONGTYPE", Command: "SINTERCARD"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, 0, k("s1"), k("l"))
		}},
	{name: "SInterCardNoKeys", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) { return c.SInterCard(ctx, 5) }},
	{name: "SInterCardNegativeLimit", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.SInterCard(ctx, -1, k("s1"))
		}},
}

// TestHashListSetCommands runs every row against the real server under
// RESP2 and RESP3 through a recording proxy, so a row expecting
// ErrInvalidArgument also checks that nothing was sent.
func TestHashListSetCommands(t *testing.T) {
	rec := newRecorder(t, "")
	for _, family := range []struct {
		name  string
		cases []hlsCase
	}{{"Hash", hashCases}, {"List", listCases}, {"Set", setCases}} {
		t.Run(family.name, func(t *testing.T) { runCases(t, rec, family.cases) })
	}
}

// runCases runs rows against the real server under RESP2 and RESP3
// through rec's proxy; a row expecting ErrInvalidArgument also checks
// that nothing was sent.
func runCases(t *testing.T, rec *recorder, cases []hlsCase) {
	forEachProtocol(t, Options{Endpoints: []string{rec.proxy.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				ctx := testCtx(t)
				k := func(s string) string { return key(t, s) }
				if tt.setup != nil {
					if err := tt.setup(ctx, c, k); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				before := rec.count()
				got, err := tt.do(ctx, c, k)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("error = %v; want %v", err, tt.wantErr)
					}
					if errors.Is(tt.wantErr, ErrInvalidArgument) {
						if n := rec.count() - before; n != 0 {
							t.Errorf("the server received %d frames; want 0", n)
						}
					}
					return
				}
				if err != nil {
					t.Fatalf("error = %v; want nil", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %#v; want %#v", got, tt.want)
				}
			})
		}
	})
}

// TestHashListSetRetryCategories pins the retry category each new method's
// doc comment states to what its spec (the catalog) says.
func TestHashListSetRetryCategories(t *testing.T) {
	tests := []struct {
		spec *spec
		want RetryCategory
	}{
		{specHINCRBY, WriteAccumulating},
		{specHINCRBYFLOAT, WriteAccumulating},
		{specHEXISTS, ReadOnly},
		{specHLEN, ReadOnly},
		{specHKEYS, ReadOnly},
		{specHVALS, ReadOnly},
		{specHMGET, ReadOnly},
		{specHSETNX, WriteChecked},
		{specHSTRLEN, ReadOnly},
		{specHRANDFIELD, ReadOnly},
		{specRPOP, WriteAccumulating},
		{specLLEN, ReadOnly},
		{specLINDEX, ReadOnly},
		{specLSET, WriteLastWins},
		{specLREM, WriteAccumulating},
		{specLTRIM, WriteAccumulating},
		{specLINSRT, WriteAccumulating},
		{specLPOS, ReadOnly},
		{specLMOVE, WriteAccumulating},
		{specLPUSHX, WriteAccumulating},
		{specRPUSHX, WriteAccumulating},
		{specSREM, WriteAccumulating},
		{specSCARD, ReadOnly},
		{specSISMEMBER, ReadOnly},
		{specSMISMEMBER, ReadOnly},
		{specSINTER, ReadOnly},
		{specSUNION, ReadOnly},
		{specSDIFF, ReadOnly},
		{specSPOP, WriteAccumulating},
		{specSRANDMEMBER, ReadOnly},
		{specSMOVE, WriteAccumulating},
		{specSINTERSTORE, WriteAccumulating},
		{specSUNIONSTORE, WriteAccumulating},
		{specSDIFFSTORE, WriteAccumulating},
		{specLPUSH, WriteAccumulating},
		{specRPUSH, WriteAccumulating},
		{specLPOP, WriteAccumulating},
		{specLRANGE, ReadOnly},
		{specRPOPLPUSH, WriteAccumulating},
		{specLMPOP, WriteAccumulating},
		{specBLMPOP, Never},
		{specBRPOPLPUSH, Never},
		{specSADD, WriteChecked},
		{specSMEM, ReadOnly},
		{specSINTERCARD, ReadOnly},
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
