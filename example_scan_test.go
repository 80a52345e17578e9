package respire_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/respire-go/respire"
)

// Iterate over keys with SCAN. SCAN may return a key more than once, so
// collect into a set when duplicates matter.
func ExampleClient_Scan() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	for _, k := range []string{"user:1", "user:2", "order:1"} {
		if err := client.Set(ctx, k, "x"); err != nil {
			log.Fatal(err)
		}
	}

	seen := map[string]bool{}
	for key, err := range client.Scan(ctx, respire.ScanOptions{Match: "user:*"}) {
		if err != nil {
			log.Fatal(err)
		}
		seen[key] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Println(keys)
	// Output: [user:1 user:2]
}

// Walk a hash page by page, with the cursor of each page.
func ExampleClient_HScanPages() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.HSet(ctx, "profile", "name", "Ada", "lang", "en"); err != nil {
		log.Fatal(err)
	}
	n := 0
	for page, err := range client.HScanPages(ctx, "profile", respire.ScanOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		n += len(page.Items)
		if page.Cursor == "0" {
			fmt.Println("last page; fields:", n)
		}
	}
	// Output: last page; fields: 2
}
