package respire

// Users whose ACL lacks permissions, as on managed services that disable
// CLIENT, CLUSTER, ROLE, SELECT, SCRIPT or PING: on real servers, with
// users of unique names that the tests delete.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/internal/wire"
)

// aclUser creates, on every server at addrs (each node of a Cluster,
// each sentinel or data node of a Sentinel group), an ACL user with a
// name unique to the test and this run, a random password and rules, and
// deletes it when the test ends. It returns the name and the password.
func aclUser(t testing.TB, addrs []string, rules ...string) (user, password string) {
	t.Helper()
	user = fmt.Sprintf("h-acl-%s-%x", strings.ReplaceAll(t.Name(), "/", "-"), rand.Uint64())
	password = fmt.Sprintf("pw-%x", rand.Uint64())
	for _, a := range addrs {
		admin(t, a, "ACL", append([]string{"SETUSER", user, "on", ">" + password}, rules...)...)
		t.Cleanup(func() { admin(t, a, "ACL", "DELUSER", user) })
	}
	return user, password
}

// connectRefused connects with opts, which must fail, and returns the
// error.
func connectRefused(t *testing.T, opts Options) error {
	t.Helper()
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, opts)
	if err == nil {
		_ = c.Close()
		t.Fatal("Connect succeeded, want the server's refusal")
	}
	return err
}

// checkRefusal checks that err, of a failed Connect or call, is a *ConnError whose
// cause errors.As finds: the server's NOPERM for command, named in the
// text, which holds no password.
func checkRefusal(t *testing.T, err error, command, password string) {
	t.Helper()
	var se *ServerError
	switch {
	case !errors.Is(err, ErrConnectionLost):
		t.Errorf("%v: does not match ErrConnectionLost", err)
	case !errors.As(err, &se) || se.Code != "NOPERM" || se.Command != command:
		t.Errorf("%v: errors.As finds %v, want the server's NOPERM for %s", err, se, command)
	case !errors.Is(err, &ServerError{Code: "NOPERM", Command: command}):
		t.Errorf("%v: does not match the NOPERM of %s", err, command)
	}
	if !strings.Contains(err.Error(), command+": NOPERM") {
		t.Errorf("%q does not name the refused %s", err, command)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("%q holds the password", err)
	}
}

// Each handshake step a user's ACL refuses fails Connect with the
// server's NOPERM for that step, which errors.As finds and the text
// names, without the password; the step is sent once (no retry loop).
func TestACLHandshakeStepRefused(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	cases := []struct {
		name, command, stat, deny string
		opts                      Options
	}{
		{"SELECT", "SELECT", "select", "-select", Options{DB: 1}},
		{"SELECT RESP2", "SELECT", "select", "-select", Options{DB: 1, Protocol: 2}},
		{"CLIENT SETNAME RESP2", "CLIENT SETNAME", "client|setname", "-client|setname", Options{ClientName: "h-acl", Protocol: 2}},
		{"CLIENT TRACKING", "CLIENT TRACKING", "client|tracking", "-client|tracking", Options{ClientCache: &CacheOptions{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", tc.deny)
			opts := tc.opts
			opts.Endpoints, opts.Username, opts.Password = []string{addr}, user, pw
			before := commandStat(t, addr, tc.stat, "rejected_calls")
			err := connectRefused(t, opts)
			checkRefusal(t, err, tc.command, pw)
			if n := commandStat(t, addr, tc.stat, "rejected_calls") - before; n != 1 {
				t.Errorf("%s refused %d times, want once", tc.command, n)
			}
		})
	}
}

// A command the ACL refuses is never retried, whatever the policy selects,
// and neither is a command whose new connection's handshake the ACL
// refuses: its caller gets the refusal, and the refusals do not multiply
// (at most one dial per call; TestACLRefusedHandshakeFailsFast shows
// that most calls dial none).
func TestACLRefusalNeverRetried(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", "-get")
	every := &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: Always, InitialBackoff: NoBackoff,
		RetryableErrors: RetryOnConnectionLoss | RetryOnLoading | RetryOnTryAgain | RetryOnMasterDown | RetryOnReadOnly}
	c := newClient(t, Options{Username: user, Password: pw, DB: 2, RetryPolicy: every})
	ctx := testCtx(t)
	before := commandStat(t, addr, "get", "rejected_calls")
	if _, err := c.Get(ctx, key(t, "k")); !errors.Is(err, &ServerError{Code: "NOPERM", Command: "GET"}) {
		t.Fatalf("GET = %v, want the server's NOPERM", err)
	}
	if n := commandStat(t, addr, "get", "rejected_calls") - before; n != 1 {
		t.Errorf("GET refused %d times, want once", n)
	}

	admin(t, addr, "ACL", "SETUSER", user, "-select")
	admin(t, addr, "CLIENT", "KILL", "USER", user)
	// The first call may find the killed connection (a connection loss,
	// which the policy retries) before its new connection is refused.
	_ = c.Set(ctx, key(t, "k"), "v")
	before = commandStat(t, addr, "select", "rejected_calls")
	const calls = 3
	for range calls {
		err := c.Set(ctx, key(t, "k"), "v")
		var ce *ConnError
		if !errors.As(err, &ce) || !ce.Unwritten || !errors.Is(err, &ServerError{Code: "NOPERM", Command: "SELECT"}) {
			t.Fatalf("SET = %v, want an unsent command whose connection's SELECT was refused", err)
		}
		var re *RetryError
		if errors.As(err, &re) {
			t.Fatalf("SET = %v: retried", err)
		}
	}
	if n := commandStat(t, addr, "select", "rejected_calls") - before; n > calls {
		t.Errorf("SELECT refused %d times for %d calls, want at most one each", n, calls)
	}
}

