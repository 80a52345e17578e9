package wire

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestParkedReaderLetsGoOfALargeReply proves that a connection that read
// a 32 MiB reply and went idle does not keep the buffers it grew for it:
// once the reader's role is parked, whether the caller read its own reply
// (a context that cannot be cancelled) or the reader goroutine took it
// over (a cancellable one, with an own read of 20µs), the connection
// holds less than 4 MiB more than before the reply, long before the
// health monitor's next tick (an hour away) would have read again.
func TestParkedReaderLetsGoOfALargeReply(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"own read", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"reader goroutine", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet
			cfg.OwnReadWait = 20 * time.Microsecond
			c := dialRealConfig(t, cfg)
			do(t, c, WantBytes, "PING").Release()
			awaitParked(t, c)
			before := heapAlloc()
			echoLarge(t, c, tc.ctx, 32<<20)
			awaitParked(t, c)
			if held := int64(heapAlloc()) - int64(before); held > 4<<20 {
				t.Fatalf("the idle connection holds %d MiB more after a 32 MiB reply, want under 4", held>>20)
			}
			runtime.KeepAlive(c)
		})
	}
}

// echoLarge has c echo n bytes and checks the reply, keeping nothing.
func echoLarge(t *testing.T, c *Conn, ctx func() (context.Context, context.CancelFunc), n int) {
	t.Helper()
	f := newFrame(WantBytes, "ECHO", strings.Repeat("e", n))
	cx, cancel := ctx()
	defer cancel()
	if sent, err := c.Do(cx, time.Time{}, f); !sent || err != nil || f.Err != nil || len(f.Bytes) != n {
		t.Fatalf("ECHO: sent %v, %v, %v, %d bytes", sent, err, f.Err, len(f.Bytes))
	}
	f.Release()
}

// heapAlloc returns the bytes of live heap objects after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
