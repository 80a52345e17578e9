package respire

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// recorder is a respiretest proxy in front of the standalone server that
// records the arguments of every frame of one command, so a test can
// check exactly what the client sent.
type recorder struct {
	proxy *respiretest.Proxy
	mu    sync.Mutex
	sent  [][]string
}

func newRecorder(t *testing.T, command string) *recorder {
	t.Helper()
	p, err := respiretest.NewProxy(standaloneAddr(t))
	if err != nil {
		t.Fatalf("NewProxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	r := &recorder{proxy: p}
	p.MustAddRule(t, respiretest.Rule{
		Command: command,
		Times:   respiretest.Always,
		Action:  respiretest.Pass,
		OnReceive: func(args []string) {
			r.mu.Lock()
			r.sent = append(r.sent, args)
			r.mu.Unlock()
		},
	})
	return r
}

// last returns the arguments of the last recorded frame, or nil.
func (r *recorder) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sent) == 0 {
		return nil
	}
	return r.sent[len(r.sent)-1]
}

// count returns how many frames were recorded.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

func TestPing(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		if err := c.Ping(testCtx(t)); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
}

func TestEcho(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		for _, msg := range []string{"hello", "", "multi\r\nline", "ünï"} {
			got, err := c.Echo(testCtx(t), msg)
			if err != nil || got != msg {
				t.Errorf("Echo(%q) = %q, %v; want %q, nil", msg, got, err, msg)
			}
		}
	})
}

func TestGetMissingKeyIsErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		got, err := c.Get(testCtx(t), key(t, "missing"))
		if !errors.Is(err, ErrNil) || got != "" {
			t.Errorf("Get(missing) = %q, %v; want \"\", ErrNil", got, err)
		}
	})
}

func TestGetEmptyValueIsNotErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "empty")
		if err := c.Set(ctx, k, ""); err != nil {
			t.Fatalf("Set: %v", err)
		}
		got, err := c.Get(ctx, k)
		if err != nil || got != "" {
			t.Errorf("Get(empty) = %q, %v; want \"\", nil", got, err)
		}
	})
}

func TestGetBytesMissingKeyIsErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		dst := []byte("prefix")
		got, err := c.GetBytes(testCtx(t), key(t, "missing"), dst)
		if !errors.Is(err, ErrNil) || string(got) != "prefix" {
			t.Errorf("GetBytes(missing) = %q, %v; want %q, ErrNil", got, err, "prefix")
		}
	})
}

func TestGetBytesEmptyValueIsNotErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "empty")
		if err := c.Set(ctx, k, ""); err != nil {
			t.Fatalf("Set: %v", err)
		}
		got, err := c.GetBytes(ctx, k, []byte("prefix"))
		if err != nil || string(got) != "prefix" {
			t.Errorf("GetBytes(empty) = %q, %v; want %q, nil", got, err, "prefix")
		}
	})
}

func TestGetBytesAppendsToDst(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "k")
		if err := c.Set(ctx, k, "value"); err != nil {
			t.Fatalf("Set: %v", err)
		}
		buf := make([]byte, 0, 64)
		buf = append(buf, "x:"...)
		got, err := c.GetBytes(ctx, k, buf)
		if err != nil || string(got) != "x:value" {
			t.Fatalf("GetBytes = %q, %v; want %q, nil", got, err, "x:value")
		}
		if &got[0] != &buf[:1][0] {
			t.Errorf("GetBytes reallocated a dst with enough capacity")
		}
	})
}

func TestSetOverwritesValueAndClearsTTL(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t, "k")
		if _, err := c.SetWithOptions(ctx, k, "old", SetOptions{TTL: time.Minute}); err != nil {
			t.Fatalf("SetWithOptions: %v", err)
		}
		if err := c.Set(ctx, k, "new"); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if got, err := c.Get(ctx, k); err != nil || got != "new" {
			t.Errorf("Get = %q, %v; want %q, nil", got, err, "new")
		}
		if got, err := c.TTL(ctx, k); err != nil || got != TTLPersistent {
			t.Errorf("TTL = %v, %v; want TTLPersistent", got, err)
		}
	})
}

