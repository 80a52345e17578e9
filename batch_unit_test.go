package respire

// Rules of batch and transaction units that hold by construction, each
// shown on a real server through the fault proxy: a unit that could not
// get a connection is definitely unwritten; a transaction never
// interleaves with other callers on the shared connection; a function
// member's category decides its unit's retry; a Cluster batch records
// its retry telemetry per slot group.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/respiretest"
)

// waitingCtx is a context that reports the first call of its Done
// method: a unit's attempt that finds no live connection selects on Done
// while it waits for the endpoint's dial in flight (nothing on the way
// there asks for Done when the context has its own deadline).
type waitingCtx struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func newWaitingCtx(ctx context.Context) *waitingCtx {
	return &waitingCtx{Context: ctx, waiting: make(chan struct{})}
}

func (c *waitingCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// TestUnitAcquisitionFailureIsUnwritten proves that a batch or
// transaction whose connection could not be had counts as definitely
// unwritten: a unit holding an INCR, under a policy that does not permit
// resending writes that may have run (the default, ReadOnly), whose
// attempt fails to get a connection is resent and succeeds. The shared
// connection is killed and its replacement dial is held at the proxy
// until the unit waits for it, then fails (its HELLO is dropped before it
// reaches the server), so the unit's first attempt is that failed
// acquisition. The key's value shows INCR ran exactly once, the proxy
// that it (and MULTI and EXEC) reached the server once; the retry
// counter shows one attempted resend and one success, tagged
// write_accumulating.
func TestUnitAcquisitionFailureIsUnwritten(t *testing.T) {
	for _, tx := range []bool{false, true} {
		name := "Batch"
		if tx {
			name = "Transaction"
		}
		t.Run(name, func(t *testing.T) {
			opts, reader := withRetryMetrics(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
			c, px := proxiedStandalone(t, opts)
			addr := standaloneAddr(t)
			k := keyPrefix(t) + "n"
			arrived, release := make(chan struct{}), make(chan struct{})
			var releaseOnce sync.Once
			unblock := func() { releaseOnce.Do(func() { close(release) }) }
			defer unblock()
			hello := px.MustAddRule(t, respiretest.Rule{Command: "HELLO", Action: respiretest.DropBeforeForward,
				OnReceive: func([]string) { close(arrived); <-release }})
			killClient(t, addr, clientID(t, c))
			<-arrived // the connection died; the replacement dial's handshake is held

			ctx := newWaitingCtx(testCtx(t))
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			n := b.Incr(k)
			done := make(chan error, 1)
			go func() { done <- b.Execute(ctx) }()
			<-ctx.waiting // the unit waits for that dial
			unblock()     // which now fails: nothing of the unit was written
			if err := <-done; err != nil {
				t.Fatalf("Execute = %v; want the resend after the failed acquisition to succeed", err)
			}
			if hello.Applied() != 1 {
				t.Errorf("%d handshakes dropped, want 1", hello.Applied())
			}
			if v, err := n.Result(); v != 1 || err != nil {
				t.Errorf("INCR = %d, %v; want 1", v, err)
			}
			// The key is this test's own: its value counts the INCRs the
			// server ran. The proxy carries only this client's traffic
			// (the server's commandstats also count other clients').
			if v, err := admin(t, addr, "GET", k).Int64(); v != 1 || err != nil {
				t.Errorf("the key holds %d, %v; want 1 (INCR ran once)", v, err)
			}
			want := []string{"INCR"}
			if tx {
				want = append(want, "MULTI", "EXEC")
			}
			for _, cmd := range want {
				if got := px.Forwarded(cmd); got != 1 {
					t.Errorf("the proxy forwarded %s %d times, want 1", cmd, got)
				}
			}
			wantCounts := retryCounts{"write_accumulating/attempted": 1, "write_accumulating/succeeded": 1}
			if got := retryCollect(t, reader); !got.equal(wantCounts) {
				t.Errorf("counts = %v, want %v", got, wantCounts)
			}
		})
	}
}

// TestTransactionNeverInterleaves proves that a transaction never
// interleaves with other callers' commands on the shared connection:
// while 16 goroutines send plain SET, GET and INCR on their own keys,
// 4 others run transactions (MULTI, INCR, SET, GET, INCR of a shared
// counter, EXEC) on the same client. Every plain caller gets its own
// reply (never QUEUED, never another's value), every transaction member
// its own result, and the counters on the server equal the committed
// counts. Witness: the proxy records the commands of the one connection
// in arrival order; between each MULTI and its EXEC come exactly one
// transaction's members.
func TestTransactionNeverInterleaves(t *testing.T) {
	const plainCallers, plainRounds = 16, 200
	const txCallers, txRounds = 4, 500
	// The arrival order is the one shared connection's.
	c, px := proxiedStandalone(t, Options{SoloConnections: NoSoloConnections})
	ctx := testCtx(t)
	p := keyPrefix(t)
	var mu sync.Mutex
	var order []txArrival
	px.MustAddRule(t, respiretest.Rule{Times: respiretest.Always, Action: respiretest.Pass, OnReceive: func(args []string) {
		a := txArrival{cmd: args[0]}
		if len(args) > 1 {
			a.key = args[1]
		}
		mu.Lock()
		order = append(order, a)
		mu.Unlock()
	}})
	shared := p + "tx:shared"
	var wg sync.WaitGroup
	for i := range plainCallers {
		wg.Go(func() {
			k, ctr := p+"plain:"+strconv.Itoa(i), p+"plain:"+strconv.Itoa(i)+":n"
			for n := range plainRounds {
				v := strconv.Itoa(i) + ":" + strconv.Itoa(n)
				if err := c.Set(ctx, k, v); err != nil {
					t.Errorf("caller %d: SET = %v", i, err)
					return
				}
				if got, err := c.Get(ctx, k); got != v || err != nil {
					t.Errorf("caller %d: GET = %q, %v; want its own %q", i, got, err, v)
					return
				}
				if got, err := c.Incr(ctx, ctr); got != int64(n+1) || err != nil {
					t.Errorf("caller %d: INCR = %d, %v; want %d", i, got, err, n+1)
					return
				}
			}
		})
	}
	seen := make([][]int64, txCallers) // the shared counter's values each caller's transactions got
	for j := range txCallers {
		wg.Go(func() {
			tp := p + "tx:" + strconv.Itoa(j) + ":"
			for n := range txRounds {
				v := strconv.Itoa(j) + ":" + strconv.Itoa(n)
				tx := c.NewTransaction()
				a := tx.Incr(tp + "a")
				set := tx.Set(tp+"s", v)
				get := tx.Get(tp + "s")
				sh := tx.Incr(shared)
				if err := tx.Execute(ctx); err != nil {
					t.Errorf("transaction %d/%d: Execute = %v", j, n, err)
					return
				}
				if got, err := a.Result(); got != int64(n+1) || err != nil {
					t.Errorf("transaction %d/%d: INCR = %d, %v; want %d", j, n, got, err, n+1)
					return
				}
				if err := set.Err(); err != nil {
					t.Errorf("transaction %d/%d: SET = %v", j, n, err)
					return
				}
				if got, err := get.Result(); got != v || err != nil {
					t.Errorf("transaction %d/%d: GET = %q, %v; want its own %q", j, n, got, err, v)
					return
				}
				got, err := sh.Result()
				if err != nil {
					t.Errorf("transaction %d/%d: shared INCR = %v", j, n, err)
					return
				}
				seen[j] = append(seen[j], got)
			}
		})
	}
	wg.Wait()

	// The witness: one connection carried everything, and each MULTI is
	// followed by one transaction's four members, then EXEC.
	if n := px.Sessions(); n != 1 {
		t.Errorf("%d connections through the proxy, want the one shared connection", n)
	}
	mu.Lock()
	multis := txWitness(t, order, p, shared)
	mu.Unlock()
	if t.Failed() {
		return
	}
	committed := txCallers * txRounds
	if multis != committed {
		t.Errorf("%d MULTIs arrived, want %d", multis, committed)
	}
	// The shared counter's values are 1..committed, each once.
	got := make([]bool, committed+1)
	for _, vs := range seen {
		for _, v := range vs {
			if v < 1 || v > int64(committed) || got[v] {
				t.Fatalf("shared INCR returned %d twice or out of 1..%d", v, committed)
			}
			got[v] = true
		}
	}
	if v, err := c.Get(ctx, shared); v != strconv.Itoa(committed) || err != nil {
		t.Errorf("shared counter = %q, %v; want %d", v, err, committed)
	}
	for j := range txCallers {
		if v, err := c.Get(ctx, p+"tx:"+strconv.Itoa(j)+":a"); v != strconv.Itoa(txRounds) || err != nil {
			t.Errorf("transaction caller %d's counter = %q, %v; want %d", j, v, err, txRounds)
		}
	}
	for i := range plainCallers {
		if v, err := c.Get(ctx, p+"plain:"+strconv.Itoa(i)+":n"); v != strconv.Itoa(plainRounds) || err != nil {
			t.Errorf("plain caller %d's counter = %q, %v; want %d", i, v, err, plainRounds)
		}
	}
}

// txArrival is a command that reached the proxy, with its first argument.
type txArrival struct{ cmd, key string }

// txWitness checks the commands of one connection in arrival order: each
// MULTI is followed by exactly one transaction's members (INCR, SET, GET
// of keys p+"tx:<caller>:..." and INCR shared), then EXEC, and no EXEC
// comes without a MULTI. It returns the number of MULTIs.
func txWitness(t *testing.T, order []txArrival, p, shared string) (multis int) {
	t.Helper()
	for i := 0; i < len(order); i++ {
		switch order[i].cmd {
		case "EXEC":
			t.Fatalf("arrival %d: EXEC without MULTI: %v", i, order[max(0, i-5):i+1])
		case "MULTI":
		default:
			continue
		}
		multis++
		if i+5 >= len(order) {
			t.Fatalf("arrival %d: MULTI is not followed by four members and EXEC: %v", i, order[i:])
		}
		body, exec := order[i+1:i+5], order[i+5]
		caller, _, _ := strings.Cut(strings.TrimPrefix(body[0].key, p+"tx:"), ":")
		tp := p + "tx:" + caller + ":"
		want := []txArrival{{"INCR", tp + "a"}, {"SET", tp + "s"}, {"GET", tp + "s"}, {"INCR", shared}}
		for m, a := range body {
			if a != want[m] {
				t.Fatalf("arrival %d: member %d of a transaction is %v, want %v: %v", i, m, a, want[m], order[i:i+6])
			}
		}
		if exec.cmd != "EXEC" {
			t.Fatalf("arrival %d: the transaction's members are followed by %v, not EXEC", i, exec)
		}
		i += 5
	}
	return multis
}

// TestBatchFunctionMembers proves that a function member (FCALL_RO)
// without a declared category blocks its unit's retry, and with one it
// does not, in a batch and in a transaction, like a script member
// (TestBatchScriptMembers). The function reads the unit's key on the real
// server. A batch's GET answered LOADING (once) is resent with every
// member only when the function declared ReadOnly; a transaction whose
// EXEC reply is lost likewise. The server's commandstats show how many
// times FCALL_RO ran: once when blocked, twice when resent.
func TestBatchFunctionMembers(t *testing.T) {
	countsCommands(t)
	for _, tx := range []bool{false, true} {
		for _, declared := range []bool{false, true} {
			name := "Batch"
			if tx {
				name = "Transaction"
			}
			t.Run(name+"/declared="+strconv.FormatBool(declared), func(t *testing.T) {
				fx := newFunctionFixture(t) // default policy: up to ReadOnly
				fn := NewFunction(fx.lib, fx.name, FunctionOptions{ReadOnly: true, Source: fx.src})
				if err := fn.Load(fx.ctx, fx.c); err != nil {
					t.Fatal(err)
				}
				if declared {
					fn = fn.WithRetryCategory(ReadOnly)
				}
				fault := respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)}
				if tx {
					fault = respiretest.Rule{Command: "EXEC", Action: respiretest.DropAfterForward}
				}
				rule := fx.px.MustAddRule(t, fault)
				fcalls := commandCalls(t, fx.addr, "fcall_ro")
				b := fx.c.NewBatch()
				if tx {
					b = fx.c.NewTransaction()
				}
				g := b.Get(fx.k)
				call := b.Function(fn, []string{fx.k})
				err := b.Execute(fx.ctx)
				ran := commandCalls(t, fx.addr, "fcall_ro") - fcalls
				if rule.Applied() != 1 {
					t.Fatalf("the fault applied %d times, want 1", rule.Applied())
				}
				if !declared {
					if tx {
						if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
							t.Errorf("Execute = %v; want the lost EXEC reply, not resent", err)
						}
					} else {
						if !hasCode(err, "LOADING") {
							t.Errorf("Execute = %v; want LOADING, not resent", err)
						}
						// Not resent: each member holds its own reply.
						if r, err := call.Result(); err != nil || string(r.v.Str) != "v" {
							t.Errorf("function = %v, %v; want its own reply \"v\"", r.v, err)
						}
					}
					if ran != 1 || fx.px.Forwarded("FCALL_RO") != 1 {
						t.Errorf("FCALL_RO ran %d times (forwarded %d); want 1: the undeclared function blocks the resend",
							ran, fx.px.Forwarded("FCALL_RO"))
					}
					return
				}
				if err != nil {
					t.Fatalf("Execute = %v; want the unit resent", err)
				}
				if ran != 2 || fx.px.Forwarded("FCALL_RO") != 2 {
					t.Errorf("FCALL_RO ran %d times (forwarded %d); want 2: the unit was resent", ran, fx.px.Forwarded("FCALL_RO"))
				}
				if v, err := g.Result(); v != "v" || err != nil {
					t.Errorf("GET = %q, %v; want v", v, err)
				}
				if r, err := call.Result(); err != nil || string(r.v.Str) != "v" {
					t.Errorf("function = %v, %v; want v", r.v, err)
				}
			})
		}
	}
}

