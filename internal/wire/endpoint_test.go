package wire

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
)

// connAll calls ep.Conn from n goroutines and returns their results once
// each has finished.
type connResult struct {
	c   *Conn
	err error
}

func connAll(ep *Endpoint, n int) chan connResult {
	out := make(chan connResult, n)
	for range n {
		go func() {
			c, err := ep.Conn(context.Background())
			out <- connResult{c, err}
		}()
	}
	return out
}

// TestEndpointSharesOneDial proves that concurrent callers wait for one
// shared dial and all get the same connection.
func TestEndpointSharesOneDial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		gate := make(chan struct{})
		var mu sync.Mutex
		calls := 0
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			<-gate
			return s.dial(ctx, n, a)
		}})
		if ep.Current() != nil {
			t.Fatal("Current() before any dial is not nil")
		}
		results := connAll(ep, 8)
		synctest.Wait() // every caller is waiting; the dial is held
		if calls != 1 {
			t.Fatalf("dial hook called %d times while held, want 1", calls)
		}
		close(gate)
		var first *Conn
		for range 8 {
			r := <-results
			if r.err != nil || r.c == nil {
				t.Fatalf("Conn: got %v, %v, want a connection", r.c, r.err)
			}
			if first == nil {
				first = r.c
			} else if r.c != first {
				t.Fatal("callers got different connections, want one shared dial")
			}
		}
		if ep.Current() != first {
			t.Error("Current() is not the dialed connection")
		}
		if calls != 1 {
			t.Errorf("dial hook called %d times, want 1", calls)
		}
		ep.Close()
		if first.Alive() {
			t.Error("connection alive after Endpoint.Close")
		}
		s.close()
	})
}

// TestEndpointDialFailure proves that every caller waiting on a failed
// dial gets the *ConnError DialFailed with Evidence Unwritten.
func TestEndpointDialFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		refused := errors.New("refused")
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			<-gate
			return nil, refused
		}})
		defer ep.Close()
		results := connAll(ep, 5)
		synctest.Wait()
		close(gate)
		for range 5 {
			r := <-results
			var ce *ConnError
			if !errors.As(r.err, &ce) || ce.Reason != DialFailed || ce.Evidence != Unwritten || !errors.Is(r.err, refused) {
				t.Fatalf("got %v, want *ConnError DialFailed Unwritten wrapping the dial error", r.err)
			}
		}
	})
}

// TestEndpointBackoff proves, in virtual time, that consecutive failed
// dials are spaced 10 ms, 20 ms, 40 ms ... up to 1 s, and that a
// connection that lived minUptime resets the spacing.
func TestEndpointBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		var times []time.Duration
		start := time.Now()
		succeed := false
		ep := NewEndpoint(Config{Addr: "fake:6379", Proto: 2, Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			times = append(times, time.Since(start))
			if succeed {
				return s.dial(ctx, n, a)
			}
			return nil, errors.New("refused")
		}})
		defer ep.Close()
		for range 10 {
			if _, err := ep.Conn(context.Background()); err == nil {
				t.Fatal("Conn succeeded, want a dial error")
			}
		}
		want := []time.Duration{0, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
		for i := range want {
			want[i] *= time.Millisecond
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i] - times[i-1]; gap != want[i] {
				t.Errorf("dial %d came %v after dial %d, want %v", i, gap, i-1, want[i])
			}
		}
		if len(times) != len(want) {
			t.Fatalf("%d dials, want %d", len(times), len(want))
		}

		succeed = true
		c, err := ep.Conn(context.Background())
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		if gap := times[len(want)] - times[len(want)-1]; gap != time.Second {
			t.Errorf("the successful dial came %v after the last failure, want 1s", gap)
		}
		// After a connection that lived minUptime, the next failure is
		// retried without delay.
		succeed = false
		time.Sleep(minUptime)
		mark := time.Now()
		s.dropAll()
		<-c.Dead()
		synctest.Wait() // the replacement dial (immediate) has failed
		if got := time.Since(mark); got != 0 {
			t.Errorf("replacement dial waited %v, want none after a connection that lived", got)
		}
		if n := len(times); n != len(want)+2 {
			t.Fatalf("%d dials, want %d (the replacement dialed on death)", n, len(want)+2)
		}
		s.close()
	})
}

