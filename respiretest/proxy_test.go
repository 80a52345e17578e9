package respiretest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real-server tests compare INFO commandstats before and after, rather
// than CONFIG RESETSTAT, so they never disturb other packages' tests that
// share the server; they hold the shared servers exclusively
// (countsCommands, first in the test), so no other package's test sends
// meanwhile.

// realProxy starts a proxy in front of the real server.
func realProxy(t *testing.T, opts ...Option) (*Proxy, string) {
	t.Helper()
	addr := standalone(t)
	p, err := NewProxy(addr, opts...)
	if err != nil {
		t.Fatalf("NewProxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, addr
}

// key returns a key unique to the test.
func key(t *testing.T, suffix string) string {
	return "respiretest:" + t.Name() + ":" + suffix
}

func TestProxyForwardsInOrderAndCounts(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "s")
	direct := dialTCP(t, addr)
	direct.do("DEL", k)
	before := commandstats(t, addr)

	c := dialProxy(t, p)
	c.send([]string{"SETRANGE", k, "0", "abc"}, []string{"SETRANGE", k, "3", "def"},
		[]string{"GETRANGE", k, "0", "-1"}, []string{"PING"})
	var got []string
	for range 4 {
		got = append(got, text(c.mustRead()))
	}
	if want := "3 6 abcdef PONG"; strings.Join(got, " ") != want {
		t.Fatalf("pipelined replies = %q, want %q", strings.Join(got, " "), want)
	}
	delta := statsDelta(before, commandstats(t, addr))
	for _, cmd := range []string{"SETRANGE", "GETRANGE"} {
		st := p.Stats(cmd)
		if st.Received != st.Forwarded || int(st.Forwarded) != delta[cmd] {
			t.Errorf("%s: proxy %+v, server executed %d", cmd, st, delta[cmd])
		}
	}
	if got := p.Stats("setrange").Forwarded; got != 2 {
		t.Errorf("Stats(setrange).Forwarded = %d, want 2", got)
	}
	var sum int64
	for _, st := range p.AllStats() {
		sum += st.Forwarded
	}
	if got := p.Stats("").Forwarded; got != sum || got < 4 {
		t.Errorf(`Stats("").Forwarded = %d, want every command's frames (%d, at least the 4 sent here)`, got, sum)
	}
}

func TestDropBeforeForwardNeverReachesServer(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "s")
	direct := dialTCP(t, addr)
	direct.do("SET", k, "old")
	before := commandstats(t, addr)
	r := p.MustAddRule(t, Rule{Command: "SETRANGE", Arg: k, Action: DropBeforeForward})

	c := dialProxy(t, p)
	c.send([]string{"GETRANGE", k, "0", "-1"}, []string{"SETRANGE", k, "0", "new"}, []string{"GETRANGE", k, "0", "-1"})
	if got := text(c.mustRead()); got != "old" {
		t.Fatalf("reply to the frame before the drop = %q, want old", got)
	}
	c.expectClosed()
	<-r.Received()

	if got := direct.do("GET", k); got != "old" {
		t.Errorf("value = %q, want old (the dropped SETRANGE must not run)", got)
	}
	delta := statsDelta(before, commandstats(t, addr))
	if delta["SETRANGE"] != 0 || delta["GETRANGE"] != 1 {
		t.Errorf("server executed SETRANGE %d, GETRANGE %d times; want 0 and 1 (nothing after the drop is forwarded)",
			delta["SETRANGE"], delta["GETRANGE"])
	}
	if r.Matched() != 1 || r.Applied() != 1 || r.Forwarded() != 0 {
		t.Errorf("rule matched %d applied %d forwarded %d, want 1 1 0", r.Matched(), r.Applied(), r.Forwarded())
	}
}

