package respire

// A peer that falls silent without closing the connection, against the
// real server through the fault proxy: a blocking call that waits forever
// is failed by the health check when the server is unreachable, and a
// shared connection that died alone (the server still answers new
// connections) is replaced, and the client-side cache it tracked is
// dropped with it.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// TestBlockForeverFailsWhenThePeerFallsSilent: BLPOP key 0 and XREAD
// BLOCK 0 have no deadline of their own (their caller's context has none
// either), yet a partition that keeps their connection open and silent
// fails them through the health check, as connection loss that may have
// run (the command was sent), instead of holding the caller forever; once
// the link returns, the next blocking call works.
func TestBlockForeverFailsWhenThePeerFallsSilent(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		block     func(c *Client, k string) error
		wake      func(t *testing.T, c *Client, k string)
	}{
		{"BLPOP", "BLPOP",
			func(c *Client, k string) error { _, _, err := c.BLPop(context.Background(), 0, k); return err },
			func(t *testing.T, c *Client, k string) {
				_, err := c.RPush(testCtx(t), k, "v")
				must(t, err)
			}},
		{"XREAD", "XREAD",
			func(c *Client, k string) error {
				_, err := c.XRead(context.Background(), XReadOptions{BlockForever: true}, k, "$")
				return err
			},
			func(t *testing.T, c *Client, k string) {
				_, err := c.XAdd(testCtx(t), k, XAddOptions{}, "f", "v")
				must(t, err)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			px := realProxy(t, standaloneAddr(t))
			c := newClient(t, Options{Endpoints: []string{px.Addr()}, HealthTimeout: 100 * time.Millisecond,
				DialTimeout: 500 * time.Millisecond})
			sent := px.MustAddRule(t, respiretest.Rule{Command: tc.cmd, Times: 1, Action: respiretest.Pass})
			got := make(chan error, 1)
			go func() { got <- tc.block(c, key(t, "before")) }()
			<-sent.Received() // the server holds the call
			pt := px.Partition()
			defer pt.Heal()
			var err error
			select {
			case err = <-got:
			case <-time.After(30 * time.Second): // a safety net, never the expected path
				t.Fatalf("%s 0 still waits 30 s into a partition: a silent peer holds it forever", tc.cmd)
			}
			if !lostToHealthCheck(err) {
				t.Fatalf("%s 0 through a partition = %v, want connection loss by the health check that may have run", tc.cmd, err)
			}
			pt.Heal()
			// A fresh key: the server may still hold the first call until
			// it sees its connection close.
			after := key(t, "after")
			again := make(chan error, 1)
			gate := px.MustAddRule(t, respiretest.Rule{Command: tc.cmd, Times: 1, Action: respiretest.Pass})
			go func() { again <- tc.block(c, after) }()
			<-gate.Received()
			tc.wake(t, c, after)
			if err := <-again; err != nil {
				t.Fatalf("%s 0 after the heal = %v, want the element", tc.cmd, err)
			}
		})
	}
}

