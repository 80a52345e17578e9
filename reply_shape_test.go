package respire

import (
	"context"
	"errors"
	"testing"

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