// TestEndpointReplacesDeadConn proves that when the connection dies a
// replacement is dialed and new frames go through it.
func TestEndpointReplacesDeadConn(t *testing.T) {
	s := newFakeServer(t, nil)
	ep := NewEndpoint(Config{Addr: "fake:6379", Dial: s.dial})
	defer ep.Close()
	ctx := context.Background()
	c1, err := ep.Conn(ctx)
	if err != nil {
		t.Fatalf("Conn: %v", err)
	}
	f := newFrame(WantBytes, "ECHO", "one")
	submit(t, c1, f)
	waitOK(t, f)
	f.Release()

	s.dropAll() // the server side of c1 goes away
	<-c1.Dead()
	c2, err := ep.Conn(ctx)
	if err != nil {
		t.Fatalf("Conn after death: %v", err)
	}
	if c2 == c1 || !c2.Alive() {
		t.Fatal("Conn returned the dead connection, want a replacement")
	}
	g := newFrame(WantBytes, "ECHO", "two")
	if err := c1.Submit(ctx, time.Time{}, g); err == nil {
		t.Fatal("the dead connection accepted a frame")
	}
	submit(t, c2, g)
	waitOK(t, g)
	if g.Err != nil || string(g.Bytes) != "two" {
		t.Fatalf("frame on the replacement: got Err %v Bytes %q, want two", g.Err, g.Bytes)
	}
	g.Release()
	s.mu.Lock()
	dials := s.dials
	s.mu.Unlock()
	if dials != 2 {
		t.Errorf("%d dials, want 2", dials)
	}
}

// TestEndpointCloseDuringDial proves that Close while a dial is held (the
// hook blocks until its context ends), or while the next dial is backing
// off, returns at once; every waiter gets Reason Closed; later calls too;
// and no goroutine is left (the bubble would not end otherwise).
func TestEndpointCloseDuringDial(t *testing.T) {
	for _, backingOff := range []bool{false, true} {
		name := "dial held"
		if backingOff {
			name = "backing off"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				first := true
				ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
					if backingOff && first {
						first = false
						return nil, errors.New("refused")
					}
					<-ctx.Done()
					return nil, ctx.Err()
				}})
				if backingOff {
					if _, err := ep.Conn(context.Background()); err == nil {
						t.Fatal("first dial succeeded")
					}
				}
				results := connAll(ep, 4)
				synctest.Wait()
				start := time.Now()
				ep.Close()
				if got := time.Since(start); got != 0 {
					t.Errorf("Close took %v, want no wait", got)
				}
				for range 4 {
					r := <-results
					var ce *ConnError
					if !errors.As(r.err, &ce) || ce.Reason != Closed || ce.Evidence != Unwritten {
						t.Errorf("waiter got %v, want *ConnError Closed Unwritten", r.err)
					}
				}
				_, err := ep.Conn(context.Background())
				var ce *ConnError
				if !errors.As(err, &ce) || ce.Reason != Closed {
					t.Errorf("Conn after Close: got %v, want Closed", err)
				}
			})
		})
	}
}

// TestEndpointConnContext proves that a caller's context ends its wait for
// a held dial without ending the dial.
func TestEndpointConnContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		gate := make(chan struct{})
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			<-gate
			return s.dial(ctx, n, a)
		}})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := ep.Conn(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 50*time.Millisecond {
			t.Errorf("Conn returned after %v, want 50ms", got)
		}
		close(gate)
		if _, err := ep.Conn(context.Background()); err != nil {
			t.Fatalf("Conn after the held dial finished: %v", err)
		}
		ep.Close()
		s.close()
	})
}

