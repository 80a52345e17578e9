package respire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// The units a typed command runs in: its Client method, a Batch member
// and a transaction member.
var shapeUnits = []string{"Client", "Batch", "Transaction"}

// shapeClient returns a client of protocol proto whose proxy, in front of
// the standalone server, answers command with raw instead of forwarding
// it. For unit "Transaction" it answers MULTI and command as Redis does
// (OK, QUEUED) and EXEC with a one-element array of raw, so that raw is
// the member's reply; nothing of the transaction reaches the server.
func shapeClient(t *testing.T, unit string, proto int, command, raw string) *Client {
	t.Helper()
	p := realProxy(t, standaloneAddr(t))
	if unit == "Transaction" {
		p.MustAddRule(t, respiretest.Rule{Command: "MULTI", Times: respiretest.Always, Action: respiretest.Reply([]byte("+OK\r\n"))})
		p.MustAddRule(t, respiretest.Rule{Command: command, Times: respiretest.Always, Action: respiretest.Reply([]byte("+QUEUED\r\n"))})
		p.MustAddRule(t, respiretest.Rule{Command: "EXEC", Times: respiretest.Always, Action: respiretest.Reply([]byte("*1\r\n" + raw))})
	} else {
		p.MustAddRule(t, respiretest.Rule{Command: command, Times: respiretest.Always, Action: respiretest.Reply([]byte(raw))})
	}
	return newClient(t, Options{Endpoints: []string{p.Addr()}, Protocol: proto})
}

// runUnit runs a command in unit: through client, or queued alone by
// queue on a batch or a transaction of c.
func runUnit[T any](ctx context.Context, c *Client, unit string, client func(context.Context, *Client) (T, error), queue func(*Batch) Future[T]) (T, error) {
	var b *Batch
	switch unit {
	case "Client":
		return client(ctx, c)
	case "Batch":
		b = c.NewBatch()
	default:
		b = c.NewTransaction()
	}
	f := queue(b)
	if err := b.Execute(ctx); err != nil {
		var zero T
		return zero, err
	}
	return f.Result()
}

