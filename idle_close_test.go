package respire

import (
	"testing"
	"time"

	"github.com/respire-go/respire/internal/wire"
)

// TestServerCloseOfIdleConnectionIsSeenBeforeTheWrite: a server that
// closed an idle shared connection (a restart, CLIENT KILL, its timeout)
// before the next command was written is noticed before that command is
// written, so the command is known unsent: the default retry policy
// (writes never sent) resends even an INCR on a new connection, and the
// server runs it once. Without the check, the command went out on the
// dead socket and failed as possibly executed. It holds for a single
// command and for a batch, which travels the same way. (TCP and Unix
// sockets; a connection idle for at least wire.DefaultCloseCheckAfter.)
func TestServerCloseOfIdleConnectionIsSeenBeforeTheWrite(t *testing.T) {
	addr := standaloneAddr(t)
	incr := func(t *testing.T, c *Client, k string) (int64, error) {
		return c.Incr(testCtx(t), k)
	}
	batchIncr := func(t *testing.T, c *Client, k string) (int64, error) {
		b := c.NewBatch()
		n := b.Incr(k)
		if err := b.Execute(testCtx(t)); err != nil {
			return 0, err
		}
		return n.Result()
	}
	for name, send := range map[string]func(*testing.T, *Client, string) (int64, error){"command": incr, "batch": batchIncr} {
		t.Run(name, func(t *testing.T) {
			forEachProtocol(t, Options{RetryPolicy: &RetryPolicy{RetryableErrors: RetryOnConnectionLoss, InitialBackoff: NoBackoff}},
				func(t *testing.T, c *Client) {
					k := key(t, "counter")
					if _, err := send(t, c, k); err != nil {
						t.Fatal(err)
					}
					// The health monitor's tick may read the close first
					// (it resumes an idle connection's reads every 750
					// ms): the command is known unsent then too.
					killClient(t, addr, clientID(t, c))
					// The check runs on a connection idle for longer than
					// wire.DefaultCloseCheckAfter (a caller that follows
					// the last reply closely skips it; internal/wire tests
					// both sides). This wait sets up that idleness; it
					// synchronises nothing.
					time.Sleep(2 * wire.DefaultCloseCheckAfter)
					n, err := send(t, c, k)
					if err != nil {
						t.Fatalf("INCR after the server closed the idle connection: %v; want it sent once on a new connection", err)
					}
					if n != 2 {
						t.Errorf("INCR = %d, want 2: the server ran it once", n)
					}
				})
		})
	}
}
