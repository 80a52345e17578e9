package respire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// proxiedSentinels returns a fault proxy in front of every sentinel of the
// test script's group, and their addresses.
func proxiedSentinels(t *testing.T) ([]*respiretest.Proxy, []string) {
	t.Helper()
	var pxs []*respiretest.Proxy
	var addrs []string
	for _, a := range testenv.SentinelAddrs(t) {
		px := realProxy(t, a)
		pxs = append(pxs, px)
		addrs = append(addrs, px.Addr())
	}
	return pxs, addrs
}

// TestSentinelFailedReplicasQueryKeepsReplicas: a rediscovery whose
// SENTINEL REPLICAS query fails (the connection drops, or an error reply)
// still installs the primary the sentinel named, and keeps the replicas
// already known instead of forgetting them: reads under ReadReplica go on
// reaching the replica instead of failing with ErrNoRoute.
func TestSentinelFailedReplicasQueryKeepsReplicas(t *testing.T) {
	for name, action := range map[string]respiretest.Action{
		"Dropped":    respiretest.DropBeforeForward,
		"ErrorReply": respiretest.Inject("ERR boom"),
	} {
		t.Run(name, func(t *testing.T) {
			pxs, addrs := proxiedSentinels(t)
			c := sentinelClient(t, Options{ReadFrom: ReadReplica,
				Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
			ctx := testCtx(t)
			replica, _ := readReplica(t, c, -1)
			for _, px := range pxs {
				r := px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always, Action: action})
				defer r.Remove()
			}
			if err := c.topo.Refresh(ctx, true); err != nil {
				t.Fatalf("rediscovery = %v, want the primary installed", err)
			}
			n, err := c.topo.Pick(-1, true)
			if err != nil {
				t.Fatalf("replica read after the failed REPLICAS query: %v", err)
			}
			if n.Addr != replica.Addr || !n.Replica {
				t.Errorf("replica read goes to %s (replica %v), want the replica %s", n.Addr, n.Replica, replica.Addr)
			}
			k := keyPrefix(t) + "k"
			if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
				t.Errorf("GET under ReadReplica = %v", err)
			}
		})
	}
}

// shardsReply encodes shards as a CLUSTER SHARDS reply (RESP2 shape):
// every node online, the primary of role master.
func shardsReply(shards []route.Shard) resp.Value {
	node := func(addr, role string) resp.Value {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		return resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("id"), bulk(role + addr), bulk("port"), {Type: resp.Integer, Int: int64(p)}, bulk("ip"), bulk(host),
			bulk("endpoint"), bulk(host), bulk("role"), bulk(role), bulk("health"), bulk("online")}}
	}
	var out []resp.Value
	for _, sh := range shards {
		var slots []resp.Value
		for _, r := range sh.Ranges {
			slots = append(slots, resp.Value{Type: resp.Integer, Int: int64(r[0])}, resp.Value{Type: resp.Integer, Int: int64(r[1])})
		}
		nodes := []resp.Value{node(sh.Primary, "master")}
		for _, r := range sh.Replicas {
			nodes = append(nodes, node(r, "replica"))
		}
		out = append(out, resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("slots"), {Type: resp.Array, Elems: slots}, bulk("nodes"), {Type: resp.Array, Elems: nodes}}})
	}
	return resp.Value{Type: resp.Array, Elems: out}
}

// TestClusterPrimaryOfTwoShardsCountedOnce: a CLUSTER SHARDS reply that
// lists one primary in two shards (disjoint slot ranges) is one node:
// commands for every primary (DBSIZE, KEYS, FLUSH-like) reach it once, so
// DBSIZE does not count its keys twice.
func TestClusterPrimaryOfTwoShardsCountedOnce(t *testing.T) {
	c, proxies := proxiedClusterNodes(t, Options{}, true)
	ctx := testCtx(t)
	a := c.topo.Primaries()[0].Addr
	shards, err := route.ParseShards(admin(t, a, "CLUSTER", "SHARDS").Value(), "127.0.0.1", false)
	if err != nil {
		t.Fatal(err)
	}
	// Split the first multi-slot range of the first shard into two
	// shards with the same primary.
	var split []route.Shard
	done := false
	for _, sh := range shards {
		for i, r := range sh.Ranges {
			if done || r[1] == r[0] {
				continue
			}
			mid := (r[0] + r[1]) / 2
			rest := slices.Clone(sh.Ranges)
			rest[i] = [2]int{r[0], mid}
			split = append(split, route.Shard{Primary: sh.Primary, Replicas: sh.Replicas, Ranges: [][2]int{{mid + 1, r[1]}}})
			sh.Ranges = rest
			done = true
		}
		split = append(split, sh)
	}
	raw := encode(shardsReply(split))
	for _, px := range proxies {
		r := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Reply(raw)})
		defer r.Remove()
	}
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatalf("refresh with the split shard: %v", err)
	}
	prims := addrs(c.topo.Primaries())
	if got := len(slices.Compact(slices.Clone(prims))); got != len(prims) {
		t.Errorf("Primaries() = %v: a node is listed twice", prims)
	}
	before := map[string]int{}
	for addr, px := range proxies {
		before[addr] = px.Forwarded("DBSIZE")
	}
	if _, err := c.DBSize(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if got := proxies[sh.Primary].Forwarded("DBSIZE") - before[sh.Primary]; got != 1 {
			t.Errorf("primary %s ran DBSIZE %d times for one call, want 1", sh.Primary, got)
		}
	}
}

