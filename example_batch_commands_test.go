package respire_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/respire-go/respire"
)

// Queue typed commands of several families in one batch, send them in one
// round trip, then read each result from its Future.
func ExampleClient_NewBatch() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	b := client.NewBatch()
	b.Set("greeting", "hello")
	greeting := b.Get("greeting")
	fields := b.HSet("user:1", "name", "Ada", "lang", "en")
	members := b.SAdd("tags", "go", "redis")
	rank := b.ZAdd("board", respire.ZAddOptions{}, respire.Z{Score: 7, Member: "ada"})
	score := b.ZScore("board", "ada")
	length := b.RPush("queue", "j1", "j2")
	if err := b.Execute(ctx); err != nil {
		log.Fatal(err)
	}
	g, _ := greeting.Result()
	f, _ := fields.Result()
	m, _ := members.Result()
	r, _ := rank.Result()
	s, _ := score.Result()
	n, err := length.Result()
	fmt.Println(g, f, m, r, s, n, err)
	// Output: hello 2 2 1 7 2 <nil>
}

// A member's server error stays with that member: the others still run.
func ExampleBatch_Incr() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	b := client.NewBatch()
	b.Set("name", "Ada")
	bad := b.Incr("name") // not a number
	good := b.Incr("visits")
	if err := b.Execute(ctx); err != nil {
		log.Fatal(err)
	}
	_, err := bad.Result()
	var se *respire.ServerError
	fmt.Println(errors.As(err, &se), se.Code)
	fmt.Println(good.Result())
	// Output:
	// true ERR
	// 1 <nil>
}

// Run members atomically as MULTI/EXEC: a rate-limit counter that expires.
func ExampleClient_NewTransaction() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	tx := client.NewTransaction()
	count := tx.Incr("rate:ada")
	tx.Expire("rate:ada", time.Minute)
	ttl := tx.TTL("rate:ada")
	if err := tx.Execute(ctx); err != nil {
		log.Fatal(err)
	}
	n, err := count.Result()
	if err != nil {
		log.Fatal(err)
	}
	t, err := ttl.Result()
	fmt.Println(n, t > 55*time.Second, err)
	// Output: 1 true <nil>
}
