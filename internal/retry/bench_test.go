package retry

import (
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
)

var (
	sinkVerdict  Verdict
	sinkDuration time.Duration
	sinkBool     bool
)

func BenchmarkDecide(b *testing.B) {
	p := mustCompile(b, Settings{})
	inputs := [...]Input{
		{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 1},
		{Category: catalog.WriteAccumulating, Failure: LostConnection, Unwritten: true, Attempts: 2},
		{Category: catalog.WriteAccumulating, Failure: LoadingReply, Attempts: 1},
		{Category: catalog.ReadOnly, Failure: TryAgainReply, Attempts: 3},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkVerdict = p.Decide(inputs[i%len(inputs)])
		i++
	}
}

func BenchmarkDelay(b *testing.B) {
	p := mustCompile(b, Settings{Jitter: 0.5})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkDuration = p.Delay(i%12+1, 0.37)
		i++
	}
}

func BenchmarkFits(b *testing.B) {
	now := time.Now()
	deadline := now.Add(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		sinkBool = Fits(now, deadline, 10*time.Millisecond)
	}
}

func TestZeroAllocs(t *testing.T) {
	p := mustCompile(t, Settings{Jitter: 0.5})
	now := time.Now()
	in := Input{Category: catalog.WriteAccumulating, Failure: LostConnection, Unwritten: true, Attempts: 1}
	allocs := testing.AllocsPerRun(100, func() {
		sinkVerdict = p.Decide(in)
		sinkDuration = p.Delay(3, 0.25) + p.Ceiling(70)
		sinkBool = Fits(now, now.Add(time.Second), sinkDuration)
	})
	if allocs != 0 {
		t.Errorf("allocations per run: got %v, want 0", allocs)
	}
}
