package respire

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// Family E's hash and server commands left without a typed method or
// Batch member, with where to go instead. (The geo ones are in
// commands_geo_test.go.)
var _ = exclude(untypedCommands, map[string]string{
	"HMSET": "deprecated since 4.0: use HSet, which takes several field-value pairs",
})

var _ = exclude(unbatchedCommands, map[string]string{
	"HSCAN": "a cursor iteration: use Client.HScan or Client.HScanPages, which follow each page's cursor on the server that holds it; a Batch member would be one page, and only SCAN has a page member (Batch.Scan)",
})

// Hash field expiration is Redis 7.4 (HGETDEL, HGETEX, HSETEX 8.0): the
// real server here is older, so these tests script the server's replies
// at a proxy, in the RESP2 and the RESP3 shape, and check the words the
// client sent and what it made of the reply.

// hfeCase is one scripted command: call runs it with the Client method,
// queue with the Batch member, on key k. The proxy answers frames of
// command name on k with reply[0] under RESP2, reply[1] under RESP3 ("" for
// the same). words is what the client must send ("K" stands for k).
type hfeCase struct {
	name  string
	reply [2]string
	call  func(ctx context.Context, c *Client, k string) (any, error)
	queue func(b *Batch, k string) func() (any, error)
	words []string
	want  any
	// wantErr, when set, is the error the call must match.
	wantErr error
}

// res adapts a Future to a queue result.
func res[T any](f Future[T]) func() (any, error) {
	return func() (any, error) { return f.Result() }
}

const (
	null2 = "$-1\r\n"
	null3 = "_\r\n"
)

// ints is a RESP array of integers (the same in both protocols).
func ints(ns ...int64) string {
	out := "*" + strconv.Itoa(len(ns)) + "\r\n"
	for _, n := range ns {
		out += ":" + strconv.FormatInt(n, 10) + "\r\n"
	}
	return out
}

var (
	exAt   = time.Unix(1700000000, 0)
	pxAt   = time.UnixMilli(1700000000123)
	bothFV = FieldValues{Values: []string{"x", ""}, Found: []bool{true, false}}
)

