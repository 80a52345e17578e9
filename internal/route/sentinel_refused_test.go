package route

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// TestSentinelReplicasRefusedByACLBacksOff: a user whose ACL refuses
// SENTINEL REPLICAS leaves the group without known replicas, and reads
// under ReadReplicaPreferred that find none ask for rediscovery. The
// refusal does not pass by itself: they ask once per
// refusedReplicasGap, not once a second, so the sentinel refuses
// SENTINEL REPLICAS a few times in two minutes of reads, not 120.
func TestSentinelReplicasRefusedByACLBacksOff(t *testing.T) {
	testenv.Bubble(t, func(t *testing.T) {
		srv := respiretest.NewServer(t, respiretest.InMemory())
		primary := resp.AppendArrayHeader(nil, 2)
		primary = resp.AppendBulkString(resp.AppendBulkString(primary, "127.0.0.1"), "6379")
		srv.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "GET-MASTER-ADDR-BY-NAME", Times: respiretest.Always,
			Action: respiretest.Reply(primary)})
		refused := srv.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "REPLICAS", Times: respiretest.Always,
			Action: respiretest.Inject("NOPERM this user has no permissions to run the 'sentinel|replicas' command")})
		srv.MustAddRule(t, respiretest.Rule{Command: "SENTINEL", Arg: "SENTINELS", Times: respiretest.Always,
			Action: respiretest.Reply(resp.AppendArrayHeader(nil, 0))})
		sentinels := []string{"s1.test:26379"}
		s := &Sentinel{
			cfg: SentinelConfig{Name: "m", Addrs: sentinels, QueryTimeout: time.Second, Read: ReadReplicaPreferred,
				Conn: func(addr string) wire.Config { return wire.Config{Addr: addr, Dial: srv.Dial} }},
			sentinels: sentinels,
			nodes:     newNodes(addrConfig(), nil),
		}
		s.ref = newRefresher(s.discover, 0, minSentinelRefreshGap)
		if err := s.discover(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.ref.start()
		defer func() {
			s.ref.stop()
			_ = s.nodes.close()
		}()
		for range 240 { // a read every half second (virtual) for two minutes
			n, err := s.Pick(-1, true)
			if err != nil || n.Replica {
				t.Fatalf("Pick = %v, %v; want the primary", n, err)
			}
			time.Sleep(500 * time.Millisecond)
			synctest.Wait()
		}
		// The discovery before the reads, then the reads' at 0, 30, 60
		// and 90 s (once a second would make 121).
		if n := refused.Applied(); n != 5 {
			t.Errorf("%d refused SENTINEL REPLICAS in two minutes of reads, want 5", n)
		}
	})
}
