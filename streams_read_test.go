package respire

// XREADGROUP with BLOCK whose caller gives up before or after the server
// delivered entries.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// TestXReadGroupCallerGoneAfterDeliveryGetsEntries: the server delivers
// an entry to a blocked XREADGROUP (which makes it pending for the
// consumer), and its reply is still on the way when the caller's ctx
// ends. The call is stopped on the server and its reply taken: the entry
// is the caller's result, not a *ContextError that would leave it pending
// for nobody to read.
func TestXReadGroupCallerGoneAfterDeliveryGetsEntries(t *testing.T) {
	addr := standaloneAddr(t)
	px := realProxy(t, addr)
	c := newClient(t, Options{Endpoints: []string{px.Addr()}})
	ctx := testCtx(t)
	s := key(t, "s")
	if err := c.XGroupCreate(ctx, s, "g", "$", XGroupCreateOptions{MkStream: true}); err != nil {
		t.Fatal(err)
	}
	held := px.MustAddRule(t, respiretest.Rule{Command: "XREADGROUP", Action: respiretest.Hold})
	// The reply is released once the client stops the call on the server.
	px.MustAddRule(t, respiretest.Rule{Command: "CLIENT", Arg: "UNBLOCK", Action: respiretest.Pass,
		OnReceive: func([]string) { held.Release() }})
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		got []XStream
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := c.XReadGroup(rctx, "g", "consumer", XReadGroupOptions{BlockForever: true}, s, ">")
		done <- result{got, err}
	}()
	select {
	case <-held.Received():
	case <-ctx.Done():
		t.Fatal("XREADGROUP never reached the server")
	}
	// XADD's reply comes after the server served the blocked reader.
	id, err := admin(t, addr, "XADD", s, "*", "f", "v").String()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	r := <-done
	if r.err != nil || len(r.got) != 1 || len(r.got[0].Messages) != 1 || r.got[0].Messages[0].ID != id {
		t.Fatalf("XReadGroup = %+v, %v; want the delivered entry %s as a success", r.got, r.err, id)
	}
	p, err := c.XPending(ctx, s, "g")
	if err != nil || p.Count != 1 || len(p.Consumers) != 1 || p.Consumers[0].Name != "consumer" {
		t.Fatalf("XPENDING = %+v, %v; want the one entry, pending for the consumer that received it", p, err)
	}
}

// TestXReadGroupOptionsInAnyOrder: the server reads XREADGROUP's options
// in any order, GROUP's two names included, so the dispatch does too. A
// BLOCK after a GROUP whose consumer is named "streams" still blocks, on
// a connection of its own, never on the shared one; a group named
// "block" is a name, not the option, so the call is not refused.
func TestXReadGroupOptionsInAnyOrder(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		blocking bool
	}{
		{[]string{"COUNT", "1", "GROUP", "g", "streams", "BLOCK", "0", "STREAMS", "s", ">"}, true},
		{[]string{"NOACK", "GROUP", "count", "c", "BLOCK", "10", "STREAMS", "s", ">"}, true},
		{[]string{"COUNT", "1", "GROUP", "block", "c", "STREAMS", "s", ">"}, false},
		{[]string{"GROUP", "g", "c", "COUNT", "1", "STREAMS", "block", ">"}, false},
	} {
		d := dispatchOf(catalog.Stream.XREADGROUP(), wordsOf(tt.args))
		if d.blocking != tt.blocking {
			t.Errorf("XREADGROUP %v: blocking = %v, want %v", tt.args, d.blocking, tt.blocking)
		}
		if bt, err := blockTimeOf("XREADGROUP", tt.args); tt.blocking && (err != nil || bt.unknown) {
			t.Errorf("XREADGROUP %v: block time = %+v, %v; want the BLOCK option's", tt.args, bt, err)
		}
	}

	c := newClient(t, Options{})
	ctx := testCtx(t)
	s := key(t, "s")
	if err := c.XGroupCreate(ctx, s, "block", "$", XGroupCreateOptions{MkStream: true}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(ctx, catalog.Stream.XREADGROUP(), "COUNT", 1, "GROUP", "block", "c", "STREAMS", s, ">")
	if err != nil || !r.IsNull() && len(r.Elements()) != 0 {
		t.Errorf("XREADGROUP of the group named block = %v, %v; want no entries and no error", r.Value(), err)
	}
}

