package respire

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStreamGroupNamesRequired proves that every stream method naming a
// consumer group refuses an empty group, and every one naming a consumer
// an empty consumer, with ErrInvalidArgument before anything is sent: as
// a Client method, and as a Batch and a transaction member (Execute then
// fails and sends nothing too). The proxy's count of forwarded frames is
// the witness that nothing reached the server.
func TestStreamGroupNamesRequired(t *testing.T) {
	type method struct {
		name     string
		consumer bool // the method names a consumer as well as a group
		client   func(ctx context.Context, c *Client, k, group, consumer string) error
		queue    func(b *Batch, k, group, consumer string) error
	}
	methods := []method{
		{"XGroupCreate", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			return c.XGroupCreate(ctx, k, g, "$", XGroupCreateOptions{})
		}, func(b *Batch, k, g, _ string) error { return b.XGroupCreate(k, g, "$", XGroupCreateOptions{}).Err() }},
		{"XGroupSetID", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			return c.XGroupSetID(ctx, k, g, "$", XGroupSetIDOptions{})
		}, func(b *Batch, k, g, _ string) error { return b.XGroupSetID(k, g, "$", XGroupSetIDOptions{}).Err() }},
		{"XGroupDestroy", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XGroupDestroy(ctx, k, g)
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XGroupDestroy(k, g).Err() }},
		{"XGroupCreateConsumer", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XGroupCreateConsumer(ctx, k, g, cn)
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XGroupCreateConsumer(k, g, cn).Err() }},
		{"XGroupDelConsumer", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XGroupDelConsumer(ctx, k, g, cn)
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XGroupDelConsumer(k, g, cn).Err() }},
		{"XReadGroup", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XReadGroup(ctx, g, cn, XReadGroupOptions{}, k, ">")
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XReadGroup(g, cn, XReadGroupOptions{}, k, ">").Err() }},
		{"XReadGroupBlock", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XReadGroup(ctx, g, cn, XReadGroupOptions{Block: time.Second}, k, ">")
			return err
		}, nil}, // a batch refuses BLOCK whatever the names
		{"XAck", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XAck(ctx, k, g, "1-1")
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XAck(k, g, "1-1").Err() }},
		{"XAckDel", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XAckDel(ctx, k, g, XRefDefault, "1-1")
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XAckDel(k, g, XRefDefault, "1-1").Err() }},
		{"XClaim", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XClaim(ctx, k, g, cn, XClaimOptions{}, "1-1")
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XClaim(k, g, cn, XClaimOptions{}, "1-1").Err() }},
		{"XClaimJustID", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XClaimJustID(ctx, k, g, cn, XClaimOptions{}, "1-1")
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XClaimJustID(k, g, cn, XClaimOptions{}, "1-1").Err() }},
		{"XAutoClaim", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XAutoClaim(ctx, k, g, cn, XAutoClaimOptions{})
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XAutoClaim(k, g, cn, XAutoClaimOptions{}).Err() }},
		{"XAutoClaimJustID", true, func(ctx context.Context, c *Client, k, g, cn string) error {
			_, err := c.XAutoClaimJustID(ctx, k, g, cn, XAutoClaimOptions{})
			return err
		}, func(b *Batch, k, g, cn string) error { return b.XAutoClaimJustID(k, g, cn, XAutoClaimOptions{}).Err() }},
		{"XPending", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XPending(ctx, k, g)
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XPending(k, g).Err() }},
		{"XPendingExt", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XPendingExt(ctx, k, g, XPendingExtOptions{Count: 10})
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XPendingExt(k, g, XPendingExtOptions{Count: 10}).Err() }},
		{"XInfoConsumers", false, func(ctx context.Context, c *Client, k, g, _ string) error {
			_, err := c.XInfoConsumers(ctx, k, g)
			return err
		}, func(b *Batch, k, g, _ string) error { return b.XInfoConsumers(k, g).Err() }},
	}
	px := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{px.Addr()}})
	ctx := testCtx(t)
	k := key(t, "s")
	for _, m := range methods {
		names := []struct{ label, group, consumer string }{{"EmptyGroup", "", "c"}}
		if m.consumer {
			names = append(names, struct{ label, group, consumer string }{"EmptyConsumer", "g", ""})
		}
		for _, n := range names {
			t.Run(m.name+"/"+n.label, func(t *testing.T) {
				before := framesSent(px)
				if err := m.client(ctx, c, k, n.group, n.consumer); !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("Client: %v, want ErrInvalidArgument", err)
				}
				if m.queue != nil {
					for _, b := range []*Batch{c.NewBatch(), c.NewTransaction()} {
						err := m.queue(b, k, n.group, n.consumer)
						if !errors.Is(err, ErrInvalidArgument) {
							t.Errorf("member (transaction %v): %v, want ErrInvalidArgument", b.tx, err)
						}
						if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
							t.Errorf("Execute (transaction %v): %v, want ErrInvalidArgument", b.tx, err)
						}
					}
				}
				if sent := framesSent(px) - before; sent != 0 {
					t.Errorf("%d frames reached the server, want none", sent)
				}
			})
		}
	}
}
