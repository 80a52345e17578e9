package respire

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// TestClusterBatchRedirectedMembersShareOneDeadline: on a Cluster client,
// one deadline (here CommandTimeout, the context having none) bounds a
// batch's groups and the resends of its redirected members together, as
// it bounds a transaction with its redirects. Each resend used to get a
// fresh CommandTimeout: twenty members answered MOVED, each resend slowed
// to 40 ms by a slow server, made Execute run for about 800 ms under a
// 300 ms CommandTimeout and succeed.
func TestClusterBatchRedirectedMembersShareOneDeadline(t *testing.T) {
	const members = 20
	c, proxies := frozenMapCluster(t, Options{CommandTimeout: 300 * time.Millisecond})
	a := c.topo.Primaries()[0].Addr
	tag := bcTagOn(t, c, a)
	// The group's GETs are answered MOVED to their own node (the map does
	// not change); every GET after them, a resend, is slow.
	moved := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Times: members,
		Action: respiretest.Inject(respiretest.Moved(route.Slot(tag), a))})
	t.Cleanup(moved.Remove)
	var gets atomic.Int64
	slow := make(chan struct{})
	defer close(slow)
	pass := proxies[a].MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.Pass,
		OnReceive: func([]string) {
			if gets.Add(1) <= members {
				return
			}
			select { // a slow server
			case <-slow:
			case <-time.After(40 * time.Millisecond):
			}
		}})
	t.Cleanup(pass.Remove)

	batch := c.NewBatch()
	futures := make([]Future[string], members)
	for i := range futures {
		futures[i] = batch.Get(tag + strconv.Itoa(i))
	}
	began := time.Now()
	err := batch.Execute(context.Background()) // no deadline: CommandTimeout applies
	took := time.Since(began)
	if n := moved.Applied(); n != members {
		t.Fatalf("MOVED answered %d GETs, want %d", n, members)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Execute = %v after %v, want the CommandTimeout's deadline", err, took)
	}
	if last := futures[members-1].Err(); !errors.Is(last, context.DeadlineExceeded) {
		t.Errorf("the last redirected member = %v, want the deadline", last)
	}
}
