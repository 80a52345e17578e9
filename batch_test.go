package respire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/respiretest"
)

// proxiedStandalone connects a client to the standalone server through a
// fault proxy.
func proxiedStandalone(t *testing.T, opts Options) (*Client, *respiretest.Proxy) {
	t.Helper()
	px := realProxy(t, standaloneAddr(t))
	opts.Endpoints = []string{px.Addr()}
	c := newClient(t, opts)
	t.Cleanup(func() { flush(t, standaloneAddr(t)) })
	return c, px
}

// framesSent counts the frames px forwarded to its server, every command
// but the health monitor's PING (which may run at any time).
func framesSent(px *respiretest.Proxy) int {
	return px.Forwarded("") - px.Forwarded("PING")
}

func TestBatchResultsAndBadInput(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	b := c.NewBatch()
	before := framesSent(px) // the handshake's
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if n := framesSent(px) - before; n != 0 {
		t.Errorf("an empty batch sent %d frames", n)
	}
	if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("second Execute = %v, want ErrInvalidArgument", err)
	}
	if err := b.Set(p+"late", "v").Err(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("member added after Execute = %v", err)
	}

	b = c.NewBatch()
	set := b.Set(p+"s", "text")
	get := b.Get(p + "s")
	bad := b.Incr(p + "s") // not an integer: that member's own error
	missing := b.Get(p + "missing")
	raw := b.Do(NewCommand("STRLEN"), p+"s")
	if _, err := get.Result(); !errors.Is(err, ErrNotExecuted) {
		t.Errorf("result before Execute = %v, want ErrNotExecuted", err)
	}
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if err := set.Err(); err != nil {
		t.Errorf("SET = %v", err)
	}
	if v, err := get.Result(); v != "text" || err != nil {
		t.Errorf("GET = %q, %v", v, err)
	}
	var se *ServerError
	if _, err := bad.Result(); !errors.As(err, &se) || se.Code != "ERR" {
		t.Errorf("INCR of a string = %v, want its own ERR", err)
	}
	if _, err := missing.Result(); !errors.Is(err, ErrNil) {
		t.Errorf("GET missing = %v, want ErrNil", err)
	}
	if r, err := raw.Result(); err != nil || r.v.Int != 4 {
		t.Errorf("STRLEN = %v, %v", r.v, err)
	}

	for _, cmd := range []Command{NewCommand("SUBSCRIBE"), NewCommand("BLPOP"), NewCommand("MULTI")} {
		for _, tx := range []bool{false, true} {
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			before := framesSent(px)
			ok := b.Set(p+"x", "v")
			b.Do(cmd, p+"x", "1")
			if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s (tx %v): Execute = %v, want ErrInvalidArgument", cmd.Name(), tx, err)
			}
			if err := ok.Err(); err == nil {
				t.Errorf("%s (tx %v): the valid member ran", cmd.Name(), tx)
			}
			if n := framesSent(px) - before; n != 0 {
				t.Errorf("%s (tx %v): %d frames sent", cmd.Name(), tx, n)
			}
		}
	}
}

