package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/wire"
)

// TestConcurrentGetPut runs many goroutines lending, returning, discarding
// and giving up on connections (and the reaper closing idle ones) and
// checks that no connection is ever lent twice at once and the counts stay
// within Max. Run it with -race.
func TestConcurrentGetPut(t *testing.T) {
	const (
		maxOpen    = 4
		goroutines = 32
		rounds     = 200
	)
	s := newFakeServer(t)
	cfg := s.config(maxOpen)
	cfg.IdleTimeout = 50 * time.Microsecond
	p := newPool(t, cfg)

	var holders sync.Map // *wire.Conn -> *atomic.Bool (held by a goroutine)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if (g+i)%7 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Microsecond)
				}
				c, err := p.Get(ctx)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("Get: %w", err)
					return
				}
				v, _ := holders.LoadOrStore(c, new(atomic.Bool))
				held := v.(*atomic.Bool)
				if !held.CompareAndSwap(false, true) {
					errs <- errors.New("a connection was lent to two goroutines at once")
					return
				}
				if st := p.Stats(); st.Open > maxOpen || st.Open != st.Idle+st.Lent+st.Dialing {
					errs <- fmt.Errorf("inconsistent Stats() = %+v with Max %d", st, maxOpen)
				}
				runtime.Gosched()
				held.Store(false)
				if (g+i)%11 == 0 {
					p.Discard(c)
				} else {
					p.Put(c)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := p.Stats()
	if st.Lent != 0 || st.Dialing != 0 || st.Waiting != 0 || st.Open != st.Idle || st.Open > maxOpen {
		t.Errorf("Stats() after every goroutine handed back = %+v, want only idle connections, at most %d", st, maxOpen)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	holders.Range(func(k, _ any) bool {
		if k.(*wire.Conn).Alive() {
			t.Error("connection alive after Close")
			return false
		}
		return true
	})
}

// TestCloseDuringUse closes the pool while goroutines are lending,
// waiting and dialing: every goroutine ends with the closed error and no
// goroutine of the pool is left (TestMain checks).
func TestCloseDuringUse(t *testing.T) {
	const goroutines = 16
	s := newFakeServer(t)
	p := New(s.config(3))
	var gets atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := 0; ; i++ {
				c, err := p.Get(context.Background())
				if err != nil {
					if !isClosedError(err) {
						errs <- fmt.Errorf("Get: %v, want the closed error", err)
					}
					return
				}
				if gets.Add(1) == 500 {
					once.Do(func() { close(started) })
				}
				runtime.Gosched()
				if (g+i)%5 == 0 {
					p.Discard(c)
				} else {
					p.Put(c)
				}
			}
		})
	}
	<-started
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := p.Stats(); st != (Stats{}) {
		t.Errorf("Stats() after Close = %+v, want zero", st)
	}
}
