package pool

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"go.uber.org/goleak"
)

// newPool returns a pool for cfg, closed when the test ends (before the
// fake server, whose cleanup was registered first).
func newPool(t *testing.T, cfg Config) *Pool {
	p := New(cfg)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestReuseReturnedConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(2))
		checkStats(t, p, Stats{})

		a := get(t, p)
		checkStats(t, p, Stats{Open: 1, Lent: 1})
		p.Put(a)
		checkStats(t, p, Stats{Open: 1, Idle: 1})
		if got := get(t, p); got != a {
			t.Errorf("Get after Put returned another connection, want the returned one")
		}
		if got := s.dialCount(); got != 1 {
			t.Errorf("dials = %d, want 1", got)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
	})
}

func TestMostRecentlyUsedFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(3))
		a, b := get(t, p), get(t, p)
		p.Put(a)
		p.Put(b)
		if got := get(t, p); got != b {
			t.Error("first Get did not return the most recently returned connection")
		}
		if got := get(t, p); got != a {
			t.Error("second Get did not return the remaining idle connection")
		}
		if got := s.dialCount(); got != 2 {
			t.Errorf("dials = %d, want 2", got)
		}
	})
}

func TestMaxBelowOneMeansOne(t *testing.T) {
	for _, n := range []int{0, -3} {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			p := newPool(t, s.config(n))
			a := get(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := p.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Max %d: second Get = %v, want it to wait for the only slot", n, err)
			}
			p.Put(a)
		})
	}
}

// TestGrowsToMaxThenWaits proves that Get dials until Max connections are
// open, then waits, and that Put hands the returned connection straight
// to the waiter.
func TestGrowsToMaxThenWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(2))
		a, b := get(t, p), get(t, p)
		if a == b {
			t.Fatal("two Gets returned the same connection")
		}
		checkStats(t, p, Stats{Open: 2, Lent: 2})

		res := getAsync(context.Background(), p)
		synctest.Wait()
		select {
		case r := <-res:
			t.Fatalf("Get with Max lent returned %v, %v; want it to wait", r.c, r.err)
		default:
		}
		checkStats(t, p, Stats{Open: 2, Lent: 2, Waiting: 1})
		if got := s.dialCount(); got != 2 {
			t.Errorf("dials = %d, want 2 (no dial beyond Max)", got)
		}

		p.Put(a)
		r := <-res
		if r.err != nil || r.c != a {
			t.Fatalf("waiter got %v, %v; want the connection just returned", r.c, r.err)
		}
		checkStats(t, p, Stats{Open: 2, Lent: 2})
	})
}

// TestWaiterWokenByDiscard proves that Discard frees its slot at once for
// a waiter, which dials a new connection, and that the discarded
// connection is closed.
func TestWaiterWokenByDiscard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		a := get(t, p)
		res := getAsync(context.Background(), p)
		synctest.Wait()
		checkStats(t, p, Stats{Open: 1, Lent: 1, Waiting: 1})

		p.Discard(a)
		r := <-res
		if r.err != nil || r.c == nil || r.c == a {
			t.Fatalf("waiter got %v, %v; want a newly dialed connection", r.c, r.err)
		}
		<-a.Dead() // closed in the background
		if got := s.dialCount(); got != 2 {
			t.Errorf("dials = %d, want 2", got)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
		p.Put(a) // no longer lent: ignored
		checkStats(t, p, Stats{Open: 1, Lent: 1})
	})
}

func TestWaitersServedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		a := get(t, p)
		first := getAsync(context.Background(), p)
		synctest.Wait()
		second := getAsync(context.Background(), p)
		synctest.Wait()
		checkStats(t, p, Stats{Open: 1, Lent: 1, Waiting: 2})

		p.Put(a)
		r := <-first
		if r.err != nil || r.c != a {
			t.Fatalf("first waiter got %v, %v; want the returned connection", r.c, r.err)
		}
		synctest.Wait()
		select {
		case r := <-second:
			t.Fatalf("second waiter got %v, %v before a second Put", r.c, r.err)
		default:
		}
		p.Put(a)
		if r := <-second; r.err != nil || r.c != a {
			t.Fatalf("second waiter got %v, %v; want the returned connection", r.c, r.err)
		}
	})
}