// TestSentinelWatchLeavesSilentSentinel: a sentinel that falls silent
// after the +switch-master subscription (a link that dies without a reset,
// a stopped process) does not hold the watch forever: after
// IdlePingInterval plus HealthTimeout without a byte, the watch subscribes
// on the next sentinel.
func TestSentinelWatchLeavesSilentSentinel(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	arrived := make(chan int, 16)
	for i, px := range pxs {
		r := px.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always, Action: respiretest.Pass,
			OnReceive: func([]string) {
				select { // never block the proxy (its Close waits for OnReceive)
				case arrived <- i:
				default:
				}
			}})
		defer r.Remove()
	}
	sentinelClient(t, Options{IdlePingInterval: 100 * time.Millisecond, HealthTimeout: 100 * time.Millisecond,
		Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	var first int
	select {
	case first = <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch subscribed on no sentinel")
	}
	cut := pxs[first].Partition()
	t.Cleanup(cut.Heal)
	select {
	case next := <-arrived:
		if next == first {
			t.Errorf("the watch subscribed on the silent sentinel %d again, want another one", next)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the watch still listens to the silent sentinel %d", first)
	}
}

// TestClusterCombinedReplyOfWrongType: a command for every primary
// (DBSIZE, KEYS) or a split command (DEL across slots) one of whose parts
// gets a reply of the wrong type fails with ErrUnexpectedReply instead of
// leaving that node out of the combined reply.
func TestClusterCombinedReplyOfWrongType(t *testing.T) {
	c, proxies := proxiedCluster(t, Options{})
	ctx := testCtx(t)
	a := c.topo.Primaries()[0].Addr
	ok := respiretest.Reply([]byte("+OK\r\n"))
	nul := respiretest.Reply([]byte("_\r\n"))
	k1, _ := keyOn(t, c, a)
	k2, _ := keyOn(t, c, c.topo.Primaries()[1].Addr)
	for _, tc := range []struct {
		name, cmd string
		action    respiretest.Action
		call      func() error
	}{
		{"DBSize", "DBSIZE", ok, func() error { _, err := c.DBSize(ctx); return err }},
		{"DBSizeNull", "DBSIZE", nul, func() error { _, err := c.DBSize(ctx); return err }},
		{"DoDBSize", "DBSIZE", ok, func() error {
			r, err := c.Do(ctx, NewCommand("DBSIZE"))
			if err == nil {
				_, err = r.Int64()
			}
			return err
		}},
		{"Keys", "KEYS", ok, func() error { _, err := c.Keys(ctx, escapeGlob(keyPrefix(t))+"*"); return err }},
		{"DelAcrossSlots", "DEL", ok, func() error { _, err := c.Del(ctx, k1, k2); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := proxies[a].MustAddRule(t, respiretest.Rule{Command: tc.cmd, Action: tc.action})
			defer r.Remove()
			err := tc.call()
			if r.Applied() != 1 {
				t.Fatalf("the rule applied %d times, want 1", r.Applied())
			}
			if err == nil || (!errors.Is(err, ErrUnexpectedReply) && !errors.Is(err, ErrNil)) {
				t.Errorf("err = %v, want the part's unexpected reply reported", err)
			}
		})
	}
}

// TestTopologyConnectRejectedHandshakeIsServerError: when the servers of a
// Cluster or the sentinels reject the handshake (unknown user), Connect's
// error holds the *ServerError, as a standalone Connect's does, so that
// IsAuth identifies it; and a failover group with such a member fails, as
// documented, instead of starting it as merely unreachable.
func TestTopologyConnectRejectedHandshakeIsServerError(t *testing.T) {
	testenv.UseTopology(t, false)
	ctx := testCtx(t)
	const user, pw = "respire-no-such-user", "x"
	for name, o := range map[string]Options{
		"Cluster":   {Endpoints: testenv.ClusterAddrs(t), Cluster: &ClusterOptions{}, Username: user, Password: pw},
		"Sentinels": {Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: testenv.SentinelAddrs(t), Username: user, Password: pw}},
	} {
		t.Run(name, func(t *testing.T) {
			o.DialTimeout = 2 * time.Second
			c, err := Connect(ctx, o)
			wantAuthRejection(t, c, err)
			var se *ServerError
			g, err := NewFailoverGroup(ctx, []FailoverMember{
				{Options: Options{Endpoints: []string{standaloneAddr(t)}}},
				{Options: o, Priority: 1},
			}, FailoverGroupOptions{})
			if err == nil {
				_ = g.Close()
				t.Fatal("NewFailoverGroup with a member that rejects its credentials succeeded")
			}
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "member 1") {
				t.Errorf("NewFailoverGroup = %v, want member 1's *ServerError", err)
			}
		})
	}
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	return testenv.FreeAddr(t)
}

// namePrimary makes the sentinel behind px name addr as the primary, until
// the rule it returns is removed.
func namePrimary(t *testing.T, px *respiretest.Proxy, addr string) *respiretest.RuleHandle {
	host, port, _ := net.SplitHostPort(addr)
	return px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Array, Elems: []resp.Value{bulk(host), bulk(port)}}))})
}

// staleTarget returns what a stale sentinel names in place of primary:
// the dead old primary (an address where nothing listens), or a replica
// of the group (whose ROLE is slave).
func staleTarget(t *testing.T, target, primary string) string {
	t.Helper()
	if target != "Replica" {
		return deadAddr(t)
	}
	if replica := testenv.SentinelReplica(t); replica != primary {
		return replica
	}
	return testenv.SentinelPrimary(t)
}

