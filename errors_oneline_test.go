package respire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// oneLine fails the test unless err's text is one line that starts with
// "respire: ", says it once, contains each of parts and matches each of
// is with errors.Is.
func oneLine(t *testing.T, name string, err error, parts []string, is ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	msg := err.Error()
	t.Logf("%s: %s", name, msg)
	if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "respire: ") || strings.Count(msg, "respire:") != 1 {
		t.Errorf("%s: %q, want one line saying \"respire: \" once, first", name, msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s: %q, want it to contain %q", name, msg, p)
		}
	}
	for _, target := range is {
		if !errors.Is(err, target) {
			t.Errorf("%s: %q does not match %v", name, msg, target)
		}
	}
}

// noJargon fails the test if err's text shows the transport's evidence
// word "(unwritten)", noise for a connection that was never made.
func noJargon(t *testing.T, name string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "(unwritten)") {
		t.Errorf("%s: %q, want no \"(unwritten)\"", name, err)
	}
}

// TestErrorsWithSeveralCausesAreOneLine: an error that wraps a sentinel
// and its detail, or several failures at once, is said on one line with
// "respire:" once, names the command or servers, and still matches each
// error it wraps: a standalone reply the client cannot parse, a command
// of a Dedicated connection whose callback returned, an unserved Cluster
// slot, a malformed redirect, a Cluster batch whose groups all failed,
// Connect to dead Cluster seeds, a handshake that outlived DialTimeout, a
// failover group with no reachable member.
func TestErrorsWithSeveralCausesAreOneLine(t *testing.T) {
	ctx := testCtx(t)
	noRetry := &RetryPolicy{MaxAttempts: 1}

	t.Run("ProtocolReply", func(t *testing.T) {
		srv := respiretest.NewServer(t)
		c := newClient(t, Options{Endpoints: []string{srv.Addr()}, MaxBulk: 1024})
		big := strings.Repeat("x", 2048)
		srv.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Reply([]byte("$2048\r\n" + big + "\r\n"))})
		_, err := c.Get(ctx, "oneline:k")
		oneLine(t, "GET", err, []string{"GET", "protocol error"}, ErrProtocol, ErrConnectionLost)
	})

	t.Run("DedicatedAfterCallback", func(t *testing.T) {
		c := newClient(t, Options{Endpoints: []string{respiretest.NewServer(t).Addr()}})
		var kept *Conn
		if err := c.Dedicated(ctx, func(conn *Conn) error { kept = conn; return nil }); err != nil {
			t.Fatal(err)
		}
		_, err := kept.Do(ctx, catalog.String.GET(), "oneline:k")
		oneLine(t, "GET", err, []string{"GET", "Dedicated callback has returned"}, ErrClosed, ErrConnectionLost)
	})

	t.Run("UnservedSlot", func(t *testing.T) {
		g := gappedCluster(t, Options{Cluster: &ClusterOptions{RefreshInterval: NoTimeout}})
		_, err := g.c.Get(ctx, g.gap)
		oneLine(t, "GET", err, []string{"GET", "no node"}, ErrNoRoute, route.ErrNoRoute)
	})

	t.Run("MalformedRedirect", func(t *testing.T) {
		c, proxies := proxiedClusterNodes(t, Options{RetryPolicy: noRetry}, true)
		k := keyPrefix(t) + "k"
		for _, p := range proxies {
			p.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: k, Times: respiretest.Always, Action: respiretest.Inject("MOVED nonsense")})
		}
		_, err := c.Get(ctx, k)
		oneLine(t, "GET", err, []string{"GET", "MOVED nonsense"}, ErrProtocol, route.ErrBadRedirect)
	})

	t.Run("ClusterBatchGroups", func(t *testing.T) {
		c, proxies := proxiedClusterNodes(t, Options{RetryPolicy: noRetry}, false)
		a, other := ownerAndOther(t, c, 0)
		k1, _ := keyOn(t, c, a.Addr)
		k2, _ := keyOn(t, c, other)
		for _, p := range proxies {
			p.MustAddRule(t, respiretest.Rule{Command: "GET", Times: respiretest.Always, Action: respiretest.DropBeforeForward})
		}
		b := c.NewBatch()
		b.Get(k1)
		b.Get(k2)
		err := b.Execute(ctx)
		oneLine(t, "batch", err, []string{"batch"}, ErrConnectionLost)
	})

	t.Run("DeadClusterSeeds", func(t *testing.T) {
		a, b := freeAddr(t), freeAddr(t)
		_, err := Connect(ctx, Options{Endpoints: []string{a, b}, Cluster: &ClusterOptions{}})
		oneLine(t, "Connect", err, []string{"connect", a, b}, ErrConnectionLost)
		noJargon(t, "Connect", err)
	})

	t.Run("DeadSentinels", func(t *testing.T) {
		a, b := freeAddr(t), freeAddr(t)
		_, err := Connect(ctx, Options{Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{a, b}}})
		oneLine(t, "Connect", err, []string{"connect", "sentinel " + a, "sentinel " + b}, ErrConnectionLost)
		noJargon(t, "Connect", err)
	})

	t.Run("HandshakeTimeout", func(t *testing.T) {
		srv := respiretest.NewServer(t)
		held := srv.MustAddRule(t, respiretest.Rule{Command: "HELLO", Times: respiretest.Always, Action: respiretest.Hold})
		t.Cleanup(held.Release)
		_, err := Connect(ctx, Options{Endpoints: []string{srv.Addr()}, DialTimeout: 50 * time.Millisecond})
		oneLine(t, "Connect", err, []string{"connect", srv.Addr()}, ErrConnectionLost, context.DeadlineExceeded)
		// The caller's context, not DialTimeout, ends the handshake.
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = Connect(short, Options{Endpoints: []string{srv.Addr()}})
		oneLine(t, "Connect", err, []string{"connect: could not connect to " + srv.Addr()}, ErrConnectionLost, context.DeadlineExceeded)
		if MayHaveExecuted(err) {
			t.Errorf("Connect = %v, want it not executed", err)
		}
	})

	t.Run("FailoverNoMember", func(t *testing.T) {
		a, b := freeAddr(t), freeAddr(t)
		_, err := NewFailoverGroup(ctx, []FailoverMember{{Options: Options{Endpoints: []string{a}}}, {Options: Options{Endpoints: []string{b}}}}, FailoverGroupOptions{})
		oneLine(t, "NewFailoverGroup", err, []string{a, b}, ErrNoHealthyMember, ErrConnectionLost)
	})
}

