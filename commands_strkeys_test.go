package respire

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// Family D (strings, bitmaps, HyperLogLog, keys): the commands without a
// typed Client method or Batch member, with where to go instead.
var _ = exclude(untypedCommands, map[string]string{
	"SUBSTR":     "the name GETRANGE had before Redis 2.0, same arguments and reply: use Client.GetRange",
	"PFDEBUG":    "a debugging command for HyperLogLog internals (admin, dangerous): use Client.Do",
	"PFSELFTEST": "a self-test of the server's HyperLogLog code (admin): use Client.Do",
	"MIGRATE":    "moves keys to another server, an operator tool (ServerAdmin) whose keys and target are not this client's topology: use Client.Do",
	"WAIT":       "counts the replicas that acknowledged the writes of the connection it runs on, and the client would run it on a dedicated connection that sent none (it would return at once): use Conn.Wait inside Client.Dedicated, after the writes on that Conn",
	"WAITAOF":    "counts the fsyncs of the writes of the connection it runs on, and the client would run it on a dedicated connection that sent none: use Conn.WaitAOF inside Client.Dedicated, after the writes on that Conn",
})

var _ = exclude(unbatchedCommands, map[string]string{
	"MGET": "Client.MGet returns values and found flags, two results a Future cannot hold; on a Cluster client it is split per slot, a batch member never is: queue Batch.Do(catalog.String.MGET(), keys...) and read Reply.Slice",
	"KEYS": "on a Cluster client Client.Keys runs on every primary and joins their keys, and a batch member runs on one node: queue Batch.Do(catalog.Generic.KEYS(), pattern) for one node's keys",
})

// call1 adapts a one-result call for a zksCase.
func call1[T any](v T, err error) (any, error) { return v, err }

// i64 returns a pointer to n, for BitField results.
func i64(n int64) *int64 { return &n }

func TestStrKeysBitmaps(t *testing.T) {
	u8 := func(off int64) BitField { return BitField{Bits: 8, Offset: off} }
	runZKS(t, []zksCase{
		{name: "BitCountWhole", setup: set("foobar"), want: int64(26),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.BitCount(ctx, k, nil)) }},
		{name: "BitCountBytes", setup: set("foobar"), want: int64(6),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitCount(ctx, k, &BitRange{Start: 1, End: 1}))
			}},
		{name: "BitCountBits", setup: set("foobar"), want: int64(17),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitCount(ctx, k, &BitRange{Start: 5, End: 30, Unit: BitUnitBit}))
			}},
		{name: "BitCountMissing", want: int64(0),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.BitCount(ctx, k, nil)) }},
		{name: "BitPosSet", setup: set("\x00\xff\xf0"), want: int64(8),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, true, BitPosOptions{}))
			}},
		{name: "BitPosFromByte", setup: set("\x00\xff\xf0"), want: int64(16),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, true, BitPosOptions{Start: 2}))
			}},
		{name: "BitPosClearPastEnd", setup: set("\xff\xff"), want: int64(16),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, false, BitPosOptions{}))
			}},
		{name: "BitPosClearWithEnd", setup: set("\xff\xff"), want: int64(-1),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, false, BitPosOptions{End: -1, HasEnd: true}))
			}},
		{name: "BitPosBits", setup: set("\x00\xff\xf0"), want: int64(7),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, false, BitPosOptions{Start: 7, End: 15, HasEnd: true, Unit: BitUnitBit}))
			}},
		{name: "SetBitGetBit", want: []any{false, true, true, false, "\x01"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				was, err := c.SetBit(ctx, k, 7, true)
				if err != nil {
					return nil, err
				}
				again, err := c.SetBit(ctx, k, 7, true)
				if err != nil {
					return nil, err
				}
				on, err := c.GetBit(ctx, k, 7)
				if err != nil {
					return nil, err
				}
				off, err := c.GetBit(ctx, k, 100)
				if err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				return []any{was, again, on, off, v}, err
			}},
		{name: "BitOpAndOrXorNot", setup: set("\x0f", ":b", "\x3c"), want: []any{"\x0c", "\x3f", "\x33", "\xf0"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				var out []any
				for i, op := range []BitOperation{BitAnd, BitOr, BitXor} {
					dst := k + ":d" + strconv.Itoa(i)
					if _, err := c.BitOp(ctx, op, dst, k, k+":b"); err != nil {
						return nil, err
					}
					v, err := c.Get(ctx, dst)
					if err != nil {
						return nil, err
					}
					out = append(out, v)
				}
				if n, err := c.BitOp(ctx, BitNot, k+":n", k); err != nil || n != 1 {
					return nil, fmt.Errorf("BitOp NOT = %d, %v", n, err)
				}
				v, err := c.Get(ctx, k+":n")
				return append(out, v), err
			}},
		{name: "BitField", want: []*int64{i64(0), i64(100), i64(110), nil, i64(110), i64(127)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				i8 := BitField{Signed: true, Bits: 8, Offset: 1, Scaled: true}
				return call1(c.BitField(ctx, k,
					BitFieldSet(i8, 100), BitFieldGet(i8), BitFieldIncrBy(i8, 10),
					BitFieldOverflowMode(OverflowFail), BitFieldIncrBy(i8, 100), BitFieldGet(i8),
					BitFieldOverflowMode(OverflowSat), BitFieldIncrBy(i8, 100)))
			}},
		{name: "BitFieldRO", setup: set("AB"), want: []int64{65, 66, 1},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitFieldRO(ctx, k, u8(0), u8(8), BitField{Bits: 4, Offset: 4, Scaled: false}))
			}},
		{name: "BitFieldROMissing", want: []int64{0},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.BitFieldRO(ctx, k, u8(0))) }},
	})
}