// TestSetWithOptions checks each SET option on the wire (the exact
// arguments the server received) and by its effect on the server.
func TestSetWithOptions(t *testing.T) {
	// Absolute expiries, computed once: EXAT on a whole second, PXAT not.
	exat := time.Now().Add(100 * time.Second).Truncate(time.Second)
	pxat := exat.Add(500 * time.Millisecond)
	tests := []struct {
		name     string
		existing string        // value set before, "" for a missing key
		ttl      time.Duration // TTL of the existing value
		opt      SetOptions
		wantArgs []string // after "SET key value"
		want     SetResult
		wantVal  string // value after; "" means the key is missing
		// wantTTL bounds the PTTL after the call.
		minTTL, maxTTL time.Duration
	}{
		{name: "Plain", existing: "old", ttl: time.Minute, want: SetResult{Written: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "EX", opt: SetOptions{TTL: 10 * time.Second}, wantArgs: []string{"EX", "10"}, want: SetResult{Written: true}, wantVal: "v", minTTL: 9 * time.Second, maxTTL: 10 * time.Second},
		{name: "PX", opt: SetOptions{TTL: 1500 * time.Millisecond}, wantArgs: []string{"PX", "1500"}, want: SetResult{Written: true}, wantVal: "v", minTTL: time.Second, maxTTL: 1500 * time.Millisecond},
		{name: "PXTruncatedToTheMillisecond", opt: SetOptions{TTL: 10*time.Second + 1500*time.Microsecond}, wantArgs: []string{"PX", "10001"}, want: SetResult{Written: true}, wantVal: "v", minTTL: 9 * time.Second, maxTTL: 10001 * time.Millisecond},
		{name: "PXATTruncatedToTheMillisecond", opt: SetOptions{ExpireAt: pxat.Add(700 * time.Microsecond)}, wantArgs: []string{"PXAT", fmt.Sprint(pxat.UnixMilli())}, want: SetResult{Written: true}, wantVal: "v", minTTL: 90 * time.Second, maxTTL: 100500 * time.Millisecond},
		{name: "EXAT", opt: SetOptions{ExpireAt: exat}, wantArgs: []string{"EXAT", fmt.Sprint(exat.Unix())}, want: SetResult{Written: true}, wantVal: "v", minTTL: 90 * time.Second, maxTTL: 100 * time.Second},
		{name: "PXAT", opt: SetOptions{ExpireAt: pxat}, wantArgs: []string{"PXAT", fmt.Sprint(pxat.UnixMilli())}, want: SetResult{Written: true}, wantVal: "v", minTTL: 90 * time.Second, maxTTL: 100500 * time.Millisecond},
		{name: "KEEPTTL", existing: "old", ttl: time.Minute, opt: SetOptions{KeepTTL: true}, wantArgs: []string{"KEEPTTL"}, want: SetResult{Written: true}, wantVal: "v", minTTL: 50 * time.Second, maxTTL: time.Minute},
		{name: "NXOnMissingKey", opt: SetOptions{Condition: SetIfNotExists}, wantArgs: []string{"NX"}, want: SetResult{Written: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "NXOnExistingKey", existing: "old", opt: SetOptions{Condition: SetIfNotExists}, wantArgs: []string{"NX"}, want: SetResult{Written: false}, wantVal: "old", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "XXOnMissingKey", opt: SetOptions{Condition: SetIfExists}, wantArgs: []string{"XX"}, want: SetResult{Written: false}, wantVal: "", minTTL: TTLMissing, maxTTL: TTLMissing},
		{name: "XXOnExistingKey", existing: "old", opt: SetOptions{Condition: SetIfExists}, wantArgs: []string{"XX"}, want: SetResult{Written: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "GETOnExistingKey", existing: "old", opt: SetOptions{Get: true}, wantArgs: []string{"GET"}, want: SetResult{Written: true, Previous: "old", PreviousExists: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "GETOnMissingKey", opt: SetOptions{Get: true}, wantArgs: []string{"GET"}, want: SetResult{Written: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "NXGETOnExistingKey", existing: "old", opt: SetOptions{Condition: SetIfNotExists, Get: true}, wantArgs: []string{"NX", "GET"}, want: SetResult{Written: false, Previous: "old", PreviousExists: true}, wantVal: "old", minTTL: TTLPersistent, maxTTL: TTLPersistent},
		{name: "XXGETOnMissingKey", opt: SetOptions{Condition: SetIfExists, Get: true}, wantArgs: []string{"XX", "GET"}, want: SetResult{Written: false}, wantVal: "", minTTL: TTLMissing, maxTTL: TTLMissing},
		{name: "XXEXGET", existing: "old", opt: SetOptions{Condition: SetIfExists, TTL: 20 * time.Second, Get: true}, wantArgs: []string{"XX", "EX", "20", "GET"}, want: SetResult{Written: true, Previous: "old", PreviousExists: true}, wantVal: "v", minTTL: 19 * time.Second, maxTTL: 20 * time.Second},
		{name: "EmptyValue", opt: SetOptions{}, want: SetResult{Written: true}, wantVal: "v", minTTL: TTLPersistent, maxTTL: TTLPersistent},
	}
	rec := newRecorder(t, "SET")
	forEachProtocol(t, Options{Endpoints: []string{rec.proxy.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, k := testCtx(t), key(t)
				if tt.existing != "" {
					if _, err := c.SetWithOptions(ctx, k, tt.existing, SetOptions{TTL: tt.ttl}); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				got, err := c.SetWithOptions(ctx, k, "v", tt.opt)
				if err != nil {
					t.Fatalf("SetWithOptions: %v", err)
				}
				if got != tt.want {
					t.Errorf("SetWithOptions = %+v; want %+v", got, tt.want)
				}
				wantArgs := append([]string{"SET", k, "v"}, tt.wantArgs...)
				if sent := rec.last(); !slices.Equal(sent, wantArgs) {
					t.Errorf("sent %q; want %q", sent, wantArgs)
				}
				val, err := c.Get(ctx, k)
				if tt.wantVal == "" {
					if !errors.Is(err, ErrNil) {
						t.Errorf("Get after = %q, %v; want ErrNil", val, err)
					}
				} else if err != nil || val != tt.wantVal {
					t.Errorf("Get after = %q, %v; want %q", val, err, tt.wantVal)
				}
				pttl, err := c.PTTL(ctx, k)
				if err != nil || pttl < tt.minTTL || pttl > tt.maxTTL {
					t.Errorf("PTTL after = %v, %v; want within [%v, %v]", pttl, err, tt.minTTL, tt.maxTTL)
				}
			})
		}
	})
}

func TestSetWithOptionsRejectsContradictions(t *testing.T) {
	tests := []struct {
		name string
		opt  SetOptions
	}{
		{"TTLAndExpireAt", SetOptions{TTL: time.Second, ExpireAt: time.Now().Add(time.Hour)}},
		{"TTLAndKeepTTL", SetOptions{TTL: time.Second, KeepTTL: true}},
		{"ExpireAtAndKeepTTL", SetOptions{ExpireAt: time.Now().Add(time.Hour), KeepTTL: true}},
		{"NegativeTTL", SetOptions{TTL: -time.Second}},
		{"SubMillisecondTTL", SetOptions{TTL: time.Microsecond}},
		{"ExpireAtBeforeEpoch", SetOptions{ExpireAt: time.Unix(-10, 0)}},
		{"UndefinedCondition", SetOptions{Condition: 7}},
	}
	rec := newRecorder(t, "SET")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.SetWithOptions(testCtx(t), key(t), "v", tt.opt)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("SetWithOptions(%+v) error = %v; want ErrInvalidArgument", tt.opt, err)
			}
		})
	}
	if n := rec.count(); n != 0 {
		t.Errorf("the server received %d SET frames; want 0", n)
	}
}

