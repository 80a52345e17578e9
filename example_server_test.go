package respire_test

import (
	"context"
	"fmt"
	"log"
	"time"
)

// Read fields of INFO by section; print only whether they exist, as
// their values change from server to server.
func ExampleClient_Info() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	info, err := client.Info(ctx, "clients")
	if err != nil {
		log.Fatal(err)
	}
	_, ok := info.Value("clients", "connected_clients")
	_, other := info.Value("clients", "no_such_field")
	fmt.Println(ok, other)
	// Output: true false
}

// Count the keys of the current database.
func ExampleClient_DBSize() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.MSet(ctx, "a", "1", "b", "2", "c", "3"); err != nil {
		log.Fatal(err)
	}
	n, err := client.DBSize(ctx)
	fmt.Println(n, err)
	// Output: 3 <nil>
}

// Read the server's clock.
func ExampleClient_Time() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	now, err := client.Time(ctx)
	if err != nil {
		log.Fatal(err)
	}
	skew := time.Since(now).Abs()
	fmt.Println(skew < time.Minute)
	// Output: true
}
