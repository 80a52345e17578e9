package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Operations.
const (
	opGet = "get"
	opSet = "set"
	opMix = "mix" // 80% GET, 20% SET
)

// cell is one scenario: an operation at a concurrency and value size,
// and for the pipeline scenario the number of members per batch.
type cell struct {
	Op          string
	Concurrency int
	ValueBytes  int
	// Batch > 0: every operation is one batch of Batch members, all Op
	// (get or set), sent with the client's batching API (pipeline.go).
	Batch int
}

func (c cell) String() string {
	if c.Batch > 0 {
		return fmt.Sprintf("%s c=%d v=%d b=%d", c.Op, c.Concurrency, c.ValueBytes, c.Batch)
	}
	return fmt.Sprintf("%s c=%d v=%d", c.Op, c.Concurrency, c.ValueBytes)
}

// members is the number of commands one operation of c sends.
func (c cell) members() int { return max(c.Batch, 1) }

// sample is one measurement of one client in one cell. In the pipeline
// scenario an operation is one batch, and Errors counts failed members.
type sample struct {
	Ops      uint64
	Seconds  float64
	Errors   uint64
	FirstErr string

	Mallocs    uint64 // runtime.MemStats.Mallocs delta (whole process)
	AllocBytes uint64 // runtime.MemStats.TotalAlloc delta
	ClientCPU  time.Duration
	ServerCPU  time.Duration
	ClientSys  ioCalls       // read and write system calls of this process
	ServerSys  ioCalls       // read and write system calls of redis-server (zero if unreadable)
	Busy       time.Duration // CPU time used machine-wide (/proc/stat)
	CtxSw      uint64        // voluntary+involuntary context switches of this process
	RunqWait   time.Duration // time this process's threads spent runnable but waiting for a CPU
	GCs        uint32

	Latencies []time.Duration // concurrency 1 only: every operation's latency
}

func (s sample) opsPerSec() float64 { return float64(s.Ops) / s.Seconds }

// perOp divides x by the operation count.
func (s sample) perOp(x float64) float64 {
	if s.Ops == 0 {
		return 0
	}
	return x / float64(s.Ops)
}

// counter is one worker's operation count on its own cache line.
type counter struct {
	n    atomic.Uint64
	errs atomic.Uint64
	_    [48]byte
}

// latBuf holds serial latencies; allocated once, reused by every serial
// measurement.
var latBuf []time.Duration

// keyspace is the set of keys every client uses: "key:%012d", 16 bytes,
// the same names redis-benchmark -r generates.
type keyspace []string

func newKeyspace(n int) keyspace {
	ks := make(keyspace, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("key:%012d", i)
	}
	return ks
}

// env is what a measurement observes outside the client.
type env struct {
	server *serverProbe
	// onStart and onStop, when set, run right after the measured window
	// opens and right after it closes (profiling).
	onStart, onStop func()
	// randomKeys makes every worker draw its keys at random (the cluster
	// scenario) instead of walking the keyspace from its own offset.
	randomKeys bool
}

// snapshot is the state of the counters at one instant.
type snapshot struct {
	at     time.Time
	ops    uint64
	errs   uint64
	mem    runtime.MemStats
	ru     syscall.Rusage
	sys    ioCalls
	busy   time.Duration
	runq   time.Duration
	srvCPU time.Duration
	srvSys ioCalls
}

func (e *env) snap(counters []counter, end bool) snapshot {
	var s snapshot
	readCounters := func() {
		s.at = time.Now()
		for i := range counters {
			s.ops += counters[i].n.Load()
			s.errs += counters[i].errs.Load()
		}
	}
	probe := func() {
		if e.server != nil {
			s.srvCPU = e.server.cpu()
			s.srvSys = e.server.syscalls()
		}
	}
	// Reads that allocate or make system calls stay outside the windows
	// they would disturb: at the start they come first, at the end last.
	sys := func() {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s.ru)
		s.sys = procSyscalls("self")
		s.busy = machineBusy()
	}
	if end {
		readCounters()
		runtime.ReadMemStats(&s.mem)
		sys()
		s.runq = runqueueWait("self") // its file reads after the counters above
		probe()
	} else {
		probe()
		s.runq = runqueueWait("self") // its file reads before the counters below
		sys()
		runtime.ReadMemStats(&s.mem)
		readCounters()
	}
	return s
}

