package respire

import (
	"errors"
	"strconv"
	"testing"
)

// TestClusterTransactionScanIsPinned: a Cluster transaction holding a
// SCAN page that names its server (a continuation's cursor, or a first
// page sent to a chosen node) runs on that server, as a batch group does;
// with a key another node serves it fails with ErrInvalidArgument before
// any I/O. The transaction used to ignore the server and run where its
// keys (or, keyless, slot 0) went: SCAN walked a cursor that node never
// issued, and returned wrong pages without an error.
func TestClusterTransactionScanIsPinned(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	zero, home := ownerAndOther(t, c, -1) // zero: where a keyless unit goes
	other := zero.Addr
	_, keys := bcScanKeys(t, c, home)
	kOther := bcTagOn(t, c, other) + "g"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), append(keys, kOther)...) })
	opts := ScanOptions{Count: 1}
	page := bcFirstPage(t, c, home, opts)

	t.Run("Keyless", func(t *testing.T) {
		before := commandCalls(t, home, "scan")
		tx := c.NewTransaction()
		next := tx.Scan(page, opts)
		if err := tx.Execute(ctx); err != nil {
			t.Fatalf("Execute = %v", err)
		}
		np, err := next.Result()
		if err != nil || np.Server != home {
			t.Errorf("continuation = %+v, %v; want a page from %s", np, err, home)
		}
		if n := commandCalls(t, home, "scan") - before; n != 1 {
			t.Errorf("SCAN ran %d times on the cursor's server, want 1", n)
		}
	})
	t.Run("KeyElsewhere", func(t *testing.T) {
		tx := c.NewTransaction()
		next := tx.Scan(page, opts)
		get := tx.Get(kOther)
		err := tx.Execute(ctx)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Execute = %v, want ErrInvalidArgument: one transaction cannot reach both nodes", err)
		}
		if !errors.Is(next.Err(), ErrInvalidArgument) || !errors.Is(get.Err(), ErrInvalidArgument) {
			t.Errorf("members = %v, %v; want the transaction's error", next.Err(), get.Err())
		}
	})
}

// TestClusterWatchScanOfAnotherServer: a Watch queue runs on the
// connection that holds the WATCH, so a SCAN page naming another server
// fails Watch with ErrInvalidArgument before MULTI is sent; it used to
// walk that server's cursor on the watched node and return wrong pages
// without an error. A page of the watched node itself runs.
func TestClusterWatchScanOfAnotherServer(t *testing.T) {
	countsCommands(t)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	home, other := primaries[0].Addr, primaries[1].Addr
	ph, keys := bcScanKeys(t, c, home)
	kHome, kOther := ph+"w", bcTagOn(t, c, other)+"w"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), append(keys, kHome, kOther)...) })
	opts := ScanOptions{Count: 1}
	page := bcFirstPage(t, c, home, opts)

	multis := commandCalls(t, other, "multi")
	var next ScanFuture
	err := c.Watch(ctx, func(tx *Tx) error {
		next = tx.Queue().Scan(page, opts)
		return nil
	}, kOther)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Watch on %s with a page of %s = %v, want ErrInvalidArgument", other, home, err)
	}
	if !errors.Is(next.Err(), ErrInvalidArgument) {
		t.Errorf("the page = %v, want Watch's error", next.Err())
	}
	if n := commandCalls(t, other, "multi") - multis; n != 0 {
		t.Errorf("MULTI ran %d times, want 0", n)
	}

	err = c.Watch(ctx, func(tx *Tx) error {
		next = tx.Queue().Scan(page, opts)
		return nil
	}, kHome)
	if np, perr := next.Result(); err != nil || perr != nil || np.Server != home {
		t.Errorf("Watch on the page's server = %v; page %+v, %v", err, np, perr)
	}
}

// bcScanKeys writes 32 keys under a hash tag that home serves (more than
// one SCAN page of COUNT 1) and returns the tag and the keys.
func bcScanKeys(t *testing.T, c *Client, home string) (tag string, keys []string) {
	t.Helper()
	tag = bcTagOn(t, c, home)
	pairs := make([]string, 0, 64)
	for i := range 32 {
		k := tag + strconv.Itoa(i)
		pairs, keys = append(pairs, k, "v"), append(keys, k)
	}
	if err := c.MSet(testCtx(t), pairs...); err != nil {
		t.Fatal(err)
	}
	return tag, keys
}

// bcFirstPage executes a batch of one first SCAN page sent to home and
// returns it, failing t unless home answered with a continuation.
func bcFirstPage(t *testing.T, c *Client, home string, opts ScanOptions) ScanPage[string] {
	t.Helper()
	b := c.NewBatch()
	first := b.Scan(ScanPage[string]{Server: home}, opts)
	if err := b.Execute(testCtx(t)); err != nil {
		t.Fatalf("first page: Execute = %v", err)
	}
	page, err := first.Result()
	if err != nil || page.Server != home || page.Cursor == "0" || page.Cursor == "" {
		t.Fatalf("first page = %+v, %v; want a continuation from %s", page, err, home)
	}
	return page
}
