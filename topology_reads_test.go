package respire

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// readNode returns the node a read of slot goes to under the client's
// read policy.
func readNode(t *testing.T, c *Client, slot int) *route.Node {
	t.Helper()
	return pickNode(t, c, slot, true)
}

// slotPrimary returns the primary of slot (any primary for -1).
func slotPrimary(t *testing.T, c *Client, slot int) *route.Node {
	t.Helper()
	return pickNode(t, c, slot, false)
}

func pickNode(t *testing.T, c *Client, slot int, read bool) *route.Node {
	t.Helper()
	n, err := c.topo.Pick(slot, read)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readReplica returns the replica a read of slot goes to under the
// client's replica read policy, and the slot's primary; the test fails
// unless they are two nodes.
func readReplica(t *testing.T, c *Client, slot int) (replica, primary *route.Node) {
	t.Helper()
	replica, primary = readNode(t, c, slot), slotPrimary(t, c, slot)
	if !replica.Replica || replica.Addr == primary.Addr {
		t.Fatalf("the read node %s of slot %d is not a replica", replica.Addr, slot)
	}
	return replica, primary
}

// TestReadFromReplica: under ReadReplica, read-only commands go to a
// replica (READONLY on Cluster replica connections), writes to the
// primary; the replica's own commandstats witness where each ran.
func TestReadFromReplica(t *testing.T) {
	countsCommands(t)
	replicaTopologies(t, Options{ReadFrom: ReadReplica}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "k"
		replica, primary := readReplica(t, c, route.Slot(k))
		bcSeedReplicated(t, c, k, "v") // on the replica before the reads
		getsBefore := commandCalls(t, replica.Addr, "get")
		primaryGets := commandCalls(t, primary.Addr, "get")
		for range 5 {
			if v, err := c.Get(ctx, k); err != nil || v != "v" {
				t.Fatalf("GET = %q, %v", v, err)
			}
		}
		if got := commandCalls(t, replica.Addr, "get") - getsBefore; got != 5 {
			t.Errorf("the replica ran GET %d times, want 5", got)
		}
		if got := commandCalls(t, primary.Addr, "get") - primaryGets; got != 0 {
			t.Errorf("the primary ran GET %d times, want 0", got)
		}
	})
}

// TestReplicaReadsAreNeverRetried: a read a replica served is not resent,
// even when the policy would resend it on the primary.
func TestReplicaReadsAreNeverRetried(t *testing.T) {
	countsCommands(t)
	replicaAddr := testenv.SentinelReplica(t)
	if sentinelPrimary(t) == replicaAddr {
		replicaAddr = testenv.SentinelPrimary(t)
	}
	px := realProxy(t, replicaAddr)
	c := sentinelClient(t, Options{
		ReadFrom:    ReadReplica,
		Dialer:      rewriteDialer(map[string]string{replicaAddr: px.Addr()}),
		RetryPolicy: &RetryPolicy{MaxAttempts: 3, InitialBackoff: NoBackoff},
	})
	ctx := testCtx(t)
	k := keyPrefix(t) + "k"
	rule := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
	defer rule.Remove()
	before := commandCalls(t, replicaAddr, "getrange")
	_, err := c.Do(ctx, NewCommand("GETRANGE").WithRetryCategory(ReadOnly), k, "0", "-1")
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("err = %v, want the lost reply", err)
	}
	var re *RetryError
	if errors.As(err, &re) {
		t.Errorf("err = %v: a replica read was retried", err)
	}
	if got := commandCalls(t, replicaAddr, "getrange") - before; got != 1 {
		t.Errorf("the replica ran GETRANGE %d times, want 1", got)
	}
}

