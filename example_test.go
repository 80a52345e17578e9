package respire_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// exampleServer starts the embedded test server, so that the examples
// run without a real Redis. Real programs connect to their own server.
func exampleServer() (addr string, stop func()) {
	srv, err := respiretest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	return srv.Addr(), func() { _ = srv.Close() }
}

// exampleClient connects to a new embedded test server; stop closes both.
func exampleClient() (client *respire.Client, stop func()) {
	addr, stopServer := exampleServer()
	client, err := respire.Connect(context.Background(), respire.Options{Endpoints: []string{addr}})
	if err != nil {
		log.Fatal(err)
	}
	return client, func() { client.Close(); stopServer() }
}

func ExampleConnect() {
	addr, stop := exampleServer()
	defer stop()

	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{
		Endpoints:      []string{addr},
		CommandTimeout: 2 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if err := client.Set(ctx, "greeting", "hello"); err != nil {
		log.Fatal(err)
	}
	v, err := client.Get(ctx, "greeting")
	fmt.Println(v, err)
	// Output: hello <nil>
}

func ExampleConnect_invalidOptions() {
	_, err := respire.Connect(context.Background(), respire.Options{
		Endpoints:   []string{"localhost:6379"},
		DialTimeout: -time.Second,
	})
	var ce *respire.ConfigError
	if errors.As(err, &ce) {
		fmt.Println("invalid field:", ce.Field)
	}
	fmt.Println(errors.Is(err, respire.ErrInvalidConfig))
	// Output:
	// invalid field: Options.DialTimeout
	// true
}

func ExampleParseURL() {
	opts, err := respire.ParseURL("rediss://app:secret@cache.example:6380/2?protocol=3&command_timeout=500ms")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(opts.Endpoints, opts.Username, opts.DB, opts.Protocol, opts.CommandTimeout, opts.TLS != nil)

	_, err = respire.ParseURL("redis://app:secret@cache.example/not-a-db")
	fmt.Println(err)
	// Output:
	// [cache.example:6380] app 2 3 500ms true
	// respire: invalid URL: database must be a non-negative number
}

func ExampleClient_Get() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if err := client.Set(ctx, "empty", ""); err != nil {
		log.Fatal(err)
	}
	for _, k := range []string{"empty", "missing"} {
		v, err := client.Get(ctx, k)
		switch {
		case errors.Is(err, respire.ErrNil):
			fmt.Printf("%s: no such key\n", k)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Printf("%s: %q\n", k, v)
		}
	}
	// Output:
	// empty: ""
	// missing: no such key
}

func ExampleClient_GetBytes() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if err := client.Set(ctx, "k", "value"); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 0, 64) // reused across calls: no allocation per read
	buf, err = client.GetBytes(ctx, "k", buf[:0])
	fmt.Printf("%s %v\n", buf, err)
	// Output: value <nil>
}

func ExampleClient_SetWithOptions() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// A lock: set only if absent, expiring after 30 seconds.
	lock := respire.SetOptions{Condition: respire.SetIfNotExists, TTL: 30 * time.Second}
	first, err := client.SetWithOptions(ctx, "lock", "owner-1", lock)
	if err != nil {
		log.Fatal(err)
	}
	second, err := client.SetWithOptions(ctx, "lock", "owner-2", lock)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first acquired:", first.Written, "second acquired:", second.Written)

	// Replace the value and read the previous one, keeping the expiry.
	r, err := client.SetWithOptions(ctx, "lock", "owner-3", respire.SetOptions{KeepTTL: true, Get: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("previous:", r.Previous)
	// Output:
	// first acquired: true second acquired: false
	// previous: owner-1
}

func ExampleClient_Do() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// A catalog descriptor carries the command's audited retry category.
	if _, err := client.Do(ctx, catalog.Hash.HSET(), "user:1", "name", "Ada", "lang", "en"); err != nil {
		log.Fatal(err)
	}
	reply, err := client.Do(ctx, catalog.Hash.HGET(), "user:1", "name")
	if err != nil {
		log.Fatal(err)
	}
	name, err := reply.String()
	fmt.Println(name, err)

	// Any other command: NewCommand is never retried until its category is
	// declared.
	strlen := respire.NewCommand("HSTRLEN").WithRetryCategory(respire.ReadOnly)
	reply, err = client.Do(ctx, strlen, "user:1", "name")
	if err != nil {
		log.Fatal(err)
	}
	n, err := reply.Int64()
	fmt.Println(n, err)

	// Error replies are *ServerError values.
	_, err = client.Do(ctx, catalog.String.GET(), "user:1")
	fmt.Println(errors.Is(err, &respire.ServerError{Code: "WRONGTYPE"}))
	// Output:
	// Ada <nil>
	// 3 <nil>
	// true
}

func ExampleRetryPolicy() {
	addr, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{
		Endpoints: []string{addr},
		// Send read-only commands (and any command with a category that
		// the transport proved unsent) up to 3 times in all, the first
		// send included, on connection loss, LOADING, TRYAGAIN, MASTERDOWN
		// or READONLY.
		RetryPolicy: &respire.RetryPolicy{
			MaxAttempts:             3,
			MaxCommandRetryCategory: respire.ReadOnly,
			InitialBackoff:          10 * time.Millisecond,
			MaxBackoff:              200 * time.Millisecond,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	n, err := client.Incr(ctx, "visits") // WriteAccumulating: resent only if proven unsent
	fmt.Println(n, err)
	// Output: 1 <nil>
}