// TestWaitEndsWithContext proves that a waiter gives up when its context
// ends, without disturbing the counts or later hand-backs.
func TestWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		a := get(t, p)

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := p.Get(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("Get waited %v, want 3s", got)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})

		cctx, ccancel := context.WithCancel(context.Background())
		res := getAsync(cctx, p)
		synctest.Wait()
		ccancel()
		if r := <-res; !errors.Is(r.err, context.Canceled) || r.c != nil {
			t.Fatalf("cancelled Get = %v, %v; want context.Canceled", r.c, r.err)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})

		p.Put(a) // no waiter left: it goes idle
		checkStats(t, p, Stats{Open: 1, Idle: 1})
		if _, err := p.Get(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Get with an ended context = %v, want context.Canceled", err)
		}
		checkStats(t, p, Stats{Open: 1, Idle: 1})
	})
}

// TestGrantAfterCancellation hands a waiter a connection (Put) or a slot
// (Discard, failed dial) after its context ended but before it could
// leave the queue: it passes the grant on to the next waiter, and nothing
// is lost. Holding the pool's lock while cancelling makes the order
// certain: the cancelled waiter's select has resolved to ctx.Done, but it
// is still queued when the grant is made.
func TestGrantAfterCancellation(t *testing.T) {
	tests := []struct {
		name string
		hand func(p *Pool, a *wire.Conn) // called with p.mu held
	}{
		{"Put", (*Pool).putLocked},
		{"Discard", (*Pool).discardLocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFakeServer(t)
				p := newPool(t, s.config(1))
				a := get(t, p)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				first := getAsync(ctx, p)
				synctest.Wait()
				second := getAsync(context.Background(), p)
				synctest.Wait()

				p.mu.Lock()
				cancel()
				tt.hand(p, a) // grants to the first waiter, still queued
				p.mu.Unlock()
				if r := <-first; !errors.Is(r.err, context.Canceled) || r.c != nil {
					t.Fatalf("cancelled waiter = %v, %v; want context.Canceled", r.c, r.err)
				}
				r := <-second
				if r.err != nil || r.c == nil {
					t.Fatalf("second waiter = %v, %v; want a connection", r.c, r.err)
				}
				if tt.name == "Put" && r.c != a {
					t.Error("second waiter did not get the returned connection")
				}
				checkStats(t, p, Stats{Open: 1, Lent: 1})
			})
		})
	}
}

// TestGrantAsContextEnds hands a waiter a connection whose select has
// resolved to the grant, then ends the waiter's context before it
// returns: the waiter must not get a connection it would send on after
// its context ended; it returns ctx.Err() and the connection goes to the
// next waiter. Holding the pool's lock makes the order certain.
func TestGrantAsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		a := get(t, p)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		first := getAsync(ctx, p)
		synctest.Wait()
		second := getAsync(context.Background(), p)
		synctest.Wait()

		p.mu.Lock()
		p.putLocked(a) // grants a to the first waiter, whose select takes it
		cancel()
		p.mu.Unlock()
		if r := <-first; !errors.Is(r.err, context.Canceled) || r.c != nil {
			t.Fatalf("waiter whose context ended as it was granted: connection %v, error %v; want context.Canceled", r.c != nil, r.err)
		}
		if r := <-second; r.err != nil || r.c != a {
			t.Fatalf("second waiter = %v, %v; want the granted connection", r.c, r.err)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
	})
}

