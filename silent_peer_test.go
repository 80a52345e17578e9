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
			if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, ErrHealthTimeout) || !MayHaveExecuted(err) {
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
				if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, ErrHealthTimeout) || !MayHaveExecuted(err) {
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
