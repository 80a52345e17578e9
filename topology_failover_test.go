package respire

// Real failovers and a real slot migration under load. Each test leaves
// the topology as the test script started it: the Sentinel group's
// primary back on its original server, the Cluster's original primaries
// owning their original slots.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/respiretest"
)

// eventually polls cond every 50 ms until it holds or timeout passes. It
// is for external servers changing roles on their own schedule (a
// failover), which offer no event to wait on.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// try sends one command to addr on a fresh connection and returns the
// reply, or the error (unlike admin, which fails the test).
func try(addr string, name string, args ...string) (Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := Connect(ctx, Options{Endpoints: []string{addr}, Protocol: 2, DialTimeout: time.Second})
	if err != nil {
		return Reply{}, err
	}
	defer c.Close()
	return c.Do(ctx, NewCommand(name), anys(args)...)
}

// role returns the first element of ROLE at addr ("master", "slave"), or
// "" when it does not answer.
func role(addr string) string {
	r, err := try(addr, "ROLE")
	if err != nil || len(r.Elements()) == 0 {
		return ""
	}
	s, _ := r.Elements()[0].String()
	return s
}

// serverDir is the directory scripts/servers.sh keeps the server of addr
// in (configuration, pid file).
func serverDir(t testing.TB, addr string) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	root := os.Getenv("RESPIRE_SERVERS_DIR") // set by scripts/servers.sh
	if root == "" {
		root = ".servers"
	}
	d := filepath.Join(root, port)
	if _, err := os.Stat(filepath.Join(d, "redis.conf")); err != nil {
		t.Fatalf("no server directory for %s: %v", addr, err)
	}
	return d
}

// kill9 kills the server at addr with SIGKILL.
func kill9(t testing.TB, addr string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(serverDir(t, addr), "redis.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("kill -9 %d (%s): %v", pid, addr, err)
	}
	eventually(t, 5*time.Second, addr+" to stop answering", func() bool { _, err := try(addr, "PING"); return err != nil })
}

// restart starts the server of addr again from its configuration.
func restart(t testing.TB, addr string) {
	t.Helper()
	out, err := exec.Command("redis-server", filepath.Join(serverDir(t, addr), "redis.conf")).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-server %s: %v: %s", addr, err, out)
	}
	eventually(t, 10*time.Second, addr+" to answer", func() bool { _, err := try(addr, "PING"); return err == nil })
}

// writeWitness counts, per unique field, the HINCRBY frames the proxies
// forwarded: the wire's own record of how many times each call was sent.
type writeWitness struct {
	mu   sync.Mutex
	sent map[string]int
}

func (w *writeWitness) rule() respiretest.Rule {
	return respiretest.Rule{Command: "HINCRBY", Times: respiretest.Always, Action: respiretest.Pass, OnReceive: func(args []string) {
		if len(args) == 4 {
			w.mu.Lock()
			w.sent[args[2]]++
			w.mu.Unlock()
		}
	}}
}

// loadResult is what a load saw.
type loadResult struct {
	reads, readErrs   atomic.Int64
	writes, writeErrs atomic.Int64
	mu                sync.Mutex
	done              map[string]bool // fields whose HINCRBY succeeded
	ambiguous         map[string]bool // fields whose HINCRBY may have run
	lastReadErr       atomic.Value
}