// TestSentinelStaleSentinelIsPassedOver: a sentinel that keeps naming an
// address that is not the primary (a stale sentinel, cut off from the
// others: the dead old primary, or a replica) is asked first, yet its
// answer is not installed: before a discovery replaces the primary it
// verifies the address named (a connection whose ROLE is master), and
// takes the next sentinel's answer when that fails. The client stays on
// the healthy primary, the same node, and commands work throughout. (It
// used to install the stale answer, retiring the healthy primary and
// failing its commands in flight as possibly executed, until a later
// rediscovery passed over the then unreachable address; a replica, being
// reachable, was never passed over.)
func TestSentinelStaleSentinelIsPassedOver(t *testing.T) {
	for _, target := range []string{"DeadOldPrimary", "Replica"} {
		t.Run(target, func(t *testing.T) {
			pxs, addrs := proxiedSentinels(t)
			c := sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
			ctx := testCtx(t)
			primary := c.topo.Primaries()[0]
			if stale := c.topo.(*route.Sentinel).Sentinels()[0]; stale != addrs[0] {
				t.Fatalf("the first sentinel asked is %s, want %s", stale, addrs[0])
			}
			named := staleTarget(t, target, primary.Addr)
			r := namePrimary(t, pxs[0], named)
			defer r.Remove()
			if err := c.topo.Refresh(ctx, true); err != nil {
				t.Fatalf("rediscovery = %v, want the next sentinel's answer", err)
			}
			if r.Applied() == 0 {
				t.Fatal("the stale sentinel was not asked")
			}
			if got := c.topo.Primaries()[0]; got != primary {
				t.Fatalf("primary after the stale answer = %s, want %s kept (the stale sentinel named %s)", got.Addr, primary.Addr, named)
			}
			if err := c.Set(ctx, keyPrefix(t)+"k", "v"); err != nil {
				t.Errorf("SET after the stale answer = %v", err)
			}
		})
	}
}

// TestSentinelOnlyStaleSentinelKeepsPrimary: when the only sentinel that
// answers names an address that is not a reachable primary (the dead old
// primary, or a replica), the rediscovery fails naming it, the client
// keeps its healthy primary, and a command in flight there gets its
// reply instead of failing as the node retired.
func TestSentinelOnlyStaleSentinelKeepsPrimary(t *testing.T) {
	for _, target := range []string{"DeadOldPrimary", "Replica"} {
		t.Run(target, func(t *testing.T) {
			pxs, addrs := proxiedSentinels(t)
			// The primary behind a proxy of its own, to hold a reply.
			primaryPx := realProxy(t, sentinelPrimary(t))
			var rules []*respiretest.RuleHandle
			for _, px := range pxs {
				rules = append(rules, namePrimary(t, px, primaryPx.Addr()))
				// Only the proxied sentinels: a learnt one would answer.
				px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always,
					Action: respiretest.Reply(encode(resp.Value{Type: resp.Array}))})
			}
			c := sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
			ctx := testCtx(t)
			primary := c.topo.Primaries()[0]
			if primary.Addr != primaryPx.Addr() {
				t.Fatalf("primary = %s, want the proxy %s", primary.Addr, primaryPx.Addr())
			}
			for _, r := range rules {
				r.Remove()
			}
			named := staleTarget(t, target, sentinelPrimary(t))
			defer namePrimary(t, pxs[0], named).Remove()
			for _, px := range pxs[1:] {
				px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
					Action: respiretest.Inject("ERR cut off by the test")})
			}
			k := keyPrefix(t) + "k"
			held := primaryPx.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: k, Action: respiretest.Hold})
			defer held.Release()
			inFlight := make(chan error, 1)
			go func() {
				_, err := c.Get(ctx, k)
				inFlight <- err
			}()
			<-held.Received()
			err := c.topo.Refresh(ctx, true)
			if err == nil || !strings.Contains(err.Error(), named) {
				t.Errorf("rediscovery = %v, want a failure naming %s", err, named)
			}
			if got := c.topo.Primaries()[0]; got != primary {
				t.Errorf("primary = %s, want %s kept", got.Addr, primary.Addr)
			}
			held.Release()
			if err := <-inFlight; err != nil && !errors.Is(err, ErrNil) {
				t.Errorf("the GET in flight on the kept primary = %v, want its reply", err)
			}
		})
	}
}

// TestSentinelConnectPassesOverStaleSentinel: Connect whose first
// sentinel names an unreachable primary, while the others name the
// reachable one, connects to the reachable primary.
func TestSentinelConnectPassesOverStaleSentinel(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	dead := deadAddr(t)
	r := namePrimary(t, pxs[0], dead)
	defer r.Remove()
	c := sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	if r.Applied() == 0 {
		t.Fatal("the stale sentinel was not asked")
	}
	if got, want := c.topo.Primaries()[0].Addr, sentinelPrimary(t); got != want {
		t.Errorf("primary = %s, want %s", got, want)
	}
	if err := c.Set(testCtx(t), keyPrefix(t)+"k", "v"); err != nil {
		t.Errorf("SET = %v", err)
	}
}

// TestClusterFanOutSkipsNodeWithoutSlots: a MOVED that named a node which
// then sent the slot back (a replica redirects to its primary) leaves
// that node serving no slot; until a refresh succeeds, commands for every
// primary do not reach it (its keys, a replica's, would be counted twice).
func TestClusterFanOutSkipsNodeWithoutSlots(t *testing.T) {
	c, proxies := proxiedClusterNodes(t, Options{}, true)
	ctx := testCtx(t)
	a := c.topo.Primaries()[0].Addr
	_, replicas := clusterRoles(t)
	r := replicas[0]
	k, slot := keyOn(t, c, a)
	for _, px := range proxies {
		rule := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always, Action: respiretest.Inject("ERR refresh refused by the test")})
		defer rule.Remove()
	}
	moved := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.Moved(slot, r))})
	defer moved.Remove()
	if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
		t.Fatalf("GET = %v", err)
	}
	if moved.Applied() != 1 || proxies[r].Forwarded("GET") != 1 {
		t.Fatalf("the GET was not redirected to %s and back", r)
	}
	before := proxies[r].Forwarded("DBSIZE")
	if _, err := c.DBSize(ctx); err != nil {
		t.Fatalf("DBSIZE = %v", err)
	}
	if got := proxies[r].Forwarded("DBSIZE") - before; got != 0 {
		t.Errorf("%s, which serves no slot, ran DBSIZE %d times for one call", r, got)
	}
	if got := addrs(c.topo.Primaries()); slices.Contains(got, r) {
		t.Errorf("Primaries() = %v, includes %s, which serves no slot", got, r)
	}
}