// TestCrossSlotErrorsAreOneLine: on a Cluster client, a transaction, a
// Dedicated connection and a shard subscription whose keys or channels
// are in different slots fail before sending with one line that names the
// command and says why, matching ErrCrossSlot and ErrInvalidArgument.
func TestCrossSlotErrorsAreOneLine(t *testing.T) {
	ctx := testCtx(t)
	c := clusterClient(t, Options{})
	a, other := ownerAndOther(t, c, 0)
	k1, _ := keyOn(t, c, a.Addr)
	k2, _ := keyOn(t, c, other)

	tx := c.NewTransaction()
	tx.Get(k1)
	tx.Get(k2)
	oneLine(t, "transaction", tx.Execute(ctx), []string{"MULTI", "one slot"}, ErrCrossSlot, ErrInvalidArgument)

	err := c.Dedicated(ctx, func(conn *Conn) error {
		if _, err := conn.Do(ctx, catalog.String.GET(), k1); err != nil && !errors.Is(err, ErrNil) {
			t.Fatal(err)
		}
		_, err := conn.Do(ctx, catalog.String.GET(), k2)
		return err
	})
	oneLine(t, "Dedicated", err, []string{"GET", a.Addr, other}, ErrCrossSlot, ErrInvalidArgument)

	_, err = c.SSubscribe(ctx, k1, k2)
	oneLine(t, "SSubscribe", err, []string{"SSUBSCRIBE", "one slot"}, ErrCrossSlot, ErrInvalidArgument)
}

