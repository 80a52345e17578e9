package respire

// Idempotent stream appends: the automatic IDMP identity of typed XAdd
// (the kit's Redis 8.6 emulation), its limits (expiry and eviction append
// again), the fallback to a plain XADD on a server without IDMP (the real
// Redis 7.0 server, counted by INFO commandstats), the caller's explicit
// choices, batch and transaction members, XCfgSet, and bad input.

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// idmpChecked is the smallest policy that gives typed XAdd an automatic
// identity: it selects connection loss and accepts WriteChecked.
var idmpChecked = &RetryPolicy{MaxCommandRetryCategory: WriteChecked, InitialBackoff: NoBackoff}

// xaddFrames records the XADD frames a proxy receives for one key.
type xaddFrames struct {
	mu     sync.Mutex
	frames [][]string
}

// recordXAdds counts and records every XADD frame for key (every XADD when
// key is "") that p receives, without changing what happens to it.
func recordXAdds(t testing.TB, p *respiretest.Proxy, key string) *xaddFrames {
	t.Helper()
	r := &xaddFrames{}
	p.MustAddRule(t, respiretest.Rule{Command: "XADD", Arg: key, Times: respiretest.Always, Action: respiretest.Pass,
		OnReceive: func(args []string) {
			r.mu.Lock()
			r.frames = append(r.frames, args)
			r.mu.Unlock()
		}})
	return r
}

func (r *xaddFrames) all() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.frames...)
}

// idmpOf returns the IDMP or IDMPAUTO token of an XADD frame (command
// name first) with its producer and message IDs; mode is "" without one.
func idmpOf(frame []string) (mode, pid, iid string) {
	for i := 2; i < len(frame); i++ {
		switch strings.ToUpper(frame[i]) {
		case "IDMP":
			if i+2 < len(frame) {
				return "IDMP", frame[i+1], frame[i+2]
			}
		case "IDMPAUTO":
			if i+1 < len(frame) {
				return "IDMPAUTO", frame[i+1], ""
			}
		}
	}
	return "", "", ""
}

// wantAutoIdentity fails t unless frame carries IDMP with c's producer ID
// and a message ID of 16 bytes in unpadded base64url; it returns the
// message ID.
func wantAutoIdentity(t testing.TB, c *Client, frame []string) string {
	t.Helper()
	mode, pid, iid := idmpOf(frame)
	if mode != "IDMP" || pid != c.cfg.streamProducerID {
		t.Fatalf("frame %q: got %s %q, want IDMP with the client's producer ID %q", frame, mode, pid, c.cfg.streamProducerID)
	}
	raw, err := base64.RawURLEncoding.DecodeString(iid)
	if err != nil || len(raw) != 16 || len(iid) != 22 {
		t.Fatalf("message ID %q: want 16 bytes in unpadded base64url (22 characters), decoded %d bytes, %v", iid, len(raw), err)
	}
	return iid
}

// wantResentIdentity fails t unless the frames of a send and its resend
// both carry c's automatic identity with the same message ID; it returns
// that ID.
func wantResentIdentity(t testing.TB, c *Client, sent, resent []string) string {
	t.Helper()
	first, again := wantAutoIdentity(t, c, sent), wantAutoIdentity(t, c, resent)
	if first != again {
		t.Errorf("resend carried message ID %q, want the call's %q", again, first)
	}
	return first
}

func wantNoIdentity(t testing.TB, frame []string) {
	t.Helper()
	if mode, _, _ := idmpOf(frame); mode != "" {
		t.Fatalf("frame %q carries %s, want no identity", frame, mode)
	}
}

func wantXLen(t testing.TB, c *Client, key string, want int64) {
	t.Helper()
	if n, err := c.XLen(context.Background(), key); err != nil || n != want {
		t.Fatalf("XLEN %s = %d, %v; want %d", key, n, err, want)
	}
}

// idmpBackoff is a policy whose one resend waits exactly d (virtual time
// in a bubble).
func idmpBackoff(d time.Duration) *RetryPolicy {
	return &RetryPolicy{MaxCommandRetryCategory: WriteChecked, InitialBackoff: d, MaxBackoff: d, Jitter: NoJitter}
}

