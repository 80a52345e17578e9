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

// Store a hash into a struct. Fields match keys by their redis tag; the
// text values convert to the fields' types.
func ExampleReply_Scan() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.HSet(ctx, "user:1", "name", "Ada", "visits", "42", "admin", "true", "idle", "1500", "plan", "pro"); err != nil {
		log.Fatal(err)
	}

	var user struct {
		Name   string        `redis:"name"`
		Visits uint32        `redis:"visits"`
		Admin  bool          `redis:"admin"`
		Idle   time.Duration `redis:"idle"` // milliseconds
		Email  *string       `redis:"email"`
	}
	r, err := client.Do(ctx, respire.NewCommand("HGETALL"), "user:1")
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Scan(&user); err != nil { // "plan" has no field: ignored
		log.Fatal(err)
	}
	fmt.Println(user.Name, user.Visits, user.Admin, user.Idle, user.Email == nil)
	// Output: Ada 42 true 1.5s true
}

// Read ZRANGE ... WITHSCORES: RESP2 sends a flat list of members and
// scores as text, RESP3 pairs of members and doubles; both convert to the
// same map.
func ExampleReply_Float64Map() {
	addr, stopServer := exampleServer()
	defer stopServer()
	ctx := context.Background()
	for _, protocol := range []int{2, 3} {
		client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{addr}, Protocol: protocol})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := client.Do(ctx, respire.NewCommand("ZADD"), "board", "12.5", "ada", "7", "bob"); err != nil {
			log.Fatal(err)
		}
		r, err := client.Do(ctx, respire.NewCommand("ZRANGE"), "board", "0", "-1", "WITHSCORES")
		if err != nil {
			log.Fatal(err)
		}
		scores, err := r.Float64Map()
		if err != nil {
			log.Fatal(err)
		}
		for _, member := range slices.Sorted(maps.Keys(scores)) {
			fmt.Printf("RESP%d %s %v\n", protocol, member, scores[member])
		}
		client.Close()
	}
	// Output:
	// RESP2 ada 12.5
	// RESP2 bob 7
	// RESP3 ada 12.5
	// RESP3 bob 7
}