// TestClusterShardsDeniedFallsBackToSlots: a user whose ACL allows
// CLUSTER SLOTS but not CLUSTER SHARDS (rules written for older clients)
// still learns the slot map: NOPERM on CLUSTER SHARDS falls back to
// CLUSTER SLOTS, as an unknown subcommand does.
func TestClusterShardsDeniedFallsBackToSlots(t *testing.T) {
	c, proxies := proxiedClusterNodes(t, Options{}, true)
	ctx := testCtx(t)
	before := fmt.Sprint(addrs(c.topo.Primaries()))
	var slots int
	for _, px := range proxies {
		r := px.MustAddRule(t, respiretest.Rule{Command: "CLUSTER", Arg: "SHARDS", Times: respiretest.Always,
			Action: respiretest.Inject("NOPERM User respire has no permissions to run the 'cluster|shards' command")})
		defer r.Remove()
		slots -= px.Forwarded("CLUSTER")
	}
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatalf("refresh with CLUSTER SHARDS denied = %v", err)
	}
	for _, px := range proxies {
		slots += px.Forwarded("CLUSTER")
	}
	if slots < 1 {
		t.Errorf("no CLUSTER SLOTS reached a node")
	}
	if got := fmt.Sprint(addrs(c.topo.Primaries())); got != before {
		t.Errorf("primaries = %s, want %s", got, before)
	}
}

// TestReplicaPreferredReadsAvoidUnreachableReplica: under
// ReadReplicaPreferred, a replica the client cannot reach (its connection
// lost and its redial refused) no longer takes the reads while the
// primary can serve them; the client keeps redialing it in the
// background, and reads return to it once it answers again.
func TestReplicaPreferredReadsAvoidUnreachableReplica(t *testing.T) {
	replicaAddr := testenv.SentinelReplica(t)
	if sentinelPrimary(t) == replicaAddr {
		replicaAddr = testenv.SentinelPrimary(t)
	}
	px := realProxy(t, replicaAddr)
	c := sentinelClient(t, Options{ReadFrom: ReadReplicaPreferred,
		Dialer: rewriteDialer(map[string]string{replicaAddr: px.Addr()})})
	ctx := testCtx(t)
	k := keyPrefix(t) + "k"
	replica, _ := readReplica(t, c, -1)
	if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
		t.Fatalf("GET on the replica = %v", err)
	}
	// The replica's connection drops and its next two dials are refused.
	if err := px.RefuseDials(2); err != nil {
		t.Fatal(err)
	}
	drop := px.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward})
	defer drop.Remove()
	if _, err := c.Get(ctx, k); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("GET on the dropped replica connection = %v, want connection loss", err)
	}
	for !replica.EP.Down() {
		if ctx.Err() != nil {
			t.Fatal("the replica never became down")
		}
		runtime.Gosched() // the replacement dial is refused in the background
	}
	for i := range 3 {
		if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
			t.Errorf("GET %d with the replica unreachable = %v, want it served by the primary", i, err)
		}
	}
	for replica.EP.Current() == nil {
		if ctx.Err() != nil {
			t.Fatal("the replica was never redialed")
		}
		if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
			t.Fatalf("GET while the replica comes back = %v", err)
		}
		runtime.Gosched()
	}
	before := px.Forwarded("GET")
	if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
		t.Fatal(err)
	}
	if px.Forwarded("GET") != before+1 {
		t.Errorf("the read after the replica came back did not go to it")
	}
}

// TestPrimaryPreferredReadsReturnToPrimary: under ReadPrimaryPreferred, a
// read-only workload whose primary became unreachable reads from the
// replica, and returns to the primary once it answers again (the client
// redials it in the background; nothing else would, without writes).
func TestPrimaryPreferredReadsReturnToPrimary(t *testing.T) {
	primaryAddr := sentinelPrimary(t)
	px := realProxy(t, primaryAddr)
	c := sentinelClient(t, Options{ReadFrom: ReadPrimaryPreferred,
		Dialer: rewriteDialer(map[string]string{primaryAddr: px.Addr()})})
	ctx := testCtx(t)
	k := keyPrefix(t) + "k"
	primary := c.topo.Primaries()[0]
	if err := px.RefuseDials(2); err != nil {
		t.Fatal(err)
	}
	drop := px.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropBeforeForward})
	defer drop.Remove()
	if _, err := c.Get(ctx, k); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("GET on the dropped primary connection = %v, want connection loss", err)
	}
	for !primary.EP.Down() {
		if ctx.Err() != nil {
			t.Fatal("the primary never became down")
		}
		runtime.Gosched() // the replacement dial is refused in the background
	}
	if n := readNode(t, c, -1); !n.Replica {
		t.Fatalf("a read with the primary down goes to %s, want a replica", n.Addr)
	}
	for primary.EP.Current() == nil {
		if ctx.Err() != nil {
			t.Fatal("the primary was never redialed: reads stay on the replica")
		}
		if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
			t.Fatalf("GET while the primary comes back = %v", err)
		}
		runtime.Gosched()
	}
	if n := readNode(t, c, -1); n != primary {
		t.Errorf("a read after the primary came back goes to %s, want the primary", n.Addr)
	}
}