// A client whose user's ACL comes to refuse a step of its handshake
// (SELECT here) fails fast: every call returns the server's refusal,
// unsent, without waiting for the redial, and the client redials at its
// backoff pace (10 ms, 20 ms ... up to 1 s apart), not once per call.
// Once the ACL is fixed, the redial under way brings the client back.
func TestACLRefusedHandshakeFailsFast(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all")
	c := newClient(t, Options{Username: user, Password: pw, DB: 2})
	ctx := testCtx(t)
	k := key(t, "k")
	refusedSELECT := &ServerError{Code: "NOPERM", Command: "SELECT"}
	admin(t, addr, "ACL", "SETUSER", user, "-select")
	admin(t, addr, "CLIENT", "KILL", "USER", user)
	// The first calls may find the killed connection before a new
	// connection's SELECT is refused.
	for err := c.Set(ctx, k, "v"); !errors.Is(err, refusedSELECT); err = c.Set(ctx, k, "v") {
		if ctx.Err() != nil {
			t.Fatalf("SET = %v, want the refusal of SELECT after the ACL changed", err)
		}
	}

	// Few enough calls that, were each to wait for its redial (10 ms,
	// 20 ms ... 1 s), they would end before testCtx's deadline.
	const calls = 12
	before, start := commandStat(t, addr, "select", "rejected_calls"), time.Now()
	for range calls {
		err := c.Set(ctx, k, "v")
		if checkRefusal(t, err, "SELECT", pw); t.Failed() || MayHaveExecuted(err) {
			t.Fatalf("SET = %v, want it unsent, refused by SELECT", err)
		}
	}
	refused, elapsed := commandStat(t, addr, "select", "rejected_calls")-before, time.Since(start)
	// The dials the backoff allows in elapsed: the one perhaps under
	// way at the start, the one perhaps under way at the end, and one
	// per backoff period in between (from 10 ms, the shortest).
	allowed := 2
	for d, sum := 10*time.Millisecond, time.Duration(0); sum+d <= elapsed; d = min(2*d, time.Second) {
		sum += d
		allowed++
	}
	switch {
	case refused >= calls:
		t.Errorf("%d calls in %v saw %d refused handshakes: each waited for a redial, want them to fail at once", calls, elapsed, refused)
	case refused > allowed:
		t.Errorf("%d calls in %v saw %d refused handshakes, want at most %d (one per backoff period)", calls, elapsed, refused, allowed)
	}

	admin(t, addr, "ACL", "SETUSER", user, "+select")
	selects, rejected := commandStat(t, addr, "select", "calls"), commandStat(t, addr, "select", "rejected_calls")
	for err := c.Set(ctx, k, "fixed"); err != nil; err = c.Set(ctx, k, "fixed") {
		if !errors.Is(err, refusedSELECT) || ctx.Err() != nil {
			t.Fatalf("SET = %v, want the last refusal until the redial succeeds", err)
		}
		// Pacing, not synchronisation: the loop ends when a call finds
		// the redialed connection (bounded by ctx); without a pause it
		// would spin on the refusal returned at once.
		time.Sleep(5 * time.Millisecond)
	}
	if v, err := c.Get(ctx, k); err != nil || v != "fixed" {
		t.Errorf("GET = %q, %v after the ACL was fixed, want fixed", v, err)
	}
	if n, r := commandStat(t, addr, "select", "calls")-selects, commandStat(t, addr, "select", "rejected_calls")-rejected; n != 1 || r > 1 {
		t.Errorf("after the fix: %d SELECTs accepted and %d refused, want one redial that succeeds (after at most one refused under way)", n, r)
	}
}

