package respire_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"
	"time"

	"github.com/respire-go/respire"
)

// Store fields of a hash and read them all back, in sorted order.
func ExampleClient_HSet() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	added, err := client.HSet(ctx, "user:1", "name", "Ada", "lang", "en")
	if err != nil {
		log.Fatal(err)
	}
	fields, err := client.HGetAll(ctx, "user:1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added:", added)
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		fmt.Printf("%s=%s\n", f, fields[f])
	}
	// Output:
	// added: 2
	// lang=en
	// name=Ada
}

// Count per field of a hash, and read some fields at once.
func ExampleClient_HIncrBy() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	for _, page := range []string{"home", "docs", "home"} {
		if _, err := client.HIncrBy(ctx, "views", page, 1); err != nil {
			log.Fatal(err)
		}
	}
	values, found, err := client.HMGet(ctx, "views", "home", "docs", "blog")
	fmt.Println(values, found, err)
	// Output: [2 1 ] [true true false] <nil>
}

// Expire single fields of a hash.
func ExampleClient_HExpire() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.HSet(ctx, "cache", "a", "1", "b", "2"); err != nil {
		log.Fatal(err)
	}
	codes, err := client.HExpire(ctx, "cache", time.Minute, respire.HExpireAlways, "a", "missing")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(codes[0] == respire.HExpireSet, codes[1] == respire.HExpireNoField)
	ttls, err := client.HTTL(ctx, "cache", "a", "b")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ttls[0] > 55*time.Second, ttls[1] == respire.TTLPersistent)
	// Output:
	// true true
	// true true
}
