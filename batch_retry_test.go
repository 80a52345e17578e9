package respire

// Unit retries that the real server cannot show on demand: a queueing
// error that aborts EXEC, and a selected error inside EXEC's array (a
// scripted server plays both); the unit's telemetry (the kit's engine); a
// late EXEC reply after the caller gave up (the real server behind the
// fault proxy).

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// txServer is a scripted RESP2 server with just enough of Redis's
// transactions for unit retries: MULTI queues, EXEC runs the queue (INCR
// on integers, GET), an error reply to a queued command makes EXEC answer
// EXECABORT, like Redis. Its hooks inject the faults; it counts what ran.
type txServer struct {
	// queueErr, when it returns text, answers the n-th queued command
	// (counted from 1 over the server's life) with that error.
	queueErr func(n int, cmd []string) string
	// execErr, when it returns text, replaces the reply of the i-th
	// member of the n-th EXEC (counted from 1) with that error: the
	// member did not run.
	execErr func(n, i int) string

	mu      sync.Mutex
	values  map[string]int64
	queued  int // commands queued, over the server's life
	execs   int // EXECs received
	ran     map[string]int
	aborted int
}

// dial is an Options.Dialer: each connection is a pipe served by s.
func (s *txServer) dial(t *testing.T) func(context.Context, string, string) (net.Conn, error) {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		wg.Go(func() { s.serve(server) })
		return client, nil
	}
}