// A Sentinel client checks the ROLE of the primary it connects to. A user
// whose ACL refuses ROLE gets the server's NOPERM for ROLE, not a report
// that the server has the wrong role (which would send the client to the
// sentinels for another primary).
func TestACLSentinelRoleRefused(t *testing.T) {
	testenv.UseTopology(t, false)
	data := []string{testenv.SentinelPrimary(t), testenv.SentinelReplica(t)}
	user, pw := aclUser(t, data, "~*", "&*", "+@all", "-role")
	err := connectRefused(t, Options{Username: user, Password: pw,
		Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t), Addrs: testenv.SentinelAddrs(t)}})
	checkRefusal(t, err, "ROLE", pw)
	if errors.Is(err, wire.ErrWrongRole) || strings.Contains(err.Error(), "expected role") {
		t.Errorf("%q reports a wrong role; the server refused ROLE", err)
	}
}

// Discovery refused by the ACL (CLUSTER SHARDS and SLOTS, or the
// sentinels' SENTINEL GET-MASTER-ADDR-BY-NAME) fails Connect with the
// server's NOPERM, which errors.As finds as it finds a refused handshake.
func TestACLDiscoveryRefused(t *testing.T) {
	testenv.UseTopology(t, false)
	t.Run("Cluster", func(t *testing.T) {
		nodes := testenv.ClusterAddrs(t)
		user, pw := aclUser(t, nodes, "~*", "&*", "+@all", "-cluster|shards", "-cluster|slots")
		err := connectRefused(t, Options{Endpoints: nodes, Cluster: &ClusterOptions{}, Username: user, Password: pw})
		checkRefusal(t, err, "CLUSTER SLOTS", pw)
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Addr() == "" || !strings.Contains(err.Error(), ce.Addr()) {
			t.Errorf("%q: does not name the node that refused", err)
		}
	})
	t.Run("Sentinel", func(t *testing.T) {
		sentinels := testenv.SentinelAddrs(t)
		user, pw := aclUser(t, sentinels, "+@all", "-sentinel|get-master-addr-by-name")
		err := connectRefused(t, Options{Sentinel: &SentinelOptions{PrimaryName: testenv.SentinelMaster(t),
			Addrs: sentinels, Username: user, Password: pw}})
		checkRefusal(t, err, "SENTINEL GET-MASTER-ADDR-BY-NAME", pw)
		for _, a := range sentinels {
			if !strings.Contains(err.Error(), a) {
				t.Errorf("%q does not name sentinel %s", err, a)
			}
		}
	})
}