// TestBatchTravelsAsOneUnit: a batch's members reach the server
// back to back, whatever other goroutines send on the shared connection
// (which carries every batch with NoBatchConnections).
func TestBatchTravelsAsOneUnit(t *testing.T) {
	// The arrival order is one connection's.
	c, px := proxiedStandalone(t, Options{BatchConnections: NoBatchConnections, SoloConnections: NoSoloConnections})
	ctx := testCtx(t)
	p := keyPrefix(t)
	var mu sync.Mutex
	var order []string
	px.MustAddRule(t, respiretest.Rule{Times: respiretest.Always, Action: respiretest.Pass, OnReceive: func(args []string) {
		mu.Lock()
		order = append(order, args[0])
		mu.Unlock()
	}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = c.Get(ctx, p+"other")
			}
		}()
	}
	for range 20 {
		b := c.NewBatch()
		for range 100 {
			b.Incr(p + "n")
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	run := 0
	for _, cmd := range order {
		switch {
		case cmd == "INCR":
			run++
		case run%100 != 0:
			t.Fatalf("a GET arrived inside a batch after %d of its members", run%100)
		}
	}
	if run != 2000 {
		t.Errorf("%d INCRs arrived, want 2000", run)
	}
}

// TestLargeUnitsTravelOnBatchConnections, with the server's MONITOR as
// witness (it names the connection of every command): batches of 100 SETs
// and transactions of 40 (each unit over 8 KiB), sent from several
// goroutines while others send GETs, run on the batch connections in
// turn, each unit back to back on its connection (two units may share
// one, never interleave), while the GETs and batches of 10 SETs stay on
// the shared connection. With NoBatchConnections every unit runs on the
// shared connection.
func TestLargeUnitsTravelOnBatchConnections(t *testing.T) {
	value := strings.Repeat("v", 256)
	for _, tc := range []struct {
		name  string
		lanes int
		want  int // connections that carry large units
	}{{"default", 0, defaultBatchConnections}, {"two", 2, 2}, {"none", NoBatchConnections, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			addr := standaloneAddr(t)
			p := keyPrefix(t)
			mon := startMonitor(t, addr, p)
			// Small units and GETs all stay on the shared connection.
			c := newClient(t, Options{BatchConnections: tc.lanes, SoloConnections: NoSoloConnections})
			ctx := testCtx(t)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range 4 {
				wg.Go(func() {
					for !stopped(stop) {
						_, _ = c.Get(ctx, p+"get")
					}
				})
			}
			var units sync.WaitGroup
			for g := range 6 {
				units.Go(func() {
					for i := range 8 {
						var b *Batch
						n, k := 100, fmt.Sprintf("%sbig%d", p, g)
						switch {
						case g%3 == 1:
							b, n, k = c.NewTransaction(), 40, fmt.Sprintf("%stx%d", p, g)
						case g%3 == 2 && i%2 == 0:
							n, k = 10, fmt.Sprintf("%ssmall%d", p, g) // 2.9 KiB: the shared connection
						}
						if b == nil {
							b = c.NewBatch()
						}
						for range n {
							b.Set(k, value)
						}
						if err := b.Execute(ctx); err != nil {
							t.Error(err)
						}
					}
				})
			}
			units.Wait()
			close(stop)
			wg.Wait()
			byConn := mon.stop(t, c, p+"end")

			getConn := ""
			for conn, cmds := range byConn {
				if slices.ContainsFunc(cmds, func(m monitored) bool { return m.key == p+"get" }) {
					getConn = conn
				}
			}
			if getConn == "" {
				t.Fatal("MONITOR saw no GET")
			}
			large := map[string]bool{}
			for conn, cmds := range byConn {
				for i := 0; i < len(cmds); {
					m := cmds[i]
					switch {
					case m.cmd == "MULTI":
						j := i + 1
						for j < len(cmds) && cmds[j].cmd == "SET" && cmds[j].key == cmds[i+1].key {
							j++
						}
						if j-i-1 != 40 || j >= len(cmds) || cmds[j].cmd != "EXEC" {
							t.Fatalf("connection %s: a transaction's MULTI is followed by %d SETs of its key and then %v", conn, j-i-1, cmds[min(j, len(cmds)-1)])
						}
						large[conn] = true
						i = j + 1
					case m.cmd == "SET":
						want := 100
						if strings.Contains(m.key, "small") {
							want = 10
						}
						j := i
						for j < len(cmds) && cmds[j].cmd == "SET" && cmds[j].key == m.key && j-i < want {
							j++
						}
						if j-i != want {
							t.Fatalf("connection %s: %d SETs of %s, then %v: a unit was interleaved", conn, j-i, m.key, cmds[min(j, len(cmds)-1)])
						}
						if want == 100 {
							large[conn] = true
						} else if conn != getConn {
							t.Errorf("a batch of 10 ran on %s, not on the shared connection %s", conn, getConn)
						}
						i = j
					default:
						i++
					}
				}
			}
			if len(large) != tc.want {
				t.Errorf("large units ran on %d connections, want %d", len(large), tc.want)
			}
			if shared := large[getConn]; shared != (tc.lanes == NoBatchConnections) {
				t.Errorf("a large unit ran on the shared connection: %v, want %v", shared, tc.lanes == NoBatchConnections)
			}
		})
	}
}

// monitored is one command MONITOR reported: its name and first argument.
type monitored struct{ cmd, key string }

// monitorFeed reads a MONITOR connection: the commands of each client
// connection (by its address) that name prefix, with their MULTI and EXEC.
type monitorFeed struct {
	nc     net.Conn
	prefix string
	done   chan struct{}
	end    chan struct{}
	byConn map[string][]monitored
}