func TestDelAndExists(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, a, b, missing := testCtx(t), key(t, "a"), key(t, "b"), key(t, "missing")
		if err := c.MSet(ctx, a, "1", b, "2"); err != nil {
			t.Fatalf("MSet: %v", err)
		}
		if n, err := c.Exists(ctx, a, b, missing, a); err != nil || n != 3 {
			t.Errorf("Exists(a, b, missing, a) = %d, %v; want 3", n, err)
		}
		if n, err := c.Del(ctx, a, missing); err != nil || n != 1 {
			t.Errorf("Del(a, missing) = %d, %v; want 1", n, err)
		}
		if n, err := c.Exists(ctx, a); err != nil || n != 0 {
			t.Errorf("Exists(a) after Del = %d, %v; want 0", n, err)
		}
	})
}

func TestExpireAndTTL(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if ok, err := c.Expire(ctx, k, time.Minute); err != nil || ok {
			t.Errorf("Expire(missing) = %v, %v; want false", ok, err)
		}
		if got, err := c.TTL(ctx, k); err != nil || got != TTLMissing {
			t.Errorf("TTL(missing) = %v, %v; want TTLMissing", got, err)
		}
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		if got, err := c.TTL(ctx, k); err != nil || got != TTLPersistent {
			t.Errorf("TTL(persistent) = %v, %v; want TTLPersistent", got, err)
		}
		if ok, err := c.Expire(ctx, k, 90*time.Second); err != nil || !ok {
			t.Errorf("Expire = %v, %v; want true", ok, err)
		}
		if got, err := c.TTL(ctx, k); err != nil || got < 89*time.Second || got > 90*time.Second {
			t.Errorf("TTL = %v, %v; want 89s..90s", got, err)
		}
	})
}

func TestPExpireAndPTTL(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if ok, err := c.PExpire(ctx, k, time.Minute); err != nil || ok {
			t.Errorf("PExpire(missing) = %v, %v; want false", ok, err)
		}
		if got, err := c.PTTL(ctx, k); err != nil || got != TTLMissing {
			t.Errorf("PTTL(missing) = %v, %v; want TTLMissing", got, err)
		}
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		if got, err := c.PTTL(ctx, k); err != nil || got != TTLPersistent {
			t.Errorf("PTTL(persistent) = %v, %v; want TTLPersistent", got, err)
		}
		if ok, err := c.PExpire(ctx, k, 2500*time.Millisecond); err != nil || !ok {
			t.Errorf("PExpire = %v, %v; want true", ok, err)
		}
		if got, err := c.PTTL(ctx, k); err != nil || got < 2*time.Second || got > 2500*time.Millisecond {
			t.Errorf("PTTL = %v, %v; want 2s..2.5s", got, err)
		}
	})
}

func TestExpireRejectsTTLThatWouldDeleteTheKey(t *testing.T) {
	c := newClient(t, Options{})
	ctx, k := testCtx(t), key(t)
	must(t, c.Set(ctx, k, "v"))
	if ok, err := c.Expire(ctx, k, 500*time.Millisecond); ok || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Expire(500ms) = %v, %v; want ErrInvalidArgument", ok, err)
	}
	if ok, err := c.PExpire(ctx, k, 500*time.Microsecond); ok || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("PExpire(500µs) = %v, %v; want ErrInvalidArgument", ok, err)
	}
	if got, err := c.Get(ctx, k); err != nil || got != "v" {
		t.Errorf("Get after = %q, %v; want the key untouched", got, err)
	}
	if ok, err := c.Expire(ctx, k, 0); err != nil || !ok {
		t.Errorf("Expire(0) = %v, %v; want true (Redis deletes the key)", ok, err)
	}
	if n, err := c.Exists(ctx, k); err != nil || n != 0 {
		t.Errorf("Exists after Expire(0) = %d, %v; want 0", n, err)
	}
}

func TestIncrIncrByDecr(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		steps := []struct {
			name string
			do   func() (int64, error)
			want int64
		}{
			{"IncrMissing", func() (int64, error) { return c.Incr(ctx, k) }, 1},
			{"IncrBy41", func() (int64, error) { return c.IncrBy(ctx, k, 41) }, 42},
			{"IncrByNegative", func() (int64, error) { return c.IncrBy(ctx, k, -50) }, -8},
			{"Decr", func() (int64, error) { return c.Decr(ctx, k) }, -9},
		}
		for _, s := range steps {
			if got, err := s.do(); err != nil || got != s.want {
				t.Errorf("%s = %d, %v; want %d", s.name, got, err, s.want)
			}
		}
		if got, err := c.Get(ctx, k); err != nil || got != "-9" {
			t.Errorf("Get = %q, %v; want \"-9\"", got, err)
		}
	})
}

func TestIncrOnNonIntegerIsServerError(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if err := c.Set(ctx, k, "abc"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Incr(ctx, k)
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "ERR" || se.Command != "INCR" {
			t.Errorf("Incr(non-integer) error = %v; want *ServerError ERR from INCR", err)
		}
	})
}

func TestAppendAndStrLen(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if n, err := c.StrLen(ctx, k); err != nil || n != 0 {
			t.Errorf("StrLen(missing) = %d, %v; want 0", n, err)
		}
		if n, err := c.Append(ctx, k, "foo"); err != nil || n != 3 {
			t.Errorf("Append(foo) = %d, %v; want 3", n, err)
		}
		if n, err := c.Append(ctx, k, "barbaz"); err != nil || n != 9 {
			t.Errorf("Append(barbaz) = %d, %v; want 9", n, err)
		}
		if n, err := c.StrLen(ctx, k); err != nil || n != 9 {
			t.Errorf("StrLen = %d, %v; want 9", n, err)
		}
	})
}

