package respire

// Chaos on a real server: many callers share one connection while blocking
// pops, pushes, a sleeping server and network partitions happen around
// them. Whatever fails, no caller ever receives another caller's reply, and
// no pushed element is popped twice or lost.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// The chaos tests run for chaosDuration. Their client's HealthTimeout is
// above DEBUG SLEEP 0.5 (a live but slow server must not be retired) and
// below the long partitions.
const (
	chaosDuration = 6 * time.Second
	chaosHealth   = time.Second
)

// chaosClient skips the test under -short; otherwise it returns the
// standalone server's address, a fault proxy in front of it and a client
// through the proxy that resends ReadOnly commands.
func chaosClient(t *testing.T) (addr string, proxy *respiretest.Proxy, c *Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs for 6 s")
	}
	addr = standaloneAddr(t)
	proxy = realProxy(t, addr)
	c = newClient(t, Options{Endpoints: []string{proxy.Addr()}, HealthTimeout: chaosHealth,
		DialTimeout: 500 * time.Millisecond, RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: ReadOnly}})
	return addr, proxy, c
}

func TestChaosNoMismatchedRepliesNoLostPops(t *testing.T) {
	const (
		getters = 64
		poppers = 8
		pushers = 2
	)
	// The GET client goes through the proxy that partitions; the blocking
	// client is direct, so an element the server pops always reaches it.
	addr, proxy, getClient := chaosClient(t)
	popClient := newClient(t, Options{})
	ctx := testCtx(t)
	keys := make([]string, getters)
	for i := range keys {
		keys[i] = key(t, "get", strconv.Itoa(i))
		if err := getClient.Set(ctx, keys[i], "value-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	list := key(t, "list")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mismatches, gets, getErrs atomic.Int64
	var firstMismatch atomic.Value
	for i := range getters {
		wg.Go(func() {
			want := "value-" + strconv.Itoa(i)
			for !stopped(stop) {
				cctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
				got, err := getClient.Get(cctx, keys[i])
				cancel()
				switch {
				case err != nil:
					getErrs.Add(1)
				case got != want:
					mismatches.Add(1)
					firstMismatch.CompareAndSwap(nil, fmt.Sprintf("GET %s = %q, want %q", keys[i], got, want))
				default:
					gets.Add(1)
				}
			}
		})
	}

	var pushed, pushErrs atomic.Int64
	var pushedMu sync.Mutex
	var pushedElems []string
	for p := range pushers {
		wg.Go(func() {
			for n := 0; !stopped(stop); n++ {
				e := fmt.Sprintf("p%d-%d", p, n)
				if _, err := popClient.RPush(context.Background(), list, e); err != nil {
					// An RPUSH that may have run leaves the element
					// unaccounted; on this direct client none should fail.
					pushErrs.Add(1)
					continue
				}
				pushed.Add(1)
				pushedMu.Lock()
				pushedElems = append(pushedElems, e)
				pushedMu.Unlock()
				time.Sleep(time.Millisecond) // pacing, not synchronisation
			}
		})
	}

	var poppedMu sync.Mutex
	var popped []string
	var popErrs []error
	for p := range poppers {
		wg.Go(func() {
			for n := 0; !stopped(stop); n++ {
				pctx, cancel := context.Background(), context.CancelFunc(func() {})
				block := 100 * time.Millisecond
				if (p+n)%3 == 0 {
					// The caller leaves while the server still blocks:
					// the pop is unblocked or delivered, never lost.
					block = time.Second
					pctx, cancel = context.WithTimeout(context.Background(), 150*time.Millisecond)
				}
				_, v, err := popClient.BLPop(pctx, block, list)
				cancel()
				poppedMu.Lock()
				switch {
				case err == nil:
					popped = append(popped, v)
				case errors.Is(err, ErrNil), errors.Is(err, context.DeadlineExceeded):
				default:
					popErrs = append(popErrs, err)
				}
				poppedMu.Unlock()
			}
		})
	}

	faultsDone := make(chan error, 1)
	go func() { faultsDone <- chaosFaults(t, proxy, addr, getClient, keys[0], "value-0") }()
	if err := <-faultsDone; err != nil {
		t.Errorf("fault injection: %v", err)
	}
	close(stop)
	wg.Wait()

	if n := mismatches.Load(); n > 0 {
		t.Errorf("%d GETs returned another caller's value, first: %v", n, firstMismatch.Load())
	}
	if gets.Load() == 0 {
		t.Errorf("no GET succeeded: the run proved nothing")
	}
	for _, err := range popErrs {
		t.Errorf("BLPOP failed: %v", err)
	}
	if n := pushErrs.Load(); n > 0 {
		t.Errorf("%d RPUSHes failed on the direct client", n)
	}
	rest, err := popClient.LRange(ctx, list, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	accounted := append(slices.Clone(popped), rest...)
	slices.Sort(accounted)
	slices.Sort(pushedElems)
	if !slices.Equal(accounted, pushedElems) {
		t.Errorf("popped (%d) plus left in the list (%d) != pushed (%d): an element was popped twice or lost",
			len(popped), len(rest), len(pushedElems))
	}
	t.Logf("GETs ok %d, failed %d; pushed %d, popped %d, left %d", gets.Load(), getErrs.Load(), pushed.Load(), len(popped), len(rest))
	concurrentOwnReplies(t, getClient, 1000)
}

// chaosFaults cycles faults until chaosDuration has passed: a partition
// shorter than chaosHealth, healthy traffic, DEBUG SLEEP 0.5 through a
// direct connection to addr, a partition that retires c's connection, and
// a heal after which c reads key's want within chaosHealth plus one dial
// and serves traffic for a while.
func chaosFaults(t *testing.T, proxy *respiretest.Proxy, addr string, c *Client, key, want string) error {
	sleeper := newAdmin(t, addr)
	defer sleeper.Close()
	endCtx, cancel := context.WithTimeout(context.Background(), chaosDuration)
	defer cancel()
	end := endCtx.Done()
	for {
		for _, f := range []func() error{
			func() error { return partitionFor(proxy, 300*time.Millisecond, end) }, // shorter than health
			func() error {
				select { // healthy traffic
				case <-time.After(300 * time.Millisecond):
				case <-end:
				}
				return nil
			},
			func() error {
				dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := sleeper.Do(dctx, NewCommand("DEBUG"), "SLEEP", "0.5")
				return err
			},
			func() error { return partitionFor(proxy, 2500*time.Millisecond, end) }, // retires the connection
			func() error {
				// Healed: c recovers within chaosHealth plus one dial,
				// then serves traffic for a while.
				rctx, cancel := context.WithTimeout(context.Background(), chaosHealth+time.Second)
				defer cancel()
				if got, err := c.Get(rctx, key); err != nil || got != want {
					return fmt.Errorf("GET after the heal = %q, %v; want %s", got, err, want)
				}
				select {
				case <-time.After(300 * time.Millisecond):
				case <-end:
				}
				return nil
			},
		} {
			select {
			case <-end:
				return nil
			default:
			}
			if err := f(); err != nil {
				return err
			}
		}
	}
}

// partitionFor partitions the proxy for d, or until end, then heals it.
func partitionFor(p *respiretest.Proxy, d time.Duration, end <-chan struct{}) error {
	pt := p.Partition()
	defer pt.Heal()
	select {
	case <-time.After(d):
	case <-end:
	}
	return nil
}

// stopped reports whether stop is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
