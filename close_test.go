package respire

import (
	"context"
	"errors"
	"testing"
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