func TestDropAfterForwardRunsCommandAndLosesReply(t *testing.T) {
	countsCommands(t)
	// PSETEX and SUBSTR (GETRANGE's old name): no other package's tests
	// use them, so the server-wide commandstats delta is this test's alone.
	p, addr := realProxy(t)
	k := key(t, "s")
	direct := dialTCP(t, addr)
	direct.do("SET", k, "old")
	before := commandstats(t, addr)
	r := p.MustAddRule(t, Rule{Command: "PSETEX", Arg: k, Action: DropAfterForward})

	c := dialProxy(t, p)
	c.send([]string{"PSETEX", k, "100000", "new"}, []string{"SUBSTR", k, "0", "-1"})
	c.expectClosed()

	if got := direct.do("GET", k); got != "new" {
		t.Errorf("value = %q, want new (the command ran)", got)
	}
	delta := statsDelta(before, commandstats(t, addr))
	if delta["PSETEX"] != 1 || delta["SUBSTR"] != 0 {
		t.Errorf("server executed PSETEX %d, SUBSTR %d times; want 1 and 0", delta["PSETEX"], delta["SUBSTR"])
	}
	if r.Forwarded() != 1 || p.Forwarded("SUBSTR") != 0 {
		t.Errorf("rule forwarded %d, SUBSTR forwarded %d; want 1 and 0", r.Forwarded(), p.Forwarded("SUBSTR"))
	}
}

// TestLoseReplyRunsThePipelineAndLosesItsReplies: a pipeline sent in one
// write, whose middle frame is LoseReply, runs whole on the server; the
// client gets the reply of the frame before it, then the connection closes.
func TestLoseReplyRunsThePipelineAndLosesItsReplies(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "s")
	direct := dialTCP(t, addr)
	direct.do("SET", k, "old")
	before := commandstats(t, addr)
	r := p.MustAddRule(t, Rule{Command: "PSETEX", Arg: k, Action: LoseReply})

	c := dialProxy(t, p)
	c.send([]string{"SUBSTR", k, "0", "-1"}, []string{"PSETEX", k, "100000", "new"}, []string{"SUBSTR", k, "0", "-1"})
	if v := c.mustRead(); text(v) != "old" {
		t.Errorf("first reply = %q, want old (delivered before the lost one)", text(v))
	}
	c.expectClosed()

	delta := statsDelta(before, commandstats(t, addr))
	if delta["PSETEX"] != 1 || delta["SUBSTR"] != 2 {
		t.Errorf("server executed PSETEX %d, SUBSTR %d times; want 1 and 2 (the frame after the lost reply ran too)", delta["PSETEX"], delta["SUBSTR"])
	}
	if r.Forwarded() != 1 || p.Forwarded("SUBSTR") != 2 {
		t.Errorf("rule forwarded %d, SUBSTR forwarded %d; want 1 and 2", r.Forwarded(), p.Forwarded("SUBSTR"))
	}
}

func TestInjectAnswersWithoutForwarding(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "s")
	cases := []struct {
		arg    string
		action Action
		want   string
	}{
		{"loading", Inject(ErrLoading), "-LOADING Redis is loading the dataset in memory"},
		{"readonly", Inject(ErrReadOnly), "-READONLY You can't write against a read only replica."},
		{"masterdown", Inject(ErrMasterDown), "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."},
		{"tryagain", Inject(ErrTryAgain), "-TRYAGAIN Multiple keys request during rehashing of slot"},
		{"busy", Inject(ErrBusy), "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."},
		{"clusterdown", Inject(ErrClusterDown), "-CLUSTERDOWN The cluster is down"},
		{"moved", Inject(Moved(12439, "127.0.0.1:7302")), "-MOVED 12439 127.0.0.1:7302"},
		{"ask", Inject(Ask(15891, "127.0.0.1:7300")), "-ASK 15891 127.0.0.1:7300"},
		{"any", Inject("ERR anything\r\nat all"), "-ERR anything  at all"},
		{"reply", Reply([]byte(":42\r\n")), "42"},
	}
	before := commandstats(t, addr)
	c := dialProxy(t, p)
	for _, tc := range cases {
		p.MustAddRule(t, Rule{Command: "pfcount", Arg: k + tc.arg, Action: tc.action})
	}
	for _, tc := range cases {
		if got := c.do("PFCOUNT", k+tc.arg); got != tc.want {
			t.Errorf("%s: reply %q, want %q", tc.arg, got, tc.want)
		}
	}
	if got := c.do("PFCOUNT", k+"plain"); got != "0" {
		t.Errorf("unmatched PFCOUNT = %q, want 0", got)
	}
	if delta := statsDelta(before, commandstats(t, addr)); delta["PFCOUNT"] != 1 {
		t.Errorf("server executed PFCOUNT %d times, want 1 (only the unmatched one)", delta["PFCOUNT"])
	}
	if st := p.Stats("PFCOUNT"); st.Received != int64(len(cases)+1) || st.Forwarded != 1 {
		t.Errorf("Stats(PFCOUNT) = %+v, want received %d forwarded 1", st, len(cases)+1)
	}
}

