package respire

// SCAN iterators against real servers: every key at least once, the first
// page retried under the policy and continuations never, early break and
// bad input sending nothing.

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// msetKeys sets n keys prefix+i = i in batches of one MSET per 1,000.
func msetKeys(t *testing.T, c *Client, prefix string, n int) {
	t.Helper()
	ctx := testCtx(t)
	for start := 0; start < n; start += 1000 {
		var args []string
		for i := start; i < min(start+1000, n); i++ {
			args = append(args, prefix+strconv.Itoa(i), strconv.Itoa(i))
		}
		if _, err := c.Do(ctx, catalog.String.MSET(), anys(args)...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanReturnsEveryKeyAtLeastOnce(t *testing.T) {
	c := newClient(t, Options{})
	const n = 100_000
	prefix := key(t, "k") + ":"
	msetKeys(t, c, prefix, n)
	seen := make(map[string]int, n)
	returned := 0
	for k, err := range c.Scan(testCtx(t), ScanOptions{Match: escapeGlob(prefix) + "*", Count: 1000}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[k]++
		returned++
	}
	for i := range n {
		if seen[prefix+strconv.Itoa(i)] == 0 {
			t.Fatalf("SCAN never returned %s", prefix+strconv.Itoa(i))
		}
	}
	if len(seen) != n {
		t.Fatalf("SCAN returned %d distinct keys, want %d", len(seen), n)
	}
	t.Logf("%d keys returned, %d distinct (SCAN may repeat keys)", returned, len(seen))
}

// scanCounts runs a paged SCAN through a proxy in front of a private
// server (its commandstats belong to this test alone) with rule added,
// and returns the pages, the final error, the SCAN calls the server ran
// and the SCAN frames the proxy forwarded.
func scanCounts(t *testing.T, rule respiretest.Rule) (pages int, keys []string, err error, ran, forwarded int) {
	t.Helper()
	addr := privateServer(t)
	proxy := realProxy(t, addr)
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}, RetryPolicy: &RetryPolicy{}})
	msetKeys(t, c, "k", 100)
	proxy.MustAddRule(t, rule)
	before := commandCalls(t, addr, "scan")
	for page, perr := range c.ScanPages(testCtx(t), ScanOptions{Count: 10}) {
		if perr != nil {
			err = perr
			break
		}
		pages++
		keys = append(keys, page.Items...)
	}
	return pages, keys, err, commandCalls(t, addr, "scan") - before, proxy.Forwarded("SCAN")
}

func TestScanFirstPageLostReplyIsRetried(t *testing.T) {
	pages, keys, err, ran, forwarded := scanCounts(t, respiretest.Rule{Command: "SCAN", Nth: 1, Action: respiretest.DropAfterForward})
	if err != nil {
		t.Fatalf("SCAN with the first reply lost: %v, want the first page resent", err)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) != 100 {
		t.Fatalf("SCAN returned %d distinct keys, want 100", len(keys))
	}
	if ran != pages+1 || forwarded != pages+1 {
		t.Fatalf("server ran SCAN %d times, proxy forwarded %d, for %d pages: want pages+1 (one resend of the first)", ran, forwarded, pages)
	}
}

func TestScanContinuationLostReplyIsNotRetried(t *testing.T) {
	pages, _, err, ran, forwarded := scanCounts(t, respiretest.Rule{Command: "SCAN", Nth: 2, Action: respiretest.DropAfterForward})
	if !errors.Is(err, ErrConnectionLost) || !MayHaveExecuted(err) {
		t.Fatalf("SCAN with the second reply lost: %v, want a connection loss that may have run", err)
	}
	var re *RetryError
	if errors.As(err, &re) {
		t.Fatalf("the continuation was retried: %v", err)
	}
	if pages != 1 || ran != 2 || forwarded != 2 {
		t.Fatalf("pages %d, server ran SCAN %d times, proxy forwarded %d: want 1 page and 2 SCANs (no resend)", pages, ran, forwarded)
	}
}

