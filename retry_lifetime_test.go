package respire

// Lifetime of retried immediate commands, in virtual time: backoff
// schedule, one deadline across attempts, cancellation during backoff, late
// replies after the caller has left, and pooled state after return. Every
// test runs inside a testing/synctest bubble with the embedded server
// reached over net.Pipe, so delays are observed exactly and a goroutine
// left blocked fails the test.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/respiretest"
)

// retrySynctest runs f in a synctest bubble with sync.Pools emptied before
// and after (two garbage collections empty a sync.Pool). Pooled frames keep
// the channel and timer they were made with, which belong to the bubble
// that made them; a frame reused in another bubble crashes the test binary
// ("receive on synctest channel from outside bubble"). Clients now pool
// frames per client; this guards the package-wide pool and any other
// shared pool.
func retrySynctest(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	testenv.Bubble(t, f)
}

// retryArrivals records, relative to a start time set by the test, when
// each frame a rule applies to reached the server.
type retryArrivals struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
}

func (a *retryArrivals) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.start, a.at = time.Now(), nil
}

func (a *retryArrivals) onReceive([]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at = append(a.at, time.Since(a.start))
}

func (a *retryArrivals) get() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Duration(nil), a.at...)
}

func retryEqualDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const ms = time.Millisecond

// The delay ceiling starts at InitialBackoff and doubles after each
// attempt, capped at MaxBackoff; with NoJitter each delay is exactly the
// ceiling.
func TestRetryBackoffDoublesFromInitialCappedAtMaxBackoff(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		var arr retryArrivals
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.ErrLoading), OnReceive: arr.onReceive})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
			MaxAttempts: 6, InitialBackoff: 100 * ms, MaxBackoff: 300 * ms, Jitter: NoJitter,
		}})
		arr.reset()
		_, err := c.Get(context.Background(), "k")
		want := []time.Duration{0, 100 * ms, 300 * ms, 600 * ms, 900 * ms, 1200 * ms}
		if got := arr.get(); !retryEqualDurations(got, want) {
			t.Errorf("sends at %v, want %v (delays 100, 200, then capped at 300)", got, want)
		}
		retryWantAttempts(t, err, 6)
		if !errors.Is(err, &ServerError{Code: "LOADING"}) {
			t.Errorf("err = %v, want it to wrap the last LOADING reply", err)
		}
	})
}

// NoBackoff resends at once; the default Jitter (1) draws each delay from
// [0, ceiling]; a partial Jitter from [ceiling*(1-Jitter), ceiling].
func TestRetryBackoffJitterRange(t *testing.T) {
	tests := []struct {
		name   string
		policy RetryPolicy
		// low and high bound the delay before resend i (1-based).
		low, high func(i int) time.Duration
	}{
		{"NoBackoff", RetryPolicy{MaxAttempts: 4, InitialBackoff: NoBackoff},
			func(int) time.Duration { return 0 }, func(int) time.Duration { return 0 }},
		{"DefaultJitter", RetryPolicy{MaxAttempts: 4, InitialBackoff: 80 * ms},
			func(int) time.Duration { return 0 }, func(i int) time.Duration { return 80 * ms << (i - 1) }},
		{"HalfJitter", RetryPolicy{MaxAttempts: 4, InitialBackoff: 80 * ms, Jitter: 0.5},
			func(i int) time.Duration { return 40 * ms << (i - 1) }, func(i int) time.Duration { return 80 * ms << (i - 1) }},
		{"DefaultInitialBackoff", RetryPolicy{MaxAttempts: 4, Jitter: NoJitter},
			func(i int) time.Duration { return 10 * ms << (i - 1) }, func(i int) time.Duration { return 10 * ms << (i - 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				var arr retryArrivals
				s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
					Action: respiretest.Inject(respiretest.ErrLoading), OnReceive: arr.onReceive})
				p := tt.policy
				c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &p})
				distinct := map[time.Duration]bool{}
				for range 20 {
					arr.reset()
					_, err := c.Get(context.Background(), "k")
					retryWantAttempts(t, err, 4)
					at := arr.get()
					if len(at) != 4 {
						t.Fatalf("%d sends, want 4", len(at))
					}
					for i := 1; i < len(at); i++ {
						d := at[i] - at[i-1]
						distinct[d] = true
						if d < tt.low(i) || d > tt.high(i) {
							t.Fatalf("delay before resend %d = %v, want in [%v, %v]", i, d, tt.low(i), tt.high(i))
						}
					}
				}
				if tt.low(1) != tt.high(1) && len(distinct) < 10 {
					t.Errorf("only %d distinct delays in 60 jittered ones: delays are not randomized", len(distinct))
				}
			})
		})
	}
}

