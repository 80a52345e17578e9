package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
)

// runProfiles measures each chosen scenario once per chosen client while
// writing, into cfg.profileDir:
//
//	CLIENT-OP-cN-vS.cpu.prof          CPU profile of the measured window
//	CLIENT-OP-cN-vS.allocs.prof       allocations (use -base ….allocs.base.prof)
//	CLIENT-OP-cN-vS.mutex.prof        mutex contention (use -base ….mutex.base.prof)
//
// and prints the same per-operation costs as the comparison.
func runProfiles(ctx context.Context, cfg config, e *env, keys keyspace) error {
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		return err
	}
	runtime.SetMutexProfileFraction(10)
	defer runtime.SetMutexProfileFraction(0)
	for _, c := range cfg.profile {
		value := strings.Repeat("v", c.ValueBytes)
		if err := e.server.load(ctx, keys, value); err != nil {
			return err
		}
		for _, name := range cfg.profileClients {
			d, err := cfg.connect(ctx, name)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if err := check(ctx, e.server, d, keys, c.ValueBytes); err != nil {
				d.close()
				return fmt.Errorf("%s: %v", name, err)
			}
			base := filepath.Join(cfg.profileDir, fmt.Sprintf("%s-%s-c%d-v%d", name, c.Op, c.Concurrency, c.ValueBytes))
			var cpuFile *os.File
			var hookErr error
			e.onStart = func() {
				if hookErr = writeProfile("allocs", base+".allocs.base.prof"); hookErr != nil {
					return
				}
				if hookErr = writeProfile("mutex", base+".mutex.base.prof"); hookErr != nil {
					return
				}
				if cpuFile, hookErr = os.Create(base + ".cpu.prof"); hookErr != nil {
					return
				}
				hookErr = pprof.StartCPUProfile(cpuFile)
			}
			e.onStop = func() {
				pprof.StopCPUProfile()
				if cpuFile != nil {
					_ = cpuFile.Close()
				}
				if hookErr == nil {
					hookErr = writeProfile("allocs", base+".allocs.prof")
				}
				if hookErr == nil {
					hookErr = writeProfile("mutex", base+".mutex.prof")
				}
			}
			runtime.GC()
			s := e.measure(d, c, keys, value, cfg.warmup, cfg.profileTime)
			e.onStart, e.onStop = nil, nil
			d.close()
			if hookErr != nil {
				return hookErr
			}
			fmt.Printf("%-22s %-16s %9.0f ops/s  allocs/op %.2f  B/op %.0f  client CPU %.2f µs/op  server CPU %.2f µs/op  client reads/writes per op %.3f/%.3f  server reads/writes per op %.3f/%.3f  ctx switches/op %.3f  others' load %.2f cores  idle %.2f cores  client run-queue wait %.2f threads  errors %d\n",
				name, c, s.opsPerSec(), s.perOp(float64(s.Mallocs)), s.perOp(float64(s.AllocBytes)),
				s.perOp(float64(s.ClientCPU.Nanoseconds())/1e3), s.perOp(float64(s.ServerCPU.Nanoseconds())/1e3),
				s.perOp(float64(s.ClientSys.Reads)), s.perOp(float64(s.ClientSys.Writes)),
				s.perOp(float64(s.ServerSys.Reads)), s.perOp(float64(s.ServerSys.Writes)), s.perOp(float64(s.CtxSw)), s.foreignCores(), s.idleCores(), s.runqueueCores(), s.Errors)
			fmt.Printf("  profiles: %s.{cpu,allocs,allocs.base,mutex,mutex.base}.prof\n", base)
		}
	}
	return nil
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