// runLoad runs readers (GET of keys, which must keep their values) and a
// writer (HINCRBY hash field-N 1, one field per call) until stop closes.
func runLoad(t *testing.T, c *Client, keys []string, hash string, stop <-chan struct{}) (*loadResult, func()) {
	res := &loadResult{done: map[string]bool{}, ambiguous: map[string]bool{}}
	var wg sync.WaitGroup
	// A test that fails before it closes stop still ends the load before
	// its client closes (cleanups run last registered first), instead of
	// leaving it spinning on a closed client for the rest of the run.
	halt := make(chan struct{})
	t.Cleanup(func() { close(halt); wg.Wait() })
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i++ {
				select {
				case <-stop:
					return
				case <-halt:
					return
				default:
				}
				k := keys[i%len(keys)]
				v, err := c.Get(context.Background(), k)
				if err != nil {
					res.readErrs.Add(1)
					res.lastReadErr.Store(err.Error())
					continue
				}
				if v != "v"+k {
					t.Errorf("GET %s = %q: a reply reached the wrong caller", k, v)
				}
				res.reads.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-halt:
				return
			default:
			}
			field := "f" + strconv.Itoa(i)
			_, err := c.Do(context.Background(), NewCommand("HINCRBY").WithRetryCategory(WriteAccumulating), hash, field, "1")
			res.mu.Lock()
			if err == nil {
				res.writes.Add(1)
				res.done[field] = true
			} else {
				res.writeErrs.Add(1)
				if MayHaveExecuted(err) {
					res.ambiguous[field] = true
				}
			}
			res.mu.Unlock()
		}
	}()
	return res, wg.Wait
}

// checkWrites verifies, against the hash on the surviving primary and
// the proxies' record, that no write ran or was sent twice, that every
// acknowledged write is there (unless lost is allowed: an asynchronous
// replica may miss the last writes of a killed primary), and that a write
// reported as not executed did not run.
func checkWrites(t *testing.T, res *loadResult, w *writeWitness, values map[string]string, lost bool) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for field, n := range w.sent {
		if n > 1 && !res.ambiguous[field] && !res.done[field] {
			t.Errorf("HINCRBY %s was sent %d times", field, n)
		}
	}
	for field, v := range values {
		if v != "1" {
			t.Errorf("field %s = %s: a write ran more than once", field, v)
		}
		if !res.done[field] && !res.ambiguous[field] {
			t.Errorf("field %s exists, but its HINCRBY was reported as not executed", field)
		}
	}
	missing := 0
	for field := range res.done {
		if _, ok := values[field]; !ok {
			missing++
		}
	}
	if missing > 0 && !lost {
		t.Errorf("%d acknowledged writes are missing", missing)
	}
	t.Logf("writes: %d acknowledged, %d failed (%d may have run), %d acknowledged but lost with the old primary",
		res.writes.Load(), res.writeErrs.Load(), len(res.ambiguous), missing)
}

func hashFields(t *testing.T, c *Client, hash string) map[string]string {
	t.Helper()
	r, err := c.Do(testCtx(t), NewCommand("HGETALL"), hash)
	if err != nil {
		t.Fatalf("HGETALL: %v", err)
	}
	m, err := r.StringMap()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSentinelKillPrimaryUnderLoad: kill -9 of the Sentinel primary under
// reads and writes. Reads recover through the promoted replica within the
// policy's budget; writes (WriteAccumulating, above the policy's maximum)
// are never resent: every field is at most 1 on the new primary and no
// call was sent twice. The original primary is restored afterwards.
func TestSentinelKillPrimaryUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a real failover takes about 20 s")
	}
	testenv.UseTopology(t, true)
	name, sentinels := testenv.SentinelMaster(t), testenv.SentinelAddrs(t)
	primary, replica := sentinelPrimary(t), ""
	for _, a := range []string{testenv.SentinelPrimary(t), testenv.SentinelReplica(t)} {
		if a != primary {
			replica = a
		}
	}
	t.Cleanup(func() { restoreSentinel(t, name, sentinels, primary, replica) })

	w := &writeWitness{sent: map[string]int{}}
	via := map[string]string{}
	for _, a := range []string{primary, replica} {
		px := realProxy(t, a)
		px.MustAddRule(t, w.rule())
		via[a] = px.Addr()
	}
	c := sentinelClient(t, Options{
		Dialer:         rewriteDialer(via),
		CommandTimeout: 20 * time.Second,
		RetryPolicy:    &RetryPolicy{MaxAttempts: 100, MaxBackoff: 200 * time.Millisecond},
	})
	ctx := testCtx(t)
	p := keyPrefix(t)
	var keys []string
	for i := range 20 {
		k := p + strconv.Itoa(i)
		keys = append(keys, k)
		if err := c.Set(ctx, k, "v"+k); err != nil {
			t.Fatal(err)
		}
	}
	hash := p + "h"
	if _, err := c.Del(ctx, hash); err != nil { // left by an earlier run (-count)
		t.Fatal(err)
	}
	// The keys must reach the replica before the primary dies: WAIT counts
	// the writes of its own connection, so a marker written on a
	// dedicated connection after them waits for them too (one replication
	// stream per primary).
	bcSeedReplicated(t, c, p+"replicated", "1")
	stop := make(chan struct{})
	res, wait := runLoad(t, c, keys, hash, stop)
	eventually(t, 5*time.Second, "load before the kill", func() bool { return res.reads.Load() > 100 && res.writes.Load() > 20 })
	kill9(t, primary)
	killed := time.Now()
	eventually(t, 30*time.Second, "the client to follow the promoted replica", func() bool {
		return c.topo.Primaries()[0].Addr == replica
	})
	readsAt := res.reads.Load()
	eventually(t, 20*time.Second, "reads through the new primary", func() bool { return res.reads.Load() > readsAt+100 })
	t.Logf("failover followed in %v", time.Since(killed).Round(time.Millisecond))
	close(stop)
	wait()
	// A read after the failover succeeds at once.
	if v, err := c.Get(ctx, keys[0]); err != nil || v != "v"+keys[0] {
		t.Errorf("GET after failover = %q, %v", v, err)
	}
	if n := res.readErrs.Load(); n > 0 {
		t.Errorf("%d reads failed despite a budget of 100 attempts (last: %v)", n, res.lastReadErr.Load())
	}
	checkWrites(t, res, w, hashFields(t, c, hash), true)
}

