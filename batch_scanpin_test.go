package respire

import (
	"errors"
	"testing"
)

// TestSentinelBatchScanContinuationsOfTwoServers: a Sentinel batch is one
// unit on one server, so two SCAN continuations whose cursors come from
// different servers (the primary and a replica) cannot both go where
// their cursors are valid: Execute fails with ErrInvalidArgument before
// any I/O, every member holding it. The batch used to be pinned to the
// first continuation's server, and the other cursor walked a server that
// never issued it, returning wrong pages without an error.
func TestSentinelBatchScanContinuationsOfTwoServers(t *testing.T) {
	c := sentinelClient(t, Options{ReadFrom: ReadReplica})
	ctx := testCtx(t)
	opts := ScanOptions{Count: 1}
	onReplica := replicaScanPage(t, c, opts)
	first := c.NewBatch()
	pf := first.Scan(ScanPage[string]{}, opts) // a batch goes to the primary
	if err := first.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	onPrimary, err := pf.Result()
	if n, _ := c.topo.At(onPrimary.Server); err != nil || n == nil || n.Replica || onPrimary.Cursor == "0" {
		t.Fatalf("first page = %+v, %v; want a continuation cursor from the primary", onPrimary, err)
	}

	b := c.NewBatch()
	a := b.Scan(onPrimary, opts)
	r := b.Scan(onReplica, opts)
	err = b.Execute(ctx)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Execute = %v, want ErrInvalidArgument: one unit cannot reach both servers", err)
	}
	if !errors.Is(a.Err(), ErrInvalidArgument) || !errors.Is(r.Err(), ErrInvalidArgument) {
		t.Errorf("continuations = %v, %v; want the unit's error", a.Err(), r.Err())
	}
}