// TestEndpointBatchLanes proves Endpoint.For: a frame of fewer than
// LaneMinBytes bytes (whatever its commands) stays on the endpoint;
// larger frames take the Config.BatchLanes lanes in turn, each with a
// connection of its own dialed on first use (and none before); a lane's
// death leaves the endpoint's connection alive; Close and Retire end the
// lanes with the endpoint, whose lanes then fail as it does; and no
// goroutine is left (the bubble would not end otherwise).
func TestEndpointBatchLanes(t *testing.T) {
	for _, retire := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t, nil)
			ep := NewEndpoint(Config{Addr: "fake:6379", Dial: s.dial, BatchLanes: 3})
			ctx := context.Background()
			small := &Frame{Replies: 1000, Buf: make([]byte, LaneMinBytes-1)}
			if ep.For(small, true) != ep || ep.lanes.Load() != nil {
				t.Fatal("a small frame took a lane, or lanes were made for it")
			}
			seen := map[*Endpoint]int{}
			for _, n := range []int{LaneMinBytes, LaneMinBytes + 1, 16 << 10, 64 << 10, LaneMinBytes, 1 << 20} {
				f := &Frame{Buf: make([]byte, n)}
				l := ep.For(f, true)
				if l == ep {
					t.Fatalf("a frame of %d bytes stayed on the endpoint", n)
				}
				seen[l]++
			}
			if len(seen) != 3 {
				t.Fatalf("6 large frames used %d lanes, want all 3 twice", len(seen))
			}
			for l, n := range seen {
				if n != 2 || l.Current() != nil {
					t.Fatalf("a lane got %d frames (want 2) or is dialed before use", n)
				}
			}
			c, err := ep.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var lane *Endpoint
			var lc *Conn
			for l := range seen {
				if lc, err = l.Conn(ctx); err != nil {
					t.Fatal(err)
				}
				lane = l
			}
			f := frameIn(new(FramePool), WantBytes, "ECHO", "lane")
			submit(t, lc, f)
			waitOK(t, f)
			if string(f.Bytes) != "lane" {
				t.Fatalf("ECHO on a lane: %q", f.Bytes)
			}
			f.Release()
			_ = lc.Close() // a lane's connection dies: the endpoint's lives on
			synctest.Wait()
			if !c.Alive() || ep.Current() != c {
				t.Fatal("a lane's death ended the endpoint's connection")
			}
			if retire {
				ep.Retire(errors.New("moved"))
			} else {
				_ = ep.Close()
			}
			_, epErr := ep.Conn(ctx)
			var want *ConnError
			if !errors.As(epErr, &want) {
				t.Fatalf("Conn on the ended endpoint: %v", epErr)
			}
			for _, l := range []*Endpoint{lane, ep.For(&Frame{Buf: make([]byte, LaneMinBytes)}, true)} {
				_, err := l.Conn(ctx)
				var got *ConnError
				if !errors.As(err, &got) || got.Reason != want.Reason || got.Evidence != Unwritten || !errors.Is(got, want.Cause) {
					t.Fatalf("a lane of the ended endpoint: %v, want %v", err, epErr)
				}
			}
		})
	}
}

// TestEndpointRedial proves, in virtual time, that Redial starts one
// background dial of a down endpoint (after its redial backoff), which
// brings it back up; that it starts none while a dial is in flight, while
// the connection is alive, or after Close; and that it never blocks.
func TestEndpointRedial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		var mu sync.Mutex
		calls, refuse := 0, true
		gate := make(chan struct{}, 1)
		gate <- struct{}{}
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			<-gate // a dial in flight until the test lets it go
			mu.Lock()
			r := refuse
			mu.Unlock()
			if r {
				return nil, errors.New("refused")
			}
			return s.dial(ctx, n, a)
		}})
		dials := func() int { mu.Lock(); defer mu.Unlock(); return calls }
		if _, err := ep.Conn(context.Background()); err == nil {
			t.Fatal("the first dial succeeded, want it refused")
		}
		if !ep.Down() {
			t.Fatal("not Down after a failed dial")
		}
		mu.Lock()
		refuse = false
		mu.Unlock()
		ep.Redial()           // never blocks: the dial waits for its backoff, then on gate
		ep.Redial()           // one in flight: no second
		time.Sleep(maxRedial) // virtual: the backoff passes
		synctest.Wait()
		if n := dials(); n != 2 {
			t.Fatalf("%d dials, want 2: the first and one redial", n)
		}
		if !ep.Down() {
			t.Fatal("up before its redial completed")
		}
		gate <- struct{}{}
		synctest.Wait() // the dial succeeds
		if n := dials(); n != 2 {
			t.Fatalf("%d dials, want 2: one redial", n)
		}
		if ep.Down() || ep.Current() == nil {
			t.Fatal("the endpoint is not up after its redial")
		}
		ep.Redial() // alive: nothing
		synctest.Wait()
		if n := dials(); n != 2 {
			t.Fatalf("%d dials, want 2: Redial dialed a live endpoint", n)
		}
		ep.Close()
		ep.Redial()
		synctest.Wait()
		if n := dials(); n != 2 {
			t.Fatalf("%d dials, want 2: Redial dialed a closed endpoint", n)
		}
		s.close()
	})
}

