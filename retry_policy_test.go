package respire

// The command retry policy against the embedded server: settings, their
// defaults and bounds, which failures and categories resend, typed and raw
// command categories, dispatch scope, write evidence, and an end-to-end
// property against a reference model of the rules.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/respiretest"
)

// retryMemClient connects a client to s through its in-memory dial (unless
// opts.Dialer is set) and closes it when the test ends.
// getAsync runs c.Get(ctx, key) on a goroutine of its own and returns
// the channel that receives its error.
func getAsync(ctx context.Context, c *Client, key string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, key)
		errc <- err
	}()
	return errc
}

func retryMemClient(t testing.TB, s *respiretest.Server, opts Options) *Client {
	t.Helper()
	opts.Endpoints = []string{respiretest.MemoryAddr}
	if opts.Dialer == nil {
		opts.Dialer = s.Dial
	}
	c, err := Connect(context.Background(), opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// retryWantAttempts fails t unless err is a failure made after n sends:
// for n > 1 a *RetryError with Attempts n that says so; for n == 1 an error
// that is not a *RetryError of more attempts.
func retryWantAttempts(t testing.TB, err error, n int) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want a failure after %d attempts", n)
	}
	var re *RetryError
	if !errors.As(err, &re) {
		if n > 1 {
			t.Fatalf("err = %v (%T), want a *RetryError with Attempts %d", err, err, n)
		}
		return
	}
	if re.Attempts != n {
		t.Fatalf("RetryError.Attempts = %d, want %d (err %v)", re.Attempts, n, err)
	}
	want := "after " + strconv.Itoa(n) + " attempts: "
	if n == 1 {
		want = "after 1 attempt: " // Close or cancellation during the first backoff
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to say it failed %q", err, want)
	}
	if re.Err == nil {
		t.Errorf("RetryError wraps no failure")
	}
}

var bg = context.Background()

func TestRetryPolicyDefaultsAndSentinels(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	tests := []struct {
		name    string
		policy  *RetryPolicy
		enabled bool
		want    retry.Settings // the compiled values, with 0 for "none"
	}{
		{"Nil", nil, false, retry.Settings{MaxAttempts: 1, MaxCommandRetryCategory: Never, RetryableErrors: RetryOnNone}},
		{"ZeroMeansDefaults", &RetryPolicy{}, true, retry.Settings{
			MaxAttempts: 3, MaxCommandRetryCategory: ReadOnly, RetryableErrors: DefaultRetryableErrors,
			InitialBackoff: 10 * ms, MaxBackoff: time.Second, Jitter: 1}},
		{"Sentinels", &RetryPolicy{InitialBackoff: NoBackoff, Jitter: NoJitter, RetryableErrors: RetryOnNone}, true, retry.Settings{
			MaxAttempts: 3, MaxCommandRetryCategory: ReadOnly, RetryableErrors: RetryOnNone,
			InitialBackoff: 0, MaxBackoff: time.Second, Jitter: 0}},
		{"UpperBounds", &RetryPolicy{MaxAttempts: 100, MaxCommandRetryCategory: ServerAdmin,
			RetryableErrors: RetryOnLoading | RetryOnReadOnly, InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: 1}, true,
			retry.Settings{MaxAttempts: 100, MaxCommandRetryCategory: ServerAdmin, RetryableErrors: RetryOnLoading | RetryOnReadOnly,
				InitialBackoff: time.Minute, MaxBackoff: time.Minute, Jitter: 1}},
		{"LowerBounds", &RetryPolicy{MaxAttempts: 2, MaxCommandRetryCategory: Always, InitialBackoff: time.Nanosecond,
			MaxBackoff: time.Nanosecond, Jitter: math.SmallestNonzeroFloat64}, true,
			retry.Settings{MaxAttempts: 2, MaxCommandRetryCategory: Always, RetryableErrors: DefaultRetryableErrors,
				InitialBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond, Jitter: math.SmallestNonzeroFloat64}},
		// MaxAttempts 1 and the maximum Never disable retries: the same
		// dispatch path as a nil policy.
		{"MaxAttemptsOne", &RetryPolicy{MaxAttempts: 1}, false, retry.Settings{
			MaxAttempts: 1, MaxCommandRetryCategory: ReadOnly, RetryableErrors: DefaultRetryableErrors,
			InitialBackoff: 10 * ms, MaxBackoff: time.Second, Jitter: 1}},
		{"MaxCategoryNever", &RetryPolicy{MaxCommandRetryCategory: Never}, false, retry.Settings{
			MaxAttempts: 3, MaxCommandRetryCategory: Never, RetryableErrors: DefaultRetryableErrors,
			InitialBackoff: 10 * ms, MaxBackoff: time.Second, Jitter: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := retryMemClient(t, s, Options{RetryPolicy: tt.policy})
			p := c.cfg.policy
			got := retry.Settings{
				MaxAttempts: p.MaxAttempts(), MaxCommandRetryCategory: p.MaxCategory(), RetryableErrors: p.Retryable(),
				InitialBackoff: p.InitialBackoff(), MaxBackoff: p.MaxBackoff(), Jitter: p.Jitter(),
			}
			if got != tt.want {
				t.Errorf("compiled policy = %+v, want %+v", got, tt.want)
			}
			if c.retries != tt.enabled {
				t.Errorf("retry dispatch enabled = %v, want %v", c.retries, tt.enabled)
			}
		})
	}
}

// Connect copies the policy: changing it afterwards changes nothing.
func TestRetryPolicyCopiedByConnect(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	p := &RetryPolicy{MaxAttempts: 1}
	c := retryMemClient(t, s, Options{RetryPolicy: p})
	p.MaxAttempts = 5
	get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
	if _, err := c.Get(bg, "k"); !errors.Is(err, &ServerError{Code: "LOADING"}) {
		t.Fatalf("err = %v, want LOADING", err)
	}
	if get.Matched() != 1 {
		t.Errorf("GET sent %d times, want 1: the policy changed after Connect", get.Matched())
	}
}