// TestSentinelKnownSentinelsFollowLatestAnswer: the sentinels the client
// learns from SENTINEL SENTINELS are those of the latest answer, and a
// bounded number of them: sentinels that left the group (a replaced pod's
// old address) and a sentinel that lists thousands of addresses do not
// make every later discovery walk a growing list of dead addresses.
func TestSentinelKnownSentinelsFollowLatestAnswer(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	c := sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	ctx := testCtx(t)
	s := c.topo.(*route.Sentinel)
	listing := func(n int) ([]string, respiretest.Action) {
		var learned []string
		var elems []resp.Value
		for range n {
			a := deadAddr(t)
			host, port, _ := net.SplitHostPort(a)
			learned = append(learned, a)
			elems = append(elems, resp.Value{Type: resp.Array, Elems: []resp.Value{
				bulk("ip"), bulk(host), bulk("port"), bulk(port), bulk("flags"), bulk("sentinel")}})
		}
		return learned, respiretest.Reply(encode(resp.Value{Type: resp.Array, Elems: elems}))
	}
	answer := func(action respiretest.Action) {
		t.Helper()
		var rules []*respiretest.RuleHandle
		for _, px := range pxs {
			rules = append(rules, px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always, Action: action}))
		}
		defer func() {
			for _, r := range rules {
				r.Remove()
			}
		}()
		if err := c.topo.Refresh(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	old, action := listing(3)
	answer(action)
	for _, a := range old {
		if !slices.Contains(s.Sentinels(), a) {
			t.Fatalf("sentinels = %v, want the listed %s among them", s.Sentinels(), a)
		}
	}
	current, action := listing(3)
	answer(action)
	for _, a := range current {
		if !slices.Contains(s.Sentinels(), a) {
			t.Errorf("sentinels = %v, want the listed %s among them", s.Sentinels(), a)
		}
	}
	for _, a := range old {
		if slices.Contains(s.Sentinels(), a) {
			t.Errorf("sentinels = %v, still hold %s, which the latest answer no longer lists", s.Sentinels(), a)
		}
	}
	for _, a := range addrs {
		if !slices.Contains(s.Sentinels(), a) {
			t.Errorf("sentinels = %v, want the configured %s kept", s.Sentinels(), a)
		}
	}
	_, action = listing(200)
	answer(action)
	if n := len(s.Sentinels()); n > len(addrs)+route.MaxLearnedSentinels {
		t.Errorf("%d sentinels known after an answer listing 200, want at most %d", n, len(addrs)+route.MaxLearnedSentinels)
	}
}

// TestSentinelConnectCancelledDuringDiscovery: a Connect whose context is
// cancelled while a sentinel has not answered fails with an error that
// matches context.Canceled and says so, instead of blaming the sentinel
// with the i/o timeout the cancellation caused.
func TestSentinelConnectCancelledDuringDiscovery(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	r := pxs[0].MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always, Action: respiretest.Hold})
	defer r.Release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs[:1]}})
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	<-r.Received()
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Connect = %v, want an error matching context.Canceled", err)
	}
	if err != nil && strings.Contains(err.Error(), "i/o timeout") {
		t.Errorf("Connect = %q, want no i/o timeout blamed on the sentinel", err)
	}
}

// TestSentinelWatchLeavesSentinelRefusingSubscribe: a sentinel that
// answers the +switch-master SUBSCRIBE with an error (an ACL without the
// channel) is not taken for a subscription: the watch subscribes on the
// next sentinel instead of listening forever to one that sends nothing.
func TestSentinelWatchLeavesSentinelRefusingSubscribe(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	arrived := make(chan int, 64)
	for i, px := range pxs {
		action := respiretest.Pass
		if i == 0 {
			action = respiretest.Inject("NOPERM User default has no permissions to access the '+switch-master' channel")
		}
		r := px.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always, Action: action,
			OnReceive: func([]string) {
				select { // never block the proxy (its Close waits for OnReceive)
				case arrived <- i:
				default:
				}
			}})
		defer r.Remove()
	}
	sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	for {
		select {
		case i := <-arrived:
			if i != 0 {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the watch still listens to the sentinel that refused the subscription")
		}
	}
}

// TestSentinelWatchSkipsADataServerAmongTheSentinels: a data server
// listed among the sentinel addresses accepts SUBSCRIBE +switch-master
// too, but never publishes on it. The watch asks each address for the
// primary first and subscribes only on a sentinel that names it, so it
// does not listen to that server for good (here the sentinels listed
// before it refuse the subscription, so the watch comes round to it).
func TestSentinelWatchSkipsADataServerAmongTheSentinels(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	for _, px := range pxs {
		r := px.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always,
			Action: respiretest.Inject("NOPERM User default has no permissions to access the '+switch-master' channel")})
		defer r.Remove()
	}
	data := realProxy(t, testenv.Standalone(t))
	asked := make(chan string, 64)
	for _, cmd := range []string{"SENTINEL", "SUBSCRIBE"} {
		r := data.MustAddRule(t, respiretest.Rule{Command: cmd, Times: respiretest.Always, Action: respiretest.Pass,
			OnReceive: func([]string) { asked <- cmd }})
		defer r.Remove()
	}
	sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t),
		Addrs: append(addrs, data.Addr())}})
	select {
	case cmd := <-asked:
		if cmd != "SENTINEL" {
			t.Fatalf("the watch sent %s to a data server before asking it for the primary", cmd)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch never came round to the data server")
	}
}

// TestSentinelMalformedPrimaryAddress: a sentinel that answers SENTINEL
// GET-MASTER-ADDR-BY-NAME with something other than a host and port (a
// wrong type, a wrong length, a port out of range) fails discovery with
// an error that names the query and what came back, not a Cluster
// topology; another sentinel that answers well is used instead.
func TestSentinelMalformedPrimaryAddress(t *testing.T) {
	for name, tc := range map[string]struct {
		v    resp.Value
		want string
	}{
		"Integer":    {resp.Value{Type: resp.Integer, Int: 5}, "answered an integer"},
		"Status":     {resp.Value{Type: resp.SimpleString, Str: []byte("OK")}, "answered a simple string"},
		"Empty":      {resp.Value{Type: resp.Array}, "answered an array of 0 elements"},
		"ThreeElems": {resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("127.0.0.1"), bulk("1"), bulk("x")}}, "answered an array of 3 elements"},
		"Nested":     {resp.Value{Type: resp.Array, Elems: []resp.Value{{Type: resp.Array}, bulk("6379")}}, `answered ":6379"`},
		"Port0":      {resp.Value{Type: resp.Array, Elems: []resp.Value{bulk("127.0.0.1"), bulk("0")}}, `answered "127.0.0.1:0"`},
	} {
		t.Run(name, func(t *testing.T) {
			pxs, addrs := proxiedSentinels(t)
			pxs[0].MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
				Action: respiretest.Reply(encode(tc.v))})
			ctx := testCtx(t)
			c, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs[:1]}})
			if c != nil {
				_ = c.Close()
			}
			if err == nil {
				t.Fatal("Connect through the malformed sentinel succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, "SENTINEL GET-MASTER-ADDR-BY-NAME "+tc.want) || strings.Contains(msg, "cluster") {
				t.Errorf("Connect = %q, want it to say SENTINEL GET-MASTER-ADDR-BY-NAME %s (and no cluster topology)", msg, tc.want)
			}
			c = sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
			if got, want := c.topo.Primaries()[0].Addr, sentinelPrimary(t); got != want {
				t.Errorf("primary = %s, want %s from the next sentinel", got, want)
			}
		})
	}
}

