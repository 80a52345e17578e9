package respiretest

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func xadd(c *client, stream, pid, iid string, fields ...string) string {
	c.t.Helper()
	args := append([]string{"XADD", stream, "IDMP", pid, iid, "*"}, fields...)
	return c.do(args...)
}

func wantReply(t testing.TB, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func TestIDMPDuplicateReturnsOriginalIDAndExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		c := dialProxy(t, s.Proxy)
		id := xadd(c, "s", "p1", "i1", "f", "v")
		if id == "" || id[0] == '-' {
			t.Fatalf("XADD IDMP = %q", id)
		}
		wantReply(t, "resend", xadd(c, "s", "p1", "i1", "f", "v"), id)
		wantReply(t, "same iid, other content", xadd(c, "s", "p1", "i1", "f", "changed"), id)
		wantReply(t, "XLEN", c.do("XLEN", "s"), "1")
		if got := s.Executed("XADD"); got != 1 {
			t.Fatalf("engine executed XADD %d times, want 1", got)
		}
		if st := s.Stats("XADD"); st.Received != 3 {
			t.Fatalf("proxy received %d XADDs, want 3", st.Received)
		}
		other := xadd(c, "s", "p2", "i1", "f", "v")
		if other == id {
			t.Fatal("another producer's iid must not deduplicate")
		}
		wantReply(t, "XLEN", c.do("XLEN", "s"), "2")

		time.Sleep(DefaultIDMPDuration - time.Second)
		wantReply(t, "resend after 99s", xadd(c, "s", "p1", "i1", "f", "v"), id)
		time.Sleep(time.Second)
		again := xadd(c, "s", "p1", "i1", "f", "v")
		if again == id {
			t.Fatal("after 100s the iid must have expired and the entry be appended again")
		}
		wantReply(t, "XLEN", c.do("XLEN", "s"), "3")
		wantReply(t, "resend of the new entry", xadd(c, "s", "p1", "i1", "f", "v"), again)
	})
}

func TestIDMPMaxSizeEvictsOldestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		c := dialProxy(t, s.Proxy)
		c.do("XADD", "s", "*", "seed", "1")
		wantReply(t, "XCFGSET", c.do("XCFGSET", "s", "IDMP-MAXSIZE", "2"), "OK")
		ids := map[string]string{}
		for _, iid := range []string{"a", "b", "c"} { // c evicts a
			ids[iid] = xadd(c, "s", "p", iid, "f", iid)
			time.Sleep(time.Second) // distinct entry IDs
		}
		wantReply(t, "resend c", xadd(c, "s", "p", "c", "f", "c"), ids["c"])
		wantReply(t, "resend b", xadd(c, "s", "p", "b", "f", "b"), ids["b"])
		if got := xadd(c, "s", "p", "a", "f", "a"); got == ids["a"] { // appends, evicts b
			t.Fatal("evicted iid a deduplicated")
		}
		wantReply(t, "XLEN", c.do("XLEN", "s"), "5")
		if got := xadd(c, "s", "p", "b", "f", "b"); got == ids["b"] {
			t.Fatal("iid b should have been evicted by the resend of a")
		}

		// The default size is 100 per producer.
		c.do("XADD", "d", "*", "seed", "1")
		first := xadd(c, "d", "p", "0", "f", "v")
		for i := 1; i < DefaultIDMPMaxSize; i++ {
			xadd(c, "d", "p", fmt.Sprint(i), "f", "v")
		}
		wantReply(t, "iid 0 with 100 kept", xadd(c, "d", "p", "0", "f", "v"), first)
		xadd(c, "d", "p", "100", "f", "v")
		if got := xadd(c, "d", "p", "0", "f", "v"); got == first {
			t.Fatal("the 101st iid must evict the oldest")
		}
	})
}

