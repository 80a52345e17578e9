package respire_test

import (
	"context"
	"fmt"
	"log"

	"github.com/respire-go/respire"
)

// Keep a leaderboard: add scored members and read them lowest first.
func ExampleClient_ZAdd() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	added, err := client.ZAdd(ctx, "board", respire.ZAddOptions{},
		respire.Z{Score: 30, Member: "carol"}, respire.Z{Score: 10, Member: "ada"}, respire.Z{Score: 20, Member: "bob"})
	if err != nil {
		log.Fatal(err)
	}
	top, err := client.ZRangeWithScores(ctx, "board", 0, -1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added:", added)
	for _, z := range top {
		fmt.Printf("%s %.1f\n", z.Member, z.Score)
	}
	// Output:
	// added: 3
	// ada 10.0
	// bob 20.0
	// carol 30.0
}

// Page through members by score: ZRANGE ... BYSCORE LIMIT.
func ExampleClient_ZRangeArgs() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.ZAdd(ctx, "prices", respire.ZAddOptions{},
		respire.Z{Score: 0.5, Member: "pen"}, respire.Z{Score: 3, Member: "book"},
		respire.Z{Score: 8, Member: "lamp"}, respire.Z{Score: 12, Member: "desk"}); err != nil {
		log.Fatal(err)
	}
	page, err := client.ZRangeArgs(ctx, "prices", "1", "+inf",
		respire.ZRangeOptions{By: respire.ZByScore, Offset: 1, Count: 2})
	fmt.Println(page, err)
	// Output: [lamp desk] <nil>
}

// Combine sorted sets with weights, keeping the highest weighted score.
func ExampleClient_ZUnionWithScores() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.ZAdd(ctx, "week1", respire.ZAddOptions{}, respire.Z{Score: 5, Member: "ada"}, respire.Z{Score: 2, Member: "bob"}); err != nil {
		log.Fatal(err)
	}
	if _, err := client.ZAdd(ctx, "week2", respire.ZAddOptions{}, respire.Z{Score: 4, Member: "bob"}); err != nil {
		log.Fatal(err)
	}
	zs, err := client.ZUnionWithScores(ctx, respire.ZCombineOptions{Weights: []float64{1, 2}, Aggregate: respire.ZAggregateMax}, "week1", "week2")
	if err != nil {
		log.Fatal(err)
	}
	for _, z := range zs {
		fmt.Printf("%s %.2f\n", z.Member, z.Score)
	}
	// Output:
	// ada 5.00
	// bob 8.00
}
