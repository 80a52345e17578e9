package respire

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// streamCase is one row of TestStreamCommands: setup seeds the keys
// (named with k), do runs the method under test and returns what it
// observed, which must deeply equal want after timeless; or, when wantErr
// is set, do's error must match it. A row whose wantErr is
// ErrInvalidArgument must send nothing. do may read the frames the
// recorder saw with last.
type streamCase struct {
	name    string
	setup   func(ctx context.Context, c *Client, k func(string) string) error
	do      func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error)
	want    any
	wantErr error
}

// The entries seedStream adds to s, and the one it adds to t.
var (
	streamSeedS = []XMessage{
		{ID: "1-1", Fields: []string{"a", "1"}},
		{ID: "2-1", Fields: []string{"b", "2"}},
		{ID: "3-1", Fields: []string{"c", "3"}},
		{ID: "4-1", Fields: []string{"d", "4"}},
	}
	streamSeedT = XMessage{ID: "1-1", Fields: []string{"x", "9"}}
)

// seedStream: s holds streamSeedS, with the group g created at "0" whose consumer
// c1 has read (and holds pending) 1-1 and 2-1; t holds streamSeedT; str is a
// string.
func seedStream(ctx context.Context, c *Client, k func(string) string) error {
	for _, m := range streamSeedS {
		if _, err := c.XAdd(ctx, k("s"), XAddOptions{ID: m.ID}, m.Fields...); err != nil {
			return err
		}
	}
	if _, err := c.XAdd(ctx, k("t"), XAddOptions{ID: streamSeedT.ID}, streamSeedT.Fields...); err != nil {
		return err
	}
	if err := c.XGroupCreate(ctx, k("s"), "g", "0", XGroupCreateOptions{}); err != nil {
		return err
	}
	if _, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{Count: 2}, k("s"), ">"); err != nil {
		return err
	}
	return c.Set(ctx, k("str"), "v")
}

// streamTimeless zeroes the times a result holds (idle times move on), so that
// results compare deeply.
func streamTimeless(v any) any {
	switch x := v.(type) {
	case []XPendingEntry:
		out := slices.Clone(x)
		for i := range out {
			out[i].Idle = 0
		}
		return out
	case []XConsumerInfo:
		out := slices.Clone(x)
		for i := range out {
			out[i].Idle, out[i].Inactive = 0, 0
		}
		return out
	case XStreamInfo:
		x.RadixTreeKeys, x.RadixTreeNodes = 0, 0 // the server's layout
		return x
	case XStreamFullInfo:
		x.RadixTreeKeys, x.RadixTreeNodes = 0, 0
		x.Groups = slices.Clone(x.Groups)
		for i := range x.Groups {
			g := &x.Groups[i]
			g.Pending = slices.Clone(g.Pending)
			for j := range g.Pending {
				g.Pending[j].DeliveryTime = time.Time{}
			}
			g.Consumers = slices.Clone(g.Consumers)
			for j := range g.Consumers {
				ci := &g.Consumers[j]
				ci.SeenTime, ci.ActiveTime = time.Time{}, time.Time{}
				ci.Pending = slices.Clone(ci.Pending)
				for k := range ci.Pending {
					ci.Pending[k].DeliveryTime = time.Time{}
				}
			}
		}
		return x
	}
	return v
}

// streamThen returns v and what check observed afterwards, as [v, observed].
func streamThen[T any](v T, err error, check func() (any, error)) (any, error) {
	if err != nil {
		return nil, err
	}
	got, err := check()
	if err != nil {
		return nil, err
	}
	return []any{streamTimeless(v), streamTimeless(got)}, nil
}

// streamRangeOf reads the whole stream s.
func streamRangeOf(ctx context.Context, c *Client, k func(string) string) func() (any, error) {
	return func() (any, error) { return c.XRange(ctx, k("s"), "-", "+", 0) }
}

// streamPendingOf lists the pending entries of the group g of s.
func streamPendingOf(ctx context.Context, c *Client, k func(string) string) func() (any, error) {
	return func() (any, error) { return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 10}) }
}

var streamSeededGroup = XGroupInfo{Name: "g", Consumers: 1, Pending: 2, LastDeliveredID: "2-1", EntriesRead: 2, Lag: 2}