// A lost XADD reply under a WriteChecked policy is resent with the same
// identity: the stream holds one entry and the call returns its ID; the
// retry is counted as the retry loop counts it, as WriteChecked.
func TestXAddAutoIdentityLostReplyAppendsOnce(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	rec := recordXAdds(t, s.Proxy, "s")
	drop := s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
	c, reader := retryMetricsClient(t, s, Options{RetryPolicy: idmpChecked})
	id, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
	if err != nil {
		t.Fatalf("XAdd: %v", err)
	}
	if drop.Applied() != 1 {
		t.Fatalf("the first reply was not dropped (%d)", drop.Applied())
	}
	wantXLen(t, c, "s", 1)
	entries, err := c.XRange(bg, "s", "-", "+", 0)
	if err != nil || len(entries) != 1 || entries[0].ID != id {
		t.Fatalf("XRANGE = %v, %v; want the one entry %q the call returned", entries, err, id)
	}
	if got := s.Executed("XADD"); got != 1 {
		t.Errorf("the engine appended %d times, want 1", got)
	}
	frames := rec.all()
	if len(frames) != 2 {
		t.Fatalf("XADD sent %d times, want 2 (the send and its resend)", len(frames))
	}
	first := wantResentIdentity(t, c, frames[0], frames[1])
	want := retryCounts{"write_checked/attempted": 1, "write_checked/succeeded": 1}
	if got := retryCollect(t, reader); !got.equal(want) {
		t.Errorf("retries = %v, want %v", got, want)
	}

	// The next call is a new message: a new message ID, the same producer.
	if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
		t.Fatalf("second XAdd: %v", err)
	}
	frames = rec.all()
	if next := wantAutoIdentity(t, c, frames[2]); next == first {
		t.Errorf("the second call reused message ID %q", first)
	}
	wantXLen(t, c, "s", 2)
}

// The automatic identity keeps the call's other options on the wire and
// in effect (NOMKSTREAM, trimming).
func TestXAddAutoIdentityKeepsOtherOptions(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	rec := recordXAdds(t, s.Proxy, "")
	c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
	if id, err := c.XAdd(bg, "missing", XAddOptions{NoMkStream: true}, "f", "v"); !errors.Is(err, ErrNil) {
		t.Fatalf("XAdd(NOMKSTREAM, missing) = %q, %v; want ErrNil", id, err)
	}
	for i := range 3 {
		if _, err := c.XAdd(bg, "s", XAddOptions{MaxLen: 2}, "i", strconv.Itoa(i)); err != nil {
			t.Fatalf("XAdd(MAXLEN 2): %v", err)
		}
	}
	wantXLen(t, c, "s", 2)
	frames := rec.all()
	if len(frames) != 4 {
		t.Fatalf("%d XADD frames, want 4", len(frames))
	}
	iid := wantAutoIdentity(t, c, frames[0])
	if want := []string{"XADD", "missing", "NOMKSTREAM", "IDMP", c.cfg.streamProducerID, iid, "*", "f", "v"}; strings.Join(frames[0], " ") != strings.Join(want, " ") {
		t.Errorf("frame %q, want %q", frames[0], want)
	}
	iid = wantAutoIdentity(t, c, frames[1])
	if want := []string{"XADD", "s", "IDMP", c.cfg.streamProducerID, iid, "MAXLEN", "=", "2", "*", "i", "0"}; strings.Join(frames[1], " ") != strings.Join(want, " ") {
		t.Errorf("frame %q, want %q", frames[1], want)
	}
}

// The warning, shown: once the identity has expired (IDMP-DURATION 1 s,
// resend after a 2 s backoff), the resend appends a second entry.
func TestXAddAutoIdentityResendAfterExpiryAppendsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		rec := recordXAdds(t, s.Proxy, "s")
		c := retryMemClient(t, s, Options{RetryPolicy: idmpBackoff(2 * time.Second)})
		if _, err := c.XAdd(bg, "s", XAddOptions{}, "seed", "0"); err != nil {
			t.Fatalf("seed XAdd: %v", err)
		}
		if err := c.XCfgSet(bg, "s", XCfgOptions{Duration: time.Second}); err != nil {
			t.Fatalf("XCfgSet: %v", err)
		}
		s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
		start := time.Now()
		id, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
		if err != nil {
			t.Fatalf("XAdd: %v", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("the call took %v, want the 2s backoff", d)
		}
		entries, err := c.XRange(bg, "s", "-", "+", 0)
		if err != nil || len(entries) != 3 {
			t.Fatalf("XRANGE = %v, %v; want the seed and two appends of the same message", entries, err)
		}
		if entries[1].ID == id || entries[2].ID != id {
			t.Errorf("call returned %q; want the resend's new entry %q, not the first append's %q", id, entries[2].ID, entries[1].ID)
		}
		frames := rec.all()
		if a, b := wantAutoIdentity(t, c, frames[1]), wantAutoIdentity(t, c, frames[2]); a != b {
			t.Errorf("resend carried message ID %q, want %q", b, a)
		}
	})
}