// TestDialCompletingAsContextEnds ends the caller's context after the
// handshake succeeded, before Get returns (when the connection reports
// itself opened): Get returns ctx.Err() and keeps the connection idle for
// the next caller, which gets it without a dial.
func TestDialCompletingAsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cfg := s.config(1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg.Wire.OnEvent = func(e wire.Event) {
			if e.Kind == wire.EventOpened {
				cancel()
			}
		}
		p := newPool(t, cfg)
		if c, err := p.Get(ctx); !errors.Is(err, context.Canceled) || c != nil {
			t.Fatalf("Get whose context ended as its dial completed: connection %v, error %v; want context.Canceled", c != nil, err)
		}
		checkStats(t, p, Stats{Open: 1, Idle: 1})
		p.Put(get(t, p))
		if got := s.dialCount(); got != 1 {
			t.Errorf("dials = %d, want 1: the next caller gets the dialed connection", got)
		}
	})
}

func TestFailedDialFreesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		s.setFail(errRefused)
		_, err := p.Get(context.Background())
		var ce *wire.ConnError
		if !errors.As(err, &ce) || ce.Reason != wire.DialFailed || ce.Evidence != wire.Unwritten || !errors.Is(err, errRefused) {
			t.Fatalf("Get = %v, want the dial's *wire.ConnError (DialFailed, unwritten, %v)", err, errRefused)
		}
		checkStats(t, p, Stats{})

		s.setFail(nil)
		a := get(t, p)
		checkStats(t, p, Stats{Open: 1, Lent: 1})
		p.Put(a)
	})
}

// TestFailedDialWakesWaiter holds the only slot's dial, queues a waiter,
// then fails the dial: the waiter gets the slot and dials.
func TestFailedDialWakesWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		gate := s.hold()
		dialer := getAsync(context.Background(), p)
		synctest.Wait()
		waiter := getAsync(context.Background(), p)
		synctest.Wait()
		checkStats(t, p, Stats{Open: 1, Dialing: 1, Waiting: 1})

		gate <- errRefused // the first dial fails
		if r := <-dialer; !errors.Is(r.err, errRefused) {
			t.Fatalf("held Get = %v, want %v", r.err, errRefused)
		}
		synctest.Wait()
		checkStats(t, p, Stats{Open: 1, Dialing: 1})
		gate <- nil // the waiter's dial connects
		r := <-waiter
		if r.err != nil || r.c == nil {
			t.Fatalf("waiter: %v, %v; want a connection", r.c, r.err)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
		if got := s.dialCount(); got != 2 {
			t.Errorf("dials = %d, want 2", got)
		}
	})
}

// TestDialObeysContext proves that a dial that does not finish ends with
// the caller's context and frees its slot.
func TestDialObeysContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		gate := s.hold()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := p.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("Get took %v, want 2s", got)
		}
		checkStats(t, p, Stats{})

		res := getAsync(context.Background(), p)
		gate <- nil
		if r := <-res; r.err != nil {
			t.Fatalf("Get after the timed-out dial: %v", r.err)
		}
	})
}

// TestDeadIdleSkipped proves that idle connections the server closed are
// dropped by Get, not lent.
func TestDeadIdleSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(3))
		a, b := get(t, p), get(t, p)
		p.Put(a)
		p.Put(b)
		s.drop(t, 1, b) // the most recently returned one dies
		checkStats(t, p, Stats{Open: 2, Idle: 2})

		if got := get(t, p); got != a {
			t.Fatal("Get did not skip the dead idle connection")
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
		p.Put(a)

		s.drop(t, 0, a)
		c := get(t, p)
		if c == a || c == b || !c.Alive() {
			t.Fatal("Get with only dead idle connections did not dial a new one")
		}
		if got := s.dialCount(); got != 3 {
			t.Errorf("dials = %d, want 3", got)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
	})
}

func TestPutDeadClosesAndFreesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		p := newPool(t, s.config(1))
		a := get(t, p)
		res := getAsync(context.Background(), p)
		synctest.Wait()
		s.drop(t, 0, a)
		p.Put(a)
		r := <-res
		if r.err != nil || r.c == a {
			t.Fatalf("waiter got %v, %v; want a new connection, not the dead one", r.c, r.err)
		}
		checkStats(t, p, Stats{Open: 1, Lent: 1})
	})
}