func TestStrKeysStrings(t *testing.T) {
	lcs := set("ohmytext", ":2", "mynewtext")
	runZKS(t, []zksCase{
		{name: "GetSet", setup: set("old"), want: []any{"old", "new"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				old, err := c.GetSet(ctx, k, "new")
				return after(old, err, func() (any, error) { return c.Get(ctx, k) })
			}},
		{name: "GetSetMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetSet(ctx, k, "v")) }},
		{name: "LCS", setup: lcs, want: "mytext",
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCS(ctx, k, k+":2")) }},
		{name: "LCSLen", setup: lcs, want: int64(6),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSLen(ctx, k, k+":2")) }},
		{name: "LCSIdx", setup: lcs, want: LCSResult{Len: 6, Matches: []LCSMatch{
			{Key1: LCSRange{4, 7}, Key2: LCSRange{5, 8}, Len: 4},
			{Key1: LCSRange{2, 3}, Key2: LCSRange{0, 1}, Len: 2},
		}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSIdx(ctx, k, k+":2", 0)) }},
		{name: "LCSIdxMinMatchLen", setup: lcs, want: LCSResult{Len: 6, Matches: []LCSMatch{
			{Key1: LCSRange{4, 7}, Key2: LCSRange{5, 8}, Len: 4},
		}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSIdx(ctx, k, k+":2", 4)) }},
		{name: "LCSIdxMissing", want: LCSResult{Matches: []LCSMatch{}},
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSIdx(ctx, k, k+":2", 0)) }},
		{name: "SetEx", want: []any{"v", 100 * time.Second},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if err := c.SetEx(ctx, k, "v", 100*time.Second+time.Millisecond); err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				if err != nil {
					return nil, err
				}
				ttl, err := c.TTL(ctx, k)
				return []any{v, ttl.Round(100 * time.Second)}, err
			}},
		{name: "PSetEx", want: []any{"v", true},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ttl := 100*time.Second + 300*time.Millisecond
				if err := c.PSetEx(ctx, k, "v", ttl); err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				if err != nil {
					return nil, err
				}
				left, err := c.PTTL(ctx, k)
				return []any{v, left > 100*time.Second && left <= ttl}, err
			}},
	})
}

func TestStrKeysHyperLogLog(t *testing.T) {
	runZKS(t, []zksCase{
		{name: "PFAddPFCount", want: []any{true, false, int64(3)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				first, err := c.PFAdd(ctx, k, "a", "b", "c")
				if err != nil {
					return nil, err
				}
				again, err := c.PFAdd(ctx, k, "a", "b")
				if err != nil {
					return nil, err
				}
				n, err := c.PFCount(ctx, k)
				return []any{first, again, n}, err
			}},
		{name: "PFAddNoElementsCreates", want: []any{true, int64(1)},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				ok, err := c.PFAdd(ctx, k)
				return after(ok, err, func() (any, error) { return c.Exists(ctx, k) })
			}},
		{name: "PFMerge", want: int64(4),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if _, err := c.PFAdd(ctx, k+":a", "x", "y"); err != nil {
					return nil, err
				}
				if _, err := c.PFAdd(ctx, k+":b", "y", "z", "w"); err != nil {
					return nil, err
				}
				if err := c.PFMerge(ctx, k, k+":a", k+":b"); err != nil {
					return nil, err
				}
				return c.PFCount(ctx, k)
			}},
		{name: "PFCountUnion", want: int64(3),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				if _, err := c.PFAdd(ctx, k, "x", "y"); err != nil {
					return nil, err
				}
				if _, err := c.PFAdd(ctx, k+":b", "y", "z"); err != nil {
					return nil, err
				}
				return c.PFCount(ctx, k, k+":b")
			}},
		{name: "PFCountMissing", want: int64(0),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PFCount(ctx, k)) }},
		{name: "PFAddWrongType", setup: set("not an hll"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PFAdd(ctx, k, "x")) }},
	})
}

// rpush returns a setup that pushes values onto the row's key.
func rpush(values ...string) func(ctx context.Context, c *Client, k string) error {
	return func(ctx context.Context, c *Client, k string) error {
		_, err := c.RPush(ctx, k, values...)
		return err
	}
}

