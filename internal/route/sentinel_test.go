package route

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestSentinelInstallBoundsReplicas: the replicas a sentinel lists are
// installed once each, without the primary, and at most MaxReplicas of
// them: a sentinel that lists thousands (or one address many times)
// neither makes a node per entry nor weighs one replica over the others
// in replica reads.
func TestSentinelInstallBoundsReplicas(t *testing.T) {
	cfg := addrConfig()
	s := &Sentinel{nodes: newNodes(cfg, nil)}
	defer func() { _ = s.nodes.close() }()
	const primary = "127.0.0.1:1"
	replicas := []string{primary, "127.0.0.1:2", "127.0.0.1:2", "127.0.0.1:3"}
	for p := 10; p < 10+2*MaxReplicas; p++ {
		replicas = append(replicas, "127.0.0.1:"+strconv.Itoa(p))
	}
	if err := s.install(primary, replicas); err != nil {
		t.Fatal(err)
	}
	got := s.snap.Load().replicas
	if len(got) != MaxReplicas {
		t.Errorf("%d replicas installed, want MaxReplicas (%d)", len(got), MaxReplicas)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if n.Addr == primary || seen[n.Addr] {
			t.Errorf("replica %s installed twice or as the primary", n.Addr)
		}
		seen[n.Addr] = true
	}
	if !seen["127.0.0.1:2"] || !seen["127.0.0.1:3"] {
		t.Errorf("the first replicas listed were not kept: %v", seen)
	}
}

// fakeSentinel is a sentinel that names primary for every name and lists
// no replica and no other sentinel; onAsk, when set, runs (and may block)
// before each SENTINEL GET-MASTER-ADDR-BY-NAME is answered.
func fakeSentinel(t *testing.T, primary string, onAsk func([]string)) *respiretest.Server {
	t.Helper()
	s := respiretest.NewServer(t)
	host, port, _ := net.SplitHostPort(primary)
	addr := resp.AppendArrayHeader(nil, 2)
	addr = resp.AppendBulkString(addr, host)
	addr = resp.AppendBulkString(addr, port)
	s.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
		Action: respiretest.Reply(addr), OnReceive: onAsk})
	for _, sub := range []string{"REPLICAS", "SENTINELS"} {
		s.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: sub, Times: respiretest.Always,
			Action: respiretest.Reply(resp.AppendArrayHeader(nil, 0))})
	}
	return s
}

// TestSentinelSwitchMessageOutlivesDiscoveryInFlight: a +switch-master
// message that arrives while a rediscovery is asking another sentinel
// (which has not switched yet, and names the old primary) still makes the
// next rediscovery ask the sentinel that published it first: the answer
// of the discovery in flight, older than the message, does not put its
// stale sentinel first again, which would keep the client on the old
// primary after the message.
func TestSentinelSwitchMessageOutlivesDiscoveryInFlight(t *testing.T) {
	// Both primaries answer ROLE master: the switch verifies.
	oldPrimary, newPrimary := fakeRole(t, "master").Addr(), fakeRole(t, "master").Addr()
	var hold atomic.Bool
	asked, release := make(chan struct{}), make(chan struct{})
	stale := fakeSentinel(t, oldPrimary, func([]string) {
		if hold.CompareAndSwap(true, false) {
			close(asked)
			<-release
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release) // never leave the fake sentinel blocked
		}
	}()
	switched := fakeSentinel(t, newPrimary, nil)
	s := &Sentinel{
		cfg: SentinelConfig{Name: "m", Addrs: []string{stale.Addr(), switched.Addr()}, QueryTimeout: 10 * time.Second,
			Conn: func(addr string) wire.Config { return wire.Config{Addr: addr} }},
		sentinels: []string{stale.Addr(), switched.Addr()},
		nodes:     newNodes(addrConfig(), nil),
	}
	defer func() { _ = s.nodes.close() }()
	s.ref = newRefresher(s.discover, 0, minSentinelRefreshGap) // never started: requests only kick
	ctx := context.Background()
	if err := s.discover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.snap.Load().primary.Addr; got != oldPrimary {
		t.Fatalf("primary = %s, want %s from the first sentinel", got, oldPrimary)
	}
	hold.Store(true)
	inFlight := make(chan error, 1)
	go func() { inFlight <- s.discover(ctx) }()
	<-asked // the discovery in flight waits for the stale sentinel's answer
	s.watchMessage(ctx, switched.Addr(), switchMessage)
	close(release)
	if err := <-inFlight; err != nil {
		t.Fatal(err)
	}
	// The rediscovery the message asked for.
	if err := s.discover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.snap.Load().primary.Addr; got != newPrimary {
		t.Errorf("primary after the +switch-master message = %s, want %s from the sentinel that published it", got, newPrimary)
	}
}

// TestSentinelWatchRefusedByACLBacksOffLonger: when every sentinel
// refuses the +switch-master subscription with NOPERM (a user's ACL
// without the channel), the refusal will not pass by itself, and the
// client follows the primary without the watch (rediscovery on lost
// connections and READONLY replies, the periodic refresh): the watch
// asks again with a backoff that grows to refusedWatchBackoffMax, not
// once a second for ever.
func TestSentinelWatchRefusedByACLBacksOffLonger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := respiretest.NewServer(t, respiretest.InMemory())
		primary := resp.AppendArrayHeader(nil, 2)
		primary = resp.AppendBulkString(resp.AppendBulkString(primary, "127.0.0.1"), "6379")
		srv.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Times: respiretest.Always, Action: respiretest.Reply(primary)})
		refused := srv.MustAddRule(t, respiretest.Rule{Command: "SUBSCRIBE", Times: respiretest.Always,
			Action: respiretest.Inject("NOPERM this user has no permissions to access the '+switch-master' channel")})
		sentinels := []string{"s1.test:26379", "s2.test:26379"}
		s := &Sentinel{
			cfg: SentinelConfig{Name: "m", Addrs: sentinels, QueryTimeout: time.Second,
				Conn: func(addr string) wire.Config { return wire.Config{Addr: addr, Dial: srv.Dial} }},
			sentinels: sentinels,
		}
		s.watchCtx, s.watchCancel = context.WithCancel(context.Background())
		s.watchWG.Add(1)
		go s.watch()
		time.Sleep(2 * time.Minute) // virtual
		synctest.Wait()
		s.watchCancel()
		s.watchWG.Wait()
		// Rounds at 0, 0.05, 0.15, 0.35, 0.75, 1.55, 3.15, 6.35, 12.75,
		// 25.55, 51.15, 81.15 and 111.15 s: 13 of two sentinels each
		// (a backoff bounded by one second would make about 120).
		if n := refused.Applied(); n != 26 {
			t.Errorf("%d refused SUBSCRIBEs in two minutes, want 26", n)
		}
	})
}