var hfeCases = []hfeCase{
	{name: "HExpireNX", reply: [2]string{ints(1, 0, -2)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HExpire(ctx, k, time.Minute, HExpireNX, "a", "b", "c")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HExpire(k, time.Minute, HExpireNX, "a", "b", "c"))
		},
		words: []string{"HEXPIRE", "K", "60", "NX", "FIELDS", "3", "a", "b", "c"},
		want:  []HExpireCode{HExpireSet, HExpireNotSet, HExpireNoField}},
	{name: "HExpireZeroDeletes", reply: [2]string{ints(2)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HExpire(ctx, k, 0, HExpireAlways, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HExpire(k, 0, HExpireAlways, "a")) },
		words: []string{"HEXPIRE", "K", "0", "FIELDS", "1", "a"},
		want:  []HExpireCode{HExpireDeleted}},
	{name: "HPExpireXX", reply: [2]string{ints(1, 1)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HPExpire(ctx, k, 1500*time.Millisecond, HExpireXX, "a", "b")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HPExpire(k, 1500*time.Millisecond, HExpireXX, "a", "b"))
		},
		words: []string{"HPEXPIRE", "K", "1500", "XX", "FIELDS", "2", "a", "b"},
		want:  []HExpireCode{HExpireSet, HExpireSet}},
	{name: "HExpireAtGT", reply: [2]string{ints(0)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HExpireAt(ctx, k, exAt, HExpireGT, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HExpireAt(k, exAt, HExpireGT, "a")) },
		words: []string{"HEXPIREAT", "K", "1700000000", "GT", "FIELDS", "1", "a"},
		want:  []HExpireCode{HExpireNotSet}},
	{name: "HPExpireAtLT", reply: [2]string{ints(1)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HPExpireAt(ctx, k, pxAt, HExpireLT, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HPExpireAt(k, pxAt, HExpireLT, "a")) },
		words: []string{"HPEXPIREAT", "K", "1700000000123", "LT", "FIELDS", "1", "a"},
		want:  []HExpireCode{HExpireSet}},
	{name: "HTTL", reply: [2]string{ints(30, -1, -2)},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HTTL(ctx, k, "a", "b", "c") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HTTL(k, "a", "b", "c")) },
		words: []string{"HTTL", "K", "FIELDS", "3", "a", "b", "c"},
		want:  []time.Duration{30 * time.Second, TTLPersistent, TTLMissing}},
	{name: "HTTLNullReply", reply: [2]string{"*-1\r\n", null3},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HTTL(ctx, k, "a") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HTTL(k, "a")) },
		words: []string{"HTTL", "K", "FIELDS", "1", "a"},
		want:  []time.Duration(nil)},
	{name: "HPTTL", reply: [2]string{ints(1500, -2)},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HPTTL(ctx, k, "a", "b") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HPTTL(k, "a", "b")) },
		words: []string{"HPTTL", "K", "FIELDS", "2", "a", "b"},
		want:  []time.Duration{1500 * time.Millisecond, TTLMissing}},
	{name: "HExpireTime", reply: [2]string{ints(1700000000, -1, -2)},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HExpireTime(ctx, k, "a", "b", "c")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HExpireTime(k, "a", "b", "c")) },
		words: []string{"HEXPIRETIME", "K", "FIELDS", "3", "a", "b", "c"},
		want:  []int64{1700000000, HExpireTimeNone, HExpireTimeNoField}},
	{name: "HPExpireTime", reply: [2]string{ints(1700000000123)},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HPExpireTime(ctx, k, "a") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HPExpireTime(k, "a")) },
		words: []string{"HPEXPIRETIME", "K", "FIELDS", "1", "a"},
		want:  []int64{1700000000123}},
	{name: "HPersist", reply: [2]string{ints(1, -1, -2)},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HPersist(ctx, k, "a", "b", "c") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HPersist(k, "a", "b", "c")) },
		words: []string{"HPERSIST", "K", "FIELDS", "3", "a", "b", "c"},
		want:  []HPersistCode{HPersistRemoved, HPersistNoExpiry, HPersistNoField}},
	{name: "HGetDel", reply: [2]string{"*2\r\n$1\r\nx\r\n" + null2, "*2\r\n$1\r\nx\r\n" + null3},
		call:  func(ctx context.Context, c *Client, k string) (any, error) { return c.HGetDel(ctx, k, "a", "b") },
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HGetDel(k, "a", "b")) },
		words: []string{"HGETDEL", "K", "FIELDS", "2", "a", "b"},
		want:  bothFV},
	{name: "HGetExNoOption", reply: [2]string{"*1\r\n" + null2, "*1\r\n" + null3},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{}, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HGetEx(k, HGetExOptions{}, "a")) },
		words: []string{"HGETEX", "K", "FIELDS", "1", "a"},
		want:  FieldValues{Values: []string{""}, Found: []bool{false}}},
	{name: "HGetExEX", reply: [2]string{"*2\r\n$1\r\nx\r\n" + null2, "*2\r\n$1\r\nx\r\n" + null3},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{TTL: 10 * time.Second}, "a", "b")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HGetEx(k, HGetExOptions{TTL: 10 * time.Second}, "a", "b"))
		},
		words: []string{"HGETEX", "K", "EX", "10", "FIELDS", "2", "a", "b"},
		want:  bothFV},
	{name: "HGetExPX", reply: [2]string{"*1\r\n$1\r\nx\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{TTL: 1500 * time.Millisecond}, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HGetEx(k, HGetExOptions{TTL: 1500 * time.Millisecond}, "a"))
		},
		words: []string{"HGETEX", "K", "PX", "1500", "FIELDS", "1", "a"},
		want:  FieldValues{Values: []string{"x"}, Found: []bool{true}}},
	{name: "HGetExEXAT", reply: [2]string{"*1\r\n$1\r\nx\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{ExpireAt: exAt}, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HGetEx(k, HGetExOptions{ExpireAt: exAt}, "a"))
		},
		words: []string{"HGETEX", "K", "EXAT", "1700000000", "FIELDS", "1", "a"},
		want:  FieldValues{Values: []string{"x"}, Found: []bool{true}}},
	{name: "HGetExPXAT", reply: [2]string{"*1\r\n$1\r\nx\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{ExpireAt: pxAt}, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HGetEx(k, HGetExOptions{ExpireAt: pxAt}, "a"))
		},
		words: []string{"HGETEX", "K", "PXAT", "1700000000123", "FIELDS", "1", "a"},
		want:  FieldValues{Values: []string{"x"}, Found: []bool{true}}},
	{name: "HGetExPersist", reply: [2]string{"*1\r\n$1\r\nx\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HGetEx(ctx, k, HGetExOptions{Persist: true}, "a")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HGetEx(k, HGetExOptions{Persist: true}, "a"))
		},
		words: []string{"HGETEX", "K", "PERSIST", "FIELDS", "1", "a"},
		want:  FieldValues{Values: []string{"x"}, Found: []bool{true}}},
	{name: "HSetExFNXEX", reply: [2]string{":1\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HSetEx(ctx, k, HSetExOptions{Condition: SetIfNotExists, TTL: 10 * time.Second}, "a", "1", "b", "2")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HSetEx(k, HSetExOptions{Condition: SetIfNotExists, TTL: 10 * time.Second}, "a", "1", "b", "2"))
		},
		words: []string{"HSETEX", "K", "FNX", "EX", "10", "FIELDS", "2", "a", "1", "b", "2"},
		want:  true},
	{name: "HSetExFXXKeepTTL", reply: [2]string{":0\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HSetEx(ctx, k, HSetExOptions{Condition: SetIfExists, KeepTTL: true}, "a", "1")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HSetEx(k, HSetExOptions{Condition: SetIfExists, KeepTTL: true}, "a", "1"))
		},
		words: []string{"HSETEX", "K", "FXX", "KEEPTTL", "FIELDS", "1", "a", "1"},
		want:  false},
	{name: "HSetExPXAT", reply: [2]string{":1\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HSetEx(ctx, k, HSetExOptions{ExpireAt: pxAt}, "a", "1")
		},
		queue: func(b *Batch, k string) func() (any, error) {
			return res(b.HSetEx(k, HSetExOptions{ExpireAt: pxAt}, "a", "1"))
		},
		words: []string{"HSETEX", "K", "PXAT", "1700000000123", "FIELDS", "1", "a", "1"},
		want:  true},
	{name: "HSetExPlain", reply: [2]string{":1\r\n"},
		call: func(ctx context.Context, c *Client, k string) (any, error) {
			return c.HSetEx(ctx, k, HSetExOptions{}, "a", "1")
		},
		queue: func(b *Batch, k string) func() (any, error) { return res(b.HSetEx(k, HSetExOptions{}, "a", "1")) },
		words: []string{"HSETEX", "K", "FIELDS", "1", "a", "1"},
		want:  true},
	{name: "HTTLWrongType", reply: [2]string{"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		call:    func(ctx context.Context, c *Client, k string) (any, error) { return c.HTTL(ctx, k, "a") },
		queue:   func(b *Batch, k string) func() (any, error) { return res(b.HTTL(k, "a")) },
		words:   []string{"HTTL", "K", "FIELDS", "1", "a"},
		wantErr: &ServerError{Code: "WRONGTYPE", Command: "HTTL"}},
}

