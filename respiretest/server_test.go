package respiretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestServerOverTCP(t *testing.T) {
	s := NewServer(t)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want a 127.0.0.1 listener", s.Addr())
	}
	c := dialProxy(t, s.Proxy)
	wantReply(t, "INCR", c.do("INCR", "n"), "1")
	wantReply(t, "INCR", c.do("INCR", "n"), "2")
	if got := s.Executed("INCR"); got != 2 {
		t.Fatalf("Executed(INCR) = %d, want 2", got)
	}
	if v, _ := s.Engine().Get("n"); v != "2" {
		t.Fatalf("engine value %q, want 2", v)
	}
	// Dial is in-memory in either mode, under the same dial control.
	conn, err := s.Dial(context.Background(), "tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	wantReply(t, "GET over Dial", newClient(t, conn).do("GET", "n"), "2")
	wantReply(t, "unknown command", c.do("NOSUCH", "a"), "-ERR unknown command 'NOSUCH', with args beginning with: 'a' ")
}

func TestSynctestDelayIsVirtual(t *testing.T) {
	realStart := time.Now()
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		if s.Addr() != MemoryAddr {
			t.Fatalf("inside a bubble Addr() = %q, want %q", s.Addr(), MemoryAddr)
		}
		r := s.MustAddRule(t, Rule{Command: "GET", Action: Delay(5 * time.Second)})
		c := dialProxy(t, s.Proxy)
		start := time.Now()
		wantReply(t, "GET", c.do("GET", "k"), "(nil)")
		if got := time.Since(start); got != 5*time.Second {
			t.Fatalf("delayed reply after %v of virtual time, want exactly 5s", got)
		}
		if r.Forwarded() != 1 {
			t.Fatalf("Forwarded() = %d, want 1", r.Forwarded())
		}
	})
	if d := time.Since(realStart); d > 2*time.Second {
		t.Fatalf("took %v of real time", d)
	}
}

// In a bubble, synctest.Wait proves that a held reply is not delivered.
func TestSynctestHoldIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		r := s.MustAddRule(t, Rule{Command: "INCR", Action: Hold})
		c := dialProxy(t, s.Proxy)
		c.send([]string{"INCR", "n"}, []string{"PING"})
		got := make(chan string, 2)
		go func() {
			for range 2 {
				v, err := c.read()
				if err != nil {
					return
				}
				got <- text(v)
			}
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatalf("a reply was delivered while held")
		}
		if s.Executed("INCR") != 1 || s.Executed("PING") != 1 {
			t.Fatalf("the held frame and the one behind it must have reached the engine")
		}
		r.Release()
		synctest.Wait()
		if a, b := <-got, <-got; a != "1" || b != "PONG" {
			t.Fatalf("after Release: %q %q", a, b)
		}
	})
}

// Dial, like net.Dialer.DialContext, fails at once for a context that is
// already done, with no gate or partition in the way.
func TestDialWithDoneContextFails(t *testing.T) {
	s := NewServer(t, InMemory())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	conn, err := s.Dial(ctx, "tcp", s.Addr())
	if !errors.Is(err, context.Canceled) {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("Dial with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestSynctestHeldDialHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		g := s.HoldDials()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := s.Dial(ctx, "tcp", s.Addr())
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 3*time.Second {
			t.Fatalf("held Dial = %v after %v, want DeadlineExceeded after 3s", err, time.Since(start))
		}
		done := make(chan net.Conn)
		go func() {
			conn, err := s.Dial(t.Context(), "tcp", s.Addr())
			if err != nil {
				t.Error(err)
			}
			done <- conn
		}()
		<-g.Arrived()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Dial returned while held")
		default:
		}
		g.Release()
		conn := <-done
		wantReply(t, "PING", newClient(t, conn).do("PING"), "PONG")
		if g.Held() != 2 {
			t.Fatalf("Held() = %d, want 2", g.Held())
		}
	})
}

func TestSynctestDropBeforeForward(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		r := s.MustAddRule(t, Rule{Command: "INCR", Action: DropBeforeForward})
		c := dialProxy(t, s.Proxy)
		c.send([]string{"SET", "n", "5"}, []string{"INCR", "n"}, []string{"INCR", "n"})
		wantReply(t, "SET before the drop", text(c.mustRead()), "OK")
		c.expectClosed()
		synctest.Wait()
		// The proxy stops reading at the dropped frame: the INCR behind it
		// is never even received.
		if s.Executed("INCR") != 0 || r.Matched() != 1 || s.Stats("INCR").Received != 1 {
			t.Fatalf("executed %d, matched %d, received %d; want 0 1 1",
				s.Executed("INCR"), r.Matched(), s.Stats("INCR").Received)
		}
		if s.Sessions() != 0 {
			t.Fatalf("Sessions() = %d after the drop, want 0", s.Sessions())
		}
	})
}