// TestIdleReaping proves that the reaper closes each idle connection once
// it has been unused for IdleTimeout, measured from its last Put.
func TestIdleReaping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cfg := s.config(3)
		cfg.IdleTimeout = 10 * time.Second
		p := newPool(t, cfg)
		a, b := get(t, p), get(t, p)

		p.Put(a) // t=0
		time.Sleep(4 * time.Second)
		p.Put(b) // t=4
		time.Sleep(4 * time.Second)
		if got := get(t, p); got != b { // t=8: b reused, then returned
			t.Fatal("Get did not return the most recent idle connection")
		}
		p.Put(b) // t=8

		time.Sleep(2*time.Second - time.Nanosecond)
		synctest.Wait()
		checkStats(t, p, Stats{Open: 2, Idle: 2}) // just before a expires
		time.Sleep(time.Nanosecond)               // t=10
		synctest.Wait()
		<-a.Dead()
		checkStats(t, p, Stats{Open: 1, Idle: 1})
		if !b.Alive() {
			t.Fatal("b reaped 2s after its last use")
		}

		time.Sleep(8 * time.Second) // t=18
		synctest.Wait()
		<-b.Dead()
		checkStats(t, p, Stats{})

		// The reaper sleeps while nothing is idle, and wakes for the next.
		time.Sleep(time.Hour)
		c := get(t, p)
		p.Put(c)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		<-c.Dead()
		checkStats(t, p, Stats{})
	})
}

func TestNoReaperWithoutIdleTimeout(t *testing.T) {
	t.Run("no goroutine", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent()
		p := New(Config{Wire: wire.Config{Addr: "fake:6379"}, Max: 2})
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("New with IdleTimeout 0 started a goroutine: %v", err)
		}
		_ = p.Close()
	})
	t.Run("idle kept", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			p := newPool(t, s.config(1))
			a := get(t, p)
			p.Put(a)
			time.Sleep(1000 * time.Hour)
			synctest.Wait()
			if !a.Alive() {
				t.Fatal("idle connection closed with IdleTimeout 0")
			}
			checkStats(t, p, Stats{Open: 1, Idle: 1})
		})
	})
}

// TestClose closes pools holding idle and lent connections, a waiter and a
// dial in progress.
func TestClose(t *testing.T) {
	t.Run("idle and lent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			cfg := s.config(3)
			cfg.IdleTimeout = time.Minute
			p := New(cfg)
			a, b, c := get(t, p), get(t, p), get(t, p)
			p.Put(c)
			p.Discard(b) // its close may still be running
			if err := p.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			for name, conn := range map[string]*wire.Conn{"lent": a, "discarded": b, "idle": c} {
				select {
				case <-conn.Dead():
				default:
					t.Errorf("%s connection not closed when Close returned", name)
				}
			}
			checkStats(t, p, Stats{})
			p.Put(a) // lent before Close: already closed, ignored
			p.Discard(a)
			checkStats(t, p, Stats{})
			if _, err := p.Get(context.Background()); !isClosedError(err) {
				t.Errorf("Get after Close = %v, want a Closed *wire.ConnError with cause wire.ErrClosed", err)
			}
			if err := p.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	})
	t.Run("waiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			p := New(s.config(1))
			a := get(t, p)
			res := getAsync(context.Background(), p)
			synctest.Wait()
			_ = p.Close()
			if r := <-res; !isClosedError(r.err) || r.c != nil {
				t.Errorf("waiter = %v, %v; want the closed error", r.c, r.err)
			}
			if a.Alive() {
				t.Error("lent connection alive after Close")
			}
			checkStats(t, p, Stats{})
		})
	})
	t.Run("dial in progress", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			p := New(s.config(2))
			s.hold() // never released: Close must cancel the dial
			dialer := getAsync(context.Background(), p)
			synctest.Wait()
			checkStats(t, p, Stats{Open: 1, Dialing: 1})
			_ = p.Close()
			checkStats(t, p, Stats{}) // the dial has ended
			if r := <-dialer; !isClosedError(r.err) {
				t.Errorf("dialing Get = %v, want the closed error", r.err)
			}
		})
	})
	t.Run("concurrent calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFakeServer(t)
			p := New(s.config(1))
			a := get(t, p)
			done := make(chan struct{})
			go func() {
				_ = p.Close()
				close(done)
			}()
			_ = p.Close()
			<-done
			if a.Alive() {
				t.Error("lent connection alive after Close")
			}
		})
	})
}