// startMonitor opens a MONITOR connection to addr.
func startMonitor(t *testing.T, addr, prefix string) *monitorFeed {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	rd := bufio.NewReader(nc)
	if _, err := nc.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q, %v", line, err)
	}
	m := &monitorFeed{nc: nc, prefix: prefix, done: make(chan struct{}), end: make(chan struct{}), byConn: map[string][]monitored{}}
	go func() {
		defer close(m.done)
		ended := false
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			// +1733400000.123456 [0 127.0.0.1:54321] "INCR" "key"
			open, close_ := strings.IndexByte(line, '['), strings.IndexByte(line, ']')
			if open < 0 || close_ < open {
				continue
			}
			fields := strings.Fields(line[open+1 : close_])
			if len(fields) != 2 {
				continue
			}
			conn := fields[1]
			args := strings.Split(strings.TrimSpace(line[close_+1:]), " ")
			var mc monitored
			if len(args) > 0 {
				mc.cmd = strings.ToUpper(strings.Trim(args[0], `"`))
			}
			if len(args) > 1 {
				mc.key = strings.Trim(args[1], `"`)
			}
			if mc.cmd == "MULTI" || mc.cmd == "EXEC" || strings.HasPrefix(mc.key, prefix) {
				m.byConn[conn] = append(m.byConn[conn], mc)
			}
			if strings.HasSuffix(mc.key, "end") && strings.HasPrefix(mc.key, prefix) && !ended {
				ended = true
				close(m.end)
			}
		}
	}()
	return m
}

// stop sends GET end through c, waits until MONITOR reported it (after
// everything c ran before), and returns the commands by connection.
func (m *monitorFeed) stop(t *testing.T, c *Client, end string) map[string][]monitored {
	t.Helper()
	if _, err := c.Get(testCtx(t), end); err != nil && !errors.Is(err, ErrNil) {
		t.Fatal(err)
	}
	select {
	case <-m.end:
	case <-testCtx(t).Done():
		t.Fatal("MONITOR never reported the end marker")
	}
	m.nc.Close()
	<-m.done
	// MULTI and EXEC name no key: MONITOR reports other clients' too (tests
	// running in parallel on the same server). A connection none of whose
	// commands names the prefix is not one of this test's.
	for conn, cmds := range m.byConn {
		if !slices.ContainsFunc(cmds, func(c monitored) bool { return strings.HasPrefix(c.key, m.prefix) }) {
			delete(m.byConn, conn)
		}
	}
	return m.byConn
}

// TestBatchRetryUnit is the spec's warning case: INCR a, GET b, INCR c
// with GET's reply lost (the connection breaks after the server ran all
// three). Under the default policy nothing is replayed and each INCR ran
// once; under WriteAccumulating the whole batch is replayed, each INCR ran
// twice, and the results are the final attempt's.
func TestBatchRetryUnit(t *testing.T) {
	countsCommands(t)
	for _, tc := range []struct {
		name     string
		max      RetryCategory
		replayed bool
	}{{"Default", 0, false}, {"WriteAccumulating", WriteAccumulating, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: tc.max, InitialBackoff: NoBackoff}})
			ctx := testCtx(t)
			p := keyPrefix(t)
			px.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.LoseReply})
			addr := standaloneAddr(t)
			before := commandCalls(t, addr, "incr")
			b := c.NewBatch()
			a := b.Incr(p + "a")
			g := b.Get(p + "b")
			cc := b.Incr(p + "c")
			err := b.Execute(ctx)
			ran := commandCalls(t, addr, "incr") - before
			if !tc.replayed {
				if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
					t.Fatalf("Execute = %v, want the lost connection, possibly executed", err)
				}
				for _, e := range []error{a.Err(), g.Err(), cc.Err()} {
					if !errors.Is(e, ErrConnectionLost) {
						t.Errorf("member = %v, want the unit's error", e)
					}
				}
				// Both INCRs ran, once: nothing was replayed.
				if ran != 2 {
					t.Errorf("INCR ran %d times, want 2 (INCR a and INCR c once each: no replay)", ran)
				}
				return
			}
			if err != nil {
				t.Fatalf("Execute = %v, want the replay's success", err)
			}
			// Each INCR ran in both attempts.
			if ran != 4 {
				t.Errorf("INCR ran %d times, want 4 (each INCR twice)", ran)
			}
			if v, _ := a.Result(); v != 2 {
				t.Errorf("INCR a = %d, want 2 (the final attempt's reply)", v)
			}
			if v, _ := cc.Result(); v != 2 {
				t.Errorf("INCR c = %d, want 2 (the final attempt's reply)", v)
			}
			if _, err := g.Result(); !errors.Is(err, ErrNil) {
				t.Errorf("GET b = %v", err)
			}
		})
	}
}

