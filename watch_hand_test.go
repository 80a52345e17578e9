package respire

import (
	"errors"
	"strconv"
	"testing"
)

// TestWatchCallbackRefusesTransactionCommands: inside a Watch callback,
// tx.Do refuses MULTI, EXEC and DISCARD with ErrInvalidArgument before
// any I/O, because Watch frames the transaction itself. Sent by hand,
// MULTI made the callback's later reads QUEUED and Watch's own frame run
// inside the caller's MULTI: Watch reported the nested-MULTI error while
// the queued INCR had run (or returned nil while a hand-queued INCR never
// ran). UNWATCH and SELECT are refused too: UNWATCH silently dropped the
// conflict check Watch promises, and SELECT made the queued writes run in
// another database than the watched keys'. The counter key on the real
// server is the witness.
func TestWatchCallbackRefusesTransactionCommands(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "counter")
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
	// "select 1": the server reads a word written into the name of a
	// command without subcommands as its argument.
	for name, args := range map[string][]any{"MULTI": nil, "EXEC": nil, "DISCARD": nil, "UNWATCH": nil, "SELECT": {"1"}, "select 1": nil} {
		t.Run(name, func(t *testing.T) {
			before, _ := c.Get(ctx, k)
			var doErr error
			var incr Future[int64]
			err := c.Watch(ctx, func(tx *Tx) error {
				_, doErr = tx.Do(ctx, NewCommand(name), args...)
				incr = tx.Queue().Incr(k)
				return nil
			}, k)
			if !errors.Is(doErr, ErrInvalidArgument) {
				t.Errorf("tx.Do(%s) = %v, want ErrInvalidArgument", name, doErr)
			}
			if err != nil {
				t.Fatalf("Watch = %v, want nil (the refused command changed nothing)", err)
			}
			n, ierr := incr.Result()
			after, gerr := c.Get(ctx, k)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if ierr != nil || after != strconvInc(before) || n == 0 {
				t.Errorf("INCR future = %d, %v; counter %q -> %q: want the INCR applied once and reported", n, ierr, before, after)
			}
		})
	}
}

// strconvInc returns the decimal string of s+1 ("" counts as 0).
func strconvInc(s string) string {
	n, _ := strconv.Atoi(s)
	return strconv.Itoa(n + 1)
}