func TestXCFGSET(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		c := dialProxy(t, s.Proxy)
		c.do("SET", "str", "x")
		cases := [][2]string{
			{c.do("XCFGSET", "missing", "IDMP-DURATION", "5"), "-ERR no such key"},
			{c.do("XCFGSET", "str", "IDMP-DURATION", "5"), "-" + errWrongType},
			{c.do("XCFGSET", "s"), "-ERR syntax error"},
			{c.do("XCFGSET"), "-" + errXCfgSetArity},
			{c.do("XCFGSET", "s", "IDMP-DURATION"), "-ERR syntax error"},
			{c.do("XCFGSET", "s", "FOO", "1"), "-ERR syntax error"},
			{c.do("XCFGSET", "s", "IDMP-DURATION", "x"), "-" + errNotInteger},
			{c.do("XCFGSET", "s", "IDMP-DURATION", "0"), "-" + errBadDuration},
			{c.do("XCFGSET", "s", "IDMP-DURATION", "86401"), "-" + errBadDuration},
			{c.do("XCFGSET", "s", "IDMP-MAXSIZE", "0"), "-" + errBadMaxSize},
			{c.do("XCFGSET", "s", "IDMP-MAXSIZE", "10001"), "-" + errBadMaxSize},
		}
		for i, tc := range cases {
			if tc[0] != tc[1] {
				t.Errorf("case %d: %q, want %q", i, tc[0], tc[1])
			}
		}
		id := xadd(c, "s", "p", "i", "f", "v")
		wantReply(t, "XCFGSET", c.do("XCFGSET", "s", "IDMP-DURATION", "5", "IDMP-MAXSIZE", "10000"), "OK")
		time.Sleep(time.Second)
		second := xadd(c, "s", "p", "i", "f", "v")
		if second == id {
			t.Fatal("XCFGSET must clear the producers' maps")
		}
		time.Sleep(4 * time.Second)
		wantReply(t, "resend before 5s", xadd(c, "s", "p", "i", "f", "v"), second)
		time.Sleep(time.Second)
		if got := xadd(c, "s", "p", "i", "f", "v"); got == second {
			t.Fatal("IDMP-DURATION 5 must expire the iid after 5s")
		}
		if got := s.Executed("XCFGSET"); got != 0 {
			t.Fatalf("XCFGSET reached the engine %d times, want 0", got)
		}
	})
}

func TestIDMPAutoAndSyntax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		c := dialProxy(t, s.Proxy)
		id := c.do("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "2")
		wantReply(t, "same pairs, other order", c.do("XADD", "s", "IDMPAUTO", "p", "*", "b", "2", "a", "1"), id)
		if got := c.do("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "3"); got == id {
			t.Fatal("other content must get another iid")
		}
		wantReply(t, "with MAXLEN before", c.do("XADD", "s", "MAXLEN", "~", "100", "IDMPAUTO", "p", "*", "a", "1", "b", "2"), id)
		wantReply(t, "explicit ID", c.do("XADD", "s", "IDMP", "p", "i", "1-1", "f", "v"), "-"+errIDMPExplicit)
		wantReply(t, "odd fields", c.do("XADD", "s", "IDMP", "p", "i", "*", "f"), "-"+errXAddArity)
		wantReply(t, "IDMP twice", c.do("XADD", "s", "IDMP", "p", "i", "IDMPAUTO", "p", "*", "f", "v"), "-ERR syntax error")
		wantReply(t, "empty pid", c.do("XADD", "s", "IDMP", "", "i", "*", "f", "v"), "-"+errIDMPEmptyID)
		wantReply(t, "XLEN", c.do("XLEN", "s"), "2")
		c.do("SET", "str", "x")
		wantReply(t, "wrong type", c.do("XADD", "str", "IDMP", "p", "i", "*", "f", "v"), "-"+errWrongType)
		wantReply(t, "NOMKSTREAM", c.do("XADD", "none", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v"), "(nil)")
		c.do("MULTI")
		wantReply(t, "in MULTI", c.do("XADD", "s", "IDMP", "p", "i", "*", "f", "v"), "-"+errIDMPInMulti)
		c.do("DISCARD")
	})
}

func TestIDMPDeletedStreamStartsAfresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		c := dialProxy(t, s.Proxy)
		id := xadd(c, "s", "p", "i", "f", "v")
		time.Sleep(time.Second)
		// Pipelined: the DEL is ahead of the XADD on the same connection.
		c.send([]string{"DEL", "s"}, []string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"})
		wantReply(t, "DEL", text(c.mustRead()), "1")
		if got := text(c.mustRead()); got == id {
			t.Fatal("a deleted stream must forget its iids")
		}
		// Deleted behind the proxy's back: the TYPE probe notices.
		id = xadd(c, "t", "p", "i", "f", "v")
		s.Engine().Del("t")
		time.Sleep(time.Second)
		if got := xadd(c, "t", "p", "i", "f", "v"); got == id {
			t.Fatal("a stream deleted directly must forget its iids")
		}
		// Databases are separate.
		c.do("SELECT", "1")
		if got := xadd(c, "t", "p", "i", "f", "v"); got[0] == '-' {
			t.Fatalf("XADD in db 1: %q", got)
		}
		wantReply(t, "XLEN in db 1", c.do("XLEN", "t"), "1")
	})
}

