package respire_test

import (
	"context"
	"fmt"
	"log"
	"strconv"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
)

// An optimistic-lock increment: WATCH, read, MULTI, write, EXEC on a
// connection of its own. A null EXEC reply means another client changed
// the key after WATCH, and the transaction did not run.
func ExampleClient_Dedicated() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.Set(ctx, "stock", "10"); err != nil {
		log.Fatal(err)
	}

	var committed bool
	err := client.Dedicated(ctx, func(conn *respire.Conn) error {
		if _, err := conn.Do(ctx, catalog.Transactions.WATCH(), "stock"); err != nil {
			return err
		}
		r, err := conn.Do(ctx, catalog.String.GET(), "stock")
		if err != nil {
			return err
		}
		n, err := r.Int64()
		if err != nil {
			return err
		}
		if _, err := conn.Do(ctx, catalog.Transactions.MULTI()); err != nil {
			return err
		}
		if _, err := conn.Do(ctx, catalog.String.SET(), "stock", strconv.FormatInt(n-1, 10)); err != nil {
			return err
		}
		exec, err := conn.Do(ctx, catalog.Transactions.EXEC())
		committed = err == nil && !exec.IsNull()
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	v, _ := client.Get(ctx, "stock")
	fmt.Println(committed, v)
	// Output: true 9
}