func TestFailWritesCutsTheNthWrite(t *testing.T) {
	a, b := net.Pipe()
	got := make(chan string)
	go func() {
		all, _ := io.ReadAll(b)
		b.Close()
		got <- string(all)
	}()
	fc := FailWrites(a, 2, 3)
	if n, err := fc.Write([]byte("abcdef")); n != 6 || err != nil {
		t.Fatalf("write 1 = %d, %v", n, err)
	}
	if n, err := fc.Write([]byte("ghijkl")); n != 3 || !errors.Is(err, ErrInjectedWrite) {
		t.Fatalf("write 2 = %d, %v; want 3, ErrInjectedWrite", n, err)
	}
	<-fc.Failed()
	if n, err := fc.Write([]byte("mno")); n != 0 || !errors.Is(err, ErrInjectedWrite) {
		t.Fatalf("write 3 = %d, %v; want 0, ErrInjectedWrite", n, err)
	}
	if s := <-got; s != "abcdefghi" {
		t.Fatalf("peer received %q, want abcdefghi then EOF", s)
	}
	if fc.Writes() != 3 || fc.Written() != 9 {
		t.Fatalf("Writes() %d Written() %d, want 3 9", fc.Writes(), fc.Written())
	}
}

func TestFailWritesEdgeOffsets(t *testing.T) {
	for _, tc := range []struct {
		n, offset int
		want      string
	}{
		{1, 0, ""},        // definitely unwritten
		{1, -5, ""},       // negative counts as 0
		{1, 100, "abc"},   // all written, still fails
		{0, 2, "abcabc"},  // n < 1: no fault
		{-1, 2, "abcabc"}, // likewise
	} {
		a, b := net.Pipe()
		got := make(chan string)
		go func() {
			all, _ := io.ReadAll(b)
			got <- string(all)
		}()
		fc := FailWrites(a, tc.n, tc.offset)
		_, err1 := fc.Write([]byte("abc"))
		if tc.n < 1 {
			fc.Write([]byte("abc"))
			a.Close()
		}
		if s := <-got; s != tc.want {
			t.Errorf("FailWrites(n=%d, offset=%d): peer got %q, want %q", tc.n, tc.offset, s, tc.want)
		}
		if (tc.n >= 1) != errors.Is(err1, ErrInjectedWrite) {
			t.Errorf("FailWrites(n=%d, offset=%d): first write error %v", tc.n, tc.offset, err1)
		}
		b.Close()
	}
}

// A frame cut by FailWrites never reaches the server; one written to its
// last byte does, although the write reported an error.
func TestFailWritesThroughTheProxy(t *testing.T) {
	frame := encode("INCR", "n")
	for _, tc := range []struct {
		offset int
		want   int // INCRs the engine executed
	}{
		{0, 1},
		{len(frame) - 1, 1},
		{len(frame), 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			s := NewServer(t)
			conn, err := s.Dial(t.Context(), "tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			fc := FailWrites(conn, 2, tc.offset)
			c := newClient(t, fc)
			wantReply(t, "first write", c.do("INCR", "n"), "1")
			if _, err := fc.Write(frame); !errors.Is(err, ErrInjectedWrite) {
				t.Fatalf("second write: %v", err)
			}
			synctest.Wait() // the proxy has seen the connection end
			if got := s.Executed("INCR"); got != tc.want || s.Stats("INCR").Received != int64(tc.want) {
				t.Fatalf("offset %d: engine executed INCR %d times (%+v), want %d", tc.offset, got, s.Stats("INCR"), tc.want)
			}
			if s.Sessions() != 0 {
				t.Fatalf("Sessions() = %d, want 0", s.Sessions())
			}
		})
	}
}

func TestFailWritesDialerWrapsOnlyTheChosenConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		dial := FailWritesDialer(s.Dial, 2, 1, 0)
		for i := 1; i <= 3; i++ {
			conn, err := dial(t.Context(), "tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			_, wrapped := conn.(*FaultConn)
			if wrapped != (i == 2) {
				t.Fatalf("connection %d wrapped: %v", i, wrapped)
			}
			_, err = conn.Write(encode("PING"))
			if (err != nil) != (i == 2) {
				t.Fatalf("connection %d write error: %v", i, err)
			}
			conn.Close()
		}
	})
}