var streamCases = []streamCase{
	// Ranges and deletion.
	{name: "XRange", setup: seedStream, want: streamSeedS[1:3],
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRange(ctx, k("s"), "2-1", "3-1", 0)
		}},
	{name: "XRevRange", setup: seedStream, want: []XMessage{streamSeedS[3], streamSeedS[2], streamSeedS[1], streamSeedS[0]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRevRange(ctx, k("s"), "+", "-", 0)
		}},
	{name: "XRevRangeCount", setup: seedStream, want: []XMessage{streamSeedS[2], streamSeedS[1]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRevRange(ctx, k("s"), "3-1", "-", 2)
		}},
	{name: "XRangeNegativeCount", setup: seedStream, wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRange(ctx, k("s"), "-", "+", -1)
		}},
	{name: "XRevRangeNegativeCount", setup: seedStream, wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRevRange(ctx, k("s"), "+", "-", -1)
		}},
	{name: "XRevRangeMissingKey", want: []XMessage{},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRevRange(ctx, k("missing"), "+", "-", 0)
		}},
	{name: "XRevRangeWrongType", setup: seedStream, wantErr: &ServerError{Code: "WRONGTYPE"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRevRange(ctx, k("str"), "+", "-", 0)
		}},
	{name: "XLen", setup: seedStream, want: int64(4),
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XLen(ctx, k("s"))
		}},
	{name: "XDel", setup: seedStream, want: []any{int64(1), []XMessage{streamSeedS[0], streamSeedS[2], streamSeedS[3]}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XDel(ctx, k("s"), "2-1", "9-9")
			return streamThen(n, err, streamRangeOf(ctx, c, k))
		}},
	{name: "XDelNoIDs", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XDel(ctx, k("s"))
		}},

	// XTRIM.
	{name: "XTrimMaxLen", setup: seedStream, want: []any{int64(2), streamSeedS[2:]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 2})
			return streamThen(n, err, streamRangeOf(ctx, c, k))
		}},
	{name: "XTrimMinID", setup: seedStream, want: []any{int64(2), streamSeedS[2:]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XTrim(ctx, k("s"), XTrimOptions{MinID: "3-1"})
			return streamThen(n, err, streamRangeOf(ctx, c, k))
		}},
	{name: "XTrimEverything", setup: seedStream, want: []any{int64(4), int64(0)},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XTrim(ctx, k("s"), XTrimOptions{MinID: "18446744073709551615-18446744073709551615"})
			return streamThen(n, err, func() (any, error) { return c.XLen(ctx, k("s")) })
		}},
	{name: "XTrimApproximateLimitEncoding", setup: seedStream,
		want: []string{"XTRIM", "K", "MAXLEN", "~", "2", "LIMIT", "10"},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			if _, err := c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 2, Approximate: true, Limit: 10}); err != nil {
				return nil, err
			}
			return streamKeyed(last(), k("s")), nil
		}},
	{name: "XTrimApproximateMinIDEncoding", setup: seedStream,
		want: []string{"XTRIM", "K", "MINID", "~", "3-1"},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			if _, err := c.XTrim(ctx, k("s"), XTrimOptions{MinID: "3-1", Approximate: true}); err != nil {
				return nil, err
			}
			return streamKeyed(last(), k("s")), nil
		}},
	{name: "XTrimBadRef", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 1, Ref: XRefPolicy(7)})
		}},
	{name: "XTrimNothingSet", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XTrim(ctx, k("s"), XTrimOptions{})
		}},
	{name: "XTrimBoth", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 1, MinID: "1-1"})
		}},
	{name: "XTrimLimitNotApproximate", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 1, Limit: 5})
		}},
	{name: "XTrimNegative", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: -1})
		}},

	// XSETID.
	{name: "XSetIDRefusesLowerAppends", setup: seedStream, wantErr: &ServerError{Code: "ERR", Command: "XADD"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XSetID(ctx, k("s"), "10-1", XSetIDOptions{}); err != nil {
				return nil, err
			}
			return c.XAdd(ctx, k("s"), XAddOptions{ID: "5-1"}, "e", "5")
		}},
	{name: "XSetIDOptions", setup: seedStream,
		want: []string{"9-1", "8-1", "10"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XSetID(ctx, k("s"), "9-1", XSetIDOptions{EntriesAdded: 10, MaxDeletedID: "8-1"}); err != nil {
				return nil, err
			}
			info, err := c.XInfoStream(ctx, k("s"))
			return []string{info.LastGeneratedID, info.MaxDeletedEntryID, strconv.FormatInt(info.EntriesAdded, 10)}, err
		}},
	{name: "XSetIDBelowTop", setup: seedStream, wantErr: &ServerError{Code: "ERR", Command: "XSETID"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XSetID(ctx, k("s"), "2-1", XSetIDOptions{})
		}},
	{name: "XSetIDEmpty", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XSetID(ctx, k("s"), "", XSetIDOptions{})
		}},
	{name: "XSetIDNegative", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XSetID(ctx, k("s"), "9-1", XSetIDOptions{EntriesAdded: -1})
		}},

	// XGROUP.
	{name: "XGroupCreateMkStream",
		want: []XGroupInfo{{Name: "g2", LastDeliveredID: "0-0", EntriesRead: -1, Lag: 0}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XGroupCreate(ctx, k("new"), "g2", "$", XGroupCreateOptions{MkStream: true}); err != nil {
				return nil, err
			}
			return c.XInfoGroups(ctx, k("new"))
		}},
	{name: "XGroupCreateMissingStream", wantErr: &ServerError{Code: "ERR", Command: "XGROUP CREATE"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupCreate(ctx, k("missing"), "g", "$", XGroupCreateOptions{})
		}},
	{name: "XGroupCreateExists", setup: seedStream, wantErr: &ServerError{Code: "BUSYGROUP"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupCreate(ctx, k("s"), "g", "$", XGroupCreateOptions{})
		}},
	{name: "XGroupCreateEntriesRead", setup: seedStream,
		want: []XGroupInfo{streamSeededGroup, {Name: "g3", LastDeliveredID: "3-1", EntriesRead: 3, Lag: 1}, {Name: "g4", LastDeliveredID: "0-0", EntriesRead: -1, Lag: 4}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XGroupCreate(ctx, k("s"), "g3", "3-1", XGroupCreateOptions{EntriesRead: 3}); err != nil {
				return nil, err
			}
			if err := c.XGroupCreate(ctx, k("s"), "g4", "0", XGroupCreateOptions{}); err != nil {
				return nil, err
			}
			return c.XInfoGroups(ctx, k("s"))
		}},
	{name: "XGroupCreateEmptyGroup", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupCreate(ctx, k("s"), "", "$", XGroupCreateOptions{})
		}},
	{name: "XGroupCreateNegativeEntriesRead", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupCreate(ctx, k("s"), "g", "$", XGroupCreateOptions{EntriesRead: -2})
		}},
	{name: "XGroupCreateConsumer", setup: seedStream, want: []any{true, false},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			added, err := c.XGroupCreateConsumer(ctx, k("s"), "g", "c9")
			return streamThen(added, err, func() (any, error) { return c.XGroupCreateConsumer(ctx, k("s"), "g", "c1") })
		}},
	{name: "XGroupDelConsumer", setup: seedStream, want: []any{int64(2), XPendingSummary{}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XGroupDelConsumer(ctx, k("s"), "g", "c1")
			return streamThen(n, err, func() (any, error) { return c.XPending(ctx, k("s"), "g") })
		}},
	{name: "XGroupDestroy", setup: seedStream, want: []any{true, false},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			ok, err := c.XGroupDestroy(ctx, k("s"), "g")
			return streamThen(ok, err, func() (any, error) { return c.XGroupDestroy(ctx, k("s"), "g") })
		}},
	{name: "XGroupSetID", setup: seedStream,
		want: []XGroupInfo{{Name: "g", Consumers: 1, Pending: 2, LastDeliveredID: "4-1", EntriesRead: 4, Lag: 0}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XGroupSetID(ctx, k("s"), "g", "4-1", XGroupSetIDOptions{EntriesRead: 4}); err != nil {
				return nil, err
			}
			return c.XInfoGroups(ctx, k("s"))
		}},
	{name: "XGroupSetIDDollar", setup: seedStream, want: "4-1",
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XGroupSetID(ctx, k("s"), "g", "$", XGroupSetIDOptions{}); err != nil {
				return nil, err
			}
			gs, err := c.XInfoGroups(ctx, k("s"))
			if err != nil || len(gs) != 1 {
				return gs, err
			}
			return gs[0].LastDeliveredID, nil
		}},
	{name: "XGroupSetIDMissingGroup", setup: seedStream, wantErr: &ServerError{Code: "NOGROUP"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupSetID(ctx, k("s"), "nope", "$", XGroupSetIDOptions{})
		}},
	{name: "XGroupSetIDEmptyID", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XGroupSetID(ctx, k("s"), "g", "", XGroupSetIDOptions{})
		}},

	// XACK and XPENDING.
	{name: "XAck", setup: seedStream,
		want: []any{int64(1), XPendingSummary{Count: 1, LowestID: "2-1", HighestID: "2-1", Consumers: []XPendingConsumer{{"c1", 1}}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			n, err := c.XAck(ctx, k("s"), "g", "1-1", "9-9")
			return streamThen(n, err, func() (any, error) { return c.XPending(ctx, k("s"), "g") })
		}},
	{name: "XAckNoIDs", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAck(ctx, k("s"), "g")
		}},
	{name: "XPending", setup: seedStream,
		want: XPendingSummary{Count: 2, LowestID: "1-1", HighestID: "2-1", Consumers: []XPendingConsumer{{"c1", 2}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XPending(ctx, k("s"), "g")
		}},
	{name: "XPendingMissingGroup", setup: seedStream, wantErr: &ServerError{Code: "NOGROUP"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XPending(ctx, k("s"), "nope")
		}},
	{name: "XPendingExt", setup: seedStream,
		want: []XPendingEntry{{ID: "1-1", Consumer: "c1", Deliveries: 1}, {ID: "2-1", Consumer: "c1", Deliveries: 1}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 10})
			return streamTimeless(v), err
		}},
	{name: "XPendingExtRangeCountConsumer", setup: seedStream,
		want: []any{[]XPendingEntry{{ID: "2-1", Consumer: "c1", Deliveries: 1}}, []XPendingEntry{}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Start: "2-0", End: "+", Count: 5, Consumer: "c1"})
			return streamThen(v, err, func() (any, error) {
				return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 5, Consumer: "c2"})
			})
		}},
	{name: "XPendingExtIdle", setup: seedStream,
		want: []any{[]XPendingEntry{}, []string{"XPENDING", "K", "g", "IDLE", "3600000", "-", "+", "10"}},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			v, err := c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Idle: time.Hour, Count: 10})
			return streamThen(v, err, func() (any, error) { return streamKeyed(last(), k("s")), nil })
		}},
	{name: "XPendingExtNoCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{})
		}},
	{name: "XPendingExtIdleNotWholeMillis", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 1, Idle: 1500 * time.Microsecond})
		}},
	{name: "XPendingExtIdleNegative", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 1, Idle: -time.Second})
		}},

	// XCLAIM and XAUTOCLAIM.
	{name: "XClaim", setup: seedStream,
		want: []any{[]XMessage{streamSeedS[0]}, XPendingSummary{Count: 2, LowestID: "1-1", HighestID: "2-1", Consumers: []XPendingConsumer{{"c1", 1}, {"c2", 1}}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{}, "1-1")
			return streamThen(v, err, func() (any, error) { return c.XPending(ctx, k("s"), "g") })
		}},
	{name: "XClaimNotIdleEnough", setup: seedStream, want: []XMessage{},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{MinIdle: time.Hour}, "1-1", "2-1")
		}},
	{name: "XClaimIdleRetryCount", setup: seedStream, want: []any{int64(5), true},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{Idle: time.Minute, RetryCount: 5}, "1-1"); err != nil {
				return nil, err
			}
			p, err := c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 1, Consumer: "c2"})
			if err != nil || len(p) != 1 {
				return p, err
			}
			return []any{p[0].Deliveries, p[0].Idle >= time.Minute && p[0].Idle < time.Hour}, nil
		}},
	{name: "XClaimTimeEncoding", setup: seedStream,
		want: []string{"XCLAIM", "K", "g", "c2", "0", "1-1", "TIME", "1700000000123", "FORCE", "LASTID", "4-1"},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			if _, err := c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{Time: time.UnixMilli(1700000000123), Force: true, LastID: "4-1"}, "1-1"); err != nil {
				return nil, err
			}
			return streamKeyed(last(), k("s")), nil
		}},
	{name: "XClaimForce", setup: seedStream, want: []XMessage{streamSeedS[3]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{Force: true}, "4-1")
		}},
	{name: "XClaimDeletedEntry", setup: seedStream, want: []any{[]XMessage{streamSeedS[1]}, int64(1)},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XDel(ctx, k("s"), "1-1"); err != nil {
				return nil, err
			}
			v, err := c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{}, "1-1", "2-1")
			return streamThen(v, err, func() (any, error) {
				s, err := c.XPending(ctx, k("s"), "g")
				return s.Count, err
			})
		}},
	{name: "XClaimJustID", setup: seedStream, want: []any{[]string{"1-1", "2-1"}, []XPendingEntry{{ID: "1-1", Consumer: "c2", Deliveries: 1}, {ID: "2-1", Consumer: "c2", Deliveries: 1}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XClaimJustID(ctx, k("s"), "g", "c2", XClaimOptions{}, "1-1", "2-1")
			return streamThen(v, err, streamPendingOf(ctx, c, k))
		}},
	{name: "XClaimNoIDs", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{})
		}},
	{name: "XClaimIdleAndTime", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{Idle: time.Second, Time: time.Now()}, "1-1")
		}},
	{name: "XClaimNegativeRetryCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaimJustID(ctx, k("s"), "g", "c2", XClaimOptions{RetryCount: -1}, "1-1")
		}},
	{name: "XClaimNegativeMinIdle", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XClaim(ctx, k("s"), "g", "c2", XClaimOptions{MinIdle: -time.Millisecond}, "1-1")
		}},
	{name: "XAutoClaim", setup: seedStream,
		want: XAutoClaimResult{Next: "0-0", Messages: streamSeedS[:2], Deleted: []string{}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{})
		}},
	{name: "XAutoClaimCount", setup: seedStream,
		want: []any{XAutoClaimResult{Next: "2-1", Messages: streamSeedS[:1], Deleted: []string{}}, XAutoClaimResult{Next: "0-0", Messages: streamSeedS[1:2], Deleted: []string{}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			r, err := c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{Count: 1})
			return streamThen(r, err, func() (any, error) {
				return c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{Start: r.Next, Count: 1})
			})
		}},
	{name: "XAutoClaimDeleted", setup: seedStream,
		want: XAutoClaimResult{Next: "0-0", Messages: streamSeedS[1:2], Deleted: []string{"1-1"}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XDel(ctx, k("s"), "1-1"); err != nil {
				return nil, err
			}
			return c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{})
		}},
	{name: "XAutoClaimNotIdleEnough", setup: seedStream,
		want: XAutoClaimResult{Next: "0-0", Messages: []XMessage{}, Deleted: []string{}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{MinIdle: time.Hour})
		}},
	{name: "XAutoClaimJustID", setup: seedStream,
		want: []any{XAutoClaimJustIDResult{Next: "0-0", IDs: []string{"1-1", "2-1"}, Deleted: []string{}},
			[]XPendingEntry{{ID: "1-1", Consumer: "c2", Deliveries: 1}, {ID: "2-1", Consumer: "c2", Deliveries: 1}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			r, err := c.XAutoClaimJustID(ctx, k("s"), "g", "c2", XAutoClaimOptions{Start: "0-0", Count: 10})
			return streamThen(r, err, streamPendingOf(ctx, c, k))
		}},
	{name: "XAutoClaimNegativeCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAutoClaim(ctx, k("s"), "g", "c2", XAutoClaimOptions{Count: -1})
		}},
	{name: "XAutoClaimMinIdleNotWholeMillis", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAutoClaimJustID(ctx, k("s"), "g", "c2", XAutoClaimOptions{MinIdle: time.Microsecond})
		}},

	// XINFO.
	{name: "XInfoStream", setup: seedStream,
		want: XStreamInfo{XStreamState: XStreamState{Length: 4, LastGeneratedID: "4-1", MaxDeletedEntryID: "0-0", EntriesAdded: 4,
			RecordedFirstEntryID: "1-1"}, Groups: 1, FirstEntry: &streamSeedS[0], LastEntry: &streamSeedS[3]},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XInfoStream(ctx, k("s"))
			if err == nil && (v.RadixTreeKeys <= 0 || v.RadixTreeNodes <= 0) {
				return v, errors.New("no radix tree sizes")
			}
			return streamTimeless(v), err
		}},
	{name: "XInfoStreamEmpty",
		want: XStreamInfo{XStreamState: XStreamState{LastGeneratedID: "0-0", MaxDeletedEntryID: "0-0", RecordedFirstEntryID: "0-0"}, Groups: 1},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if err := c.XGroupCreate(ctx, k("new"), "g", "$", XGroupCreateOptions{MkStream: true}); err != nil {
				return nil, err
			}
			v, err := c.XInfoStream(ctx, k("new"))
			return streamTimeless(v), err
		}},
	{name: "XInfoStreamMissingKey", wantErr: &ServerError{Code: "ERR"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XInfoStream(ctx, k("missing"))
		}},
	{name: "XInfoStreamFull", setup: seedStream,
		want: XStreamFullInfo{XStreamState: XStreamState{Length: 4, LastGeneratedID: "4-1", MaxDeletedEntryID: "0-0", EntriesAdded: 4,
			RecordedFirstEntryID: "1-1"}, Entries: streamSeedS,
			Groups: []XGroupFullInfo{{Name: "g", LastDeliveredID: "2-1", EntriesRead: 2, Lag: 2, PelCount: 2,
				Pending: []XStreamPendingEntry{{ID: "1-1", Consumer: "c1", Deliveries: 1}, {ID: "2-1", Consumer: "c1", Deliveries: 1}},
				Consumers: []XConsumerFullInfo{{Name: "c1", PelCount: 2,
					Pending: []XStreamPendingEntry{{ID: "1-1", Consumer: "c1", Deliveries: 1}, {ID: "2-1", Consumer: "c1", Deliveries: 1}}}}}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XInfoStreamFull(ctx, k("s"), 0)
			if err == nil && len(v.Groups) == 1 && len(v.Groups[0].Consumers) == 1 && len(v.Groups[0].Pending) == 2 {
				// The times are the server's clock: recent, not zero.
				for _, at := range []time.Time{v.Groups[0].Consumers[0].SeenTime, v.Groups[0].Pending[0].DeliveryTime} {
					if d := time.Since(at); d < -time.Hour || d > time.Hour {
						return v, errors.New("implausible time " + at.String())
					}
				}
			}
			return streamTimeless(v), err
		}},
	{name: "XInfoStreamFullCount", setup: seedStream, want: []int{1, 1, 1, 2},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XInfoStreamFull(ctx, k("s"), 1)
			if err != nil || len(v.Groups) != 1 || len(v.Groups[0].Consumers) != 1 {
				return v, err
			}
			g := v.Groups[0]
			return []int{len(v.Entries), len(g.Pending), len(g.Consumers[0].Pending), int(g.PelCount)}, nil
		}},
	{name: "XInfoStreamFullNegativeCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XInfoStreamFull(ctx, k("s"), -1)
		}},
	{name: "XInfoGroups", setup: seedStream, want: []XGroupInfo{streamSeededGroup},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XInfoGroups(ctx, k("s"))
		}},
	{name: "XInfoGroupsNone", setup: seedStream, want: []XGroupInfo{},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XInfoGroups(ctx, k("t"))
		}},
	{name: "XInfoConsumers", setup: seedStream, want: []XConsumerInfo{{Name: "c1", Pending: 2}, {Name: "c2"}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XGroupCreateConsumer(ctx, k("s"), "g", "c2"); err != nil {
				return nil, err
			}
			v, err := c.XInfoConsumers(ctx, k("s"), "g")
			for _, ci := range v {
				if ci.Idle < 0 || ci.Idle > time.Hour {
					return v, errors.New("implausible idle time " + ci.Idle.String())
				}
			}
			return streamTimeless(v), err
		}},
	{name: "XInfoConsumersMissingGroup", setup: seedStream, wantErr: &ServerError{Code: "NOGROUP"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XInfoConsumers(ctx, k("s"), "nope")
		}},

	// XREAD.
	{name: "XRead", setup: seedStream,
		want: []XStream{{Stream: "S", Messages: streamSeedS[2:]}, {Stream: "T", Messages: []XMessage{streamSeedT}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XRead(ctx, XReadOptions{}, k("s"), "2-1", k("t"), "0")
			return streamRenamed(v, k), err
		}},
	{name: "XReadCount", setup: seedStream,
		want: []any{[]XStream{{Stream: "S", Messages: streamSeedS[:1]}}, []string{"XREAD", "COUNT", "1", "STREAMS", "S", "0"}},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			v, err := c.XRead(ctx, XReadOptions{Count: 1}, k("s"), "0")
			return streamThen(streamRenamed(v, k), err, func() (any, error) { return streamRenamedArgs(last(), k), nil })
		}},
	{name: "XReadNothingNew", setup: seedStream, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{}, k("s"), "4-1")
		}},
	{name: "XReadBlockTimesOut", setup: seedStream, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Block: 20 * time.Millisecond}, k("s"), "$")
		}},
	{name: "XReadBlockServedAtOnce", setup: seedStream,
		want: []any{[]XStream{{Stream: "S", Messages: streamSeedS[3:]}}, []string{"XREAD", "BLOCK", "5000", "STREAMS", "S", "3-1"}},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			v, err := c.XRead(ctx, XReadOptions{Block: 5 * time.Second}, k("s"), "3-1")
			return streamThen(streamRenamed(v, k), err, func() (any, error) { return streamRenamedArgs(last(), k), nil })
		}},
	{name: "XReadBlockForever", setup: seedStream,
		want: []XStream{{Stream: "S", Messages: []XMessage{{ID: "5-1", Fields: []string{"e", "5"}}}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			// Reading after 4-1 gets 5-1 whether the XADD lands before or
			// after the server blocks.
			added := make(chan error, 1)
			go func() {
				_, err := c.XAdd(ctx, k("s"), XAddOptions{ID: "5-1"}, "e", "5")
				added <- err
			}()
			v, err := c.XRead(ctx, XReadOptions{BlockForever: true}, k("s"), "4-1")
			if aerr := <-added; aerr != nil {
				return nil, aerr
			}
			return streamRenamed(v, k), err
		}},
	{name: "XReadNoStreams", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{})
		}},
	{name: "XReadOddStreams", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Block: time.Second}, k("s"), "0", k("t"))
		}},
	{name: "XReadNegativeCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Count: -1}, k("s"), "0")
		}},
	{name: "XReadNegativeBlock", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Block: -time.Second}, k("s"), "0")
		}},
	{name: "XReadBlockUnderAMillisecond", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Block: time.Microsecond}, k("s"), "0")
		}},
	{name: "XReadBlockAndForever", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XRead(ctx, XReadOptions{Block: time.Second, BlockForever: true}, k("s"), "0")
		}},

	// XREADGROUP.
	{name: "XReadGroupNew", setup: seedStream,
		want: []any{[]XStream{{Stream: "S", Messages: streamSeedS[2:]}}, XPendingSummary{Count: 4, LowestID: "1-1", HighestID: "4-1", Consumers: []XPendingConsumer{{"c1", 2}, {"c2", 2}}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XReadGroup(ctx, "g", "c2", XReadGroupOptions{}, k("s"), ">")
			return streamThen(streamRenamed(v, k), err, func() (any, error) { return c.XPending(ctx, k("s"), "g") })
		}},
	{name: "XReadGroupHistory", setup: seedStream,
		want: []XStream{{Stream: "S", Messages: streamSeedS[:2]}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), "0")
			return streamRenamed(v, k), err
		}},
	{name: "XReadGroupHistoryDeletedEntry", setup: seedStream,
		want: []XStream{{Stream: "S", Messages: []XMessage{{ID: "1-1"}, streamSeedS[1]}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XDel(ctx, k("s"), "1-1"); err != nil {
				return nil, err
			}
			v, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), "0")
			return streamRenamed(v, k), err
		}},
	// A history read past the last pending entry is not ErrNil: the
	// server answers each stream with no entries.
	{name: "XReadGroupHistoryExhausted", setup: seedStream,
		want: []XStream{{Stream: "S", Messages: []XMessage{}}},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			v, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), "2-1")
			return streamRenamed(v, k), err
		}},
	{name: "XReadGroupNoAck", setup: seedStream,
		want: []any{[]XStream{{Stream: "S", Messages: streamSeedS[2:3]}}, int64(2),
			[]string{"XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "NOACK", "STREAMS", "S", ">"}},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			v, err := c.XReadGroup(ctx, "g", "c2", XReadGroupOptions{Count: 1, NoAck: true}, k("s"), ">")
			if err != nil {
				return nil, err
			}
			sent := streamRenamedArgs(last(), k)
			p, err := c.XPending(ctx, k("s"), "g")
			return []any{streamRenamed(v, k), p.Count, sent}, err
		}},
	{name: "XReadGroupNothingNew", setup: seedStream, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), ">"); err != nil {
				return nil, err
			}
			return c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), ">")
		}},
	{name: "XReadGroupBlockTimesOut", setup: seedStream, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			if _, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, k("s"), ">"); err != nil {
				return nil, err
			}
			return c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{Block: 20 * time.Millisecond}, k("s"), ">")
		}},
	{name: "XReadGroupBlockServedAtOnce", setup: seedStream,
		want: []any{[]XStream{{Stream: "S", Messages: streamSeedS[2:3]}}, []string{"XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "BLOCK", "5000", "STREAMS", "S", ">"}},
		do: func(ctx context.Context, c *Client, k func(string) string, last func() []string) (any, error) {
			v, err := c.XReadGroup(ctx, "g", "c2", XReadGroupOptions{Count: 1, Block: 5 * time.Second}, k("s"), ">")
			return streamThen(streamRenamed(v, k), err, func() (any, error) { return streamRenamedArgs(last(), k), nil })
		}},
	{name: "XReadGroupMissingGroup", setup: seedStream, wantErr: &ServerError{Code: "NOGROUP"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XReadGroup(ctx, "nope", "c1", XReadGroupOptions{}, k("s"), ">")
		}},
	{name: "XReadGroupEmptyConsumer", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XReadGroup(ctx, "g", "", XReadGroupOptions{}, k("s"), ">")
		}},
	{name: "XReadGroupBlockUnderAMillisecond", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{Block: time.Nanosecond}, k("s"), ">")
		}},

	// Redis 8.x commands the 7.0 server refuses; their replies are
	// scripted in TestStreamDeleteReplies.
	{name: "XAckDelNoIDs", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAckDel(ctx, k("s"), "g", XAcked)
		}},
	{name: "XAckDelBadPolicy", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XAckDel(ctx, k("s"), "g", XRefPolicy(9), "1-1")
		}},
	{name: "XDelExNoIDs", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return c.XDelEx(ctx, k("s"), XRefDefault)
		}},
	{name: "XCfgSetUnknownOn70", setup: seedStream, wantErr: &ServerError{Code: "ERR", Command: "XCFGSET"},
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XCfgSet(ctx, k("s"), XCfgOptions{MaxSize: 10})
		}},
	{name: "XCfgSetNothingSet", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string, _ func() []string) (any, error) {
			return nil, c.XCfgSet(ctx, k("s"), XCfgOptions{})
		}},
}