// One deadline (CommandTimeout, or the context's) covers every attempt and
// delay. A backoff that cannot end before the deadline is not started: the
// call returns the last failure at once, wrapped with the attempt count,
// never a timeout the deadline did not produce.
func TestRetryBackoffThatCannotFitReturnsLastFailure(t *testing.T) {
	tests := []struct {
		name         string
		timeout      time.Duration // CommandTimeout
		ctxTimeout   time.Duration // 0: none
		wantAttempts int
		wantElapsed  time.Duration
	}{
		// Sends at 0 and 100; the next delay (200) would end at 300 > 250.
		{"CommandTimeout", 250 * ms, 0, 2, 100 * ms},
		{"ContextDeadline", NoTimeout, 250 * ms, 2, 100 * ms},
		// The context's deadline wins over CommandTimeout.
		{"ContextDeadlineOverCommandTimeout", 10 * time.Second, 250 * ms, 2, 100 * ms},
		// A delay ending exactly at the deadline leaves no time to send.
		{"EndsAtDeadline", 300 * ms, 0, 2, 100 * ms},
		// Sends at 0, 100, 300; the next delay (400) would end at 700.
		{"JustFits", 301 * ms, 0, 3, 300 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
					Action: respiretest.Inject(respiretest.ErrLoading)})
				c := retryMemClient(t, s, Options{CommandTimeout: tt.timeout, RetryPolicy: &RetryPolicy{
					MaxAttempts: 10, InitialBackoff: 100 * ms, MaxBackoff: time.Minute, Jitter: NoJitter,
				}})
				ctx := context.Background()
				if tt.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
					defer cancel()
				}
				start := time.Now()
				_, err := c.Get(ctx, "k")
				if got := time.Since(start); got != tt.wantElapsed {
					t.Errorf("returned after %v, want %v (without waiting for a delay that cannot fit)", got, tt.wantElapsed)
				}
				retryWantAttempts(t, err, tt.wantAttempts)
				if get.Matched() != tt.wantAttempts {
					t.Errorf("server saw %d GETs, want %d", get.Matched(), tt.wantAttempts)
				}
				var se *ServerError
				if !errors.As(err, &se) || se.Code != "LOADING" {
					t.Errorf("err = %v, want the last LOADING reply", err)
				}
				if errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v matches context.DeadlineExceeded: a timeout the deadline did not produce", err)
				}
				var ce *ContextError
				if errors.As(err, &ce) {
					t.Errorf("err = %v contains a *ContextError", err)
				}
			})
		})
	}
}

// Cancelling the context while the caller waits out a backoff ends the call
// at once with the caller's error (and the last failure), and the command is
// never resent.
func TestRetryCancellationDuringBackoffStopsResend(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.ErrLoading)})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
			InitialBackoff: time.Second, Jitter: NoJitter,
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		errc := getAsync(ctx, c, "k")
		<-get.Received()
		synctest.Wait() // the caller is now waiting out the 1 s backoff
		if got := time.Since(start); got != 0 {
			t.Fatalf("backoff started after %v", got)
		}
		cancel()
		err := <-errc
		if got := time.Since(start); got != 0 {
			t.Errorf("cancelled call returned after %v, want at once", got)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the caller's context.Canceled", err)
		}
		if !errors.Is(err, &ServerError{Code: "LOADING"}) {
			t.Errorf("err = %v, want it to keep the last failure (LOADING)", err)
		}
		// Sent describes the call: its first attempt reached the server
		// (the LOADING reply proves it), so it may have run.
		var ce *ContextError
		if !errors.As(err, &ce) || !ce.Sent || !MayHaveExecuted(err) {
			t.Errorf("err = %v, want a *ContextError with Sent true (the first attempt was written)", err)
		}
		retryWantAttempts(t, err, 1)
		time.Sleep(10 * time.Second) // let any stray backoff timer fire
		synctest.Wait()
		if n := get.Matched(); n != 1 {
			t.Errorf("server saw %d GETs, want 1: the cancelled call was resent", n)
		}
	})
}

// Without a backoff delay, cancellation is still checked right before the
// resend: a context cancelled while the first attempt fails never sends
// again.
func TestRetryCancellationCheckedBeforeImmediateResend(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.ErrLoading), OnReceive: func([]string) { cancel() }})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
			MaxAttempts: 5, InitialBackoff: NoBackoff,
		}})
		_, err := c.Get(ctx, "k")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		synctest.Wait()
		if n := get.Matched(); n != 1 {
			t.Errorf("server saw %d GETs, want 1: resent after cancellation", n)
		}
	})
}