// measure runs c's workload on d for warmup and then duration, and
// returns what happened during duration. The harness's own goroutines do
// not allocate while measuring, so allocations are the client's (plus any
// runtime background work; see docs/performance.md). For a pipeline cell
// every worker makes its pipe and its key buffer before the start.
func (e *env) measure(d driver, c cell, keys keyspace, value string, warmup, duration time.Duration) sample {
	var pl pipeliner
	if c.Batch > 0 {
		var ok bool
		if pl, ok = d.(pipeliner); !ok {
			return sample{Seconds: 1, Errors: 1, FirstErr: "the client has no pipeline driver"}
		}
	}
	counters := make([]counter, c.Concurrency)
	var lat []time.Duration
	if c.Concurrency == 1 {
		if latBuf == nil {
			latBuf = make([]time.Duration, 1<<21)
		}
		lat = latBuf
	}
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		start    = make(chan struct{})
		firstErr atomic.Pointer[string]
	)
	for w := range c.Concurrency {
		wg.Add(1)
		// pick returns the next key and the index that decides MIX's
		// operation: keys in order from a per-worker offset, or (the
		// cluster scenario) drawn uniformly at random.
		var pick func() (string, uint64)
		if e.randomKeys {
			rng := newXorshift(uint64(w) + uint64(time.Now().UnixNano()))
			nk := uint64(len(keys))
			n := uint64(0)
			pick = func() (string, uint64) {
				k := keys[rng.next()%nk]
				n++
				return k, n - 1
			}
		} else {
			i := w * 7919 // spread workers over the keyspace
			pick = func() (string, uint64) {
				k := keys[i%len(keys)]
				i++
				return k, uint64(i)
			}
		}
		var p pipe
		var batch []string
		if pl != nil {
			p, batch = pl.newPipe(c.Batch), make([]string, c.Batch)
		}
		go func() {
			defer wg.Done()
			ctx := context.Background()
			ctr := &counters[w]
			n := uint64(0)
			<-start
			for !stop.Load() {
				var key string
				var mix uint64
				if p != nil {
					for j := range batch {
						batch[j], _ = pick()
					}
				} else {
					key, mix = pick()
				}
				var t0 time.Time
				if lat != nil {
					t0 = time.Now()
				}
				var err error
				failed := 1
				switch {
				case p != nil && c.Op == opGet:
					_, failed, err = p.get(ctx, batch)
				case p != nil:
					failed, err = p.set(ctx, batch, value)
				case c.Op == opGet || (c.Op == opMix && mix%5 != 0):
					_, err = d.get(ctx, key)
				default:
					err = d.set(ctx, key, value)
				}
				if lat != nil && n < uint64(len(lat)) {
					lat[n] = time.Since(t0)
				}
				n++
				if err != nil {
					ctr.errs.Add(uint64(max(failed, 1)))
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
				ctr.n.Add(1)
			}
		}()
	}
	close(start)
	time.Sleep(warmup)
	s0 := e.snap(counters, false)
	if e.onStart != nil {
		e.onStart()
	}
	time.Sleep(duration)
	s1 := e.snap(counters, true)
	if e.onStop != nil {
		e.onStop()
	}
	stop.Store(true)
	wg.Wait()

	out := sample{
		Ops:        s1.ops - s0.ops,
		Errors:     s1.errs - s0.errs,
		Seconds:    s1.at.Sub(s0.at).Seconds(),
		Mallocs:    s1.mem.Mallocs - s0.mem.Mallocs,
		AllocBytes: s1.mem.TotalAlloc - s0.mem.TotalAlloc,
		ClientCPU:  rusageCPU(&s1.ru) - rusageCPU(&s0.ru),
		ServerCPU:  s1.srvCPU - s0.srvCPU,
		ClientSys:  s1.sys.sub(s0.sys),
		ServerSys:  s1.srvSys.sub(s0.srvSys),
		Busy:       s1.busy - s0.busy,
		CtxSw:      uint64(s1.ru.Nvcsw+s1.ru.Nivcsw) - uint64(s0.ru.Nvcsw+s0.ru.Nivcsw),
		RunqWait:   s1.runq - s0.runq,
		GCs:        s1.mem.NumGC - s0.mem.NumGC,
	}
	if p := firstErr.Load(); p != nil {
		out.FirstErr = *p
	}
	if lat != nil {
		lo, hi := min(s0.ops, uint64(len(lat))), min(s1.ops, uint64(len(lat)))
		out.Latencies = slices.Clone(lat[lo:hi])
	}
	return out
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ioCalls counts read and write system calls (syscr and syscw of
// /proc/PID/io). Reads include those that found nothing (EAGAIN) before
// the goroutine parked on the poller.
type ioCalls struct{ Reads, Writes uint64 }

func (a ioCalls) sub(b ioCalls) ioCalls { return ioCalls{a.Reads - b.Reads, a.Writes - b.Writes} }

// procSyscalls returns the process's read and write system calls so far,
// or zero when unreadable.
func procSyscalls(pid string) ioCalls {
	var n ioCalls
	b, err := os.ReadFile("/proc/" + pid + "/io")
	if err != nil {
		return n
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		x, _ := strconv.ParseUint(v, 10, 64)
		switch k {
		case "syscr":
			n.Reads = x
		case "syscw":
			n.Writes = x
		}
	}
	return n
}

// machineBusy returns the CPU time all processes have used so far
// (user, nice, system, irq, softirq and steal of /proc/stat).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		x, _ := strconv.ParseUint(f[i], 10, 64)
		ticks += x
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// runqueueWait returns the time the threads of process pid have spent
// runnable but waiting on a CPU's run queue so far (the second field of
// /proc/PID/task/TID/schedstat), or zero when unreadable. Threads that
// exited are not counted; the Go runtime keeps its threads.
func runqueueWait(pid string) time.Duration {
	dir := "/proc/" + pid + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var ns uint64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			x, _ := strconv.ParseUint(f[1], 10, 64)
			ns += x
		}
	}
	return time.Duration(ns)
}

// idleCores is the machine's idle CPU during the sample, in cores.
func (s sample) idleCores() float64 {
	if s.Busy == 0 {
		return 0
	}
	return max(0, float64(runtime.NumCPU())-s.Busy.Seconds()/s.Seconds)
}

// runqueueCores is the average number of this process's threads that
// were runnable but waiting for a CPU during the sample.
func (s sample) runqueueCores() float64 { return s.RunqWait.Seconds() / s.Seconds }

// foreignCores is the CPU used during the sample by everything other than
// this process and the server, in cores.
func (s sample) foreignCores() float64 {
	if s.Busy == 0 {
		return 0
	}
	return max(0, (s.Busy-s.ClientCPU-s.ServerCPU).Seconds()/s.Seconds)
}

// percentile returns the p-th percentile (0..1) of ds, sorting ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(p * float64(len(ds)-1))
	return ds[i]
}