// TestServerRefusesHugeStrings: SETRANGE and SETBIT past Redis's 512 MiB
// string limit get Redis's errors instead of making the engine allocate
// the whole string (SETRANGE at offset 2^40 crashed the process out of
// memory); offsets within the limit still work.
func TestServerRefusesHugeStrings(t *testing.T) {
	s := NewServer(t)
	c := dialProxy(t, s.Proxy)
	wantReply(t, "SETRANGE 2^40", c.do("SETRANGE", "s", "1099511627776", "v"), "-ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	wantReply(t, "SETRANGE at the limit", c.do("SETRANGE", "s", "536870912", "v"), "-ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	wantReply(t, "SETBIT 2^32", c.do("SETBIT", "b", "4294967296", "1"), "-ERR bit offset is not an integer or out of range")
	wantReply(t, "SETRANGE small", c.do("SETRANGE", "s", "2", "v"), "3")
	wantReply(t, "SETBIT small", c.do("SETBIT", "b", "7", "1"), "0")
}

// TestServerRefusesPatternsTheEngineCannotMatch: a glob pattern the
// engine cannot translate (bytes that are not UTF-8, a bracket class that
// is no class, a quoted backslash before E) gets an error reply from KEYS,
// the SCAN family's MATCH, PSUBSCRIBE and PUBSUB CHANNELS, also inside
// MULTI and a script, instead of crashing the test process; valid
// patterns still match.
func TestServerRefusesPatternsTheEngineCannotMatch(t *testing.T) {
	s := NewServer(t)
	c := dialProxy(t, s.Proxy)
	wantReply(t, "SET", c.do("SET", "k1", "v"), "OK")
	wantReply(t, "HSET", c.do("HSET", "h", "f", "v"), "1")
	const refused = "-ERR respiretest: the embedded engine cannot match this pattern (it must be UTF-8, with valid [...] classes)"
	for _, pat := range []string{"\xa7*", "[b-a]", "[^]", `\\E(`, "a[\xff]"} {
		wantReply(t, "KEYS "+pat, c.do("KEYS", pat), refused)
		wantReply(t, "SCAN MATCH "+pat, c.do("SCAN", "0", "COUNT", "10", "MATCH", pat), refused)
		wantReply(t, "HSCAN MATCH "+pat, c.do("HSCAN", "h", "0", "match", pat), refused)
		wantReply(t, "PUBSUB CHANNELS "+pat, c.do("PUBSUB", "channels", pat), refused)
		wantReply(t, "EVAL KEYS "+pat, c.do("EVAL", "return redis.pcall('KEYS', ARGV[1])", "0", pat), refused)
	}
	wantReply(t, "MULTI", c.do("MULTI"), "OK")
	wantReply(t, "KEYS in MULTI", c.do("KEYS", "[b-a]"), refused)
	wantReply(t, "DISCARD", c.do("DISCARD"), "OK")
	wantReply(t, "PSUBSCRIBE", c.do("PSUBSCRIBE", "ok*", "[b-a]"), refused)
	wantReply(t, "KEYS valid", c.do("KEYS", "k[0-9]"), "[k1]")
	wantReply(t, "PING after", c.do("PING"), "PONG")
}

// TestServerDeletesEmptyStoreDestinations: a set or sorted-set store
// command with an empty result deletes its destination, as Redis does,
// also inside MULTI (the engine kept an empty set, on which SRANDMEMBER
// and SPOP crashed the process); a non-empty result and an error reply
// are the command's own.
func TestServerDeletesEmptyStoreDestinations(t *testing.T) {
	s := NewServer(t)
	c := dialProxy(t, s.Proxy)
	for _, cmd := range [][]string{{"SADD", "a", "x"}, {"SADD", "b", "y"}, {"ZADD", "za", "1", "x"}, {"ZADD", "zb", "1", "y"}, {"SET", "s", "v"}} {
		wantReply(t, cmd[0], c.do(cmd...), map[bool]string{true: "OK", false: "1"}[cmd[0] == "SET"])
	}
	for _, store := range [][]string{
		{"SINTERSTORE", "d", "a", "b"}, {"SDIFFSTORE", "d", "a", "a"}, {"SUNIONSTORE", "d", "none"},
		{"ZINTERSTORE", "d", "2", "za", "zb"}, {"ZUNIONSTORE", "d", "1", "none"},
	} {
		wantReply(t, store[0], c.do(store...), "0")
		wantReply(t, store[0]+" EXISTS", c.do("EXISTS", "d"), "0")
		wantReply(t, store[0]+" SRANDMEMBER", c.do("SRANDMEMBER", "d"), "(nil)")
		wantReply(t, store[0]+" SPOP", c.do("SPOP", "d"), "(nil)")
	}
	wantReply(t, "MULTI", c.do("MULTI"), "OK")
	wantReply(t, "SINTERSTORE queued", c.do("SINTERSTORE", "d", "a", "b"), "QUEUED")
	wantReply(t, "SRANDMEMBER queued", c.do("SRANDMEMBER", "d"), "QUEUED")
	wantReply(t, "EXEC", c.do("EXEC"), "[0 (nil)]")
	wantReply(t, "SUNIONSTORE", c.do("SUNIONSTORE", "d", "a", "b"), "2")
	wantReply(t, "SCARD", c.do("SCARD", "d"), "2")
	wantReply(t, "SUNIONSTORE wrong type", c.do("SUNIONSTORE", "d", "s"), c.do("SUNION", "s"))
	wantReply(t, "SUNIONSTORE arity", c.do("SUNIONSTORE", "d"), "-ERR wrong number of arguments for 'sunionstore' command")
	wantReply(t, "in a script", c.do("EVAL", "return redis.call('SUNIONSTORE', KEYS[1], 'a')", "1", "d"), "1")
	wantReply(t, "empty in a script", c.do("EVAL", "redis.call('SINTERSTORE', KEYS[1], 'a', 'b'); "+
		"return {redis.call('EXISTS', KEYS[1]), redis.call('SRANDMEMBER', KEYS[1]), redis.call('ZUNIONSTORE', 'zd', 1, 'none'), redis.call('EXISTS', 'zd')}", "1", "d"),
		"[0 (nil) 0 0]")
	wantReply(t, "EXISTS after the script", c.do("EXISTS", "d"), "0")
	if got := s.Executed("SUNIONSTORE"); got != 4 {
		t.Errorf("Executed(SUNIONSTORE) = %d; want 4, the script's own call not counted", got)
	}
}

// Close waits for every goroutine of the proxy, a reading goroutine
// inside an OnReceive callback included: it returns only once the
// callback does. So do two Close calls at once (a test's Cleanup and a
// goroutine of its own, say): neither returns before the proxy stopped.
func TestSynctestCloseWaitsForBlockedOnReceive(t *testing.T) {
	for _, calls := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d Close calls", calls), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(t)
				arrived, release := make(chan struct{}), make(chan struct{})
				s.MustAddRule(t, Rule{Command: "PING", Action: Pass, OnReceive: func([]string) {
					close(arrived)
					<-release
				}})
				c := dialProxy(t, s.Proxy)
				c.send([]string{"PING"})
				<-arrived
				closed := make([]chan struct{}, calls)
				for i := range closed {
					closed[i] = make(chan struct{})
					go func() {
						s.Close()
						close(closed[i])
					}()
				}
				synctest.Wait()
				for i, done := range closed {
					select {
					case <-done:
						t.Errorf("Close call %d returned while an OnReceive callback blocked", i)
					default:
					}
				}
				close(release)
				for _, done := range closed {
					<-done
				}
			})
		})
	}
}

