package retry

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
)

func TestCompileDefaults(t *testing.T) {
	p, err := Compile(Settings{})
	if err != nil {
		t.Fatalf("Compile(Settings{}) error = %v, want nil", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Enabled", p.Enabled(), true},
		{"MaxAttempts", p.MaxAttempts(), 3},
		{"MaxCategory", p.MaxCategory(), catalog.ReadOnly},
		{"Retryable", p.Retryable(), DefaultErrors},
		{"InitialBackoff", p.InitialBackoff(), 10 * time.Millisecond},
		{"MaxBackoff", p.MaxBackoff(), time.Second},
		{"Jitter", p.Jitter(), 1.0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestZeroPolicy(t *testing.T) {
	var p Policy
	checks := []struct {
		name      string
		got, want any
	}{
		{"Enabled", p.Enabled(), false},
		{"MaxAttempts", p.MaxAttempts(), 1},
		{"MaxCategory", p.MaxCategory(), catalog.Never},
		{"Retryable", p.Retryable(), None},
		{"InitialBackoff", p.InitialBackoff(), time.Duration(0)},
		{"MaxBackoff", p.MaxBackoff(), time.Duration(0)},
		{"Jitter", p.Jitter(), 0.0},
		{"Ceiling", p.Ceiling(1), time.Duration(0)},
		{"Delay", p.Delay(1, 0.5), time.Duration(0)},
		{"Decide", p.Decide(Input{Category: catalog.Always, Failure: LostConnection, Unwritten: true, Attempts: 1}), StopDisabled},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestCompileBounds checks each documented bound at its edges.
func TestCompileBounds(t *testing.T) {
	type accessor func(Policy) any
	attempts := func(p Policy) any { return p.MaxAttempts() }
	category := func(p Policy) any { return p.MaxCategory() }
	retryable := func(p Policy) any { return p.Retryable() }
	initial := func(p Policy) any { return p.InitialBackoff() }
	maxB := func(p Policy) any { return p.MaxBackoff() }
	jitter := func(p Policy) any { return p.Jitter() }

	tests := []struct {
		name  string
		s     Settings
		field string   // "" when valid
		get   accessor // checked when valid
		want  any
	}{
		{"MaxAttempts 0 defaults", Settings{MaxAttempts: 0}, "", attempts, 3},
		{"MaxAttempts 1", Settings{MaxAttempts: 1}, "", attempts, 1},
		{"MaxAttempts 100", Settings{MaxAttempts: 100}, "", attempts, 100},
		{"MaxAttempts 101", Settings{MaxAttempts: 101}, "RetryPolicy.MaxAttempts", nil, nil},
		{"MaxAttempts -1", Settings{MaxAttempts: -1}, "RetryPolicy.MaxAttempts", nil, nil},

		{"Category 0 defaults", Settings{}, "", category, catalog.ReadOnly},
		{"Category Never", Settings{MaxCommandRetryCategory: catalog.Never}, "", category, catalog.Never},
		{"Category ServerAdmin", Settings{MaxCommandRetryCategory: catalog.ServerAdmin}, "", category, catalog.ServerAdmin},
		{"Category 9", Settings{MaxCommandRetryCategory: 9}, "RetryPolicy.MaxCommandRetryCategory", nil, nil},
		{"Category 200", Settings{MaxCommandRetryCategory: 200}, "RetryPolicy.MaxCommandRetryCategory", nil, nil},

		{"Errors 0 defaults", Settings{}, "", retryable, DefaultErrors},
		{"Errors None", Settings{RetryableErrors: None}, "", retryable, None},
		{"Errors Loading|ReadOnly", Settings{RetryableErrors: Loading | ReadOnly}, "", retryable, Loading | ReadOnly},
		{"Errors None|Loading", Settings{RetryableErrors: None | Loading}, "RetryPolicy.RetryableErrors", nil, nil},
		{"Errors 1<<5", Settings{RetryableErrors: 1 << 5}, "RetryPolicy.RetryableErrors", nil, nil},
		{"Errors 1<<6", Settings{RetryableErrors: 1 << 6}, "RetryPolicy.RetryableErrors", nil, nil},

		{"InitialBackoff 0 defaults", Settings{}, "", initial, 10 * time.Millisecond},
		{"InitialBackoff NoBackoff", Settings{InitialBackoff: NoBackoff}, "", initial, time.Duration(0)},
		{"InitialBackoff -5ns", Settings{InitialBackoff: -5}, "", initial, time.Duration(0)},
		{"InitialBackoff 1ns", Settings{InitialBackoff: 1}, "", initial, time.Duration(1)},
		{"InitialBackoff 1min", Settings{InitialBackoff: time.Minute, MaxBackoff: time.Minute}, "", initial, time.Minute},
		{"InitialBackoff 1min+1ns", Settings{InitialBackoff: time.Minute + 1, MaxBackoff: time.Minute}, "RetryPolicy.InitialBackoff", nil, nil},
		{"InitialBackoff 2s over default max", Settings{InitialBackoff: 2 * time.Second}, "RetryPolicy.MaxBackoff", nil, nil},

		{"MaxBackoff 0 defaults", Settings{}, "", maxB, time.Second},
		{"MaxBackoff equal to initial", Settings{InitialBackoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}, "", maxB, 20 * time.Millisecond},
		{"MaxBackoff below initial", Settings{InitialBackoff: 20 * time.Millisecond, MaxBackoff: 20*time.Millisecond - 1}, "RetryPolicy.MaxBackoff", nil, nil},
		{"MaxBackoff below default initial", Settings{MaxBackoff: 10*time.Millisecond - 1}, "RetryPolicy.MaxBackoff", nil, nil},
		{"MaxBackoff 1ns with NoBackoff", Settings{InitialBackoff: NoBackoff, MaxBackoff: 1}, "", maxB, time.Duration(1)},
		{"MaxBackoff 1min", Settings{MaxBackoff: time.Minute}, "", maxB, time.Minute},
		{"MaxBackoff 1min+1ns", Settings{MaxBackoff: time.Minute + 1}, "RetryPolicy.MaxBackoff", nil, nil},
		{"MaxBackoff -1ns", Settings{MaxBackoff: -1}, "RetryPolicy.MaxBackoff", nil, nil},

		{"Jitter NaN", Settings{Jitter: math.NaN()}, "RetryPolicy.Jitter", nil, nil},
		{"Jitter +Inf", Settings{Jitter: math.Inf(1)}, "RetryPolicy.Jitter", nil, nil},
		{"Jitter -Inf", Settings{Jitter: math.Inf(-1)}, "RetryPolicy.Jitter", nil, nil},
		{"Jitter -0.5", Settings{Jitter: -0.5}, "RetryPolicy.Jitter", nil, nil},
		{"Jitter -1.0000001", Settings{Jitter: -1.0000001}, "RetryPolicy.Jitter", nil, nil},
		{"Jitter NoJitter", Settings{Jitter: NoJitter}, "", jitter, 0.0},
		{"Jitter 0 defaults", Settings{Jitter: 0}, "", jitter, 1.0},
		{"Jitter -0 defaults", Settings{Jitter: math.Copysign(0, -1)}, "", jitter, 1.0},
		{"Jitter smallest positive", Settings{Jitter: math.SmallestNonzeroFloat64}, "", jitter, math.SmallestNonzeroFloat64},
		{"Jitter 0.25", Settings{Jitter: 0.25}, "", jitter, 0.25},
		{"Jitter 1", Settings{Jitter: 1}, "", jitter, 1.0},
		{"Jitter 1.0000001", Settings{Jitter: 1.0000001}, "RetryPolicy.Jitter", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.s)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Compile error = %v, want nil", err)
				}
				if got := tt.get(p); got != tt.want {
					t.Errorf("got %v, want %v", got, tt.want)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Compile error = %v (%T), want *FieldError", err, err)
			}
			if got, want := fe.Field, tt.field; got != want {
				t.Errorf("Field: got %q, want %q", got, want)
			}
			if fe.Reason == "" {
				t.Errorf("Reason: got empty, want text")
			}
			if got, want := err.Error(), fe.Field+": "+fe.Reason; got != want {
				t.Errorf("Error(): got %q, want %q", got, want)
			}
			if got, want := p, (Policy{}); got != want {
				t.Errorf("policy on error: got %+v, want zero", got)
			}
		})
	}
}

func TestCompileFirstInvalidField(t *testing.T) {
	s := Settings{
		MaxCommandRetryCategory: 9,
		RetryableErrors:         1 << 6,
		InitialBackoff:          2 * time.Minute,
		MaxBackoff:              -1,
		Jitter:                  2,
	}
	fields := []string{
		"RetryPolicy.MaxCommandRetryCategory",
		"RetryPolicy.RetryableErrors",
		"RetryPolicy.InitialBackoff",
		"RetryPolicy.MaxBackoff",
		"RetryPolicy.Jitter",
	}
	for _, want := range fields {
		_, err := Compile(s)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("Compile(%+v) error = %v, want *FieldError", s, err)
		}
		if got := fe.Field; got != want {
			t.Fatalf("Field: got %q, want %q", got, want)
		}
		// Repair the reported field and expect the next one.
		switch want {
		case "RetryPolicy.MaxCommandRetryCategory":
			s.MaxCommandRetryCategory = 0
		case "RetryPolicy.RetryableErrors":
			s.RetryableErrors = 0
		case "RetryPolicy.InitialBackoff":
			s.InitialBackoff = 0
		case "RetryPolicy.MaxBackoff":
			s.MaxBackoff = 0
		case "RetryPolicy.Jitter":
			s.Jitter = 0
		}
	}
	if _, err := Compile(s); err != nil {
		t.Errorf("Compile after repairs error = %v, want nil", err)
	}
}

func TestFieldErrorMessage(t *testing.T) {
	_, err := Compile(Settings{Jitter: math.NaN()})
	if got, want := err.Error(), "RetryPolicy.Jitter: must be finite, from 0 through 1 (or NoJitter)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnabled(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want bool
	}{
		{"defaults", Settings{}, true},
		{"MaxAttempts 1", Settings{MaxAttempts: 1}, false},
		{"MaxAttempts 2", Settings{MaxAttempts: 2}, true},
		{"category Never", Settings{MaxCommandRetryCategory: catalog.Never}, false},
		{"category Always", Settings{MaxCommandRetryCategory: catalog.Always}, true},
		{"errors None", Settings{RetryableErrors: None}, true},
	}
	for _, tt := range tests {
		p, err := Compile(tt.s)
		if err != nil {
			t.Fatalf("%s: Compile error = %v", tt.name, err)
		}
		if got := p.Enabled(); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
