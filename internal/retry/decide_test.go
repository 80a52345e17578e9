package retry

import (
	"testing"

	"github.com/respire-go/respire/catalog"
)

func mustCompile(t testing.TB, s Settings) Policy {
	t.Helper()
	p, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile(%+v) error = %v", s, err)
	}
	return p
}

func TestDecide(t *testing.T) {
	def := Settings{}
	tests := []struct {
		name string
		s    Settings
		in   Input
		want Verdict
	}{
		// The cases the spec calls out.
		{"unwritten INCR retries under default ReadOnly max", def,
			Input{Category: catalog.WriteAccumulating, Failure: LostConnection, Unwritten: true, Attempts: 1}, Retry},
		{"lost-reply INCR does not retry", def,
			Input{Category: catalog.WriteAccumulating, Failure: LostConnection, Attempts: 1}, StopNotPermitted},
		{"lost-reply GET retries", def,
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 1}, Retry},
		{"Never command never retries, even unwritten", def,
			Input{Category: catalog.Never, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopNever},
		{"zero category never retries", def,
			Input{Category: 0, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopNever},
		{"undefined category never retries", Settings{MaxCommandRetryCategory: catalog.ServerAdmin},
			Input{Category: 9, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopNever},
		{"max category Never never retries, even unwritten", Settings{MaxCommandRetryCategory: catalog.Never},
			Input{Category: catalog.Always, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopDisabled},
		{"MaxAttempts 1 never retries", Settings{MaxAttempts: 1},
			Input{Category: catalog.Always, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopDisabled},

		// Failures.
		{"fatal", Settings{MaxCommandRetryCategory: catalog.ServerAdmin},
			Input{Category: catalog.Always, Failure: Fatal, Unwritten: true, Attempts: 1}, StopFatal},
		{"unselectable (BUSY)", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("BUSY"), Attempts: 1}, StopNotSelected},
		{"unselectable (CLUSTERDOWN)", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("CLUSTERDOWN"), Attempts: 1}, StopNotSelected},
		{"undefined failure", def,
			Input{Category: catalog.ReadOnly, Failure: 42, Attempts: 1}, StopNotSelected},
		{"LOADING selected by default", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("LOADING"), Attempts: 1}, Retry},
		{"loading (lower case) unselectable", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("loading"), Attempts: 1}, StopNotSelected},
		{"LOADINGX unselectable", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("LOADINGX"), Attempts: 1}, StopNotSelected},
		{"NOAUTH fatal", def,
			Input{Category: catalog.ReadOnly, Failure: ClassifyCode("NOAUTH"), Attempts: 1}, StopFatal},
		{"TRYAGAIN not selected", Settings{RetryableErrors: Loading},
			Input{Category: catalog.ReadOnly, Failure: TryAgainReply, Attempts: 1}, StopNotSelected},
		{"None selects nothing", Settings{RetryableErrors: None},
			Input{Category: catalog.Always, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopNotSelected},
		{"unwritten needs ConnectionLoss selected", Settings{RetryableErrors: Loading | ReadOnly},
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Unwritten: true, Attempts: 1}, StopNotSelected},

		// Permission.
		{"category at the max", Settings{MaxCommandRetryCategory: catalog.WriteLastWins},
			Input{Category: catalog.WriteLastWins, Failure: MasterDownReply, Attempts: 1}, Retry},
		{"category above the max", Settings{MaxCommandRetryCategory: catalog.WriteLastWins},
			Input{Category: catalog.WriteAccumulating, Failure: MasterDownReply, Attempts: 1}, StopNotPermitted},
		{"ServerAdmin max permits ServerAdmin", Settings{MaxCommandRetryCategory: catalog.ServerAdmin},
			Input{Category: catalog.ServerAdmin, Failure: LostConnection, Attempts: 1}, Retry},
		{"max Always permits Always only", Settings{MaxCommandRetryCategory: catalog.Always},
			Input{Category: catalog.Connection, Failure: LostConnection, Attempts: 1}, StopNotPermitted},
		{"unwritten ServerAdmin under max Always", Settings{MaxCommandRetryCategory: catalog.Always},
			Input{Category: catalog.ServerAdmin, Failure: LostConnection, Unwritten: true, Attempts: 1}, Retry},
		{"Unwritten ignored for a server reply", def,
			Input{Category: catalog.WriteAccumulating, Failure: ReadOnlyReply, Unwritten: true, Attempts: 1}, StopNotPermitted},

		// Attempts.
		{"last attempt allowed", def,
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 2}, Retry},
		{"attempts exhausted", def,
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 3}, StopExhausted},
		{"attempts beyond max", def,
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 4}, StopExhausted},
		{"attempts 0 counts as 1", Settings{MaxAttempts: 2},
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 0}, Retry},
		{"attempts negative counts as 1", Settings{MaxAttempts: 2},
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: -7}, Retry},
		{"attempts 99 of 100", Settings{MaxAttempts: 100},
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 99}, Retry},
		{"attempts 100 of 100", Settings{MaxAttempts: 100},
			Input{Category: catalog.ReadOnly, Failure: LostConnection, Attempts: 100}, StopExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, tt.s)
			if got := p.Decide(tt.in); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDecideDisabledIsNoPolicy(t *testing.T) {
	disabled := []Policy{
		{},
		mustCompile(t, Settings{MaxAttempts: 1, MaxCommandRetryCategory: catalog.ServerAdmin}),
		mustCompile(t, Settings{MaxCommandRetryCategory: catalog.Never}),
	}
	for i, p := range disabled {
		for cat := range catalog.RetryCategory(12) {
			for f := range Failure(9) {
				for _, unwritten := range []bool{false, true} {
					in := Input{Category: cat, Failure: f, Unwritten: unwritten, Attempts: 1}
					if got, want := p.Decide(in), StopDisabled; got != want {
						t.Errorf("policy %d, %+v: got %v, want %v", i, in, got, want)
					}
				}
			}
		}
	}
}

func TestVerdictString(t *testing.T) {
	tests := []struct {
		v    Verdict
		want string
	}{
		{Retry, "retry"},
		{StopDisabled, "policy disabled"},
		{StopNever, "command never retried"},
		{StopFatal, "failure never retried"},
		{StopNotSelected, "failure not selected"},
		{StopNotPermitted, "category not permitted after possible execution"},
		{StopExhausted, "attempts exhausted"},
		{7, "Verdict(7)"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("Verdict(%d).String(): got %q, want %q", uint8(tt.v), got, tt.want)
		}
	}
}