func TestNthAndTimes(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "s")
	dialTCP(t, addr).do("DEL", k)
	before := commandstats(t, addr)
	r := p.MustAddRule(t, Rule{Command: "SETRANGE", Nth: 2, Times: 2, Action: Inject(ErrLoading)})
	always := p.MustAddRule(t, Rule{Command: "GETRANGE", Nth: 3, Times: Always, Action: Inject(ErrTryAgain)})
	c := dialProxy(t, p)
	var got []string
	for i := range 5 {
		got = append(got, c.do("SETRANGE", k, "0", fmt.Sprint(i)))
		got = append(got, c.do("GETRANGE", k, "0", "-1"))
	}
	want := []string{
		"1", "0",
		"-" + ErrLoading, "0",
		"-" + ErrLoading, "-" + ErrTryAgain,
		"1", "-" + ErrTryAgain,
		"1", "-" + ErrTryAgain,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replies\n got %q\nwant %q", got, want)
	}
	if r.Matched() != 5 || r.Applied() != 2 || r.Forwarded() != 3 {
		t.Errorf("Nth 2 Times 2: matched %d applied %d forwarded %d, want 5 2 3", r.Matched(), r.Applied(), r.Forwarded())
	}
	if always.Applied() != 3 || always.Forwarded() != 2 {
		t.Errorf("Always from 3: applied %d forwarded %d, want 3 2", always.Applied(), always.Forwarded())
	}
	delta := statsDelta(before, commandstats(t, addr))
	if delta["SETRANGE"] != r.Forwarded() || delta["GETRANGE"] != always.Forwarded() {
		t.Errorf("server executed SETRANGE %d GETRANGE %d, proxy forwarded %d %d",
			delta["SETRANGE"], delta["GETRANGE"], r.Forwarded(), always.Forwarded())
	}
}

func TestFirstActingRuleWinsAndPassRulesAllFire(t *testing.T) {
	p, _ := realProxy(t)
	var mu sync.Mutex
	var seen [][]string
	pass := p.MustAddRule(t, Rule{Command: "ECHO", Times: Always, Action: Pass, OnReceive: func(args []string) {
		mu.Lock()
		seen = append(seen, args)
		mu.Unlock()
	}})
	first := p.MustAddRule(t, Rule{Command: "ECHO", Action: Inject("ERR first")})
	second := p.MustAddRule(t, Rule{Command: "ECHO", Times: 2, Action: Inject("ERR second")})
	c := dialProxy(t, p)
	got := []string{c.do("ECHO", "a"), c.do("ECHO", "b"), c.do("ECHO", "c")}
	if want := "-ERR first|-ERR second|c"; strings.Join(got, "|") != want {
		t.Fatalf("replies %q, want %q", strings.Join(got, "|"), want)
	}
	<-pass.Received()
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != "[[ECHO a] [ECHO b] [ECHO c]]" {
		t.Errorf("OnReceive saw %v", seen)
	}
	if first.Applied() != 1 || second.Applied() != 1 || second.Matched() != 3 {
		t.Errorf("first applied %d, second applied %d matched %d; want 1 1 3", first.Applied(), second.Applied(), second.Matched())
	}
	if pass.Forwarded() != 1 {
		t.Errorf("pass rule forwarded %d, want 1", pass.Forwarded())
	}
}

func TestHoldKeepsReplyAndLaterOnesUntilRelease(t *testing.T) {
	p, addr := realProxy(t)
	k := key(t, "s")
	dialTCP(t, addr).do("SET", k, "v")
	r := p.MustAddRule(t, Rule{Command: "GETRANGE", Action: Hold})
	c := dialProxy(t, p)
	c.send([]string{"GETRANGE", k, "0", "-1"}, []string{"PING"})
	<-r.Received()
	// A negative check needs some wait; it is an assertion, not
	// synchronisation (the synctest variant proves it exactly).
	_ = c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if v, err := c.read(); err == nil {
		t.Fatalf("got %q before Release", text(v))
	}
	_ = c.conn.SetReadDeadline(time.Time{})
	c.rd.Reset(c.conn) // the timed-out read poisoned the reader; nothing had arrived
	r.Release()
	r.Release() // a second release does nothing
	if got := text(c.mustRead()) + " " + text(c.mustRead()); got != "v PONG" {
		t.Fatalf("after Release got %q, want \"v PONG\"", got)
	}
	if got := c.do("GETRANGE", k, "0", "-1"); got != "v" {
		t.Fatalf("a released Hold rule must not hold again: %q", got)
	}
}