func (s *txServer) serve(conn net.Conn) {
	defer conn.Close()
	rd := resp.NewReader(conn)
	var queue [][]string
	inMulti, dirty := false, false
	var args [][]byte
	for {
		var err error
		if args, _, err = rd.ReadCommand(args[:0]); err != nil {
			return
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		name := strings.ToUpper(cmd[0])
		var out []byte
		s.mu.Lock()
		switch {
		case name == "MULTI":
			inMulti, dirty, queue = true, false, nil
			out = resp.AppendSimpleString(nil, "OK")
		case name == "EXEC":
			s.execs++
			switch {
			case !inMulti:
				out = resp.AppendError(nil, "ERR EXEC without MULTI")
			case dirty:
				s.aborted++
				out = resp.AppendError(nil, "EXECABORT Transaction discarded because of previous errors.")
			default:
				out = resp.AppendArrayHeader(nil, len(queue))
				for i, q := range queue {
					if s.execErr != nil {
						if text := s.execErr(s.execs, i); text != "" {
							out = resp.AppendError(out, text)
							continue
						}
					}
					out = s.run(out, q)
				}
			}
			inMulti = false
		case inMulti:
			s.queued++
			if s.queueErr != nil {
				if text := s.queueErr(s.queued, cmd); text != "" {
					dirty = true
					out = resp.AppendError(nil, text)
					break
				}
			}
			queue = append(queue, cmd)
			out = resp.AppendSimpleString(nil, "QUEUED")
		default:
			out = s.run(nil, cmd)
		}
		s.mu.Unlock()
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

// run executes one command (s.mu held) and appends its reply.
func (s *txServer) run(out []byte, cmd []string) []byte {
	name := strings.ToUpper(cmd[0])
	s.ran[name]++
	switch {
	case name == "INCR" && len(cmd) == 2:
		s.values[cmd[1]]++
		return resp.AppendInteger(out, s.values[cmd[1]])
	case name == "GET" && len(cmd) == 2:
		v, ok := s.values[cmd[1]]
		if !ok {
			return resp.AppendNullBulk(out)
		}
		return resp.AppendBulkString(out, strconv.FormatInt(v, 10))
	}
	return resp.AppendSimpleString(out, "OK")
}

func (s *txServer) count(name string) (ran, execs, aborted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ran[name], s.execs, s.aborted
}

// txClient connects a RESP2 client (no handshake) to s.
func txClient(t *testing.T, s *txServer, policy *RetryPolicy) *Client {
	t.Helper()
	s.values, s.ran = map[string]int64{}, map[string]int{}
	c, err := Connect(context.Background(), Options{
		Endpoints:   []string{respiretest.MemoryAddr},
		Dialer:      s.dial(t),
		Protocol:    2,
		RetryPolicy: policy,
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestTransactionQueueErrorAbortsExec: a LOADING reply to a queued
// command makes EXEC answer EXECABORT; the unit follows the retry rule of
// a possibly executed transaction: a read-only transaction is resent
// under the default policy, one with an INCR only when WriteAccumulating
// is permitted, and the results are the final EXEC's.
func TestTransactionQueueErrorAbortsExec(t *testing.T) {
	for _, tc := range []struct {
		name    string
		incr    bool
		max     RetryCategory
		resends bool
	}{
		{"ReadOnlyDefaultPolicy", false, 0, true},
		{"IncrDefaultPolicy", true, 0, false},
		{"IncrWriteAccumulating", true, WriteAccumulating, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &txServer{queueErr: func(n int, _ []string) string {
				if n == 1 {
					return respiretest.ErrLoading
				}
				return ""
			}}
			c := txClient(t, s, &RetryPolicy{MaxCommandRetryCategory: tc.max, InitialBackoff: NoBackoff})
			tx := c.NewTransaction()
			var n Future[int64]
			if tc.incr {
				n = tx.Incr("n")
			}
			g := tx.Get("g")
			err := tx.Execute(testCtx(t))
			_, execs, aborted := s.count("EXEC")
			if aborted != 1 {
				t.Fatalf("EXECABORT answered %d times, want 1 (the first EXEC)", aborted)
			}
			if !tc.resends {
				if !hasCode(err, "LOADING") || execs != 1 {
					t.Fatalf("Execute = %v after %d EXECs; want LOADING, not resent", err, execs)
				}
				if !hasCode(n.Err(), "LOADING") || !hasCode(g.Err(), "LOADING") {
					t.Errorf("members = %v, %v; want the unit's LOADING", n.Err(), g.Err())
				}
				return
			}
			if err != nil || execs != 2 {
				t.Fatalf("Execute = %v after %d EXECs; want success on the resend", err, execs)
			}
			if _, err := g.Result(); !errors.Is(err, ErrNil) {
				t.Errorf("GET = %v, want ErrNil from the final EXEC", err)
			}
			if tc.incr {
				if v, err := n.Result(); v != 1 || err != nil {
					t.Errorf("INCR = %d, %v; want 1 (the aborted EXEC ran nothing)", v, err)
				}
			}
		})
	}
}

// TestTransactionSelectedErrorInsideExec: a selected error (LOADING,
// TRYAGAIN) inside EXEC's array retries the whole unit before any result
// is published; when the policy does not permit the resend, that EXEC's
// results are the final ones, each member's its own; an unselected error
// (BUSY) is that member's result.
func TestTransactionSelectedErrorInsideExec(t *testing.T) {
	t.Run("Selected", func(t *testing.T) {
		s := &txServer{execErr: func(n, i int) string {
			if n == 1 && i == 1 {
				return respiretest.ErrTryAgain
			}
			return ""
		}}
		c := txClient(t, s, &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff})
		tx := c.NewTransaction()
		a := tx.Incr("a")
		b := tx.Incr("b")
		if err := tx.Execute(testCtx(t)); err != nil {
			t.Fatalf("Execute = %v", err)
		}
		ran, execs, _ := s.count("INCR")
		if execs != 2 || ran != 3 {
			t.Fatalf("%d EXECs ran %d INCRs; want the unit twice (INCR a twice, INCR b once)", execs, ran)
		}
		// Only the final EXEC's results are published: INCR a's first
		// result (1) is never seen.
		if v, _ := a.Result(); v != 2 {
			t.Errorf("INCR a = %d, want 2 from the final EXEC", v)
		}
		if v, err := b.Result(); v != 1 || err != nil {
			t.Errorf("INCR b = %d, %v; want 1", v, err)
		}
	})
	t.Run("SelectedNotPermitted", func(t *testing.T) {
		s := &txServer{execErr: func(n, i int) string {
			if i == 0 {
				return respiretest.ErrLoading
			}
			return ""
		}}
		c := txClient(t, s, &RetryPolicy{InitialBackoff: NoBackoff}) // default: up to ReadOnly
		tx := c.NewTransaction()
		a := tx.Incr("a")
		b := tx.Get("a")
		err := tx.Execute(testCtx(t))
		if _, execs, _ := s.count("INCR"); !hasCode(err, "LOADING") || execs != 1 {
			t.Fatalf("Execute = %v after %d EXECs; want LOADING, not resent", err, execs)
		}
		// Not resent, that EXEC was the final attempt: each member has
		// its own result, the LOADING one its error.
		if !hasCode(a.Err(), "LOADING") {
			t.Errorf("INCR a = %v, want its own LOADING", a.Err())
		}
		if _, err := b.Result(); !errors.Is(err, ErrNil) {
			t.Errorf("GET a = %v, want its own nil reply (ErrNil), not the unit's LOADING", err)
		}
	})
	t.Run("Unselected", func(t *testing.T) {
		s := &txServer{execErr: func(n, i int) string {
			if i == 0 {
				return respiretest.ErrBusy
			}
			return ""
		}}
		c := txClient(t, s, &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff})
		tx := c.NewTransaction()
		a := tx.Incr("a")
		b := tx.Incr("b")
		if err := tx.Execute(testCtx(t)); err != nil {
			t.Fatalf("Execute = %v; a member's own error is not the unit's", err)
		}
		var se *ServerError
		if err := a.Err(); !errors.As(err, &se) || se.Code != "BUSY" {
			t.Errorf("INCR a = %v, want its BUSY", err)
		}
		if v, err := b.Result(); v != 1 || err != nil {
			t.Errorf("INCR b = %d, %v", v, err)
		}
		if _, execs, _ := s.count("INCR"); execs != 1 {
			t.Errorf("%d EXECs, want 1", execs)
		}
	})
}

// TestBatchFinalAttemptPublishesEachMembersReply: a member's selected
// error (LOADING) fails the unit only while the unit may be resent. When
// it is not resent (the policy does not permit an INCR's unit, or the
// attempts ran out) the last attempt is the final one: every member gets
// its own reply, so an INCR that ran reports its value, not LOADING, and
// Execute returns the failure that ended the unit.
func TestBatchFinalAttemptPublishesEachMembersReply(t *testing.T) {
	tests := []struct {
		name   string
		policy *RetryPolicy
		times  int   // GETs answered LOADING
		incr   int64 // the INCR's published result
	}{
		{"NoPolicy", nil, 1, 1},
		{"NotPermitted", &RetryPolicy{InitialBackoff: NoBackoff}, 1, 1},
		{"Exhausted", &RetryPolicy{MaxAttempts: 2, MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			c := retryMemClient(t, s, Options{RetryPolicy: tt.policy})
			s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: tt.times, Action: respiretest.Inject(respiretest.ErrLoading)})
			b := c.NewBatch()
			incr := b.Incr("n")
			get := b.Get("k")
			err := b.Execute(bg)
			if !hasCode(err, "LOADING") {
				t.Fatalf("Execute = %v, want the LOADING that ended the unit", err)
			}
			if n, err := incr.Result(); err != nil || n != tt.incr {
				t.Errorf("INCR n = %d, %v; want its own reply %d from the final attempt", n, err, tt.incr)
			}
			if _, err := get.Result(); !hasCode(err, "LOADING") {
				t.Errorf("GET k = %v, want its own LOADING", err)
			}
		})
	}
}

// TestBatchUnitMetrics: a retried unit records one attempted per accepted
// resend and one outcome, tagged with its riskiest member's category.
func TestBatchUnitMetrics(t *testing.T) {
	all := RetryPolicy{MaxAttempts: 3, MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}
	loading := func(cmd string, n int) respiretest.Rule {
		return respiretest.Rule{Command: cmd, Times: n, Action: respiretest.Inject(respiretest.ErrLoading)}
	}
	// getThenDo builds a batch of GET k and a raw cmd k.
	getThenDo := func(cmd Command) func(c *Client) *Batch {
		return func(c *Client) *Batch {
			b := c.NewBatch()
			b.Get("k")
			b.Do(cmd, "k")
			return b
		}
	}
	tests := []struct {
		name  string
		rule  *respiretest.Rule
		build func(c *Client) *Batch
		want  retryCounts
	}{
		{"HealthyBatchRecordsNothing", nil, func(c *Client) *Batch {
			b := c.NewBatch()
			b.Get("k")
			b.Incr("n")
			return b
		}, retryCounts{}},
		{"BatchTaggedWithRiskiestMember", &respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Inject(respiretest.ErrLoading)}, func(c *Client) *Batch {
			b := c.NewBatch()
			b.Get("k")
			b.Set("k", "v")
			b.Get("k")
			return b
		}, retryCounts{"write_last_wins/attempted": 1, "write_last_wins/succeeded": 1}},
		{"BatchExhausted", ptr(loading("GET", respiretest.Always)), func(c *Client) *Batch {
			b := c.NewBatch()
			b.Incr("n")
			b.Get("k")
			return b
		}, retryCounts{"write_accumulating/attempted": 2, "write_accumulating/exhausted": 1}},
		{"TransactionOfReads", ptr(loading("GET", 1)), func(c *Client) *Batch {
			tx := c.NewTransaction()
			tx.Get("k")
			tx.StrLen("k")
			return tx
		}, retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}},
		{"RawMemberBlocksAndRecordsNothing", ptr(loading("GET", 1)), getThenDo(NewCommand("STRLEN")), retryCounts{}},
		// A command the catalog does not know has the category its caller
		// declared, in a unit as on its own: ReadOnly lets the unit retry
		// (its own "unknown command" reply is the member's error).
		{"UnknownRawMemberWithDeclaredCategoryRetries", ptr(loading("GET", 1)), getThenDo(NewCommand("MYMOD.GET").WithRetryCategory(ReadOnly)),
			retryCounts{"read_only/attempted": 1, "read_only/succeeded": 1}},
		{"UnknownRawMemberWithoutCategoryBlocks", ptr(loading("GET", 1)), getThenDo(NewCommand("MYMOD.GET")), retryCounts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			p := all
			c, reader := retryMetricsClient(t, s, Options{RetryPolicy: &p})
			if tt.rule != nil {
				s.MustAddRule(t, *tt.rule)
			}
			_ = tt.build(c).Execute(bg)
			if got := retryCollect(t, reader); !got.equal(tt.want) {
				t.Errorf("counts = %v, want %v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestTransactionLateExecReply: a transaction whose EXEC reply is lost is
// resent; when the resent EXEC's reply is late and the caller's deadline
// ends first, that late reply is drained into the abandoned unit: the
// next transaction on the client gets its own results, not those.
func TestTransactionLateExecReply(t *testing.T) {
	c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating, InitialBackoff: NoBackoff}})
	p := keyPrefix(t)
	px.MustAddRule(t, respiretest.Rule{Command: "EXEC", Times: 1, Action: respiretest.DropAfterForward})
	held := px.MustAddRule(t, respiretest.Rule{Command: "EXEC", Nth: 2, Times: 1, Action: respiretest.Hold})
	ctx, cancel := context.WithCancel(testCtx(t))
	first := c.NewTransaction()
	stale := first.IncrBy(p+"n", 100)
	done := make(chan error, 1)
	go func() { done <- first.Execute(ctx) }()
	<-held.Received() // the resent EXEC ran; its reply is held
	cancel()
	err := <-done
	var re *RetryError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &re) || re.Attempts != 2 || !MayHaveExecuted(err) {
		t.Fatalf("first Execute = %v; want the cancellation of its second attempt, possibly executed", err)
	}
	if !errors.Is(stale.Err(), context.Canceled) {
		t.Errorf("first member = %v, want the unit's error", stale.Err())
	}
	// The next transaction queues behind the held reply on the same
	// connection; the late reply (the resent EXEC: 200) reaches nobody.
	second := c.NewTransaction()
	mine := second.IncrBy(p+"n", 1)
	done2 := make(chan error, 1)
	go func() { done2 <- second.Execute(testCtx(t)) }()
	held.Release()
	if err := <-done2; err != nil {
		t.Fatalf("second Execute = %v", err)
	}
	if v, err := mine.Result(); v != 201 || err != nil {
		t.Errorf("second INCRBY = %d, %v; want 201 (its own reply: both EXECs of the first ran)", v, err)
	}
}