// scripted records the frames its proxy rules answer, by key.
type scripted struct {
	mu   sync.Mutex
	sent map[string][][]string
}

// script makes p answer every frame of command name on key k with reply.
func (s *scripted) script(t *testing.T, p *respiretest.Proxy, name, k, reply string) {
	p.MustAddRule(t, respiretest.Rule{
		Command: name, Arg: k, Times: respiretest.Always, Action: respiretest.Reply([]byte(reply)),
		OnReceive: func(args []string) {
			s.mu.Lock()
			s.sent[k] = append(s.sent[k], args)
			s.mu.Unlock()
		},
	})
}

func (s *scripted) frames(k string) [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[k]
}

// TestHashFieldExpiration runs every scripted case with the Client method
// and with the Batch member (all members in one batch), under RESP2 and
// RESP3: both send the words of the case and give its result.
func TestHashFieldExpiration(t *testing.T) {
	p := realProxy(t, standaloneAddr(t))
	s := &scripted{sent: map[string][][]string{}}
	forEachProtocol(t, Options{Endpoints: []string{p.Addr()}}, func(t *testing.T, c *Client) {
		resp3 := strings.HasSuffix(t.Name(), "RESP3")
		ctx := testCtx(t)
		b := c.NewBatch()
		results := make([]func() (any, error), len(hfeCases))
		keys := make([][2]string, len(hfeCases))
		for i, tt := range hfeCases {
			reply := tt.reply[0]
			if resp3 && tt.reply[1] != "" {
				reply = tt.reply[1]
			}
			keys[i] = [2]string{key(t, tt.name, "client"), key(t, tt.name, "batch")}
			for _, k := range keys[i] {
				s.script(t, p, tt.words[0], k, reply)
			}
			results[i] = tt.queue(b, keys[i][1])
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		for i, tt := range hfeCases {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.call(ctx, c, keys[i][0])
				checkResult(t, "Client", got, err, tt.want, tt.wantErr)
				got, err = results[i]()
				checkResult(t, "Batch", got, err, tt.want, tt.wantErr)
				for j, k := range keys[i] {
					words := slices.Clone(tt.words)
					words[1] = k
					if sent := s.frames(k); len(sent) != 1 || !reflect.DeepEqual(sent[0], words) {
						t.Errorf("%s sent %q; want once %q", []string{"Client", "Batch"}[j], sent, words)
					}
				}
			})
		}
	})
}