// TestSharedConnectionLostAloneIsReplaced: the shared connection goes
// silent while the server keeps answering new connections (the proxy
// holds every reply on that connection alone, as a NAT or a proxy that
// lost it would), so every health probe is answered. After the silence
// limit (ten HealthTimeouts, at least CommandTimeout) the connection is
// retired anyway: its calls fail as connection loss that may have run,
// or are resent where the policy allows, and the next call works on a
// new connection instead of timing out forever.
func TestSharedConnectionLostAloneIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *RetryPolicy
	}{
		{"NoRetries", nil},
		{"ReadsRetried", &RetryPolicy{MaxCommandRetryCategory: ReadOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			px := realProxy(t, standaloneAddr(t))
			c := newClient(t, Options{Endpoints: []string{px.Addr()}, HealthTimeout: 100 * time.Millisecond,
				CommandTimeout: 200 * time.Millisecond, RetryPolicy: tc.policy})
			ctx := testCtx(t) // 10 s: far beyond the silence limit of 1 s
			held, next := key(t, "held"), key(t, "next")
			must(t, c.Set(ctx, held, "h"))
			must(t, c.Set(ctx, next, "n"))
			hold := px.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: held, Times: 1, Action: respiretest.Hold})
			t.Cleanup(hold.Release)
			heldErr := make(chan error, 1)
			go func() {
				_, err := c.Get(ctx, held)
				heldErr <- err
			}()
			<-hold.Received()
			got, err := c.Get(ctx, next) // queued behind the held reply
			if tc.policy == nil {
				if !lostToHealthCheck(err) {
					t.Fatalf("GET behind the silent connection = %q, %v; want connection loss by the health check that may have run", got, err)
				}
			} else if err != nil || got != "n" {
				t.Fatalf("GET behind the silent connection, reads retried = %q, %v; want n from a resend", got, err)
			}
			err = <-heldErr
			if tc.policy == nil && (!errors.Is(err, ErrHealthTimeout) || !MayHaveExecuted(err)) {
				t.Errorf("held GET = %v, want connection loss by the health check that may have run", err)
			}
			if got, err := c.Get(ctx, next); err != nil || got != "n" {
				t.Fatalf("GET on the replacement = %q, %v; want n", got, err)
			}
			if n := hold.Applied(); n != 1 {
				t.Errorf("the hold applied %d times, want 1", n)
			}
		})
	}
}

// TestCacheDroppedWhenTrackingConnectionDiesAlone: the tracked shared
// connection stops answering (its idle PING is never answered) while the
// server answers new connections, so the health probe is answered. The
// connection is retired all the same and the cache dropped with it, even
// with a TTL of NoTimeout: entries are never served for ever on the word
// of a connection that can no longer carry their invalidations.
func TestCacheDroppedWhenTrackingConnectionDiesAlone(t *testing.T) {
	c, px := cachedClient(t, Options{IdlePingInterval: 100 * time.Millisecond, HealthTimeout: 100 * time.Millisecond,
		ClientCache: &CacheOptions{TTL: NoTimeout}})
	ctx := testCtx(t)
	k := key(t, "k")
	must(t, c.Set(ctx, k, "v"))
	mustGetCached(t, c, k, "v")
	hold := px.MustAddRule(t, respiretest.Rule{Command: "PING", Times: 1, Action: respiretest.Hold})
	t.Cleanup(hold.Release)
	<-hold.Received() // the idle PING, held with every later reply
	waitCache(t, c, "the cache to be dropped with its silent connection", func(cc *clientCache) bool { return len(cc.entries) == 0 })
	if got := px.Stats("PING").Received; got < 2 {
		t.Errorf("the proxy received %d PINGs, want the held one and the probe's", got)
	}
	mustGetCached(t, c, k, "v") // on the replacement
}

// TestClusterSilentNodeLeavesOthersWorking: one Cluster primary falls
// silent behind its proxy (nothing closed, no failover). A call for its
// slots fails as connection loss by the health check, calls for the
// other primaries' slots go on succeeding meanwhile, and once the link
// returns the silent node's slots are served again.
func TestClusterSilentNodeLeavesOthersWorking(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{HealthTimeout: 100 * time.Millisecond, DialTimeout: 500 * time.Millisecond})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	ka, _ := keyOn(t, c, a)
	kb, _ := keyOn(t, c, b)
	must(t, c.Set(ctx, ka, "a"))
	must(t, c.Set(ctx, kb, "b"))
	pt := proxies[a].Partition()
	defer pt.Heal()
	silent := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, ka)
		silent <- err
	}()
	// Meanwhile another node serves.
	if got, err := c.Get(ctx, kb); err != nil || got != "b" {
		t.Fatalf("GET on another primary during the partition = %q, %v; want b", got, err)
	}
	err := <-silent
	if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, ErrHealthTimeout) {
		t.Fatalf("GET on the silent primary = %v, want connection loss by the health check", err)
	}
	if got, err := c.Get(ctx, kb); err != nil || got != "b" {
		t.Fatalf("GET on another primary after the silent one was retired = %q, %v; want b", got, err)
	}
	pt.Heal()
	if got, err := c.Get(ctx, ka); err != nil || got != "a" {
		t.Fatalf("GET on the healed primary = %q, %v; want a", got, err)
	}
}