func TestDelayRealTime(t *testing.T) {
	p, _ := realProxy(t)
	p.MustAddRule(t, Rule{Command: "PING", Action: Delay(50 * time.Millisecond)})
	c := dialProxy(t, p)
	start := time.Now()
	if got := c.do("PING"); got != "PONG" {
		t.Fatalf("PING = %q", got)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("delayed reply after %v, want >= 50ms", d)
	}
}

// trackingClient dials p and turns on RESP3 and CLIENT TRACKING.
func trackingClient(t *testing.T, p *Proxy) *client {
	t.Helper()
	c := dialProxy(t, p)
	c.send([]string{"HELLO", "3"})
	if v := c.mustRead(); v.IsError() {
		t.Fatalf("HELLO 3: %s", text(v))
	}
	if got := c.do("CLIENT", "TRACKING", "ON"); got != "OK" {
		t.Fatalf("CLIENT TRACKING ON = %q", got)
	}
	return c
}

func TestPushFramesAreNotPairedOrHeld(t *testing.T) {
	p, addr := realProxy(t)
	k := key(t, "tracked")
	c := trackingClient(t, p)
	c.do("GET", k)
	r := p.MustAddRule(t, Rule{Command: "ECHO", Action: Hold})
	// A pipeline behind the held reply: its replies wait, in order.
	c.send([]string{"ECHO", "held"}, []string{"GET", k}, []string{"PING"})
	<-r.Received()
	if got := dialTCP(t, addr).do("SET", k, "x"); got != "OK" {
		t.Fatalf("SET = %q", got)
	}
	push := c.mustRead()
	if push.Type != '>' || text(push) != fmt.Sprintf("[invalidate [%s]]", k) {
		t.Fatalf("got %v %q while the ECHO reply is held, want the invalidation push", push.Type, text(push))
	}
	r.Release()
	got := []string{text(c.mustRead()), text(c.mustRead()), text(c.mustRead())}
	if got[0] != "held" || (got[1] != "(nil)" && got[1] != "x") || got[2] != "PONG" {
		t.Fatalf("replies after Release = %q, want held, the GET's (nil or x), PONG", got)
	}
}

func TestSubscribePassesThrough(t *testing.T) {
	p, addr := realProxy(t)
	ch := key(t, "ch")
	c := dialProxy(t, p)
	c.send([]string{"SUBSCRIBE", ch})
	if got := text(c.mustRead()); got != fmt.Sprintf("[subscribe %s 1]", ch) {
		t.Fatalf("SUBSCRIBE = %q", got)
	}
	if got := dialTCP(t, addr).do("PUBLISH", ch, "hello"); got != "1" {
		t.Fatalf("PUBLISH reached %s subscribers, want 1", got)
	}
	if got := text(c.mustRead()); got != fmt.Sprintf("[message %s hello]", ch) {
		t.Fatalf("message = %q", got)
	}
	c.send([]string{"PING"})
	if got := text(c.mustRead()); got != "[pong ]" {
		t.Fatalf("PING in subscribe mode = %q", got)
	}
}

// On SUBSCRIBE and MONITOR only the actions that do not forward take
// effect: the frames that drop or lose the reply after forwarding pass
// through, and the connection keeps serving the client.
func TestForwardingDropsDoNotApplyToSubscribe(t *testing.T) {
	for _, action := range []Action{DropAfterForward, LoseReply} {
		t.Run(action.String(), func(t *testing.T) {
			p, _ := realProxy(t)
			r := p.MustAddRule(t, Rule{Command: "SUBSCRIBE", Action: action})
			ch := key(t, "ch")
			c := dialProxy(t, p)
			c.send([]string{"SUBSCRIBE", ch})
			if got := text(c.mustRead()); got != fmt.Sprintf("[subscribe %s 1]", ch) {
				t.Fatalf("SUBSCRIBE = %q", got)
			}
			_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			c.send([]string{"PING"})
			v, err := c.read()
			if err != nil {
				t.Fatalf("PING after a SUBSCRIBE the rule matched: %v; want its reply", err)
			}
			if got := text(v); got != "[pong ]" {
				t.Fatalf("PING in subscribe mode = %q", got)
			}
			if r.Applied() != 1 {
				t.Fatalf("Applied() = %d, want 1", r.Applied())
			}
		})
	}
}