// TestTransactionLostExecReply: a lost EXEC reply is possible execution:
// not replayed under the default policy; replayed as a whole (MULTI,
// members, EXEC) under a permitting one, with the final EXEC's results.
func TestTransactionLostExecReply(t *testing.T) {
	countsCommands(t)
	for _, replay := range []bool{false, true} {
		t.Run("replay="+strconv.FormatBool(replay), func(t *testing.T) {
			var max RetryCategory
			if replay {
				max = WriteAccumulating
			}
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: max, InitialBackoff: NoBackoff}})
			ctx := testCtx(t)
			p := keyPrefix(t)
			px.MustAddRule(t, respiretest.Rule{Command: "EXEC", Action: respiretest.DropAfterForward})
			addr := standaloneAddr(t)
			before, execs := commandCalls(t, addr, "incr"), commandCalls(t, addr, "exec")
			tx := c.NewTransaction()
			x := tx.Incr(p + "x")
			y := tx.IncrBy(p+"y", 10)
			err := tx.Execute(ctx)
			ran, execRan := commandCalls(t, addr, "incr")+commandCalls(t, addr, "incrby")-before, commandCalls(t, addr, "exec")-execs
			if !replay {
				if !MayHaveExecuted(err) || !errors.Is(err, ErrConnectionLost) {
					t.Fatalf("Execute = %v, want a possibly executed connection loss", err)
				}
				if execRan != 1 {
					t.Errorf("EXEC ran %d times, want 1", execRan)
				}
				return
			}
			if err != nil {
				t.Fatalf("Execute = %v", err)
			}
			if execRan != 2 || ran < 2 {
				t.Errorf("EXEC ran %d times, the members %d: want the unit twice", execRan, ran)
			}
			if v, _ := x.Result(); v != 2 {
				t.Errorf("INCR x = %d, want 2", v)
			}
			if v, _ := y.Result(); v != 20 {
				t.Errorf("INCRBY y = %d, want 20", v)
			}
		})
	}
}

// TestBatchLifetime: cancellation during a unit's backoff (a batch's, or a
// transaction's after its lost EXEC reply) stops it with the caller's
// error and faults every member, those whose replies had arrived
// included; Close during the backoff faults it without resend. In
// virtual time, so the lost reply is seen and the backoff has started
// before the cancellation (synctest.Wait).
func TestBatchLifetime(t *testing.T) {
	for _, tx := range []bool{false, true} {
		for _, how := range []string{"Cancel", "Close"} {
			t.Run(unitKind(tx)+"/"+how, func(t *testing.T) {
				retrySynctest(t, func(t *testing.T) {
					s := respiretest.NewServer(t)
					lost := "GETRANGE" // the member whose reply is lost
					if tx {
						lost = "EXEC"
					}
					rule := s.MustAddRule(t, respiretest.Rule{Command: lost, Action: respiretest.DropAfterForward})
					c := retryMemClient(t, s, Options{RetryPolicy: &RetryPolicy{InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: NoJitter}, CommandTimeout: NoTimeout})
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					b := c.NewBatch()
					if tx {
						b = c.NewTransaction()
					}
					first := b.Get("a")
					b.Do(NewCommand("GETRANGE").WithRetryCategory(ReadOnly), "b", "0", "-1")
					done := make(chan error, 1)
					go func() { done <- b.Execute(ctx) }()
					<-rule.Received()
					synctest.Wait() // the lost reply is seen and the backoff started
					if how == "Cancel" {
						cancel()
					} else {
						_ = c.Close()
					}
					err := <-done
					want := context.Canceled
					if how == "Close" {
						want = ErrClosed
					}
					if !errors.Is(err, want) || !MayHaveExecuted(err) {
						t.Fatalf("Execute = %v, want %v, possibly executed", err, want)
					}
					if !errors.Is(first.Err(), want) {
						t.Errorf("first member = %v, want the unit's error", first.Err())
					}
					if n := rule.Matched(); n != 1 {
						t.Errorf("%s sent %d times, want 1", lost, n)
					}
				})
			})
		}
	}
}

// unitKind names a batch or a transaction in subtest names.
func unitKind(tx bool) string {
	if tx {
		return "Transaction"
	}
	return "Batch"
}

