package respire_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/respire-go/respire"
)

// Give a key a time to live, read it back, and remove it again.
func ExampleClient_Expire() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.Set(ctx, "session", "token"); err != nil {
		log.Fatal(err)
	}
	ok, err := client.Expire(ctx, "session", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	ttl, err := client.TTL(ctx, "session")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ok, ttl > 55*time.Second && ttl <= time.Minute) // whole seconds, counting down
	if _, err := client.Persist(ctx, "session"); err != nil {
		log.Fatal(err)
	}
	ttl, err = client.TTL(ctx, "session")
	fmt.Println(ttl == respire.TTLPersistent, err)
	// Output:
	// true true
	// true <nil>
}

// Count existing keys and delete some of them.
func ExampleClient_Del() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.MSet(ctx, "k1", "a", "k2", "b"); err != nil {
		log.Fatal(err)
	}
	n, err := client.Exists(ctx, "k1", "k2", "k3")
	if err != nil {
		log.Fatal(err)
	}
	deleted, err := client.Del(ctx, "k1", "k3")
	if err != nil {
		log.Fatal(err)
	}
	left, err := client.Exists(ctx, "k1", "k2", "k3")
	fmt.Println(n, deleted, left, err)
	// Output: 2 1 1 <nil>
}

// Rename a key unless the new name is taken, and read its type.
func ExampleClient_RenameNX() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.RPush(ctx, "queue:new", "job1"); err != nil {
		log.Fatal(err)
	}
	if err := client.Set(ctx, "taken", "x"); err != nil {
		log.Fatal(err)
	}
	refused, err := client.RenameNX(ctx, "queue:new", "taken")
	if err != nil {
		log.Fatal(err)
	}
	renamed, err := client.RenameNX(ctx, "queue:new", "queue:old")
	if err != nil {
		log.Fatal(err)
	}
	typ, err := client.Type(ctx, "queue:old")
	fmt.Println(refused, renamed, typ, err)
	// Output: false true list <nil>
}

// Copy a key, replacing the destination only when asked to.
func ExampleClient_Copy() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.MSet(ctx, "src", "new", "dst", "old"); err != nil {
		log.Fatal(err)
	}
	kept, err := client.Copy(ctx, "src", "dst", false)
	if err != nil {
		log.Fatal(err)
	}
	replaced, err := client.Copy(ctx, "src", "dst", true)
	if err != nil {
		log.Fatal(err)
	}
	v, err := client.Get(ctx, "dst")
	fmt.Println(kept, replaced, v, err)
	// Output: false true new <nil>
}
