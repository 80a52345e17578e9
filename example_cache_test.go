package respire_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
)

// Server-assisted client-side caching: the first GetCached reads from the
// server behind CLIENT CACHING YES; later ones are served from memory until
// the server reports that the key changed. It needs a Redis 6 or newer
// server speaking RESP3 (the embedded test server has no CLIENT TRACKING,
// so this example is compiled, not run).
func ExampleClient_GetCached() {
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{
		Endpoints:   []string{"localhost:6379"},
		ClientCache: &respire.CacheOptions{MaxEntries: 50000, TTL: 5 * time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	v, err := client.GetCached(ctx, "config:feature-flags") // from the server
	if err != nil {
		log.Fatal(err)
	}
	v, _ = client.GetCached(ctx, "config:feature-flags") // from memory
	fmt.Println(v)

	// Any read-only keyed command of the catalog can be cached.
	members, err := client.DoCached(ctx, catalog.Set.SMEMBERS(), "allowed-regions")
	if err != nil {
		log.Fatal(err)
	}
	regions, _ := members.Strings()
	fmt.Println(regions)
}