// An out-of-range setting fails Connect with a *ConfigError naming the
// field, before anything is dialed.
func TestRetryPolicyOutOfRangeFailsConnect(t *testing.T) {
	tests := []struct {
		policy RetryPolicy
		field  string
	}{
		{RetryPolicy{MaxAttempts: -1}, "RetryPolicy.MaxAttempts"},
		{RetryPolicy{MaxAttempts: 101}, "RetryPolicy.MaxAttempts"},
		{RetryPolicy{MaxCommandRetryCategory: ServerAdmin + 1}, "RetryPolicy.MaxCommandRetryCategory"},
		{RetryPolicy{MaxCommandRetryCategory: 255}, "RetryPolicy.MaxCommandRetryCategory"},
		{RetryPolicy{RetryableErrors: 1 << 5}, "RetryPolicy.RetryableErrors"},
		{RetryPolicy{RetryableErrors: RetryOnNone | RetryOnLoading}, "RetryPolicy.RetryableErrors"},
		{RetryPolicy{InitialBackoff: time.Minute + 1}, "RetryPolicy.InitialBackoff"},
		{RetryPolicy{MaxBackoff: -1}, "RetryPolicy.MaxBackoff"},
		{RetryPolicy{MaxBackoff: time.Minute + 1}, "RetryPolicy.MaxBackoff"},
		{RetryPolicy{InitialBackoff: 2 * time.Second}, "RetryPolicy.MaxBackoff"}, // default MaxBackoff 1s < 2s
		{RetryPolicy{InitialBackoff: 50 * ms, MaxBackoff: 49 * ms}, "RetryPolicy.MaxBackoff"},
		{RetryPolicy{Jitter: 1.5}, "RetryPolicy.Jitter"},
		{RetryPolicy{Jitter: -0.5}, "RetryPolicy.Jitter"},
		{RetryPolicy{Jitter: -2}, "RetryPolicy.Jitter"},
		{RetryPolicy{Jitter: math.NaN()}, "RetryPolicy.Jitter"},
		{RetryPolicy{Jitter: math.Inf(1)}, "RetryPolicy.Jitter"},
		{RetryPolicy{Jitter: math.Inf(-1)}, "RetryPolicy.Jitter"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			dials := 0
			p := tt.policy
			_, err := Connect(bg, Options{
				Endpoints:   []string{"127.0.0.1:1"},
				RetryPolicy: &p,
				Dialer: func(context.Context, string, string) (net.Conn, error) {
					dials++
					return nil, errors.New("dialed")
				},
			})
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Connect(%+v) = %v, want a *ConfigError", p, err)
			}
			if ce.Field != tt.field || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q names field %q, want %q", err, ce.Field, tt.field)
			}
			if dials != 0 {
				t.Errorf("Connect dialed %d times with an invalid policy", dials)
			}
		})
	}
}

// retryFault is one way an attempt can fail.
type retryFault struct {
	name string
	// action is the proxy rule's action; nil for client-side faults.
	action *respiretest.Action
	// unwritten faults fail the client's write of the command at offset 0.
	unwritten bool
	flag      RetryableErrors // the failure's flag; 0 when not selectable
	executed  bool            // the server ran the failed attempt
	code      string          // server error code, "" for connection loss
}

func act(a respiretest.Action) *respiretest.Action { return &a }

var (
	faultUnwritten  = retryFault{name: "Unwritten", unwritten: true, flag: RetryOnConnectionLoss}
	faultDropBefore = retryFault{name: "DropBeforeForward", action: act(respiretest.DropBeforeForward), flag: RetryOnConnectionLoss}
	faultLostReply  = retryFault{name: "LostReply", action: act(respiretest.DropAfterForward), flag: RetryOnConnectionLoss, executed: true}
	faultLoading    = retryFault{name: "LOADING", action: act(respiretest.Inject(respiretest.ErrLoading)), flag: RetryOnLoading, code: "LOADING"}
	faultTryAgain   = retryFault{name: "TRYAGAIN", action: act(respiretest.Inject(respiretest.ErrTryAgain)), flag: RetryOnTryAgain, code: "TRYAGAIN"}
	faultMasterDown = retryFault{name: "MASTERDOWN", action: act(respiretest.Inject(respiretest.ErrMasterDown)), flag: RetryOnMasterDown, code: "MASTERDOWN"}
	faultReadOnly   = retryFault{name: "READONLY", action: act(respiretest.Inject(respiretest.ErrReadOnly)), flag: RetryOnReadOnly, code: "READONLY"}
	faultBusy       = retryFault{name: "BUSY", action: act(respiretest.Inject(respiretest.ErrBusy)), code: "BUSY"}
	faultClusterDn  = retryFault{name: "CLUSTERDOWN", action: act(respiretest.Inject(respiretest.ErrClusterDown)), code: "CLUSTERDOWN"}

	// selectableFaults are the failures a policy can select.
	selectableFaults = []retryFault{faultUnwritten, faultDropBefore, faultLostReply, faultLoading, faultTryAgain, faultMasterDown, faultReadOnly}
)

// otherFlags returns every selectable failure except f's, or RetryOnNone.
func (f retryFault) otherFlags() RetryableErrors {
	if o := DefaultRetryableErrors &^ f.flag; o != 0 {
		return o
	}
	return RetryOnNone
}

// retryUnwrittenDialer fails the first write of a command (the second
// write of the first connection, after HELLO) before any byte is written.
func retryUnwrittenDialer(s *respiretest.Server) func(context.Context, string, string) (net.Conn, error) {
	return respiretest.FailWritesDialer(s.Dial, 1, 2, 0)
}

// retryProbe runs call once on a fresh client with policy p, failing the
// first send of command with fault ("NAME" or "NAME firstarg", matched by
// the proxy), and returns how many times the client
// sent it and the call's error.
func retryProbe(t *testing.T, p *RetryPolicy, fault retryFault, command string, call func(c *Client) error) (int, error) {
	t.Helper()
	return retryProbeConn(t, p, fault, command, call, 1)
}