func TestStrKeysKeys(t *testing.T) {
	// weights: the list holds 1 2 3; k:w:N is N's weight, k:n:N its name.
	weights := func(ctx context.Context, c *Client, k string) error {
		if err := rpush("3", "1", "2")(ctx, c, k); err != nil {
			return err
		}
		return c.MSet(ctx, k+":w:1", "30", k+":w:2", "10", k+":w:3", "20", k+":n:1", "one", k+":n:3", "three")
	}
	dumped := func(ctx context.Context, c *Client, k string) (string, error) {
		if err := c.Set(ctx, k, "payload"); err != nil {
			return "", err
		}
		return c.Dump(ctx, k)
	}
	runZKS(t, []zksCase{
		{name: "DumpRestore", want: []any{"payload", TTLPersistent},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				data, err := dumped(ctx, c, k)
				if err != nil {
					return nil, err
				}
				if err := c.Restore(ctx, k+":2", data, RestoreOptions{}); err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k+":2")
				if err != nil {
					return nil, err
				}
				ttl, err := c.PTTL(ctx, k+":2")
				return []any{v, ttl}, err
			}},
		{name: "DumpMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Dump(ctx, k)) }},
		{name: "RestoreExistingIsBusy", serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				data, err := dumped(ctx, c, k)
				if err != nil {
					return nil, err
				}
				return nil, c.Restore(ctx, k, data, RestoreOptions{})
			}},
		{name: "RestoreReplaceTTL", want: []any{"payload", true},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				data, err := dumped(ctx, c, k)
				if err != nil {
					return nil, err
				}
				if err := c.Restore(ctx, k, data, RestoreOptions{Replace: true, TTL: time.Hour, IdleTime: time.Minute}); err != nil {
					return nil, err
				}
				v, err := c.Get(ctx, k)
				if err != nil {
					return nil, err
				}
				ttl, err := c.PTTL(ctx, k)
				return []any{v, ttl > 59*time.Minute && ttl <= time.Hour}, err
			}},
		{name: "RestoreAbsTTL", want: farFuture.UnixMilli(),
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				data, err := dumped(ctx, c, k)
				if err != nil {
					return nil, err
				}
				if err := c.Restore(ctx, k+":2", data, RestoreOptions{ExpireAt: farFuture}); err != nil {
					return nil, err
				}
				at, err := c.PExpireTime(ctx, k+":2")
				return at.UnixMilli(), err
			}},
		{name: "RestoreBadPayload", serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return nil, c.Restore(ctx, k, "garbage", RestoreOptions{})
			}},
		{name: "Keys", setup: set("v", ":a", "1", ":b", "2", ":ab", "3"), want: []string{":a", ":ab"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				keys, err := c.Keys(ctx, escapeGlob(k)+":a*")
				for i := range keys {
					keys[i] = strings.TrimPrefix(keys[i], k)
				}
				return sorted(keys, err)
			}},
		{name: "KeysNone", want: []string{},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Keys(ctx, escapeGlob(k)+"*"))
			}},
		{name: "MoveMissing", want: false,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Move(ctx, k, 1)) }},
		{name: "MoveSameDB", setup: set("v"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Move(ctx, k, 0)) }},
		{name: "ObjectFreqNeedsLFU", setup: set("v"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectFreq(ctx, k)) }},
		{name: "ObjectFreqMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectFreq(ctx, k)) }},
		{name: "ObjectIdleTime", setup: set("v"), want: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				idle, err := c.ObjectIdleTime(ctx, k)
				return idle >= 0 && idle < time.Minute && idle%time.Second == 0, err
			}},
		{name: "ObjectIdleTimeMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectIdleTime(ctx, k)) }},
		{name: "ObjectRefCount", setup: set("some text"), want: int64(1),
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectRefCount(ctx, k)) }},
		{name: "ObjectRefCountMissing", err: ErrNil,
			call: func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectRefCount(ctx, k)) }},
		{name: "RandomKey", setup: set("v"), want: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				got, err := c.RandomKey(ctx)
				return got != "", err
			}},
		{name: "Sort", setup: rpush("3", "10", "2"), want: []string{"2", "3", "10"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{}))
			}},
		{name: "SortAlphaDescLimit", setup: rpush("3", "10", "2"), want: []string{"2", "10"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{Alpha: true, Desc: true, Offset: 1, Count: 2}))
			}},
		{name: "SortOffsetOnly", setup: rpush("3", "1", "2"), want: []string{"2", "3"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{Offset: 1}))
			}},
		{name: "SortByGet", setup: weights, want: []string{"2", "", "3", "three", "1", "one"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{By: k + ":w:*", Get: []string{"#", k + ":n:*"}}))
			}},
		{name: "SortMissing", want: []string{},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{}))
			}},
		{name: "SortNotNumbers", setup: rpush("a", "b"), serverErr: true,
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{}))
			}},
		{name: "SortRO", setup: rpush("3", "1", "2"), want: []string{"3", "2", "1"},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.SortRO(ctx, k, SortOptions{Desc: true}))
			}},
		{name: "SortStore", setup: rpush("3", "1", "2"), want: []any{int64(3), []string{"1", "2", "3"}},
			call: func(ctx context.Context, c *Client, k string) (any, error) {
				n, err := c.SortStore(ctx, k, k+":dst", SortOptions{})
				return after(n, err, func() (any, error) { return c.LRange(ctx, k+":dst", 0, -1) })
			}},
	})
}

// TestStrKeysMove moves a key to database 1 and back.
func TestStrKeysMove(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "k")
		other := newClient(t, Options{DB: 1, Protocol: 2})
		t.Cleanup(func() { _, _ = other.Del(testCtx(t), k) })
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		moved, err := c.Move(ctx, k, 1)
		if err != nil || !moved {
			t.Fatalf("Move = %v, %v; want true", moved, err)
		}
		if n, err := c.Exists(ctx, k); err != nil || n != 0 {
			t.Fatalf("Exists in db 0 = %d, %v; want 0", n, err)
		}
		if v, err := other.Get(ctx, k); err != nil || v != "v" {
			t.Fatalf("Get in db 1 = %q, %v; want v", v, err)
		}
		back, err := other.Move(ctx, k, 0)
		if err != nil || !back {
			t.Fatalf("Move back = %v, %v; want true", back, err)
		}
	})
}