// TestEndpointSecondCloseWaitsForFirst proves that a Close (or Retire)
// called while another is still running returns only when that one has
// finished: every goroutine of the endpoint has exited, as Close says.
func TestEndpointSecondCloseWaitsForFirst(t *testing.T) {
	for _, second := range []string{"Close", "Retire"} {
		t.Run(second, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gate := make(chan struct{})
				ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
					<-gate // a dialer that does not watch its context
					return nil, errors.New("refused")
				}})
				results := connAll(ep, 1)
				synctest.Wait()
				first := make(chan struct{})
				go func() { _ = ep.Close(); close(first) }()
				synctest.Wait() // the first Close waits for the dial
				done := make(chan struct{})
				go func() {
					if second == "Close" {
						_ = ep.Close()
					} else {
						ep.Retire(errors.New("retired"))
					}
					close(done)
				}()
				synctest.Wait()
				select {
				case <-done:
					t.Errorf("the second %s returned while the first Close still waited for the dial", second)
				default:
				}
				close(gate)
				<-done
				select {
				case <-first:
				default:
					t.Errorf("the second %s returned before the first Close", second)
				}
				<-results
			})
		})
	}
}

// TestEndpointConnDeadBeforeStored proves that a connection that dies
// before its dial has stored it (the server drops it right after the
// handshake) is handled like any other death: onLost runs once, a
// replacement is dialed, and the endpoint ends up with a live connection.
func TestEndpointConnDeadBeforeStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		var lost atomic.Int32
		ep := NewEndpointNotify(Config{Addr: "fake:6379", Dial: s.dial}, func() { lost.Add(1) })
		defer ep.Close()
		first := true
		ep.open = func(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error) {
			c, err := Dial(ctx, cfg, onDead)
			if first && err == nil {
				first = false
				s.dropAll()
				<-c.Dead() // its onDead has run: the dial has not stored it yet
			}
			return c, err
		}
		ep.Redial()
		synctest.Wait()
		time.Sleep(maxRedial) // virtual: any backoff passes
		synctest.Wait()
		if n := lost.Load(); n != 1 {
			t.Errorf("onLost ran %d times, want 1 for the connection that died", n)
		}
		s.mu.Lock()
		dials := s.dials
		s.mu.Unlock()
		if dials != 2 {
			t.Errorf("%d dials, want 2: the dead connection was replaced", dials)
		}
		if ep.Current() == nil {
			t.Error("no live connection after the first one died")
		}
	})
}

// TestEndpointBackoffAfterQuickDeath proves, in virtual time, that a
// server that completes the handshake and then drops every connection at
// once is redialed with the redial backoff (10 ms, 20 ms, 40 ms ...), not
// back to back: a connection that dies right after its dial counts as a
// failed dial.
func TestEndpointBackoffAfterQuickDeath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var times []time.Duration
		start := time.Now()
		const dials = 6
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			times = append(times, time.Since(start))
			if len(times) > dials {
				<-ctx.Done() // enough: held until Close
				return nil, ctx.Err()
			}
			cli, srv := net.Pipe()
			go func() {
				defer srv.Close() // right after the handshake
				if _, _, err := resp.NewReader(srv).ReadCommand(nil); err == nil {
					_, _ = srv.Write(defaultReply([]string{"HELLO"}))
				}
			}()
			return cli, nil
		}})
		ep.Redial()
		time.Sleep(10 * maxRedial) // virtual: every backoff passes
		synctest.Wait()
		if len(times) != dials+1 {
			t.Fatalf("%d dials, want %d", len(times), dials+1)
		}
		for i := 1; i < len(times); i++ {
			want := minRedial << (i - 1)
			if gap := times[i] - times[i-1]; gap != want {
				t.Errorf("dial %d came %v after dial %d, whose connection died at once; want %v", i, gap, i-1, want)
			}
		}
		_ = ep.Close()
	})
}