func TestHScanSScanZScanReturnEveryElement(t *testing.T) {
	c := newClient(t, Options{})
	ctx := testCtx(t)
	h, s, z := key(t, "h"), key(t, "s"), key(t, "z")
	const n = 500
	var pairs, members []string
	var zs []Z
	for i := range n {
		v := strconv.Itoa(i)
		pairs = append(pairs, "f"+v, "v"+v)
		members = append(members, "m"+v)
		zs = append(zs, Z{Member: "m" + v, Score: float64(i) + 0.5})
	}
	if _, err := c.HSet(ctx, h, pairs...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, catalog.Set.SADD(), anys(append([]string{s}, members...))...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ZAdd(ctx, z, ZAddOptions{}, zs...); err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for fv, err := range c.HScan(ctx, h, ScanOptions{Count: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		fields[fv.Field] = fv.Value
	}
	set := map[string]bool{}
	for m, err := range c.SScan(ctx, s, ScanOptions{Count: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		set[m] = true
	}
	scores := map[string]float64{}
	for m, err := range c.ZScan(ctx, z, ScanOptions{Count: 50, Match: "m1*"}) {
		if err != nil {
			t.Fatal(err)
		}
		scores[m.Member] = m.Score
	}
	for i := range n {
		v := strconv.Itoa(i)
		if fields["f"+v] != "v"+v {
			t.Fatalf("HSCAN: field f%s = %q", v, fields["f"+v])
		}
		if !set["m"+v] {
			t.Fatalf("SSCAN never returned m%s", v)
		}
		if got, ok := scores["m"+v]; (v[0] == '1') != ok || (ok && got != float64(i)+0.5) {
			t.Fatalf("ZSCAN MATCH m1*: m%s = %v (present %v)", v, got, ok)
		}
	}
}

func TestScanBreakSendsNothingMore(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}})
	ctx := testCtx(t)
	s := key(t, "s")
	var members []string
	for i := range 1000 {
		members = append(members, strconv.Itoa(i))
	}
	if _, err := c.Do(ctx, catalog.Set.SADD(), anys(append([]string{s}, members...))...); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.SScan(ctx, s, ScanOptions{Count: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if got := proxy.Forwarded("SSCAN"); got != 1 {
		t.Fatalf("SSCAN forwarded %d times after a break on the first element, want 1", got)
	}
}

func TestScanBadInputSendsNothing(t *testing.T) {
	proxy := realProxy(t, standaloneAddr(t))
	c := newClient(t, Options{Endpoints: []string{proxy.Addr()}})
	ctx := testCtx(t)
	before := totalReceived(proxy)
	cases := map[string]func() error{
		"negative count": func() error { return firstErr(c.Scan(ctx, ScanOptions{Count: -1})) },
		"HSCAN TYPE":     func() error { return firstErr(c.HScan(ctx, "h", ScanOptions{Type: "string"})) },
		"SSCAN no key":   func() error { return firstErr(c.SScan(ctx, "", ScanOptions{})) },
		"ZSCAN no key":   func() error { return firstErr(c.ZScan(ctx, "", ScanOptions{})) },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if got := totalReceived(proxy); got != before {
		t.Fatalf("the proxy received %d frames, want 0", got-before)
	}
}

// firstErr returns the first error an iteration yields.
func firstErr[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestScanMalformedCursorEndsTheIteration: a SCAN-family reply whose
// cursor is not an unsigned 64-bit decimal (null, empty, signed, leading
// zeros, non-numeric, over 2^64-1) ends the iteration with
// ErrUnexpectedReply and sends nothing more. It used to be sent back as
// the next cursor ("00" restarted the iteration from the start, for
// ever; "" was read as a first page and resent on failure), or, null,
// ended the iteration with ErrNil as if a key were missing. The
// largest cursor, 18446744073709551615, is a valid one.
func TestScanMalformedCursorEndsTheIteration(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for name, cursor := range map[string]resp.Value{
			"null":        {Type: resp.Null},
			"empty":       sb(""),
			"signed":      sb("-1"),
			"plus":        sb("+5"),
			"zeros":       sb("00"),
			"leading0":    sb("07"),
			"text":        sb("abc"),
			"space":       sb("5 "),
			"over uint64": sb("18446744073709551616"),
			"array":       sa(sb("5")),
		} {
			t.Run(strconv.Itoa(proto)+"/"+name, func(t *testing.T) {
				c, srv := hostileClient(t, proto)
				srv.load([]resp.Value{sa(cursor, sa(sb("k"))), sa(sb("0"), sa())})
				pages := 0
				var err error
				for _, perr := range c.ScanPages(testCtx(t), ScanOptions{}) {
					if perr != nil {
						err = perr
						break
					}
					pages++
				}
				if !errors.Is(err, ErrUnexpectedReply) {
					t.Errorf("cursor %v: %v after %d pages, want ErrUnexpectedReply", cursor, err, pages)
				}
				if sent, names := srv.load(nil); sent != 1 {
					t.Errorf("cursor %v: %d commands sent (%v), want the first page only", cursor, sent, names)
				}
			})
		}
		t.Run(strconv.Itoa(proto)+"/max", func(t *testing.T) {
			c, srv := hostileClient(t, proto)
			srv.load([]resp.Value{sa(sb("18446744073709551615"), sa(sb("a"))), sa(sb("0"), sa(sb("b")))})
			var got []string
			for k, err := range c.Scan(testCtx(t), ScanOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, k)
			}
			if !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("keys = %v, want [a b]", got)
			}
		})
	}
}

// TestScanNullElementEndsTheIteration: a SCAN-family page whose elements
// are null, or hold a null, ends the iteration with ErrUnexpectedReply
// and sends nothing more; Batch.Scan's page fails the same way. No key,
// field, value or member is ever null, and "" is a real one: the null
// used to be yielded as "" (a key or member that does not exist), and a
// null page read as an empty one.
func TestScanNullElementEndsTheIteration(t *testing.T) {
	null := resp.Value{Type: resp.Null}
	scans := map[string]func(c *Client) error{
		"SCAN":  func(c *Client) error { return firstErr(c.Scan(testCtx(t), ScanOptions{})) },
		"HSCAN": func(c *Client) error { return firstErr(c.HScan(testCtx(t), "h", ScanOptions{})) },
		"SSCAN": func(c *Client) error { return firstErr(c.SScan(testCtx(t), "s", ScanOptions{})) },
		"ZSCAN": func(c *Client) error { return firstErr(c.ZScan(testCtx(t), "z", ScanOptions{})) },
		"Batch.Scan": func(c *Client) error {
			b := c.NewBatch()
			f := b.Scan(ScanPage[string]{}, ScanOptions{})
			if err := b.Execute(testCtx(t)); err != nil {
				return err
			}
			_, err := f.Result()
			return err
		},
	}
	for _, proto := range []int{2, 3} {
		for name, items := range map[string]resp.Value{
			"null page":    null,
			"null element": sa(sb("a"), null),
			"null first":   sa(null, sb("1")),
		} {
			for scan, run := range scans {
				t.Run(strconv.Itoa(proto)+"/"+name+"/"+scan, func(t *testing.T) {
					c, srv := hostileClient(t, proto)
					srv.load([]resp.Value{sa(sb("0"), items), sa(sb("0"), sa())})
					if err := run(c); !errors.Is(err, ErrUnexpectedReply) {
						t.Errorf("elements %v: %v, want ErrUnexpectedReply", items, err)
					}
					if sent, names := srv.load(nil); sent != 1 {
						t.Errorf("%d commands sent (%v), want the first page only", sent, names)
					}
				})
			}
		}
	}
}
