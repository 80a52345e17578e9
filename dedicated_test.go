package respire

// Dedicated connections against the real server: state commands and
// transactions are allowed there, nothing is retried, and the connection
// goes back to the pool only as it was lent.

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// An optimistic-lock counter through WATCH/MULTI/EXEC from 16 goroutines
// ends exactly at the number of EXECs that succeeded.
func TestDedicatedWatchMultiExecCounter(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "counter")
	if err := c.Set(ctx, k, "0"); err != nil {
		t.Fatal(err)
	}
	var committed, aborted atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 25 {
				err := c.Dedicated(ctx, func(conn *Conn) error {
					if _, err := conn.Do(ctx, catalog.Transactions.WATCH(), k); err != nil {
						return err
					}
					r, err := conn.Do(ctx, catalog.String.GET(), k)
					if err != nil {
						return err
					}
					n, err := r.Int64()
					if err != nil {
						return err
					}
					if _, err := conn.Do(ctx, catalog.Transactions.MULTI()); err != nil {
						return err
					}
					if r, err := conn.Do(ctx, catalog.String.SET(), k, strconv.FormatInt(n+1, 10)); err != nil || r.v.Text() != "QUEUED" {
						return errors.Join(err, errors.New("SET in MULTI not queued: "+r.v.Text()))
					}
					exec, err := conn.Do(ctx, catalog.Transactions.EXEC())
					if err != nil {
						return err
					}
					if exec.IsNull() {
						aborted.Add(1)
					} else {
						committed.Add(1)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := c.Get(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(committed.Load(), 10); got != want {
		t.Fatalf("counter = %s, want %s (the successful EXECs); %d aborted", got, want, aborted.Load())
	}
	t.Logf("committed %d, aborted %d", committed.Load(), aborted.Load())
}

// An EXEC aborted because a WATCHed key changed is a null reply the
// callback sees, and nothing of the transaction ran.
func TestDedicatedAbortedExecIsNull(t *testing.T) {
	addr := standaloneAddr(t)
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "watched")
	if err := c.Set(ctx, k, "before"); err != nil {
		t.Fatal(err)
	}
	err := c.Dedicated(ctx, func(conn *Conn) error {
		if _, err := conn.Do(ctx, catalog.Transactions.WATCH(), k); err != nil {
			return err
		}
		admin(t, addr, "SET", k, "changed")
		if _, err := conn.Do(ctx, catalog.Transactions.MULTI()); err != nil {
			return err
		}
		if _, err := conn.Do(ctx, catalog.String.SET(), k, "mine"); err != nil {
			return err
		}
		r, err := conn.Do(ctx, catalog.Transactions.EXEC())
		if err != nil {
			return err
		}
		if !r.IsNull() {
			t.Errorf("EXEC after the watched key changed = %v, want null", r.v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get(ctx, k); got != "changed" {
		t.Fatalf("value = %q, want changed: the aborted transaction must not write", got)
	}
}

// SELECT and CLIENT SETNAME are allowed on a dedicated connection; when
// the callback returns the connection is reset and pooled, and the next
// loan finds database 0 and the client's own name on the same connection.
func TestDedicatedStateIsResetBeforePooling(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Protocol: p, ClientName: "respire-dedicated"})
			ctx := testCtx(t)
			k := key(t, "db1")
			var firstID string
			err := c.Dedicated(ctx, func(conn *Conn) error {
				id, err := conn.Do(ctx, catalog.Conn.CLIENT_ID())
				if err != nil {
					return err
				}
				firstID = id.v.Text()
				for _, cmd := range [][]string{{"SELECT", "1"}, {"CLIENT", "SETNAME", "changed"}, {"SET", k, "in-db-1"}} {
					if _, err := conn.Do(ctx, NewCommand(cmd[0]), anys(cmd[1:])...); err != nil {
						return err
					}
				}
				_, err = conn.Do(ctx, catalog.Transactions.WATCH(), k)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if st := c.blocking.Stats(); st.Idle != 1 || st.Open != 1 {
				t.Fatalf("pool after the loan: %+v, want the connection idle", st)
			}
			err = c.Dedicated(ctx, func(conn *Conn) error {
				info, err := conn.Do(ctx, catalog.Conn.CLIENT_INFO())
				if err != nil {
					return err
				}
				text := info.v.Text()
				if infoField(text, "id") != firstID {
					t.Errorf("second loan on connection %s, want the pooled %s", infoField(text, "id"), firstID)
				}
				if db, name, watch := infoField(text, "db"), infoField(text, "name"), infoField(text, "watch"); db != "0" || name != "respire-dedicated" || (watch != "" && watch != "0") {
					t.Errorf("after the reset: db=%s name=%s watch=%s, want db=0 name=respire-dedicated watch=0", db, name, watch)
				}
				if infoField(text, "resp") != "" && infoField(text, "resp") != strconv.Itoa(p) {
					t.Errorf("after the reset: resp=%s, want %d", infoField(text, "resp"), p)
				}
				r, err := conn.Do(ctx, catalog.String.GET(), k)
				if err != nil {
					return err
				}
				if !r.IsNull() {
					t.Errorf("GET in database 0 = %v, want null (the key is in database 1)", r.v)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if r := adminDB(t, 1, "DEL", k); r != 1 {
				t.Errorf("DEL in database 1 = %d, want 1", r)
			}
		})
	}
}

// Some connection state outlives RESET on some servers: CLIENT NO-EVICT
// on Redis 7.0, a CLIENT SETINFO library name everywhere. A loan that set
// such state never hands it to the next loan: the next one, on the same
// pool, finds the connection without it.
func TestDedicatedStateResetDoesNotUndoIsNotPooled(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Protocol: p, BlockingPoolSize: 1})
			ctx := testCtx(t)
			set := map[string]bool{} // the state commands this server accepted
			err := c.Dedicated(ctx, func(conn *Conn) error {
				for _, cmd := range [][]string{
					{"CLIENT", "NO-EVICT", "on"}, {"client", "no-touch", "ON"}, {"CLIENT", "SETINFO", "lib-name", "leaked"},
				} {
					if _, err := conn.Do(ctx, NewCommand(cmd[0]), anys(cmd[1:])...); err == nil {
						set[strings.ToUpper(cmd[1])] = true
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !set["NO-EVICT"] {
				t.Skip("the server has no CLIENT NO-EVICT")
			}
			err = c.Dedicated(ctx, func(conn *Conn) error {
				info, err := conn.Do(ctx, catalog.Conn.CLIENT_INFO())
				if err != nil {
					return err
				}
				text := info.v.Text()
				flags := infoField(text, "flags")
				if strings.Contains(flags, "e") {
					t.Errorf("the next loan's connection is still no-evict: %s", text)
				}
				if set["NO-TOUCH"] && strings.Contains(flags, "T") {
					t.Errorf("the next loan's connection is still no-touch: %s", text)
				}
				if set["SETINFO"] && infoField(text, "lib-name") == "leaked" {
					t.Errorf("the next loan's connection still has the library name: %s", text)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A callback that kills its own connection (CLIENT KILL ... SKIPME no)
// gets the server's reply, then the server closes the connection: it is
// never pooled, so the next loan's first command runs, rather than failing
// as a connection lost after its write.
func TestDedicatedOwnKilledConnectionIsNotPooled(t *testing.T) {
	c := newClient(t, Options{BlockingPoolSize: 1})
	ctx := testCtx(t)
	for i := range 3 {
		err := c.Dedicated(ctx, func(conn *Conn) error {
			id, err := conn.Do(ctx, catalog.Conn.CLIENT_ID())
			if err != nil {
				return err
			}
			n, err := conn.Do(ctx, NewCommand("client"), "Kill", "ID", id.v.Text(), "SKIPME", "no")
			if err != nil || n.v.Int != 1 {
				t.Errorf("CLIENT KILL own id = %v, %v; want 1 killed", n.v, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Dedicated(ctx, func(conn *Conn) error {
			_, err := conn.Do(ctx, catalog.Conn.PING())
			return err
		})
		if err != nil {
			t.Fatalf("round %d: the loan after a killed one: %v", i, err)
		}
	}
}

// adminDB runs one command in database db on a fresh connection and
// returns its integer reply.
func adminDB(t *testing.T, db int, name string, args ...string) int64 {
	t.Helper()
	c := newClient(t, Options{DB: db})
	r, err := c.Do(testCtx(t), NewCommand(name), anys(args)...)
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A connection whose callback left a transaction open, failed with a
// context error, killed its own connection or panicked is closed, not
// pooled.
func TestDedicatedDiscardsConnectionsInUnknownState(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	cases := map[string]func(conn *Conn) error{
		"open transaction": func(conn *Conn) error {
			_, err := conn.Do(ctx, catalog.Transactions.MULTI())
			return err
		},
		"context error returned": func(conn *Conn) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := conn.Do(cctx, catalog.Conn.PING())
			return err // nothing was sent, but the callback ended with a context error
		},
		// The server closes the connection after the reply: pooled at
		// once, it failed the next blocking call with a lost connection.
		"killed itself": func(conn *Conn) error {
			r, err := conn.Do(ctx, catalog.Conn.CLIENT_ID())
			if err != nil {
				return err
			}
			if r, err = conn.Do(ctx, catalog.Conn.CLIENT_KILL(), "ID", r.v.Text(), "SKIPME", "no"); err != nil || r.v.Text() != "1" {
				t.Errorf("CLIENT KILL ID self SKIPME no = %v, %v; want 1 killed", r.v, err)
			}
			return nil
		},
		"blocking command abandoned": func(conn *Conn) error {
			cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if _, err := conn.Do(cctx, catalog.List.BLPOP(), key(t, "never"), "0"); !errors.Is(err, context.DeadlineExceeded) || !MayHaveExecuted(err) {
				t.Errorf("BLPOP past its context = %v, want a deadline that may have run", err)
			}
			if _, err := conn.Do(ctx, catalog.Conn.PING()); err == nil {
				t.Error("a command after a failed one succeeded: the state is unknown, it must fail")
			}
			return nil
		},
	}
	for name, fn := range cases {
		if err := c.Dedicated(ctx, fn); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: Dedicated = %v", name, err)
		}
		if st := c.blocking.Stats(); st.Open != 0 {
			t.Fatalf("%s: pool %+v, want the connection closed", name, st)
		}
	}
	func() {
		defer func() { _ = recover() }()
		_ = c.Dedicated(ctx, func(conn *Conn) error { panic("callback panics") })
	}()
	if st := c.blocking.Stats(); st.Open != 0 {
		t.Fatalf("after a panic: pool %+v, want the connection closed", st)
	}
	// A stateless loan keeps its connection.
	if err := c.Dedicated(ctx, func(conn *Conn) error {
		_, err := conn.Do(ctx, catalog.String.GET(), key(t, "x"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if st := c.blocking.Stats(); st.Open != 1 || st.Idle != 1 {
		t.Fatalf("after a stateless loan: pool %+v, want 1 idle", st)
	}
}

// A blocking command on a dedicated connection whose caller gives up is
// stopped on the server at once, as Client.BLPop's is, not when the
// callback returns: an element pushed while the callback goes on stays in
// the list, never popped for nobody.
func TestDedicatedBlockingCallerGoneIsStopped(t *testing.T) {
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name}, func(t *testing.T, c *Client) {
		list := key(t, "list")
		err := c.Dedicated(testCtx(t), func(conn *Conn) error {
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() {
				_, err := conn.Do(ctx, catalog.List.BLPOP(), list, "0")
				errc <- err
			}()
			waitNamedBlocked(t, name)
			cancel()
			var ce *ContextError
			if err := <-errc; !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || !ce.Sent {
				t.Errorf("BLPOP after cancel: %v, want a *ContextError (Sent) matching context.Canceled", err)
			}
			if _, err := c.RPush(testCtx(t), list, "later"); err != nil {
				return err
			}
			r, err := c.Do(testCtx(t), catalog.List.LLEN(), list)
			if n, _ := r.Int64(); err != nil || n != 1 {
				t.Errorf("LLEN = %d, %v while the callback goes on, want 1: the element was popped for nobody", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if k, v, err := c.BLPop(testCtx(t), time.Second, list); err != nil || k != list || v != "later" {
			t.Errorf("BLPop after the stopped call = %q, %q, %v; want the element", k, v, err)
		}
	})
}

// A caller waiting for its turn on a dedicated connection that another
// goroutine's command holds leaves when its context ends, sending
// nothing; the command that holds the connection still gets its own
// reply, and so does the next one.
func TestDedicatedWaitingCallerLeavesOnCancel(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	list := key(t, "list")
	err := c.Dedicated(testCtx(t), func(conn *Conn) error {
		popped := make(chan Reply, 1)
		go func() {
			r, err := conn.Do(testCtx(t), catalog.List.BLPOP(), list, "0")
			if err != nil {
				t.Errorf("BLPOP: %v", err)
			}
			popped <- r
		}()
		waitNamedBlocked(t, name)
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Do(ctx, catalog.Conn.ECHO(), "never sent")
			errc <- err
		}()
		cancel()
		select {
		case err := <-errc:
			var ce *ContextError
			if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || ce.Sent {
				t.Errorf("ECHO waiting behind BLPOP after cancel: %v, want an unsent *ContextError matching context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ECHO waiting behind BLPOP: still waiting 5 s after its context ended")
		}
		if _, err := c.RPush(testCtx(t), list, "element"); err != nil {
			return err
		}
		if got := <-popped; len(got.Elements()) != 2 || got.Elements()[1].v.Text() != "element" {
			t.Errorf("BLPOP = %v, want its element", got.v)
		}
		if r, err := conn.Do(testCtx(t), catalog.Conn.ECHO(), "next"); err != nil || r.v.Text() != "next" {
			t.Errorf("ECHO next = %v, %v; want its own reply", r.v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A transaction sent by hand on a dedicated connection that stays idle
// longer than IdlePingInterval between MULTI and EXEC gets EXEC's reply
// of its own commands only: the connection's idle PING is held while it
// is lent, never queued inside the caller's MULTI. (In a synctest bubble
// the sleep is virtual time: ten idle intervals.)
func TestDedicatedIdlePingStaysOutOfTransaction(t *testing.T) {
	retrySynctest(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c := retryMemClient(t, s, Options{IdlePingInterval: 100 * time.Millisecond})
		ctx := context.Background()
		err := c.Dedicated(ctx, func(conn *Conn) error {
			if _, err := conn.Do(ctx, catalog.Transactions.MULTI()); err != nil {
				return err
			}
			time.Sleep(time.Second)
			if _, err := conn.Do(ctx, catalog.String.SET(), "k", "v"); err != nil {
				return err
			}
			r, err := conn.Do(ctx, catalog.Transactions.EXEC())
			if err != nil {
				return err
			}
			if got := r.Elements(); len(got) != 1 || got[0].v.Text() != "OK" {
				t.Errorf("EXEC = %v, want [OK]: the reply of the one queued SET", r.v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Nothing is retried on a dedicated connection, whatever the policy: an
// INCR whose reply is lost ran once and reports that it may have run.
func TestDedicatedNeverRetries(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()},
		RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating}})
	ctx := testCtx(t)
	k := key(t, "n")
	proxy.MustAddRule(t, respiretest.Rule{Command: "INCR", Arg: k, Action: respiretest.DropAfterForward})
	err := c.Dedicated(ctx, func(conn *Conn) error {
		_, err := conn.Do(ctx, catalog.String.INCR(), k)
		return err
	})
	if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
		t.Fatalf("INCR with its reply lost = %v, want a connection loss that may have run", err)
	}
	if got := proxy.Forwarded("INCR"); got != 1 {
		t.Fatalf("INCR forwarded %d times, want 1", got)
	}
	if got, _ := c.Get(ctx, k); got != "1" {
		t.Fatalf("counter = %q, want 1", got)
	}
}

// Bad input: a nil callback, and the commands a dedicated connection
// still refuses, fail with ErrInvalidArgument and send nothing; a Conn
// used after its callback fails with ErrClosed.
func TestDedicatedBadInputSendsNothing(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}})
	ctx := testCtx(t)
	if err := c.Dedicated(ctx, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Dedicated(nil) = %v, want ErrInvalidArgument", err)
	}
	var kept *Conn
	err := c.Dedicated(ctx, func(conn *Conn) error {
		kept = conn
		before := totalReceived(proxy)
		for _, call := range [][]string{{"SUBSCRIBE", "ch"}, {"PSUBSCRIBE", "p*"}, {"SSUBSCRIBE", "s"}, {"UNSUBSCRIBE"},
			{"MONITOR"}, {"CLIENT", "REPLY", "OFF"}, {"SCRIPT", "DEBUG", "YES"}, {"HELLO", "3"}, {"RESET"}, {"QUIT"}, {"BLPOP", "k", "-1"},
			// An argument written into the name of a command without
			// subcommands reaches the server as that command's argument.
			{"hello 3"}, {"quit now"}} {
			_, err := conn.Do(ctx, NewCommand(call[0]), anys(call[1:])...)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), strings.ToUpper(strings.Fields(call[0])[0])) {
				t.Errorf("Dedicated Do %v = %v, want ErrInvalidArgument naming it", call, err)
			}
		}
		if got := totalReceived(proxy); got != before {
			t.Errorf("the proxy received %d frames, want 0", got-before)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Do(ctx, catalog.Conn.PING()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after the callback returned = %v, want ErrClosed", err)
	}
}

// RESET deauthenticates and selects database 0: the restore replays AUTH
// and SELECT, so the pooled connection keeps serving as the client's user
// in the client's database.
func TestDedicatedResetReplaysAuthAndDatabase(t *testing.T) {
	addr := privateServer(t)
	admin(t, addr, "CONFIG", "SET", "requirepass", testPassword)
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			c := newClient(t, Options{Endpoints: []string{addr}, Protocol: p, Password: testPassword, DB: 2})
			ctx := testCtx(t)
			var id string
			must(t, c.Dedicated(ctx, func(conn *Conn) error {
				r, err := conn.Do(ctx, catalog.Conn.CLIENT_ID())
				id = r.v.Text()
				if err != nil {
					return err
				}
				_, err = conn.Do(ctx, catalog.Conn.SELECT(), "5")
				return err
			}))
			must(t, c.Dedicated(ctx, func(conn *Conn) error {
				info, err := conn.Do(ctx, catalog.Conn.CLIENT_INFO())
				if err != nil {
					return err
				}
				text := info.v.Text()
				if infoField(text, "id") != id || infoField(text, "db") != "2" || infoField(text, "user") != "default" {
					t.Errorf("after the restore: %s; want id=%s db=2 user=default", text, id)
				}
				return nil
			}))
		})
	}
}

// A callback that returns while a command it started on another goroutine
// still runs on the Conn does not make Dedicated wait for that command:
// the command is stopped (a blocking one on the server, so nothing is
// popped for nobody), fails with ErrClosed, and the connection is closed,
// not pooled.
func TestDedicatedReturnStopsCommandStillRunning(t *testing.T) {
	name := blockingName(t)
	c := newClient(t, Options{ClientName: name})
	list := key(t, "list")
	ctx := testCtx(t)
	errc := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Dedicated(ctx, func(conn *Conn) error {
			go func() {
				_, err := conn.Do(context.Background(), catalog.List.BLPOP(), list, "0")
				errc <- err
			}()
			waitNamedBlocked(t, name)
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Dedicated = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Dedicated still waits for the BLPOP its callback left running")
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("BLPOP left running = %v, want ErrClosed", err)
	}
	if st := c.blocking.Stats(); st.Open != 0 {
		t.Fatalf("pool %+v, want the connection closed", st)
	}
	if _, err := c.RPush(ctx, list, "later"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.LLen(ctx, list); err != nil || n != 1 {
		t.Fatalf("LLEN = %d, %v; want 1: the element was popped for nobody", n, err)
	}
}

// On a Cluster client, a command left running by a callback that returns
// while it waits for its node's connection (every one lent) fails with
// ErrClosed too, not with a context error its caller never caused.
func TestDedicatedReturnStopsClusterBindWaiting(t *testing.T) {
	c := clusterClient(t, Options{BlockingPoolSize: 1})
	ctx := testCtx(t)
	k := key(t, "k")
	held, release := make(chan struct{}), make(chan struct{})
	outer := make(chan error, 1)
	go func() {
		outer <- c.Dedicated(ctx, func(conn *Conn) error {
			if _, err := conn.Do(ctx, catalog.String.GET(), k); err != nil {
				close(held)
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	node, err := c.topo.Pick(route.Slot(k), false)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	err = c.Dedicated(ctx, func(conn *Conn) error {
		go func() {
			_, err := conn.Do(context.Background(), catalog.String.GET(), k)
			errc <- err
		}()
		for node.Pool.Stats().Waiting == 0 { // the GET waits for the lent connection
			if ctx.Err() != nil {
				return ctx.Err()
			}
			runtime.Gosched()
		}
		return nil
	})
	close(release)
	if err != nil {
		t.Fatalf("Dedicated = %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("GET left waiting for its node's connection = %v, want ErrClosed", err)
	}
	if err := <-outer; err != nil {
		t.Fatal(err)
	}
}
