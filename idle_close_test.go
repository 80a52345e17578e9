package respire

import (
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/wire"
)

// TestServerCloseOfIdleConnectionIsSeenBeforeTheWrite: a server that
// closed an idle shared connection (a restart, CLIENT KILL, its timeout)
// before the next command was written is noticed before that command is
// written, so the command is known unsent: a retry policy may resend even
// an INCR on a new connection, and the server runs it once. Without the
// check, the command went out on the dead socket and failed as possibly
// executed. (TCP and Unix sockets; a connection idle for at least
// wire.DefaultCloseCheckAfter.)
func TestServerCloseOfIdleConnectionIsSeenBeforeTheWrite(t *testing.T) {
	addr := standaloneAddr(t)
	forEachProtocol(t, Options{RetryPolicy: &RetryPolicy{RetryableErrors: RetryOnConnectionLoss, InitialBackoff: NoBackoff}},
		func(t *testing.T, c *Client) {
			k := key(t, "counter")
			ctx := testCtx(t)
			if _, err := c.Do(ctx, NewCommand("INCR").WithRetryCategory(WriteAccumulating), k); err != nil {
				t.Fatal(err)
			}
			// The health monitor's tick may read the close first (it
			// resumes an idle connection's reads every 750 ms): the
			// command is known unsent then too.
			killClient(t, addr, clientID(t, c))
			// The check runs on a connection idle for longer than
			// wire.DefaultCloseCheckAfter (a caller that follows the last
			// reply closely skips it; internal/wire tests both sides).
			// This wait sets up that idleness; it synchronises nothing.
			time.Sleep(2 * wire.DefaultCloseCheckAfter)
			r, err := c.Do(ctx, NewCommand("INCR").WithRetryCategory(WriteAccumulating), k)
			if err != nil {
				var ce *ConnError
				errors.As(err, &ce)
				t.Fatalf("INCR after the server closed the idle connection: %v (ConnError %+v); want it sent once on a new connection", err, ce)
			}
			if n, _ := r.Int64(); n != 2 {
				t.Errorf("INCR = %d, want 2: the server ran it once", n)
			}
		})
}

// TestServerCloseOfIdleConnectionIsSeenBeforeABatch: the same for a batch
// written by its caller onto the idle connection (Submit, not Do).
func TestServerCloseOfIdleConnectionIsSeenBeforeABatch(t *testing.T) {
	addr := standaloneAddr(t)
	forEachProtocol(t, Options{RetryPolicy: &RetryPolicy{RetryableErrors: RetryOnConnectionLoss, InitialBackoff: NoBackoff}},
		func(t *testing.T, c *Client) {
			k := key(t, "counter")
			ctx := testCtx(t)
			if _, err := c.Incr(ctx, k); err != nil {
				t.Fatal(err)
			}
			killClient(t, addr, clientID(t, c))
			time.Sleep(2 * wire.DefaultCloseCheckAfter) // idleness, as above
			b := c.NewBatch()
			n := b.Incr(k)
			if err := b.Execute(ctx); err != nil {
				t.Fatalf("batch after the server closed the idle connection: %v; want it sent once on a new connection", err)
			}
			if v, err := n.Result(); err != nil || v != 2 {
				t.Errorf("INCR in the batch = %d, %v; want 2: the server ran it once", v, err)
			}
		})
}
