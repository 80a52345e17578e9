package retry

import (
	"math"
	"testing"
	"time"
)

func TestCeiling(t *testing.T) {
	const ms = time.Millisecond
	def := Settings{}
	tests := []struct {
		name  string
		s     Settings
		retry int
		want  time.Duration
	}{
		{"first", def, 1, 10 * ms},
		{"second doubles", def, 2, 20 * ms},
		{"seventh", def, 7, 640 * ms},
		{"eighth capped", def, 8, time.Second},
		{"retry 0 counts as 1", def, 0, 10 * ms},
		{"negative counts as 1", def, -3, 10 * ms},
		{"62 capped", def, 62, time.Second},
		{"63 capped", def, 63, time.Second},
		{"64 capped", def, 64, time.Second},
		{"huge capped", def, math.MaxInt, time.Second},
		{"NoBackoff", Settings{InitialBackoff: NoBackoff}, 5, 0},
		{"initial equals max", Settings{InitialBackoff: time.Minute, MaxBackoff: time.Minute}, 1, time.Minute},
		{"initial equals max, later", Settings{InitialBackoff: time.Minute, MaxBackoff: time.Minute}, 40, time.Minute},
		{"1ns doubles exactly", Settings{InitialBackoff: 1, MaxBackoff: time.Minute}, 36, 1 << 35},
		{"1ns capped at 1min", Settings{InitialBackoff: 1, MaxBackoff: time.Minute}, 37, time.Minute},
		{"1ns far beyond", Settings{InitialBackoff: 1, MaxBackoff: time.Minute}, 100, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, tt.s)
			if got := p.Ceiling(tt.retry); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDelay(t *testing.T) {
	const ms = time.Millisecond
	full := Settings{}                               // jitter 1
	half := Settings{Jitter: 0.5}                    // jitter 0.5
	none := Settings{Jitter: NoJitter}               // jitter 0
	noBackoff := Settings{InitialBackoff: NoBackoff} // ceiling 0
	tests := []struct {
		name  string
		s     Settings
		retry int
		u     float64
		want  time.Duration
	}{
		{"full jitter u=0", full, 1, 0, 0},
		{"full jitter u=0.5", full, 1, 0.5, 5 * ms},
		{"full jitter u just below 1", full, 1, math.Nextafter(1, 0), 10*ms - 1},
		{"full jitter u=1 clamps to ceiling", full, 1, 1, 10 * ms},
		{"full jitter u=7 clamps to ceiling", full, 1, 7, 10 * ms},
		{"full jitter u=+Inf clamps to ceiling", full, 1, math.Inf(1), 10 * ms},
		{"full jitter u<0 clamps to 0", full, 1, -0.5, 0},
		{"full jitter u=-Inf clamps to 0", full, 1, math.Inf(-1), 0},
		{"full jitter u=NaN counts as 0", full, 1, math.NaN(), 0},
		{"half jitter u=0", half, 2, 0, 10 * ms},
		{"half jitter u=0.5", half, 2, 0.5, 15 * ms},
		{"half jitter u=1", half, 2, 1, 20 * ms},
		{"no jitter is the ceiling", none, 3, 0, 40 * ms},
		{"no jitter ignores u", none, 3, 0.99, 40 * ms},
		{"no backoff", noBackoff, 3, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, tt.s)
			if got := p.Delay(tt.retry, tt.u); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFits(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		deadline time.Time
		delay    time.Duration
		want     bool
	}{
		{"no deadline", time.Time{}, time.Hour, true},
		{"well before", now.Add(time.Second), 10 * time.Millisecond, true},
		{"ends 1ns before", now.Add(time.Second), time.Second - 1, true},
		{"ends exactly at deadline", now.Add(time.Second), time.Second, false},
		{"ends after", now.Add(time.Second), time.Second + 1, false},
		{"zero delay before deadline", now.Add(1), 0, true},
		{"zero delay at deadline", now, 0, false},
		{"deadline passed", now.Add(-time.Second), 0, false},
		{"negative delay counts as zero", now, -time.Second, false},
	}
	for _, tt := range tests {
		if got := Fits(now, tt.deadline, tt.delay); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
