package respire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
)

// closeRaceOps are the public paths TestCloseRacesEveryPath runs, each in
// a loop, while the client closes. An op returns nil while the client is
// open and checks that its reply is its own.
func closeRaceOps(t *testing.T, c *Client) map[string]func(ctx context.Context, i int) error {
	k := key(t, "k")
	ctx := testCtx(t)
	must(t, c.Set(ctx, k, "v"))
	for i := range 20 {
		must(t, c.Set(ctx, key(t, "scan", strconv.Itoa(i)), "x"))
	}
	if _, err := c.HSet(ctx, key(t, "h"), "f1", "1", "f2", "2", "f3", "3"); err != nil {
		t.Fatal(err)
	}
	script := NewScript("return ARGV[1]", ScriptOptions{ReadOnly: true})
	own := func(what, got, want string) error {
		if got != want {
			return fmt.Errorf("%s got %q, want %q: another caller's reply", what, got, want)
		}
		return nil
	}
	ops := map[string]func(ctx context.Context, i int) error{
		"Echo": func(ctx context.Context, i int) error {
			msg := "echo-" + strconv.Itoa(i)
			got, err := c.Echo(ctx, msg)
			if err != nil {
				return err
			}
			return own("Echo", got, msg)
		},
		"Do": func(ctx context.Context, i int) error {
			msg := "do-" + strconv.Itoa(i)
			r, err := c.Do(ctx, NewCommand("ECHO"), msg)
			if err != nil {
				return err
			}
			got, _ := r.String()
			return own("Do", got, msg)
		},
		"Batch": func(ctx context.Context, i int) error {
			b := c.NewBatch()
			msg := "batch-" + strconv.Itoa(i)
			f := b.Do(NewCommand("ECHO"), msg)
			g := b.Get(k)
			if err := b.Execute(ctx); err != nil {
				return err
			}
			r, err := f.Result()
			if err != nil {
				return err
			}
			got, _ := r.String()
			if err := own("Batch ECHO", got, msg); err != nil {
				return err
			}
			v, err := g.Result()
			if err != nil {
				return err
			}
			return own("Batch GET", v, "v")
		},
		"Transaction": func(ctx context.Context, i int) error {
			b := c.NewTransaction()
			g := b.Get(k)
			if err := b.Execute(ctx); err != nil {
				return err
			}
			v, err := g.Result()
			if err != nil {
				return err
			}
			return own("Transaction GET", v, "v")
		},
		"Watch": func(ctx context.Context, i int) error {
			err := c.Watch(ctx, func(tx *Tx) error {
				v, err := tx.Get(ctx, k)
				if err != nil {
					return err
				}
				if err := own("Watch GET", v, "v"); err != nil {
					return err
				}
				tx.Queue().Set(k, "v")
				return nil
			}, k)
			if errors.Is(err, ErrTxConflict) {
				return nil // every op writes k in a loop: 16 conflicts in a row happen
			}
			return err
		},
		"Dedicated": func(ctx context.Context, i int) error {
			return c.Dedicated(ctx, func(conn *Conn) error {
				for j := range 5 {
					msg := "ded-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
					r, err := conn.Do(ctx, NewCommand("ECHO"), msg)
					if err != nil {
						return err
					}
					got, _ := r.String()
					if err := own("Dedicated", got, msg); err != nil {
						return err
					}
				}
				return nil
			})
		},
		"Scan": func(ctx context.Context, i int) error {
			for _, err := range c.Scan(ctx, ScanOptions{Match: keyPrefix(t) + "scan:*", Count: 2}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"HScan": func(ctx context.Context, i int) error {
			for _, err := range c.HScan(ctx, key(t, "h"), ScanOptions{Count: 1}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Script": func(ctx context.Context, i int) error {
			msg := "script-" + strconv.Itoa(i)
			r, err := script.Run(ctx, c, []string{k}, msg)
			if err != nil {
				return err
			}
			got, _ := r.String()
			return own("Script", got, msg)
		},
		"BLPop": func(ctx context.Context, i int) error {
			_, _, err := c.BLPop(ctx, 0, key(t, "never"))
			if err == nil {
				return errors.New("BLPOP on an empty list returned")
			}
			return err
		},
		"Subscribe": func(ctx context.Context, i int) error {
			sub, err := c.Subscribe(ctx, key(t, "ch", strconv.Itoa(i)))
			if err != nil {
				return err
			}
			if err := sub.Subscribe(ctx, key(t, "ch2", strconv.Itoa(i))); err != nil {
				_ = sub.Close()
				return err
			}
			if err := sub.Unsubscribe(ctx, key(t, "ch", strconv.Itoa(i))); err != nil {
				_ = sub.Close()
				return err
			}
			return sub.Close()
		},
	}
	if c.cache != nil {
		ops["GetCached"] = func(ctx context.Context, i int) error {
			v, err := c.GetCached(ctx, k)
			if err != nil {
				return err
			}
			return own("GetCached", v, "v")
		}
	}
	return ops
}

// TestCloseRacesEveryPath runs every public path in a loop on several
// goroutines and closes the client once each has run: every call returns,
// a failure matches ErrClosed, no reply is another caller's, and
// (TestMain) no goroutine outlives the test.
func TestCloseRacesEveryPath(t *testing.T) {
	t.Run("Plain", func(t *testing.T) { testCloseRacesEveryPath(t, Options{}) })
	t.Run("CacheHooksRetries", func(t *testing.T) {
		testCloseRacesEveryPath(t, Options{ClientCache: &CacheOptions{}, Hooks: []Hook{swallowHook{}},
			RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	})
}

func testCloseRacesEveryPath(t *testing.T, opts Options) {
	topologies(t, opts, func(t *testing.T, c *Client) {
		raceClose(t, closeRaceOps(t, c), 3, c.Close, "BLPop")
	})
}

// raceClose runs each op in a loop on per goroutines, calls closeFn once
// every op has run once (an op named in blocking, which returns only at
// Close, once it has started), and waits for every loop to end: an op's
// error must match ErrClosed.
func raceClose(t *testing.T, ops map[string]func(ctx context.Context, i int) error, per int, closeFn func() error, blocking ...string) {
	var wg, ran sync.WaitGroup
	errs := make(chan error, len(ops)*per)
	// The loops run until Close, which waits for every op to have run
	// once: on a loaded machine that may take longer than testCtx's 10 s,
	// and a deadline there would fail ops that are not at fault. A hang
	// is the test binary's timeout.
	ctx := t.Context()
	for name, op := range ops {
		for g := range per {
			wg.Add(1)
			ran.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for i := g * 1_000_000; ; i++ {
					if first && slices.Contains(blocking, name) {
						ran.Done()
						first = false
					}
					err := op(ctx, i)
					if first {
						ran.Done()
						first = false
					}
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							errs <- fmt.Errorf("%s: %w", name, err)
						}
						return
					}
				}
			}()
		}
	}
	ran.Wait()
	must(t, closeFn())
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCloseFromProcessHook: a command's process hook, which runs on the
// caller's goroutine, may close its client: Close returns and the command
// fails with ErrClosed.
func TestCloseFromProcessHook(t *testing.T) {
	h := &beforeHook{name: "ECHO"}
	c := newClient(t, Options{Hooks: []Hook{h}})
	closed := make(chan error, 1)
	h.arm(func() { closed <- c.Close() })
	if _, err := c.Echo(testCtx(t), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("ECHO closed by its hook = %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close from the hook = %v", err)
	}
}

// TestCloseFromDedicatedCallback (and the tests below): a Dedicated or Watch callback, a Subscription
// loop's body and a Scan loop's body may close their client: Close
// returns, and what runs after it fails with ErrClosed.
func TestCloseFromDedicatedCallback(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		err := c.Dedicated(ctx, func(conn *Conn) error {
			if err := c.Close(); err != nil {
				t.Errorf("Close in Dedicated = %v", err)
			}
			_, err := conn.Do(ctx, NewCommand("PING"))
			return err
		})
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Dedicated closed by its callback = %v, want ErrClosed", err)
		}
	})
}