// TestStrKeysConnWait runs WAIT and WAITAOF on a dedicated connection
// after a write on it. The standalone server has no replicas: WAIT 0
// returns at once with 0; WAITAOF needs Redis 7.2 (older servers answer
// with an unknown-command error). WAIT changes no connection state: the
// connection goes back to the pool without a RESET.
func TestStrKeysConnWait(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	forEachProtocol(t, Options{Endpoints: []string{proxy.Addr()}}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "k")
		resets := proxy.Forwarded("RESET")
		defer func() {
			if n := proxy.Forwarded("RESET") - resets; n != 0 {
				t.Errorf("%d RESETs after a callback that wrote and waited, want 0", n)
			}
		}()
		err := c.Dedicated(ctx, func(conn *Conn) error {
			if _, err := conn.Do(ctx, NewCommand("SET"), k, "v"); err != nil {
				return err
			}
			n, err := conn.Wait(ctx, 0, 0)
			if err != nil || n != 0 {
				return fmt.Errorf("Wait = %d, %v; want 0 replicas", n, err)
			}
			n, err = conn.Wait(ctx, 1, 20*time.Millisecond)
			if err != nil || n != 0 {
				return fmt.Errorf("Wait for 1 = %d, %v; want 0 replicas after the timeout", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestStrKeysBadInput(t *testing.T) {
	e := func(f func(ctx context.Context, c *Client) (any, error)) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error { _, err := f(ctx, c); return err }
	}
	bad := BitField{Bits: 8, Offset: -1}
	runBadInput(t, []badInput{
		{"BitCountUnit", "Unit", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitCount(ctx, "k", &BitRange{Unit: 9}))
		})},
		{"BitPosUnitWithoutEnd", "HasEnd", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitPos(ctx, "k", true, BitPosOptions{Unit: BitUnitBit}))
		})},
		{"BitPosUndefinedUnit", "Unit", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitPos(ctx, "k", true, BitPosOptions{HasEnd: true, Unit: 7}))
		})},
		{"GetBitNegative", "offset", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.GetBit(ctx, "k", -1)) })},
		{"SetBitTooFar", "offset", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.SetBit(ctx, "k", 1<<32, true)) })},
		{"BitOpNoKeys", "keys", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitOp(ctx, BitAnd, "d")) })},
		{"BitOpNotTwoKeys", "NOT", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitOp(ctx, BitNot, "d", "a", "b")) })},
		{"BitOpUndefined", "op", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitOp(ctx, 9, "d", "a")) })},
		{"BitFieldNoOps", "ops", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitField(ctx, "k")) })},
		{"BitFieldZeroOp", "width", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitField(ctx, "k", BitFieldOp{})) })},
		{"BitFieldU64", "width", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitField(ctx, "k", BitFieldGet(BitField{Bits: 64})))
		})},
		{"BitFieldNegativeOffset", "offset", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitField(ctx, "k", BitFieldSet(bad, 1)))
		})},
		{"BitFieldOverflowMode", "overflow", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitField(ctx, "k", BitFieldOverflowMode(9), BitFieldGet(BitField{Bits: 8})))
		})},
		{"BitFieldRONoFields", "fields", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.BitFieldRO(ctx, "k")) })},
		{"BitFieldROI65", "width", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.BitFieldRO(ctx, "k", BitField{Signed: true, Bits: 65}))
		})},
		{"LCSIdxNegative", "minMatchLen", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.LCSIdx(ctx, "a", "b", -1)) })},
		{"SetExSubSecond", "1s", func(ctx context.Context, c *Client) error { return c.SetEx(ctx, "k", "v", 999*time.Millisecond) }},
		{"PSetExSubMillisecond", "1ms", func(ctx context.Context, c *Client) error { return c.PSetEx(ctx, "k", "v", time.Microsecond) }},
		{"MSetExNoPairs", "pairs", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, MSetExOptions{})) })},
		{"MSetExOddPairs", "pairs", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, MSetExOptions{}, "k")) })},
		{"MSetExTTLAndKeepTTL", "mutually exclusive", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.MSetEx(ctx, MSetExOptions{TTL: time.Second, KeepTTL: true}, "k", "v"))
		})},
		{"MSetExTTLAndExpireAt", "mutually exclusive", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.MSetEx(ctx, MSetExOptions{TTL: time.Second, ExpireAt: farFuture}, "k", "v"))
		})},
		{"MSetExSubMillisecond", "TTL", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.MSetEx(ctx, MSetExOptions{TTL: time.Microsecond}, "k", "v"))
		})},
		{"MSetExBeforeEpoch", "ExpireAt", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.MSetEx(ctx, MSetExOptions{ExpireAt: time.Unix(-1, 0)}, "k", "v"))
		})},
		{"MSetExCondition", "condition", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.MSetEx(ctx, MSetExOptions{Condition: 7}, "k", "v"))
		})},
		{"DelExValueWithoutCondition", "Condition", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.DelEx(ctx, "k", DelExOptions{Value: "v"}))
		})},
		{"DelExUndefined", "Condition", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.DelEx(ctx, "k", DelExOptions{Condition: 9, Value: "v"}))
		})},
		{"DelExEmptyDigest", "digest", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.DelEx(ctx, "k", DelExOptions{Condition: DelExIfDigestEqual}))
		})},
		{"RestoreTTLAndExpireAt", "mutually exclusive", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{TTL: time.Second, ExpireAt: farFuture})
		}},
		{"RestoreSubMillisecond", "TTL", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{TTL: time.Microsecond})
		}},
		{"RestoreBeforeEpoch", "ExpireAt", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{ExpireAt: time.Unix(-1, 0)})
		}},
		{"RestoreNegativeIdle", "IdleTime", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{IdleTime: -time.Second})
		}},
		{"RestoreFreqRange", "Freq", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{Freq: 256, HasFreq: true})
		}},
		{"RestoreIdleAndFreq", "mutually exclusive", func(ctx context.Context, c *Client) error {
			return c.Restore(ctx, "k", "x", RestoreOptions{IdleTime: time.Minute, Freq: 1, HasFreq: true})
		}},
		{"MoveNegativeDB", "db", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.Move(ctx, "k", -1)) })},
		{"SortNegativeOffset", "Offset", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.Sort(ctx, "k", SortOptions{Offset: -1}))
		})},
		{"SortRONegativeCount", "Count", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.SortRO(ctx, "k", SortOptions{Count: -2}))
		})},
		{"SortStoreEmptyDest", "dest", e(func(ctx context.Context, c *Client) (any, error) {
			return call1(c.SortStore(ctx, "k", "", SortOptions{}))
		})},
		{"PFCountNoKeys", "keys", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.PFCount(ctx)) })},
		{"DelNoKeys", "keys", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.Del(ctx)) })},
		{"ExistsNoKeys", "keys", e(func(ctx context.Context, c *Client) (any, error) { return call1(c.Exists(ctx)) })},
	})
}

// TestStrKeysConnWaitBadInput: invalid WAIT and WAITAOF arguments fail
// before anything is sent (the dedicated connection's handshake aside).
func TestStrKeysConnWaitBadInput(t *testing.T) {
	var mu sync.Mutex
	sent := 0
	p := realProxy(t, standaloneAddr(t))
	for _, name := range []string{"WAIT", "WAITAOF"} {
		p.MustAddRule(t, respiretest.Rule{Command: name, Times: respiretest.Always, Action: respiretest.Pass,
			OnReceive: func([]string) { mu.Lock(); sent++; mu.Unlock() }})
	}
	c := newClient(t, Options{Endpoints: []string{p.Addr()}})
	conn := func(f func(ctx context.Context, conn *Conn) error) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			return c.Dedicated(ctx, func(conn *Conn) error { return f(ctx, conn) })
		}
	}
	for _, tt := range []struct {
		name, field string
		do          func(ctx context.Context) error
	}{
		{"WaitNegativeReplicas", "numReplicas", conn(func(ctx context.Context, conn *Conn) error {
			_, err := conn.Wait(ctx, -1, time.Second)
			return err
		})},
		{"WaitSubMillisecond", "millisecond", conn(func(ctx context.Context, conn *Conn) error {
			_, err := conn.Wait(ctx, 1, time.Microsecond)
			return err
		})},
		{"WaitAOFNumLocal", "numLocal", conn(func(ctx context.Context, conn *Conn) error {
			_, _, err := conn.WaitAOF(ctx, 2, 0, time.Second)
			return err
		})},
		{"WaitAOFNegativeTimeout", "timeout", conn(func(ctx context.Context, conn *Conn) error {
			_, _, err := conn.WaitAOF(ctx, 1, 0, -time.Second)
			return err
		})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(testCtx(t))
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error = %v; want ErrInvalidArgument naming %q", err, tt.field)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if sent != 0 {
		t.Errorf("the server received %d WAIT or WAITAOF frames; want 0", sent)
	}
}