func TestMSetAndMGet(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, a, empty, missing := testCtx(t), key(t, "a"), key(t, "empty"), key(t, "missing")
		if err := c.MSet(ctx, a, "1", empty, ""); err != nil {
			t.Fatalf("MSet: %v", err)
		}
		vals, found, err := c.MGet(ctx, a, missing, empty)
		if err != nil {
			t.Fatalf("MGet: %v", err)
		}
		if want := []string{"1", "", ""}; !slices.Equal(vals, want) {
			t.Errorf("MGet values = %q; want %q", vals, want)
		}
		if want := []bool{true, false, true}; !slices.Equal(found, want) {
			t.Errorf("MGet found = %v; want %v", found, want)
		}
	})
}

func TestHashCommands(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if n, err := c.HSet(ctx, k, "f1", "v1", "f2", "v2"); err != nil || n != 2 {
			t.Errorf("HSet(new f1, f2) = %d, %v; want 2", n, err)
		}
		if n, err := c.HSet(ctx, k, "f1", "x", "f3", ""); err != nil || n != 1 {
			t.Errorf("HSet(update f1, new f3) = %d, %v; want 1", n, err)
		}
		if got, err := c.HGet(ctx, k, "f1"); err != nil || got != "x" {
			t.Errorf("HGet(f1) = %q, %v; want \"x\"", got, err)
		}
		if got, err := c.HGet(ctx, k, "f3"); err != nil || got != "" {
			t.Errorf("HGet(empty f3) = %q, %v; want \"\", nil", got, err)
		}
		if _, err := c.HGet(ctx, k, "nope"); !errors.Is(err, ErrNil) {
			t.Errorf("HGet(missing field) error = %v; want ErrNil", err)
		}
		all, err := c.HGetAll(ctx, k)
		if want := map[string]string{"f1": "x", "f2": "v2", "f3": ""}; err != nil || !mapsEqual(all, want) {
			t.Errorf("HGetAll = %v, %v; want %v", all, err, want)
		}
		if n, err := c.HDel(ctx, k, "f1", "nope"); err != nil || n != 1 {
			t.Errorf("HDel(f1, nope) = %d, %v; want 1", n, err)
		}
		if all, err := c.HGetAll(ctx, key(t, "missing")); err != nil || len(all) != 0 {
			t.Errorf("HGetAll(missing) = %v, %v; want empty", all, err)
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestListCommands(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if n, err := c.RPush(ctx, k, "b", "c"); err != nil || n != 2 {
			t.Errorf("RPush(b, c) = %d, %v; want 2", n, err)
		}
		if n, err := c.LPush(ctx, k, "a", "z"); err != nil || n != 4 {
			t.Errorf("LPush(a, z) = %d, %v; want 4", n, err)
		}
		if got, err := c.LRange(ctx, k, 0, -1); err != nil || !slices.Equal(got, []string{"z", "a", "b", "c"}) {
			t.Errorf("LRange(0, -1) = %q, %v; want [z a b c]", got, err)
		}
		if got, err := c.LRange(ctx, k, 1, 2); err != nil || !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("LRange(1, 2) = %q, %v; want [a b]", got, err)
		}
		if got, err := c.LPop(ctx, k); err != nil || got != "z" {
			t.Errorf("LPop = %q, %v; want \"z\"", got, err)
		}
		if got, err := c.LRange(ctx, key(t, "missing"), 0, -1); err != nil || len(got) != 0 {
			t.Errorf("LRange(missing) = %q, %v; want empty", got, err)
		}
		if _, err := c.LPop(ctx, key(t, "missing")); !errors.Is(err, ErrNil) {
			t.Errorf("LPop(missing) error = %v; want ErrNil", err)
		}
	})
}

func TestSetCommands(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if n, err := c.SAdd(ctx, k, "a", "b", "a"); err != nil || n != 2 {
			t.Errorf("SAdd(a, b, a) = %d, %v; want 2", n, err)
		}
		if n, err := c.SAdd(ctx, k, "b", "c"); err != nil || n != 1 {
			t.Errorf("SAdd(b, c) = %d, %v; want 1", n, err)
		}
		got, err := c.SMembers(ctx, k)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("SMembers = %q, %v; want [a b c]", got, err)
		}
		if got, err := c.SMembers(ctx, key(t, "missing")); err != nil || len(got) != 0 {
			t.Errorf("SMembers(missing) = %q, %v; want empty", got, err)
		}
	})
}