// restoreSentinel brings the killed primary back as a replica, then fails
// over to it, so that the group is as the test script started it.
func restoreSentinel(t *testing.T, name string, sentinels []string, primary, replica string) {
	if role(primary) == "" {
		restart(t, primary)
	}
	rhost, rport, _ := net.SplitHostPort(replica)
	if role(primary) == "master" && role(replica) == "master" {
		if _, err := try(primary, "REPLICAOF", rhost, rport); err != nil {
			t.Fatalf("REPLICAOF: %v", err)
		}
	}
	synced := func(addr string) bool {
		r, err := try(addr, "INFO", "replication")
		s, _ := r.String()
		return err == nil && strings.Contains(s, "master_link_status:up")
	}
	if role(replica) == "master" {
		eventually(t, 30*time.Second, primary+" to sync as a replica", func() bool { return synced(primary) })
		eventually(t, 40*time.Second, "SENTINEL FAILOVER back to "+primary, func() bool {
			_, err := try(sentinels[0], "SENTINEL", "FAILOVER", name)
			return err == nil
		})
	}
	eventually(t, 40*time.Second, "every sentinel to name "+primary, func() bool {
		for _, s := range sentinels {
			r, err := try(s, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
			parts, _ := r.Strings()
			if err != nil || len(parts) != 2 || net.JoinHostPort(parts[0], parts[1]) != primary {
				return false
			}
		}
		return role(primary) == "master" && synced(replica)
	})
	// Replica reads need the sentinels to see the replica linked again.
	eventually(t, 40*time.Second, "every sentinel to see "+replica+" linked", func() bool {
		for _, s := range sentinels {
			r, err := try(s, "SENTINEL", "REPLICAS", name)
			if err != nil || len(route.HealthyReplicas(r.Value())) != 1 || route.HealthyReplicas(r.Value())[0] != replica {
				return false
			}
		}
		return true
	})
}

// clusterNodeIDs maps each Cluster node's address to its node id.
func clusterNodeIDs(t *testing.T) map[string]string {
	ids := map[string]string{}
	for _, a := range testenv.ClusterAddrs(t) {
		s, err := admin(t, a, "CLUSTER", "MYID").String()
		if err != nil {
			t.Fatal(err)
		}
		ids[a] = s
	}
	return ids
}

// clusterAgrees reports whether every node answers cluster_state:ok and
// names primaries as its primary set.
func clusterAgrees(t *testing.T, primaries []string) bool {
	want := slices.Sorted(slices.Values(primaries))
	for _, a := range testenv.ClusterAddrs(t) {
		if got, ok := clusterPrimaries(a); !ok || !slices.Equal(got, want) {
			return false
		}
	}
	return true
}

// clusterViewsAgree reports whether every node answers cluster_state:ok
// and names the same primaries.
func clusterViewsAgree(t *testing.T) bool {
	var first []string
	for i, a := range testenv.ClusterAddrs(t) {
		got, ok := clusterPrimaries(a)
		if !ok || (i > 0 && !slices.Equal(got, first)) {
			return false
		}
		first = got
	}
	return true
}

// clusterPrimaries returns the primaries that the node at addr names,
// sorted, or false when it does not answer cluster_state:ok or flags a
// node as failing.
func clusterPrimaries(addr string) ([]string, bool) {
	nodes, ok := clusterNodes(addr)
	if !ok {
		return nil, false
	}
	var primaries []string
	for _, f := range nodes {
		if strings.Contains(f[2], "fail") {
			return nil, false
		}
		if strings.Contains(f[2], "master") {
			a, _, _ := strings.Cut(f[1], "@")
			primaries = append(primaries, a)
		}
	}
	slices.Sort(primaries)
	return primaries, true
}

// clusterNodes returns the fields of each line of CLUSTER NODES at addr
// (id, address, flags, primary, ..., then its slots), or false when it
// does not answer cluster_state:ok.
func clusterNodes(addr string) ([][]string, bool) {
	r, err := try(addr, "CLUSTER", "INFO")
	s, _ := r.String()
	if err != nil || !strings.Contains(s, "cluster_state:ok") {
		return nil, false
	}
	r, err = try(addr, "CLUSTER", "NODES")
	s, _ = r.String()
	if err != nil {
		return nil, false
	}
	var nodes [][]string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, false
		}
		nodes = append(nodes, f)
	}
	return nodes, true
}

