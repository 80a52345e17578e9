package respire

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
)

// TestGetOfALargeValueCopiesItOnce proves that Get of an 8 MiB value
// allocates no more than GetBytes with no buffer of the caller's does:
// the reader makes the string from the bytes it read, the value's one
// copy, and the value is intact.
func TestGetOfALargeValueCopiesItOnce(t *testing.T) {
	ctx := testCtx(t)
	c := newClient(t, Options{})
	k := key(t, "big")
	want := strings.Repeat("g", 8<<20)
	if err := c.Set(ctx, k, want); err != nil {
		t.Fatal(err)
	}
	allocated := func(get func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		get()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var got string
	var gotBytes []byte
	var err, errBytes error
	viaBytes := allocated(func() { gotBytes, errBytes = c.GetBytes(ctx, k, nil) })
	viaString := allocated(func() { got, err = c.Get(ctx, k) })
	if errBytes != nil || string(gotBytes) != want || err != nil || got != want {
		t.Fatalf("GetBytes: %d bytes, %v; Get: %d bytes, %v; want the 8 MiB value", len(gotBytes), errBytes, len(got), err)
	}
	// The reader's buffers for the reply vary by up to 2 MiB from one
	// call to the next; a second copy of the value would add 8 MiB.
	if viaString > viaBytes+4<<20 {
		t.Errorf("Get allocated %d MiB, GetBytes %d MiB: want no copy of the 8 MiB value", viaString>>20, viaBytes>>20)
	}
}

// TestSlowSubscriberDroppedByTheServerSeesAGap: a subscriber that reads
// nothing while 16 KiB messages are published is closed by the real
// server once its output buffer passes client-output-buffer-limit pubsub
// (the server then counts no receiver). Reading afterwards yields the
// messages received before, whole and in order (the push frame cut by the
// close corrupts nothing), then a gap whose Err matches
// ErrConnectionLost; the channel stays open and the subscription,
// restored, receives a message published after.
func TestSlowSubscriberDroppedByTheServerSeesAGap(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		pub := newClient(t, Options{})
		limits, err := pub.Do(ctx, NewCommand("CONFIG"), "GET", "client-output-buffer-limit")
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := limits.StringMap(); !strings.Contains(m["client-output-buffer-limit"], "pubsub") || strings.Contains(m["client-output-buffer-limit"], "pubsub 0 0") {
			t.Skipf("the server does not drop slow subscribers: %q", m)
		}
		ch := key(t, "ch")
		sub, err := c.Subscribe(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		pad := strings.Repeat("p", 16<<10)
		published := 0
		for ; ; published++ {
			n, err := pub.Publish(ctx, ch, fmt.Sprintf("%08d", published)+pad)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if published == 20000 {
				t.Fatal("20000 messages of 16 KiB unread, and the server still has the subscriber")
			}
		}
		next, gap := 0, false
		for m := range sub.Channel() {
			if m.Gap {
				if !errors.Is(m.Err, ErrConnectionLost) {
					t.Fatalf("gap %+v, want its Err to match ErrConnectionLost", m)
				}
				gap = true
				break
			}
			if want := fmt.Sprintf("%08d", next) + pad; m.Payload != want || m.Channel != ch {
				t.Fatalf("message %d: %q on %q (%d bytes), want the next one whole", next, m.Payload[:min(len(m.Payload), 8)], m.Channel, len(m.Payload))
			}
			next++
		}
		if !gap {
			t.Fatalf("the channel closed after %d messages, want a gap", next)
		}
		if next == 0 || next >= published {
			t.Fatalf("%d of %d messages before the gap, want some but not all", next, published)
		}
		resumes(t, pub, sub, ch, "after")
	})
}

// TestCancelledLargeReadAndWriteLeaveOthersTheirReplies: while four
// goroutines GET their own keys on the shared connection, a GET of a
// 32 MiB value and a SET of one whose contexts end after 20 ms fail with
// context.DeadlineExceeded within seconds; no other caller ever gets a
// reply not its own, and the value then reads back whole.
func TestCancelledLargeReadAndWriteLeaveOthersTheirReplies(t *testing.T) {
	ctx := testCtx(t)
	c := newClient(t, Options{})
	big := key(t, "big")
	value := strings.Repeat("v", 32<<20)
	if err := c.Set(ctx, big, value); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		k, want := key(t, fmt.Sprint("small", g)), fmt.Sprint("value", g)
		if err := c.Set(ctx, k, want); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for !stopped(stop) {
				if got, err := c.Get(ctx, k); err != nil || got != want {
					t.Errorf("GET %s: %q, %v; want %q", k, got, err, want)
					return
				}
			}
		})
	}
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"GET", func(ctx context.Context) error { _, err := c.Get(ctx, big); return err }},
		{"SET", func(ctx context.Context) error { return c.Set(ctx, big+":w", value) }},
	}
	for _, call := range calls {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		began := time.Now()
		err := call.call(cctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s of 32 MiB with 20 ms: %v, want context.DeadlineExceeded", call.name, err)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("%s of 32 MiB with 20 ms returned after %v", call.name, d)
		}
	}
	close(stop)
	wg.Wait()
	if got, err := c.Get(ctx, big); err != nil || got != value {
		t.Fatalf("GET %s: %d bytes, %v; want the 32 MiB value", big, len(got), err)
	}
}

// TestServerClosingAnOverlongQueryLosesOnlyItsConnection: a real server
// whose client-query-buffer-limit a 3 MiB SET exceeds closes the
// connection without a reply while callers' INCRs share the client. The
// SET fails as a lost connection that may have been sent (part of it
// was), and never ran; every INCR either got its own reply (distinct,
// increasing values, no more than the server ran) or failed as lost; the
// client then serves commands again on a new connection.
func TestServerClosingAnOverlongQueryLosesOnlyItsConnection(t *testing.T) {
	ctx := testCtx(t)
	r := testenv.StartRedis(t, testenv.RedisServerPath(t), 0)
	admin(t, r.Addr, "CONFIG", "SET", "client-query-buffer-limit", "1mb")
	c := newClient(t, Options{Endpoints: []string{r.Addr}})
	if _, err := c.Incr(ctx, "counter"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	replies := 0
	for range 4 {
		wg.Go(func() {
			var last int64
			for !stopped(stop) {
				n, err := c.Incr(ctx, "counter")
				switch {
				case errors.Is(err, ErrConnectionLost):
					continue
				case err != nil:
					t.Errorf("INCR: %v, want a reply or a lost connection", err)
					return
				case n <= last:
					t.Errorf("INCR replied %d after %d: a reply that is not its own", n, last)
					return
				}
				last = n
				mu.Lock()
				replies++
				mu.Unlock()
			}
		})
	}
	err := c.Set(ctx, "big", strings.Repeat("x", 3<<20))
	close(stop)
	wg.Wait()
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConnectionLost) || ce.Unwritten {
		t.Fatalf("SET of 3 MiB over a 1 MiB query buffer limit: %v, want a lost connection after it was sent", err)
	}
	if n := commandCalls(t, r.Addr, "set"); n != 0 {
		t.Errorf("the server ran SET %d times, want 0", n)
	}
	if ran := commandCalls(t, r.Addr, "incr") - 1; replies > ran {
		t.Errorf("%d INCR replies for %d INCRs run", replies, ran)
	}
	if _, err := c.Get(ctx, "big"); !errors.Is(err, ErrNil) {
		t.Errorf("GET big: %v, want ErrNil", err)
	}
	if err := c.Set(ctx, "small", "v"); err != nil {
		t.Errorf("SET after the server closed a connection: %v", err)
	}
}