// streamKeyed replaces key in args by "K" (keys carry the test's name).
func streamKeyed(args []string, key string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == key {
			out[i] = "K"
		}
	}
	return out
}

// streamRenamedArgs replaces the keys s and t in args by "S" and "T".
func streamRenamedArgs(args []string, k func(string) string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		switch a {
		case k("s"):
			out[i] = "S"
		case k("t"):
			out[i] = "T"
		}
	}
	return out
}

// streamRenamed replaces the stream names s and t by "S" and "T".
func streamRenamed(v []XStream, k func(string) string) []XStream {
	for i := range v {
		switch v[i].Stream {
		case k("s"):
			v[i].Stream = "S"
		case k("t"):
			v[i].Stream = "T"
		}
	}
	return v
}

// TestStreamCommands runs every row against the real server (Redis 7.0)
// under RESP2 and RESP3 through a recording proxy, so a row expecting
// ErrInvalidArgument also checks that nothing was sent.
func TestStreamCommands(t *testing.T) {
	rec := newRecorder(t, "")
	forEachProtocol(t, Options{Endpoints: []string{rec.proxy.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range streamCases {
			t.Run(tt.name, func(t *testing.T) {
				ctx := testCtx(t)
				k := func(s string) string { return key(t, s) }
				if tt.setup != nil {
					if err := tt.setup(ctx, c, k); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				before := rec.count()
				got, err := tt.do(ctx, c, k, rec.last)
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

// streamOp runs one stream command directly (client) and queues the same
// command on a batch (batch), each on its own seeded keys.
type streamOp struct {
	name   string
	client func(ctx context.Context, c *Client, k func(string) string) (any, error)
	batch  func(b *Batch, k func(string) string) func() (any, error)
}

// streamResult adapts a Future to a streamOp's batch result.
func streamResult[T any](f Future[T]) func() (any, error) {
	return func() (any, error) {
		v, err := f.Result()
		return v, err
	}
}

// streamNoValue drops the value of an error-only Client method.
func streamNoValue(err error) (any, error) { return struct{}{}, err }

var streamOps = []streamOp{
	{"XRange", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XRange(ctx, k("s"), "-", "+", 2)
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XRange(k("s"), "-", "+", 2))
	}},
	{"XRevRange", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XRevRange(ctx, k("s"), "+", "-", 3)
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XRevRange(k("s"), "+", "-", 3))
	}},
	{"XLen", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XLen(ctx, k("s"))
	}, func(b *Batch, k func(string) string) func() (any, error) { return streamResult(b.XLen(k("s"))) }},
	{"XRead", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		v, err := c.XRead(ctx, XReadOptions{Count: 3}, k("s"), "1-1", k("t"), "0")
		return streamRenamed(v, k), err
	}, func(b *Batch, k func(string) string) func() (any, error) {
		f := b.XRead(XReadOptions{Count: 3}, k("s"), "1-1", k("t"), "0")
		return func() (any, error) {
			v, err := f.Result()
			return streamRenamed(v, k), err
		}
	}},
	{"XReadNothingNew", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XRead(ctx, XReadOptions{}, k("s"), "4-1")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XRead(XReadOptions{}, k("s"), "4-1"))
	}},
	{"XReadGroup", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		v, err := c.XReadGroup(ctx, "g", "c2", XReadGroupOptions{Count: 1}, k("s"), ">")
		return streamRenamed(v, k), err
	}, func(b *Batch, k func(string) string) func() (any, error) {
		f := b.XReadGroup("g", "c2", XReadGroupOptions{Count: 1}, k("s"), ">")
		return func() (any, error) {
			v, err := f.Result()
			return streamRenamed(v, k), err
		}
	}},
	{"XPending", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XPending(ctx, k("s"), "g")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XPending(k("s"), "g"))
	}},
	{"XPendingExt", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XPendingExt(ctx, k("s"), "g", XPendingExtOptions{Count: 10})
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XPendingExt(k("s"), "g", XPendingExtOptions{Count: 10}))
	}},
	{"XClaim", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XClaim(ctx, k("s"), "g", "c3", XClaimOptions{RetryCount: 3}, "1-1")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XClaim(k("s"), "g", "c3", XClaimOptions{RetryCount: 3}, "1-1"))
	}},
	{"XClaimJustID", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XClaimJustID(ctx, k("s"), "g", "c3", XClaimOptions{}, "2-1")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XClaimJustID(k("s"), "g", "c3", XClaimOptions{}, "2-1"))
	}},
	{"XAutoClaim", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XAutoClaim(ctx, k("s"), "g", "c4", XAutoClaimOptions{Count: 1})
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XAutoClaim(k("s"), "g", "c4", XAutoClaimOptions{Count: 1}))
	}},
	{"XAutoClaimJustID", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XAutoClaimJustID(ctx, k("s"), "g", "c4", XAutoClaimOptions{Start: "2-0"})
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XAutoClaimJustID(k("s"), "g", "c4", XAutoClaimOptions{Start: "2-0"}))
	}},
	{"XAck", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XAck(ctx, k("s"), "g", "1-1", "3-1")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XAck(k("s"), "g", "1-1", "3-1"))
	}},
	{"XInfoConsumers", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XInfoConsumers(ctx, k("s"), "g")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XInfoConsumers(k("s"), "g"))
	}},
	{"XGroupCreate", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return streamNoValue(c.XGroupCreate(ctx, k("s"), "g2", "2-1", XGroupCreateOptions{EntriesRead: 2}))
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupCreate(k("s"), "g2", "2-1", XGroupCreateOptions{EntriesRead: 2}))
	}},
	{"XGroupCreateExists", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return streamNoValue(c.XGroupCreate(ctx, k("s"), "g2", "$", XGroupCreateOptions{}))
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupCreate(k("s"), "g2", "$", XGroupCreateOptions{}))
	}},
	{"XGroupCreateConsumer", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XGroupCreateConsumer(ctx, k("s"), "g2", "c5")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupCreateConsumer(k("s"), "g2", "c5"))
	}},
	{"XGroupSetID", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return streamNoValue(c.XGroupSetID(ctx, k("s"), "g2", "3-1", XGroupSetIDOptions{EntriesRead: 3}))
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupSetID(k("s"), "g2", "3-1", XGroupSetIDOptions{EntriesRead: 3}))
	}},
	{"XInfoGroups", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XInfoGroups(ctx, k("s"))
	}, func(b *Batch, k func(string) string) func() (any, error) { return streamResult(b.XInfoGroups(k("s"))) }},
	{"XGroupDelConsumer", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XGroupDelConsumer(ctx, k("s"), "g", "c3")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupDelConsumer(k("s"), "g", "c3"))
	}},
	{"XGroupDestroy", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XGroupDestroy(ctx, k("s"), "g2")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XGroupDestroy(k("s"), "g2"))
	}},
	{"XAdd", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XAdd(ctx, k("s"), XAddOptions{ID: "5-1", MaxLen: 4}, "e", "5")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XAdd(k("s"), XAddOptions{ID: "5-1", MaxLen: 4}, "e", "5"))
	}},
	{"XDel", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XDel(ctx, k("s"), "1-1", "9-9")
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XDel(k("s"), "1-1", "9-9"))
	}},
	{"XTrim", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XTrim(ctx, k("s"), XTrimOptions{MaxLen: 2})
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XTrim(k("s"), XTrimOptions{MaxLen: 2}))
	}},
	{"XSetID", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return streamNoValue(c.XSetID(ctx, k("s"), "7-1", XSetIDOptions{EntriesAdded: 9, MaxDeletedID: "2-1"}))
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XSetID(k("s"), "7-1", XSetIDOptions{EntriesAdded: 9, MaxDeletedID: "2-1"}))
	}},
	{"XInfoStream", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XInfoStream(ctx, k("s"))
	}, func(b *Batch, k func(string) string) func() (any, error) { return streamResult(b.XInfoStream(k("s"))) }},
	{"XInfoStreamFull", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.XInfoStreamFull(ctx, k("s"), 5)
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XInfoStreamFull(k("s"), 5))
	}},
	{"XCfgSet", func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return streamNoValue(c.XCfgSet(ctx, k("s"), XCfgOptions{Duration: time.Minute}))
	}, func(b *Batch, k func(string) string) func() (any, error) {
		return streamResult(b.XCfgSet(k("s"), XCfgOptions{Duration: time.Minute}))
	}},
}

