package respire_test

import (
	"context"
	"fmt"
	"log"
)

// Receive messages on a subscription of its own. Subscribe returns once
// the server confirmed the channel, so what is published afterwards
// arrives. A Gap event says the connection was lost and subscribed again:
// messages published in between may be missing.
func ExampleClient_Subscribe() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	sub, err := client.Subscribe(ctx, "news")
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	for _, text := range []string{"first", "second"} {
		if _, err := client.Publish(ctx, "news", text); err != nil {
			log.Fatal(err)
		}
	}
	for range 2 {
		m := <-sub.Channel()
		if m.Gap {
			fmt.Println("messages may have been lost:", m.Err)
			continue
		}
		fmt.Println(m.Channel, m.Payload)
	}
	// Output:
	// news first
	// news second
}

// Subscribe to a pattern; each message says which pattern matched.
func ExampleClient_PSubscribe() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	sub, err := client.PSubscribe(ctx, "orders:*")
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	if _, err := client.Publish(ctx, "orders:eu", "order 1"); err != nil {
		log.Fatal(err)
	}
	m := <-sub.Channel()
	fmt.Println(m.Pattern, m.Channel, m.Payload)
	// Output: orders:* orders:eu order 1
}
