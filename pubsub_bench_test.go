package respire

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkGetWithSubscribers compares the shared connection's GET with
// and without four subscriptions of the same client receiving 20,000
// messages a second between them: subscriptions have connections of
// their own, so the two should be within noise (compare the
// sub-benchmarks of one run). The allocations of the busy run include
// the subscriptions' own (the messages' strings, on their goroutines).
func BenchmarkGetWithSubscribers(b *testing.B) {
	for _, busy := range []bool{false, true} {
		name := "NoSubscribers"
		if busy {
			name = "FourBusySubscriptions"
		}
		b.Run(name, func(b *testing.B) {
			c, k := benchClient(b, nil)
			if busy {
				stop := busySubscriptions(b, c, 4)
				defer stop()
			}
			parallelGetBytes(b, c, k, parallelism)
		})
	}
}

// busySubscriptions opens n subscriptions on c and publishes to them
// without pause from a raw connection until the returned stop is called.
func busySubscriptions(b *testing.B, c *Client, n int) (stop func()) {
	b.Helper()
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var channels []string
	var subs []*Subscription
	for i := range n {
		ch := key(b, "bench-sub", strconv.Itoa(i))
		s, err := c.Subscribe(ctx, ch)
		if err != nil {
			b.Fatal(err)
		}
		channels, subs = append(channels, ch), append(subs, s)
		wg.Go(func() {
			for range s.Channel() {
			}
		})
	}
	nc, err := net.Dial("tcp", standaloneAddr(b))
	if err != nil {
		b.Fatal(err)
	}
	wg.Go(func() { // drain PUBLISH replies
		buf := make([]byte, 64<<10)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
		}
	})
	wg.Go(func() {
		var batch []byte
		for i := range 100 {
			batch = append(batch, encodeCommand("PUBLISH", []string{channels[i%n], "payload-" + strconv.Itoa(i)})...)
		}
		tick := time.NewTicker(5 * time.Millisecond) // 20,000 messages a second
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := nc.Write(batch); err != nil {
				return
			}
		}
	})
	return func() {
		close(done)
		_ = nc.Close()
		for _, s := range subs {
			_ = s.Close()
		}
		wg.Wait()
	}
}