// TestSentinelWatchSkipsSentinelNamingNoAddress: a sentinel whose SENTINEL
// GET-MASTER-ADDR-BY-NAME answer is not an address (here an integer) does
// not name the primary, so the watch does not subscribe there either, as
// discovery passes it over (here the other sentinels refuse the
// subscription, so the watch comes round to it, then back to them).
func TestSentinelWatchSkipsSentinelNamingNoAddress(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	pxs[0].MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Integer, Int: 1}))})
	subscribed := make(chan int, 64)
	for i, px := range pxs {
		// Only the configured sentinels, so the watch comes round to
		// the first one instead of subscribing on a learnt one.
		px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always,
			Action: respiretest.Reply(encode(resp.Value{Type: resp.Array}))})
		action := respiretest.Inject("NOPERM User default has no permissions to access the '+switch-master' channel")
		if i == 0 {
			action = respiretest.Pass
		}
		px.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always, Action: action,
			OnReceive: func([]string) {
				select { // never block the proxy (its Close waits for OnReceive)
				case subscribed <- i:
				default:
				}
			}})
	}
	sentinelClient(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: addrs}})
	rounds := map[int]int{}
	for {
		select {
		case i := <-subscribed:
			if i == 0 {
				t.Fatal("the watch subscribed on the sentinel that named no address")
			}
			if rounds[i]++; rounds[i] == 2 {
				return // a whole round went by without subscribing there
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not come round the sentinels")
		}
	}
}

// discoveryLog is a slog.Handler that signals every "topology discovered"
// record of a changed topology (an installed discovery that changed it).
type discoveryLog chan struct{}

func (h discoveryLog) Enabled(context.Context, slog.Level) bool { return true }
func (h discoveryLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h discoveryLog) WithGroup(string) slog.Handler            { return h }
func (h discoveryLog) Handle(_ context.Context, r slog.Record) error {
	changed := false
	r.Attrs(func(a slog.Attr) bool {
		changed = changed || a.Key == "changed" && a.Value.Bool()
		return true
	})
	if r.Message == "respire: topology discovered" && changed {
		select {
		case h <- struct{}{}:
		default:
		}
	}
	return nil
}

// TestSentinelSwitchMessageAsksItsSentinelFirst: the rediscovery that a
// +switch-master message starts asks the sentinel that published it
// first. Another sentinel that answered last may not have switched yet
// (sentinels switch up to ~0.1 s apart): asked first, it names the old
// primary, still reachable, and the client stays there after the message.
func TestSentinelSwitchMessageAsksItsSentinelFirst(t *testing.T) {
	pxs, addrs := proxiedSentinels(t)
	primary := sentinelPrimary(t)
	old := testenv.Standalone(t) // a reachable master that is not the group's primary
	// The first sentinel has not switched: it names the old primary, and
	// refuses the subscription, so the watch subscribes on the second.
	namePrimary(t, pxs[0], old)
	pxs[0].MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always,
		Action: respiretest.Inject("NOPERM User default has no permissions to access the '+switch-master' channel")})
	// The second (a fake sentinel) has switched, and publishes it.
	fake := respiretest.NewServer(t)
	namePrimary(t, fake.Proxy, primary)
	for _, sub := range []string{"REPLICAS", "SENTINELS"} {
		fake.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: sub, Times: respiretest.Always,
			Action: respiretest.Reply(encode(resp.Value{Type: resp.Array}))})
	}
	subscribed := fake.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always, Action: respiretest.Pass})
	installs := make(discoveryLog, 1)
	c := sentinelClient(t, Options{Logger: slog.New(installs),
		Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: []string{addrs[0], fake.Addr()}}})
	if got := c.topo.Primaries()[0].Addr; got != old {
		t.Fatalf("primary at Connect = %s, want %s from the first sentinel", got, old)
	}
	<-subscribed.Received()
	<-installs // Connect's discovery (a resynchronisation changes nothing)
	oldHost, oldPort, _ := net.SplitHostPort(old)
	newHost, newPort, _ := net.SplitHostPort(primary)
	// The subscription may not be registered the moment SUBSCRIBE arrives.
	for fake.Engine().Publish("+switch-master", strings.Join([]string{testenv.SentinelMaster(t), oldHost, oldPort, newHost, newPort}, " ")) == 0 {
		runtime.Gosched()
	}
	select {
	case <-installs:
	case <-time.After(10 * time.Second):
		t.Fatalf("the primary is still %s after the +switch-master message, want %s from the sentinel that published it", c.topo.Primaries()[0].Addr, primary)
	}
	if got := c.topo.Primaries()[0].Addr; got != primary {
		t.Errorf("primary after the +switch-master message = %s, want %s", got, primary)
	}
}