// TestClusterFailoverUnderLoad: CLUSTER FAILOVER on a replica while reads
// and writes run on its primary's slots. The client follows MOVED to the
// promoted replica; no read fails, no write runs twice or is lost (a
// manual failover waits for the replica to catch up). The original
// primary is failed back afterwards.
func TestClusterFailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a real failover")
	}
	testenv.UseTopology(t, true)
	primaries, replicas := clusterRoles(t)
	var owner *route.Node
	t.Cleanup(func() {
		if owner != nil {
			failOverTo(t, primaries, owner.Addr)
		}
	})
	w := &writeWitness{sent: map[string]int{}}
	via := map[string]string{}
	for _, a := range testenv.ClusterAddrs(t) {
		px := realProxy(t, a)
		px.MustAddRule(t, w.rule())
		via[a] = px.Addr()
	}
	c := clusterClient(t, Options{
		Endpoints:      replicas,
		Dialer:         rewriteDialer(via),
		CommandTimeout: 10 * time.Second,
		RetryPolicy:    &RetryPolicy{MaxAttempts: 50, MaxBackoff: 200 * time.Millisecond},
	})
	ctx := testCtx(t)
	p := keyPrefix(t)
	hash := p + "{tag}h"
	var err error
	if owner, err = c.topo.Pick(route.Slot(hash), false); err != nil {
		t.Fatal(err)
	}
	// The key names repeat in every run of the test (-count): start from
	// an empty hash, whatever an earlier run left.
	if _, err := c.Del(ctx, hash); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 20 {
		k := p + "{tag}" + strconv.Itoa(i) // the same slot as the hash
		keys = append(keys, k)
		if err := c.Set(ctx, k, "v"+k); err != nil {
			t.Fatal(err)
		}
	}
	promoted := replicaOf(t, replicas, owner.Addr)
	stop := make(chan struct{})
	res, wait := runLoad(t, c, keys, hash, stop)
	eventually(t, 5*time.Second, "load before the failover", func() bool { return res.reads.Load() > 100 && res.writes.Load() > 20 })
	// A manual failover times out (and changes nothing) while the nodes'
	// views still differ: ask again until it happens.
	var asked time.Time
	eventually(t, 40*time.Second, "the client to route the slot to "+promoted, func() bool {
		if n, err := c.topo.Pick(route.Slot(hash), false); err == nil && n.Addr == promoted {
			return true
		}
		if role(promoted) == "slave" && time.Since(asked) > 6*time.Second {
			admin(t, promoted, "CLUSTER", "FAILOVER")
			asked = time.Now()
		}
		return false
	})
	readsAt := res.reads.Load()
	eventually(t, 10*time.Second, "reads on the new primary", func() bool { return res.reads.Load() > readsAt+100 })
	close(stop)
	wait()
	if n := res.readErrs.Load(); n > 0 {
		t.Errorf("%d reads failed (last: %v)", n, res.lastReadErr.Load())
	}
	checkWrites(t, res, w, hashFields(t, c, hash), false)
	_, _ = c.Del(ctx, append(keys, hash)...)
}