// retryProbeConn is retryProbe whose unwritten fault hits the conn-th
// connection the client dials: 2 for a command that runs on a dedicated
// connection (the shared one is dialed first, by Connect).
func retryProbeConn(t *testing.T, p *RetryPolicy, fault retryFault, command string, call func(c *Client) error, conn int) (int, error) {
	t.Helper()
	s := respiretest.NewServer(t, respiretest.InMemory())
	opts := Options{RetryPolicy: p}
	if p != nil && p.InitialBackoff == 0 {
		q := *p
		q.InitialBackoff = NoBackoff
		opts.RetryPolicy = &q
	}
	if fault.unwritten {
		opts.Dialer = respiretest.FailWritesDialer(s.Dial, conn, 2, 0)
	}
	c := retryMemClient(t, s, opts)
	name, arg, _ := strings.Cut(command, " ")
	count := s.MustAddRule(t, respiretest.Rule{Command: name, Arg: arg, Times: respiretest.Always, Action: respiretest.Pass})
	if fault.action != nil {
		s.MustAddRule(t, respiretest.Rule{Command: name, Arg: arg, Action: *fault.action})
	}
	err := call(c)
	sent := count.Matched()
	if fault.unwritten {
		sent++ // the failed write never reached the proxy
	}
	return sent, err
}

// Disabled policies (nil, MaxAttempts 1, maximum Never) and RetryOnNone
// never resend, even a definitely unwritten frame of a retryable command.
func TestRetryDisabledPoliciesNeverResend(t *testing.T) {
	policies := []struct {
		name string
		p    *RetryPolicy
	}{
		{"Nil", nil},
		{"MaxAttemptsOne", &RetryPolicy{MaxAttempts: 1, MaxCommandRetryCategory: ServerAdmin}},
		{"MaxCategoryNever", &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: Never}},
		{"RetryOnNone", &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: ServerAdmin, RetryableErrors: RetryOnNone}},
	}
	for _, pp := range policies {
		for _, f := range selectableFaults {
			t.Run(pp.name+"/"+f.name, func(t *testing.T) {
				sent, err := retryProbe(t, pp.p, f, "GET", func(c *Client) error { _, err := c.Get(bg, "k"); return err })
				if sent != 1 {
					t.Errorf("GET sent %d times, want 1", sent)
				}
				retryWantAttempts(t, err, 1)
				var re *RetryError
				if errors.As(err, &re) {
					t.Errorf("err = %v: a call that was never resent is not a *RetryError", err)
				}
			})
		}
	}
}

// Each selectable failure resends when the policy selects it, and only
// then; every other server error is never selectable; authentication
// replies are never retried.
func TestRetryFailureSelection(t *testing.T) {
	get := func(c *Client) error { _, err := c.Get(bg, "k"); return err }
	for _, f := range selectableFaults {
		t.Run(f.name+"/Selected", func(t *testing.T) {
			sent, err := retryProbe(t, &RetryPolicy{RetryableErrors: f.flag}, f, "GET", get)
			if sent != 2 || !errors.Is(err, ErrNil) {
				t.Errorf("GET sent %d times, err %v; want 2 sends and the resend's reply (ErrNil)", sent, err)
			}
		})
		t.Run(f.name+"/NotSelected", func(t *testing.T) {
			sent, err := retryProbe(t, &RetryPolicy{RetryableErrors: f.otherFlags()}, f, "GET", get)
			if sent != 1 {
				t.Errorf("GET sent %d times, want 1", sent)
			}
			if f.code != "" && !errors.Is(err, &ServerError{Code: f.code}) {
				t.Errorf("err = %v, want the %s reply", err, f.code)
			}
			if f.code == "" && !errors.Is(err, ErrConnectionLost) {
				t.Errorf("err = %v, want a connection loss", err)
			}
		})
	}
	unselectable := []string{
		respiretest.ErrBusy, respiretest.ErrClusterDown, "ERR something went wrong", "NOSCRIPT No matching script.",
		"WRONGTYPE Operation against a key holding the wrong kind of value", "OOM command not allowed",
		"loading lower case is another code", "LOADINGX not the LOADING code", "ERR LOADING is not the first word",
		"ERR READONLY is not the first word", respiretest.Moved(12439, "127.0.0.1:7302"), respiretest.Ask(15891, "127.0.0.1:7300"),
		// Authentication and permission replies are never retried.
		"NOAUTH Authentication required.", "WRONGPASS invalid username-password pair or user is disabled.",
		"NOPERM this user has no permissions to run the 'get' command",
	}
	for _, text := range unselectable {
		code, _, _ := strings.Cut(text, " ")
		t.Run("Unselectable/"+code, func(t *testing.T) {
			f := retryFault{name: code, action: act(respiretest.Inject(text)), code: code}
			sent, err := retryProbe(t, &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: ServerAdmin}, f, "GET", get)
			if sent != 1 {
				t.Errorf("GET sent %d times after %q, want 1", sent, text)
			}
			var se *ServerError
			if !errors.As(err, &se) || se.Code != code || se.Message != text {
				t.Errorf("err = %v, want *ServerError %q", err, text)
			}
			if auth := code == "NOAUTH" || code == "WRONGPASS" || code == "NOPERM"; se != nil && se.IsAuth() != auth {
				t.Errorf("IsAuth() = %v for %q", se.IsAuth(), text)
			}
		})
	}
}

var (
	setPlain = func(o SetOptions) func(c *Client) error {
		return func(c *Client) error { _, err := c.SetWithOptions(bg, "k", "v", o); return err }
	}
	zaddPlain = func(o ZAddOptions) func(c *Client) error {
		return func(c *Client) error { _, err := c.ZAdd(bg, "z", o, Z{1, "m"}); return err }
	}
	xaddPlain = func(o XAddOptions) func(c *Client) error {
		return func(c *Client) error { _, err := c.XAdd(bg, "s", o, "f", "v"); return err }
	}
	doCmd = func(cmd Command, args ...string) func(c *Client) error {
		return func(c *Client) error { _, err := c.Do(bg, cmd, anys(args)...); return err }
	}
	categories = []RetryCategory{Always, Connection, ReadOnly, WriteChecked, WriteLastWins, WriteAccumulating, ServerAdmin}
)