// TestWatchQueueExecutedByCallbackIsRefused: Execute on a Watch's queue
// from inside the callback would send MULTI ... EXEC on the shared
// connection, where no key is watched: it is refused before any I/O, a
// callback returning that error ends Watch with nothing applied, and a
// callback that goes on returns normally and Watch executes the queue
// under WATCH.
func TestWatchQueueExecutedByCallbackIsRefused(t *testing.T) {
	c := newClient(t, Options{})
	ctx, k := testCtx(t), key(t)
	if err := c.Set(ctx, k, "0"); err != nil {
		t.Fatal(err)
	}
	var inner error
	err := c.Watch(ctx, func(tx *Tx) error {
		q := tx.Queue()
		q.Incr(k)
		inner = q.Execute(ctx)
		return inner
	}, k)
	if !errors.Is(inner, ErrInvalidArgument) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Execute in the callback = %v, Watch = %v; want ErrInvalidArgument for both", inner, err)
	}
	if v, err := c.Get(ctx, k); err != nil || v != "0" {
		t.Fatalf("after the refused Execute GET = %q, %v; want \"0\" (nothing applied)", v, err)
	}
	var incr Future[int64]
	err = c.Watch(ctx, func(tx *Tx) error {
		q := tx.Queue()
		incr = q.Incr(k)
		if err := q.Execute(ctx); !errors.Is(err, ErrInvalidArgument) {
			return fmt.Errorf("Execute in the callback = %v, want ErrInvalidArgument", err)
		}
		return nil
	}, k)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if n, err := incr.Result(); err != nil || n != 1 {
		t.Fatalf("INCR executed by Watch = %d, %v; want 1", n, err)
	}
}

// TestWatchCounter: 16 goroutines increment one counter with Watch; the
// counter ends at the number of committed transactions.
func TestWatchCounter(t *testing.T) {
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := keyPrefix(t) + "{w}counter"
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), k) })
		var committed, conflicts atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					err := c.Watch(ctx, func(tx *Tx) error {
						v, err := tx.Get(ctx, k)
						n := int64(0)
						if err == nil {
							n, _ = strconv.ParseInt(v, 10, 64)
						} else if !errors.Is(err, ErrNil) {
							return err
						}
						tx.Queue().Set(k, strconv.FormatInt(n+1, 10))
						return nil
					}, k)
					switch {
					case err == nil:
						committed.Add(1)
					case errors.Is(err, ErrTxConflict):
						conflicts.Add(1)
					default:
						t.Errorf("Watch: %v", err)
					}
				}
			}()
		}
		wg.Wait()
		v, err := c.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.ParseInt(v, 10, 64); n != committed.Load() {
			t.Errorf("counter = %d, committed transactions %d (conflicts %d)", n, committed.Load(), conflicts.Load())
		}
		t.Logf("%d committed, %d gave up after 16 conflicts", committed.Load(), conflicts.Load())
	})
}