// TestEndpointConnAfterQuickDeath proves that Conn waits for one dial,
// not for as many as it takes: when the connection its dial made dies
// before Conn returns it (a server that drops every connection after the
// handshake), Conn fails as Lost, unwritten, instead of waiting for
// replacements without end (a caller without a deadline never returned).
func TestEndpointConnAfterQuickDeath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: s.dial})
		defer ep.Close()
		ep.open = func(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error) {
			c, err := Dial(ctx, cfg, onDead)
			if err == nil {
				s.dropAll()
				<-c.Dead()
			}
			return c, err
		}
		done := make(chan error, 1)
		go func() {
			_, err := ep.Conn(context.Background())
			done <- err
		}()
		time.Sleep(10 * maxRedial) // virtual: replacements would have been dialed
		synctest.Wait()
		select {
		case err := <-done:
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Reason != Lost || ce.Evidence != Unwritten {
				t.Errorf("Conn = %v, want *ConnError Lost Unwritten", err)
			}
		default:
			s.mu.Lock()
			n := s.dials
			s.mu.Unlock()
			t.Fatalf("Conn still waits after %d dials whose connections died", n)
		}
	})
}

// TestEndpointRefusedHandshakeIsNotLost proves that a dial whose
// handshake the server refused (an ACL without READONLY, SELECT, ROLE...)
// leaves the endpoint down without calling onLost: the server answered,
// so routing has no topology change to look for, and asking for one on
// every redial would refresh the topology in a loop. A dial that failed
// otherwise still calls it.
func TestEndpointRefusedHandshakeIsNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lost atomic.Int32
		ep := NewEndpointNotify(Config{Addr: "fake:6379"}, func() { lost.Add(1) })
		defer ep.Close()
		refused := &ConnError{Reason: Handshake, Evidence: Unwritten, Addr: "fake:6379",
			Cause: &ReplyError{Command: "READONLY", Text: "NOPERM this user has no permissions to run the 'readonly' command"}}
		unreachable := &ConnError{Reason: DialFailed, Evidence: Unwritten, Addr: "fake:6379", Cause: errors.New("connection refused")}
		next := error(refused)
		ep.open = func(context.Context, Config, func(*Conn)) (*Conn, error) { return nil, next }
		if _, err := ep.Conn(context.Background()); err != refused {
			t.Fatalf("Conn = %v, want the refusal", err)
		}
		synctest.Wait() // the dial's goroutine has finished
		if !ep.Down() || lost.Load() != 0 {
			t.Fatalf("after a refused handshake: Down %v, onLost ran %d times; want down, and no onLost", ep.Down(), lost.Load())
		}
		next = unreachable
		if _, err := ep.Conn(context.Background()); err != refused {
			t.Fatalf("Conn = %v, want the last refusal (its redial goes on)", err)
		}
		time.Sleep(maxRedial) // virtual: the redial's backoff passes
		synctest.Wait()       // the redial has failed
		if _, err := ep.Conn(context.Background()); err != unreachable {
			t.Fatalf("Conn = %v, want the dial's failure", err)
		}
		synctest.Wait()
		if n := lost.Load(); n != 2 {
			t.Errorf("onLost ran %d times after two failed dials, want twice", n)
		}
	})
}