// failOverTo makes the replica to a primary by CLUSTER FAILOVER (after a
// failover, failing back to the old primary), and waits until every node
// agrees that primaries are the primaries. A manual failover is refused
// (it times out, after 5 s, its primary's writes paused meanwhile) while
// the nodes' views differ, or within 4 × cluster-node-timeout of to's
// previous election (clusterHandleSlaveFailover's auth_retry_time: 20 s
// at the test script's 5 s), so it is asked for once every node names the
// same primaries and to's last election in this process is that old, and
// again if it did not happen within 6 s.
func failOverTo(t *testing.T, primaries []string, to string) {
	t.Helper()
	if clusterAgrees(t, primaries) {
		return
	}
	ms, err := admin(t, to, "CONFIG", "GET", "cluster-node-timeout").Strings()
	if err != nil || len(ms) != 2 {
		t.Fatalf("CONFIG GET cluster-node-timeout = %v, %v", ms, err)
	}
	n, err := strconv.Atoi(ms[1])
	if err != nil {
		t.Fatal(err)
	}
	retry := 4 * time.Duration(n) * time.Millisecond
	var last time.Time
	eventually(t, 60*time.Second, "every node to name "+strings.Join(primaries, ", ")+" as the primaries", func() bool {
		if clusterAgrees(t, primaries) {
			return true
		}
		prev, _ := elected.Load(to)
		if p, ok := prev.(time.Time); ok && time.Since(p) < retry {
			return false
		}
		if role(to) == "slave" && time.Since(last) > 6*time.Second && clusterViewsAgree(t) {
			r, err := try(to, "INFO", "replication")
			s, _ := r.String()
			if err == nil && strings.Contains(s, "master_link_status:up") {
				_, _ = try(to, "CLUSTER", "FAILOVER")
				last = time.Now()
			}
		}
		return false
	})
	elected.Store(to, time.Now())
}

// elected holds, by address, when failOverTo last saw a node win a
// failover election in this process.
var elected sync.Map

// replicaOf returns the one of replicas that replicates primary.
func replicaOf(t *testing.T, replicas []string, primary string) string {
	t.Helper()
	for _, r := range replicas {
		s, _ := admin(t, r, "INFO", "replication").String()
		if strings.Contains(s, "master_port:"+portOf(primary)+"\r") {
			return r
		}
	}
	t.Fatalf("no replica of %s", primary)
	return ""
}

