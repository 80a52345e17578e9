package respire

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestTopologySmoke(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		p := keyPrefix(t)
		var keys []string
		for i := range 50 {
			k := fmt.Sprintf("%s%d", p, i)
			keys = append(keys, k)
			if err := c.Set(ctx, k, "v"+k); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
		}
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), keys...) })
		for _, k := range keys {
			v, err := c.Get(ctx, k)
			if err != nil || v != "v"+k {
				t.Fatalf("GET %s = %q, %v", k, v, err)
			}
		}
		vals, found, err := c.MGet(ctx, keys...)
		if err != nil {
			t.Fatalf("MGET: %v", err)
		}
		for i, k := range keys {
			if !found[i] || vals[i] != "v"+k {
				t.Fatalf("MGET[%d] = %q %v", i, vals[i], found[i])
			}
		}
		n, err := c.Exists(ctx, keys...)
		if err != nil || n != int64(len(keys)) {
			t.Fatalf("EXISTS = %d, %v", n, err)
		}
		var seen []string
		for k, err := range c.Scan(ctx, ScanOptions{Match: escapeGlob(p) + "*"}) {
			if err != nil {
				t.Fatalf("SCAN: %v", err)
			}
			seen = append(seen, k)
		}
		slices.Sort(seen)
		seen = slices.Compact(seen)
		if len(seen) != len(keys) {
			t.Fatalf("SCAN saw %d keys, want %d", len(seen), len(keys))
		}
		if _, err := c.RPush(ctx, keys[0]+"l", "a"); err != nil {
			t.Fatal(err)
		}
		k, v, err := c.BLPop(ctx, time.Second, keys[0]+"l")
		if err != nil || v != "a" || k != keys[0]+"l" {
			t.Fatalf("BLPOP = %q %q %v", k, v, err)
		}
		err = c.Dedicated(ctx, func(conn *Conn) error {
			r, err := conn.Do(ctx, NewCommand("GET"), keys[3])
			if err != nil {
				return err
			}
			s, _ := r.String()
			if s != "v"+keys[3] {
				return fmt.Errorf("dedicated GET = %q", s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Del(ctx, keys...)
		if err != nil || d != int64(len(keys)) {
			t.Fatalf("DEL = %d, %v", d, err)
		}
	})
}