// TestStrKeysScriptedReplies checks the encoding and reply conversion of
// the commands newer than the test server (MSETEX, DELEX and DIGEST of
// Redis 8.4, WAITAOF of 7.2): a proxy answers them with each protocol's
// reply shapes and records what the client sent, from the Client method
// and from the Batch member alike.
func TestStrKeysScriptedReplies(t *testing.T) {
	type row struct {
		name    string
		command string
		raw     string // the scripted reply
		args    []string
		call    func(ctx context.Context, c *Client) (any, error)
		queue   func(b *Batch) func() (any, error) // nil: no Batch member
		want    any
		err     error
	}
	digest := "b6acb9d84a38ff74"
	nx := MSetExOptions{Condition: SetIfNotExists, TTL: 10 * time.Second}
	xx := MSetExOptions{Condition: SetIfExists, KeepTTL: true}
	at := MSetExOptions{ExpireAt: farFuture}
	px := MSetExOptions{TTL: 1500 * time.Millisecond}
	ifEq := DelExOptions{Condition: DelExIfEqual, Value: "v"}
	ifDne := DelExOptions{Condition: DelExIfDigestNotEqual, Value: digest}
	rows := func(proto int) []row {
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		rs := []row{
			{name: "MSetExNXEX", command: "MSETEX", raw: ":1\r\n", want: true,
				args:  []string{"MSETEX", "2", "a", "1", "b", "2", "NX", "EX", "10"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, nx, "a", "1", "b", "2")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.MSetEx(nx, "a", "1", "b", "2")) }},
			{name: "MSetExXXKeepTTLNotSet", command: "MSETEX", raw: ":0\r\n", want: false,
				args:  []string{"MSETEX", "1", "a", "1", "XX", "KEEPTTL"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, xx, "a", "1")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.MSetEx(xx, "a", "1")) }},
			{name: "MSetExPXAT", command: "MSETEX", raw: ":1\r\n", want: true,
				args:  []string{"MSETEX", "1", "a", "1", "PXAT", "4102444800123"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, at, "a", "1")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.MSetEx(at, "a", "1")) }},
			{name: "MSetExPX", command: "MSETEX", raw: ":1\r\n", want: true,
				args:  []string{"MSETEX", "1", "a", "1", "PX", "1500"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.MSetEx(ctx, px, "a", "1")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.MSetEx(px, "a", "1")) }},
			{name: "DelEx", command: "DELEX", raw: ":1\r\n", want: true, args: []string{"DELEX", "k"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.DelEx(ctx, "k", DelExOptions{})) },
				queue: func(b *Batch) func() (any, error) { return fut(b.DelEx("k", DelExOptions{})) }},
			{name: "DelExIfEqNotDeleted", command: "DELEX", raw: ":0\r\n", want: false, args: []string{"DELEX", "k", "IFEQ", "v"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.DelEx(ctx, "k", ifEq)) },
				queue: func(b *Batch) func() (any, error) { return fut(b.DelEx("k", ifEq)) }},
			{name: "DelExIfDigestNotEqual", command: "DELEX", raw: ":1\r\n", want: true, args: []string{"DELEX", "k", "IFDNE", digest},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.DelEx(ctx, "k", ifDne)) },
				queue: func(b *Batch) func() (any, error) { return fut(b.DelEx("k", ifDne)) }},
			{name: "DelExWrongType", command: "DELEX", raw: "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
				err: &ServerError{}, args: []string{"DELEX", "k", "IFEQ", "v"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.DelEx(ctx, "k", ifEq)) },
				queue: func(b *Batch) func() (any, error) { return fut(b.DelEx("k", ifEq)) }},
			{name: "Digest", command: "DIGEST", raw: "$16\r\n" + digest + "\r\n", want: digest, args: []string{"DIGEST", "k"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.Digest(ctx, "k")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.Digest("k")) }},
			{name: "DigestMissing", command: "DIGEST", raw: null, err: ErrNil, args: []string{"DIGEST", "k"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.Digest(ctx, "k")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.Digest("k")) }},
			// A reply with another count of results than the call asked
			// for is unexpected, not silently short (as HMGET, SMISMEMBER).
			{name: "GeoPosShort", command: "GEOPOS", raw: "*1\r\n" + null, err: ErrUnexpectedReply,
				args:  []string{"GEOPOS", "k", "a", "b"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.GeoPos(ctx, "k", "a", "b")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.GeoPos("k", "a", "b")) }},
			{name: "GeoHashLong", command: "GEOHASH", raw: "*2\r\n$1\r\nx\r\n$1\r\ny\r\n", err: ErrUnexpectedReply,
				args:  []string{"GEOHASH", "k", "a"},
				call:  func(ctx context.Context, c *Client) (any, error) { return call1(c.GeoHash(ctx, "k", "a")) },
				queue: func(b *Batch) func() (any, error) { return fut(b.GeoHash("k", "a")) }},
			{name: "BitFieldShort", command: "BITFIELD", raw: "*1\r\n:1\r\n", err: ErrUnexpectedReply,
				args: []string{"BITFIELD", "k", "OVERFLOW", "FAIL", "GET", "u8", "0", "INCRBY", "u8", "0", "1"},
				call: func(ctx context.Context, c *Client) (any, error) {
					return call1(c.BitField(ctx, "k", BitFieldOverflowMode(OverflowFail), BitFieldGet(BitField{Bits: 8}), BitFieldIncrBy(BitField{Bits: 8}, 1)))
				},
				queue: func(b *Batch) func() (any, error) {
					return fut(b.BitField("k", BitFieldOverflowMode(OverflowFail), BitFieldGet(BitField{Bits: 8}), BitFieldIncrBy(BitField{Bits: 8}, 1)))
				}},
			{name: "BitFieldROShort", command: "BITFIELD_RO", raw: "*0\r\n", err: ErrUnexpectedReply,
				args: []string{"BITFIELD_RO", "k", "GET", "u8", "0"},
				call: func(ctx context.Context, c *Client) (any, error) {
					return call1(c.BitFieldRO(ctx, "k", BitField{Bits: 8}))
				},
				queue: func(b *Batch) func() (any, error) { return fut(b.BitFieldRO("k", BitField{Bits: 8})) }},
			{name: "WaitAOF", command: "WAITAOF", raw: "*2\r\n:1\r\n:2\r\n", want: []int64{1, 2},
				args: []string{"WAITAOF", "1", "2", "150"},
				call: func(ctx context.Context, c *Client) (any, error) {
					var out []int64
					err := c.Dedicated(ctx, func(conn *Conn) error {
						local, replicas, err := conn.WaitAOF(ctx, 1, 2, 150*time.Millisecond)
						out = []int64{local, replicas}
						return err
					})
					return out, err
				}},
			{name: "WaitAOFWrongShape", command: "WAITAOF", raw: "*1\r\n:1\r\n", err: ErrUnexpectedReply,
				args: []string{"WAITAOF", "0", "1", "0"},
				call: func(ctx context.Context, c *Client) (any, error) {
					err := c.Dedicated(ctx, func(conn *Conn) error {
						_, _, err := conn.WaitAOF(ctx, 0, 1, 0)
						return err
					})
					return nil, err
				}},
		}
		return rs
	}
	check := func(t *testing.T, what string, got any, err error, r row) {
		t.Helper()
		var se *ServerError
		switch {
		case r.err == nil:
			if err != nil || !reflect.DeepEqual(got, r.want) {
				t.Errorf("%s = %#v, %v; want %#v", what, got, err, r.want)
			}
		case errors.As(r.err, &se):
			if !errors.As(err, &se) {
				t.Errorf("%s = %#v, %v; want a *ServerError", what, got, err)
			}
		case !errors.Is(err, r.err):
			t.Errorf("%s = %#v, %v; want error %v", what, got, err, r.err)
		}
	}
	for _, proto := range protocols {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			for _, r := range rows(proto) {
				t.Run(r.name, func(t *testing.T) {
					var mu sync.Mutex
					var sent [][]string
					p := realProxy(t, standaloneAddr(t))
					p.MustAddRule(t, respiretest.Rule{Command: r.command, Times: respiretest.Always,
						Action: respiretest.Reply([]byte(r.raw)),
						OnReceive: func(args []string) {
							mu.Lock()
							sent = append(sent, args)
							mu.Unlock()
						}})
					c := newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: proto})
					ctx := testCtx(t)
					got, err := r.call(ctx, c)
					check(t, "Client", got, err, r)
					want := [][]string{r.args}
					if r.queue != nil {
						b := c.NewBatch()
						read := r.queue(b)
						if err := b.Execute(ctx); err != nil {
							t.Fatalf("Execute: %v", err)
						}
						got, err := read()
						check(t, "Batch", got, err, r)
						want = append(want, r.args)
					}
					mu.Lock()
					defer mu.Unlock()
					if !reflect.DeepEqual(sent, want) {
						t.Errorf("sent %q; want %q", sent, want)
					}
				})
			}
		})
	}
}

