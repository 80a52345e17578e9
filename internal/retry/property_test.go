package retry

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/respire-go/respire/catalog"
)

// The reference model below is written directly from the spec's rules and
// SPEC-NOTES, without reusing the package's helpers or tables.

type refPolicy struct {
	valid               bool
	attempts            int
	maxCat              catalog.RetryCategory
	errs                Errors
	initial, maxBackoff time.Duration
	jitter              float64
}

func refCompile(s Settings) refPolicy {
	r := refPolicy{valid: true}
	bad := func() refPolicy { return refPolicy{} }

	r.attempts = s.MaxAttempts
	if r.attempts == 0 {
		r.attempts = 3
	}
	if r.attempts < 1 || r.attempts > 100 {
		return bad()
	}

	r.maxCat = s.MaxCommandRetryCategory
	if r.maxCat == 0 {
		r.maxCat = catalog.ReadOnly
	}
	if r.maxCat < catalog.Never || r.maxCat > catalog.ServerAdmin {
		return bad()
	}

	const named = ConnectionLoss | Loading | TryAgain | MasterDown | ReadOnly
	switch e := s.RetryableErrors; {
	case e == 0:
		r.errs = named
	case e == None:
		r.errs = None
	case e&named == e:
		r.errs = e
	default:
		return bad()
	}

	switch b := s.InitialBackoff; {
	case b == 0:
		r.initial = 10 * time.Millisecond
	case b < 0:
		r.initial = 0
	case b > time.Minute:
		return bad()
	default:
		r.initial = b
	}

	r.maxBackoff = s.MaxBackoff
	if r.maxBackoff == 0 {
		r.maxBackoff = time.Second
	}
	if r.maxBackoff < 0 || r.maxBackoff > time.Minute || r.maxBackoff < r.initial {
		return bad()
	}

	switch j := s.Jitter; {
	case math.IsNaN(j) || math.IsInf(j, 0):
		return bad()
	case j == -1:
		r.jitter = 0
	case j == 0:
		r.jitter = 1
	case j < 0 || j > 1:
		return bad()
	default:
		r.jitter = j
	}
	return r
}

// refDecide returns whether the spec allows a resend, and the reason in the
// documented order.
func refDecide(r refPolicy, in Input) (bool, Verdict) {
	enabled := r.valid && r.attempts > 1 && r.maxCat != catalog.Never
	known := in.Category >= catalog.Always && in.Category <= catalog.ServerAdmin
	fatal := in.Failure == Fatal
	var flag Errors
	switch in.Failure {
	case LostConnection:
		flag = ConnectionLoss
	case LoadingReply:
		flag = Loading
	case TryAgainReply:
		flag = TryAgain
	case MasterDownReply:
		flag = MasterDown
	case ReadOnlyReply:
		flag = ReadOnly
	}
	selected := flag != 0 && r.errs&flag != 0
	// Only a lost connection can leave a frame definitely unwritten; a
	// server reply proves it was written.
	unwritten := in.Unwritten && in.Failure == LostConnection
	permitted := unwritten || in.Category <= r.maxCat
	attempts := in.Attempts
	if attempts < 1 {
		attempts = 1
	}
	left := attempts < r.attempts

	retry := enabled && known && !fatal && selected && permitted && left
	switch {
	case !enabled:
		return retry, StopDisabled
	case !known:
		return retry, StopNever
	case fatal:
		return retry, StopFatal
	case !selected:
		return retry, StopNotSelected
	case !permitted:
		return retry, StopNotPermitted
	case !left:
		return retry, StopExhausted
	}
	return retry, Retry
}

