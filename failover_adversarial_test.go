package respire

// Failover groups used the way an adversarial caller would: Close while an
// attempt runs, a member that answers LOADING.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// TestFailoverCloseDuringAttemptIsNotRetried: Close while fn runs does
// not wait for fn; fn's command then fails with ErrClosed and the
// operation ends with it, without another attempt, whatever the policy.
func TestFailoverCloseDuringAttemptIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, _ := memMembers(t, 0, 1)
		opts := bubbleOpts()
		opts.RetryPolicy = &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff}
		g := fakeGroup(t, members, opts, nil)
		running, gate := make(chan struct{}), make(chan struct{})
		closed := make(chan error, 1)
		go func() {
			<-running
			closed <- g.Close()
		}()
		calls := 0
		_, err := Execute(context.Background(), g, WriteAccumulating, func(ctx context.Context, c *Client) (int64, error) {
			calls++
			if calls == 1 {
				close(running)
				synctest.Wait() // Close has returned, or is blocked
				if len(closed) != 1 {
					t.Error("Close waits for an attempt in progress")
				}
				close(gate)
			}
			return c.Incr(ctx, "k")
		})
		<-gate
		if !errors.Is(err, ErrClosed) || calls != 1 {
			t.Fatalf("err = %v after %d calls, want ErrClosed after 1", err, calls)
		}
		if MayHaveExecuted(err) {
			t.Errorf("MayHaveExecuted(%v) = true: the INCR was never sent", err)
		}
	})
}

// TestFailoverMemberAnsweringLoadingFailsOver: a member whose server
// answers every PING with LOADING (restarted, loading its data) fails its
// probes: its circuit opens and operations move to the next member; once
// it has loaded, one probe after the open duration closes the circuit and
// it becomes active again after the failback grace.
func TestFailoverMemberAnsweringLoadingFailsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		members, srv := memMembers(t, 0, 1)
		c := bubbleClock{time.Now()}
		g := fakeGroup(t, members, bubbleOpts(), nil)
		loading := srv[0].MustAddRule(t, respiretest.Rule{Command: "PING", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.ErrLoading)})
		c.at(350 * milli)
		if got := activeIndex(g); got != 1 {
			t.Fatalf("active %d, want 1 after three PINGs answered LOADING", got)
		}
		v, err := Execute(context.Background(), g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
			return c.Echo(ctx, "where")
		})
		if err != nil || v != "where" || srv[1].Executed("ECHO") != 1 || srv[0].Executed("ECHO") != 0 {
			t.Fatalf("Execute = %q, %v; ECHO ran %d times on member 0 and %d on member 1, want once on member 1",
				v, err, srv[0].Executed("ECHO"), srv[1].Executed("ECHO"))
		}
		loading.Remove()
		// Open for 1 s from ~300 ms, then healthy, then 2 s of grace.
		c.at(3500 * milli)
		if got := activeIndex(g); got != 0 {
			t.Errorf("active %d, want 0 again once it answers PING", got)
		}
	})
}