// TestWatchErrorsNameWatch: Watch on a closed client, or with a context
// that has already ended, fails naming WATCH, the call the user made, not
// the Dedicated connection it borrows; the errors match ErrClosed and
// context.Canceled, and nothing was sent.
func TestWatchErrorsNameWatch(t *testing.T) {
	c := newClient(t, Options{Endpoints: []string{respiretest.NewServer(t).Addr()}})
	ended, cancel := context.WithCancel(testCtx(t))
	cancel()
	noop := func(*Tx) error { return nil }
	err := c.Watch(ended, noop, "oneline:k")
	wantText(t, "ended context", err, "respire: WATCH: context canceled")
	if !errors.Is(err, context.Canceled) || MayHaveExecuted(err) {
		t.Errorf("ended context: %v, want context.Canceled, not executed", err)
	}
	_ = c.Close()
	err = c.Watch(testCtx(t), noop, "oneline:k")
	wantText(t, "closed", err, "respire: WATCH: not sent: client closed")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("closed: %v, want ErrClosed, not executed", err)
	}
}

// TestClosedPartsSayWhatClosed: a call on a closed Subscription, or a
// command of a Dedicated connection whose callback has returned, says
// what was closed, not that the client was (it was not); both match
// ErrClosed and were not sent.
func TestClosedPartsSayWhatClosed(t *testing.T) {
	ctx := testCtx(t)
	c := newClient(t, Options{Endpoints: []string{respiretest.NewServer(t).Addr()}})
	s, err := c.Subscribe(ctx, "oneline:ch")
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	err = s.Subscribe(ctx, "oneline:ch2")
	wantText(t, "Subscription.Subscribe", err, "respire: SUBSCRIBE: not sent: the subscription is closed")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("Subscription.Subscribe: %v, want ErrClosed, not executed", err)
	}
	var kept *Conn
	if err := c.Dedicated(ctx, func(conn *Conn) error { kept = conn; return nil }); err != nil {
		t.Fatal(err)
	}
	_, err = kept.Do(ctx, catalog.String.GET(), "oneline:k")
	wantText(t, "Dedicated", err, "respire: GET: not sent: the Dedicated callback has returned")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("Dedicated: %v, want ErrClosed, not executed", err)
	}
}

// TestNotExecutedMemberDidNotRun: a batch member read before Execute
// fails with ErrNotExecuted, and MayHaveExecuted says it did not run
// (nothing was sent).
func TestNotExecutedMemberDidNotRun(t *testing.T) {
	c := newClient(t, Options{Endpoints: []string{respiretest.NewServer(t).Addr()}})
	_, err := c.NewBatch().Get("oneline:k").Result()
	if !errors.Is(err, ErrNotExecuted) || MayHaveExecuted(err) {
		t.Errorf("member read before Execute: %v (may have executed: %v), want ErrNotExecuted, not executed", err, MayHaveExecuted(err))
	}
}

// TestClosedFailoverGroupSaysTheGroupIsClosed: Execute and ActiveClient
// on a closed FailoverGroup say that the group is closed (its members'
// clients are, but the caller closed the group), matching ErrClosed, not
// executed; a Close during Execute's backoff says so before the failure
// it was waiting to retry after.
func TestClosedFailoverGroupSaysTheGroupIsClosed(t *testing.T) {
	ctx := testCtx(t)
	g, err := NewFailoverGroup(ctx, []FailoverMember{{Options: Options{Endpoints: []string{respiretest.NewServer(t).Addr()}}}}, FailoverGroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = g.Close()
	_, err = Execute(ctx, g, ReadOnly, func(ctx context.Context, c *Client) (int, error) { return 0, nil })
	wantText(t, "Execute", err, "respire: failover group: not sent: the group is closed")
	if !errors.Is(err, ErrClosed) || MayHaveExecuted(err) {
		t.Errorf("Execute: %v, want ErrClosed, not executed", err)
	}
	_, err = g.ActiveClient()
	wantText(t, "ActiveClient", err, "respire: failover group: not sent: the group is closed")
	lost := &ConnError{Command: "GET", Err: errors.New("EOF"), lost: true}
	err = closedWhileWaiting(groupCommand, errGroupClosed, true, lost)
	wantText(t, "backoff", err, "respire: failover group: the group is closed (the command may have been executed) while waiting to retry after: GET: connection lost; the command may have been executed: EOF")
	if !errors.Is(err, ErrClosed) {
		t.Errorf("backoff: %v, want ErrClosed", err)
	}
}
