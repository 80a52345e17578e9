package wire

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
)

// standaloneAddr returns the address of the real standalone server, or
// skips (fails when RESPIRE_REQUIRE_SERVERS=1) when there is none.
func standaloneAddr(tb testing.TB) string {
	tb.Helper()
	return testenv.Standalone(tb)
}

func dialReal(tb testing.TB) *Conn {
	tb.Helper()
	return dialRealConfig(tb, Config{})
}

// guarded is a Config with every health and backpressure feature on, at
// the client's defaults.
var guarded = Config{HealthTimeout: 3 * time.Second, IdlePing: 15 * time.Second, MaxPendingFrames: 16384, MaxPendingBytes: 64 << 20}

// dialRealConfig dials the real server with cfg (Addr and DialTimeout set
// here).
func dialRealConfig(tb testing.TB, cfg Config) *Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg.Addr, cfg.DialTimeout = standaloneAddr(tb), 5*time.Second
	c, err := Dial(ctx, cfg, nil)
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// do runs one command through c and returns the completed frame.
func do(tb testing.TB, c *Conn, want Want, args ...string) *Frame {
	tb.Helper()
	f := newFrame(want, args...)
	if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
		tb.Fatalf("Submit %v: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Wait(ctx, time.Time{}); err != nil {
		tb.Fatalf("Wait %v: %v", args, err)
	}
	if f.Err != nil || f.IsErr {
		tb.Fatalf("%v: Err %v, reply %q", args, f.Err, f.ErrReply)
	}
	return f
}

// TestRealServerConcurrentIncr proves that 64 goroutines x 500 INCR
// multiplexed over one connection all execute exactly once and each
// caller receives a distinct counter value (FIFO matching holds under
// auto-pipelining).
func TestRealServerConcurrentIncr(t *testing.T) {
	c := dialReal(t)
	if c.Proto() != 3 {
		t.Errorf("Proto() = %d against Redis 7, want 3", c.Proto())
	}
	key := "respire:wire:incr:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	do(t, c, WantNone, "DEL", key).Release()
	defer func() { do(t, c, WantNone, "DEL", key).Release() }()

	const goroutines, each = 64, 500
	seen := make([]bool, goroutines*each+1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range each {
				f := newFrame(WantInt, "INCR", key)
				if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
					errs <- err.Error()
					return
				}
				if err := f.Wait(context.Background(), time.Time{}); err != nil || f.Err != nil || f.IsErr {
					errs <- "INCR failed"
					return
				}
				mu.Lock()
				dup := f.Int < 1 || f.Int > goroutines*each || seen[f.Int]
				if !dup {
					seen[f.Int] = true
				}
				mu.Unlock()
				if dup {
					errs <- "duplicate or out-of-range INCR reply " + strconv.FormatInt(f.Int, 10)
					return
				}
				f.Release()
			}
		})
	}
	waitCallers(t, &wg, errs)
	f := do(t, c, WantBytes, "GET", key)
	if got, want := string(f.Bytes), strconv.Itoa(goroutines*each); got != want {
		t.Fatalf("counter = %s, want %s", got, want)
	}
	f.Release()
}

// BenchmarkGet measures a GET round trip through Submit/Wait with
// WantBytes into a reused buffer, plain and with health monitoring and
// pending bounds on; steady state must be 0 allocs/op.
func BenchmarkGet(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchmarkGet(b, Config{}) })
	b.Run("guarded", func(b *testing.B) { benchmarkGet(b, guarded) })
}

func benchmarkGet(b *testing.B, cfg Config) {
	c := dialRealConfig(b, cfg)
	key := "respire:wire:bench"
	value := string(make([]byte, 64))
	do(b, c, WantNone, "SET", key, value).Release()
	get := cmd("GET", key)

	roundTrip := func(b *testing.B, dst []byte) []byte {
		f := GetFrame()
		f.Buf = append(f.Buf[:0], get...)
		f.Want = WantBytes
		f.Bytes = dst[:0]
		if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
			b.Fatal(err)
		}
		if err := f.Wait(context.Background(), time.Time{}); err != nil || f.Err != nil {
			b.Fatal(err, f.Err)
		}
		dst = f.Bytes
		if len(dst) != 64 {
			b.Fatalf("got %d bytes, want 64", len(dst))
		}
		f.Release()
		return dst
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 128)
		for b.Loop() {
			buf = roundTrip(b, buf)
		}
	})
	for _, p := range []int{1, 32} {
		b.Run("parallel-x"+strconv.Itoa(p), func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(p) // p goroutines per GOMAXPROCS
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 0, 128)
				for pb.Next() {
					buf = roundTrip(b, buf)
				}
			})
		})
	}
}

// TestGetAllocs proves that a GET round trip into a reused buffer costs
// no allocation in steady state, also with health monitoring and pending
// bounds on (no clock reading or allocation per command).
func TestGetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop frames")
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		do   bool // through Do with a deadline: the caller writes and reads for itself
	}{{"plain", Config{}, false}, {"health and bounds", guarded, false}, {"Do with a deadline", guarded, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRealConfig(t, tc.cfg)
			key := "respire:wire:allocs"
			do(t, c, WantNone, "SET", key, "v").Release()
			get := cmd("GET", key)
			buf := make([]byte, 0, 16)
			allocs := testing.AllocsPerRun(200, func() {
				f := GetFrame()
				f.Buf = append(f.Buf[:0], get...)
				f.Want, f.Bytes = WantBytes, buf[:0]
				if tc.do {
					if sent, err := c.Do(context.Background(), time.Now().Add(5*time.Second), f); !sent || err != nil || f.Err != nil {
						t.Fatal(sent, err, f.Err)
					}
				} else {
					if err := c.Submit(context.Background(), time.Time{}, f); err != nil {
						t.Fatal(err)
					}
					if err := f.Wait(context.Background(), time.Time{}); err != nil || f.Err != nil {
						t.Fatal(err, f.Err)
					}
				}
				buf = f.Bytes
				f.Release()
			})
			if allocs != 0 {
				t.Fatalf("%v allocs per GET, want 0", allocs)
			}
		})
	}
}
