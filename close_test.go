package respire

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// TestCloseEndsConnectionsBeingOpened holds the handshake of the
// connection a call opens (HELLO's reply, at a proxy) and closes the
// client: the call fails with ErrClosed at once, before the handshake's
// reply or the dial timeout.
func TestCloseEndsConnectionsBeingOpened(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, c *Client) error
	}{
		{"Subscribe", func(ctx context.Context, c *Client) error {
			sub, err := c.Subscribe(ctx, "ch")
			if err == nil {
				_ = sub.Close()
			}
			return err
		}},
		{"Dedicated", func(ctx context.Context, c *Client) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Do(ctx, NewCommand("PING"))
				return err
			})
		}},
		{"BLPop", func(ctx context.Context, c *Client) error {
			_, _, err := c.BLPop(ctx, time.Millisecond, "k")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{DialTimeout: time.Hour})
			hold := px.MustAddRule(t, respiretest.Rule{Command: "HELLO", Action: respiretest.Hold})
			defer hold.Release()
			errc := make(chan error, 1)
			go func() { errc <- tc.run(testCtx(t), c) }()
			<-hold.Received()
			must(t, c.Close())
			if err := <-errc; !errors.Is(err, ErrClosed) {
				t.Errorf("%s whose connection was being opened at Close = %v, want ErrClosed", tc.name, err)
			}
		})
	}
}

// TestCloseConcurrentCallsBothWait: Close "waits for the client's
// goroutines to exit and is safe to call more than once", so a Close
// called while another is still waiting must wait too: a caller that
// checks for leaked goroutines after its own Close returned found the
// client's still running. The first Close is held by a subscription's
// reconnect dial that ignores its context (a Dialer may).
func TestCloseConcurrentCallsBothWait(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		var (
			mu      sync.Mutex
			last    net.Conn
			hold    atomic.Bool
			dialing = make(chan struct{}, 1)
			gate    = make(chan struct{})
		)
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if hold.Load() {
				dialing <- struct{}{}
				<-gate
			}
			nc, err := s.Dial(ctx, network, addr)
			mu.Lock()
			last = nc
			mu.Unlock()
			return nc, err
		}
		c := retryMemClient(t, s, Options{Dialer: dial})
		if _, err := c.Subscribe(context.Background(), "ch"); err != nil {
			t.Fatal(err)
		}
		hold.Store(true)
		mu.Lock()
		_ = last.Close() // the subscription's connection: it reconnects
		mu.Unlock()
		<-dialing
		closed := make(chan error, 2)
		go func() { closed <- c.Close() }()
		go func() { closed <- c.Close() }()
		synctest.Wait()
		if n := len(closed); n != 0 {
			t.Errorf("%d of two concurrent Close calls returned while the subscription's goroutine still runs", n)
		}
		close(gate)
		for range 2 {
			if err := <-closed; err != nil {
				t.Errorf("Close = %v", err)
			}
		}
	})
}