// TestClusterBatchGroups: a Cluster batch is grouped by node; a lost reply
// retries only its group (every member of it), other groups keep their
// results; a transaction across slots fails before any I/O.
func TestClusterBatchGroups(t *testing.T) {
	countsCommands(t)
	c, proxies := proxiedCluster(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
	ctx := testCtx(t)
	primaries := c.topo.Primaries()
	a, b := primaries[0].Addr, primaries[1].Addr
	ka, _ := keyOn(t, c, a)
	kb, _ := keyOn(t, c, b)
	kb2 := kb + "x"
	for n, _ := c.topo.Pick(route.Slot(kb2), false); n.Addr != b; n, _ = c.topo.Pick(route.Slot(kb2), false) {
		kb2 += "x"
	}
	if err := c.MSet(ctx, ka, "va", kb, "vb", kb2, "vb2"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Del(testCtx(t), ka, kb, kb2) })
	rule := proxies[b].MustAddRule(t, respiretest.Rule{Command: "GETRANGE", Action: respiretest.DropAfterForward})
	defer rule.Remove()
	ra, rb, rb2 := commandCalls(t, a, "getrange"), commandCalls(t, b, "getrange"), commandCalls(t, b, "get")
	batch := c.NewBatch()
	gr := NewCommand("GETRANGE").WithRetryCategory(ReadOnly)
	fa := batch.Do(gr, ka, "0", "-1")
	fb2 := batch.Get(kb2)
	fb := batch.Do(gr, kb, "0", "-1")
	if err := batch.Execute(ctx); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	for _, c := range []struct {
		f    Future[Reply]
		want string
	}{{fa, "va"}, {fb, "vb"}} {
		if r, err := c.f.Result(); err != nil || string(r.v.Str) != c.want {
			t.Errorf("member = %v, %v; want %s", r.v, err, c.want)
		}
	}
	if v, err := fb2.Result(); v != "vb2" || err != nil {
		t.Errorf("GET = %q, %v", v, err)
	}
	if got := commandCalls(t, a, "getrange") - ra; got != 1 {
		t.Errorf("a ran GETRANGE %d times, want 1 (its group kept its result)", got)
	}
	if got := commandCalls(t, b, "getrange") - rb; got != 2 {
		t.Errorf("b ran GETRANGE %d times, want 2 (its group was resent)", got)
	}
	if got := commandCalls(t, b, "get") - rb2; got != 2 {
		t.Errorf("b ran GET %d times, want 2 (every member of the group is resent)", got)
	}

	tx := c.NewTransaction()
	tx.Set(ka, "1")
	tx.Set(kb, "2")
	sent := framesSent(proxies[a]) + framesSent(proxies[b])
	if err := tx.Execute(ctx); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("cross-slot transaction = %v, want ErrCrossSlot", err)
	}
	if n := framesSent(proxies[a]) + framesSent(proxies[b]) - sent; n != 0 {
		t.Errorf("%d frames sent for a refused transaction", n)
	}
	tx = c.NewTransaction()
	x := tx.Incr(ka + "{n}")
	_ = x
	if err := tx.Execute(ctx); err != nil {
		t.Errorf("one-slot transaction: %v", err)
	}
	_, _ = c.Del(ctx, ka+"{n}")
}

// TestBatchTypedMembersAndReset: typed members validate like their Client
// methods (a rejected one fails Execute before any I/O) and convert like
// them; Reset empties a batch for reuse, and its older Futures report
// ErrBatchReset while values already read stay intact.
func TestBatchTypedMembersAndReset(t *testing.T) {
	c, px := proxiedStandalone(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	var zero Future[string]
	if err := zero.Err(); !errors.Is(err, ErrNotExecuted) {
		t.Errorf("zero Future = %v, want ErrNotExecuted", err)
	}
	for name, queue := range map[string]func(b *Batch){
		"SetWithOptions": func(b *Batch) { b.SetWithOptions(p+"k", "v", SetOptions{TTL: time.Microsecond}) },
		"ZAddNaN":        func(b *Batch) { b.ZAdd(p+"z", ZAddOptions{}, Z{Score: math.NaN(), Member: "m"}) },
		"ZAddNone":       func(b *Batch) { b.ZAdd(p+"z", ZAddOptions{}) },
		"XAddOddPairs":   func(b *Batch) { b.XAdd(p+"x", XAddOptions{}, "f") },
		"MSetOdd":        func(b *Batch) { b.MSet(p + "a") },
		"ScanNegative":   func(b *Batch) { b.Scan(ScanPage[string]{}, ScanOptions{Count: -1}) },
		"HSetOdd":        func(b *Batch) { b.HSet(p+"h", "f") },
	} {
		before := framesSent(px)
		b := c.NewBatch()
		ok := b.Incr(p + "n")
		queue(b)
		if err := b.Execute(ctx); !errors.Is(err, ErrInvalidArgument) || !errors.Is(ok.Err(), ErrInvalidArgument) {
			t.Errorf("%s: Execute = %v, valid member %v; want ErrInvalidArgument for both", name, err, ok.Err())
		}
		if n := framesSent(px) - before; n != 0 {
			t.Errorf("%s: %d frames sent", name, n)
		}
	}

	b := c.NewBatch()
	opt := b.SetWithOptions(p+"s", "v1", SetOptions{Get: true})
	mset := b.MSet(p+"m1", "a", p+"m2", "b")
	zadd := b.ZAdd(p+"z", ZAddOptions{}, Z{1, "one"}, Z{2, "two"})
	zr := b.ZRange(p+"z", 0, -1)
	zs := b.ZScore(p+"z", "two")
	xid := b.XAdd(p+"x", XAddOptions{ID: "1-1"}, "f", "v")
	xlen := b.XLen(p + "x")
	raw := b.Do(NewCommand("GET"), p+"m1")
	if err := b.Execute(ctx); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if r, err := opt.Result(); err != nil || !r.Written || r.PreviousExists {
		t.Errorf("SET GET = %+v, %v", r, err)
	}
	if err := mset.Err(); err != nil {
		t.Errorf("MSET = %v", err)
	}
	if n, err := zadd.Result(); n != 2 || err != nil {
		t.Errorf("ZADD = %d, %v", n, err)
	}
	if v, err := zr.Result(); err != nil || strings.Join(v, ",") != "one,two" {
		t.Errorf("ZRANGE = %v, %v", v, err)
	}
	if v, err := zs.Result(); v != 2 || err != nil {
		t.Errorf("ZSCORE = %v, %v", v, err)
	}
	if v, err := xid.Result(); v != "1-1" || err != nil {
		t.Errorf("XADD = %q, %v", v, err)
	}
	if v, err := xlen.Result(); v != 1 || err != nil {
		t.Errorf("XLEN = %d, %v", v, err)
	}
	kept, err := raw.Result()
	if err != nil || string(kept.v.Str) != "a" {
		t.Fatalf("raw GET = %v, %v", kept.v, err)
	}

	b.Reset()
	if err := zadd.Err(); !errors.Is(err, ErrBatchReset) {
		t.Errorf("Future after Reset = %v, want ErrBatchReset", err)
	}

	// A Reply aliases the batch's reply memory; Reset must not hand that
	// memory to the next use, whose first reply would land on it.
	for range 2 {
		b.Reset()
		first := b.Do(NewCommand("GET"), p+"m1")
		b.Get(p + "m1")
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		kept, err = first.Result()
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		again := b.Get(p + "m2")
		b.Get(p + "m2")
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("Execute after Reset: %v", err)
		}
		if v, err := again.Result(); v != "b" || err != nil {
			t.Errorf("GET after Reset = %q, %v", v, err)
		}
		if string(kept.v.Str) != "a" {
			t.Errorf("a Reply read before Reset changed to %q", string(kept.v.Str))
		}
	}
}

