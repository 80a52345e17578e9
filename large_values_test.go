package respire

import (
	"runtime"
	"strings"
	"testing"
)

// TestGetOfALargeValueCopiesItOnce proves that Get of an 8 MiB value
// allocates no more than GetBytes with no buffer of the caller's does:
// the string takes the bytes read for it instead of a copy of them (the
// frame would have dropped them), and the value is intact.
func TestGetOfALargeValueCopiesItOnce(t *testing.T) {
	ctx := testCtx(t)
	c := newClient(t, Options{})
	k := key(t, "big")
	want := strings.Repeat("g", 8<<20)
	if err := c.Set(ctx, k, want); err != nil {
		t.Fatal(err)
	}
	allocated := func(get func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		get()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var got string
	var gotBytes []byte
	var err, errBytes error
	viaBytes := allocated(func() { gotBytes, errBytes = c.GetBytes(ctx, k, nil) })
	viaString := allocated(func() { got, err = c.Get(ctx, k) })
	if errBytes != nil || string(gotBytes) != want || err != nil || got != want {
		t.Fatalf("GetBytes: %d bytes, %v; Get: %d bytes, %v; want the 8 MiB value", len(gotBytes), errBytes, len(got), err)
	}
	if viaString > viaBytes+1<<20 {
		t.Errorf("Get allocated %d MiB, GetBytes %d MiB: want no copy of the 8 MiB value", viaString>>20, viaBytes>>20)
	}
}