func TestCloseFromWatchCallback(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := key(t, "k")
		must(t, c.Set(ctx, k, "v"))
		err := c.Watch(ctx, func(tx *Tx) error {
			if err := c.Close(); err != nil {
				t.Errorf("Close in Watch = %v", err)
			}
			_, err := tx.Get(ctx, k)
			return err
		}, k)
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Watch closed by its callback = %v, want ErrClosed", err)
		}
	})
}

func TestCloseFromSubscriptionLoop(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		ch := key(t, "ch")
		sub, err := c.Subscribe(ctx, ch)
		must(t, err)
		for range 3 {
			if _, err := c.Publish(ctx, ch, "m"); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for range sub.Channel() {
			if n++; n == 1 {
				must(t, c.Close())
			}
		}
	})
}

func TestCloseFromScanBody(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		for i := range 10 {
			must(t, c.Set(ctx, key(t, "s", strconv.Itoa(i)), "v"))
		}
		var last error
		n := 0
		for _, err := range c.Scan(ctx, ScanOptions{Match: keyPrefix(t) + "*", Count: 1}) {
			last = err
			if err != nil {
				break
			}
			if n++; n == 1 {
				must(t, c.Close())
			}
		}
		if !errors.Is(last, ErrClosed) {
			t.Errorf("Scan after its body closed the client ended with %v, want ErrClosed", last)
		}
	})
}