// TestZAdd checks each ZADD option on the wire and by its effect.
func TestZAdd(t *testing.T) {
	tests := []struct {
		name      string
		opt       ZAddOptions
		members   []Z
		wantArgs  []string // options between the key and the first score
		want      int64
		wantScore map[string]float64 // scores after; absent means not a member
	}{
		{name: "Plain", members: []Z{{5, "a"}, {9, "new"}}, want: 1, wantScore: map[string]float64{"a": 5, "b": 2, "new": 9}},
		{name: "NX", opt: ZAddOptions{Condition: SetIfNotExists}, members: []Z{{5, "a"}, {9, "new"}}, wantArgs: []string{"NX"}, want: 1, wantScore: map[string]float64{"a": 1, "b": 2, "new": 9}},
		{name: "XX", opt: ZAddOptions{Condition: SetIfExists}, members: []Z{{5, "a"}, {9, "new"}}, wantArgs: []string{"XX"}, want: 0, wantScore: map[string]float64{"a": 5, "b": 2}},
		{name: "GT", opt: ZAddOptions{Compare: ZGreater}, members: []Z{{5, "a"}, {0, "b"}}, wantArgs: []string{"GT"}, want: 0, wantScore: map[string]float64{"a": 5, "b": 2}},
		{name: "LT", opt: ZAddOptions{Compare: ZLess}, members: []Z{{5, "a"}, {0, "b"}}, wantArgs: []string{"LT"}, want: 0, wantScore: map[string]float64{"a": 1, "b": 0}},
		{name: "CH", opt: ZAddOptions{Changed: true}, members: []Z{{5, "a"}, {2, "b"}, {9, "new"}}, wantArgs: []string{"CH"}, want: 2, wantScore: map[string]float64{"a": 5, "b": 2, "new": 9}},
		{name: "XXGTCH", opt: ZAddOptions{Condition: SetIfExists, Compare: ZGreater, Changed: true}, members: []Z{{5, "a"}, {0, "b"}, {9, "new"}}, wantArgs: []string{"XX", "GT", "CH"}, want: 1, wantScore: map[string]float64{"a": 5, "b": 2}},
		{name: "FractionalAndInfiniteScores", members: []Z{{0.25, "a"}, {math.Inf(-1), "b"}, {math.Inf(1), "new"}}, want: 1, wantScore: map[string]float64{"a": 0.25, "b": math.Inf(-1), "new": math.Inf(1)}},
		{name: "TinyAndHugeScores", members: []Z{{5e-324, "a"}, {-1.7976931348623157e308, "b"}}, want: 0, wantScore: map[string]float64{"a": 5e-324, "b": -1.7976931348623157e308}},
	}
	rec := newRecorder(t, "ZADD")
	forEachProtocol(t, Options{Endpoints: []string{rec.proxy.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, k := testCtx(t), key(t)
				if n, err := c.ZAdd(ctx, k, ZAddOptions{}, Z{1, "a"}, Z{2, "b"}); err != nil || n != 2 {
					t.Fatalf("setup ZAdd = %d, %v", n, err)
				}
				got, err := c.ZAdd(ctx, k, tt.opt, tt.members...)
				if err != nil || got != tt.want {
					t.Errorf("ZAdd = %d, %v; want %d", got, err, tt.want)
				}
				wantArgs := append([]string{"ZADD", k}, tt.wantArgs...)
				if sent := rec.last(); len(sent) < len(wantArgs) || !slices.Equal(sent[:len(wantArgs)], wantArgs) {
					t.Errorf("sent %q; want it to start with %q", sent, wantArgs)
				}
				for _, m := range []string{"a", "b", "new"} {
					want, member := tt.wantScore[m]
					score, err := c.ZScore(ctx, k, m)
					switch {
					case !member && !errors.Is(err, ErrNil):
						t.Errorf("ZScore(%s) = %v, %v; want ErrNil", m, score, err)
					case member && (err != nil || score != want):
						t.Errorf("ZScore(%s) = %v, %v; want %v", m, score, err, want)
					}
				}
			})
		}
	})
}

func TestZAddIncr(t *testing.T) {
	tests := []struct {
		name    string
		opt     ZAddOptions
		member  Z
		want    float64
		wantNil bool
	}{
		{name: "Increments", member: Z{2.5, "a"}, want: 3.5},
		{name: "CreatesMember", member: Z{4, "new"}, want: 4},
		{name: "NXOnExistingIsErrNil", opt: ZAddOptions{Condition: SetIfNotExists}, member: Z{2, "a"}, wantNil: true},
		{name: "XXOnMissingIsErrNil", opt: ZAddOptions{Condition: SetIfExists}, member: Z{2, "new"}, wantNil: true},
		{name: "GTBlockedIsErrNil", opt: ZAddOptions{Compare: ZGreater}, member: Z{-1, "a"}, wantNil: true},
		{name: "LTAllowed", opt: ZAddOptions{Compare: ZLess}, member: Z{-3, "a"}, want: -2},
	}
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, k := testCtx(t), key(t)
				if _, err := c.ZAdd(ctx, k, ZAddOptions{}, Z{1, "a"}); err != nil {
					t.Fatal(err)
				}
				got, err := c.ZAddIncr(ctx, k, tt.opt, tt.member)
				if tt.wantNil {
					if !errors.Is(err, ErrNil) {
						t.Errorf("ZAddIncr = %v, %v; want ErrNil", got, err)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Errorf("ZAddIncr = %v, %v; want %v", got, err, tt.want)
				}
			})
		}
	})
}

func TestZAddRejectsInvalidOptions(t *testing.T) {
	c := newClient(t, Options{})
	tests := []struct {
		name    string
		opt     ZAddOptions
		members []Z
	}{
		{"NoMembers", ZAddOptions{}, nil},
		{"NXWithGT", ZAddOptions{Condition: SetIfNotExists, Compare: ZGreater}, []Z{{1, "a"}}},
		{"UndefinedCompare", ZAddOptions{Compare: 9}, []Z{{1, "a"}}},
		{"NaNScore", ZAddOptions{}, []Z{{math.NaN(), "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.ZAdd(testCtx(t), key(t), tt.opt, tt.members...); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("ZAdd error = %v; want ErrInvalidArgument", err)
			}
		})
	}
}

func TestZRange(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if _, err := c.ZAdd(ctx, k, ZAddOptions{}, Z{3, "c"}, Z{1.5, "a"}, Z{2, "b"}); err != nil {
			t.Fatal(err)
		}
		if got, err := c.ZRange(ctx, k, 0, -1); err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("ZRange(0, -1) = %q, %v; want [a b c]", got, err)
		}
		if got, err := c.ZRange(ctx, k, -2, -1); err != nil || !slices.Equal(got, []string{"b", "c"}) {
			t.Errorf("ZRange(-2, -1) = %q, %v; want [b c]", got, err)
		}
		want := []Z{{1.5, "a"}, {2, "b"}, {3, "c"}}
		if got, err := c.ZRangeWithScores(ctx, k, 0, -1); err != nil || !slices.Equal(got, want) {
			t.Errorf("ZRangeWithScores = %v, %v; want %v", got, err, want)
		}
		if got, err := c.ZRangeWithScores(ctx, key(t, "missing"), 0, -1); err != nil || len(got) != 0 {
			t.Errorf("ZRangeWithScores(missing) = %v, %v; want empty", got, err)
		}
	})
}