func portOf(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

// TestClusterSlotMigrationUnderLoad migrates one slot by hand (SETSLOT
// IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE) while reads and writes run
// on it: single-key commands follow ASK during the migration and MOVED
// after it, a multi-key command over a half-moved slot gets TRYAGAIN (a
// policy failure), and nothing fails or runs twice. The slot is migrated
// back afterwards.
func TestClusterSlotMigrationUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a real migration")
	}
	testenv.UseTopology(t, true)
	ids := clusterNodeIDs(t)
	c := clusterClient(t, Options{CommandTimeout: 10 * time.Second, RetryPolicy: &RetryPolicy{MaxAttempts: 100, MaxBackoff: 50 * time.Millisecond}})
	ctx := testCtx(t)
	p := keyPrefix(t)
	hash := p + "{mig}h"
	slot := route.Slot(hash)
	src, dst := ownerAndOther(t, c, slot)
	if _, err := c.Del(ctx, hash); err != nil { // left by an earlier run (-count)
		t.Fatal(err)
	}
	var keys []string
	for i := range 10 {
		k := p + "{mig}" + strconv.Itoa(i)
		keys = append(keys, k)
		if err := c.Set(ctx, k, "v"+k); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// Whatever happened, the slot goes back to src with every key.
		migrateSlot(t, slot, dst, src.Addr, ids)
		_, _ = c.Del(context.Background(), append(keys, hash)...)
	})
	w := &writeWitness{sent: map[string]int{}}
	stop := make(chan struct{})
	res, wait := runLoad(t, c, keys, hash, stop)
	eventually(t, 5*time.Second, "load before the migration", func() bool { return res.reads.Load() > 100 && res.writes.Load() > 20 })

	mig := slotMigration{slot: slot, src: src.Addr, dst: dst, ids: ids}
	mig.begin(t)
	mig.migrate(t, keys[0])
	// keys[0] moved, keys[1] did not: a multi-key command over both is
	// refused with TRYAGAIN until the slot is whole again.
	noRetry := clusterClient(t, Options{})
	_, err := noRetry.Do(ctx, NewCommand("MGET"), keys[0], keys[1])
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "TRYAGAIN" {
		t.Errorf("MGET over a half-moved slot = %v, want TRYAGAIN", err)
	}
	asking := commandCalls(t, dst, "asking")
	if v, err := noRetry.Get(ctx, keys[0]); err != nil || v != "v"+keys[0] {
		t.Errorf("GET of the moved key = %q, %v (want it through ASK)", v, err)
	}
	if commandCalls(t, dst, "asking") <= asking {
		t.Errorf("no ASKING reached %s", dst)
	}
	// A retrying MGET started now succeeds once the slot is whole.
	mget := make(chan error, 1)
	go func() {
		vals, _, err := c.MGet(ctx, keys[0], keys[1])
		if err == nil && (vals[0] != "v"+keys[0] || vals[1] != "v"+keys[1]) {
			err = fmt.Errorf("MGET = %v", vals)
		}
		mget <- err
	}()
	migrateSlot(t, slot, src.Addr, dst, ids)
	if err := <-mget; err != nil {
		t.Errorf("retried MGET across the migration: %v", err)
	}
	eventually(t, 10*time.Second, "the client to route the slot to "+dst, func() bool {
		n, err := c.topo.Pick(slot, false)
		return err == nil && n.Addr == dst
	})
	readsAt := res.reads.Load()
	eventually(t, 10*time.Second, "reads after the migration", func() bool { return res.reads.Load() > readsAt+100 })
	close(stop)
	wait()
	if n := res.readErrs.Load(); n > 0 {
		t.Errorf("%d reads failed (last: %v)", n, res.lastReadErr.Load())
	}
	checkWrites(t, res, w, hashFields(t, c, hash), false)
}