// TestFailoverCloseRacesExecute closes a group while operations run on
// several goroutines: each returns its own reply or an error matching
// ErrClosed, and no goroutine outlives the test.
func TestFailoverCloseRacesExecute(t *testing.T) {
	addr := standaloneAddr(t)
	g, err := NewFailoverGroup(testCtx(t), []FailoverMember{
		{Options: Options{Endpoints: []string{addr}}, Priority: 0},
		{Options: Options{Endpoints: []string{testenv.SentinelPrimary(t)}}, Priority: 1},
	}, FailoverGroupOptions{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	if err != nil {
		t.Fatal(err)
	}
	raceClose(t, map[string]func(ctx context.Context, i int) error{
		"Execute": func(ctx context.Context, i int) error {
			msg := "g-" + strconv.Itoa(i)
			got, err := Execute(ctx, g, ReadOnly, func(ctx context.Context, c *Client) (string, error) {
				return c.Echo(ctx, msg)
			})
			if err == nil && got != msg {
				return fmt.Errorf("Execute got %q, want %q", got, msg)
			}
			return err
		},
	}, 8, g.Close)
}

// TestEveryPathAfterCloseIsErrClosed: after Close, every public path (a
// subscription's methods, iterators, scripts and functions, cached reads,
// batches, callbacks, blocking and fan-out commands) fails with an error
// matching ErrClosed.
func TestEveryPathAfterCloseIsErrClosed(t *testing.T) {
	topologies(t, Options{ClientCache: &CacheOptions{}}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		sub, err := c.Subscribe(ctx, key(t, "ch"))
		must(t, err)
		must(t, c.Close())
		ops := map[string]func() error{
			"sub.Subscribe":   func() error { return sub.Subscribe(ctx, "x") },
			"sub.Unsubscribe": func() error { return sub.Unsubscribe(ctx, "x") },
			"Subscribe":       func() error { _, err := c.Subscribe(ctx, "x"); return err },
			"SSubscribe":      func() error { _, err := c.SSubscribe(ctx, "x"); return err },
			"Scan": func() error {
				for _, err := range c.Scan(ctx, ScanOptions{}) {
					return err
				}
				return errors.New("no value")
			},
			"ScanPages": func() error {
				for _, err := range c.ScanPages(ctx, ScanOptions{}) {
					return err
				}
				return errors.New("no value")
			},
			"Script.Load":   func() error { return NewScript("return 1", ScriptOptions{}).Load(ctx, c) },
			"Script.Run":    func() error { _, err := NewScript("return 1", ScriptOptions{}).Run(ctx, c, nil); return err },
			"Function.Call": func() error { _, err := NewFunction("l", "f", FunctionOptions{}).Call(ctx, c, nil); return err },
			"Function.Load": func() error { return NewFunction("l", "f", FunctionOptions{Source: "#!lua name=l\n"}).Load(ctx, c) },
			"GetCached":     func() error { _, err := c.GetCached(ctx, "k"); return err },
			"DoCached":      func() error { _, err := c.DoCached(ctx, NewCommand("GET"), "k"); return err },
			"Batch":         func() error { b := c.NewBatch(); b.Get("k"); return b.Execute(ctx) },
			"Tx":            func() error { b := c.NewTransaction(); b.Get("k"); return b.Execute(ctx) },
			"Watch":         func() error { return c.Watch(ctx, func(*Tx) error { return nil }, "k") },
			"Dedicated":     func() error { return c.Dedicated(ctx, func(*Conn) error { return nil }) },
			"BLPop":         func() error { _, _, err := c.BLPop(ctx, 0, "k"); return err },
			"Publish":       func() error { _, err := c.Publish(ctx, "k", "m"); return err },
			"PubSubNumSub":  func() error { _, err := c.PubSubNumSub(ctx, "k"); return err },
			"Ping":          func() error { return c.Ping(ctx) },
		}
		for name, op := range ops {
			err := op()
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close = %v", name, err)
			}
		}
	})
}