func TestZScore(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if _, err := c.ZAdd(ctx, k, ZAddOptions{}, Z{-0.125, "a"}); err != nil {
			t.Fatal(err)
		}
		if got, err := c.ZScore(ctx, k, "a"); err != nil || got != -0.125 {
			t.Errorf("ZScore(a) = %v, %v; want -0.125", got, err)
		}
		if _, err := c.ZScore(ctx, k, "nope"); !errors.Is(err, ErrNil) {
			t.Errorf("ZScore(missing member) error = %v; want ErrNil", err)
		}
	})
}

// TestXAdd checks each XADD option on the wire and by its effect.
func TestXAdd(t *testing.T) {
	tests := []struct {
		name     string
		opt      XAddOptions
		wantArgs []string // between the key and the field-value pairs
		wantID   string   // "" accepts any generated ID
		wantNil  bool
		wantLen  int64
	}{
		{name: "AutoID", wantArgs: []string{"*"}, wantLen: 4},
		{name: "ExplicitID", opt: XAddOptions{ID: "5-1"}, wantArgs: []string{"5-1"}, wantID: "5-1", wantLen: 4},
		{name: "MaxLenExact", opt: XAddOptions{MaxLen: 2}, wantArgs: []string{"MAXLEN", "=", "2", "*"}, wantLen: 2},
		{name: "MaxLenApproximateLimit", opt: XAddOptions{MaxLen: 2, Approximate: true, Limit: 10}, wantArgs: []string{"MAXLEN", "~", "2", "LIMIT", "10", "*"}, wantLen: 4},
		{name: "MinIDExact", opt: XAddOptions{MinID: "3-0"}, wantArgs: []string{"MINID", "=", "3-0", "*"}, wantLen: 2},
		{name: "NoMkStreamOnExisting", opt: XAddOptions{NoMkStream: true, ID: "9-0"}, wantArgs: []string{"NOMKSTREAM", "9-0"}, wantID: "9-0", wantLen: 4},
	}
	rec := newRecorder(t, "XADD")
	forEachProtocol(t, Options{Endpoints: []string{rec.proxy.Addr()}}, func(t *testing.T, c *Client) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, k := testCtx(t), key(t)
				for i := 1; i <= 3; i++ {
					if _, err := c.XAdd(ctx, k, XAddOptions{ID: fmt.Sprintf("%d-0", i)}, "i", fmt.Sprint(i)); err != nil {
						t.Fatalf("setup XAdd: %v", err)
					}
				}
				id, err := c.XAdd(ctx, k, tt.opt, "f", "v")
				if err != nil || (tt.wantID != "" && id != tt.wantID) || id == "" {
					t.Errorf("XAdd = %q, %v; want %q", id, err, tt.wantID)
				}
				wantArgs := append(append([]string{"XADD", k}, tt.wantArgs...), "f", "v")
				if sent := rec.last(); !slices.Equal(sent, wantArgs) {
					t.Errorf("sent %q; want %q", sent, wantArgs)
				}
				if n, err := c.XLen(ctx, k); err != nil || n != tt.wantLen {
					t.Errorf("XLen = %d, %v; want %d", n, err, tt.wantLen)
				}
			})
		}
	})
}

func TestXAddNoMkStreamOnMissingStreamIsErrNil(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if id, err := c.XAdd(ctx, k, XAddOptions{NoMkStream: true}, "f", "v"); !errors.Is(err, ErrNil) {
			t.Errorf("XAdd(NOMKSTREAM, missing) = %q, %v; want ErrNil", id, err)
		}
		if n, err := c.Exists(ctx, k); err != nil || n != 0 {
			t.Errorf("Exists after = %d, %v; want 0 (no stream created)", n, err)
		}
	})
}

func TestXAddExplicitIDNotIncreasingIsServerError(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if _, err := c.XAdd(ctx, k, XAddOptions{ID: "5-0"}, "f", "v"); err != nil {
			t.Fatal(err)
		}
		_, err := c.XAdd(ctx, k, XAddOptions{ID: "4-0"}, "f", "v")
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "ERR" || se.Command != "XADD" {
			t.Errorf("XAdd(lower ID) error = %v; want *ServerError ERR from XADD", err)
		}
	})
}

func TestXAddRejectsInvalidOptions(t *testing.T) {
	c := newClient(t, Options{})
	tests := []struct {
		name  string
		opt   XAddOptions
		pairs []string
	}{
		{"NoPairs", XAddOptions{}, nil},
		{"OddPairs", XAddOptions{}, []string{"f"}},
		{"MaxLenAndMinID", XAddOptions{MaxLen: 1, MinID: "1-0"}, []string{"f", "v"}},
		{"NegativeMaxLen", XAddOptions{MaxLen: -1}, []string{"f", "v"}},
		{"LimitWithoutApproximate", XAddOptions{MaxLen: 1, Limit: 5}, []string{"f", "v"}},
		{"ApproximateWithoutTrim", XAddOptions{Approximate: true}, []string{"f", "v"}},
		{"IdempotencyWithoutProducer", XAddOptions{Idempotency: &XAddIdempotency{MessageID: "m"}}, []string{"f", "v"}},
		{"IdempotencyAutoAndMessageID", XAddOptions{Idempotency: &XAddIdempotency{ProducerID: "p", MessageID: "m", Auto: true}}, []string{"f", "v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.XAdd(testCtx(t), key(t), tt.opt, tt.pairs...); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("XAdd error = %v; want ErrInvalidArgument", err)
			}
		})
	}
}