// TestStreamBatchMatchesClient: every stream Batch member gives what its
// Client method gives. The same sequence of commands runs once directly
// and once queued in one batch, each on its own seeded keys, under RESP2
// and RESP3; results and errors must match (times aside).
func TestStreamBatchMatchesClient(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		direct := func(s string) string { return key(t, "direct", s) }
		queued := func(s string) string { return key(t, "queued", s) }
		for _, k := range []func(string) string{direct, queued} {
			if err := seedStream(ctx, c, k); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
		type outcome struct {
			v   any
			err error
		}
		want := make([]outcome, len(streamOps))
		for i, op := range streamOps {
			v, err := op.client(ctx, c, direct)
			want[i] = outcome{streamTimeless(v), err}
		}
		b := c.NewBatch()
		results := make([]func() (any, error), len(streamOps))
		for i, op := range streamOps {
			results[i] = op.batch(b, queued)
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		for i, op := range streamOps {
			v, err := results[i]()
			v = streamTimeless(v)
			w := want[i]
			switch {
			case (err == nil) != (w.err == nil):
				t.Errorf("%s: batch error %v; client error %v", op.name, err, w.err)
			case err != nil && strings.ReplaceAll(err.Error(), "queued:", "direct:") != w.err.Error():
				t.Errorf("%s: batch error %q; client error %q", op.name, err, w.err)
			case err == nil && !reflect.DeepEqual(v, w.v):
				t.Errorf("%s: batch %#v; client %#v", op.name, v, w.v)
			}
		}
		// The sequence exercises replies, not just errors.
		if want[0].err != nil || want[len(want)-2].err != nil {
			t.Errorf("XRange = %v, XInfoStreamFull = %v; want results", want[0].err, want[len(want)-2].err)
		}
	})
}