// TestSentinelWrongRoleErrorNamesTheServer: a Connect whose sentinel
// names a primary that is not one (a stale sentinel naming a replica)
// fails with an error that names that server, so that the caller can
// tell which address the sentinel gave, and with its role clipped when
// the server sends an absurdly long one.
func TestSentinelWrongRoleErrorNamesTheServer(t *testing.T) {
	for name, role := range map[string]string{"Replica": "slave", "LongRole": strings.Repeat("r", 10000)} {
		t.Run(name, func(t *testing.T) {
			data := roleServer(t, role)
			sentinel, _ := fakeSentinel(t, data.Addr(), nil)
			c, err := Connect(testCtx(t), Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}}})
			if c != nil {
				_ = c.Close()
				t.Fatal("Connect to a primary whose ROLE is not master succeeded")
			}
			if !strings.Contains(err.Error(), data.Addr()) {
				t.Errorf("Connect = %q, want it to name %s, whose ROLE is not master", err, data.Addr())
			}
			if len(err.Error()) > 1000 {
				t.Errorf("Connect error of %d bytes, want the server's role clipped", len(err.Error()))
			}
		})
	}
}

// roleServer returns a test server that answers ROLE with role (and,
// for any role, the fields of a replica's answer).
func roleServer(t *testing.T, role string) *respiretest.Server {
	t.Helper()
	return answersRole(t, role, "127.0.0.1", 6379)
}

// replicaServer returns a test server that answers ROLE as a replica of
// the server at primary, with its link up.
func replicaServer(t *testing.T, primary string) *respiretest.Server {
	t.Helper()
	host, port, err := net.SplitHostPort(primary)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return answersRole(t, "slave", host, int64(n))
}

// answersRole returns a test server that answers ROLE with role and the
// fields of a replica's answer: a link up to host:port.
func answersRole(t *testing.T, role, host string, port int64) *respiretest.Server {
	t.Helper()
	s := respiretest.NewServer(t)
	s.MustAddRule(t, respiretest.Rule{Command: "ROLE", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk(role), bulk(host), {Type: resp.Integer, Int: port}, bulk("connected"), {Type: resp.Integer, Int: 0}}}))})
	return s
}

// fakeSentinel returns a test server that answers as a sentinel that
// names primary, lists replicas (until the returned rule is removed) and
// no other sentinel.
func fakeSentinel(t *testing.T, primary string, replicas []string) (*respiretest.Server, *respiretest.RuleHandle) {
	t.Helper()
	s := respiretest.NewServer(t)
	namePrimary(t, s.Proxy, primary)
	r := s.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always,
		Action: replicasReply(replicas)})
	s.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Array}))})
	return s, r
}

// replicasReply is a SENTINEL REPLICAS answer listing addrs, each healthy.
func replicasReply(addrs []string) respiretest.Action {
	var elems []resp.Value
	for _, a := range addrs {
		host, port, _ := net.SplitHostPort(a)
		elems = append(elems, resp.Value{Type: resp.Array, Elems: []resp.Value{
			bulk("ip"), bulk(host), bulk("port"), bulk(port), bulk("flags"), bulk("slave"), bulk("master-link-status"), bulk("ok")}})
	}
	return respiretest.Reply(encode(resp.Value{Type: resp.Array, Elems: elems}))
}

// installLog is a slog.Handler that signals every "topology discovered"
// record whose summary contains want.
type installLog struct {
	want string
	c    chan struct{}
}

func (h installLog) Enabled(context.Context, slog.Level) bool { return true }
func (h installLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h installLog) WithGroup(string) slog.Handler            { return h }
func (h installLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "topology" && strings.Contains(a.Value.String(), h.want) {
			select {
			case h.c <- struct{}{}:
			default:
			}
		}
		return true
	})
	return nil
}

// TestSentinelReadWithoutReplicaAsksForRediscovery: under ReadReplica and
// ReadReplicaPreferred, a read that finds no replica in the latest
// discovery (the group's only replica was resynchronising then, or came
// back after a failover) asks for a rediscovery, as a lost primary does,
// so that reads reach the replica once the sentinels list it again
// instead of failing (or reading from the primary) until the periodic
// rediscovery, up to 30 s later.
func TestSentinelReadWithoutReplicaAsksForRediscovery(t *testing.T) {
	for name, policy := range map[string]ReadPolicy{"ReadReplica": ReadReplica, "ReadReplicaPreferred": ReadReplicaPreferred} {
		t.Run(name, func(t *testing.T) {
			primary := roleServer(t, "master")
			replica := replicaServer(t, primary.Addr())
			sentinel, none := fakeSentinel(t, primary.Addr(), nil)
			installed := installLog{want: ", 1 replicas", c: make(chan struct{}, 1)}
			ctx := testCtx(t)
			c, err := Connect(ctx, Options{ReadFrom: policy, Logger: slog.New(installed),
				Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The sentinel lists the replica now; nothing asks it again but
			// the read that finds none.
			none.Remove()
			sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always,
				Action: replicasReply([]string{replica.Addr()})})
			k := keyPrefix(t) + "k"
			_, err = c.Get(ctx, k)
			if policy == ReadReplica && !errors.Is(err, ErrNoRoute) {
				t.Fatalf("GET with no replica known = %v, want ErrNoRoute", err)
			}
			if policy == ReadReplicaPreferred && ((err != nil && !errors.Is(err, ErrNil)) || primary.Forwarded("GET") != 1) {
				t.Fatalf("GET with no replica known = %v, %d on the primary; want it served by the primary", err, primary.Forwarded("GET"))
			}
			select {
			case <-installed.c:
			case <-time.After(10 * time.Second):
				t.Fatal("no rediscovery after reads that found no replica: the replica the sentinel lists now stays unknown")
			}
			if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
				t.Fatalf("GET after the rediscovery = %v", err)
			}
			if got := replica.Forwarded("GET"); got != 1 {
				t.Errorf("the replica served %d GETs, want 1", got)
			}
		})
	}
}