// checkResult compares a result with a case's want or wantErr.
func checkResult(t *testing.T, what string, got any, err error, want any, wantErr error) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Errorf("%s: error = %v; want %v", what, err, wantErr)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: error = %v", what, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v; want %#v", what, got, want)
	}
}

// hfeInvalid are the hash field expiration calls refused before any I/O.
var hfeInvalid = []hlsCase{
	{name: "HExpireNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpire(ctx, k("h"), time.Minute, HExpireAlways)
	}},
	{name: "HExpireNegative", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpire(ctx, k("h"), -time.Second, HExpireAlways, "a")
	}},
	{name: "HExpireBelowASecond", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpire(ctx, k("h"), 500*time.Millisecond, HExpireAlways, "a")
	}},
	{name: "HExpireUndefinedCondition", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpire(ctx, k("h"), time.Minute, 9, "a")
	}},
	{name: "HPExpireBelowAMillisecond", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPExpire(ctx, k("h"), time.Microsecond, HExpireAlways, "a")
	}},
	{name: "HExpireAtZero", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpireAt(ctx, k("h"), time.Time{}, HExpireAlways, "a")
	}},
	{name: "HExpireAtBeforeEpoch", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpireAt(ctx, k("h"), time.Unix(-5, 0), HExpireAlways, "a")
	}},
	{name: "HPExpireAtZero", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPExpireAt(ctx, k("h"), time.Time{}, HExpireNX, "a")
	}},
	{name: "HPExpireAtNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPExpireAt(ctx, k("h"), pxAt, HExpireNX)
	}},
	{name: "HTTLNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HTTL(ctx, k("h"))
	}},
	{name: "HPTTLNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPTTL(ctx, k("h"))
	}},
	{name: "HExpireTimeNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HExpireTime(ctx, k("h"))
	}},
	{name: "HPExpireTimeNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPExpireTime(ctx, k("h"))
	}},
	{name: "HPersistNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HPersist(ctx, k("h"))
	}},
	{name: "HGetDelNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetDel(ctx, k("h"))
	}},
	{name: "HGetExNoFields", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetEx(ctx, k("h"), HGetExOptions{})
	}},
	{name: "HGetExTTLAndPersist", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetEx(ctx, k("h"), HGetExOptions{TTL: time.Second, Persist: true}, "a")
	}},
	{name: "HGetExTTLAndExpireAt", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetEx(ctx, k("h"), HGetExOptions{TTL: time.Second, ExpireAt: exAt}, "a")
	}},
	{name: "HGetExTTLBelowAMillisecond", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetEx(ctx, k("h"), HGetExOptions{TTL: time.Microsecond}, "a")
	}},
	{name: "HGetExExpireAtBeforeEpoch", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HGetEx(ctx, k("h"), HGetExOptions{ExpireAt: time.Unix(-1, 0)}, "a")
	}},
	{name: "HSetExNoPairs", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HSetEx(ctx, k("h"), HSetExOptions{})
	}},
	{name: "HSetExOddPairs", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HSetEx(ctx, k("h"), HSetExOptions{}, "a", "1", "b")
	}},
	{name: "HSetExTTLAndKeepTTL", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HSetEx(ctx, k("h"), HSetExOptions{TTL: time.Second, KeepTTL: true}, "a", "1")
	}},
	{name: "HSetExUndefinedCondition", do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
		return c.HSetEx(ctx, k("h"), HSetExOptions{Condition: 5}, "a", "1")
	}},
}