// TestLargeUnitsFailWhenThePeerFallsSilent: batches and transactions of
// 8 KiB or more travel on the batch connections, which the health check
// watches like the shared one: through a partition the unit fails as
// connection loss by the health check, every member holding that error,
// and after the heal the same kind of unit runs.
func TestLargeUnitsFailWhenThePeerFallsSilent(t *testing.T) {
	for _, tx := range []bool{false, true} {
		name := "Batch"
		if tx {
			name = "Transaction"
		}
		t.Run(name, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{HealthTimeout: 100 * time.Millisecond, DialTimeout: 500 * time.Millisecond,
				BatchConnections: 1}) // one, so that warming it up dials the one the unit takes
			ctx := testCtx(t)
			value := string(make([]byte, 200))
			unit := func() (*Batch, []Future[struct{}]) {
				b := c.NewBatch()
				if tx {
					b = c.NewTransaction()
				}
				var fs []Future[struct{}]
				for i := range 64 { // 64 x 200 bytes: a large unit
					fs = append(fs, b.Set(key(t, name, strconv.Itoa(i)), value))
				}
				return b, fs
			}
			warm, _ := unit()
			must(t, warm.Execute(ctx)) // a batch connection is up
			pt := px.Partition()
			defer pt.Heal()
			b, fs := unit()
			err := b.Execute(ctx)
			if !lostToHealthCheck(err) {
				t.Fatalf("a large %s through a partition = %v, want connection loss by the health check that may have run", name, err)
			}
			for i, f := range fs {
				if err := f.Err(); !errors.Is(err, ErrHealthTimeout) {
					t.Fatalf("member %d = %v, want the unit's health-check error", i, err)
				}
			}
			pt.Heal()
			b, fs = unit()
			must(t, b.Execute(ctx))
			for i, f := range fs {
				if err := f.Err(); err != nil {
					t.Fatalf("member %d after the heal = %v", i, err)
				}
			}
		})
	}
}

// TestDedicatedCommandFailsWhenThePeerFallsSilent: with CommandTimeout
// off and a context without a deadline, a command of a Dedicated callback
// that meets a partition has no deadline at all; the health check of the
// dedicated connection still fails it as connection loss, and after the
// heal a new loan works.
func TestDedicatedCommandFailsWhenThePeerFallsSilent(t *testing.T) {
	px := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, HealthTimeout: 100 * time.Millisecond,
		DialTimeout: 500 * time.Millisecond, CommandTimeout: NoTimeout})
	k := key(t, "k")
	must(t, c.Set(testCtx(t), k, "v"))
	get := NewCommand("GET")
	var pt *respiretest.Partition
	err := c.Dedicated(context.Background(), func(conn *Conn) error {
		pt = px.Partition()
		_, err := conn.Do(context.Background(), get, k)
		return err
	})
	defer pt.Heal()
	if !lostToHealthCheck(err) {
		t.Fatalf("a Dedicated GET through a partition = %v, want connection loss by the health check that may have run", err)
	}
	pt.Heal()
	err = c.Dedicated(testCtx(t), func(conn *Conn) error {
		r, err := conn.Do(testCtx(t), get, k)
		if err != nil {
			return err
		}
		if s, err := r.String(); err != nil || s != "v" {
			return fmt.Errorf("got %q, %v", s, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a Dedicated GET after the heal = %v, want v", err)
	}
}

// lostToHealthCheck reports whether err is a connection loss caused by
// the health check, for a command that was sent (it may have run).
func lostToHealthCheck(err error) bool {
	return errors.Is(err, ErrConnectionLost) && errors.Is(err, ErrHealthTimeout) && MayHaveExecuted(err)
}