func TestHoldDialsTCP(t *testing.T) {
	p, _ := realProxy(t)
	g := p.HoldDials()
	c := dialProxy(t, p) // the TCP connect succeeds; the proxy holds the session
	c.send([]string{"PING"})
	<-g.Arrived()
	if g.Held() != 1 {
		t.Fatalf("Held() = %d, want 1", g.Held())
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if v, err := c.read(); err == nil {
		t.Fatalf("held connection answered %q", text(v))
	}
	_ = c.conn.SetReadDeadline(time.Time{})
	c.rd.Reset(c.conn)
	g.Release()
	g.Release() // no-op
	if got := text(c.mustRead()); got != "PONG" {
		t.Fatalf("after Release: %q", got)
	}
	if got := dialProxy(t, p).do("PING"); got != "PONG" {
		t.Fatalf("a released gate must not hold new dials: %q", got)
	}
}

func TestRefuseDialsTCP(t *testing.T) {
	p, _ := realProxy(t)
	if err := p.RefuseDials(-1); err == nil {
		t.Fatal("RefuseDials(-1) succeeded, want an error")
	}
	if err := p.RefuseDials(2); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		// The reset can reach the client during connect, on write or on
		// read; any of them is a refusal.
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			continue
		}
		c := newClient(t, conn)
		_, _ = c.conn.Write(encode("PING"))
		if _, err := c.read(); err == nil {
			t.Fatalf("refused connection %d answered", i+1)
		}
	}
	if got := dialProxy(t, p).do("PING"); got != "PONG" {
		t.Fatalf("third connection: %q", got)
	}
}

func TestCloseReleasesHeldRepliesAndDials(t *testing.T) {
	addr := standalone(t)
	p, err := NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	r := p.MustAddRule(t, Rule{Command: "PING", Action: Hold})
	c := dialProxy(t, p)
	c.send([]string{"PING"})
	<-r.Received()
	g := p.HoldDials()
	tcp := dialProxy(t, p) // held at the proxy
	dialErr := make(chan error, 1)
	go func() {
		conn, err := p.Dial(context.Background(), "", "")
		if conn != nil {
			conn.Close()
		}
		dialErr <- err
	}()
	<-g.Arrived()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-dialErr; !errors.Is(err, ErrClosed) {
		t.Errorf("held Dial returned %v, want ErrClosed", err)
	}
	c.expectClosed()
	tcp.expectClosed()
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := p.AddRule(Rule{Action: Pass}); !errors.Is(err, ErrClosed) {
		t.Errorf("AddRule after Close: %v, want ErrClosed", err)
	}
}

