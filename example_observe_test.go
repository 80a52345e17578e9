package respire_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"

	"github.com/respire-go/respire"
)

// auditHook prints each command and batch it sees, and what became of it.
type auditHook struct{}

func (auditHook) DialHook(next respire.DialHook) respire.DialHook { return next }

func (auditHook) ProcessHook(next respire.ProcessHook) respire.ProcessHook {
	return func(ctx context.Context, cmd *respire.CommandInfo) error {
		err := next(ctx, cmd)
		fmt.Printf("%s (%s): err=%v\n", cmd.Name, cmd.Category, err)
		return err
	}
}

func (auditHook) ProcessBatchHook(next respire.ProcessBatchHook) respire.ProcessBatchHook {
	return func(ctx context.Context, b *respire.BatchInfo) error {
		err := next(ctx, b)
		fmt.Printf("batch of %d: err=%v\n", b.Len(), err)
		return err
	}
}

// A hook sees every command once, however many times the retry policy
// sends it, and every batch as one unit. respireotel is such a hook.
func ExampleHook() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}, Hooks: []respire.Hook{auditHook{}}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	_ = client.Set(ctx, "k", "v")
	_, _ = client.HGet(ctx, "k", "f") // WRONGTYPE
	b := client.NewBatch()
	b.Incr("n")
	b.Get("k")
	_ = b.Execute(ctx)
	// Output:
	// SET (write_last_wins): err=<nil>
	// HGET (read_only): err=respire: HGET: WRONGTYPE Operation against a key holding the wrong kind of value
	// batch of 2: err=<nil>
}

// Options.Logger receives connection lifecycle events; here a dial that
// nothing answers.
func ExampleOptions_logger() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "addr" || a.Key == "err" {
				return slog.Attr{} // keep the example's output stable
			}
			return a
		},
	}))
	_, err = respire.Connect(context.Background(), respire.Options{Endpoints: []string{addr}, Logger: logger})
	fmt.Println(err != nil)
	// Output:
	// level=WARN msg="respire: dial failed"
	// true
}
