package respire

import (
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// policyModes are the retry configurations the healthy path is measured
// under: no policy, a disabled policy and the default enabled policy.
var policyModes = []struct {
	name   string
	policy func() *RetryPolicy
}{
	{"PolicyNil", func() *RetryPolicy { return nil }},
	{"PolicyDisabled", func() *RetryPolicy { return &RetryPolicy{MaxAttempts: 1} }},
	{"PolicyEnabled", func() *RetryPolicy { return &RetryPolicy{} }},
}

// parallelism is the number of goroutines per GOMAXPROCS in the parallel
// benchmarks: enough concurrent callers for the connection to pipeline.
// fewCallers is the number in the FewCallers benchmarks: 8 goroutines on
// 2 cores, where the connection is shared by few callers.
const (
	parallelism = 32
	fewCallers  = 4
)

const benchValue = "0123456789012345678901234567890123456789012345678901234567890123" // 64 bytes

// benchClient returns a client of the standalone server with the given
// policy and a key holding benchValue.
func benchClient(b *testing.B, policy *RetryPolicy) (*Client, string) {
	b.Helper()
	c := newClient(b, Options{RetryPolicy: policy})
	k := key(b)
	if err := c.Set(context.Background(), k, benchValue); err != nil {
		b.Fatal(err)
	}
	return c, k
}

func BenchmarkGetBytes(b *testing.B) {
	for _, m := range policyModes {
		b.Run(m.name+"/Serial", func(b *testing.B) {
			c, k := benchClient(b, m.policy())
			serialGetBytes(b, context.Background(), c, k)
		})
		b.Run(m.name+"/Parallel", func(b *testing.B) {
			c, k := benchClient(b, m.policy())
			parallelGetBytes(b, c, k, parallelism)
		})
		b.Run(m.name+"/FewCallers", func(b *testing.B) {
			c, k := benchClient(b, m.policy())
			parallelGetBytes(b, c, k, fewCallers)
		})
	}
}

// BenchmarkGetBytesContexts measures a serial GetBytes with the contexts
// services pass: one that can be cancelled (a request's), and one with a
// deadline (which replaces CommandTimeout).
func BenchmarkGetBytesContexts(b *testing.B) {
	b.Run("Cancel", func(b *testing.B) {
		c, k := benchClient(b, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		serialGetBytes(b, ctx, c, k)
	})
	b.Run("Deadline", func(b *testing.B) {
		c, k := benchClient(b, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		serialGetBytes(b, ctx, c, k)
	})
}

func BenchmarkSet(b *testing.B) {
	for _, m := range policyModes {
		b.Run(m.name+"/Serial", func(b *testing.B) {
			c, k := benchClient(b, m.policy())
			ctx := context.Background()
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if err := c.Set(ctx, k, benchValue); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, p := range []struct {
			name string
			per  int
		}{{"Parallel", parallelism}, {"FewCallers", fewCallers}} {
			b.Run(m.name+"/"+p.name, func(b *testing.B) {
				c, k := benchClient(b, m.policy())
				parallelSet(b, c, k, p.per)
			})
		}
	}
}

// TestHealthyPathAllocations checks the 0 allocs/op target of GetBytes
// (into a reused buffer), Set and a reused batch of 100 SETs on a warmed
// client against the real server, under every retry configuration.
func TestHealthyPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, m := range policyModes {
		t.Run(m.name, func(t *testing.T) {
			checkHealthyPath(t, newClient(t, Options{RetryPolicy: m.policy()}))
		})
	}
}

// TestStringRepliesAllocateOnlyTheString proves that the Client methods
// returning a string reply (Get and the typed commands made with
// stringCmd) allocate one thing per warm call, the string the reader
// makes, and return the value intact.
func TestStringRepliesAllocateOnlyTheString(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newClient(t, Options{})
	ctx, k, h, l := context.Background(), key(t, "s"), key(t, "h"), key(t, "l")
	if err := c.Set(ctx, k, benchValue); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HSet(ctx, h, "f", benchValue); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RPush(ctx, l, benchValue); err != nil {
		t.Fatal(err)
	}
	check := func(name string, get func() (string, error)) namedOp {
		return namedOp{name, func() {
			if v, err := get(); err != nil || v != benchValue {
				t.Fatalf("%s = %q, %v; want the value", name, v, err)
			}
		}}
	}
	for _, o := range []namedOp{
		check("Get", func() (string, error) { return c.Get(ctx, k) }),
		check("HGet", func() (string, error) { return c.HGet(ctx, h, "f") }),
		check("LIndex", func() (string, error) { return c.LIndex(ctx, l, 0) }),
		check("GetRange", func() (string, error) { return c.GetRange(ctx, k, 0, -1) }),
	} {
		checkAllocs(t, o, 1)
	}
}

// TestHealthyPathAllocationsOnTopologies: the same calls allocate nothing
// through a Sentinel or Cluster client either (routing by slot, picking
// the node, the retry policy's bookkeeping).
func TestHealthyPathAllocationsOnTopologies(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, m := range policyModes {
		t.Run(m.name, func(t *testing.T) {
			replicaTopologies(t, Options{RetryPolicy: m.policy()}, checkHealthyPath)
		})
	}
}

// checkHealthyPath fails t when a warm Set, GetBytes into a reused buffer
// or reused batch of 100 SETs on c allocates.
func checkHealthyPath(t *testing.T, c *Client) {
	ctx, k := context.Background(), key(t)
	ops := healthyOps(t, c, k)
	batch := c.NewBatch()
	var sets [100]Future[struct{}]
	ops = append(ops, namedOp{"BatchOf100Sets", func() {
		// A reused batch: Reset keeps its buffer, members and
		// reply memory, so its SET members cost nothing.
		batch.Reset()
		for i := range sets {
			sets[i] = batch.Set(k, benchValue)
		}
		if err := batch.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range sets {
			if err := sets[i].Err(); err != nil {
				t.Fatal(err)
			}
		}
	}})
	for _, o := range ops {
		checkNoAllocs(t, o)
	}
}

// namedOp is one operation of an allocation test.
type namedOp struct {
	name string
	op   func()
}

// healthyOps returns a Set of benchValue to k and a GetBytes of k into a
// reused buffer, each failing t on an error or a wrong reply.
func healthyOps(t *testing.T, c *Client, k string) []namedOp {
	ctx, buf := context.Background(), make([]byte, 0, 128)
	return []namedOp{
		{"Set", func() {
			if err := c.Set(ctx, k, benchValue); err != nil {
				t.Fatal(err)
			}
		}},
		{"GetBytes", func() {
			var err error
			if buf, err = c.GetBytes(ctx, k, buf[:0]); err != nil || len(buf) != len(benchValue) {
				t.Fatalf("GetBytes = %d bytes, %v", len(buf), err)
			}
		}},
	}
}

// TestScriptAndFunctionAllocations: a warm Script.Run and Function.Call
// allocate only the copy of their reply (a Reply owns its memory), on a
// standalone, Sentinel or Cluster client under every retry
// configuration: the exchange that may fall back to EVAL or reload the
// library, its route and its retry bookkeeping cost nothing of their own.
func TestScriptAndFunctionAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	body := func(t *testing.T, c *Client) {
		ctx, k := context.Background(), key(t)
		if err := c.Set(ctx, k, benchValue); err != nil {
			t.Fatal(err)
		}
		lib, name, src := testLibrary(t)
		addrs := []string{standaloneAddr(t)}
		if c.topo != nil {
			addrs = nodeAddrs(c.topo.Primaries())
		}
		deleteLibrary(t, lib, addrs...)
		script := NewScript("return redis.call('GET', KEYS[1])", ScriptOptions{ReadOnly: true}).WithRetryCategory(ReadOnly)
		fn := NewFunction(lib, name, FunctionOptions{ReadOnly: true, Source: src}).WithRetryCategory(ReadOnly)
		keys := []string{k}
		check := func(r Reply, err error) {
			if v := r.Value(); err != nil || string(v.Str) != benchValue { // no conversion: it would allocate
				t.Fatalf("reply %q, %v; want the value", v.Str, err)
			}
		}
		for _, o := range []namedOp{
			{"ScriptRun", func() { check(script.Run(ctx, c, keys)) }},
			{"FunctionCall", func() { check(fn.Call(ctx, c, keys)) }},
		} {
			checkAllocs(t, o, 1)
		}
	}
	for _, m := range policyModes {
		t.Run(m.name, func(t *testing.T) {
			opts := Options{RetryPolicy: m.policy()}
			t.Run("Standalone", func(t *testing.T) { body(t, newClient(t, opts)) })
			replicaTopologies(t, opts, body)
		})
	}
}

// checkNoAllocs fails t when o allocates on a warm client.
func checkNoAllocs(t *testing.T, o namedOp) { t.Helper(); checkAllocs(t, o, 0) }

// checkAllocs fails t when o makes more than perCall allocations per
// call on a warm client.
func checkAllocs(t *testing.T, o namedOp, perCall uint64) {
	t.Helper()
	for range 100 { // warm the frame pool and buffers
		o.op()
	}
	// Count every allocation: testing.AllocsPerRun truncates its average,
	// so one allocation per ten calls would read 0. The runtime itself
	// allocates a little (channel waiter records), hence the slack of one
	// allocation per hundred calls.
	const calls = 5000
	if got := allocsOver(calls, o.op); got > perCall*calls+calls/100 {
		t.Errorf("%s: %d allocations in %d calls; want %d per call (and at most %d from the runtime)", o.name, got, calls, perCall, calls/100)
	}
}

// allocsOver returns how many heap allocations the process made while op
// ran n times.
//
// The collector is off while op runs: a collection empties sync.Pool and
// the runtime's own caches (a goroutine parking on a channel takes a
// cached sudog), and their refills would count as op's allocations.
func allocsOver(n int, op func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		op()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// raceEnabled reports whether the test binary was built with -race, which
// makes sync.Pool drop items at random (and so allocate).
var raceEnabled = func() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}()

// reportCPU starts counting the process's CPU time; the returned function
// reports it per operation as cpu-ns/op: the client's cost of a command,
// since the server is another process. Call it after b.ResetTimer.
func reportCPU(b *testing.B) (stop func()) {
	start, ok := processCPU()
	return func() {
		if end, ok2 := processCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// serialGetBytes measures GetBytes of k into a reused buffer from one
// goroutine.
func serialGetBytes(b *testing.B, ctx context.Context, c *Client, k string) {
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var err error
		if buf, err = c.GetBytes(ctx, k, buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// parallelGetBytes measures GetBytes of k from per goroutines per
// GOMAXPROCS.
func parallelGetBytes(b *testing.B, c *Client, k string, per int) {
	parallel(b, per, func() func(context.Context) error {
		buf := make([]byte, 0, 128)
		return func(ctx context.Context) (err error) {
			buf, err = c.GetBytes(ctx, k, buf[:0])
			return err
		}
	})
}

// parallelSet measures Set of k from per goroutines per GOMAXPROCS.
func parallelSet(b *testing.B, c *Client, k string, per int) {
	parallel(b, per, func() func(context.Context) error {
		return func(ctx context.Context) error { return c.Set(ctx, k, benchValue) }
	})
}

// parallel measures op from per goroutines per GOMAXPROCS; newOp makes
// each goroutine's.
func parallel(b *testing.B, per int, newOp func() func(context.Context) error) {
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(per)
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		op := newOp()
		for pb.Next() {
			if err := op(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// connMode is a setting of Options.BatchConnections or SoloConnections.
type connMode struct {
	name  string
	conns int
}

// connModes are the settings a benchmark of extra connections compares:
// the default, and none (the option's constant).
func connModes(none int) []connMode { return []connMode{{"default", 0}, {"none", none}} }

// BenchmarkSoloConnections measures GetBytes and Set from few callers
// (fewCallers and twice as many goroutines per processor: 8 and 16 on
// 2 cores) with the default solo connections and with NoSoloConnections
// (every command on the shared connection, its replies handed over by the
// reader goroutine). Compare the two with benchstat -col /conns.
func BenchmarkSoloConnections(b *testing.B) {
	for _, per := range []int{fewCallers, 2 * fewCallers} {
		for _, v := range connModes(NoSoloConnections) {
			name := "per=" + strconv.Itoa(per) + "/conns=" + v.name
			b.Run("op=GetBytes/"+name, func(b *testing.B) {
				c := newClient(b, Options{SoloConnections: v.conns})
				k := key(b)
				if err := c.Set(context.Background(), k, benchValue); err != nil {
					b.Fatal(err)
				}
				parallelGetBytes(b, c, k, per)
			})
			b.Run("op=Set/"+name, func(b *testing.B) {
				parallelSet(b, newClient(b, Options{SoloConnections: v.conns}), key(b), per)
			})
		}
	}
}

// BenchmarkBatch measures batches of GET and SET members (a reused
// batch), serial and from many goroutines; ns/op is per batch.
func BenchmarkBatch(b *testing.B) {
	for _, size := range []int{10, 100} {
		for _, op := range []string{"SET", "GET"} {
			run := func(b *testing.B, c *Client, k string) {
				batch := c.NewBatch()
				ctx := context.Background()
				sets := make([]Future[struct{}], size)
				gets := make([]Future[string], size)
				for b.Loop() {
					batch.Reset()
					for i := range size {
						if op == "SET" {
							sets[i] = batch.Set(k, benchValue)
						} else {
							gets[i] = batch.Get(k)
						}
					}
					if err := batch.Execute(ctx); err != nil {
						b.Fatal(err)
					}
					for i := range size {
						var err error
						if op == "SET" {
							err = sets[i].Err()
						} else {
							_, err = gets[i].Result()
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			name := op + "x" + strconv.Itoa(size)
			b.Run(name+"/Serial", func(b *testing.B) {
				c, k := benchClient(b, nil)
				b.ReportAllocs()
				run(b, c, k)
			})
			b.Run(name+"/Parallel", func(b *testing.B) {
				c, k := benchClient(b, nil)
				b.ReportAllocs()
				b.SetParallelism(2)
				b.RunParallel(func(pb *testing.PB) {
					batch := c.NewBatch()
					ctx := context.Background()
					for pb.Next() {
						batch.Reset()
						for range size {
							if op == "SET" {
								batch.Set(k, benchValue)
							} else {
								batch.Get(k)
							}
						}
						if err := batch.Execute(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkBatchConnections measures batches of 100 SETs (about 11 KiB,
// large enough for the batch connections) from 64 goroutines, with the
// default batch connections and with NoBatchConnections (every batch on
// the shared connection); ns/op is per batch. Compare the two with
// benchstat -col /conns.
func BenchmarkBatchConnections(b *testing.B) {
	for _, v := range connModes(NoBatchConnections) {
		b.Run("conns="+v.name, func(b *testing.B) {
			c := newClient(b, Options{BatchConnections: v.conns})
			keys := make([]string, 100)
			for i := range keys {
				keys[i] = key(b, strconv.Itoa(i))
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			b.SetParallelism(32) // 64 goroutines on 2 processors
			b.RunParallel(func(pb *testing.PB) {
				batch := c.NewBatch()
				ctx := context.Background()
				for pb.Next() {
					batch.Reset()
					for _, k := range keys {
						batch.Set(k, benchValue)
					}
					if err := batch.Execute(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkClusterHealthyPath measures a Cluster client's GetBytes
// (serial and from many goroutines) and a reused batch of 100 SETs of one
// slot: routing by slot and picking the node on the healthy path.
func BenchmarkClusterHealthyPath(b *testing.B) {
	setup := func(b *testing.B) (*Client, string) {
		c := clusterClient(b, Options{RetryPolicy: &RetryPolicy{}})
		k := key(b)
		if err := c.Set(context.Background(), k, benchValue); err != nil {
			b.Fatal(err)
		}
		return c, k
	}
	b.Run("GetBytes/Serial", func(b *testing.B) {
		c, k := setup(b)
		serialGetBytes(b, context.Background(), c, k)
	})
	b.Run("GetBytes/Parallel", func(b *testing.B) {
		c, k := setup(b)
		parallelGetBytes(b, c, k, parallelism)
	})
	b.Run("BatchOf100Sets/Serial", func(b *testing.B) {
		c, k := setup(b)
		ctx, batch := context.Background(), c.NewBatch()
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			batch.Reset()
			for range 100 {
				batch.Set(k, benchValue)
			}
			if err := batch.Execute(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScriptRun measures a declared read-only script's Run (EVALSHA
// of a GET), serial and from many goroutines, on a standalone and a
// Cluster client with the retry policy enabled: the exchange that may
// fall back to EVAL, its route and its retry bookkeeping.
func BenchmarkScriptRun(b *testing.B) {
	script := NewScript("return redis.call('GET', KEYS[1])", ScriptOptions{ReadOnly: true}).WithRetryCategory(ReadOnly)
	for _, topo := range []struct {
		name    string
		connect func(b *testing.B) *Client
	}{
		{"Standalone", func(b *testing.B) *Client { return newClient(b, Options{RetryPolicy: &RetryPolicy{}}) }},
		{"Cluster", func(b *testing.B) *Client { return clusterClient(b, Options{RetryPolicy: &RetryPolicy{}}) }},
	} {
		setup := func(b *testing.B) (*Client, []string) {
			c, k := topo.connect(b), key(b)
			if err := c.Set(context.Background(), k, benchValue); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			return c, []string{k}
		}
		b.Run(topo.name+"/Serial", func(b *testing.B) {
			c, keys := setup(b)
			ctx := context.Background()
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := script.Run(ctx, c, keys); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(topo.name+"/Parallel", func(b *testing.B) {
			c, keys := setup(b)
			ctx := context.Background()
			b.SetParallelism(parallelism)
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := script.Run(ctx, c, keys); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