// readOnReplica connects a ReadReplica client through the fake sentinel
// and checks that a GET of its key k runs on replica, once. The client
// closes when the test ends.
func readOnReplica(t *testing.T, sentinel, replica *respiretest.Server) (c *Client, ctx context.Context, k string) {
	t.Helper()
	ctx = testCtx(t)
	c, err := Connect(ctx, Options{ReadFrom: ReadReplica,
		Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	k = keyPrefix(t) + "k"
	if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
		t.Fatalf("GET = %v", err)
	}
	if got := replica.Forwarded("GET"); got != 1 {
		t.Fatalf("the replica served %d GETs, want 1", got)
	}
	return c, ctx, k
}

// TestSentinelLostReplicaAsksForRediscovery: under ReadReplica, a replica
// whose connection is lost (it stopped; the group replaced it with one at
// another address) asks for a rediscovery, as a lost primary does: reads
// reach the replica the sentinels list now, instead of failing on the
// lost one until the periodic rediscovery, up to 30 s later.
func TestSentinelLostReplicaAsksForRediscovery(t *testing.T) {
	primary := roleServer(t, "master")
	gone, next := replicaServer(t, primary.Addr()), replicaServer(t, primary.Addr())
	sentinel, listed := fakeSentinel(t, primary.Addr(), []string{gone.Addr()})
	c, ctx, k := readOnReplica(t, sentinel, gone)
	listed.Remove()
	asked := sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always,
		Action: replicasReply([]string{next.Addr()})})
	gone.Close()
	select {
	case <-asked.Received():
	case <-time.After(10 * time.Second):
		t.Fatal("no rediscovery after the replica's connection was lost: the replica the sentinel lists now stays unknown")
	}
	// That rediscovery has asked; one more makes sure it has installed.
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, k); err != nil && !errors.Is(err, ErrNil) {
		t.Fatalf("GET after the rediscovery = %v", err)
	}
	if got := next.Forwarded("GET"); got != 1 {
		t.Errorf("the new replica served %d GETs, want 1", got)
	}
}

// TestSentinelReadOnlyOnOwnConnectionAsksForRediscovery: a READONLY reply
// (the primary was demoted) on a path that returns the reply instead of
// routing it (a command on a dedicated connection, a blocking command, a
// write queued in a Watch transaction) asks for a rediscovery, as it does for a command on the shared
// connection, so that the next call reaches the promoted primary.
func TestSentinelReadOnlyOnOwnConnectionAsksForRediscovery(t *testing.T) {
	for name, call := range map[string]func(ctx context.Context, c *Client, k string) error{
		"Dedicated": func(ctx context.Context, c *Client, k string) error {
			return c.Dedicated(ctx, func(conn *Conn) error { _, err := conn.Do(ctx, NewCommand("SET"), k, "v"); return err })
		},
		"Blocking": func(ctx context.Context, c *Client, k string) error {
			_, err := c.BLMove(ctx, k, k+"-to", ListLeft, ListRight, time.Second)
			return err
		},
		"Watch": func(ctx context.Context, c *Client, k string) error {
			return c.Watch(ctx, func(tx *Tx) error { tx.Queue().Set(k, "v"); return nil }, k)
		},
	} {
		t.Run(name, func(t *testing.T) {
			primary := roleServer(t, "master")
			for _, cmd := range []string{"SET", "BLMOVE"} {
				primary.MustAddRule(t, respiretest.Rule{Command: cmd, Times: respiretest.Always, Action: respiretest.Inject(respiretest.ErrReadOnly)})
			}
			sentinel, _ := fakeSentinel(t, primary.Addr(), nil)
			ctx := testCtx(t)
			c, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Only a discovery asks for the replicas (the watch asks for
			// the primary too).
			asked := sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always, Action: respiretest.Pass})
			var se *ServerError
			if err := call(ctx, c, keyPrefix(t)+"k"); !errors.As(err, &se) || !se.IsReadOnly() {
				t.Fatalf("call = %v, want the READONLY reply", err)
			}
			select {
			case <-asked.Received():
			case <-time.After(10 * time.Second):
				t.Fatal("no rediscovery after the READONLY reply")
			}
		})
	}
}

// TestSentinelPasswordsKeptApart: the sentinels and the data servers may
// have different passwords: each server gets its own (over RESP2's AUTH
// and RESP3's HELLO), and a rejection of either names neither password,
// in the error or in the client's log.
func TestSentinelPasswordsKeptApart(t *testing.T) {
	const sentinelPW, dataPW = "Hunter2-sentinel", "Hunter2-data"
	primary := roleServer(t, "master")
	primary.Engine().RequireAuth(dataPW)
	sentinel, _ := fakeSentinel(t, primary.Addr(), nil)
	sentinel.Engine().RequireAuth(sentinelPW)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := testCtx(t)
	for _, proto := range []int{2, 3} {
		for name, pw := range map[string][2]string{"Right": {sentinelPW, dataPW}, "Swapped": {dataPW, sentinelPW},
			"WrongSentinel": {"x", dataPW}, "WrongData": {sentinelPW, "x"}} {
			t.Run(name+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				c, err := Connect(ctx, Options{Protocol: proto, Password: pw[1], Logger: logger,
					Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{sentinel.Addr()}, Password: pw[0]}})
				if name == "Right" {
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					if err := c.Set(ctx, keyPrefix(t)+"k", "v"); err != nil {
						t.Errorf("SET = %v", err)
					}
					return
				}
				wantAuthRejection(t, c, err)
				if strings.Contains(err.Error(), "Hunter2") {
					t.Errorf("Connect = %q, names a password", err)
				}
			})
		}
	}
	if strings.Contains(log.String(), "Hunter2") {
		t.Errorf("the log names a password:\n%s", log.String())
	}
}

// wantAuthRejection fails t unless Connect's c and err are those of a
// rejected handshake: no client, and a *ServerError that IsAuth.
func wantAuthRejection(t *testing.T, c *Client, err error) {
	t.Helper()
	if err == nil {
		_ = c.Close()
		t.Fatal("Connect with wrong credentials succeeded")
	}
	var se *ServerError
	if !errors.As(err, &se) || !se.IsAuth() {
		t.Errorf("Connect = %v, want a *ServerError that IsAuth", err)
	}
}