// TestStreamBatchRefusesBlocking: a batch member of XREAD or XREADGROUP
// with BLOCK fails with ErrInvalidArgument and the batch sends nothing.
func TestStreamBatchRefusesBlocking(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	s := key(t, "s")
	for _, tt := range []struct {
		name  string
		queue func(b *Batch) Future[[]XStream]
	}{
		{"XReadBlock", func(b *Batch) Future[[]XStream] { return b.XRead(XReadOptions{Block: time.Second}, s, "$") }},
		{"XReadBlockForever", func(b *Batch) Future[[]XStream] { return b.XRead(XReadOptions{BlockForever: true}, s, "$") }},
		{"XReadGroupBlock", func(b *Batch) Future[[]XStream] {
			return b.XReadGroup("g", "c", XReadGroupOptions{Block: time.Second}, s, ">")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := rec.count()
			b := c.NewBatch()
			b.XLen(s)
			f := tt.queue(b)
			if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Execute = %v; want ErrInvalidArgument", err)
			}
			if _, err := f.Result(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("member = %v; want ErrInvalidArgument", err)
			}
			if n := rec.count() - before; n != 0 {
				t.Errorf("the server received %d frames; want 0", n)
			}
		})
	}
}

// TestStreamDeleteReplies checks XACKDEL and XDELEX (Redis 8.2; the test
// server is 7.0) against replies a proxy scripts in both protocols: the
// frame sent, the conversion of the per-ID codes, and the Batch member.
func TestStreamDeleteReplies(t *testing.T) {
	const codes = "*3\r\n:1\r\n:-1\r\n:2\r\n"
	want := []XDelResult{XDelDeleted, XDelNotFound, XDelReferenced}
	tests := []struct {
		name string
		sent []string
		call func(ctx context.Context, c *Client) ([]XDelResult, error)
		add  func(b *Batch) Future[[]XDelResult]
	}{
		{"XAckDelAcked", []string{"XACKDEL", "s", "g", "ACKED", "IDS", "3", "1-1", "2-1", "3-1"},
			func(ctx context.Context, c *Client) ([]XDelResult, error) {
				return c.XAckDel(ctx, "s", "g", XAcked, "1-1", "2-1", "3-1")
			},
			func(b *Batch) Future[[]XDelResult] { return b.XAckDel("s", "g", XAcked, "1-1", "2-1", "3-1") }},
		{"XAckDelDefault", []string{"XACKDEL", "s", "g", "IDS", "3", "1-1", "2-1", "3-1"},
			func(ctx context.Context, c *Client) ([]XDelResult, error) {
				return c.XAckDel(ctx, "s", "g", XRefDefault, "1-1", "2-1", "3-1")
			},
			func(b *Batch) Future[[]XDelResult] { return b.XAckDel("s", "g", XRefDefault, "1-1", "2-1", "3-1") }},
		{"XDelExKeepRef", []string{"XDELEX", "s", "KEEPREF", "IDS", "3", "1-1", "2-1", "3-1"},
			func(ctx context.Context, c *Client) ([]XDelResult, error) {
				return c.XDelEx(ctx, "s", XKeepRef, "1-1", "2-1", "3-1")
			},
			func(b *Batch) Future[[]XDelResult] { return b.XDelEx("s", XKeepRef, "1-1", "2-1", "3-1") }},
		{"XDelExDelRef", []string{"XDELEX", "s", "DELREF", "IDS", "3", "1-1", "2-1", "3-1"},
			func(ctx context.Context, c *Client) ([]XDelResult, error) {
				return c.XDelEx(ctx, "s", XDelRef, "1-1", "2-1", "3-1")
			},
			func(b *Batch) Future[[]XDelResult] { return b.XDelEx("s", XDelRef, "1-1", "2-1", "3-1") }},
	}
	for _, proto := range []int{2, 3} {
		for _, tt := range tests {
			t.Run("RESP"+strconv.Itoa(proto)+"/"+tt.name, func(t *testing.T) {
				p := realProxy(t, standaloneAddr(t))
				var got [][]string
				done := make(chan struct{}, 4)
				p.MustAddRule(t, respiretest.Rule{Command: tt.sent[0], Times: respiretest.Always, Action: respiretest.Reply([]byte(codes)),
					OnReceive: func(args []string) { got = append(got, args); done <- struct{}{} }})
				c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: proto})
				ctx := testCtx(t)
				v, err := tt.call(ctx, c)
				if err != nil || !reflect.DeepEqual(v, want) {
					t.Errorf("Client = %v, %v; want %v", v, err, want)
				}
				b := c.NewBatch()
				f := tt.add(b)
				if err := b.Execute(ctx); err != nil {
					t.Fatalf("Execute: %v", err)
				}
				if v, err := f.Result(); err != nil || !reflect.DeepEqual(v, want) {
					t.Errorf("Batch = %v, %v; want %v", v, err, want)
				}
				<-done
				<-done
				for i, args := range got {
					if !reflect.DeepEqual(args, tt.sent) {
						t.Errorf("frame %d = %q; want %q", i, args, tt.sent)
					}
				}
			})
		}
	}
}

