package respire

import (
	"errors"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// nullRandomKey is a null bulk string: RANDOMKEY's answer on an empty
// shard.
var nullRandomKey = []byte("$-1\r\n")

// TestClusterRandomKeyFindsTheShardThatHoldsKeys: on a Cluster client
// RandomKey (and Do of RANDOMKEY) finds a key on whichever shard holds
// one. With every primary but one answering as an empty shard (the owner
// of slot 0 among them), it returns a key of the remaining primary, every
// time. With every primary empty it returns ErrNil, having asked each
// primary once. When the only primary that did not answer empty failed,
// the call fails with that primary's error, not ErrNil: its shard may
// hold keys.
func TestClusterRandomKeyFindsTheShardThatHoldsKeys(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{})
	ctx := testCtx(t)
	owner, other := ownerAndOther(t, c, 0)
	k, _ := keyOn(t, c, other)
	must(t, c.Set(ctx, k, "v"))
	t.Cleanup(func() { admin(t, other, "DEL", k) })
	empty := map[string]*respiretest.RuleHandle{}
	for addr, px := range proxies {
		if addr != other {
			empty[addr] = px.MustAddRule(t, respiretest.Rule{Command: "RANDOMKEY", Times: respiretest.Always,
				Action: respiretest.Reply(nullRandomKey)})
		}
	}
	if _, ok := empty[owner.Addr]; !ok {
		t.Fatalf("the owner of slot 0, %s, is not behind a proxy", owner.Addr)
	}
	servedByOther := func(how, got string) {
		t.Helper()
		if n, err := c.topo.Pick(route.Slot(got), false); err != nil || n.Addr != other {
			t.Fatalf("%s = %q, not a key of %s, the only shard that holds keys", how, got, other)
		}
	}
	for range 8 { // the order is random: each call must find the shard
		got, err := c.RandomKey(ctx)
		if err != nil {
			t.Fatalf("RandomKey with only %s holding keys = %v, want one of its keys", other, err)
		}
		servedByOther("RandomKey", got)
		r, err := c.Do(ctx, catalog.Generic.RANDOMKEY())
		if err != nil {
			t.Fatalf("Do(RANDOMKEY) with only %s holding keys = %v, want one of its keys", other, err)
		}
		s, err := r.String()
		must(t, err)
		servedByOther("Do(RANDOMKEY)", s)
	}

	t.Run("EveryShardEmpty", func(t *testing.T) {
		rule := proxies[other].MustAddRule(t, respiretest.Rule{Command: "RANDOMKEY", Times: respiretest.Always,
			Action: respiretest.Reply(nullRandomKey)})
		defer rule.Remove()
		empty[other] = rule
		before := map[string]int{}
		for addr, h := range empty {
			before[addr] = h.Matched()
		}
		if got, err := c.RandomKey(ctx); !errors.Is(err, ErrNil) {
			t.Fatalf("RandomKey with every shard empty = %q, %v; want ErrNil", got, err)
		}
		for addr, h := range empty {
			if n := h.Matched() - before[addr]; n != 1 {
				t.Errorf("RandomKey with every shard empty asked %s %d times, want once", addr, n)
			}
		}
	})

	t.Run("FailedShardIsNotEmpty", func(t *testing.T) {
		rule := proxies[other].MustAddRule(t, respiretest.Rule{Command: "RANDOMKEY", Times: respiretest.Always,
			Action: respiretest.Inject("ERR respire-test refuses RANDOMKEY")})
		defer rule.Remove()
		got, err := c.RandomKey(ctx)
		var se *ServerError
		if !errors.As(err, &se) || errors.Is(err, ErrNil) {
			t.Fatalf("RandomKey with the shard holding keys failing = %q, %v; want its *ServerError", got, err)
		}
	})
}
