package respire

// SCAN-family iterators on a Cluster whose slots move during the
// iteration.

import (
	"errors"
	"strconv"
	"testing"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
)

// TestHScanContinuationIsNotRedirected: a continuation (a non-zero cursor)
// whose key's slot moved to another primary ends the iteration with the
// MOVED reply. Following the redirect would send the old server's cursor
// to a server whose hash table it does not describe, silently skipping or
// repeating fields; the new owner must never receive it.
func TestHScanContinuationIsNotRedirected(t *testing.T) {
	testenv.UseTopology(t, true)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	k := keyPrefix(t) + "h"
	var pairs []any
	for i := range 600 { // over hash-max-listpack-entries: a hash table, paged
		pairs = append(pairs, "f"+strconv.Itoa(i), "v")
	}
	if _, err := c.Do(ctx, NewCommand("HSET"), append([]any{k}, pairs...)...); err != nil {
		t.Fatal(err)
	}
	slot := route.Slot(k)
	src, dst := ownerAndOther(t, c, slot)
	ids := clusterNodeIDs(t)
	moved := false
	t.Cleanup(func() {
		if moved {
			migrateSlot(t, slot, dst, src.Addr, ids)
		}
	})
	pages, before := 0, 0
	var iterErr error
	for page, err := range c.HScanPages(ctx, k, ScanOptions{Count: 10}) {
		if err != nil {
			iterErr = err
			break
		}
		if pages++; pages > 1 {
			t.Fatalf("page %d after the slot moved: %+v, want the iteration to end", pages, page)
		}
		if page.Cursor == "0" {
			t.Fatal("the first page ended the iteration: the hash is not paged")
		}
		migrateSlot(t, slot, src.Addr, dst, ids)
		moved = true
		before = commandCalls(t, dst, "hscan")
	}
	var se *ServerError
	if !errors.As(iterErr, &se) || se.Code != "MOVED" {
		t.Fatalf("continuation after the slot moved: %v, want the MOVED reply", iterErr)
	}
	if got := commandCalls(t, dst, "hscan") - before; got != 0 {
		t.Fatalf("the new owner ran HSCAN %d times with the old server's cursor, want 0", got)
	}
}