// TestHashFieldExpirationInvalid: every refused call sends nothing, and
// the same call queued makes the batch fail before any I/O.
func TestHashFieldExpirationInvalid(t *testing.T) {
	for i := range hfeInvalid {
		hfeInvalid[i].wantErr = ErrInvalidArgument
	}
	rec := newRecorder(t, "")
	runCases(t, rec, hfeInvalid)

	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	before := rec.count()
	b := c.NewBatch()
	ok := b.HSet(key(t, "h"), "a", "1")
	bad := b.HExpire(key(t, "h"), -time.Second, HExpireAlways, "a")
	if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Execute = %v; want ErrInvalidArgument", err)
	}
	if _, err := ok.Result(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("valid member: %v; want the batch's ErrInvalidArgument", err)
	}
	if _, err := bad.Result(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("invalid member: %v; want ErrInvalidArgument", err)
	}
	if n := rec.count() - before; n != 0 {
		t.Errorf("the server received %d frames; want 0", n)
	}
}

// seedServer: str = "hello", h is a hash of 3 fields.
func seedServer(ctx context.Context, c *Client, k func(string) string) error {
	if err := c.Set(ctx, k("str"), "hello"); err != nil {
		return err
	}
	_, err := c.HSet(ctx, k("h"), "a", "1", "b", "2", "c", "3")
	return err
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var serverCases = []hlsCase{
	{name: "InfoDefault", want: []any{true, true, true},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			info, err := c.Info(ctx)
			v, ok := info.Value("server", "redis_version")
			return []any{ok && v != "", strings.HasPrefix(info.Raw(), "# Server\r\n"), len(info.Sections) > 3}, err
		}},
	{name: "InfoSections", want: []string{"clients", "server"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			info, err := c.Info(ctx, "server", "CLIENTS")
			return sortedKeys(info.Sections), err
		}},
	{name: "InfoCommandStats", setup: seedServer, want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			info, err := c.Info(ctx, "commandstats")
			v, _ := info.Value("commandstats", "cmdstat_hset")
			return strings.HasPrefix(v, "calls="), err
		}},
	{name: "InfoUnknownSection", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			info, err := c.Info(ctx, "nosuchsection")
			return sortedKeys(info.Sections), err
		}},
	{name: "InfoEmptySection", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.Info(ctx, "server", "")
		}},
	{name: "Time", want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			tm, err := c.Time(ctx)
			d := time.Since(tm)
			return d > -time.Minute && d < time.Minute, err
		}},
	{name: "MemoryUsage", setup: seedServer, want: []any{true, true},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			s, err := c.MemoryUsage(ctx, k("str"), MemoryUsageOptions{})
			if err != nil {
				return nil, err
			}
			h, err := c.MemoryUsage(ctx, k("h"), MemoryUsageOptions{SampleAll: true})
			return []any{s > 0, h > 0}, err
		}},
	{name: "MemoryUsageSamples", setup: seedServer, want: true,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.MemoryUsage(ctx, k("h"), MemoryUsageOptions{Samples: 2})
			return n > 0, err
		}},
	{name: "MemoryUsageMissingKey", wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.MemoryUsage(ctx, k("missing"), MemoryUsageOptions{})
		}},
	{name: "MemoryUsageNegativeSamples", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.MemoryUsage(ctx, k("str"), MemoryUsageOptions{Samples: -1})
		}},
	{name: "MemoryUsageSamplesAndAll", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.MemoryUsage(ctx, k("str"), MemoryUsageOptions{Samples: 3, SampleAll: true})
		}},
}

// TestServerCommands runs the introspection rows against the real
// server.
func TestServerCommands(t *testing.T) {
	runCases(t, newRecorder(t, ""), serverCases)
}

