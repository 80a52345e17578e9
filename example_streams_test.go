package respire_test

import (
	"context"
	"fmt"
	"log"

	"github.com/respire-go/respire"
)

// Append entries with explicit IDs and read a range of the stream.
func ExampleClient_XAdd() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	for i, temp := range []string{"21.5", "22.0", "22.5"} {
		id := fmt.Sprintf("1-%d", i+1)
		if _, err := client.XAdd(ctx, "sensor", respire.XAddOptions{ID: id}, "temp", temp); err != nil {
			log.Fatal(err)
		}
	}
	msgs, err := client.XRange(ctx, "sensor", "1-2", "+", 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(m.ID, m.Fields)
	}
	// Output:
	// 1-2 [temp 22.0]
	// 1-3 [temp 22.5]
}

// Consume a stream with a consumer group: read, acknowledge, check pending.
func ExampleClient_XReadGroup() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	for _, id := range []string{"1-1", "1-2", "1-3"} {
		if _, err := client.XAdd(ctx, "jobs", respire.XAddOptions{ID: id}, "job", id); err != nil {
			log.Fatal(err)
		}
	}
	if err := client.XGroupCreate(ctx, "jobs", "workers", "0", respire.XGroupCreateOptions{}); err != nil {
		log.Fatal(err)
	}
	streams, err := client.XReadGroup(ctx, "workers", "w1", respire.XReadGroupOptions{Count: 2}, "jobs", ">")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range streams[0].Messages {
		fmt.Println(streams[0].Stream, m.ID, m.Fields)
	}
	acked, err := client.XAck(ctx, "jobs", "workers", streams[0].Messages[0].ID)
	if err != nil {
		log.Fatal(err)
	}
	p, err := client.XPending(ctx, "jobs", "workers")
	fmt.Println(acked, p.Count, p.LowestID, p.Consumers, err)
	// Output:
	// jobs 1-1 [job 1-1]
	// jobs 1-2 [job 1-2]
	// 1 1 1-2 [{w1 1}] <nil>
}