func TestBadInput(t *testing.T) {
	p, err := NewProxy("", InMemory())
	if err == nil {
		p.Close()
		t.Fatal("NewProxy without a backend succeeded")
	}
	p, err = NewProxy("127.0.0.1:1", InMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	bad := []Rule{
		{Command: "GET"}, // no action
		{Command: "GET", Action: Action{kind: actMax + 3}},        // unknown action
		{Command: "GET", Nth: -1, Action: Pass},                   // negative Nth
		{Command: "GET", Times: -2, Action: Pass},                 // negative count
		{Command: "GET", Action: Inject("")},                      // empty error
		{Command: "GET", Action: Delay(-time.Second)},             // negative delay
		{Command: "GET", Action: Reply([]byte("+OK\r\n+OK\r\n"))}, // two values
		{Command: "GET", Action: Reply([]byte("$3\r\nab"))},       // truncated
		{Command: "CLIENT SETNAME", Action: Pass},                 // a subcommand: never the first word
		{Command: "client|setname", Action: Pass},                 // the same, as INFO commandstats spells it
	}
	for _, r := range bad {
		if h, err := p.AddRule(r); !errors.Is(err, ErrInvalidRule) || h != nil {
			t.Errorf("AddRule(%v) = %v, %v; want ErrInvalidRule", r.Action, h, err)
		}
	}
	h, err := p.AddRule(Rule{Command: "GET", Action: Pass})
	if err != nil {
		t.Fatal(err)
	}
	h.Release() // not a Hold rule: no-op
	h.Remove()
	h.Remove() // no-op
	g := p.HoldDials()
	g.Release()
	g.Release() // no-op
	if err := p.RefuseDials(1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dial(context.Background(), "tcp", p.Addr()); !errors.Is(err, ErrDialRefused) {
		t.Errorf("refused Dial: %v, want ErrDialRefused", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.HoldDials()
	if _, err := p.Dial(ctx, "tcp", p.Addr()); !errors.Is(err, context.Canceled) {
		t.Errorf("held Dial with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestCommandStatsAgreeWithForwardedCounts(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t)
	k := key(t, "")
	before := commandstats(t, addr)
	p.MustAddRule(t, Rule{Command: "PFADD", Nth: 3, Action: DropBeforeForward})
	p.MustAddRule(t, Rule{Command: "PFADD", Nth: 7, Action: DropAfterForward})
	p.MustAddRule(t, Rule{Command: "ZINCRBY", Nth: 2, Times: 3, Action: Inject(ErrReadOnly)})
	p.MustAddRule(t, Rule{Command: "ZINCRBY", Nth: 9, Action: DropAfterForward})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *client
			for i := range 8 {
				if c == nil {
					conn, err := net.Dial("tcp", p.Addr())
					if err != nil {
						t.Error(err)
						return
					}
					c = &client{t: t, conn: conn, rd: nil}
					c.rd = newClient(t, conn).rd
				}
				cmd := []string{"PFADD", fmt.Sprint(k, w), fmt.Sprint(i)}
				if i%2 == 1 {
					cmd = []string{"ZINCRBY", fmt.Sprint(k, "z", w), "1", "m"}
				}
				c.send(cmd)
				if _, err := c.read(); err != nil {
					c.conn.Close()
					c = nil // dropped: reconnect
				}
			}
		}()
	}
	wg.Wait()
	delta := statsDelta(before, commandstats(t, addr))
	for _, cmd := range []string{"PFADD", "ZINCRBY"} {
		st := p.Stats(cmd)
		if int(st.Forwarded) != delta[cmd] {
			t.Errorf("%s: proxy forwarded %d, INFO commandstats says %d calls", cmd, st.Forwarded, delta[cmd])
		}
		if st.Received != 12 {
			t.Errorf("%s: received %d, want 12", cmd, st.Received)
		}
	}
	if got := p.Stats("PFADD").Forwarded; got != 11 {
		t.Errorf("PFADD forwarded %d, want 11 (one dropped before forwarding)", got)
	}
	if got := p.Stats("ZINCRBY").Forwarded; got != 9 {
		t.Errorf("ZINCRBY forwarded %d, want 9 (three injected)", got)
	}
}

func TestReceivedMeansEarlierFramesWereForwarded(t *testing.T) {
	p, addr := realProxy(t)
	k := key(t, "s")
	r := p.MustAddRule(t, Rule{Command: "GETRANGE", Action: Hold})
	c := dialProxy(t, p)
	c.send([]string{"SETRANGE", k, "0", "x"}, []string{"GETRANGE", k, "0", "-1"})
	<-r.Received()
	if got := p.Forwarded("SETRANGE"); got != 1 {
		t.Fatalf("SETRANGE forwarded %d when GETRANGE was signalled, want 1", got)
	}
	r.Remove()
	r.Release()
	wantReply(t, "SETRANGE", text(c.mustRead()), "1")
	wantReply(t, "GETRANGE", text(c.mustRead()), "x")
	wantReply(t, "after Remove", c.do("GETRANGE", k, "0", "-1"), "x")
	if r.Matched() != 1 {
		t.Fatalf("a removed rule matched %d frames, want 1", r.Matched())
	}
	dialTCP(t, addr).do("DEL", k)
}

// A server that answers and then closes (QUIT) is seen to do both.
func TestBackendCloseDeliversRepliesFirst(t *testing.T) {
	p, _ := realProxy(t)
	c := dialProxy(t, p)
	c.send([]string{"PING"}, []string{"QUIT"}, []string{"PING"})
	wantReply(t, "PING", text(c.mustRead()), "PONG")
	wantReply(t, "QUIT", text(c.mustRead()), "OK")
	c.expectClosed()

	s := NewServer(t, InMemory())
	c = dialProxy(t, s.Proxy)
	c.send([]string{"QUIT"})
	wantReply(t, "QUIT on the kit's server", text(c.mustRead()), "OK")
	c.expectClosed()
}

// A client that sends its frames and then shuts its writing half (as
// "printf 'PING\r\n' | nc -N" does) still gets their replies, as a real
// server gives them, and then the connection closes.
func TestClientHalfCloseStillGetsReplies(t *testing.T) {
	p, addr := realProxy(t)
	for _, target := range []struct{ name, addr string }{{"server", addr}, {"proxy", p.Addr()}} {
		c := dialTCP(t, target.addr)
		c.send([]string{"PING"}, []string{"ECHO", "half"})
		c.halfCloseThenExpect(target.name, "PONG", "half")
	}
}

// Malformed input after valid frames gets what a server gives: the
// replies to the valid frames, a protocol error, then the close.
func TestProtocolErrorDeliversEarlierReplies(t *testing.T) {
	p, addr := realProxy(t)
	for _, target := range []struct{ name, addr string }{{"server", addr}, {"proxy", p.Addr()}} {
		c := dialTCP(t, target.addr)
		if _, err := c.conn.Write(append(encode("PING"), "*1\r\n$x\r\n"...)); err != nil {
			t.Fatal(err)
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		v, err := c.read()
		if err != nil {
			t.Fatalf("%s: the reply to the PING before the malformed frame: %v", target.name, err)
		}
		wantReply(t, target.name+" PING", text(v), "PONG")
		if v, err = c.read(); err != nil || !strings.HasPrefix(text(v), "-ERR Protocol error: ") {
			t.Fatalf("%s: after the PONG got %q, %v; want a protocol error", target.name, text(v), err)
		}
		c.expectClosed()
	}
}

// A client that subscribes and shuts its writing half gets what a server
// gives it: the subscription's confirmation, then the close.
func TestSubscribeThenHalfCloseDeliversConfirmation(t *testing.T) {
	p, addr := realProxy(t)
	ch := key(t, "ch")
	for _, target := range []struct{ name, addr string }{{"server", addr}, {"proxy", p.Addr()}} {
		c := dialTCP(t, target.addr)
		c.send([]string{"PING"}, []string{"SUBSCRIBE", ch}, []string{"PING"})
		c.halfCloseThenExpect(target.name, "PONG", fmt.Sprintf("[subscribe %s 1]", ch), "[pong ]")
	}
}

// CLIENT REPLY OFF and SKIP make the server send no reply to some frames;
// the proxy must still give the client exactly the replies the server
// sends, in order, and close once they are delivered.
func TestClientReplyOffAndSkipKeepServerReplies(t *testing.T) {
	p, addr := realProxy(t)
	k := key(t, "k")
	for _, target := range []struct{ name, addr string }{{"server", addr}, {"proxy", p.Addr()}} {
		c := dialTCP(t, target.addr)
		c.send([]string{"CLIENT", "REPLY", "OFF"}, []string{"SET", k, "v"}, []string{"client", "reply", "on"},
			[]string{"ECHO", "a"}, []string{"CLIENT", "REPLY", "SKIP"}, []string{"ECHO", "b"},
			[]string{"ECHO", "c"}, []string{"GET", k})
		c.halfCloseThenExpect(target.name, "OK", "a", "c", "v")
	}
}

// UNSUBSCRIBE and its kin, sent outside subscribe mode, get one reply per
// channel in RESP2 and only push frames in RESP3: the proxy still gives
// the client exactly the server's replies, and closes after them.
func TestUnsubscribeOutsideSubscribeModeKeepsServerReplies(t *testing.T) {
	p, addr := realProxy(t)
	for _, target := range []struct{ name, addr string }{{"server", addr}, {"proxy", p.Addr()}} {
		for _, tt := range []struct {
			hello bool
			cmds  [][]string
			want  []string
		}{
			{false, [][]string{{"UNSUBSCRIBE", "a", "b"}, {"PUNSUBSCRIBE"}, {"PING"}},
				[]string{"[unsubscribe a 0]", "[unsubscribe b 0]", "[punsubscribe (nil) 0]", "PONG"}},
			{true, [][]string{{"SUNSUBSCRIBE", "x"}, {"ECHO", "e"}}, []string{"[sunsubscribe x 0]", "e"}},
		} {
			c := dialTCP(t, target.addr)
			if tt.hello {
				c.send([]string{"HELLO", "3"})
				c.mustRead()
			}
			c.send(tt.cmds...)
			c.halfCloseThenExpect(target.name, tt.want...)
		}
	}
}

// A proxy in front of an address nothing listens on starts; each client
// connection, TCP or in memory, is closed without a reply when its
// backend dial fails (a dead backend must not hang the client's test).
func TestProxyToDeadBackendClosesClientConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	for _, opts := range [][]Option{nil, {InMemory()}} {
		p, err := NewProxy(dead, opts...)
		if err != nil {
			t.Fatalf("NewProxy(%s): %v", dead, err)
		}
		c := dialProxy(t, p)
		// An in-memory connection may be closed before the write.
		if _, err := c.conn.Write(encode("PING")); err == nil {
			c.expectClosed()
		}
		p.Close()
	}
}

// A rule's description gives the frames it applies to, defaults resolved.
func TestRuleHandleStringResolvesDefaults(t *testing.T) {
	p, err := NewProxy("127.0.0.1:1", InMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tt := range []struct {
		rule Rule
		want string
	}{
		{Rule{Command: "get", Action: Hold}, `rule{GET "" from #1 x1: Hold}`},
		{Rule{Command: "SET", Arg: "k", Nth: 3, Times: 2, Action: Pass}, `rule{SET "k" from #3 x2: Pass}`},
		{Rule{Nth: 2, Times: Always, Action: DropBeforeForward}, `rule{ "" from #2 xAlways: DropBeforeForward}`},
	} {
		if got := p.MustAddRule(t, tt.rule).String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}

// Rules, counts and the proxy's own parsing fold command names and
// options as Redis does: a-z only. A name with a non-ASCII letter that
// Unicode upper-cases to ASCII (dotless i, long s) is another, unknown,
// command to Redis, and must not be taken for PING, SKIP or IDMP.
func TestCommandNamesFoldOnlyASCIILikeRedis(t *testing.T) {
	p, _ := realProxy(t)
	caught := p.MustAddRule(t, Rule{Command: "ping", Times: Always, Action: Inject("ERR caught")})
	dotless := p.MustAddRule(t, Rule{Command: "p\u0131ng", Times: Always, Action: Pass})
	c := dialProxy(t, p)
	for _, name := range []string{"PING", "ping", "PiNg"} {
		if got := c.do(name); got != "-ERR caught" {
			t.Errorf("%s = %q, want the rule's error", name, got)
		}
	}
	if got := c.do("p\u0131ng"); !strings.HasPrefix(got, "-ERR unknown command") {
		t.Errorf("p\u0131ng = %q, want Redis's unknown command error", got)
	}
	if caught.Matched() != 3 || dotless.Matched() != 1 {
		t.Errorf("rule ping matched %d, rule p\u0131ng matched %d; want 3 and 1", caught.Matched(), dotless.Matched())
	}
	if got := p.Stats("PING").Received; got != 3 {
		t.Errorf("Stats(PING).Received = %d, want 3", got)
	}
	if got := p.Stats("p\u0131ng").Received; got != 1 {
		t.Errorf("Stats(p\u0131ng).Received = %d, want 1", got)
	}
	// Redis rejects the option; the connection still pairs replies, so
	// the rule still acts on the next PING.
	if got := c.do("CLIENT", "REPLY", "\u017fKIP"); !strings.HasPrefix(got, "-ERR") {
		t.Errorf("CLIENT REPLY \u017fKIP = %q, want an error", got)
	}
	if got := c.do("PING"); got != "-ERR caught" {
		t.Errorf("PING after CLIENT REPLY \u017fKIP = %q, want the rule's error", got)
	}

	s := NewServer(t, InMemory())
	sc := dialProxy(t, s.Proxy)
	want := "-ERR Invalid stream ID specified as stream command argument"
	if got := sc.do("XADD", key(t, "x"), "\u0131DMP", "p", "i", "*", "f", "v"); got != want {
		t.Errorf("XADD with \u0131DMP = %q, want %q", got, want)
	}
}

// A push the server sends after a reply reaches the client after that
// reply (when no rule holds it): a client-side cache relies on an
// invalidation never overtaking the replies sent before it.
func TestPushFramesKeepTheirPlaceAfterEarlierReplies(t *testing.T) {
	p, _ := realProxy(t)
	k := key(t, "tracked")
	c := trackingClient(t, p)
	c.do("DEL", k)
	prev := "(nil)"
	for i := range 200 {
		v := strconv.Itoa(i)
		c.send([]string{"GET", k}, []string{"SET", k, v})
		var got []string
		for range 3 {
			got = append(got, text(c.mustRead()))
		}
		want := []string{prev, "OK", fmt.Sprintf("[invalidate [%s]]", k)}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("round %d: replies %q, want %q (as the server sent them)", i, got, want)
		}
		prev = v
	}
}