// TestStreamReplyShapes checks conversions of reply shapes the 7.0 server
// does not send, injected by a proxy: XINFO CONSUMERS with Redis 7.2's
// inactive field (a RESP3 map and a RESP2 flat array), XAUTOCLAIM's
// two-element reply of Redis 6.2 with a null (deleted) entry, and XINFO
// GROUPS whose entries-read and lag are null.
func TestStreamReplyShapes(t *testing.T) {
	consumers := []XConsumerInfo{{Name: "c1", Pending: 2, Idle: 1500 * time.Millisecond, Inactive: 700 * time.Millisecond}, {Name: "c2", Idle: 3 * time.Millisecond, Inactive: -1}}
	tests := []struct {
		name    string
		proto   int
		command string
		raw     string
		call    func(ctx context.Context, c *Client) (any, error)
		want    any
	}{
		{"XInfoConsumersRESP3", 3, "XINFO",
			"*2\r\n%4\r\n+name\r\n$2\r\nc1\r\n+pending\r\n:2\r\n+idle\r\n:1500\r\n+inactive\r\n:700\r\n" +
				"%4\r\n+name\r\n$2\r\nc2\r\n+pending\r\n:0\r\n+idle\r\n:3\r\n+inactive\r\n:-1\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XInfoConsumers(ctx, "s", "g") }, consumers},
		{"XInfoConsumersRESP2", 2, "XINFO",
			"*2\r\n*8\r\n$4\r\nname\r\n$2\r\nc1\r\n$7\r\npending\r\n:2\r\n$4\r\nidle\r\n:1500\r\n$8\r\ninactive\r\n:700\r\n" +
				"*8\r\n$4\r\nname\r\n$2\r\nc2\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:3\r\n$8\r\ninactive\r\n:-1\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XInfoConsumers(ctx, "s", "g") }, consumers},
		{"XAutoClaim62", 2, "XAUTOCLAIM",
			"*2\r\n$3\r\n0-0\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*-1\r\n",
			func(ctx context.Context, c *Client) (any, error) {
				return c.XAutoClaim(ctx, "s", "g", "c", XAutoClaimOptions{})
			}, XAutoClaimResult{Next: "0-0", Messages: streamSeedS[:1]}},
		{"XInfoGroupsNullsRESP3", 3, "XINFO",
			"*1\r\n%6\r\n+name\r\n$1\r\ng\r\n+consumers\r\n:0\r\n+pending\r\n:0\r\n+last-delivered-id\r\n$3\r\n0-0\r\n+entries-read\r\n_\r\n+lag\r\n_\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XInfoGroups(ctx, "s") },
			[]XGroupInfo{{Name: "g", LastDeliveredID: "0-0", EntriesRead: -1, Lag: -1}}},
		{"XInfoStreamFullActiveTimeRESP3", 3, "XINFO",
			"%2\r\n+length\r\n:0\r\n+groups\r\n*1\r\n%3\r\n+name\r\n$1\r\ng\r\n+pending\r\n*0\r\n+consumers\r\n*2\r\n" +
				"%3\r\n+name\r\n$2\r\nc1\r\n+seen-time\r\n:1700000000000\r\n+active-time\r\n:1700000000500\r\n" +
				"%3\r\n+name\r\n$2\r\nc2\r\n+seen-time\r\n:1700000000000\r\n+active-time\r\n:-1\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XInfoStreamFull(ctx, "s", 0) },
			XStreamFullInfo{Groups: []XGroupFullInfo{{Name: "g", EntriesRead: -1, Lag: -1, Pending: []XStreamPendingEntry{}, Consumers: []XConsumerFullInfo{
				{Name: "c1", SeenTime: time.UnixMilli(1700000000000), ActiveTime: time.UnixMilli(1700000000500), Pending: []XStreamPendingEntry{}},
				{Name: "c2", SeenTime: time.UnixMilli(1700000000000), Pending: []XStreamPendingEntry{}}}}}}},
		{"XPendingEmptyRESP3", 3, "XPENDING", "*4\r\n:0\r\n_\r\n_\r\n_\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XPending(ctx, "s", "g") }, XPendingSummary{}},
		{"XReadRESP3Map", 3, "XREAD",
			"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
			func(ctx context.Context, c *Client) (any, error) { return c.XRead(ctx, XReadOptions{}, "s", "0") },
			[]XStream{{Stream: "s", Messages: streamSeedS[:1]}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := realProxy(t, standaloneAddr(t))
			p.MustAddRule(t, respiretest.Rule{Command: tt.command, Times: respiretest.Always, Action: respiretest.Reply([]byte(tt.raw))})
			c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: tt.proto})
			got, err := tt.call(testCtx(t), c)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

// TestStreamRetryCategories pins the retry category each method's doc
// comment states to its spec, and the specs to the catalog but for the
// documented refinement of XREAD without BLOCK.
func TestStreamRetryCategories(t *testing.T) {
	tests := []struct {
		spec *spec
		want RetryCategory
	}{
		{specXRANGE, ReadOnly},
		{specXREVRANGE, ReadOnly},
		{specXLEN, ReadOnly},
		{specXDEL, WriteAccumulating},
		{specXTRIM, WriteAccumulating},
		{specXSETID, WriteAccumulating},
		{specXGROUPCREATE, WriteAccumulating},
		{specXGROUPCREATECONSUMER, WriteAccumulating},
		{specXGROUPDELCONSUMER, WriteAccumulating},
		{specXGROUPDESTROY, WriteAccumulating},
		{specXGROUPSETID, WriteAccumulating},
		{specXACK, WriteAccumulating},
		{specXPENDING, ReadOnly},
		{specXCLAIM, WriteAccumulating},
		{specXAUTOCLAIM, WriteAccumulating},
		{specXINFOSTREAM, ReadOnly},
		{specXINFOGROUPS, ReadOnly},
		{specXINFOCONSUMERS, ReadOnly},
		{specXACKDEL, WriteAccumulating},
		{specXDELEX, WriteAccumulating},
		{specXCFGSET, WriteAccumulating},
		{specXREADBlocking, Never},
		{specXREADGROUP, Never},
	}
	for _, tt := range tests {
		if got := tt.spec.cat; got != tt.want {
			t.Errorf("%s: category %v; want %v", tt.spec.name, got, tt.want)
		}
		if got := tt.spec.desc.Category(); got != tt.spec.cat {
			t.Errorf("%s: spec category %v differs from the catalog's %v", tt.spec.name, tt.spec.cat, got)
		}
	}
	if specXREAD.cat != ReadOnly || specXREAD.desc.Category() != Never {
		t.Errorf("XREAD without BLOCK: category %v (catalog %v); want the ReadOnly refinement of Never", specXREAD.cat, specXREAD.desc.Category())
	}
}

// TestStreamBlockingReadStoppedByContext: a blocking XREAD whose context
// ends while the server blocks returns a context error, and the client
// goes on serving (the server was told to stop blocking).
func TestStreamBlockingReadStoppedByContext(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		s := key(t, "s")
		ctx, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
		defer cancel()
		_, err := c.XRead(ctx, XReadOptions{BlockForever: true}, s, "$")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("XRead = %v; want a deadline error", err)
		}
		if _, err := c.XAdd(testCtx(t), s, XAddOptions{ID: "1-1"}, "a", "1"); err != nil {
			t.Fatal(err)
		}
		got, err := c.XReadGroup(testCtx(t), "g", "c", XReadGroupOptions{Block: time.Second}, s, ">")
		if !errors.Is(err, &ServerError{Code: "NOGROUP"}) {
			t.Errorf("XReadGroup without the group = %v, %v; want NOGROUP", got, err)
		}
	})
}

// TestStreamCluster: on a Cluster client the stream commands go to their
// key's node: XGROUP and XINFO subcommands (the key after the
// subcommand), XREAD and XREADGROUP (the keys after STREAMS, which must
// share a slot), blocking or not, directly and in a batch.
func TestStreamCluster(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	s, u, other := p+"{st}s", p+"{st}u", p+"{other}x"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), s); _, _ = c.Del(testCtx(t), u); _, _ = c.Del(testCtx(t), other) })
	for _, k := range []string{s, u, other} {
		if _, err := c.XAdd(ctx, k, XAddOptions{ID: "1-1"}, "a", "1"); err != nil {
			t.Fatalf("XAdd %s: %v", k, err)
		}
	}
	if err := c.XGroupCreate(ctx, s, "g", "0", XGroupCreateOptions{}); err != nil {
		t.Fatalf("XGroupCreate: %v", err)
	}
	m := []XMessage{{ID: "1-1", Fields: []string{"a", "1"}}}
	got, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{}, s, ">")
	if want := []XStream{{Stream: s, Messages: m}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("XReadGroup = %v, %v; want %v", got, err, want)
	}
	got, err = c.XRead(ctx, XReadOptions{Block: 5 * time.Second}, s, "0", u, "0")
	if want := []XStream{{Stream: s, Messages: m}, {Stream: u, Messages: m}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("blocking XRead = %v, %v; want %v", got, err, want)
	}
	if _, err := c.XRead(ctx, XReadOptions{}, s, "0", other, "0"); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("XRead across slots = %v; want ErrCrossSlot", err)
	}
	b := c.NewBatch()
	groups := b.XInfoGroups(s)
	pending := b.XPending(s, "g")
	read := b.XRead(XReadOptions{}, s, "0", u, "0")
	info := b.XInfoStream(other)
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if v, err := groups.Result(); err != nil || len(v) != 1 || v[0].Pending != 1 {
		t.Errorf("XInfoGroups = %v, %v; want one group with one pending entry", v, err)
	}
	if v, err := pending.Result(); err != nil || v.Count != 1 {
		t.Errorf("XPending = %v, %v; want one pending entry", v, err)
	}
	if v, err := read.Result(); err != nil || len(v) != 2 {
		t.Errorf("XRead = %v, %v; want two streams", v, err)
	}
	if v, err := info.Result(); err != nil || v.Length != 1 {
		t.Errorf("XInfoStream = %v, %v; want one entry", v, err)
	}
}