// retryCategoryOf finds the category a call retries under: the lowest
// policy maximum that lets a LOADING reply (possible execution) resend it,
// or Never when none does. It also checks that every higher maximum
// resends it and every lower one does not.
func retryCategoryOf(t *testing.T, command string, call func(c *Client) error) RetryCategory {
	t.Helper()
	found := Never
	for _, max := range categories {
		sent, _ := retryProbe(t, &RetryPolicy{MaxCommandRetryCategory: max}, faultLoading, command, call)
		switch {
		case sent == 2 && found == Never:
			found = max
		case sent == 1 && found != Never:
			t.Errorf("%s resent under maximum %v but not under the higher %v", command, found, max)
		case sent != 1 && sent != 2:
			t.Errorf("%s sent %d times under maximum %v", command, sent, max)
		}
	}
	return found
}

// Typed commands carry their audited categories: SET, SET XX, ZADD XX are
// WriteLastWins; SET NX, ZADD NX and XADD with IDMP or IDMPAUTO are
// WriteChecked; every other option set keeps the conservative category.
// Generated descriptors use their category for every argument list, and a
// declaration replaces it.
func TestRetryTypedCommandCategories(t *testing.T) {
	idmp := &XAddIdempotency{ProducerID: "p", MessageID: "m1"}
	auto := &XAddIdempotency{ProducerID: "p", Auto: true}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		command string
		call    func(c *Client) error
		want    RetryCategory
	}{
		{"Get", "GET", func(c *Client) error { _, err := c.Get(bg, "k"); return err }, ReadOnly},
		{"Ping", "PING", func(c *Client) error { return c.Ping(bg) }, Always},
		{"Incr", "INCR", func(c *Client) error { _, err := c.Incr(bg, "n"); return err }, WriteAccumulating},
		{"Set", "SET", func(c *Client) error { return c.Set(bg, "k", "v") }, WriteLastWins},
		{"SetOptions/None", "SET", setPlain(SetOptions{}), WriteLastWins},
		{"SetOptions/XX", "SET", setPlain(SetOptions{Condition: SetIfExists}), WriteLastWins},
		{"SetOptions/NX", "SET", setPlain(SetOptions{Condition: SetIfNotExists}), WriteChecked},
		{"SetOptions/EX", "SET", setPlain(SetOptions{TTL: time.Second}), WriteAccumulating},
		{"SetOptions/PX", "SET", setPlain(SetOptions{TTL: 1500 * ms}), WriteAccumulating},
		{"SetOptions/EXAT", "SET", setPlain(SetOptions{ExpireAt: at}), WriteAccumulating},
		{"SetOptions/KEEPTTL", "SET", setPlain(SetOptions{KeepTTL: true}), WriteAccumulating},
		{"SetOptions/GET", "SET", setPlain(SetOptions{Get: true}), WriteAccumulating},
		{"SetOptions/NX_GET", "SET", setPlain(SetOptions{Condition: SetIfNotExists, Get: true}), WriteAccumulating},
		{"SetOptions/NX_EX", "SET", setPlain(SetOptions{Condition: SetIfNotExists, TTL: time.Second}), WriteAccumulating},
		{"SetOptions/XX_KEEPTTL", "SET", setPlain(SetOptions{Condition: SetIfExists, KeepTTL: true}), WriteAccumulating},
		{"ZAdd/None", "ZADD", zaddPlain(ZAddOptions{}), WriteAccumulating},
		{"ZAdd/XX", "ZADD", zaddPlain(ZAddOptions{Condition: SetIfExists}), WriteLastWins},
		{"ZAdd/NX", "ZADD", zaddPlain(ZAddOptions{Condition: SetIfNotExists}), WriteChecked},
		{"ZAdd/XX_CH", "ZADD", zaddPlain(ZAddOptions{Condition: SetIfExists, Changed: true}), WriteAccumulating},
		{"ZAdd/NX_CH", "ZADD", zaddPlain(ZAddOptions{Condition: SetIfNotExists, Changed: true}), WriteAccumulating},
		{"ZAdd/GT", "ZADD", zaddPlain(ZAddOptions{Compare: ZGreater}), WriteAccumulating},
		{"ZAdd/XX_LT", "ZADD", zaddPlain(ZAddOptions{Condition: SetIfExists, Compare: ZLess}), WriteAccumulating},
		{"ZAddIncr/XX", "ZADD", func(c *Client) error {
			_, err := c.ZAddIncr(bg, "z", ZAddOptions{Condition: SetIfExists}, Z{1, "m"})
			return err
		}, WriteAccumulating},
		{"ZAddIncr/NX", "ZADD", func(c *Client) error {
			_, err := c.ZAddIncr(bg, "z", ZAddOptions{Condition: SetIfNotExists}, Z{1, "m"})
			return err
		}, WriteAccumulating},
		// A typed XAdd without ID or Idempotency carries IDMP on its own
		// (WriteChecked) under a policy that selects connection loss at
		// WriteChecked or higher, as the probe's policies do.
		{"XAdd/Plain", "XADD", xaddPlain(XAddOptions{}), WriteChecked},
		{"XAdd/ExplicitID", "XADD", xaddPlain(XAddOptions{ID: "1-1"}), WriteAccumulating},
		{"XAdd/MaxLen", "XADD", xaddPlain(XAddOptions{MaxLen: 10}), WriteChecked},
		{"XAdd/IDMP", "XADD", xaddPlain(XAddOptions{Idempotency: idmp}), WriteChecked},
		{"XAdd/IDMPAUTO", "XADD", xaddPlain(XAddOptions{Idempotency: auto}), WriteChecked},
		{"XAdd/IDMP_MaxLen", "XADD", xaddPlain(XAddOptions{Idempotency: idmp, MaxLen: 10}), WriteChecked},
		{"Catalog/SET", "SET", doCmd(catalog.String.SET(), "k", "v"), WriteAccumulating},
		{"Catalog/SET_NX", "SET", doCmd(catalog.String.SET(), "k", "v", "NX"), WriteAccumulating},
		{"Catalog/ZADD_XX", "ZADD", doCmd(catalog.SortedSet.ZADD(), "z", "XX", "1", "m"), WriteAccumulating},
		{"Catalog/XADD_IDMP", "XADD", doCmd(catalog.Stream.XADD(), "s", "IDMP", "p", "m1", "*", "f", "v"), WriteAccumulating},
		{"Catalog/GET", "GET", doCmd(catalog.String.GET(), "k"), ReadOnly},
		{"Catalog/SET_Declared", "SET", doCmd(catalog.String.SET().WithRetryCategory(WriteLastWins), "k", "v"), WriteLastWins},
		{"Catalog/GET_DeclaredRiskier", "GET", doCmd(catalog.String.GET().WithRetryCategory(WriteAccumulating), "k"), WriteAccumulating},
		{"Catalog/GET_DeclaredNever", "GET", doCmd(catalog.String.GET().WithRetryCategory(Never), "k"), Never},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryCategoryOf(t, tt.command, tt.call); got != tt.want {
				t.Errorf("retries as %v, want %v", got, tt.want)
			}
		})
	}
}

