package respire_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/respire-go/respire"
)

// Push onto the head of a list and read a range of it.
func ExampleClient_LPush() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	n, err := client.LPush(ctx, "recent", "a", "b", "c") // each one goes to the head
	if err != nil {
		log.Fatal(err)
	}
	all, err := client.LRange(ctx, "recent", 0, -1)
	if err != nil {
		log.Fatal(err)
	}
	top2, err := client.LRange(ctx, "recent", 0, 1)
	fmt.Println(n, all, top2, err)
	// Output: 3 [c b a] [c b] <nil>
}

// Pop several elements from the first non-empty list of several.
func ExampleClient_LMPop() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.RPush(ctx, "low", "j1", "j2", "j3"); err != nil {
		log.Fatal(err)
	}
	got, err := client.LMPop(ctx, respire.ListLeft, 2, "high", "low") // "high" is empty
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Key, got.Elements)
	// Output: low [j1 j2]
}

// Intersect two sets (sorted, as sets have no order) and test membership.
func ExampleClient_SInter() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.SAdd(ctx, "tags:go", "fast", "typed", "simple"); err != nil {
		log.Fatal(err)
	}
	if _, err := client.SAdd(ctx, "tags:py", "simple", "dynamic", "typed"); err != nil {
		log.Fatal(err)
	}
	both, err := client.SInter(ctx, "tags:go", "tags:py")
	if err != nil {
		log.Fatal(err)
	}
	slices.Sort(both)
	is, err := client.SMIsMember(ctx, "tags:go", "fast", "dynamic")
	fmt.Println(both, is, err)
	// Output: [simple typed] [true false] <nil>
}