// TestStreamTrimRefPolicy checks XTRIM's reference policy (Redis 8.2; the
// test server is 7.0) against a reply a proxy scripts: the frame sent, by
// the Client method and the Batch member, under both protocols.
func TestStreamTrimRefPolicy(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for _, tt := range []struct {
			ref  XRefPolicy
			sent []string
		}{
			{XAcked, []string{"XTRIM", "s", "MINID", "~", "3-1", "LIMIT", "5", "ACKED"}},
			{XDelRef, []string{"XTRIM", "s", "MINID", "~", "3-1", "LIMIT", "5", "DELREF"}},
			{XKeepRef, []string{"XTRIM", "s", "MINID", "~", "3-1", "LIMIT", "5", "KEEPREF"}},
		} {
			t.Run("RESP"+strconv.Itoa(proto)+"/"+tt.sent[len(tt.sent)-1], func(t *testing.T) {
				p := realProxy(t, standaloneAddr(t))
				sent := make(chan []string, 2)
				p.MustAddRule(t, respiretest.Rule{Command: "XTRIM", Times: respiretest.Always, Action: respiretest.Reply([]byte(":2\r\n")),
					OnReceive: func(args []string) { sent <- args }})
				c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: proto})
				ctx := testCtx(t)
				opt := XTrimOptions{MinID: "3-1", Approximate: true, Limit: 5, Ref: tt.ref}
				if n, err := c.XTrim(ctx, "s", opt); err != nil || n != 2 {
					t.Errorf("Client = %d, %v; want 2", n, err)
				}
				b := c.NewBatch()
				f := b.XTrim("s", opt)
				if err := b.Execute(ctx); err != nil {
					t.Fatalf("Execute: %v", err)
				}
				if n, err := f.Result(); err != nil || n != 2 {
					t.Errorf("Batch = %d, %v; want 2", n, err)
				}
				for i := range 2 {
					if args := <-sent; !reflect.DeepEqual(args, tt.sent) {
						t.Errorf("frame %d = %q; want %q", i, args, tt.sent)
					}
				}
			})
		}
	}
}