// A raw command has no retry permission until its category is declared,
// whatever its name (GET included); the declaration is used as given.
func TestRetryRawCommandCategories(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		args []string
		want RetryCategory
	}{
		{"GET_Undeclared", NewCommand("GET"), []string{"k"}, Never},
		{"get_LowerCaseUndeclared", NewCommand("get"), []string{"k"}, Never},
		{"PING_Undeclared", NewCommand("PING"), nil, Never},
		{"Module_Undeclared", NewCommand("MYMODULE.GET"), []string{"k"}, Never},
		{"Module_ReadOnly", NewCommand("MYMODULE.GET").WithRetryCategory(ReadOnly), []string{"k"}, ReadOnly},
		{"GET_WriteChecked", NewCommand("GET").WithRetryCategory(WriteChecked), []string{"k"}, WriteChecked},
		{"INCR_Always", NewCommand("INCR").WithRetryCategory(Always), []string{"n"}, Always},
		{"GET_Never", NewCommand("GET").WithRetryCategory(Never), []string{"k"}, Never},
		{"GET_Undefined", NewCommand("GET").WithRetryCategory(ServerAdmin + 1), []string{"k"}, Never},
		{"GET_Zero", NewCommand("GET").WithRetryCategory(0), []string{"k"}, Never},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryCategoryOf(t, tt.cmd.Name(), doCmd(tt.cmd, tt.args...)); got != tt.want {
				t.Errorf("retries as %v, want %v", got, tt.want)
			}
		})
		// Definitely unwritten frames resend whatever the category, but
		// only for a command whose category is not Never.
		t.Run(tt.name+"/Unwritten", func(t *testing.T) {
			sent, _ := retryProbe(t, &RetryPolicy{MaxCommandRetryCategory: Always}, faultUnwritten, tt.cmd.Name(), doCmd(tt.cmd, tt.args...))
			if want := 1 + b2i(tt.want != Never); sent != want {
				t.Errorf("sent %d times, want %d", sent, want)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Blocking commands, connection protocol commands, scripts and functions
// through the raw path, transactions and cursor continuations are never
// resent, whatever category the caller declares; a cursor's first page is.
func TestRetryDispatchScope(t *testing.T) {
	declared := func(name string) Command { return NewCommand(name).WithRetryCategory(ReadOnly) }
	tests := []struct {
		name    string
		command string // first word, as the server sees it
		cmd     Command
		args    []string
		resent  bool
	}{
		{"BLPOP", "BLPOP", declared("BLPOP"), []string{"l", "1"}, false},
		{"BRPOP", "BRPOP", declared("BRPOP"), []string{"l", "1"}, false},
		{"BZPOPMIN", "BZPOPMIN", declared("BZPOPMIN"), []string{"z", "1"}, false},
		{"XREAD", "XREAD", declared("XREAD"), []string{"BLOCK", "10", "STREAMS", "s", "$"}, false},
		{"EVAL", "EVAL", declared("EVAL"), []string{"return 1", "0"}, false},
		{"EVAL_RO", "EVAL_RO", declared("EVAL_RO"), []string{"return 1", "0"}, false},
		{"EVALSHA", "EVALSHA", declared("EVALSHA"), []string{"e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}, false},
		{"FCALL", "FCALL", declared("FCALL"), []string{"f", "0"}, false},
		{"FCALL_RO", "FCALL_RO", declared("FCALL_RO"), []string{"f", "0"}, false},
		{"CatalogEVAL", "EVAL", catalog.Scripting.EVAL().WithRetryCategory(ReadOnly), []string{"return 1", "0"}, false},
		{"SCAN_Continuation", "SCAN", declared("SCAN"), []string{"17"}, false},
		{"SSCAN_Continuation", "SSCAN", declared("SSCAN"), []string{"s", "5"}, false},
		{"HSCAN_Continuation", "HSCAN", declared("HSCAN"), []string{"h", "5", "COUNT", "10"}, false},
		{"ZSCAN_Continuation", "ZSCAN", declared("ZSCAN"), []string{"z", "100"}, false},
		{"CatalogSCAN_Continuation", "SCAN", catalog.Generic.SCAN(), []string{"17"}, false},
		{"SCAN_FirstPage", "SCAN", declared("SCAN"), []string{"0"}, true},
		{"CatalogSCAN_FirstPage", "SCAN", catalog.Generic.SCAN(), []string{"0", "COUNT", "10"}, true},
		{"SSCAN_FirstPage", "SSCAN", declared("SSCAN"), []string{"s", "0"}, true},
		{"CLIENT_ID", "CLIENT", declared("CLIENT ID"), nil, true},
		{"CLIENT_GETNAME_InArgs", "CLIENT", declared("CLIENT"), []string{"GETNAME"}, true},
		{"PUBLISH", "PUBLISH", declared("PUBLISH"), []string{"ch", "m"}, true},
	}
	for _, tt := range tests {
		for _, f := range []retryFault{faultLoading, faultUnwritten} {
			t.Run(tt.name+"/"+f.name, func(t *testing.T) {
				p := &RetryPolicy{MaxAttempts: 5, MaxCommandRetryCategory: ServerAdmin}
				conn := 1
				if dispatchOf(tt.cmd, wordsOf(tt.args)).blocking {
					conn = 2 // blocking commands run on a dedicated connection
				}
				sent, _ := retryProbeConn(t, p, f, tt.command, doCmd(tt.cmd, tt.args...), conn)
				if want := 1 + b2i(tt.resent); sent != want {
					t.Errorf("%s %v sent %d times, want %d", tt.cmd.FullName(), tt.args, sent, want)
				}
			})
		}
	}
}

// A definitely unwritten frame (the client's write failed before the
// frame's last byte, or no connection could be had) resends whatever the
// command's category; a written frame, whose reply was lost or whose
// connection dropped before the server saw it, is possible execution and
// needs the category permission. The outcome is the transport's fact on
// *ConnError.
func TestRetryWriteEvidence(t *testing.T) {
	incr := NewCommand("INCR").WithRetryCategory(WriteAccumulating)
	const frameLen = len("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")
	tests := []struct {
		name      string
		offset    int // FailWrites offset on the command's write; -1: no write fault
		action    *respiretest.Action
		max       RetryCategory
		selected  RetryableErrors
		cmd       Command
		wantOK    bool // the call succeeds after a resend
		wantSent  int  // complete frames that reached the server
		wantExec  int
		unwritten bool // the failure's evidence, when the call fails
	}{
		{"NothingWritten", 0, nil, ReadOnly, 0, incr, true, 1, 1, true},
		{"MidFrame", 5, nil, ReadOnly, 0, incr, true, 1, 1, true},
		{"AllButLastByte", frameLen - 1, nil, ReadOnly, 0, incr, true, 1, 1, true},
		// Hold keeps the reply of the frame written whole from arriving
		// before the failed write closes the connection.
		{"WholeFrameWritten", frameLen, act(respiretest.Hold), ReadOnly, 0, incr, false, 1, 1, false},
		{"WholeFrameWritten/Permitted", frameLen, act(respiretest.Hold), WriteAccumulating, 0, incr, true, 2, 2, false},
		{"NothingWritten/NotSelected", 0, nil, ServerAdmin, RetryOnLoading, incr, false, 0, 0, true},
		{"NothingWritten/CommandNever", 0, nil, ServerAdmin, 0, NewCommand("INCR"), false, 0, 0, true},
		{"NothingWritten/MaxNever", 0, nil, Never, 0, incr, false, 0, 0, true},
		{"DropBeforeForward", -1, act(respiretest.DropBeforeForward), ReadOnly, 0, incr, false, 1, 0, false},
		{"DropBeforeForward/Permitted", -1, act(respiretest.DropBeforeForward), WriteAccumulating, 0, incr, true, 2, 1, false},
		{"LostReply", -1, act(respiretest.DropAfterForward), ReadOnly, 0, incr, false, 1, 1, false},
		{"LostReply/Permitted", -1, act(respiretest.DropAfterForward), WriteAccumulating, 0, incr, true, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// In a bubble, synctest.Wait settles a frame written whole just
			// before its connection failed: it may run after the resend.
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				opts := Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: tt.max, RetryableErrors: tt.selected, InitialBackoff: NoBackoff}}
				if tt.offset >= 0 {
					opts.Dialer = respiretest.FailWritesDialer(s.Dial, 1, 2, tt.offset)
				}
				c := retryMemClient(t, s, opts)
				wholeFrame := tt.offset == frameLen
				var h *respiretest.RuleHandle
				if tt.action != nil {
					rule := respiretest.Rule{Command: "INCR", Action: *tt.action}
					if wholeFrame {
						// Hold every INCR: the original's session and the
						// resend's may reach the rule in either order.
						rule.Times = respiretest.Always
					}
					h = s.MustAddRule(t, rule)
				}
				var r Reply
				var err error
				done := make(chan struct{})
				go func() {
					defer close(done)
					r, err = c.Do(bg, tt.cmd, "n")
				}()
				synctest.Wait()
				if wholeFrame {
					// Everything is settled: the failed write has closed
					// the first connection, so releasing cannot deliver
					// the original reply; a resend's reply now arrives.
					h.Release()
				}
				<-done
				synctest.Wait()
				if tt.wantOK {
					// The resend of a frame written whole may run before it.
					n, _ := r.Int64()
					if exact := tt.offset != frameLen; err != nil || n != int64(tt.wantExec) && (exact || n < 1 || n > int64(tt.wantExec)) {
						t.Errorf("INCR = %v, %v; want %d after a resend", r.Value(), err, tt.wantExec)
					}
				} else {
					var ce *ConnError
					if !errors.As(err, &ce) {
						t.Fatalf("err = %v, want a *ConnError", err)
					}
					if ce.Unwritten != tt.unwritten {
						t.Errorf("ConnError.Unwritten = %v, want %v (err %v)", ce.Unwritten, tt.unwritten, err)
					}
					retryWantAttempts(t, err, 1)
				}
				if got := s.Stats("INCR").Received; int(got) != tt.wantSent {
					t.Errorf("INCR reached the server %d times, want %d", got, tt.wantSent)
				}
				if got := s.Executed("INCR"); got != tt.wantExec {
					t.Errorf("INCR executed %d times, want %d", got, tt.wantExec)
				}
				if v, _ := s.Engine().Get("n"); v != strconv.Itoa(tt.wantExec) && !(tt.wantExec == 0 && v == "") {
					t.Errorf("counter = %q, want %d", v, tt.wantExec)
				}
			})
		})
	}
}