// TestServerCommandsEncoding pins MEMORY USAGE's and INFO's words.
func TestServerCommandsEncoding(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	k := key(t, "k")
	for _, tt := range []struct {
		name string
		do   func() error
		want []string
	}{
		{"MemoryUsage", func() error { _, err := c.MemoryUsage(ctx, k, MemoryUsageOptions{}); return err },
			[]string{"MEMORY", "USAGE", k}},
		{"MemoryUsageSamples", func() error { _, err := c.MemoryUsage(ctx, k, MemoryUsageOptions{Samples: 7}); return err },
			[]string{"MEMORY", "USAGE", k, "SAMPLES", "7"}},
		{"MemoryUsageSampleAll", func() error { _, err := c.MemoryUsage(ctx, k, MemoryUsageOptions{SampleAll: true}); return err },
			[]string{"MEMORY", "USAGE", k, "SAMPLES", "0"}},
		{"Info", func() error { _, err := c.Info(ctx); return err }, []string{"INFO"}},
		{"InfoSections", func() error { _, err := c.Info(ctx, "memory", "cpu"); return err }, []string{"INFO", "memory", "cpu"}},
		{"Time", func() error { _, err := c.Time(ctx); return err }, []string{"TIME"}},
		{"DBSize", func() error { _, err := c.DBSize(ctx); return err }, []string{"DBSIZE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err != nil && !errors.Is(err, ErrNil) {
				t.Fatal(err)
			}
			if got := rec.last(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sent %q; want %q", got, tt.want)
			}
		})
	}
}

// TestDBSize counts the keys of a private server, so that no other test's
// keys count, with the Client method and the Batch member.
func TestDBSize(t *testing.T) {
	r := testenv.StartRedis(t, testenv.RedisServerPath(t), 0)
	forEachProtocol(t, Options{Endpoints: []string{r.Addr}}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		admin(t, r.Addr, "FLUSHALL")
		if n, err := c.DBSize(ctx); err != nil || n != 0 {
			t.Fatalf("DBSize of an empty server = %d, %v; want 0", n, err)
		}
		if err := c.MSet(ctx, "a", "1", "b", "2", "c", "3"); err != nil {
			t.Fatal(err)
		}
		b := c.NewBatch()
		f := b.DBSize()
		del := b.Del("a")
		after := b.DBSize()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			name string
			f    Future[int64]
			want int64
		}{{"before DEL", f, 3}, {"DEL", del, 1}, {"after DEL", after, 2}} {
			if n, err := x.f.Result(); err != nil || n != x.want {
				t.Errorf("%s = %d, %v; want %d", x.name, n, err, x.want)
			}
		}
		if n, err := c.DBSize(ctx); err != nil || n != 2 {
			t.Errorf("DBSize = %d, %v; want 2", n, err)
		}
	})
}

// TestParseInfo: sections by their lower-cased header, fields split at
// their first colon, blank and other lines skipped, under either line end.
func TestParseInfo(t *testing.T) {
	text := "orphan:1\r\n# Server\r\nredis_version:7.0.15\r\nexecutable:/usr/bin/redis-server\r\n\r\n# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\nmaster_host:::1\nno colon here\r\n"
	got := parseInfo(text)
	want := map[string]map[string]string{
		"":         {"orphan": "1"},
		"server":   {"redis_version": "7.0.15", "executable": "/usr/bin/redis-server"},
		"keyspace": {"db0": "keys=2,expires=0,avg_ttl=0", "master_host": "::1"},
	}
	if !reflect.DeepEqual(got.Sections, want) {
		t.Errorf("Sections = %v; want %v", got.Sections, want)
	}
	if got.Raw() != text {
		t.Errorf("Raw = %q; want the text", got.Raw())
	}
	if v, ok := got.Value("keyspace", "db0"); !ok || v != "keys=2,expires=0,avg_ttl=0" {
		t.Errorf("Value(keyspace, db0) = %q, %v", v, ok)
	}
	if _, ok := got.Value("clients", "connected_clients"); ok {
		t.Error("Value of a missing section reports found")
	}
	for _, v := range []resp.Value{
		{Type: resp.Verbatim, Str: []byte("txt:" + text)},
		{Type: resp.BulkString, Str: []byte(text)},
	} {
		info, err := infoOf(v)
		if err != nil || info.Raw() != text || !reflect.DeepEqual(info.Sections, want) {
			t.Errorf("infoOf(%v) = %q, %v", v.Type, info.Raw(), err)
		}
	}
	if _, err := infoOf(resp.Value{Type: resp.Array}); !errors.Is(err, ErrUnexpectedReply) {
		t.Errorf("infoOf(array) = %v; want ErrUnexpectedReply", err)
	}
	// INFO modules writes one "module" line per module: the field keeps
	// the last, as Info.Sections says, and Raw has them all.
	modules := "# Modules\r\nmodule:name=a,ver=1\r\nmodule:name=b,ver=2\r\n"
	info := parseInfo(modules)
	if v, _ := info.Value("modules", "module"); v != "name=b,ver=2" || info.Raw() != modules {
		t.Errorf("repeated field: Value = %q, Raw = %q; want the last line's value and the whole text", v, info.Raw())
	}
}