// TestServerRefusesEngineCrashers: arguments on which the embedded engine
// panicked or allocated without bound, taking the test process down, get
// an error reply (Redis 7.0's own text where Redis refuses them too,
// checked against redis-server 7.0.15), also from a script, as do a read
// of the same stream twice (whose reply broke the connection) and a
// blocking command in a script (which hung the engine); a huge LPOS COUNT
// gets Redis's reply; ordinary arguments still work.
func TestServerRefusesEngineCrashers(t *testing.T) {
	s := NewServer(t)
	c := dialProxy(t, s.Proxy)
	for _, cmd := range [][]string{{"SADD", "s", "a"}, {"HSET", "h", "f", "v"}, {"ZADD", "z", "1", "a"}, {"RPUSH", "l", "a", "a"}} {
		wantReply(t, cmd[0], c.do(cmd...), map[bool]string{true: "2", false: "1"}[cmd[0] == "RPUSH"])
	}
	wantReply(t, "XADD", c.do("XADD", "x", "1-1", "f", "v"), "1-1")
	const (
		outOfRange = "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
		tooMany    = "-ERR respiretest: the embedded engine cannot return more than 1048576 random elements (a negative count builds the whole reply in memory)"
		numFields  = "-ERR The `numfields` parameter must match the number of arguments"
		newproxy   = "-ERR respiretest: the embedded engine cannot run a script that uses newproxy (Redis has no newproxy; the engine crashes on its userdata)"
	)
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"SRANDMEMBER", "s", "-9223372036854775808"}, outOfRange}, // looped forever
		{[]string{"SRANDMEMBER", "s", "-100000000"}, tooMany},              // out of memory
		{[]string{"HRANDFIELD", "h", "-9223372036854775808"}, outOfRange},  // slice bounds out of range
		{[]string{"HRANDFIELD", "h", "-100000000", "WITHVALUES"}, tooMany}, // out of memory
		{[]string{"ZRANDMEMBER", "z", "-9223372036854775808"}, outOfRange},
		{[]string{"ZRANDMEMBER", "z", "-100000000"}, tooMany}, // out of memory
		{[]string{"SRANDMEMBER", "s", "-3"}, "[a a a]"},
		{[]string{"HRANDFIELD", "nokey", "-1048576"}, "[]"},
		{[]string{"LPOS", "l", "a", "COUNT", "9223372036854775807"}, "[0 1]"}, // makeslice: cap out of range
		{[]string{"LPOS", "l", "a", "count", "1000000000", "MAXLEN", "1"}, "[0]"},
		{[]string{"LPOS", "l", "a", "COUNT", "1"}, "[0]"},
		{[]string{"XTRIM", "x", "MAXLEN", "-1"}, "-ERR The MAXLEN argument must be >= 0."}, // slice bounds out of range
		{[]string{"XTRIM", "x", "maxlen", "~", "-5"}, "-ERR The MAXLEN argument must be >= 0."},
		{[]string{"XTRIM", "x", "MAXLEN", "="}, "-ERR value is not an integer or out of range"}, // index out of range
		{[]string{"XTRIM", "x", "MINID", "~"}, "-ERR Invalid stream ID specified as stream command argument"},
		{[]string{"XTRIM", "x", "MAXLEN", "5"}, "0"},
		{[]string{"HEXPIRE", "h", "10", "FIELDS", "9223372036854775807", "f"}, numFields}, // slice bounds out of range
		{[]string{"HEXPIRE", "h", "10", "FIELDS", "1", "f", "FIELDS"}, "-ERR Parameter `numFields` should be greater than 0"},
		{[]string{"HEXPIRE", "h", "10", "NX", "FIELDS", "1", "f"}, "[1]"},
		{[]string{"HEXPIRE", "h", "10", "FIELDS", "2", "f"}, numFields},
		{[]string{"EVAL", "return newproxy(true)", "0"}, newproxy}, // panic: wat: *lua.LUserData
		{[]string{"SCRIPT", "LOAD", "return {newproxy()}"}, newproxy},
		{[]string{"EVAL", "return redis.pcall('SRANDMEMBER', KEYS[1], ARGV[1])", "1", "s", "-9223372036854775808"}, outOfRange},
		{[]string{"EVAL", "return redis.pcall('LPOS', KEYS[1], 'a', 'COUNT', ARGV[1])", "1", "l", "9223372036854775807"}, "[0 1]"},
		// Reply frames past the header's count, which desynchronised the connection.
		{[]string{"XREAD", "STREAMS", "x", "x", "0", "0"}, "-ERR respiretest: the embedded engine cannot read the same stream twice in one command (its reply would not match its header)"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "x", "x", ">", ">"}, "-ERR respiretest: the embedded engine cannot read the same stream twice in one command (its reply would not match its header)"},
		{[]string{"XREAD", "COUNT", "1", "STREAMS", "x", "nokey", "0", "0"}, "[[x [[1-1 [f v]]]]]"},
		// A script waiting for another client held the engine for good.
		{[]string{"EVAL", "return redis.pcall('BLPOP', KEYS[1], 0)", "1", "empty"}, "-ERR This Redis command is not allowed from script"},
		{[]string{"EVAL", "return redis.pcall('BZPOPMIN', KEYS[1], 0)", "1", "empty"}, "-ERR This Redis command is not allowed from script"},
		{[]string{"EVAL", "return redis.pcall('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')", "1", "x"}, "-ERR XREAD command is not allowed with BLOCK option from scripts"},
		{[]string{"SSCAN", "s", "-100000000"}, "[0 []]"}, // slice bounds out of range
		{[]string{"ZSCAN", "z", "-1", "COUNT", "5"}, "[0 []]"},
		{[]string{"SSCAN", "s", "0"}, "[0 [a]]"},
		{[]string{"BLPOP", "l", "0"}, "[l a]"},
	} {
		wantReply(t, strings.Join(tc.cmd, " "), c.do(tc.cmd...), tc.want)
	}
	wantReply(t, "PING after", c.do("PING"), "PONG")
}