// ownerAndOther returns the primary that c routes slot to, and the
// address of another primary.
func ownerAndOther(t *testing.T, c *Client, slot int) (owner *route.Node, other string) {
	t.Helper()
	owner, err := c.topo.Pick(slot, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.topo.Primaries() {
		if n != owner {
			return owner, n.Addr
		}
	}
	t.Fatalf("no primary other than %s", owner.Addr)
	return nil, ""
}

// slotMigration migrates one slot by hand from the primary src to the
// primary dst, a few keys at a time, as redis-cli does: begin, then step
// until no key is left, then migrateSlot(slot, src, dst) ends it.
type slotMigration struct {
	slot     int
	src, dst string
	ids      map[string]string // node ids by address (clusterNodeIDs)
}

// begin opens the migration: dst IMPORTING from src, then src MIGRATING
// to dst. From then on src answers ASK for keys it no longer holds, and
// TRYAGAIN to a multi-key command over a half-moved slot.
func (m slotMigration) begin(t *testing.T) {
	t.Helper()
	sl := strconv.Itoa(m.slot)
	admin(t, m.dst, "CLUSTER", "SETSLOT", sl, "IMPORTING", m.ids[m.src])
	admin(t, m.src, "CLUSTER", "SETSLOT", sl, "MIGRATING", m.ids[m.dst])
}

// migrate moves keys from src to dst (MIGRATE, whatever the slot's state).
func (m slotMigration) migrate(t *testing.T, keys ...string) {
	t.Helper()
	dhost, dport, _ := net.SplitHostPort(m.dst)
	admin(t, m.src, "MIGRATE", append([]string{dhost, dport, "", "0", "5000", "KEYS"}, keys...)...)
}

// step moves up to n of the keys src still holds in the slot to dst and
// returns how many it moved: 0 when none is left.
func (m slotMigration) step(t *testing.T, n int) int {
	t.Helper()
	ks, err := admin(t, m.src, "CLUSTER", "GETKEYSINSLOT", strconv.Itoa(m.slot), strconv.Itoa(n)).Strings()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) > 0 {
		m.migrate(t, ks...)
	}
	return len(ks)
}

// migrateSlot gives slot, with every key of it, to the primary dst, in
// whatever state a migration of it between src and dst was left (none
// begun, half done, finished, either way), and waits until every node
// agrees that dst owns it and no node is migrating or importing it. It
// sets the owner with SETSLOT NODE on every primary (dst first, so that
// no node sends a redirect back), then clears any leftover state with
// SETSLOT STABLE: a node still holding keys of a slot it gave away keeps
// MIGRATING after SETSLOT NODE.
func migrateSlot(t *testing.T, slot int, src, dst string, ids map[string]string) {
	t.Helper()
	sl := strconv.Itoa(slot)
	// Each fails harmlessly in the state it does not apply to: dst
	// already owns the slot, src no longer does.
	_, _ = try(dst, "CLUSTER", "SETSLOT", sl, "IMPORTING", ids[src])
	_, _ = try(src, "CLUSTER", "SETSLOT", sl, "MIGRATING", ids[dst])
	// MIGRATE works on a node that is migrating or importing the slot,
	// and the owner dst accepts it either way.
	m := slotMigration{slot: slot, src: src, dst: dst, ids: ids}
	for m.step(t, 100) > 0 {
	}
	admin(t, dst, "CLUSTER", "SETSLOT", sl, "NODE", ids[dst])
	for a := range ids {
		if a != dst {
			_, _ = try(a, "CLUSTER", "SETSLOT", sl, "NODE", ids[dst]) // a replica refuses
		}
	}
	for a := range ids {
		_, _ = try(a, "CLUSTER", "SETSLOT", sl, "STABLE")
	}
	eventually(t, 10*time.Second, "every node to agree that "+dst+" owns slot "+sl, func() bool {
		return slotSettled(t, slot, ids[dst])
	})
}

// slotSettled reports whether every node answers cluster_state:ok and
// names owner (a node id) as the owner of slot, with no node migrating
// or importing it.
func slotSettled(t *testing.T, slot int, owner string) bool {
	for _, a := range testenv.ClusterAddrs(t) {
		nodes, ok := clusterNodes(a)
		if !ok {
			return false
		}
		seen := ""
		for _, f := range nodes {
			for _, r := range f[8:] {
				if strings.HasPrefix(r, "["+strconv.Itoa(slot)+"-") {
					return false // [slot->-id] or [slot-<-id]: open on this node
				}
				lo, hi, isRange := strings.Cut(r, "-")
				if !isRange {
					hi = lo
				}
				l, err1 := strconv.Atoi(lo)
				h, err2 := strconv.Atoi(hi)
				if err1 == nil && err2 == nil && l <= slot && slot <= h {
					seen = f[0]
				}
			}
		}
		if seen != owner {
			return false
		}
	}
	return true
}