// TestTimeOf: TIME's [seconds, microseconds], and malformed replies.
func TestTimeOf(t *testing.T) {
	str := func(s string) resp.Value { return resp.Value{Type: resp.BulkString, Str: []byte(s)} }
	got, err := timeOf(resp.Value{Type: resp.Array, Elems: []resp.Value{str("1700000000"), str("123456")}})
	if want := time.Unix(1700000000, 123456000); err != nil || !got.Equal(want) {
		t.Errorf("timeOf = %v, %v; want %v", got, err, want)
	}
	for _, v := range []resp.Value{
		{Type: resp.Array, Elems: []resp.Value{str("1")}},
		{Type: resp.Array, Elems: []resp.Value{str("x"), str("1")}},
		str("1700000000"),
	} {
		if _, err := timeOf(v); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("timeOf(%v) = %v; want ErrUnexpectedReply", v, err)
		}
	}
}

// TestFamilyERetryCategories pins the categories the docs state to the
// catalog's, and checks they are sensible: introspection reads metadata
// (Connection) or data (ReadOnly), PING and ECHO repeat harmlessly.
func TestFamilyERetryCategories(t *testing.T) {
	for _, tt := range []struct {
		spec *spec
		want RetryCategory
	}{
		{specINFO, Connection},
		{specTIME, Connection},
		{specDBSIZE, ReadOnly},
		{specMEMORYUSAGE, ReadOnly},
		{specPING, Always},
		{specECHO, Always},
		{specGEOADD, WriteAccumulating},
		{specGEODIST, ReadOnly},
		{specGEOHASH, ReadOnly},
		{specGEOPOS, ReadOnly},
		{specGEOSEARCH, ReadOnly},
		{specGEOSEARCHSTORE, WriteAccumulating},
		{specHEXPIRE, WriteAccumulating},
		{specHPEXPIRE, WriteAccumulating},
		{specHEXPIREAT, WriteAccumulating},
		{specHPEXPIREAT, WriteAccumulating},
		{specHTTL, ReadOnly},
		{specHPTTL, ReadOnly},
		{specHEXPIRETIME, ReadOnly},
		{specHPEXPIRETIME, ReadOnly},
		{specHPERSIST, WriteAccumulating},
		{specHGETDEL, WriteAccumulating},
		{specHGETEX, WriteAccumulating},
		{specHSETEX, WriteAccumulating},
	} {
		if got := tt.spec.cat; got != tt.want {
			t.Errorf("%s: category %v; want %v", tt.spec.name, got, tt.want)
		}
		if got := tt.spec.desc.Category(); got != tt.spec.cat {
			t.Errorf("%s: spec category %v differs from the catalog's %v", tt.spec.name, tt.spec.cat, got)
		}
	}
}

// batchPair is a Client method and its Batch member on the same data:
// write pairs run on keys of their own (seeded alike), read pairs on the
// keys the batch used.
type batchPair struct {
	name   string
	write  bool
	setup  func(ctx context.Context, c *Client, k func(string) string) error
	direct func(ctx context.Context, c *Client, k func(string) string) (any, error)
	queue  func(b *Batch, k func(string) string) func() (any, error)
}

var rome = GeoMember{Member: "Rome", Longitude: 12.5, Latitude: 41.9}

var geoQuery = fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoAsc})

// same makes a Future's result comparable with what a Client method
// returned.
func same[T any](f Future[T], conv func(T) any) func() (any, error) {
	return func() (any, error) {
		v, err := f.Result()
		return conv(v), err
	}
}