// A dial that fails before anything was sent is definitely unwritten: the
// command resends under any enabled category, and without ConnectionLoss
// the caller gets a *ConnError whose Unwritten fact is true.
func TestRetryRefusedDialIsUnwritten(t *testing.T) {
	for _, selected := range []bool{true, false} {
		t.Run("Selected="+strconv.FormatBool(selected), func(t *testing.T) {
			retrySynctest(t, func(t *testing.T) {
				s := respiretest.NewServer(t)
				p := &RetryPolicy{MaxCommandRetryCategory: Always, InitialBackoff: NoBackoff}
				if !selected {
					p.RetryableErrors = RetryOnLoading
				}
				c := retryMemClient(t, s, Options{RetryPolicy: p})
				// Kill the connection; its replacement dial and the next
				// one are refused.
				if err := s.RefuseDials(2); err != nil {
					t.Fatal(err)
				}
				if err := c.ep.Current().Close(); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				n, err := c.Incr(bg, "n")
				if selected {
					if err != nil || n != 1 {
						t.Fatalf("Incr = %d, %v; want 1 after resending the unwritten command", n, err)
					}
				} else {
					var ce *ConnError
					if !errors.As(err, &ce) || !ce.Unwritten || !errors.Is(err, respiretest.ErrDialRefused) {
						t.Fatalf("err = %v, want an unwritten *ConnError caused by the refused dial", err)
					}
				}
				if got, want := s.Executed("INCR"), b2i(selected); got != want {
					t.Errorf("INCR executed %d times, want %d", got, want)
				}
			})
		})
	}
}

