package respire

// SCAN-family pages and the process hooks.

import (
	"strings"
	"testing"
)

// TestScanPagesRunThroughHooksOnEveryTopology: every page a SCAN-family
// iterator sends is one command to the process hooks, on a Sentinel or
// Cluster client as on a standalone one (whose pages already were).
func TestScanPagesRunThroughHooksOnEveryTopology(t *testing.T) {
	var events []string
	h := &recordingHook{tag: "h", events: &events}
	topologies(t, Options{Hooks: []Hook{h}}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "h"
		if _, err := c.Do(ctx, NewCommand("HSET"), k, "f", "v"); err != nil {
			t.Fatal(err)
		}
		count := func(name string) int {
			h.mu.Lock()
			defer h.mu.Unlock()
			n := 0
			for _, e := range events {
				if strings.HasPrefix(e, "h:before "+name+" ") {
					n++
				}
			}
			return n
		}
		before := count("SCAN")
		pages := 0
		for _, err := range c.ScanPages(ctx, ScanOptions{Match: escapeGlob(keyPrefix(t)) + "*", Count: 1000}) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
		}
		if got := count("SCAN") - before; got != pages {
			t.Errorf("the hooks saw %d SCAN commands for %d pages, want one per page", got, pages)
		}
		before = count("HSCAN")
		for _, err := range c.HScan(ctx, k, ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := count("HSCAN") - before; got != 1 {
			t.Errorf("the hooks saw %d HSCAN commands for one page, want 1", got)
		}
	})
}
