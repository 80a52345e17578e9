package respire

// Scripts run by a user whose ACL refuses EVALSHA but allows EVAL, on a
// real server, with users of unique names that the tests delete.

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// A user whose ACL refuses EVALSHA (or EVALSHA_RO) but allows EVAL (or
// EVAL_RO) runs its scripts: the refusal, which the server answers
// without running the script, is followed by EVAL in the same Run, and
// the client remembers it, so the script body runs exactly once per Run
// and only the first Run pays a refused EVALSHA. The script is cached on
// the server: the fallback is the ACL's, not NOSCRIPT's.
func TestACLScriptEvalshaRefused(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	for _, tc := range []struct {
		name, sha, eval string
		readOnly        bool
	}{
		{"EVALSHA", "evalsha", "eval", false},
		{"EVALSHA_RO", "evalsha_ro", "eval_ro", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", "-"+tc.sha)
			c := newClient(t, Options{Username: user, Password: pw})
			ctx := testCtx(t)
			k := key(t, "n")
			src := "return redis.call('INCR', KEYS[1])"
			if tc.readOnly {
				src = "return redis.call('GET', KEYS[1])"
			}
			s := NewScript(src+" -- "+scriptNonce(t), ScriptOptions{ReadOnly: tc.readOnly})
			if got, err := admin(t, addr, "SCRIPT", "LOAD", s.src).String(); err != nil || got != s.SHA() {
				t.Fatalf("SCRIPT LOAD = %q, %v", got, err)
			}
			refused, sent := commandStat(t, addr, tc.sha, "rejected_calls"), commandCalls(t, addr, tc.sha)
			evals := commandCalls(t, addr, tc.eval)
			const runs = 3
			for i := 1; i <= runs; i++ {
				r, err := s.Run(ctx, c, []string{k})
				if err != nil {
					t.Fatalf("Run %d = %v, want the script's reply through %s", i, err, strings.ToUpper(tc.eval))
				}
				if tc.readOnly {
					if _, err := r.String(); !errors.Is(err, ErrNil) {
						t.Errorf("Run %d = %v, want the missing key's nil", i, r)
					}
				} else if n, err := r.Int64(); err != nil || n != int64(i) {
					t.Errorf("Run %d = %v, %v; want %d: the script ran once per Run", i, r, err, i)
				}
			}
			if n := commandCalls(t, addr, tc.eval) - evals; n != runs {
				t.Errorf("%s ran %d times for %d Runs, want once each", tc.eval, n, runs)
			}
			if n := commandCalls(t, addr, tc.sha) - sent; n != 0 {
				t.Errorf("%s ran %d times, want none (refused)", tc.sha, n)
			}
			if n := commandStat(t, addr, tc.sha, "rejected_calls") - refused; n != 1 {
				t.Errorf("%s refused %d times for %d Runs, want once (remembered)", tc.sha, n, runs)
			}
		})
	}

	// EVAL refused too: the caller gets the refusal of EVAL, which the
	// server sent once, and which counts as possibly executed, as every
	// failed Run.
	t.Run("EVAL refused too", func(t *testing.T) {
		user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", "-evalsha", "-eval")
		c := newClient(t, Options{Username: user, Password: pw})
		ctx := testCtx(t)
		s := NewScript("return 1 -- "+scriptNonce(t), ScriptOptions{})
		refused := commandStat(t, addr, "eval", "rejected_calls")
		for i := range 2 {
			_, err := s.Run(ctx, c, nil)
			if !errors.Is(err, &ServerError{Code: "NOPERM", Command: "EVAL"}) || !MayHaveExecuted(err) {
				t.Errorf("Run %d = %v, want the server's NOPERM for EVAL, possibly executed", i, err)
			}
		}
		if n := commandStat(t, addr, "eval", "rejected_calls") - refused; n != 2 {
			t.Errorf("EVAL refused %d times for 2 Runs, want once each", n)
		}
	})

	// A NOPERM that is not the refusal of EVALSHA itself (here, of a key
	// the user may not touch) reaches the caller: no EVAL follows.
	t.Run("key refused", func(t *testing.T) {
		user, pw := aclUser(t, []string{addr}, "~other:*", "&*", "+@all")
		c := newClient(t, Options{Username: user, Password: pw})
		ctx := testCtx(t)
		s := NewScript("return 1 -- "+scriptNonce(t), ScriptOptions{})
		evals := commandSeen(t, addr, "eval")
		_, err := s.Run(ctx, c, []string{key(t, strconv.Itoa(0))})
		if !errors.Is(err, &ServerError{Code: "NOPERM", Command: "EVALSHA"}) {
			t.Errorf("Run = %v, want the server's NOPERM for EVALSHA's key", err)
		}
		if n := commandSeen(t, addr, "eval") - evals; n != 0 {
			t.Errorf("EVAL sent %d times after a refused key, want none", n)
		}
	})
}