// TestBatchMoreTypedMembers: the typed batch members of the hash, list,
// set, sorted-set, key and string families convert as their Client
// methods do, under RESP2 and RESP3.
func TestBatchMoreTypedMembers(t *testing.T) {
	forEachProtocol(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		p := keyPrefix(t)
		h, l, s, z, k := p+"h", p+"l", p+"s", p+"z", p+"k"
		t.Cleanup(func() { _, _ = c.Del(testCtx(t), h, l, s, z, k) })
		setup := c.NewBatch()
		setup.HSet(h, "f", "1")
		setup.RPush(l, "a", "b")
		setup.SAdd(s, "x", "y")
		setup.ZAdd(z, ZAddOptions{}, Z{1, "m"}, Z{2, "n"})
		setup.Set(k, "10")
		if err := setup.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		b := c.NewBatch()
		hincr, hex, hlen := b.HIncrBy(h, "f", 5), b.HExists(h, "f"), b.HLen(h)
		rpop, llen := b.RPop(l), b.LLen(l)
		srem, scard, sism := b.SRem(s, "x"), b.SCard(s), b.SIsMember(s, "y")
		zrank, zrem, zcard := b.ZRank(z, "n"), b.ZRem(z, "m"), b.ZCard(z)
		missingRank := b.ZRank(z, "absent")
		decr, typ, persist := b.DecrBy(k, 3), b.Type(k), b.Persist(k)
		getdel, unlink := b.GetDel(k), b.Unlink(k)
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		ints := map[string]Future[int64]{"HINCRBY": hincr, "HLEN": hlen, "LLEN": llen, "SREM": srem, "SCARD": scard,
			"ZRANK": zrank, "ZREM": zrem, "ZCARD": zcard, "DECRBY": decr, "UNLINK": unlink}
		want := map[string]int64{"HINCRBY": 6, "HLEN": 1, "LLEN": 1, "SREM": 1, "SCARD": 1, "ZRANK": 1, "ZREM": 1, "ZCARD": 1, "DECRBY": 7, "UNLINK": 0}
		for name, f := range ints {
			if v, err := f.Result(); err != nil || v != want[name] {
				t.Errorf("%s = %d, %v; want %d", name, v, err, want[name])
			}
		}
		for name, f := range map[string]Future[bool]{"HEXISTS": hex, "SISMEMBER": sism} {
			if v, err := f.Result(); err != nil || !v {
				t.Errorf("%s = %v, %v; want true", name, v, err)
			}
		}
		if v, err := persist.Result(); err != nil || v {
			t.Errorf("PERSIST = %v, %v; want false (no TTL)", v, err)
		}
		if _, err := missingRank.Result(); !errors.Is(err, ErrNil) {
			t.Errorf("ZRANK of an absent member = %v, want ErrNil", err)
		}
		for name, c := range map[string]struct {
			f    Future[string]
			want string
		}{"RPOP": {rpop, "b"}, "TYPE": {typ, "string"}, "GETDEL": {getdel, "7"}} {
			if v, err := c.f.Result(); err != nil || v != c.want {
				t.Errorf("%s = %q, %v; want %q", name, v, err, c.want)
			}
		}
	})
}