// drawSettings draws arbitrary Settings. Each field is drawn from its whole
// domain with probability 1/wildOneIn and otherwise from values that are
// valid on their own, so that valid policies stay common.
func drawSettings(t *rapid.T, wildOneIn int) Settings {
	wild := func(label string) bool {
		return rapid.IntRange(1, wildOneIn).Draw(t, label+" wild") == 1
	}
	var s Settings

	if wild("MaxAttempts") {
		s.MaxAttempts = rapid.OneOf(
			rapid.IntRange(-3, 105),
			rapid.SampledFrom([]int{-1, 101, math.MinInt, math.MaxInt}),
		).Draw(t, "MaxAttempts")
	} else {
		s.MaxAttempts = rapid.IntRange(0, 100).Draw(t, "MaxAttempts")
	}

	if wild("MaxCommandRetryCategory") {
		s.MaxCommandRetryCategory = catalog.RetryCategory(rapid.Uint8().Draw(t, "MaxCommandRetryCategory"))
	} else {
		s.MaxCommandRetryCategory = catalog.RetryCategory(rapid.Uint8Range(0, 8).Draw(t, "MaxCommandRetryCategory"))
	}

	if wild("RetryableErrors") {
		s.RetryableErrors = Errors(rapid.OneOf(
			rapid.SampledFrom([]uint8{uint8(None | Loading), 1 << 5, 1 << 6}),
			rapid.Uint8(),
		).Draw(t, "RetryableErrors"))
	} else {
		s.RetryableErrors = Errors(rapid.OneOf(
			rapid.Uint8Range(0, 0x1f),
			rapid.Just(uint8(None)),
		).Draw(t, "RetryableErrors"))
	}

	dur := func(label string, lo, hi time.Duration, special []time.Duration) time.Duration {
		return rapid.OneOf(
			rapid.SampledFrom(special),
			rapid.Custom(func(t *rapid.T) time.Duration {
				return time.Duration(rapid.Int64Range(int64(lo), int64(hi)).Draw(t, "d"))
			}),
		).Draw(t, label)
	}
	if wild("InitialBackoff") {
		s.InitialBackoff = dur("InitialBackoff", -time.Second, 2*time.Minute,
			[]time.Duration{time.Minute + 1, 2 * time.Second, math.MaxInt64, math.MinInt64})
	} else {
		s.InitialBackoff = dur("InitialBackoff", 0, time.Second,
			[]time.Duration{0, NoBackoff, -5, 1, time.Millisecond, time.Second})
	}
	if wild("MaxBackoff") {
		s.MaxBackoff = dur("MaxBackoff", -time.Second, 2*time.Minute,
			[]time.Duration{-1, 1, time.Minute + 1, math.MaxInt64, math.MinInt64})
	} else {
		s.MaxBackoff = dur("MaxBackoff", time.Second, time.Minute,
			[]time.Duration{0, time.Second, time.Minute})
	}

	if wild("Jitter") {
		s.Jitter = rapid.OneOf(
			rapid.SampledFrom([]float64{-0.5, 1.0000001, math.NaN(), math.Inf(1), math.Inf(-1),
				math.Nextafter(1, 2), math.Nextafter(-1, 0), math.Nextafter(-1, -2)}),
			rapid.Float64Range(-2, 2),
			rapid.Float64(),
		).Draw(t, "Jitter")
	} else {
		s.Jitter = rapid.OneOf(
			rapid.SampledFrom([]float64{0, NoJitter, 1, math.SmallestNonzeroFloat64}),
			rapid.Float64Range(0, 1),
		).Draw(t, "Jitter")
	}
	return s
}

func drawInput(t *rapid.T) Input {
	return Input{
		Category: catalog.RetryCategory(rapid.OneOf(
			rapid.Uint8Range(0, 10),
			rapid.Uint8(),
		).Draw(t, "Category")),
		Failure:   Failure(rapid.OneOf(rapid.Uint8Range(0, 8), rapid.Uint8()).Draw(t, "Failure")),
		Unwritten: rapid.Bool().Draw(t, "Unwritten"),
		Attempts:  rapid.IntRange(-2, 105).Draw(t, "Attempts"),
	}
}

func TestPropertyCompileMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSettings(t, 2)
		want := refCompile(s)
		p, err := Compile(s)
		if got := err == nil; got != want.valid {
			t.Fatalf("Compile(%+v) valid: got %v (err %v), want %v", s, got, err, want.valid)
		}
		if !want.valid {
			return
		}
		if got, want := p.MaxAttempts(), want.attempts; got != want {
			t.Errorf("MaxAttempts: got %v, want %v", got, want)
		}
		if got, want := p.MaxCategory(), want.maxCat; got != want {
			t.Errorf("MaxCategory: got %v, want %v", got, want)
		}
		if got, want := p.Retryable(), want.errs; got != want {
			t.Errorf("Retryable: got %v, want %v", got, want)
		}
		if got, want := p.InitialBackoff(), want.initial; got != want {
			t.Errorf("InitialBackoff: got %v, want %v", got, want)
		}
		if got, want := p.MaxBackoff(), want.maxBackoff; got != want {
			t.Errorf("MaxBackoff: got %v, want %v", got, want)
		}
		if got, want := p.Jitter(), want.jitter; got != want {
			t.Errorf("Jitter: got %v, want %v", got, want)
		}
	})
}

func TestPropertyDecideMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := drawSettings(t, 16)
		p, err := Compile(s)
		if err != nil {
			p = Policy{} // an invalid policy is no policy
		}
		ref := refCompile(s)
		check := func(in Input) {
			wantRetry, wantVerdict := refDecide(ref, in)
			got := p.Decide(in)
			if (got == Retry) != wantRetry {
				t.Fatalf("Decide(%+v) under %+v: got %v, want retry=%v", in, s, got, wantRetry)
			}
			if got != wantVerdict {
				t.Fatalf("Decide(%+v) under %+v: got %v, want %v", in, s, got, wantVerdict)
			}
		}

		// One arbitrary input, then every combination of the small domains
		// around the drawn policy's attempt limit.
		check(drawInput(t))
		attempts := []int{-1, 0, 1, ref.attempts - 1, ref.attempts, ref.attempts + 1}
		for cat := range catalog.RetryCategory(11) {
			for f := range Failure(9) {
				for _, unwritten := range []bool{false, true} {
					for _, a := range attempts {
						check(Input{Category: cat, Failure: f, Unwritten: unwritten, Attempts: a})
					}
				}
			}
		}
	})
}

// refCeiling doubles step by step, stopping at the cap before it can
// overflow.
func refCeiling(initial, maxBackoff time.Duration, retry int) time.Duration {
	c := initial
	for i := 1; i < retry && c < maxBackoff; i++ {
		c *= 2
	}
	return min(c, maxBackoff)
}

func drawValidPolicy(t *rapid.T) Policy {
	maxB := time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "MaxBackoff"))
	initial := rapid.OneOf(
		rapid.Just(NoBackoff),
		rapid.Custom(func(t *rapid.T) time.Duration {
			return time.Duration(rapid.Int64Range(1, int64(maxB)).Draw(t, "d"))
		}),
	).Draw(t, "InitialBackoff")
	jitter := rapid.OneOf(
		rapid.SampledFrom([]float64{NoJitter, 1, math.SmallestNonzeroFloat64, math.Nextafter(1, 0)}),
		rapid.Float64Range(0, 1),
	).Draw(t, "Jitter")
	s := Settings{InitialBackoff: initial, MaxBackoff: maxB, Jitter: jitter}
	p, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile(%+v) error = %v", s, err)
	}
	return p
}

func TestPropertyBackoff(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawValidPolicy(t)
		retry := rapid.OneOf(rapid.IntRange(-2, 80), rapid.Int()).Draw(t, "retry")
		u := rapid.OneOf(
			rapid.Float64Range(0, math.Nextafter(1, 0)),
			rapid.SampledFrom([]float64{0, math.Nextafter(1, 0), 1, -1, 2, math.NaN(), math.Inf(1), math.Inf(-1)}),
		).Draw(t, "u")

		c := p.Ceiling(retry)
		if c < 0 || c > p.MaxBackoff() {
			t.Fatalf("Ceiling(%d) = %v, want within [0, %v]", retry, c, p.MaxBackoff())
		}
		if retry >= 1 && retry < 200 {
			if want := refCeiling(p.InitialBackoff(), p.MaxBackoff(), retry); c != want {
				t.Fatalf("Ceiling(%d): got %v, want %v", retry, c, want)
			}
		}
		if retry < math.MaxInt {
			if next := p.Ceiling(retry + 1); next < c {
				t.Fatalf("Ceiling(%d) = %v > Ceiling(%d) = %v, want non-decreasing", retry, c, retry+1, next)
			}
		}

		d := p.Delay(retry, u)
		if low := float64(c) * (1 - p.Jitter()); float64(d) < low || d > c {
			t.Fatalf("Delay(%d, %v) = %v, want within [%v, %v] (jitter %v)", retry, u, d, low, c, p.Jitter())
		}
		if p.Jitter() == 0 && d != c {
			t.Fatalf("Delay(%d, %v) = %v with no jitter, want the ceiling %v", retry, u, d, c)
		}
	})
}