// TestSentinelReplicaMustFollowThePrimary: a replica the sentinels list
// serves ReadReplica reads only while its ROLE says it follows the
// current primary with its link up. A proxy in front of the real replica
// answers ROLE for it; the replica's commandstats witness whether the
// reads ran there. The first case, the replica following the primary, is
// the control that the proxied replica does serve reads.
func TestSentinelReplicaMustFollowThePrimary(t *testing.T) {
	countsCommands(t)
	primary := sentinelPrimary(t)
	replicaAddr := testenv.SentinelReplica(t)
	if primary == replicaAddr {
		replicaAddr = testenv.SentinelPrimary(t)
	}
	host, port, err := net.SplitHostPort(primary)
	if err != nil {
		t.Fatal(err)
	}
	pport, _ := strconv.Atoi(port)
	role := func(host string, port int, state string) []byte {
		b := resp.AppendArrayHeader(nil, 5)
		b = resp.AppendBulkString(b, "slave")
		b = resp.AppendBulkString(b, host)
		b = resp.AppendInteger(b, int64(port))
		b = resp.AppendBulkString(b, state)
		return resp.AppendInteger(b, 1)
	}
	tests := []struct {
		name   string
		role   []byte
		served bool
	}{
		{"FollowsThePrimary", role(host, pport, "connected"), true},
		{"FollowsAnotherPort", role(host, 1, "connected"), false},
		{"FollowsAnotherHost", role("127.0.0.2", pport, "connected"), false},
		{"LinkConnect", role(host, pport, "connect"), false},
		{"LinkConnecting", role(host, pport, "connecting"), false},
		{"LinkSync", role(host, pport, "sync"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := realProxy(t, replicaAddr)
			px.MustAddRule(t, respiretest.Rule{Command: "ROLE", Action: respiretest.Reply(tt.role)})
			c := sentinelClient(t, Options{ReadFrom: ReadReplica, Dialer: rewriteDialer(map[string]string{replicaAddr: px.Addr()})})
			ctx := testCtx(t)
			before := commandCalls(t, replicaAddr, "strlen")
			_, err := c.StrLen(ctx, keyPrefix(t)+"k")
			ran := commandCalls(t, replicaAddr, "strlen") - before
			if tt.served {
				if err != nil || ran != 1 {
					t.Fatalf("STRLEN = %v, ran %d times on the replica, want served there once", err, ran)
				}
				return
			}
			if err == nil || ran != 0 {
				t.Errorf("STRLEN = %v, ran %d times on the replica, want refused before it is sent", err, ran)
			}
			if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "want a replica of "+primary) {
				t.Errorf("err = %v, want a lost connection naming the primary the replica must follow", err)
			}
		})
	}
}

// TestSentinelNewPrimaryRechecksReplicaConnections: a connection to a
// replica was checked against the primary of its time; when the sentinels
// name another primary, the replica serves reads again only through a new
// connection whose ROLE follows the new one. Here the replica still
// follows the old primary, so it serves nothing more.
func TestSentinelNewPrimaryRechecksReplicaConnections(t *testing.T) {
	oldPrimary, newPrimary := roleServer(t, "master"), roleServer(t, "master")
	replica := replicaServer(t, oldPrimary.Addr())
	sentinel := respiretest.NewServer(t)
	named := namePrimary(t, sentinel.Proxy, oldPrimary.Addr())
	sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always,
		Action: replicasReply([]string{replica.Addr()})})
	sentinel.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always,
		Action: respiretest.Reply(encode(resp.Value{Type: resp.Array}))})
	c, ctx, k := readOnReplica(t, sentinel, replica)
	named.Remove()
	namePrimary(t, sentinel.Proxy, newPrimary.Addr())
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	if p := c.topo.Primaries()[0].Addr; p != newPrimary.Addr() {
		t.Fatalf("primary %s after the refresh, want %s", p, newPrimary.Addr())
	}
	_, err := c.Get(ctx, k)
	if got := replica.Forwarded("GET"); got != 1 || !errors.Is(err, ErrConnectionLost) {
		t.Errorf("GET = %v, the replica served %d GETs; want it refused (1 GET, the first)", err, got)
	}
}

