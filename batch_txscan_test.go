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
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	zero, err := c.topo.Pick(-1, false) // where a keyless transaction goes
	if err != nil {
		t.Fatal(err)
	}
	other := zero.Addr
	var home string
	for _, n := range c.topo.Primaries() {
		if n.Addr != other {
			home = n.Addr
			break
		}
	}
	ph := bcTagOn(t, c, home)
	var pairs, keys []string
	for i := range 32 {
		k := ph + strconv.Itoa(i)
		pairs, keys = append(pairs, k, "v"), append(keys, k)
	}
	if err := c.MSet(ctx, pairs...); err != nil {
		t.Fatal(err)
	}
	kOther := bcTagOn(t, c, other) + "g"
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), append(keys, kOther)...) })
	opts := ScanOptions{Count: 1}
	b := c.NewBatch()
	first := b.Scan(ScanPage[string]{Server: home}, opts)
	if err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := first.Result()
	if err != nil || page.Server != home || page.Cursor == "0" {
		t.Fatalf("first page = %+v, %v; want a continuation from %s", page, err, home)
	}

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