func TestXRangeAndXLen(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		if n, err := c.XLen(ctx, k); err != nil || n != 0 {
			t.Errorf("XLen(missing) = %d, %v; want 0", n, err)
		}
		for i := 1; i <= 3; i++ {
			if _, err := c.XAdd(ctx, k, XAddOptions{ID: fmt.Sprintf("%d-0", i)}, "i", fmt.Sprint(i), "empty", ""); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := c.XLen(ctx, k); err != nil || n != 3 {
			t.Errorf("XLen = %d, %v; want 3", n, err)
		}
		got, err := c.XRange(ctx, k, "-", "+", 0)
		want := []XMessage{
			{ID: "1-0", Fields: []string{"i", "1", "empty", ""}},
			{ID: "2-0", Fields: []string{"i", "2", "empty", ""}},
			{ID: "3-0", Fields: []string{"i", "3", "empty", ""}},
		}
		if err != nil || !xEqual(got, want) {
			t.Errorf("XRange(-, +) = %v, %v; want %v", got, err, want)
		}
		got, err = c.XRange(ctx, k, "2", "+", 1)
		if err != nil || !xEqual(got, want[1:2]) {
			t.Errorf("XRange(2, +, COUNT 1) = %v, %v; want %v", got, err, want[1:2])
		}
	})
}

func xEqual(a, b []XMessage) bool {
	return slices.EqualFunc(a, b, func(x, y XMessage) bool { return x.ID == y.ID && slices.Equal(x.Fields, y.Fields) })
}

func TestArgumentErrorsSendNothing(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	before := rec.count()
	tests := []struct {
		name string
		do   func() error
	}{
		{"DelNoKeys", func() error { _, err := c.Del(ctx); return err }},
		{"ExistsNoKeys", func() error { _, err := c.Exists(ctx); return err }},
		{"MGetNoKeys", func() error { _, _, err := c.MGet(ctx); return err }},
		{"MSetOddPairs", func() error { return c.MSet(ctx, "k") }},
		{"HSetOddPairs", func() error { _, err := c.HSet(ctx, "k", "f"); return err }},
		{"HDelNoFields", func() error { _, err := c.HDel(ctx, "k"); return err }},
		{"LPushNoValues", func() error { _, err := c.LPush(ctx, "k"); return err }},
		{"RPushNoValues", func() error { _, err := c.RPush(ctx, "k"); return err }},
		{"SAddNoMembers", func() error { _, err := c.SAdd(ctx, "k"); return err }},
		{"DoEmptyName", func() error { _, err := c.Do(ctx, NewCommand("")); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("error = %v; want ErrInvalidArgument", err)
			}
		})
	}
	if n := rec.count() - before; n != 0 {
		t.Errorf("the server received %d frames; want 0", n)
	}
}

func TestDoWithCatalogDescriptors(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx, k := testCtx(t), key(t)
		r, err := c.Do(ctx, catalog.String.SET(), k, "v")
		if ok, cerr := r.Bool(); err != nil || cerr != nil || !ok {
			t.Errorf("Do(SET).Bool() = %v, %v, %v; want true", ok, err, cerr)
		}
		r, err = c.Do(ctx, catalog.String.GET(), k)
		if s, cerr := r.String(); err != nil || cerr != nil || s != "v" {
			t.Errorf("Do(GET).String() = %q, %v, %v; want \"v\"", s, err, cerr)
		}
		r, err = c.Do(ctx, catalog.String.GET(), key(t, "missing"))
		if err != nil || !r.IsNull() {
			t.Errorf("Do(GET missing) = %+v, %v; want a null Reply and no error", r.Value(), err)
		}
		if _, cerr := r.String(); !errors.Is(cerr, ErrNil) {
			t.Errorf("null Reply.String() error = %v; want ErrNil", cerr)
		}
	})
}

func TestDoWithNewCommand(t *testing.T) {
	forEachProtocol(t, Options{ClientName: "respire-do"}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		r, err := c.Do(ctx, NewCommand("client getname"))
		if s, cerr := r.String(); err != nil || cerr != nil || s != "respire-do" {
			t.Errorf("Do(CLIENT GETNAME) = %q, %v, %v; want \"respire-do\"", s, err, cerr)
		}
		r, err = c.Do(ctx, NewCommand("OBJECT").WithRetryCategory(ReadOnly), "HELP")
		if lines, cerr := r.Strings(); err != nil || cerr != nil || len(lines) == 0 {
			t.Errorf("Do(OBJECT HELP) = %q, %v, %v; want help lines", lines, err, cerr)
		}
	})
}