// Replica reads of a user whose ACL refuses READONLY: under
// ReadReplicaPreferred the reads go to the primary (a read whose replica
// refused is served by it, TestACLClusterReplicaRefusalReadServedByPrimary;
// a failed one would name READONLY and its NOPERM), and the refused
// background redials of the replicas never ask for a new slot map (a
// refused handshake is no topology change): the only CLUSTER SHARDS the
// nodes see is the one the test asks for.
func TestACLClusterReplicaRefusalAsksNoRefresh(t *testing.T) {
	countsCommands(t)
	nodes := testenv.ClusterAddrs(t)
	c, _, pw := readonlyRefusedClient(t, nodes, ReadReplicaPreferred)
	ctx := testCtx(t)
	asked := func() int {
		n := 0
		for _, a := range nodes {
			n += commandSeen(t, a, "cluster|shards") + commandSeen(t, a, "cluster|slots")
		}
		return n
	}
	refusals := func() int {
		n := 0
		for _, r := range c.topo.Replicas() {
			n += commandStat(t, r.Addr, "readonly", "rejected_calls")
		}
		return n
	}
	before, refusedBefore := asked(), refusals()
	// Five refused dials of each replica span the backoffs of 10, 20,
	// 40 and 80 ms, longer than the 100 ms that space refreshes: a
	// refresh asked for by the first would have run by the last.
	replicas := len(c.topo.Replicas())
	for i := 0; refusals()-refusedBefore < 5*replicas; i++ {
		for j := range 20 {
			_, err := c.Get(ctx, key(t, strconv.Itoa(i*20+j)))
			if err != nil && !errors.Is(err, ErrNil) {
				checkRefusal(t, err, "READONLY", pw)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the replicas refused READONLY %d times, want %d", refusals()-refusedBefore, 5*replicas)
		}
	}
	if err := c.topo.Refresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	if n := asked() - before; n != 1 {
		t.Errorf("the nodes were asked for the slot map %d times, want once (the test's own)", n)
	}
}

// A transaction whose MULTI the ACL refuses is no transaction: the
// server runs the members it accepts one by one as they arrive. The
// error says so (and MayHaveExecuted is true), with the server's NOPERM
// for MULTI still found by errors.As; Watch does not rerun its callback.
func TestACLTransactionMultiRefused(t *testing.T) {
	addr := standaloneAddr(t)
	user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", "-multi")
	c := newClient(t, Options{Username: user, Password: pw})
	ctx := testCtx(t)
	n := key(t, "n")
	check := func(t *testing.T, err error, wantN string) {
		t.Helper()
		if !errors.Is(err, &ServerError{Code: "NOPERM", Command: "MULTI"}) || !MayHaveExecuted(err) ||
			!strings.Contains(err.Error(), "outside a transaction") {
			t.Errorf("%v: want the server's NOPERM for MULTI, saying the members ran outside a transaction", err)
		}
		if got, err := c.Get(ctx, n); got != wantN || err != nil {
			t.Fatalf("%s = %q, %v; want %s: the server ran INCR", n, got, err, wantN)
		}
	}
	tx := c.NewTransaction()
	incr := tx.Do(NewCommand("INCR"), n)
	err := tx.Execute(ctx)
	check(t, err, "1")
	if err := incr.Err(); err == nil || !MayHaveExecuted(err) {
		t.Errorf("the member's result: %v, want an error that may have executed", err)
	}
	runs := 0
	err = c.Watch(ctx, func(tx *Tx) error {
		runs++
		tx.Queue().Do(NewCommand("INCR"), n)
		return nil
	}, n)
	check(t, err, "2")
	if runs != 1 {
		t.Errorf("Watch ran its callback %d times, want once", runs)
	}
}

// A cached read whose CLIENT CACHING YES (sent ahead of it in the same
// frame) the ACL refuses gets its own reply, uncached, as when a PTTL is
// refused: not the refusal of a command the caller did not send, with
// the read's reply dropped. The read's own error is still its caller's.
func TestACLCachedReadCachingRefused(t *testing.T) {
	addr := standaloneAddr(t)
	user, pw := aclUser(t, []string{addr}, "~*", "&*", "+@all", "-client|caching")
	c := newClient(t, Options{Username: user, Password: pw, ClientCache: &CacheOptions{}})
	ctx := testCtx(t)
	k, list := key(t, "k"), key(t, "list")
	if err := c.Set(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, NewCommand("RPUSH"), list, "x"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustGetCached(t, c, k, "v")
	}
	if n := c.cache.len(); n != 0 {
		t.Errorf("%d entries cached without tracking, want none", n)
	}
	if _, err := c.GetCached(ctx, key(t, "missing")); !errors.Is(err, ErrNil) {
		t.Errorf("GetCached of a missing key = %v, want ErrNil", err)
	}
	if _, err := c.GetCached(ctx, list); !errors.Is(err, &ServerError{Code: "WRONGTYPE", Command: "GET"}) {
		t.Errorf("GetCached of a list = %v, want the server's WRONGTYPE for GET", err)
	}
}