var familyEPairs = []batchPair{
	{name: "GeoAdd", write: true, setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{Changed: true}, rome, GeoMember{"Palermo", 13, 38})
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoAdd(k("g"), GeoAddOptions{Changed: true}, rome, GeoMember{"Palermo", 13, 38}))
		}},
	{name: "GeoDist", setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Catania", GeoKilometers)
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoDist(k("g"), "Palermo", "Catania", GeoKilometers))
		}},
	{name: "GeoHash", setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoHash(ctx, k("g"), "Palermo", "Rome")
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoHash(k("g"), "Palermo", "Rome"))
		}},
	{name: "GeoPos", setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoPos(ctx, k("g"), "Palermo", "Rome")
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoPos(k("g"), "Palermo", "Rome"))
		}},
	{name: "GeoSearch", setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), geoQuery)
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) { return res(b.GeoSearch(k("g"), geoQuery)) }},
	{name: "GeoSearchLocations", setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearchLocations(ctx, k("g"), geoQuery, GeoWith{Coord: true, Dist: true, Hash: true})
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoSearchLocations(k("g"), geoQuery, GeoWith{Coord: true, Dist: true, Hash: true}))
		}},
	{name: "GeoSearchStore", write: true, setup: seedGeo,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearchStore(ctx, k("dst"), k("g"), geoQuery, true)
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.GeoSearchStore(k("dst"), k("g"), geoQuery, true))
		}},
	{name: "HMGet", setup: seedServer,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			v, f, err := c.HMGet(ctx, k("h"), "a", "nope", "c")
			return FieldValues{v, f}, err
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.HMGet(k("h"), "a", "nope", "c"))
		}},
	{name: "MemoryUsage", setup: seedServer,
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.MemoryUsage(ctx, k("h"), MemoryUsageOptions{SampleAll: true})
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.MemoryUsage(k("h"), MemoryUsageOptions{SampleAll: true}))
		}},
	{name: "MemoryUsageMissing",
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.MemoryUsage(ctx, k("missing"), MemoryUsageOptions{})
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return res(b.MemoryUsage(k("missing"), MemoryUsageOptions{}))
		}},
	{name: "InfoServer",
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			info, err := c.Info(ctx, "server")
			return []any{sortedKeys(info.Sections), info.Sections["server"]["run_id"]}, err
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return same(b.Info("server"), func(info Info) any {
				return []any{sortedKeys(info.Sections), info.Sections["server"]["run_id"]}
			})
		}},
	{name: "Time",
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			tm, err := c.Time(ctx)
			return time.Since(tm).Abs() < time.Minute, err
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) {
			return same(b.Time(), func(tm time.Time) any { return time.Since(tm).Abs() < time.Minute })
		}},
	{name: "Ping",
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return struct{}{}, c.Ping(ctx)
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) { return res(b.Ping()) }},
	{name: "Echo",
		direct: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.Echo(ctx, "hello")
		},
		queue: func(b *Batch, k func(string) string) func() (any, error) { return res(b.Echo("hello")) }},
}

// TestFamilyEBatchMatchesClient queues every pair's Batch member in one
// batch and compares each Future with the Client method's result, under
// RESP2 and RESP3. (The scripted hash field expiration commands are
// compared in TestHashFieldExpiration, DBSize in TestDBSize.)
func TestFamilyEBatchMatchesClient(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		b := c.NewBatch()
		results := make([]func() (any, error), len(familyEPairs))
		keys := make([][2]func(string) string, len(familyEPairs))
		for i, p := range familyEPairs {
			kb := func(s string) string { return key(t, p.name, "batch", s) }
			kd := kb
			if p.write {
				kd = func(s string) string { return key(t, p.name, "client", s) }
			}
			keys[i] = [2]func(string) string{kb, kd}
			if p.setup != nil {
				if err := p.setup(ctx, c, kb); err != nil {
					t.Fatalf("%s: setup: %v", p.name, err)
				}
				if p.write {
					if err := p.setup(ctx, c, kd); err != nil {
						t.Fatalf("%s: setup: %v", p.name, err)
					}
				}
			}
			results[i] = p.queue(b, kb)
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		for i, p := range familyEPairs {
			t.Run(p.name, func(t *testing.T) {
				got, err := results[i]()
				want, wantErr := p.direct(ctx, c, keys[i][1])
				if !errors.Is(err, wantErr) && (err == nil || wantErr == nil || err.Error() != wantErr.Error()) {
					t.Fatalf("Batch error = %v; Client error = %v", err, wantErr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Batch = %#v; Client = %#v", got, want)
				}
			})
		}
	})
}