// TestXReadGroupCallerGoneBeforeDeliveryLeavesNothingPending: a blocked
// XREADGROUP whose caller gives up is stopped on the server before any
// entry arrives. An entry added afterwards is delivered to nobody: the
// group has nothing pending (commandstats: one XREADGROUP, never resent),
// and the next read gets it.
func TestXReadGroupCallerGoneBeforeDeliveryLeavesNothingPending(t *testing.T) {
	countsCommands(t)
	name := blockingName(t)
	forEachProtocol(t, Options{ClientName: name, RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating}}, func(t *testing.T, c *Client) {
		addr := standaloneAddr(t)
		s := key(t, "s")
		if err := c.XGroupCreate(testCtx(t), s, "g", "$", XGroupCreateOptions{MkStream: true}); err != nil {
			t.Fatal(err)
		}
		before := commandCalls(t, addr, "xreadgroup")
		ctx, cancel := context.WithCancel(testCtx(t))
		errc := make(chan error, 1)
		go func() {
			_, err := c.XReadGroup(ctx, "g", "c1", XReadGroupOptions{BlockForever: true}, s, ">")
			errc <- err
		}()
		waitNamedBlocked(t, name)
		cancel()
		var ce *ContextError
		if err := <-errc; !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
			t.Fatalf("XReadGroup after cancel = %v; want a *ContextError matching context.Canceled", err)
		}
		if got := commandCalls(t, addr, "xreadgroup") - before; got != 1 {
			t.Errorf("commandstats: %d XREADGROUP calls, want 1", got)
		}
		id, err := admin(t, addr, "XADD", s, "*", "f", "v").String()
		if err != nil {
			t.Fatal(err)
		}
		if p, err := c.XPending(testCtx(t), s, "g"); err != nil || p.Count != 0 {
			t.Errorf("XPending = %+v, %v; want nothing pending (delivered to nobody)", p, err)
		}
		got, err := c.XReadGroup(testCtx(t), "g", "c2", XReadGroupOptions{Block: time.Second}, s, ">")
		if err != nil || len(got) != 1 || len(got[0].Messages) != 1 || got[0].Messages[0].ID != id {
			t.Errorf("next XReadGroup = %+v, %v; want the entry %s", got, err, id)
		}
	})
}

// TestXReadGroupLostReplyNeverResent: whatever the policy accepts
// (ServerAdmin, the riskiest), an XREADGROUP whose reply is lost is not
// resent, alone or in a batch (commandstats: one call each): a resend
// would deliver other entries and leave the first ones pending.
func TestXReadGroupLostReplyNeverResent(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	for _, batched := range []bool{false, true} {
		t.Run(map[bool]string{false: "Client", true: "Batch"}[batched], func(t *testing.T) {
			px := realProxy(t, addr)
			s := key(t, "s")
			admin(t, addr, "XADD", s, "1-1", "f", "v")
			admin(t, addr, "XADD", s, "2-1", "f", "v")
			admin(t, addr, "XGROUP", "CREATE", s, "g", "0")
			px.MustAddRule(t, respiretest.Rule{Command: "XREADGROUP", Action: respiretest.DropAfterForward})
			c := newClient(t, Options{Endpoints: []string{px.Addr()},
				RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}})
			before := commandCalls(t, addr, "xreadgroup")
			var err error
			if batched {
				b := c.NewBatch()
				b.XReadGroup("g", "c1", XReadGroupOptions{Count: 1}, s, ">")
				err = b.Execute(testCtx(t))
			} else {
				_, err = c.XReadGroup(testCtx(t), "g", "c1", XReadGroupOptions{Count: 1}, s, ">")
			}
			if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
				t.Fatalf("XReadGroup = %v; want the lost reply", err)
			}
			if got := commandCalls(t, addr, "xreadgroup") - before; got != 1 {
				t.Errorf("commandstats: %d XREADGROUP calls, want 1", got)
			}
			if n, err := admin(t, addr, "XPENDING", s, "g").Elements()[0].Int64(); err != nil || n != 1 {
				t.Errorf("pending = %d, %v; want the 1 entry the lost call delivered", n, err)
			}
		})
	}
}