// TestEndpointRefusedHandshakeFailsFast proves, in virtual time, that
// after a dial whose handshake the server refused (an ACL without
// SELECT, WRONGPASS...) a call returns that refusal at once instead of
// waiting for the next redial's backoff; that the calls keep one dial
// going per backoff period (10 ms, 20 ms ... 1 s), no more; that once the
// server accepts the handshake the endpoint recovers within one backoff
// period; and that after another kind of dial failure a call waits for
// the redial as before.
func TestEndpointRefusedHandshakeFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t, nil)
		ep := NewEndpoint(Config{Addr: "fake:6379", Dial: s.dial})
		defer ep.Close()
		start := time.Now()
		var mu sync.Mutex // guards the stand-in's state, shared with the dials
		var dials []time.Duration
		var last *ConnError // the refusal of the last dial
		accept, unreachable := false, false
		ep.open = func(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			dials = append(dials, time.Since(start))
			switch {
			case unreachable:
				return nil, &ConnError{Reason: DialFailed, Evidence: Unwritten, Addr: cfg.Addr, Cause: errors.New("connection refused")}
			case accept:
				return Dial(ctx, cfg, onDead)
			}
			last = &ConnError{Reason: Handshake, Evidence: Unwritten, Addr: cfg.Addr,
				Cause: &ReplyError{Command: "SELECT", Text: "NOPERM this user has no permissions to run the 'select' command"}}
			return nil, last
		}
		dialTimes := func() []time.Duration { mu.Lock(); defer mu.Unlock(); return slices.Clone(dials) }
		lastRefusal := func() *ConnError { mu.Lock(); defer mu.Unlock(); return last }
		set := func(p *bool) { mu.Lock(); *p = true; mu.Unlock() }
		if _, err := ep.Conn(context.Background()); err == nil || err != lastRefusal() {
			t.Fatalf("the first Conn = %v, want the refusal", err)
		}
		// A call every millisecond for 3 s: each returns the last
		// refusal at once.
		for range 3000 {
			synctest.Wait() // a redial due now has finished
			mark := time.Now()
			_, err := ep.Conn(context.Background())
			if last := lastRefusal(); err == nil || err != last {
				t.Fatalf("at %v: Conn = %v, want the last refusal %v", time.Since(start), err, last)
			}
			if waited := time.Since(mark); waited != 0 {
				t.Fatalf("at %v: Conn waited %v after a refused handshake, want none", time.Since(start), waited)
			}
			time.Sleep(time.Millisecond)
		}
		want := []time.Duration{0, 10, 20, 40, 80, 160, 320, 640, 1000}
		times := dialTimes()
		if len(times) != len(want) {
			t.Fatalf("%d dials in 3 s of calls (at %v), want %d: one per backoff period", len(times), times, len(want))
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i] - times[i-1]; gap != want[i]*time.Millisecond {
				t.Errorf("dial %d came %v after dial %d, want %v", i, gap, i-1, want[i]*time.Millisecond)
			}
		}

		// The server accepts the handshake now: the redial in flight
		// (due at 3.27 s) brings the endpoint back.
		set(&accept)
		fixed := time.Now()
		var c *Conn
		for c == nil {
			time.Sleep(time.Millisecond)
			synctest.Wait()
			var err error
			if c, err = ep.Conn(context.Background()); err != nil && err != lastRefusal() {
				t.Fatalf("Conn = %v, want the last refusal or a connection", err)
			}
		}
		if took := time.Since(fixed); took > maxRedial {
			t.Errorf("recovered %v after the server accepted the handshake, want within %v", took, maxRedial)
		}
		if n := len(dialTimes()); n != len(want)+1 {
			t.Errorf("%d dials, want %d: one more to recover", n, len(want)+1)
		}

		// Another kind of failure (the server unreachable) is waited
		// for, as before: the call after it waits for the redial.
		set(&unreachable)
		s.dropAll()
		<-c.Dead()
		time.Sleep(maxRedial)
		synctest.Wait() // the replacement dial has failed
		mark := time.Now()
		_, err := ep.Conn(context.Background())
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Reason != DialFailed {
			t.Fatalf("Conn = %v, want the dial failure", err)
		}
		if time.Since(mark) == 0 {
			t.Error("Conn after an unreachable server returned at once, want it to wait for the redial")
		}
		s.close()
	})
}
