package route

import (
	"context"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// fakeRole is a server whose ROLE answers role ("master" or "slave").
func fakeRole(t *testing.T, role string) *respiretest.Server {
	t.Helper()
	s := respiretest.NewServer(t)
	v := resp.AppendArrayHeader(nil, 3)
	v = resp.AppendBulkString(v, role)
	v = resp.AppendInteger(v, 0)
	v = resp.AppendArrayHeader(v, 0)
	s.MustAddRule(t, respiretest.Rule{Command: "ROLE", Times: respiretest.Always, Action: respiretest.Reply(v)})
	return s
}

// sentinelOn returns a Sentinel (neither watching nor refreshing) that
// asks the sentinels in order and has primary installed. It checks for
// leaked goroutines when the test ends.
func sentinelOn(t *testing.T, primary string, sentinels ...string) *Sentinel {
	t.Helper()
	before := goleak.IgnoreCurrent() // the goroutines of other tests' servers
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	s := &Sentinel{
		cfg: SentinelConfig{Name: "m", Addrs: sentinels, QueryTimeout: 10 * time.Second,
			Conn: func(addr string) wire.Config { return wire.Config{Addr: addr} }},
		sentinels: slices.Clone(sentinels),
		nodes:     newNodes(addrConfig(), nil),
	}
	t.Cleanup(func() { _ = s.nodes.close() })
	s.ref = newRefresher(s.discover, 0, minSentinelRefreshGap) // never started: requests only kick
	if err := s.install(primary, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// switchMessage is a +switch-master message as a sentinel publishes it.
var switchMessage = resp.Value{Type: resp.Array, Elems: []resp.Value{
	{Type: resp.BulkString, Str: []byte("message")},
	{Type: resp.BulkString, Str: []byte("+switch-master")},
	{Type: resp.BulkString, Str: []byte("m 127.0.0.1 1111 127.0.0.1 2222")}}}

// TestSentinelStaleAnswerIsVerified: a sentinel asked first that names,
// in place of the current primary, an address that is not a reachable
// primary (a replica, whose ROLE is slave, or the dead old primary) is
// passed over for the next sentinel's answer, even when it published a
// +switch-master message (its switch is preferred, not trusted): the
// current primary stays, the same node, and the sentinel that named it
// is asked first next time.
func TestSentinelStaleAnswerIsVerified(t *testing.T) {
	for _, target := range []string{"Replica", "DeadOldPrimary"} {
		for _, published := range []bool{false, true} {
			name := target
			if published {
				name += "/SwitchMessage"
			}
			t.Run(name, func(t *testing.T) {
				primary := fakeRole(t, "master")
				named := testenv.FreeAddr(t)
				if target == "Replica" {
					named = fakeRole(t, "slave").Addr()
				}
				stale := fakeSentinel(t, named, nil)
				good := fakeSentinel(t, primary.Addr(), nil)
				s := sentinelOn(t, primary.Addr(), good.Addr(), stale.Addr())
				node := s.snap.Load().primary
				ctx := context.Background()
				if published {
					s.watchMessage(ctx, stale.Addr(), switchMessage)
				} else {
					s.answered(stale.Addr(), nil, 0)
				}
				if order, _ := s.order(); order[0] != stale.Addr() {
					t.Fatalf("the stale sentinel is not asked first: %v", order)
				}
				if err := s.discover(ctx); err != nil {
					t.Fatalf("discover = %v, want the good sentinel's answer installed", err)
				}
				if got := s.snap.Load().primary; got != node {
					t.Errorf("primary = %s, want %s kept (the stale sentinel's %s was installed)", got.Addr, primary.Addr(), named)
				}
				if order, _ := s.order(); order[0] != good.Addr() {
					t.Errorf("sentinel asked first next = %s, want %s, whose answer was installed", order[0], good.Addr())
				}
			})
		}
	}
}

// TestSentinelOnlyStaleSentinelKeepsPrimary: when the only sentinel that
// answers names an address that is not a reachable primary, the
// discovery fails with its reason and the current primary stays: a
// command in flight on it is answered, not failed as the node retired.
func TestSentinelOnlyStaleSentinelKeepsPrimary(t *testing.T) {
	for _, target := range []string{"Replica", "DeadOldPrimary"} {
		t.Run(target, func(t *testing.T) {
			primary := fakeRole(t, "master")
			named, want := testenv.FreeAddr(t), error(syscall.ECONNREFUSED)
			if target == "Replica" {
				named, want = fakeRole(t, "slave").Addr(), wire.ErrWrongRole
			}
			stale := fakeSentinel(t, named, nil)
			s := sentinelOn(t, primary.Addr(), stale.Addr(), testenv.FreeAddr(t))
			node := s.snap.Load().primary
			held := primary.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Hold})
			defer held.Release()
			ctx := context.Background()
			inFlight := make(chan error, 1)
			go func() {
				_, err := call(ctx, node.EP, "GET", "respire-stale-k")
				inFlight <- err
			}()
			<-held.Received()
			err := s.discover(ctx)
			if err == nil || !errors.Is(err, want) || !strings.Contains(err.Error(), named) {
				t.Errorf("discover = %v, want a failure naming %s, matching %v", err, named, want)
			}
			if got := s.snap.Load().primary; got != node {
				t.Errorf("primary = %s, want %s kept", got.Addr, primary.Addr())
			}
			held.Release()
			if err := <-inFlight; err != nil {
				t.Errorf("the GET in flight on the kept primary = %v, want its reply", err)
			}
		})
	}
}

// TestSentinelVerifiedSwitchInstalls: a sentinel that names another
// primary which answers ROLE master has it installed by that one
// discovery, the old primary retired.
func TestSentinelVerifiedSwitchInstalls(t *testing.T) {
	old, next := fakeRole(t, "master"), fakeRole(t, "master")
	switched := fakeSentinel(t, next.Addr(), nil)
	s := sentinelOn(t, old.Addr(), switched.Addr())
	s.watchMessage(context.Background(), switched.Addr(), switchMessage)
	if err := s.discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.snap.Load().primary.Addr; got != next.Addr() {
		t.Errorf("primary = %s, want %s, which the sentinel named and ROLE verified", got, next.Addr())
	}
	if n := s.nodes.lookup(old.Addr(), false); n != nil {
		t.Errorf("the old primary %s is still known", old.Addr())
	}
}