// The warning, shown: once the identity has been evicted (IDMP-MAXSIZE 1
// and another message of the same producer while the call waits to
// retry), the resend appends a second entry.
func TestXAddAutoIdentityResendAfterEvictionAppendsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := respiretest.NewServer(t)
		c := retryMemClient(t, s, Options{RetryPolicy: idmpBackoff(2 * time.Second)})
		if _, err := c.XAdd(bg, "s", XAddOptions{}, "seed", "0"); err != nil {
			t.Fatalf("seed XAdd: %v", err)
		}
		if err := c.XCfgSet(bg, "s", XCfgOptions{MaxSize: 1}); err != nil {
			t.Fatalf("XCfgSet: %v", err)
		}
		drop := s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
		type result struct {
			id  string
			err error
		}
		done := make(chan result, 1)
		go func() {
			id, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
			done <- result{id, err}
		}()
		synctest.Wait() // appended, reply lost: the call waits out its backoff
		if drop.Applied() != 1 || s.Executed("XADD") != 2 {
			t.Fatalf("dropped %d, engine appended %d; want the first send appended and its reply dropped", drop.Applied(), s.Executed("XADD"))
		}
		other := XAddIdempotency{ProducerID: c.cfg.streamProducerID, MessageID: "other"}
		if _, err := c.XAdd(bg, "s", XAddOptions{Idempotency: &other}, "g", "w"); err != nil {
			t.Fatalf("XAdd of another message: %v", err)
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("XAdd: %v", r.err)
		}
		entries, err := c.XRange(bg, "s", "-", "+", 0)
		if err != nil || len(entries) != 4 {
			t.Fatalf("XRANGE = %v, %v; want seed, first append, other, resend", entries, err)
		}
		if entries[3].ID != r.id || strings.Join(entries[3].Fields, " ") != "f v" || strings.Join(entries[1].Fields, " ") != "f v" {
			t.Errorf("call returned %q, entries %v; want the resend appended again as the last entry", r.id, entries)
		}
	})
}

// With the specification's example policy (every failure, WriteChecked)
// or any riskier maximum, typed XAdd is WriteChecked; without connection
// loss selected, or below WriteChecked, it carries no identity.
func TestXAddAutoIdentityNeedsConnectionLossAndWriteChecked(t *testing.T) {
	tests := []struct {
		name   string
		policy *RetryPolicy
		want   bool
	}{
		{"NoPolicy", nil, false},
		{"DefaultReadOnly", &RetryPolicy{}, false},
		{"WriteCheckedWithoutConnectionLoss", &RetryPolicy{MaxCommandRetryCategory: WriteChecked, RetryableErrors: RetryOnLoading | RetryOnReadOnly}, false},
		{"WriteCheckedRetryOnNone", &RetryPolicy{MaxCommandRetryCategory: WriteChecked, RetryableErrors: RetryOnNone}, false},
		{"WriteCheckedOneAttempt", &RetryPolicy{MaxCommandRetryCategory: WriteChecked, MaxAttempts: 1}, false},
		{"NeverMaximum", &RetryPolicy{MaxCommandRetryCategory: Never}, false},
		{"WriteCheckedConnectionLossOnly", &RetryPolicy{MaxCommandRetryCategory: WriteChecked, RetryableErrors: RetryOnConnectionLoss}, true},
		{"WriteChecked", &RetryPolicy{MaxCommandRetryCategory: WriteChecked}, true},
		{"WriteLastWins", &RetryPolicy{MaxCommandRetryCategory: WriteLastWins}, true},
		{"WriteAccumulating", &RetryPolicy{MaxCommandRetryCategory: WriteAccumulating}, true},
		{"ServerAdmin", &RetryPolicy{MaxCommandRetryCategory: ServerAdmin}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			rec := recordXAdds(t, s.Proxy, "s")
			c := retryMemClient(t, s, Options{RetryPolicy: tt.policy})
			if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
				t.Fatalf("XAdd: %v", err)
			}
			frames := rec.all()
			if len(frames) != 1 {
				t.Fatalf("%d XADD frames, want 1", len(frames))
			}
			if tt.want {
				wantAutoIdentity(t, c, frames[0])
			} else {
				wantNoIdentity(t, frames[0])
			}
		})
	}
	// The category a resend after possible execution needs (LOADING).
	plain := func(opt XAddOptions) func(c *Client) error {
		return func(c *Client) error { _, err := c.XAdd(bg, "s", opt, "f", "v"); return err }
	}
	if got := retryCategoryOf(t, "XADD", plain(XAddOptions{})); got != WriteChecked {
		t.Errorf("typed XAdd retries as %v, want %v", got, WriteChecked)
	}
	if got := retryCategoryOf(t, "XADD", plain(XAddOptions{ID: "1-1"})); got != WriteAccumulating {
		t.Errorf("XAdd with an explicit ID retries as %v, want %v", got, WriteAccumulating)
	}
}