func TestIDMPLostReplyThenResend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		r := s.MustAddRule(t, Rule{Command: "XADD", Action: DropAfterForward})
		c1 := dialProxy(t, s.Proxy)
		c1.send([]string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"})
		c1.expectClosed()
		<-r.Received()
		c2 := dialProxy(t, s.Proxy)
		id := xadd(c2, "s", "p", "i", "f", "v")
		wantReply(t, "XRANGE", c2.do("XRANGE", "s", "-", "+"), fmt.Sprintf("[[%s [f v]]]", id))
		if got := s.Executed("XADD"); got != 1 {
			t.Fatalf("engine executed XADD %d times, want 1", got)
		}
	})
}

func TestIDMPConcurrentDuplicates(t *testing.T) {
	s := NewServer(t)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		c := dialProxy(t, s.Proxy)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.send([]string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"})
			v, err := c.read()
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = text(v)
		}()
	}
	wg.Wait()
	for i := range ids {
		if ids[i] != ids[0] {
			t.Fatalf("ids %q differ", ids)
		}
	}
	if got := s.Executed("XADD"); got != 1 {
		t.Fatalf("engine executed XADD %d times, want 1", got)
	}
}

// Redis 7.0 itself is the witness of how a server without IDMP answers;
// the proxy without emulation and the kit's server with WithIDMP(false)
// must answer the same.
func TestIDMPWithoutEmulationAnswersLikeRedis70(t *testing.T) {
	addr := standalone(t)
	k := key(t, "s")
	cmds := [][]string{
		{"XADD", k, "IDMP", "p1", "i1", "*", "f", "v"},
		{"XADD", k, "IDMPAUTO", "p1", "*", "f", "v"},
		{"XADD", k, "MAXLEN", "5", "IDMP", "p1", "i1", "*", "f", "v"},
		{"XCFGSET", k, "IDMP-DURATION", "5"},
		{"EXISTS", k},
	}
	run := func(c *client) []string {
		var out []string
		for _, cmd := range cmds {
			out = append(out, c.do(cmd...))
		}
		return out
	}
	direct := dialTCP(t, addr)
	direct.do("DEL", k)
	want := run(direct)
	if want[0] != "-ERR Invalid stream ID specified as stream command argument" || want[4] != "0" {
		t.Fatalf("the real server answered %q; REDIS-FACTS.md says otherwise", want)
	}
	if want[3] != fmt.Sprintf("-ERR unknown command 'XCFGSET', with args beginning with: '%s' 'IDMP-DURATION' '5' ", k) {
		t.Fatalf("XCFGSET on the real server: %q", want[3])
	}
	p, _ := realProxy(t)
	if got := run(dialProxy(t, p)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("proxy without emulation: %q\nwant %q", got, want)
	}
	for _, opts := range [][]Option{{WithIDMP(false)}, {WithIDMP(false), InMemory()}} {
		s := NewServer(t, opts...)
		if got := run(dialProxy(t, s.Proxy)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("NewServer(WithIDMP(false)): %q\nwant %q", got, want)
		}
	}
}

func TestIDMPEmulationInFrontOfRedis70(t *testing.T) {
	countsCommands(t)
	p, addr := realProxy(t, WithIDMP(true))
	k := key(t, "s")
	direct := dialTCP(t, addr)
	direct.do("DEL", k)
	before := commandstats(t, addr)
	r := p.MustAddRule(t, Rule{Command: "XADD", Arg: k, Action: DropAfterForward})
	c1 := dialProxy(t, p)
	c1.send([]string{"XADD", k, "IDMP", "p", "i", "*", "f", "v"})
	c1.expectClosed()
	<-r.Received()
	c2 := dialProxy(t, p)
	id := xadd(c2, k, "p", "i", "f", "v")
	wantReply(t, "second resend", xadd(c2, k, "p", "i", "f", "v"), id)
	wantReply(t, "XRANGE on the server", direct.do("XRANGE", k, "-", "+"), fmt.Sprintf("[[%s [f v]]]", id))
	wantReply(t, "XCFGSET", c2.do("XCFGSET", k, "IDMP-MAXSIZE", "5"), "OK")
	delta := statsDelta(before, commandstats(t, addr))
	if delta["XADD"] != 1 || p.Forwarded("XADD") != 1 {
		t.Errorf("server executed XADD %d times, proxy forwarded %d; want 1 and 1", delta["XADD"], p.Forwarded("XADD"))
	}
	if delta["XCFGSET"] != 0 {
		t.Errorf("XCFGSET reached the server")
	}
	direct.do("DEL", k)
}
