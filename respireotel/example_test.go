package respireotel_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respireotel"
	"github.com/respire-go/respire/respiretest"
)

// One client span per command and one per batch, with the database
// attributes. The embedded test server stands in for Redis, and a span
// recorder for the application's TracerProvider.
func ExampleNewHook() {
	srv, err := respiretest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	spans := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{
		Endpoints: []string{srv.Addr()},
		Hooks: []respire.Hook{respireotel.NewHook(
			respireotel.WithTracerProvider(provider),
			respireotel.WithServer(srv.Addr()),
		)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if err := client.Set(ctx, "greeting", "hello"); err != nil {
		log.Fatal(err)
	}
	b := client.NewBatch()
	b.Get("greeting")
	b.Incr("visits")
	if err := b.Execute(ctx); err != nil {
		log.Fatal(err)
	}

	for _, s := range spans.Ended() {
		line := s.Name()
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "db.system.name", "db.operation.name", "db.operation.batch.size":
				line += " " + string(kv.Key) + "=" + kv.Value.Emit()
			}
		}
		fmt.Println(line)
	}
	// Output:
	// SET db.system.name=redis db.operation.name=SET
	// PIPELINE db.system.name=redis db.operation.name=PIPELINE db.operation.batch.size=2
}