// Failures that are never retried, whatever the policy: an authentication
// failure while reconnecting, a protocol error, a closed client, and the
// caller's cancellation while waiting for a reply.
func TestRetryNeverRetriedFailures(t *testing.T) {
	all := &RetryPolicy{MaxAttempts: 10, MaxCommandRetryCategory: ServerAdmin, InitialBackoff: NoBackoff}

	t.Run("AuthenticationWhileReconnecting", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			c := retryMemClient(t, s, Options{RetryPolicy: all})
			get := s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.DropAfterForward})
			hello := s.MustAddRule(t, respiretest.Rule{Command: "HELLO", Times: respiretest.Always,
				Action: respiretest.Inject("WRONGPASS invalid username-password pair or user is disabled.")})
			_, err := c.Get(bg, "k")
			var se *ServerError
			if !errors.As(err, &se) || !se.IsAuth() {
				t.Fatalf("err = %v, want the WRONGPASS handshake failure", err)
			}
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if get.Matched() != 1 {
				t.Errorf("GET sent %d times, want 1", get.Matched())
			}
			if hello.Matched() > 2 { // the replacement dial, and at most one dial by the resend
				t.Errorf("%d handshakes after WRONGPASS: the authentication failure was retried", hello.Matched())
			}
		})
	})

	t.Run("ProtocolError", func(t *testing.T) {
		s := respiretest.NewServer(t, respiretest.InMemory())
		s.Engine().Set("big", strings.Repeat("x", 100))
		c := retryMemClient(t, s, Options{RetryPolicy: all, MaxBulk: 10})
		_, err := c.Get(bg, "big")
		if !errors.Is(err, ErrProtocol) {
			t.Fatalf("err = %v, want ErrProtocol", err)
		}
		if n := s.Stats("GET").Received; n != 1 {
			t.Errorf("GET sent %d times, want 1", n)
		}
	})

	t.Run("ClosedClient", func(t *testing.T) {
		s := respiretest.NewServer(t, respiretest.InMemory())
		c := retryMemClient(t, s, Options{RetryPolicy: all})
		_ = c.Close()
		sessions := s.Sessions()
		_, err := c.Get(bg, "k")
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
		retryWantAttempts(t, err, 1)
		if s.Stats("GET").Received != 0 || s.Sessions() > sessions {
			t.Errorf("a closed client sent or dialed")
		}
	})

	t.Run("CancelledWhileWaitingForReply", func(t *testing.T) {
		retrySynctest(t, func(t *testing.T) {
			s := respiretest.NewServer(t)
			c := retryMemClient(t, s, Options{RetryPolicy: all})
			held := s.MustAddRule(t, respiretest.Rule{Command: "GET", Action: respiretest.Hold})
			ctx, cancel := context.WithCancel(bg)
			errc := getAsync(ctx, c, "k")
			<-held.Received()
			cancel()
			err := <-errc
			var ce *ContextError
			if !errors.As(err, &ce) || !ce.Sent || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want a sent *ContextError matching context.Canceled", err)
			}
			held.Release()
			synctest.Wait()
			if n := s.Stats("GET").Received; n != 1 {
				t.Errorf("GET sent %d times, want 1", n)
			}
		})
	})
}

// Arguments are encoded once, before the first send: a caller changing the
// memory behind its arguments while a retry is pending cannot change what
// the resend carries.
func TestRetryResendCarriesOriginalArguments(t *testing.T) {
	s := respiretest.NewServer(t, respiretest.InMemory())
	buf := []byte("original-value")
	value := unsafe.String(&buf[0], len(buf)) // aliases buf, as a caller's unsafe conversion would
	var sent [][]string
	s.MustAddRule(t, respiretest.Rule{Command: "SET", Times: respiretest.Always, Action: respiretest.Pass,
		OnReceive: func(args []string) { sent = append(sent, args) }})
	s.MustAddRule(t, respiretest.Rule{Command: "SET", Action: respiretest.Inject(respiretest.ErrLoading),
		OnReceive: func([]string) { copy(buf, "CHANGED-VALUE!") }})
	c := retryMemClient(t, s, Options{RetryPolicy: &RetryPolicy{MaxCommandRetryCategory: WriteLastWins, InitialBackoff: NoBackoff}})
	if _, err := c.Do(bg, NewCommand("SET").WithRetryCategory(WriteLastWins), "k", value); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if len(sent) != 2 {
		t.Fatalf("SET sent %d times, want 2", len(sent))
	}
	for i, args := range sent {
		if args[2] != "original-value" {
			t.Errorf("send %d carried %q, want the original %q", i+1, args[2], "original-value")
		}
	}
	if v, _ := s.Engine().Get("k"); v != "original-value" {
		t.Errorf("stored %q, want %q", v, "original-value")
	}
}