// The default producer ID is "respire-" and a version 4 UUID, one per
// client; an explicit StreamProducerID is used as given.
func TestXAddProducerIDPerClient(t *testing.T) {
	uuid := regexp.MustCompile(`^respire-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	s := respiretest.NewServer(t, respiretest.InMemory())
	rec := recordXAdds(t, s.Proxy, "s")
	a := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
	b := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
	named := retryMemClient(t, s, Options{RetryPolicy: idmpChecked, StreamProducerID: "orders-service"})
	plain := retryMemClient(t, s, Options{})
	for _, c := range []*Client{a, b, named, plain} {
		if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
			t.Fatalf("XAdd: %v", err)
		}
	}
	for _, c := range []*Client{a, b, plain} {
		if !uuid.MatchString(c.cfg.streamProducerID) {
			t.Errorf("default producer ID %q, want respire-<v4 UUID>", c.cfg.streamProducerID)
		}
	}
	if a.cfg.streamProducerID == b.cfg.streamProducerID {
		t.Errorf("two clients share producer ID %q", a.cfg.streamProducerID)
	}
	frames := rec.all()
	for i, c := range []*Client{a, b, named} {
		wantAutoIdentity(t, c, frames[i])
	}
	if _, pid, _ := idmpOf(frames[2]); pid != "orders-service" {
		t.Errorf("producer ID %q, want the option's %q", pid, "orders-service")
	}
	wantNoIdentity(t, frames[3])
	wantXLen(t, a, "s", 4)
}

// A caller's explicit ID or Idempotency is sent as given: an explicit ID
// stays a plain WriteAccumulating XADD (a lost reply is not resent under
// WriteChecked), explicit IDMP and IDMPAUTO are WriteChecked with the
// caller's identity.
func TestXAddExplicitChoiceKeepsCallersIdentity(t *testing.T) {
	tests := []struct {
		name      string
		opt       XAddOptions
		wantMode  string
		wantPID   string
		wantIID   string
		wantSends int
	}{
		{"ExplicitID", XAddOptions{ID: "5-1"}, "", "", "", 1},
		{"ExplicitIDMP", XAddOptions{Idempotency: &XAddIdempotency{ProducerID: "mine", MessageID: "m1"}}, "IDMP", "mine", "m1", 2},
		{"ExplicitIDMPAUTO", XAddOptions{Idempotency: &XAddIdempotency{ProducerID: "mine", Auto: true}}, "IDMPAUTO", "mine", "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			rec := recordXAdds(t, s.Proxy, "s")
			s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
			c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
			id, err := c.XAdd(bg, "s", tt.opt, "f", "v")
			frames := rec.all()
			if len(frames) != tt.wantSends {
				t.Fatalf("XADD sent %d times, want %d", len(frames), tt.wantSends)
			}
			for _, f := range frames {
				if mode, pid, iid := idmpOf(f); mode != tt.wantMode || pid != tt.wantPID || iid != tt.wantIID {
					t.Errorf("frame %q: got %q %q %q, want %q %q %q", f, mode, pid, iid, tt.wantMode, tt.wantPID, tt.wantIID)
				}
			}
			if tt.wantSends == 1 {
				if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
					t.Fatalf("XAdd = %q, %v; want the lost reply, not resent", id, err)
				}
			} else if err != nil {
				t.Fatalf("XAdd: %v", err)
			}
			wantXLen(t, c, "s", 1)
		})
	}
}

// Batch and transaction members get no automatic identity: they stay
// plain WriteAccumulating XADDs, and a lost reply is not resent under a
// WriteChecked maximum.
func TestXAddBatchMembersGetNoAutomaticIdentity(t *testing.T) {
	for _, tx := range []bool{false, true} {
		name, lost := "Batch", "XADD"
		if tx {
			name, lost = "Transaction", "EXEC"
		}
		t.Run(name, func(t *testing.T) {
			s := respiretest.NewServer(t, respiretest.InMemory())
			rec := recordXAdds(t, s.Proxy, "s")
			s.MustAddRule(t, respiretest.Rule{Command: lost, Action: respiretest.DropAfterForward})
			c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
			b := c.NewBatch()
			if tx {
				b = c.NewTransaction()
			}
			x := b.XAdd("s", XAddOptions{}, "f", "v")
			if err := b.Execute(bg); !errors.Is(err, ErrConnectionLost) {
				t.Fatalf("Execute = %v; want the lost reply, not resent", err)
			}
			if _, err := x.Result(); err == nil {
				t.Errorf("member succeeded after a lost reply")
			}
			frames := rec.all()
			if len(frames) != 1 {
				t.Fatalf("XADD sent %d times, want 1", len(frames))
			}
			wantNoIdentity(t, frames[0])
			wantXLen(t, c, "s", 1)
		})
	}
}

// On a server without IDMP (the kit with the emulation off answers like
// Redis 7.0) the fallback appends once, each call tries IDMP again, and
// errors other than the exact rejection reach the caller.
func TestXAddFallbackWithoutIDMPEmulated(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory(), respiretest.WithIDMP(false))
	rec := recordXAdds(t, s.Proxy, "")
	c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
	for i := range 2 {
		if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
			t.Fatalf("XAdd %d: %v", i+1, err)
		}
		wantXLen(t, c, "s", int64(i+1))
	}
	frames := rec.all()
	if len(frames) != 4 {
		t.Fatalf("%d XADD frames, want 4 (IDMP rejected, plain) per call", len(frames))
	}
	first, second := wantAutoIdentity(t, c, frames[0]), wantAutoIdentity(t, c, frames[2])
	wantNoIdentity(t, frames[1])
	wantNoIdentity(t, frames[3])
	if first == second {
		t.Errorf("both calls sent message ID %q", first)
	}

	// An explicit identity gets the rejection as is: no fallback.
	_, err := c.XAdd(bg, "e", XAddOptions{Idempotency: &XAddIdempotency{ProducerID: "p", MessageID: "m"}}, "f", "v")
	var se *ServerError
	if !errors.As(err, &se) || se.Message != errNoIDMP {
		t.Fatalf("explicit IDMP = %v; want the server's %q", err, errNoIDMP)
	}
	if n := len(rec.all()); n != 5 {
		t.Errorf("%d XADD frames, want 5 (the explicit one sent once)", n)
	}

	// Other errors reach the caller; only the exact reply falls back.
	for _, text := range []string{"ERR boom", "ERR invalid stream ID specified as stream command argument"} {
		s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.Inject(text)})
		before := len(rec.all())
		_, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
		if !errors.As(err, &se) || se.Message != text {
			t.Errorf("XAdd = %v; want the server's %q", err, text)
		}
		if n := len(rec.all()) - before; n != 1 {
			t.Errorf("after %q: %d XADD frames, want 1", text, n)
		}
	}
	wantXLen(t, c, "s", 2)
	if err := c.Set(bg, "str", "x"); err != nil {
		t.Fatal(err)
	}
	// The plain resend's own error (WRONGTYPE) reaches the caller too.
	if _, err := c.XAdd(bg, "str", XAddOptions{}, "f", "v"); !errors.As(err, &se) || se.Code != "WRONGTYPE" {
		t.Errorf("XAdd on a string = %v; want WRONGTYPE", err)
	}
}

// No fallback after possible execution: when an earlier attempt of the
// same call may have appended (its reply was lost on a server with IDMP)
// and the resend meets a server without IDMP (a failover onto an older
// server, injected here), a plain XADD could append the entry twice. The
// call returns the rejection instead, still matched by errors.As. An
// earlier attempt that never reached the server does not stop the
// fallback.
func TestXAddNoFallbackAfterPossibleExecution(t *testing.T) {
	t.Run("LostReplyThenRejected", func(t *testing.T) {
		s := respiretest.NewServer(t, respiretest.InMemory()) // with IDMP
		rec := recordXAdds(t, s.Proxy, "s")
		s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
		s.MustAddRule(t, respiretest.Rule{Command: "XADD", Nth: 2, Action: respiretest.Inject(errNoIDMP)})
		c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
		_, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
		var se *ServerError
		var re *RetryError
		if !errors.As(err, &se) || se.Message != errNoIDMP || !errors.As(err, &re) || re.Attempts != 2 {
			t.Fatalf("XAdd = %v; want the rejection after 2 attempts", err)
		}
		if !MayHaveExecuted(err) {
			t.Errorf("MayHaveExecuted = false; the first attempt appended")
		}
		if want := "respire: XADD: the server rejected IDMP after an earlier attempt may have appended the entry; not sent again as a plain XADD: failed after 2 attempts: " + errNoIDMP; err.Error() != want {
			t.Errorf("XAdd = %q; want %q: why it did not fall back, saying respire: once", err, want)
		}
		frames := rec.all()
		if len(frames) != 2 {
			t.Fatalf("%d XADD frames, want 2 (no plain fallback)", len(frames))
		}
		for _, f := range frames {
			wantAutoIdentity(t, c, f)
		}
		wantXLen(t, c, "s", 1) // the first attempt's entry, once
	})
	t.Run("UnwrittenThenRejected", func(t *testing.T) {
		s := respiretest.NewServer(t, respiretest.InMemory(), respiretest.WithIDMP(false))
		rec := recordXAdds(t, s.Proxy, "s")
		var dials atomic.Int32
		unwritten := retryUnwrittenDialer(s)
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return unwritten(ctx, network, addr)
		}
		c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked, Dialer: dial})
		if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
			t.Fatalf("XAdd = %v; want the fallback's entry", err)
		}
		if n := dials.Load(); n != 2 {
			t.Fatalf("%d dials, want 2: the first attempt's write failed with its connection", n)
		}
		frames := rec.all()
		if len(frames) != 2 {
			t.Fatalf("%d XADD frames, want 2 (the rejected resend, the plain fallback)", len(frames))
		}
		wantAutoIdentity(t, c, frames[0])
		wantNoIdentity(t, frames[1])
		wantXLen(t, c, "s", 1)
	})
}

// The fallback stays within the call's original deadline: with each reply
// 3 s late and a 5 s command timeout, the call ends at 5 s, not 6 s.
func TestXAddFallbackSharesTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := respiretest.NewServer(t, respiretest.WithIDMP(false))
		rec := recordXAdds(t, s.Proxy, "s")
		s.MustAddRule(t, respiretest.Rule{Command: "XADD", Times: respiretest.Always, Action: respiretest.Delay(3 * time.Second)})
		c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked, CommandTimeout: 5 * time.Second, HealthTimeout: NoTimeout})
		start := time.Now()
		_, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v")
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("the call took %v, want the 5s command timeout", d)
		}
		var ce *ContextError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || !ce.Sent {
			t.Fatalf("XAdd = %v; want the deadline, after sending the plain XADD", err)
		}
		if n := len(rec.all()); n != 2 {
			t.Errorf("%d XADD frames, want 2", n)
		}
	})
}

// Against the real Redis 7.0 server: each call sends IDMP (rejected, no
// effect) and then one plain XADD; commandstats count 2 XADDs per call
// and the stream grows by one.
func TestXAddFallbackRealServerAppendsOncePerCall(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	px := realProxy(t, addr)
	k := key(t, "s")
	rec := recordXAdds(t, px, k)
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, RetryPolicy: idmpChecked})
	ctx := testCtx(t)
	before := commandCalls(t, addr, "xadd")
	const calls = 3
	for i := 1; i <= calls; i++ {
		id, err := c.XAdd(ctx, k, XAddOptions{}, "n", strconv.Itoa(i))
		if err != nil {
			t.Fatalf("XAdd %d: %v", i, err)
		}
		if n, err := admin(t, addr, "XLEN", k).Int64(); err != nil || n != int64(i) {
			t.Fatalf("after call %d: XLEN = %d, %v; want %d", i, n, err, i)
		}
		last, err := admin(t, addr, "XREVRANGE", k, "+", "-", "COUNT", "1").Elements()[0].Elements()[0].String()
		if err != nil || last != id {
			t.Errorf("call %d returned %q, last entry is %q (%v)", i, id, last, err)
		}
	}
	if got := commandCalls(t, addr, "xadd") - before; got != 2*calls {
		t.Errorf("commandstats: %d XADD calls, want %d (one rejected IDMP and one plain per call)", got, 2*calls)
	}
	frames := rec.all()
	if len(frames) != 2*calls {
		t.Fatalf("%d XADD frames, want %d", len(frames), 2*calls)
	}
	seen := map[string]bool{}
	for i := 0; i < len(frames); i += 2 {
		iid := wantAutoIdentity(t, c, frames[i])
		if seen[iid] {
			t.Errorf("message ID %q sent by two calls", iid)
		}
		seen[iid] = true
		wantNoIdentity(t, frames[i+1])
	}
}

// Against the real Redis 7.0 server: the fallback's plain XADD is
// WriteAccumulating, so under a WriteChecked maximum its lost reply is not
// resent (commandstats: the rejected IDMP and one plain XADD).
func TestXAddFallbackRealServerLostPlainReplyNotResent(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	px := realProxy(t, addr)
	k := key(t, "s")
	rec := recordXAdds(t, px, k)
	px.MustAddRule(t, respiretest.Rule{Command: "XADD", Arg: k, Nth: 2, Action: respiretest.DropAfterForward})
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, RetryPolicy: idmpChecked})
	before := commandCalls(t, addr, "xadd")
	_, err := c.XAdd(testCtx(t), k, XAddOptions{}, "f", "v")
	var re *RetryError
	if !errors.Is(err, ErrConnectionLost) || errors.As(err, &re) || !MayHaveExecuted(err) {
		t.Fatalf("XAdd = %v; want the plain XADD's lost reply, sent once", err)
	}
	wantRealXAdds(t, addr, k, before, 2, 1)
	frames := rec.all()
	if len(frames) != 2 {
		t.Fatalf("%d XADD frames, want 2", len(frames))
	}
	wantAutoIdentity(t, c, frames[0])
	wantNoIdentity(t, frames[1])
}

// wantRealXAdds fails t unless the real server at addr counted calls
// XADDs since its commandstats read before, and the stream k holds n
// entries.
func wantRealXAdds(t testing.TB, addr, k string, before, calls int, n int64) {
	t.Helper()
	if got := commandCalls(t, addr, "xadd") - before; got != calls {
		t.Errorf("commandstats: %d XADD calls, want %d", got, calls)
	}
	if got, err := admin(t, addr, "XLEN", k).Int64(); err != nil || got != n {
		t.Errorf("XLEN = %d, %v; want %d", got, err, n)
	}
}

// Against the real Redis 7.0 server: an explicit IDMP or IDMPAUTO gets the
// server's rejection, sent once, with no fallback and no stream created;
// XCFGSET is an unknown command there.
func TestXAddExplicitIdempotencyRealServerGetsTheError(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	px := realProxy(t, addr)
	k := key(t, "s")
	c := newClient(t, Options{Endpoints: []string{px.Addr()}, RetryPolicy: idmpChecked})
	for _, idem := range []*XAddIdempotency{{ProducerID: "p", MessageID: "m"}, {ProducerID: "p", Auto: true}} {
		before := commandCalls(t, addr, "xadd")
		_, err := c.XAdd(testCtx(t), k, XAddOptions{Idempotency: idem}, "f", "v")
		var se *ServerError
		if !errors.As(err, &se) || se.Message != errNoIDMP {
			t.Errorf("XAdd(%+v) = %v; want the server's %q", *idem, err, errNoIDMP)
		}
		if got := commandCalls(t, addr, "xadd") - before; got != 1 {
			t.Errorf("commandstats: %d XADD calls, want 1", got)
		}
	}
	if n, err := admin(t, addr, "EXISTS", k).Int64(); err != nil || n != 0 {
		t.Errorf("EXISTS = %d, %v; want no stream", n, err)
	}
	admin(t, addr, "XADD", k, "*", "f", "v")
	err := c.XCfgSet(testCtx(t), k, XCfgOptions{Duration: 5 * time.Second})
	var se *ServerError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Message, "ERR unknown command 'XCFGSET'") {
		t.Errorf("XCfgSet = %v; want unknown command", err)
	}
}

// XCfgSet sends IDMP-DURATION in seconds and IDMP-MAXSIZE, and its
// category is the catalog's WriteAccumulating.
func TestXCfgSet(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	var sent [][]string
	var mu sync.Mutex
	s.MustAddRule(t, respiretest.Rule{Command: "XCFGSET", Times: respiretest.Always, Action: respiretest.Pass,
		OnReceive: func(args []string) { mu.Lock(); sent = append(sent, args); mu.Unlock() }})
	c := retryMemClient(t, s, Options{})
	var se *ServerError
	if err := c.XCfgSet(bg, "s", XCfgOptions{MaxSize: 5}); !errors.As(err, &se) || se.Message != "ERR no such key" {
		t.Fatalf("XCfgSet on a missing stream = %v; want ERR no such key", err)
	}
	if _, err := c.XAdd(bg, "s", XAddOptions{}, "f", "v"); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []XCfgOptions{{Duration: 5 * time.Second, MaxSize: 7}, {Duration: time.Minute}, {MaxSize: 10000}} {
		if err := c.XCfgSet(bg, "s", opt); err != nil {
			t.Errorf("XCfgSet(%+v): %v", opt, err)
		}
	}
	want := []string{"XCFGSET s IDMP-MAXSIZE 5", "XCFGSET s IDMP-DURATION 5 IDMP-MAXSIZE 7", "XCFGSET s IDMP-DURATION 60", "XCFGSET s IDMP-MAXSIZE 10000"}
	mu.Lock()
	for i, args := range sent {
		if i >= len(want) || strings.Join(args, " ") != want[i] {
			t.Errorf("frame %d = %q, want %q", i, args, want)
		}
	}
	mu.Unlock()
	if err := c.XCfgSet(bg, "s", XCfgOptions{Duration: 86401 * time.Second}); !errors.As(err, &se) {
		t.Errorf("XCfgSet beyond the server's bound = %v; want the server's error", err)
	}
	if got := retryCategoryOf(t, "XCFGSET", func(c *Client) error { return c.XCfgSet(bg, "s", XCfgOptions{MaxSize: 5}) }); got != WriteAccumulating {
		t.Errorf("XCfgSet retries as %v, want %v", got, WriteAccumulating)
	}
}

// Invalid XCfgSet options fail with ErrInvalidArgument before anything is
// sent.
func TestXCfgSetRejectsInvalidOptions(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	c := retryMemClient(t, s, Options{})
	for name, opt := range map[string]XCfgOptions{
		"Empty":            {},
		"NegativeDuration": {Duration: -time.Second},
		"NegativeMaxSize":  {MaxSize: -1},
		"BothNegative":     {Duration: -time.Second, MaxSize: -1},
		"NegativeWithGood": {Duration: 5 * time.Second, MaxSize: -1},
		"FractionalSecond": {Duration: 1500 * time.Millisecond},
		"BelowOneSecond":   {Duration: time.Millisecond},
	} {
		if err := c.XCfgSet(bg, "s", opt); !errors.Is(err, ErrInvalidArgument) || MayHaveExecuted(err) {
			t.Errorf("%s: XCfgSet(%+v) = %v; want ErrInvalidArgument", name, opt, err)
		}
	}
	if n := s.Stats("XCFGSET").Received; n != 0 {
		t.Errorf("%d XCFGSET frames sent, want none", n)
	}
}

// An invalid StreamProducerID fails Connect with a ConfigError naming it.
func TestConnectRejectsInvalidStreamProducerID(t *testing.T) {
	for name, id := range map[string]string{
		"Blank":        "   ",
		"Tab":          "\t",
		"Space":        "orders service",
		"LeadingSpace": " orders",
		"Newline":      "orders\r\n",
		"Control":      "orders\x00",
		"NoBreakSpace": "orders\u00a0service",
		"InvalidUTF8":  "orders\xff",
		"TooLong":      strings.Repeat("p", 257),
	} {
		_, err := Connect(bg, Options{Endpoints: []string{"127.0.0.1:1"}, StreamProducerID: id})
		var ce *ConfigError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field != "Options.StreamProducerID" {
			t.Errorf("%s: Connect(StreamProducerID %q) = %v; want a ConfigError for Options.StreamProducerID", name, id, err)
		} else if blank := strings.TrimSpace(id) == ""; blank != strings.Contains(ce.Reason, "blank") {
			t.Errorf("%s: reason %q; blank IDs (only) are reported as blank", name, ce.Reason)
		}
	}
	s := respiretest.NewServer(t, respiretest.InMemory())
	long := strings.Repeat("p", 256)
	if c := retryMemClient(t, s, Options{StreamProducerID: long}); c.cfg.streamProducerID != long {
		t.Errorf("a 256-byte producer ID was not kept")
	}
}

// Against the real Redis 7.0 server: a first attempt refused with a
// LOADING, READONLY or MASTERDOWN reply did not run (the server refuses
// those before reading the XADD), so when the resend meets the IDMP
// rejection the call still falls back to one plain XADD: the stream grows
// by one, commandstats count the rejected resend and the plain XADD.
func TestXAddFallbackAfterRefusedFirstAttempt(t *testing.T) {
	countsCommands(t)
	addr := standaloneAddr(t)
	for _, refusal := range []string{
		"LOADING Redis is loading the dataset in memory",
		"READONLY You can't write against a read only replica.",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
	} {
		t.Run(strings.Fields(refusal)[0], func(t *testing.T) {
			px := realProxy(t, addr)
			k := key(t, "s")
			rec := recordXAdds(t, px, k)
			px.MustAddRule(t, respiretest.Rule{Command: "XADD", Arg: k, Action: respiretest.Inject(refusal)})
			c := newClient(t, Options{Endpoints: []string{px.Addr()}, RetryPolicy: idmpChecked})
			before := commandCalls(t, addr, "xadd")
			id, err := c.XAdd(testCtx(t), k, XAddOptions{}, "f", "v")
			if err != nil {
				t.Fatalf("XAdd = %v; want the plain fallback's entry", err)
			}
			wantRealXAdds(t, addr, k, before, 2, 1) // the rejected IDMP resend, the plain XADD
			frames := rec.all()
			if len(frames) != 3 {
				t.Fatalf("%d XADD frames, want 3 (refused, rejected, plain)", len(frames))
			}
			wantResentIdentity(t, c, frames[0], frames[1])
			wantNoIdentity(t, frames[2])
			if id == "" {
				t.Errorf("XAdd returned an empty ID")
			}
		})
	}
}

// ID "*" is the automatic entry ID that the zero ID stands for, not an
// explicit one: the call still carries the automatic identity, and a lost
// reply is resent with it, appending once.
func TestXAddStarIDKeepsAutoIdentity(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	rec := recordXAdds(t, s.Proxy, "s")
	s.MustAddRule(t, respiretest.Rule{Command: "XADD", Action: respiretest.DropAfterForward})
	c := retryMemClient(t, s, Options{RetryPolicy: idmpChecked})
	if _, err := c.XAdd(bg, "s", XAddOptions{ID: "*"}, "f", "v"); err != nil {
		t.Fatalf("XAdd(ID *) = %v; want the lost reply resent with the identity", err)
	}
	frames := rec.all()
	if len(frames) != 2 {
		t.Fatalf("XADD sent %d times, want 2", len(frames))
	}
	wantResentIdentity(t, c, frames[0], frames[1])
	wantXLen(t, c, "s", 1)
}