// TestClusterBatchGroupRetryMetrics proves that a Cluster batch records
// its retry telemetry per slot group: each group that is resent counts
// its own started resends and one final outcome, tagged with the
// riskiest category of that group's members. The batch has a group on
// each of two primaries: A (SET, GET: write_last_wins) and B (GET,
// STRLEN: read_only), or two read-only groups. Each faulted group's GET
// is answered LOADING by its primary's proxy; the proxies' counters and
// the primaries' commandstats show how many times each group was sent.
func TestClusterBatchGroupRetryMetrics(t *testing.T) {
	tests := []struct {
		name         string
		attempts     int  // MaxAttempts
		faultA       int  // LOADING replies to group A's GET (respiretest.Always: every one)
		faultB       int  // and to group B's
		readOnlyA    bool // group A is GET, STRLEN (read_only) rather than SET, GET
		sendsA       int  // times each group was sent
		sendsB       int
		want         retryCounts
		wantExecuted bool
	}{
		{"BothGroupsRetried", 3, 1, 1, false, 2, 2, retryCounts{
			"write_last_wins/attempted": 1, "write_last_wins/succeeded": 1,
			"read_only/attempted": 1, "read_only/succeeded": 1}, true},
		{"BothGroupsRetriedSameCategory", 3, 1, 1, true, 2, 2, retryCounts{
			"read_only/attempted": 2, "read_only/succeeded": 2}, true},
		{"OneGroupRetried", 3, 1, 0, false, 2, 1, retryCounts{
			"write_last_wins/attempted": 1, "write_last_wins/succeeded": 1}, true},
		{"BothGroupsExhausted", 3, respiretest.Always, respiretest.Always, false, 3, 3, retryCounts{
			"write_last_wins/attempted": 2, "write_last_wins/exhausted": 1,
			"read_only/attempted": 2, "read_only/exhausted": 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, reader := withRetryMetrics(t, Options{RetryPolicy: &RetryPolicy{
				MaxAttempts: tt.attempts, MaxCommandRetryCategory: WriteLastWins, InitialBackoff: NoBackoff,
			}})
			// The counts hold the servers exclusively; wait for that
			// before the test's deadline starts, not inside it.
			countsCommands(t)
			c, proxies := proxiedCluster(t, opts)
			ctx := testCtx(t)
			primaries := c.topo.Primaries()
			a, b := primaries[0].Addr, primaries[1].Addr
			ka, kb := bcTagOn(t, c, a)+"k", bcTagOn(t, c, b)+"k"
			if err := c.MSet(ctx, ka, "va", kb, "vbb"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = c.Del(testCtx(t), ka, kb) })
			var rules []*respiretest.RuleHandle
			for _, f := range []struct {
				px    *respiretest.Proxy
				key   string
				times int
			}{{proxies[a], ka, tt.faultA}, {proxies[b], kb, tt.faultB}} {
				if f.times != 0 {
					rule := f.px.MustAddRule(t, respiretest.Rule{Command: "GET", Arg: f.key, Times: f.times, Action: respiretest.Inject(respiretest.ErrLoading)})
					defer rule.Remove()
					rules = append(rules, rule)
				}
			}
			notA := "set"
			if tt.readOnlyA {
				notA = "strlen"
			}
			onA, onB := bcCalls(t, a, notA), bcCalls(t, b, "strlen")
			batch := c.NewBatch()
			var setA Future[struct{}]
			var lenA Future[int64]
			if tt.readOnlyA {
				batch.Get(ka)
				lenA = batch.StrLen(ka)
			} else {
				// The riskiest member first: the tag is the group's
				// riskiest, not its last member's.
				setA = batch.Set(ka, "va")
				batch.Get(ka)
			}
			getB := batch.Get(kb)
			lenB := batch.StrLen(kb)
			err := batch.Execute(ctx)
			for _, rule := range rules {
				if !bcFired(rule) {
					t.Fatalf("%v never applied", rule)
				}
			}
			if !tt.wantExecuted {
				if !hasCode(err, "LOADING") {
					t.Errorf("Execute = %v, want the groups' LOADING", err)
				}
			} else {
				if err != nil {
					t.Fatalf("Execute = %v, want every group to succeed", err)
				}
				if tt.readOnlyA {
					if v, err := lenA.Result(); v != 2 || err != nil {
						t.Errorf("STRLEN (group A) = %d, %v; want 2", v, err)
					}
				} else if err := setA.Err(); err != nil {
					t.Errorf("SET (group A) = %v", err)
				}
				if v, err := getB.Result(); v != "vbb" || err != nil {
					t.Errorf("GET (group B) = %q, %v; want vbb", v, err)
				}
				if v, err := lenB.Result(); v != 3 || err != nil {
					t.Errorf("STRLEN (group B) = %d, %v; want 3", v, err)
				}
			}
			// The member that was never answered LOADING reached its
			// primary once per send of its group.
			bcDelta(t, "group A's primary", a, onA, tt.sendsA)
			bcDelta(t, "group B's primary", b, onB, tt.sendsB)
			if n := proxies[a].Forwarded(strings.ToUpper(notA)); n != tt.sendsA {
				t.Errorf("group A's %s reached its proxy %d times, want %d", strings.ToUpper(notA), n, tt.sendsA)
			}
			if n := proxies[b].Forwarded("STRLEN"); n != tt.sendsB {
				t.Errorf("group B's STRLEN reached its proxy %d times, want %d", n, tt.sendsB)
			}
			if got := retryCollect(t, reader); !got.equal(tt.want) {
				t.Errorf("counts = %v, want %v", got, tt.want)
			}
		})
	}
}