// TestBatchDeadlineCoversTheUnit: one deadline covers a unit's attempt
// (a batch's, or a transaction's), its backoff and late replies: a held
// reply past the deadline ends the unit at the deadline, and a backoff
// that cannot fit before it is not started; nothing is resent either way.
func TestBatchDeadlineCoversTheUnit(t *testing.T) {
	for _, tx := range []bool{false, true} {
		unit := func(c *Client) *Batch {
			if tx {
				return c.NewTransaction()
			}
			return c.NewBatch()
		}
		last := "GET" // the command whose reply is held or lost
		if tx {
			last = "EXEC"
		}
		t.Run(unitKind(tx)+"/LateReply", func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
			p := keyPrefix(t)
			held := px.MustAddRule(t, respiretest.Rule{Command: last, Times: 1, Action: respiretest.Hold})
			defer held.Release()
			ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
			defer cancel()
			b := unit(c)
			g := b.Get(p + "a")
			err := b.Execute(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || !MayHaveExecuted(err) {
				t.Fatalf("Execute = %v, want the deadline, possibly executed", err)
			}
			if !errors.Is(g.Err(), context.DeadlineExceeded) {
				t.Errorf("member = %v", g.Err())
			}
			if n := px.Forwarded(last); n != 1 {
				t.Errorf("%s sent %d times, want 1", last, n)
			}
		})
		t.Run(unitKind(tx)+"/BackoffBeyondDeadline", func(t *testing.T) {
			c, px := proxiedStandalone(t, Options{RetryPolicy: &RetryPolicy{InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: NoJitter}})
			p := keyPrefix(t)
			px.MustAddRule(t, respiretest.Rule{Command: last, Times: 1, Action: respiretest.DropAfterForward})
			ctx, cancel := context.WithTimeout(testCtx(t), 30*time.Second)
			defer cancel()
			b := unit(c)
			g := b.Get(p + "a")
			b.StrLen(p + "a")
			err := b.Execute(ctx)
			if !errors.Is(err, ErrConnectionLost) || ctx.Err() != nil {
				t.Fatalf("Execute = %v (ctx %v); want the lost reply at once, the minute of backoff not started", err, ctx.Err())
			}
			if !errors.Is(g.Err(), ErrConnectionLost) {
				t.Errorf("member = %v", g.Err())
			}
			if n := px.Forwarded(last); n != 1 {
				t.Errorf("%s sent %d times, want 1", last, n)
			}
		})
	}
}