// eqCase is one row of TestStrKeysBatchMatchesClient: queue adds the
// member under test to a batch, call runs the Client method; both on
// their own copy of the row's keys (k), seeded alike by setup.
type eqCase struct {
	name  string
	setup func(ctx context.Context, c *Client, k string) error
	queue func(b *Batch, k string) func() (any, error)
	call  func(ctx context.Context, c *Client, k string) (any, error)
}

// TestStrKeysBatchMatchesClient queues every Batch member of the family
// (strings, bitmaps, HyperLogLog, keys) in one batch and checks that each
// Future holds what the Client method returns on a copy of its keys,
// under RESP2 and RESP3. MSETEX, DELEX and DIGEST, which the test server
// lacks, are compared in TestStrKeysScriptedReplies.
func TestStrKeysBatchMatchesClient(t *testing.T) {
	i8 := BitField{Signed: true, Bits: 8, Offset: 0}
	sortW := func(ctx context.Context, c *Client, k string) error {
		if _, err := c.RPush(ctx, k, "3", "1", "2"); err != nil {
			return err
		}
		return c.MSet(ctx, k+":w:1", "3", k+":w:2", "2", k+":w:3", "1")
	}
	withTTL := func(ctx context.Context, c *Client, k string) error {
		_, err := c.SetWithOptions(ctx, k, "v", SetOptions{ExpireAt: farFuture})
		return err
	}
	hll := func(ctx context.Context, c *Client, k string) error {
		_, err := c.PFAdd(ctx, k, "a", "b")
		return err
	}
	isDump := func(v any, err error) (any, error) { s, _ := v.(string); return len(s) > 10, err }
	var payload string
	cases := []eqCase{
		{"Decr", set("5"), func(b *Batch, k string) func() (any, error) { return fut(b.Decr(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Decr(ctx, k)) }},
		{"Append", set("ab"), func(b *Batch, k string) func() (any, error) { return fut(b.Append(k, "cd")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Append(ctx, k, "cd")) }},
		{"StrLen", set("abc"), func(b *Batch, k string) func() (any, error) { return fut(b.StrLen(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.StrLen(ctx, k)) }},
		{"GetDel", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.GetDel(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetDel(ctx, k)) }},
		{"GetDelMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.GetDel(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetDel(ctx, k)) }},
		{"GetRange", set("Hello"), func(b *Batch, k string) func() (any, error) { return fut(b.GetRange(k, 1, -2)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetRange(ctx, k, 1, -2)) }},
		{"SetRange", set("Hello"), func(b *Batch, k string) func() (any, error) { return fut(b.SetRange(k, 1, "EL")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.SetRange(ctx, k, 1, "EL")) }},
		{"IncrByFloat", set("1.5"), func(b *Batch, k string) func() (any, error) { return fut(b.IncrByFloat(k, 0.25)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.IncrByFloat(ctx, k, 0.25)) }},
		{"DecrBy", set("5"), func(b *Batch, k string) func() (any, error) { return fut(b.DecrBy(k, 7)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.DecrBy(ctx, k, 7)) }},
		{"MSetNX", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.MSetNX(k+"{x}", "1")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.MSetNX(ctx, k+"{x}", "1")) }},
		{"SetNX", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.SetNX(k, "w")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.SetNX(ctx, k, "w")) }},
		{"GetEx", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.GetEx(k, GetExOptions{Persist: true})) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.GetEx(ctx, k, GetExOptions{Persist: true}))
			}},
		{"GetSet", set("old"), func(b *Batch, k string) func() (any, error) { return fut(b.GetSet(k, "new")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetSet(ctx, k, "new")) }},
		{"LCS", set("ohmytext", ":2", "mynewtext"), func(b *Batch, k string) func() (any, error) { return fut(b.LCS(k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCS(ctx, k, k+":2")) }},
		{"LCSLen", set("ohmytext", ":2", "mynewtext"), func(b *Batch, k string) func() (any, error) { return fut(b.LCSLen(k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSLen(ctx, k, k+":2")) }},
		{"LCSIdx", set("ohmytext", ":2", "mynewtext"), func(b *Batch, k string) func() (any, error) { return fut(b.LCSIdx(k, k+":2", 2)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.LCSIdx(ctx, k, k+":2", 2)) }},
		{"SetEx", nil, func(b *Batch, k string) func() (any, error) { return fut(b.SetEx(k, "v", time.Hour)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.SetEx(ctx, k, "v", time.Hour)
			}},
		{"PSetEx", nil, func(b *Batch, k string) func() (any, error) { return fut(b.PSetEx(k, "v", time.Hour)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.PSetEx(ctx, k, "v", time.Hour)
			}},
		{"Del", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Del(k, k+":none")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Del(ctx, k, k+":none")) }},
		{"Exists", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Exists(k, k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Exists(ctx, k, k)) }},
		{"Unlink", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Unlink(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Unlink(ctx, k)) }},
		{"Touch", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Touch(k, k+":none")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Touch(ctx, k, k+":none")) }},
		{"Expire", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Expire(k, time.Hour)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Expire(ctx, k, time.Hour)) }},
		{"PExpire", nil, func(b *Batch, k string) func() (any, error) { return fut(b.PExpire(k, time.Hour)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.PExpire(ctx, k, time.Hour))
			}},
		{"TTLPersistent", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.TTL(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.TTL(ctx, k)) }},
		{"PTTLMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.PTTL(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PTTL(ctx, k)) }},
		{"Type", sortW, func(b *Batch, k string) func() (any, error) { return fut(b.Type(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Type(ctx, k)) }},
		{"Rename", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Rename(k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.Rename(ctx, k, k+":2")
			}},
		{"RenameMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.Rename(k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.Rename(ctx, k, k+":2")
			}},
		{"RenameNX", set("v", ":2", "w"), func(b *Batch, k string) func() (any, error) { return fut(b.RenameNX(k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.RenameNX(ctx, k, k+":2")) }},
		{"Persist", withTTL, func(b *Batch, k string) func() (any, error) { return fut(b.Persist(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Persist(ctx, k)) }},
		{"ExpireAt", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.ExpireAt(k, farFuture)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.ExpireAt(ctx, k, farFuture))
			}},
		{"PExpireAt", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.PExpireAt(k, farFuture)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.PExpireAt(ctx, k, farFuture))
			}},
		{"ExpireTime", withTTL, func(b *Batch, k string) func() (any, error) { return fut(b.ExpireTime(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ExpireTime(ctx, k)) }},
		{"PExpireTime", withTTL, func(b *Batch, k string) func() (any, error) { return fut(b.PExpireTime(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PExpireTime(ctx, k)) }},
		{"PExpireTimeMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.PExpireTime(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PExpireTime(ctx, k)) }},
		{"Copy", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.Copy(k, k+":2", false)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Copy(ctx, k, k+":2", false))
			}},
		{"ObjectEncoding", set("123"), func(b *Batch, k string) func() (any, error) { return fut(b.ObjectEncoding(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectEncoding(ctx, k)) }},
		{"Dump", set("payload"),
			func(b *Batch, k string) func() (any, error) {
				r := fut(b.Dump(k))
				return func() (any, error) { return isDump(r()) }
			},
			func(ctx context.Context, c *Client, k string) (any, error) { return isDump(call1(c.Dump(ctx, k))) }},
		{"Restore", nil, func(b *Batch, k string) func() (any, error) {
			return fut(b.Restore(k, payload, RestoreOptions{TTL: time.Hour}))
		},
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.Restore(ctx, k, payload, RestoreOptions{TTL: time.Hour})
			}},
		{"MoveMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.Move(k, 1)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.Move(ctx, k, 1)) }},
		{"ObjectFreq", set("v"), func(b *Batch, k string) func() (any, error) { return fut(b.ObjectFreq(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectFreq(ctx, k)) }},
		{"ObjectIdleTimeMissing", nil, func(b *Batch, k string) func() (any, error) { return fut(b.ObjectIdleTime(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectIdleTime(ctx, k)) }},
		{"ObjectRefCount", set("some text"), func(b *Batch, k string) func() (any, error) { return fut(b.ObjectRefCount(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.ObjectRefCount(ctx, k)) }},
		{"RandomKey", set("v"),
			func(b *Batch, k string) func() (any, error) {
				r := fut(b.RandomKey())
				return func() (any, error) { v, err := r(); return v != "", err }
			},
			func(ctx context.Context, c *Client, k string) (any, error) {
				v, err := c.RandomKey(ctx)
				return v != "", err
			}},
		{"Sort", sortW, func(b *Batch, k string) func() (any, error) { return fut(b.Sort(k, SortOptions{By: k + ":w:*"})) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.Sort(ctx, k, SortOptions{By: k + ":w:*"}))
			}},
		{"SortRO", sortW, func(b *Batch, k string) func() (any, error) {
			return fut(b.SortRO(k, SortOptions{Desc: true, Count: 2}))
		},
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.SortRO(ctx, k, SortOptions{Desc: true, Count: 2}))
			}},
		{"SortStore", sortW, func(b *Batch, k string) func() (any, error) { return fut(b.SortStore(k, k+":d", SortOptions{})) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.SortStore(ctx, k, k+":d", SortOptions{}))
			}},
		{"BitCount", set("foobar"), func(b *Batch, k string) func() (any, error) { return fut(b.BitCount(k, &BitRange{Start: 1, End: -2})) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitCount(ctx, k, &BitRange{Start: 1, End: -2}))
			}},
		{"BitPos", set("\x00\x0f"), func(b *Batch, k string) func() (any, error) { return fut(b.BitPos(k, true, BitPosOptions{})) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitPos(ctx, k, true, BitPosOptions{}))
			}},
		{"GetBit", set("\x01"), func(b *Batch, k string) func() (any, error) { return fut(b.GetBit(k, 7)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.GetBit(ctx, k, 7)) }},
		{"SetBit", set("\x01"), func(b *Batch, k string) func() (any, error) { return fut(b.SetBit(k, 7, false)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.SetBit(ctx, k, 7, false)) }},
		{"BitOp", set("\x0f", ":2", "\xf1"), func(b *Batch, k string) func() (any, error) { return fut(b.BitOp(BitXor, k+":d", k, k+":2")) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitOp(ctx, BitXor, k+":d", k, k+":2"))
			}},
		{"BitField", nil,
			func(b *Batch, k string) func() (any, error) {
				return fut(b.BitField(k, BitFieldSet(i8, 120), BitFieldOverflowMode(OverflowFail), BitFieldIncrBy(i8, 10)))
			},
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitField(ctx, k, BitFieldSet(i8, 120), BitFieldOverflowMode(OverflowFail), BitFieldIncrBy(i8, 10)))
			}},
		{"BitFieldRO", set("AB"), func(b *Batch, k string) func() (any, error) {
			return fut(b.BitFieldRO(k, i8, BitField{Bits: 8, Offset: 8}))
		},
			func(ctx context.Context, c *Client, k string) (any, error) {
				return call1(c.BitFieldRO(ctx, k, i8, BitField{Bits: 8, Offset: 8}))
			}},
		{"PFAdd", hll, func(b *Batch, k string) func() (any, error) { return fut(b.PFAdd(k, "b", "c")) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PFAdd(ctx, k, "b", "c")) }},
		{"PFCount", hll, func(b *Batch, k string) func() (any, error) { return fut(b.PFCount(k)) },
			func(ctx context.Context, c *Client, k string) (any, error) { return call1(c.PFCount(ctx, k)) }},
		{"PFMerge", hll, func(b *Batch, k string) func() (any, error) { return fut(b.PFMerge(k+":d", k)) },
			func(ctx context.Context, c *Client, k string) (any, error) {
				return struct{}{}, c.PFMerge(ctx, k+":d", k)
			}},
	}
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		var err error
		if err = c.Set(ctx, key(t, "payload"), "restored"); err != nil {
			t.Fatal(err)
		}
		if payload, err = c.Dump(ctx, key(t, "payload")); err != nil {
			t.Fatal(err)
		}
		b := c.NewBatch()
		reads := make([]func() (any, error), len(cases))
		direct := make([]string, len(cases))
		for i, tt := range cases {
			ka, kb := key(t, tt.name, "a"), key(t, tt.name, "b")
			if tt.setup != nil {
				if err := tt.setup(ctx, c, ka); err != nil {
					t.Fatalf("%s: setup: %v", tt.name, err)
				}
				if err := tt.setup(ctx, c, kb); err != nil {
					t.Fatalf("%s: setup: %v", tt.name, err)
				}
			}
			reads[i], direct[i] = tt.queue(b, ka), kb
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		for i, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				got, gotErr := reads[i]()
				want, wantErr := tt.call(ctx, c, direct[i])
				switch {
				case (gotErr == nil) != (wantErr == nil):
					t.Errorf("Batch: %#v, %v; Client: %#v, %v", got, gotErr, want, wantErr)
				case gotErr != nil:
					if gotErr.Error() != wantErr.Error() {
						t.Errorf("Batch error %q; Client error %q", gotErr, wantErr)
					}
				case !reflect.DeepEqual(got, want):
					t.Errorf("Batch: %#v; Client: %#v", got, want)
				}
			})
		}
	})
}