// TestHandBackMisuse documents what Put and Discard do with a connection
// the pool does not currently lend: nothing.
func TestHandBackMisuse(t *testing.T) {
	tests := []struct {
		name string
		// run misuses the pool, with one idle and one lent connection.
		run       func(p *Pool, lent, idle, foreign *wire.Conn)
		want      Stats
		wantAlive map[string]bool
	}{
		{
			name:      "Put twice",
			run:       func(p *Pool, lent, _, _ *wire.Conn) { p.Put(lent); p.Put(lent) },
			want:      Stats{Open: 2, Idle: 2},
			wantAlive: map[string]bool{"lent": true, "idle": true},
		},
		{
			name:      "Discard twice",
			run:       func(p *Pool, lent, _, _ *wire.Conn) { p.Discard(lent); p.Discard(lent) },
			want:      Stats{Open: 1, Idle: 1},
			wantAlive: map[string]bool{"lent": false, "idle": true},
		},
		{
			name:      "Put after Discard",
			run:       func(p *Pool, lent, _, _ *wire.Conn) { p.Discard(lent); p.Put(lent) },
			want:      Stats{Open: 1, Idle: 1},
			wantAlive: map[string]bool{"lent": false, "idle": true},
		},
		{
			name:      "Discard of an idle connection",
			run:       func(p *Pool, _, idle, _ *wire.Conn) { p.Discard(idle) },
			want:      Stats{Open: 2, Idle: 1, Lent: 1},
			wantAlive: map[string]bool{"lent": true, "idle": true},
		},
		{
			name:      "Put and Discard of a foreign connection",
			run:       func(p *Pool, _, _, foreign *wire.Conn) { p.Put(foreign); p.Discard(foreign) },
			want:      Stats{Open: 2, Idle: 1, Lent: 1},
			wantAlive: map[string]bool{"lent": true, "idle": true, "foreign": true},
		},
		{
			name:      "nil",
			run:       func(p *Pool, _, _, _ *wire.Conn) { p.Put(nil); p.Discard(nil) },
			want:      Stats{Open: 2, Idle: 1, Lent: 1},
			wantAlive: map[string]bool{"lent": true, "idle": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFakeServer(t)
				p := newPool(t, s.config(3))
				lent, idle := get(t, p), get(t, p)
				p.Put(idle)
				foreign, err := wire.Dial(context.Background(), s.config(1).Wire, nil)
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				defer foreign.Close()

				tt.run(p, lent, idle, foreign)
				synctest.Wait() // background closes have finished
				checkStats(t, p, tt.want)
				conns := map[string]*wire.Conn{"lent": lent, "idle": idle, "foreign": foreign}
				for name, want := range tt.wantAlive {
					if got := conns[name].Alive(); got != want {
						t.Errorf("%s connection Alive() = %v, want %v", name, got, want)
					}
				}
				// The pool still works and never exceeds Max.
				var got []*wire.Conn
				for p.Stats().Open < 3 || p.Stats().Idle > 0 {
					got = append(got, get(t, p))
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if _, err := p.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Get with Max lent = %v, want it to wait", err)
				}
				for _, c := range got {
					p.Put(c)
				}
			})
		})
	}
}