// TestSetWithOptionsReplyShape shows that SetWithOptions, as a Client
// method, a Batch member and a transaction member, takes only the replies
// SET gives: OK or null without GET, a string or null with GET; an
// integer, an array, a double or a status other than OK is
// ErrUnexpectedReply instead of a write reported as done.
func TestSetWithOptionsReplyShape(t *testing.T) {
	old := SetResult{Written: true, Previous: "old", PreviousExists: true}
	get := SetOptions{Get: true}
	tests := []struct {
		name  string
		proto int
		opt   SetOptions
		raw   string
		want  SetResult
		err   error
	}{
		{"OK", 2, SetOptions{}, "+OK\r\n", SetResult{Written: true}, nil},
		{"NullRESP2", 2, SetOptions{Condition: SetIfNotExists}, "$-1\r\n", SetResult{}, nil},
		{"NullRESP3", 3, SetOptions{Condition: SetIfNotExists}, "_\r\n", SetResult{}, nil},
		{"Integer", 2, SetOptions{}, ":1\r\n", SetResult{}, ErrUnexpectedReply},
		{"Array", 3, SetOptions{}, "*1\r\n+OK\r\n", SetResult{}, ErrUnexpectedReply},
		{"OtherStatus", 2, SetOptions{}, "+PONG\r\n", SetResult{}, ErrUnexpectedReply},
		{"Double", 3, SetOptions{}, ",1.5\r\n", SetResult{}, ErrUnexpectedReply},
		{"GetBulk", 2, get, "$3\r\nold\r\n", old, nil},
		{"GetVerbatim", 3, get, "=7\r\ntxt:old\r\n", old, nil},
		{"GetNull", 3, get, "_\r\n", SetResult{Written: true}, nil},
		{"GetStatus", 2, get, "+OK\r\n", SetResult{}, ErrUnexpectedReply},
		{"GetInteger", 2, get, ":1\r\n", SetResult{}, ErrUnexpectedReply},
		{"GetDouble", 3, get, ",1.5\r\n", SetResult{}, ErrUnexpectedReply},
		{"GetArray", 3, get, "*1\r\n$3\r\nold\r\n", SetResult{}, ErrUnexpectedReply},
	}
	k := key(t, "set")
	for _, unit := range shapeUnits {
		for _, tt := range tests {
			t.Run(unit+"/"+tt.name, func(t *testing.T) {
				c := shapeClient(t, unit, tt.proto, "SET", tt.raw)
				got, err := runUnit(testCtx(t), c, unit,
					func(ctx context.Context, c *Client) (SetResult, error) {
						return c.SetWithOptions(ctx, k, "v", tt.opt)
					},
					func(b *Batch) Future[SetResult] { return b.SetWithOptions(k, "v", tt.opt) })
				if tt.err != nil {
					if !errors.Is(err, tt.err) {
						t.Fatalf("got %+v, %v; want error %v", got, err, tt.err)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
				}
			})
		}
	}
}

// TestStatusReplyShape shows that every command whose reply is a status
// (OK, or PONG for PING), as a Client method, a Batch member and a
// transaction member, takes a status and reports any other reply (an
// integer, an array, a null, a double) as ErrUnexpectedReply instead of
// success.
func TestStatusReplyShape(t *testing.T) {
	k, k2 := key(t, "status"), key(t, "status2")
	type status struct {
		command string
		client  func(context.Context, *Client) error
		queue   func(*Batch) Future[struct{}]
	}
	commands := []status{
		{"SET", func(ctx context.Context, c *Client) error { return c.Set(ctx, k, "v") },
			func(b *Batch) Future[struct{}] { return b.Set(k, "v") }},
		{"MSET", func(ctx context.Context, c *Client) error { return c.MSet(ctx, k, "v") },
			func(b *Batch) Future[struct{}] { return b.MSet(k, "v") }},
		{"PING", func(ctx context.Context, c *Client) error { return c.Ping(ctx) },
			func(b *Batch) Future[struct{}] { return b.Ping() }},
		{"SETEX", func(ctx context.Context, c *Client) error { return c.SetEx(ctx, k, "v", time.Minute) },
			func(b *Batch) Future[struct{}] { return b.SetEx(k, "v", time.Minute) }},
		{"PSETEX", func(ctx context.Context, c *Client) error { return c.PSetEx(ctx, k, "v", time.Minute) },
			func(b *Batch) Future[struct{}] { return b.PSetEx(k, "v", time.Minute) }},
		{"RENAME", func(ctx context.Context, c *Client) error { return c.Rename(ctx, k, k2) },
			func(b *Batch) Future[struct{}] { return b.Rename(k, k2) }},
		{"RESTORE", func(ctx context.Context, c *Client) error { return c.Restore(ctx, k, "data", RestoreOptions{}) },
			func(b *Batch) Future[struct{}] { return b.Restore(k, "data", RestoreOptions{}) }},
		{"LSET", func(ctx context.Context, c *Client) error { return c.LSet(ctx, k, 0, "v") },
			func(b *Batch) Future[struct{}] { return b.LSet(k, 0, "v") }},
		{"LTRIM", func(ctx context.Context, c *Client) error { return c.LTrim(ctx, k, 0, 1) },
			func(b *Batch) Future[struct{}] { return b.LTrim(k, 0, 1) }},
		{"PFMERGE", func(ctx context.Context, c *Client) error { return c.PFMerge(ctx, k, k) },
			func(b *Batch) Future[struct{}] { return b.PFMerge(k, k) }},
		{"XSETID", func(ctx context.Context, c *Client) error { return c.XSetID(ctx, k, "1-1", XSetIDOptions{}) },
			func(b *Batch) Future[struct{}] { return b.XSetID(k, "1-1", XSetIDOptions{}) }},
		{"XGROUP", func(ctx context.Context, c *Client) error {
			return c.XGroupCreate(ctx, k, "g", "$", XGroupCreateOptions{})
		}, func(b *Batch) Future[struct{}] { return b.XGroupCreate(k, "g", "$", XGroupCreateOptions{}) }},
		{"XGROUP", func(ctx context.Context, c *Client) error {
			return c.XGroupSetID(ctx, k, "g", "$", XGroupSetIDOptions{})
		}, func(b *Batch) Future[struct{}] { return b.XGroupSetID(k, "g", "$", XGroupSetIDOptions{}) }},
		{"XCFGSET", func(ctx context.Context, c *Client) error {
			return c.XCfgSet(ctx, k, XCfgOptions{MaxSize: 10})
		}, func(b *Batch) Future[struct{}] { return b.XCfgSet(k, XCfgOptions{MaxSize: 10}) }},
	}
	replies := []struct {
		name  string
		proto int
		raw   string
		err   error
	}{
		{"OK", 2, "+OK\r\n", nil},
		{"PONG", 3, "+PONG\r\n", nil},
		{"Integer", 2, ":1\r\n", ErrUnexpectedReply},
		{"Array", 3, "*1\r\n+OK\r\n", ErrUnexpectedReply},
		{"Null", 2, "$-1\r\n", ErrUnexpectedReply},
		{"Double", 3, ",1\r\n", ErrUnexpectedReply},
	}
	for _, unit := range shapeUnits {
		for _, cmd := range commands {
			for _, r := range replies {
				t.Run(unit+"/"+cmd.command+"/"+r.name, func(t *testing.T) {
					c := shapeClient(t, unit, r.proto, cmd.command, r.raw)
					_, err := runUnit(testCtx(t), c, unit,
						func(ctx context.Context, c *Client) (struct{}, error) { return struct{}{}, cmd.client(ctx, c) },
						cmd.queue)
					if r.err == nil && err != nil || r.err != nil && !errors.Is(err, r.err) {
						t.Fatalf("got %v; want %v", err, r.err)
					}
				})
			}
		}
	}
}