// TestStrKeysRetryCategories pins the retry category each method's doc
// states to its spec: the catalog's, except typed SORT without STORE,
// refined to ReadOnly.
func TestStrKeysRetryCategories(t *testing.T) {
	tests := []struct {
		spec    *spec
		want    RetryCategory
		refined bool
	}{
		{specGETSET, WriteAccumulating, false},
		{specLCS, ReadOnly, false},
		{specSETEX, WriteAccumulating, false},
		{specPSETEX, WriteAccumulating, false},
		{specMSETEX, WriteAccumulating, false},
		{specDELEX, WriteAccumulating, false},
		{specDIGEST, ReadOnly, false},
		{specBITCOUNT, ReadOnly, false},
		{specBITPOS, ReadOnly, false},
		{specGETBIT, ReadOnly, false},
		{specSETBIT, WriteLastWins, false},
		{specBITOP, WriteAccumulating, false},
		{specBITFIELD, WriteAccumulating, false},
		{specBITFIELDRO, ReadOnly, false},
		{specPFADD, WriteChecked, false},
		{specPFCOUNT, ReadOnly, false},
		{specPFMERGE, WriteAccumulating, false},
		{specDUMP, ReadOnly, false},
		{specRESTORE, ServerAdmin, false},
		{specKEYS, ReadOnly, false},
		{specMOVE, WriteAccumulating, false},
		{specOBJECTFREQ, ReadOnly, false},
		{specOBJECTIDLETIME, ReadOnly, false},
		{specOBJECTREFCOUNT, ReadOnly, false},
		{specRANDOMKEY, ReadOnly, false},
		{specSORTRO, ReadOnly, false},
		{specSORT, ServerAdmin, false},
		{specSORTRead, ReadOnly, true},
		{specMSETNX, WriteChecked, false},
		{specSETRANGE, WriteLastWins, false},
		{specTOUCH, ReadOnly, false},
		{specRENAME, WriteAccumulating, false},
	}
	for _, tt := range tests {
		if got := tt.spec.cat; got != tt.want {
			t.Errorf("%s: category %v; want %v", tt.spec.name, got, tt.want)
		}
		if got := tt.spec.desc.Category(); (got != tt.spec.cat) != tt.refined {
			t.Errorf("%s: spec category %v, catalog's %v (refined: %v)", tt.spec.name, tt.spec.cat, got, tt.refined)
		}
	}
}