// One deadline spans every attempt: a resend whose reply is late fails when
// the original deadline passes (not a fresh CommandTimeout later), and the
// reply that arrives afterwards completes neither the ended call nor the
// next caller's command on the same connection.
func TestRetryOneDeadlineSpansAttemptsAndLateReplyCannotComplete(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		s.Engine().Set("k1", "v1")
		s.Engine().Set("k2", "v2")
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "k1", Action: respiretest.Inject(respiretest.ErrLoading)})
		held := s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "k1", Nth: 2, Action: respiretest.Hold})
		c := retryMemClient(t, s, Options{CommandTimeout: 250 * ms, RetryPolicy: &RetryPolicy{
			InitialBackoff: 100 * ms, Jitter: NoJitter,
		}})
		start := time.Now()
		_, err := c.Get(context.Background(), "k1")
		if got := time.Since(start); got != 250*ms {
			t.Errorf("returned after %v, want 250ms: the deadline must span both attempts", got)
		}
		retryWantAttempts(t, err, 2)
		var ce *ContextError
		if !errors.As(err, &ce) || !ce.Sent || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a sent *ContextError matching DeadlineExceeded", err)
		}
		msg := err.Error()
		select {
		case <-held.Received():
		default:
			t.Fatal("the resend never reached the server")
		}

		// A newer caller's GET queues behind the held late reply.
		type result struct {
			v   string
			err error
		}
		next := make(chan result, 1)
		go func() {
			v, err := c.Get(context.Background(), "k2")
			next <- result{v, err}
		}()
		synctest.Wait()
		held.Release()
		r := <-next
		if r.err != nil || r.v != "v2" {
			t.Errorf("next caller's GET k2 = %q, %v; want \"v2\", nil (the late reply of k1 must not complete it)", r.v, r.err)
		}
		if err.Error() != msg {
			t.Errorf("terminal error changed to %v", err)
		}
		if v, err := c.Get(context.Background(), "k1"); err != nil || v != "v1" {
			t.Errorf("later GET k1 = %q, %v; want \"v1\"", v, err)
		}
		retryCheckPoolClean(t, c)
	})
}

// A retried reply held past the caller's cancellation neither completes a
// newer caller's command nor changes the cancelled call's result; the
// connection keeps pairing replies in order afterwards.
func TestRetryLateRetriedReplyCannotCompleteNewerCaller(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		s.Engine().Set("k1", "v1")
		s.Engine().Set("k2", "v2")
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "k1", Action: respiretest.Inject(respiretest.ErrTryAgain)})
		held := s.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: "k1", Nth: 2, Action: respiretest.Hold})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
			InitialBackoff: 100 * ms, Jitter: NoJitter,
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		dst := make([]byte, 0, 64)
		var got []byte
		go func() {
			var err error
			got, err = c.GetBytes(ctx, "k1", dst)
			errc <- err
		}()
		<-held.Received()
		synctest.Wait() // the resend was accepted; its reply is held
		cancel()
		err := <-errc
		retryWantAttempts(t, err, 2)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if len(got) != 0 {
			t.Fatalf("cancelled GetBytes returned %q", got)
		}
		msg := err.Error()

		next := make(chan string, 1)
		go func() {
			b, err := c.GetBytes(context.Background(), "k2", make([]byte, 0, 64))
			if err != nil {
				next <- "error: " + err.Error()
				return
			}
			next <- string(b)
		}()
		synctest.Wait()
		held.Release()
		if v := <-next; v != "v2" {
			t.Errorf("next caller's GET k2 = %q, want \"v2\"", v)
		}
		synctest.Wait()
		if err.Error() != msg || len(got) != 0 || string(dst[:cap(dst)][:2]) == "v1" {
			t.Errorf("cancelled call's result changed after the late reply: err %v, got %q", err, got)
		}
		if v, err := c.Get(context.Background(), "k1"); err != nil || v != "v1" {
			t.Errorf("later GET k1 = %q, %v; want \"v1\"", v, err)
		}
		retryCheckPoolClean(t, c)
	})
}

// retryCheckPoolClean takes frames from c's pool after retried calls have
// returned and their late replies drained: none may still hold a command,
// a reply, an error or a connection failure of a finished call.
func retryCheckPoolClean(t *testing.T, c *Client) {
	t.Helper()
	var fs []*wire.Frame
	for range 16 {
		f := c.frames.Get()
		fs = append(fs, f)
		if len(f.Buf) != 0 || f.IsErr || len(f.ErrReply) != 0 || f.Err != nil || f.Value.Type != 0 ||
			len(f.Bytes) != 0 || f.Int != 0 || f.Null || f.Values != nil {
			t.Errorf("pooled frame holds state of a finished call: buf %q, err reply %q, conn err %v, value %v",
				f.Buf, f.ErrReply, f.Err, f.Value)
		}
	}
	for _, f := range fs {
		f.Release()
	}
}