// TestTopologyPubSub: subscriptions work on every topology; on a Cluster,
// shard channels of one subscription share a slot, and a subscription
// follows its slot when the slot moves (the server's SUNSUBSCRIBE starts a
// reconnection to the new owner, reported as a Gap).
func TestTopologyPubSub(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		ch := keyPrefix(t) + "ch"
		sub, err := c.Subscribe(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if n, err := c.Publish(ctx, ch, "hello"); err != nil || n != 1 {
			t.Fatalf("PUBLISH = %d, %v", n, err)
		}
		if m := <-sub.Channel(); m.Channel != ch || m.Payload != "hello" {
			t.Fatalf("message = %+v", m)
		}
	})
	t.Run("ClusterShard", func(t *testing.T) {
		testenv.UseTopology(t, true)
		c := clusterClient(t, Options{})
		ctx := testCtx(t)
		p := keyPrefix(t)
		a, b := p+"{s}a", p+"x"
		if route.Slot(a) == route.Slot(b) {
			t.Fatal("test channels share a slot")
		}
		if _, err := c.SSubscribe(ctx, a, b); !errors.Is(err, ErrCrossSlot) {
			t.Fatalf("SSUBSCRIBE across slots = %v, want ErrCrossSlot", err)
		}
		sub, err := c.SSubscribe(ctx, a, p+"{s}b")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if err := sub.SSubscribe(ctx, b); !errors.Is(err, ErrCrossSlot) {
			t.Errorf("adding a channel of another slot = %v, want ErrCrossSlot", err)
		}
		if n, err := c.SPublish(ctx, a, "one"); err != nil || n != 1 {
			t.Fatalf("SPUBLISH = %d, %v", n, err)
		}
		if m := <-sub.Channel(); m.Payload != "one" || !m.Shard {
			t.Fatalf("message = %+v", m)
		}
		// Move the slot to another primary and back.
		ids := clusterNodeIDs(t)
		slot := route.Slot(a)
		src, _ := c.topo.Pick(slot, false)
		var dst string
		for _, n := range c.topo.Primaries() {
			if n != src {
				dst = n.Addr
			}
		}
		t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
		migrateSlot(t, slot, src.Addr, dst, ids)
		select {
		case m := <-sub.Channel():
			if !m.Gap || m.Err == nil || !strings.Contains(m.Err.Error(), "slot moved") {
				t.Fatalf("after the slot moved: %+v, want a Gap that says so", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no Gap after the slot moved")
		}
		// The reconnected subscription is on the new owner.
		eventually(t, 10*time.Second, "the shard channel to be served by "+dst, func() bool {
			n, err := c.SPublish(ctx, a, "two")
			return err == nil && n == 1
		})
		for m := range sub.Channel() {
			if m.Payload == "two" {
				break
			}
			if m.Gap {
				continue
			}
			t.Fatalf("unexpected %+v", m)
		}
	})
}

// TestRetryMetricsPerTopology: Sentinel counts the resends the transport
// accepted, as standalone does; Cluster counts the resends it started on
// a node, even when the node then refused the connection.
func TestRetryMetricsPerTopology(t *testing.T) {
	policy := &RetryPolicy{MaxAttempts: 2, InitialBackoff: NoBackoff}
	metricsOpts := func(t *testing.T) (Options, *sdkmetric.ManualReader) {
		return withRetryMetrics(t, Options{RetryPolicy: policy})
	}
	run := func(t *testing.T, c *Client, px *respiretest.Proxy, k string) {
		// The reply is lost and every later dial is refused: the resend
		// never reaches the server.
		rule := px.MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
		defer rule.Remove()
		if err := px.RefuseDials(100); err != nil {
			t.Fatal(err)
		}
		defer px.RefuseDials(0)
		_, err := c.Do(testCtx(t), NewCommand("GETRANGE").WithRetryCategory(ReadOnly), k, "0", "-1")
		retryWantAttempts(t, err, 2)
	}
	t.Run("Sentinel", func(t *testing.T) {
		opts, reader := metricsOpts(t)
		primary := sentinelPrimary(t)
		px := realProxy(t, primary)
		opts.Dialer = rewriteDialer(map[string]string{primary: px.Addr()})
		c := sentinelClient(t, opts)
		run(t, c, px, keyPrefix(t)+"k")
		if got := retryCollect(t, reader); !got.equal(retryCounts{}) {
			t.Errorf("counts = %v, want none: no resend was accepted", got)
		}
	})
	t.Run("Cluster", func(t *testing.T) {
		opts, reader := metricsOpts(t)
		c, proxies := proxiedCluster(t, opts)
		k := keyPrefix(t) + "k"
		owner, _ := c.topo.Pick(route.Slot(k), false)
		run(t, c, proxies[owner.Addr], k)
		want := retryCounts{"read_only/attempted": 1, "read_only/exhausted": 1}
		if got := retryCollect(t, reader); !got.equal(want) {
			t.Errorf("counts = %v, want %v (a started resend)", got, want)
		}
	})
}

// TestTopologyLifetime: one deadline bounds an attempt's redirects, and a
// caller cancelled while the client rediscovers the Sentinel primary (after
// READONLY) gets its cancellation and nothing more is sent.
func TestTopologyLifetime(t *testing.T) {
	t.Run("DeadlineBoundsRedirects", func(t *testing.T) {
		c, proxies := proxiedCluster(t, Options{Cluster: &ClusterOptions{MaxRedirects: 100}})
		k := keyPrefix(t) + "k"
		owner, _ := c.topo.Pick(route.Slot(k), false)
		px := proxies[owner.Addr]
		slow := make(chan struct{})
		rule := px.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always,
			Action: respiretest.Inject(respiretest.Moved(route.Slot(k), owner.Addr)),
			OnReceive: func([]string) {
				select { // each redirect takes 20 ms: a slow server
				case <-slow:
				case <-time.After(20 * time.Millisecond):
				}
			}})
		defer rule.Remove()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Get(ctx, k)
		close(slow)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		if n := rule.Applied(); n >= 100 {
			t.Errorf("%d redirects followed: the deadline did not bound them", n)
		}
	})
	t.Run("CancelDuringRediscovery", func(t *testing.T) {
		primary := sentinelPrimary(t)
		via := map[string]string{}
		pxPrimary := realProxy(t, primary)
		via[primary] = pxPrimary.Addr()
		var sentinelProxies []*respiretest.Proxy
		for _, s := range testenv.SentinelAddrs(t) {
			px := realProxy(t, s)
			via[s] = px.Addr()
			sentinelProxies = append(sentinelProxies, px)
		}
		c := sentinelClient(t, Options{Dialer: rewriteDialer(via), RetryPolicy: &RetryPolicy{MaxAttempts: 5}})
		k := keyPrefix(t) + "k"
		var holds []*respiretest.RuleHandle
		for _, px := range sentinelProxies {
			h := px.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always, Action: respiretest.Hold})
			holds = append(holds, h)
			defer h.Remove()
		}
		ro := pxPrimary.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrReadOnly)})
		defer ro.Remove()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := c.Get(ctx, k); done <- err }()
		// The READONLY reply made the client ask a sentinel: cancel then.
		// (A background discovery may have reached a sentinel first, so
		// the GET's arrival is awaited on its own.)
		select {
		case <-ro.Received():
		case <-time.After(5 * time.Second):
			t.Fatal("the GET never reached the primary")
		}
		select {
		case <-holds[0].Received():
		case <-holds[1].Received():
		case <-holds[2].Received():
		case <-time.After(5 * time.Second):
			t.Fatal("no rediscovery after READONLY")
		}
		cancel()
		err := <-done
		for _, h := range holds {
			h.Release()
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want the caller's cancellation", err)
		}
		if got := pxPrimary.Forwarded("GET") + ro.Applied(); got != 1 {
			t.Errorf("the primary received %d GETs, want 1: nothing is sent after the cancellation", got)
		}
	})
}
