package respire

// XREADGROUP with BLOCK whose caller gives up after the server delivered
// entries.

import (
	"context"
	"testing"

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
