package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respiretest"
)

// outcome is what a scenario's call returned.
type outcome struct {
	value string // rendered value, when err is nil
	err   error
}

// scenario is one row of the demo.
type scenario struct {
	id       string
	command  string // command name, for the server's counts and the proxy's rules
	display  string // the command as shown, with "key" for the key
	category respire.RetryCategory
	policy   respire.RetryPolicy
	policyS  string
	fault    respiretest.Action
	times    int // frames the fault applies to
	faultS   string
	setup    func(ctx context.Context, c *respire.Client, key string) error
	call     func(ctx context.Context, c *respire.Client, key string) outcome
	// inspect reads the key's state after the call, for the note.
	inspect func(ctx context.Context, c *respire.Client, key string) (string, error)
	// check returns what differs from the specified behaviour, or "".
	check func(o outcome, state string) string
	// sends, executed and retries are the specified counts; retries by
	// outcome (attempted, succeeded, exhausted).
	sends, executed int64
	retries         map[string]int64
	note            func(state string) string
}

// getValue is a scenario call: GET key.
func getValue(ctx context.Context, c *respire.Client, key string) outcome {
	v, err := c.Get(ctx, key)
	return outcome{value: strconv.Quote(v), err: err}
}

// incrValue is a scenario call: INCR key.
func incrValue(ctx context.Context, c *respire.Client, key string) outcome {
	n, err := c.Incr(ctx, key)
	return outcome{value: strconv.FormatInt(n, 10), err: err}
}

// setValue returns a scenario setup that sets the key to value.
func setValue(value string) func(ctx context.Context, c *respire.Client, key string) error {
	return func(ctx context.Context, c *respire.Client, key string) error { return c.Set(ctx, key, value) }
}

// readValue returns the key's value, for a scenario's note.
func readValue(ctx context.Context, c *respire.Client, key string) (string, error) {
	v, err := c.Get(ctx, key)
	if errors.Is(err, respire.ErrNil) {
		return "(nil)", nil
	}
	return strconv.Quote(v), err
}

// wantValue checks a successful call that returned want.
func wantValue(want string) func(outcome, string) string {
	return func(o outcome, _ string) string {
		if o.err != nil {
			return "want " + want + ", got error"
		}
		if o.value != want {
			return "got " + o.value + ", want " + want
		}
		return ""
	}
}

// scenarios returns the demo's scenarios, each with its specified outcome.
func scenarios() []scenario {
	return []scenario{
		{
			id: "a", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(string) string {
				return "GET ran but its reply was lost; read_only is within the default maximum: resent"
			},
		},
		{
			id: "b", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				var ce *respire.ConnError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want a connection error, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &ce) || !errors.Is(o.err, respire.ErrConnectionLost):
					return "want *respire.ConnError"
				case !respire.MayHaveExecuted(o.err):
					return "MayHaveExecuted says the INCR cannot have run"
				case !strings.Contains(o.err.Error(), "may have been executed"):
					return "error does not say the INCR may have run"
				case state != `"11"`:
					return "value " + state + ", want \"11\""
				}
				return ""
			},
			sends: 1, executed: 1, retries: map[string]int64{},
			note: func(state string) string {
				return "not resent: write_accumulating is above the default maximum read_only; the INCR did run: 10 -> " + state
			},
		},
		{
			id: "c", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteAccumulating},
			policyS: "max write_accumulating",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("12")(o, state); s != "" {
					return s
				}
				if state != `"12"` {
					return "value " + state + ", want \"12\""
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the caller accepted duplicates: resent, the INCR ran twice: 10 -> " + state
			},
		},
		{
			id: "d", command: "SET", display: "SET key first NX", category: respire.WriteChecked,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteChecked},
			policyS: "max write_checked",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			call: func(ctx context.Context, c *respire.Client, key string) outcome {
				r, err := c.SetWithOptions(ctx, key, "first", respire.SetOptions{Condition: respire.SetIfNotExists})
				if r.Written {
					return outcome{value: "set", err: err}
				}
				return outcome{value: "not set", err: err}
			},
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("not set")(o, state); s != "" {
					return s
				}
				if state != `"first"` {
					return "value " + state + `, want "first"`
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the first SET NX wrote the key (now " + state + ") but its reply was lost; the resend re-checked NX and reported \"not set\""
			},
		},
		{
			id: "e", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{MaxAttempts: 5}, policyS: "default, MaxAttempts 5",
			fault: respiretest.Inject(respiretest.ErrLoading), times: 3, faultS: "LOADING x3",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 4, executed: 1, retries: map[string]int64{"attempted": 3, "succeeded": 1},
			note: func(string) string {
				return "the proxy answered LOADING 3 times, backoff (ceilings 10, 20, 40 ms) absorbed the burst; GET ran once"
			},
		},
		{
			id: "f", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.Inject(respiretest.ErrBusy), faultS: "BUSY",
			setup: setValue("hello"),
			call:  getValue,
			check: func(o outcome, _ string) string {
				var se *respire.ServerError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want BUSY, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &se) || se.Code != "BUSY":
					return "want a BUSY *respire.ServerError"
				}
				return ""
			},
			sends: 1, executed: 0, retries: map[string]int64{},
			note: func(string) string {
				return "BUSY is not a selectable failure: never resent"
			},
		},
	}
}