// TestReplyConversions checks each Reply conversion on real replies in
// both protocols (RESP3 returns maps, sets, doubles and booleans where
// RESP2 returns arrays, strings and integers).
func TestReplyConversions(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		str, list, hash, zset, set := key(t, "s"), key(t, "l"), key(t, "h"), key(t, "z"), key(t, "set")
		must(t, c.Set(ctx, str, "42"))
		_, err := c.RPush(ctx, list, "a", "b")
		must(t, err)
		_, err = c.HSet(ctx, hash, "f", "v", "g", "w")
		must(t, err)
		_, err = c.ZAdd(ctx, zset, ZAddOptions{}, Z{1.5, "m"})
		must(t, err)
		_, err = c.SAdd(ctx, set, "x")
		must(t, err)
		do := func(name string, args ...string) Reply {
			t.Helper()
			r, err := c.Do(ctx, NewCommand(name), anys(args)...)
			if err != nil {
				t.Fatalf("Do(%s %q): %v", name, args, err)
			}
			return r
		}
		if n, err := do("GET", str).Int64(); err != nil || n != 42 {
			t.Errorf("GET 42 Int64() = %d, %v; want 42", n, err)
		}
		if n, err := do("STRLEN", str).Int64(); err != nil || n != 2 {
			t.Errorf("STRLEN Int64() = %d, %v; want 2", n, err)
		}
		if f, err := do("ZSCORE", zset, "m").Float64(); err != nil || f != 1.5 {
			t.Errorf("ZSCORE Float64() = %v, %v; want 1.5", f, err)
		}
		if f, err := do("GET", str).Float64(); err != nil || f != 42 {
			t.Errorf("GET 42 Float64() = %v, %v; want 42", f, err)
		}
		if b, err := do("EXISTS", str).Bool(); err != nil || !b {
			t.Errorf("EXISTS Bool() = %v, %v; want true", b, err)
		}
		if b, err := do("SISMEMBER", set, "nope").Bool(); err != nil || b {
			t.Errorf("SISMEMBER Bool() = %v, %v; want false", b, err)
		}
		if b, err := do("PING").Bool(); err != nil || b {
			t.Errorf("PING Bool() = %v, %v; want false (PONG is not OK)", b, err)
		}
		if s, err := do("PING").String(); err != nil || s != "PONG" {
			t.Errorf("PING String() = %q, %v; want PONG", s, err)
		}
		if s, err := do("STRLEN", str).String(); err != nil || s != "2" {
			t.Errorf("STRLEN String() = %q, %v; want \"2\"", s, err)
		}
		if l, err := do("LRANGE", list, "0", "-1").Strings(); err != nil || !slices.Equal(l, []string{"a", "b"}) {
			t.Errorf("LRANGE Strings() = %q, %v; want [a b]", l, err)
		}
		if l, err := do("SMEMBERS", set).Strings(); err != nil || !slices.Equal(l, []string{"x"}) {
			t.Errorf("SMEMBERS Strings() = %q, %v; want [x]", l, err)
		}
		if m, err := do("HGETALL", hash).StringMap(); err != nil || !mapsEqual(m, map[string]string{"f": "v", "g": "w"}) {
			t.Errorf("HGETALL StringMap() = %v, %v; want map[f:v g:w]", m, err)
		}
		el := do("LRANGE", list, "0", "-1").Elements()
		if len(el) != 2 {
			t.Fatalf("LRANGE Elements() has %d elements; want 2", len(el))
		}
		if s, err := el[1].String(); err != nil || s != "b" {
			t.Errorf("Elements()[1].String() = %q, %v; want \"b\"", s, err)
		}
		mget := do("MGET", str, key(t, "missing")).Elements()
		if len(mget) != 2 || mget[0].IsNull() || !mget[1].IsNull() {
			t.Errorf("MGET Elements() nulls = %v; want [false true]", []bool{len(mget) > 0 && mget[0].IsNull(), len(mget) > 1 && mget[1].IsNull()})
		}
		wantHashType, wantScoreType := resp.Array, resp.BulkString
		if c.ep.Current().Proto() == 3 {
			wantHashType, wantScoreType = resp.Map, resp.Double
		}
		if got := do("HGETALL", hash).Value().Type; got != wantHashType {
			t.Errorf("HGETALL Value().Type = %v; want %v", got, wantHashType)
		}
		if got := do("ZSCORE", zset, "m").Value().Type; got != wantScoreType {
			t.Errorf("ZSCORE Value().Type = %v; want %v", got, wantScoreType)
		}
	})
}

func TestReplyConversionErrors(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		list := key(t, "l")
		_, err := c.RPush(ctx, list, "a")
		must(t, err)
		arr, err := c.Do(ctx, NewCommand("LRANGE"), list, "0", "-1")
		must(t, err)
		str, err := c.Do(ctx, NewCommand("ECHO"), "abc")
		must(t, err)
		null, err := c.Do(ctx, NewCommand("GET"), key(t, "missing"))
		must(t, err)
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"ArrayString", second(arr.String()), ErrUnexpectedReply},
			{"ArrayInt64", second(arr.Int64()), ErrUnexpectedReply},
			{"ArrayBool", second(arr.Bool()), ErrUnexpectedReply},
			{"StringStrings", second(str.Strings()), ErrUnexpectedReply},
			{"StringStringMap", second(str.StringMap()), ErrUnexpectedReply},
			{"NonNumericInt64", second(str.Int64()), ErrUnexpectedReply},
			{"NonNumericFloat64", second(str.Float64()), ErrUnexpectedReply},
			{"NullString", second(null.String()), ErrNil},
			{"NullInt64", second(null.Int64()), ErrNil},
			{"NullFloat64", second(null.Float64()), ErrNil},
			{"NullBool", second(null.Bool()), ErrNil},
			{"ZeroReplyString", second(Reply{}.String()), ErrNil},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: error = %v; want %v", tt.name, tt.err, tt.want)
			}
		}
	})
}

func second[T any](_ T, err error) error { return err }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTTLBeyondDurationRange sets an expiry a thousand years away, past
// the about 292 years a time.Duration holds: TTL and PTTL report the
// largest Duration, as their Batch members do, instead of a
// multiplication that wrapped around to a negative or short duration.
func TestTTLBeyondDurationRange(t *testing.T) {
	forEachProtocol(t, Options{Endpoints: []string{standaloneAddr(t)}}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := key(t, "k")
		far := time.Now().AddDate(1000, 0, 0)
		if err := c.Set(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		if ok, err := c.ExpireAt(ctx, k, far); err != nil || !ok {
			t.Fatalf("ExpireAt = %v, %v", ok, err)
		}
		const longest = time.Duration(math.MaxInt64)
		ttl, err := c.TTL(ctx, k)
		if err != nil || ttl != longest {
			t.Errorf("TTL = %v, %v; want %v", ttl, err, longest)
		}
		pttl, err := c.PTTL(ctx, k)
		if err != nil || pttl != longest {
			t.Errorf("PTTL = %v, %v; want %v", pttl, err, longest)
		}
		b := c.NewBatch()
		bt, bp := b.TTL(k), b.PTTL(k)
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		for name, fu := range map[string]Future[time.Duration]{"TTL": bt, "PTTL": bp} {
			if got, err := fu.Result(); err != nil || got != longest {
				t.Errorf("Batch.%s = %v, %v; want %v", name, got, err, longest)
			}
		}
	})
}
