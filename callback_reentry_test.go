package respire

import (
	"context"
	"testing"

	"github.com/respire-go/respire/catalog"
)

// closeHook calls the client's Close from inside a ProcessHook or
// ProcessBatchHook, before next (a ProcessHook: of ECHO only).
type closeHook struct{ c **Client }

func (h closeHook) DialHook(next DialHook) DialHook { return next }
func (h closeHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if cmd.Name == "ECHO" {
			_ = (*h.c).Close()
		}
		return next(ctx, cmd)
	}
}
func (h closeHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return func(ctx context.Context, b *BatchInfo) error {
		_ = (*h.c).Close()
		return next(ctx, b)
	}
}

// A callback run on the caller's goroutine (Dedicated's fn, Watch's fn,
// a ProcessHook, a ProcessBatchHook, a Scan loop body) may close its own
// client: the call returns (ErrClosed), nothing deadlocks.
func TestCallbackOnCallerGoroutineMayCloseClient(t *testing.T) {
	ctx := testCtx(t)
	k := key(t, "cb")
	cases := map[string]func(c *Client) error{
		"Dedicated": func(c *Client) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				if _, err := conn.Do(ctx, catalog.Conn.PING()); err != nil {
					return err
				}
				return c.Close()
			})
		},
		"DedicatedThenDo": func(c *Client) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				_ = c.Close()
				_, err := conn.Do(ctx, catalog.Conn.PING())
				return err
			})
		},
		"Watch": func(c *Client) error {
			return c.Watch(ctx, func(tx *Tx) error {
				_ = c.Close()
				tx.Queue().Incr(k)
				return nil
			}, k)
		},
		"ProcessHook": func(c *Client) error {
			_, err := c.Do(ctx, catalog.Conn.ECHO(), "x")
			return err
		},
		"ProcessBatchHook": func(c *Client) error {
			b := c.NewBatch()
			b.Incr(k)
			return b.Execute(ctx)
		},
		"Scan": func(c *Client) error {
			if err := c.Set(ctx, k, "1"); err != nil {
				return err
			}
			for _, err := range c.Scan(ctx, ScanOptions{Match: k}) {
				if err != nil {
					return err
				}
				_ = c.Close()
			}
			return nil
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			var c *Client
			c = newClient(t, Options{Hooks: []Hook{closeHook{&c}}})
			done := make(chan error, 1)
			go func() { done <- run(c) }()
			select {
			case <-done: // its error is whatever Close left it; returning is the point
			case <-ctx.Done():
				t.Fatalf("%s deadlocked:\n%s", name, allStacks())
			}
		})
	}
}

// panicAllHook panics in the ProcessHook of ECHO and in every
// ProcessBatchHook.
type panicAllHook struct{}

func (panicAllHook) DialHook(next DialHook) DialHook { return next }
func (panicAllHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if cmd.Name == "ECHO" {
			panic("boom")
		}
		return next(ctx, cmd)
	}
}
func (panicAllHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook {
	return func(ctx context.Context, b *BatchInfo) error { panic("boom") }
}

// A panic in a callback run on the caller's goroutine reaches the
// caller, and leaves the client usable: its next command succeeds and
// Close returns.
func TestCallbackPanicOnCallerGoroutineReachesCaller(t *testing.T) {
	ctx := testCtx(t)
	k := key(t, "cbp")
	cases := map[string]func(c *Client){
		"Dedicated": func(c *Client) {
			_ = c.Dedicated(ctx, func(conn *Conn) error {
				_, _ = conn.Do(ctx, catalog.Transactions.MULTI())
				panic("boom")
			})
		},
		"Watch": func(c *Client) {
			_ = c.Watch(ctx, func(tx *Tx) error { panic("boom") }, k)
		},
		"ProcessHook": func(c *Client) { _, _ = c.Do(ctx, catalog.Conn.ECHO(), "x") },
		"ProcessBatchHook": func(c *Client) {
			b := c.NewBatch()
			b.Incr(k)
			_ = b.Execute(ctx)
		},
		"Scan": func(c *Client) {
			_ = c.Set(ctx, k, "1")
			for range c.Scan(ctx, ScanOptions{Match: k}) {
				panic("boom")
			}
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, Options{Hooks: []Hook{panicAllHook{}}, BlockingPoolSize: 1})
			func() {
				defer func() {
					if p := recover(); p != "boom" {
						t.Errorf("%s: recovered %v, want the callback's panic", name, p)
					}
				}()
				run(c)
			}()
			if err := c.Dedicated(ctx, func(conn *Conn) error {
				_, err := conn.Do(ctx, catalog.Conn.PING())
				return err
			}); err != nil {
				t.Errorf("%s: Dedicated after the panic: %v", name, err)
			}
			if err := c.Set(ctx, k, "2"); err != nil {
				t.Errorf("%s: Set after the panic: %v", name, err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("%s: Close: %v", name, err)
			}
		})
	}
}

// gateHook holds the ProcessHook of ECHO until release is closed, after
// closing entered.
type gateHook struct{ entered, release chan struct{} }

func (h gateHook) DialHook(next DialHook) DialHook { return next }
func (h gateHook) ProcessHook(next ProcessHook) ProcessHook {
	return func(ctx context.Context, cmd *CommandInfo) error {
		if cmd.Name == "ECHO" {
			close(h.entered)
			<-h.release
		}
		return next(ctx, cmd)
	}
}
func (h gateHook) ProcessBatchHook(next ProcessBatchHook) ProcessBatchHook { return next }

// Close does not wait for a callback that blocks on a caller's goroutine
// (a ProcessHook, Dedicated's fn), and other callers of the shared
// connection go on meanwhile.
func TestBlockedCallerCallbackStallsNeitherOthersNorClose(t *testing.T) {
	ctx := testCtx(t)
	k := key(t, "cbb")
	for _, name := range []string{"ProcessHook", "Dedicated"} {
		t.Run(name, func(t *testing.T) {
			h := gateHook{entered: make(chan struct{}), release: make(chan struct{})}
			c := newClient(t, Options{Hooks: []Hook{h}})
			done := make(chan struct{})
			go func() {
				defer close(done)
				if name == "ProcessHook" {
					_, _ = c.Do(ctx, catalog.Conn.ECHO(), "x")
					return
				}
				_ = c.Dedicated(ctx, func(*Conn) error {
					close(h.entered)
					<-h.release
					return nil
				})
			}()
			<-h.entered
			if err := c.Set(ctx, k, "1"); err != nil {
				t.Errorf("Set while the callback blocks: %v", err)
			}
			closed := make(chan error, 1)
			go func() { closed <- c.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close while the callback blocks: %v", err)
				}
			case <-ctx.Done():
				t.Errorf("Close waited for the blocked callback:\n%s", allStacks())
			}
			close(h.release)
			<-done
		})
	}
}