// TestOneMemberBatchKeepsServerError: the only member of a batch whose
// reply is an error holds that *ServerError, as a member of a larger
// batch does (a one-member unit frame keeps its reply differently).
func TestOneMemberBatchKeepsServerError(t *testing.T) {
	s := respiretest.NewServer(t)
	c := retryMemClient(t, s, Options{})
	ctx := testCtx(t)
	if _, err := c.LPush(ctx, "list", "x"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		b := c.NewBatch()
		incr := b.Incr("list")
		for range n - 1 {
			b.Get("other")
		}
		if err := b.Execute(ctx); err != nil {
			t.Fatalf("%d members: Execute = %v", n, err)
		}
		if _, err := incr.Result(); !errors.Is(err, &ServerError{Code: "WRONGTYPE"}) {
			t.Errorf("%d members: INCR on a list = %v, want WRONGTYPE", n, err)
		}
	}
}

// TestTransactionQueueErrorNamesItsCommand: a queued command the server
// refuses (EXEC then aborts) fails the transaction with a ServerError
// whose Command names that command and its place, on every topology and
// for a Watch queue too: "SET (transaction member 2)", not only its index.
func TestTransactionQueueErrorNamesItsCommand(t *testing.T) {
	const want = "SET (transaction member 2)"
	named := func(err error) bool {
		var se *ServerError
		return errors.As(err, &se) && se.Command == want && se.Code == "ERR"
	}
	topologies(t, Options{}, func(t *testing.T, c *Client) {
		ctx := testCtx(t)
		k := key(t, "k")
		tx := c.NewTransaction()
		g := tx.Get(k)
		s := tx.Do(NewCommand("SET"), k) // wrong number of arguments
		err := tx.Execute(ctx)
		if !named(err) {
			t.Errorf("Execute = %v, want a ServerError of %q", err, want)
		}
		for i, e := range []error{g.Err(), s.Err()} {
			if !named(e) {
				t.Errorf("member %d = %v, want the unit's ServerError of %q", i+1, e, want)
			}
		}
		err = c.Watch(ctx, func(tx *Tx) error {
			tx.Queue().Get(k)
			tx.Queue().Do(NewCommand("SET"), k)
			return nil
		}, k)
		if !named(err) {
			t.Errorf("Watch = %v, want a ServerError of %q", err, want)
		}
	})
}

// TestBatchConcurrentExecuteRunsOnce: two goroutines executing one batch
// at once (a misuse: a Batch is executed once, by one goroutine) still
// send it once: one Execute runs it, the other fails with
// ErrInvalidArgument and sends nothing, so an INCR member runs once.
func TestBatchConcurrentExecuteRunsOnce(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	k := key(t, "n")
	for _, tx := range []bool{false, true} {
		b := c.NewBatch()
		if tx {
			b = c.NewTransaction()
		}
		n := b.Incr(k)
		start := make(chan struct{})
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				<-start
				errs <- b.Execute(ctx)
			}()
		}
		close(start)
		e1, e2 := <-errs, <-errs
		if e1 != nil {
			e1, e2 = e2, e1
		}
		if e1 != nil || !errors.Is(e2, ErrInvalidArgument) {
			t.Errorf("transaction %v: Executes = %v, %v; want one nil and one ErrInvalidArgument", tx, e1, e2)
		}
		if err := n.Err(); err != nil {
			t.Errorf("transaction %v: INCR = %v", tx, err)
		}
	}
	if v, err := admin(t, standaloneAddr(t), "GET", k).Int64(); v != 2 || err != nil {
		t.Errorf("the key holds %d, %v; want 2 (each unit's INCR ran once)", v, err)
	}
}