// hasCode reports whether err holds a server error with code.
func hasCode(err error, code string) bool {
	var se *ServerError
	return errors.As(err, &se) && se.Code == code
}

// TestBatchScriptMembers: a script member runs inside the unit (as EVAL,
// no fallback needed); an undeclared one blocks the unit's retry, a
// declared one lets the unit retry under its category.
func TestBatchScriptMembers(t *testing.T) {
	for _, declared := range []bool{false, true} {
		t.Run("declared="+strconv.FormatBool(declared), func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			c := retryMemClient(t, s, Options{RetryPolicy: &RetryPolicy{InitialBackoff: NoBackoff}})
			script := NewScript("return redis.call('GET', KEYS[1])", ScriptOptions{})
			if declared {
				script = script.WithRetryCategory(ReadOnly)
			}
			s.MustAddRule(t, respiretest.Rule{Command: "GET", Times: 1, Action: respiretest.Inject(respiretest.ErrLoading)})
			b := c.NewBatch()
			g := b.Get("k")
			run := b.Script(script, []string{"k"})
			err := b.Execute(bg)
			if !declared {
				if !hasCode(err, "LOADING") || s.Executed("EVAL") != 1 {
					t.Fatalf("Execute = %v, EVAL ran %d times; want LOADING, not resent", err, s.Executed("EVAL"))
				}
				return
			}
			if err != nil || s.Executed("EVAL") != 2 {
				t.Fatalf("Execute = %v, EVAL ran %d times; want the unit resent", err, s.Executed("EVAL"))
			}
			if _, err := g.Result(); !errors.Is(err, ErrNil) {
				t.Errorf("GET = %v", err)
			}
			if r, err := run.Result(); err != nil || !r.IsNull() {
				t.Errorf("script = %v, %v; want its null reply", r.v, err)
			}
		})
	}
}
