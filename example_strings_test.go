package respire_test

import (
	"context"
	"fmt"
	"log"
)

// Read several keys at once: found tells a missing key from an empty value.
func ExampleClient_MGet() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.MSet(ctx, "a", "1", "b", ""); err != nil {
		log.Fatal(err)
	}
	values, found, err := client.MGet(ctx, "a", "b", "missing")
	if err != nil {
		log.Fatal(err)
	}
	for i, v := range values {
		fmt.Printf("%q %v\n", v, found[i])
	}
	// Output:
	// "1" true
	// "" true
	// "" false
}

// Increment a counter by a fractional amount.
func ExampleClient_IncrByFloat() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.Set(ctx, "price", "10.5"); err != nil {
		log.Fatal(err)
	}
	v, err := client.IncrByFloat(ctx, "price", 0.25)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f\n", v)
	// Output: 10.75
}

// Track daily activity in a bitmap: one bit per user ID.
func ExampleClient_SetBit() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	for _, user := range []int64{3, 7, 42} {
		if _, err := client.SetBit(ctx, "active:today", user, true); err != nil {
			log.Fatal(err)
		}
	}
	seen7, err := client.GetBit(ctx, "active:today", 7)
	if err != nil {
		log.Fatal(err)
	}
	seen8, err := client.GetBit(ctx, "active:today", 8)
	if err != nil {
		log.Fatal(err)
	}
	n, err := client.BitCount(ctx, "active:today", nil)
	fmt.Println(seen7, seen8, n, err)
	// Output: true false 3 <nil>
}

// Count distinct visitors approximately with a HyperLogLog.
func ExampleClient_PFAdd() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	changed, err := client.PFAdd(ctx, "visitors", "ada", "bob", "ada", "eve")
	if err != nil {
		log.Fatal(err)
	}
	again, err := client.PFAdd(ctx, "visitors", "bob")
	if err != nil {
		log.Fatal(err)
	}
	n, err := client.PFCount(ctx, "visitors")
	fmt.Println(changed, again, n, err)
	// Output: true false 3 <nil>
}