// retryPlanConn fails the client's write of the k-th INCR frame (counted
// across connections) before any byte when plan says so.
type retryPlanConn struct {
	net.Conn
	writes *atomic.Int64
	plan   []retryFault
}

func (c *retryPlanConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("INCR")) {
		if k := int(c.writes.Add(1)); k <= len(c.plan) && c.plan[k-1].unwritten {
			_ = c.Conn.Close()
			return 0, respiretest.ErrInjectedWrite
		}
	}
	return c.Conn.Write(p)
}

// The end-to-end property: for random policies, declared categories and
// sequences of injected faults, a raw INCR succeeds or fails, after as
// many attempts and with as many executions on the server, as a reference
// model written from the rules says.
func TestRetryPropertyExecutionsMatchModel(t *testing.T) {
	faults := []retryFault{faultUnwritten, faultDropBefore, faultLostReply, faultLoading, faultTryAgain,
		faultMasterDown, faultReadOnly, faultBusy, faultClusterDn}
	rapid.Check(t, func(rt *rapid.T) {
		var p *RetryPolicy
		if rapid.Float64Range(0, 1).Draw(rt, "usePolicy") < 0.9 {
			p = &RetryPolicy{
				MaxAttempts:             rapid.IntRange(0, 4).Draw(rt, "maxAttempts"),
				MaxCommandRetryCategory: RetryCategory(rapid.IntRange(0, int(ServerAdmin)).Draw(rt, "maxCategory")),
				InitialBackoff:          NoBackoff,
			}
			switch rapid.IntRange(0, 2).Draw(rt, "errorsKind") {
			case 0: // default
			case 1:
				p.RetryableErrors = RetryOnNone
			default:
				p.RetryableErrors = RetryableErrors(rapid.IntRange(1, int(DefaultRetryableErrors)).Draw(rt, "errors"))
			}
		}
		cat := RetryCategory(rapid.IntRange(0, int(ServerAdmin)+1).Draw(rt, "category")) // 0 undeclared, 8 undefined
		plan := rapid.SliceOfN(rapid.SampledFrom(faults), 0, 4).Draw(rt, "faults")

		// The model.
		maxAttempts, maxCat, errs := 1, Never, RetryableErrors(0)
		if p != nil {
			maxAttempts, maxCat, errs = cmp.Or(p.MaxAttempts, 3), cmp.Or(p.MaxCommandRetryCategory, ReadOnly), cmp.Or(p.RetryableErrors, DefaultRetryableErrors)
			if errs == RetryOnNone {
				errs = 0
			}
		}
		enabled := maxAttempts > 1 && maxCat != Never
		known := cat > Never && cat <= ServerAdmin
		attempts, execs, ok := 0, 0, false
		for {
			attempts++
			if attempts > len(plan) {
				execs++
				ok = true
				break
			}
			f := plan[attempts-1]
			execs += b2i(f.executed)
			retry := enabled && known && f.flag&errs != 0 && (f.unwritten || cat <= maxCat) && attempts < maxAttempts
			if !retry {
				break
			}
		}

		// The system.
		s, err := respiretest.StartServer(respiretest.InMemory())
		if err != nil {
			rt.Fatalf("StartServer: %v", err)
		}
		defer s.Close()
		nth := 0
		for _, f := range plan {
			if f.unwritten {
				continue
			}
			nth++
			if _, err := s.AddRule(respiretest.Rule{Command: "INCR", Nth: nth, Action: *f.action}); err != nil {
				rt.Fatalf("AddRule: %v", err)
			}
		}
		var writes atomic.Int64
		c, err := Connect(bg, Options{
			Endpoints:   []string{respiretest.MemoryAddr},
			RetryPolicy: p,
			Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := s.Dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &retryPlanConn{Conn: conn, writes: &writes, plan: plan}, nil
			},
		})
		if err != nil {
			rt.Fatalf("Connect: %v", err)
		}
		defer c.Close()
		cmd := NewCommand("INCR")
		if cat != 0 {
			cmd = cmd.WithRetryCategory(cat)
		}
		r, err := c.Do(bg, cmd, "n")

		if got := int(writes.Load()); got != attempts {
			rt.Errorf("INCR sent %d times, model %d", got, attempts)
		}
		if got := s.Executed("INCR"); got != execs {
			rt.Errorf("INCR executed %d times, model %d", got, execs)
		}
		if v, _ := s.Engine().Get("n"); v != strconv.Itoa(execs) && !(execs == 0 && v == "") {
			rt.Errorf("counter %q, model %d", v, execs)
		}
		if ok {
			if n, _ := r.Int64(); err != nil || n != int64(execs) {
				rt.Errorf("INCR = %v, %v; model success with %d", r.Value(), err, execs)
			}
			return
		}
		var re *RetryError
		switch {
		case err == nil:
			rt.Errorf("INCR succeeded; model failure after %d attempts", attempts)
		case attempts > 1 && (!errors.As(err, &re) || re.Attempts != attempts):
			rt.Errorf("err = %v; model failure after %d attempts", err, attempts)
		case attempts == 1 && errors.As(err, &re):
			rt.Errorf("err = %v is a *RetryError; model a single attempt", err)
		}
	})
}