// Close ends a retry that waits out its backoff at once, with an error
// matching ErrClosed that keeps the last failure; the resend that never
// happened is not counted as an attempt.
func TestRetryCloseEndsBackoffAtOnce(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.ErrLoading)})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
			MaxAttempts: 5, InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: NoJitter,
		}})
		start := time.Now()
		errc := getAsync(context.Background(), c, "k")
		<-get.Received()
		synctest.Wait() // the caller is waiting out its 1-minute backoff
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		err := <-errc
		if got := time.Since(start); got != 0 {
			t.Errorf("Get returned %v after Close began, want at once", got)
		}
		if !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v, want it to match ErrClosed", err)
		}
		if !errors.Is(err, &ServerError{Code: "LOADING"}) {
			t.Errorf("err = %v, want it to keep the last failure (LOADING)", err)
		}
		// One line that says "respire:" once.
		if want := "respire: GET: failed after 1 attempt: client closed (the command may have been executed) while waiting to retry after: " + respiretest.ErrLoading; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		retryWantAttempts(t, err, 1)
		if n := get.Matched(); n != 1 {
			t.Errorf("server saw %d GETs, want 1", n)
		}
	})
}

// A lost INCR reply, then the call ends during a backoff (cancelled, or
// the client closed): the INCR ran, and every answer the error gives says
// it may have, also when the last attempt before the backoff was a
// refused dial that sent nothing.
func TestRetryEndedAfterLostReplySaysItMayHaveRun(t *testing.T) {
	for _, closeClient := range []bool{false, true} {
		for _, refusedLast := range []bool{false, true} {
			name := map[bool]string{false: "Cancel", true: "Close"}[closeClient] +
				map[bool]string{false: "/AfterLostReply", true: "/AfterRefusedResend"}[refusedLast]
			t.Run(name, func(t *testing.T) {
				retrySynctest(t, func(t *testing.T) {
					retryEndedAfterLostReply(t, closeClient, refusedLast)
				})
			})
		}
	}
}

func retryEndedAfterLostReply(t *testing.T, closeClient, refusedLast bool) {
	s := respiretest.NewServer(t)
	incr := s.MustAddRule(t, respiretest.Rule{Command: "INCR", Action: respiretest.DropAfterForward})
	c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{
		MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: NoJitter,
	}})
	if refusedLast {
		// The resend after the first backoff finds no connection.
		if err := s.RefuseDials(100); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Incr(ctx, "n")
		errc <- err
	}()
	<-incr.Received()
	synctest.Wait() // the lost reply is seen and the first backoff started
	if refusedLast {
		time.Sleep(90 * time.Second) // the refused resend, then halfway through the second backoff
		synctest.Wait()
	}
	if closeClient {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	} else {
		cancel()
	}
	err := <-errc
	want := error(context.Canceled)
	if closeClient {
		want = ErrClosed
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want it to match %v", err, want)
	}
	retryWantAttempts(t, err, 1+b2i(refusedLast))
	if !MayHaveExecuted(err) {
		t.Errorf("MayHaveExecuted(%v) = false, want true", err)
	}
	walkErrors(err, func(e error) {
		switch e := e.(type) {
		case *ConnError:
			if e.Unwritten {
				t.Errorf("err = %v holds a *ConnError with Unwritten true: the INCR ran", err)
			}
		case *ContextError:
			if !e.Sent {
				t.Errorf("err = %v holds a *ContextError with Sent false: the INCR ran", err)
			}
		}
	})
	if got, _ := s.Engine().Get("n"); got != "1" {
		t.Errorf("n = %q, want 1 (ran once, not resent)", got)
	}
}

// walkErrors calls f for err and every error it wraps, depth first.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, f)
		}
	}
}

// A retried GetBytes appends after dst's original length on every
// attempt: the caller's prefix is kept and nothing past the returned
// slice is written.
func TestRetryGetBytesKeepsPrefixOfDst(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		s.Engine().Set("k", "value")
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
		s.MustAddRule(t, respiretest.Rule{Command: "GET", Nth: 2, Action: respiretest.DropAfterForward})
		c := retryMemClient(t, s, Options{CommandTimeout: NoTimeout, RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
		buf := []byte("prefix:##########")
		dst := buf[:7]
		got, err := c.GetBytes(context.Background(), "k", dst)
		if err != nil {
			t.Fatalf("GetBytes: %v", err)
		}
		if string(got) != "prefix:value" {
			t.Errorf("GetBytes = %q, want %q", got, "prefix:value")
		}
		if tail := string(buf[len(got):]); tail != "#####" {
			t.Errorf("bytes past the result = %q, want them untouched", tail)
		}
	})
}
