package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/testenv"
)

// TestFewCallersUseSoloConnections proves, against the real server, what
// Options.SoloConnections changes for eight callers sharing a client.
// With the default, their commands spread over more than the shared
// connection and at most 1+defaultSoloConnections of them (CLIENT LIST, by
// the client's name, is the witness); with NoSoloConnections the shared
// connection carries them all. Either way every caller gets its own
// replies (the value it set, an ECHO whose context ends at a random point
// its own value or its deadline, and INCRs of its own counter that count
// 1, 2, 3...), and the server ran each INCR exactly once (INFO
// commandstats).
func TestFewCallersUseSoloConnections(t *testing.T) {
	countsCommands(t)
	const callers, each = 8, 100
	for _, tc := range []struct {
		name string
		solo int
	}{{"default", 0}, {"none", NoSoloConnections}} {
		t.Run(tc.name, func(t *testing.T) {
			addr := standaloneAddr(t)
			p := keyPrefix(t)
			flush(t, addr) // a counter left by an earlier run (-count)
			t.Cleanup(func() { flush(t, addr) })
			name := "solo-" + strings.ReplaceAll(p, ":", "-")
			c := newClient(t, Options{ClientName: name, SoloConnections: tc.solo})
			ctx := testCtx(t)
			incrs := commandCalls(t, addr, "incr")
			ran, conns := 0, 0
			var expired atomic.Int64
			// Rounds until more than one connection served them (the
			// default; the first round nearly always does), bounded by
			// the test's deadline; one round without solo connections.
			for round := 0; round == 0 || (tc.solo == 0 && conns < 2); round++ {
				if ctx.Err() != nil {
					t.Fatalf("after %d rounds the callers used %d connection(s)", round, conns)
				}
				var wg sync.WaitGroup
				for g := range callers {
					wg.Go(func() {
						k, ctr := p+strconv.Itoa(g), p+strconv.Itoa(g)+":n"
						ownCalls(t, ctx, c, g, k, ctr, strconv.Itoa(round), round*each, each, &expired)
					})
				}
				wg.Wait()
				if t.Failed() {
					return
				}
				ran += callers * each
				conns = namedConnections(t, addr, name)
			}
			t.Logf("%d calls of each command on %d connection(s); %d ECHOs passed their deadline", ran, conns, expired.Load())
			if got := commandCalls(t, addr, "incr") - incrs; got != ran {
				t.Errorf("the server ran INCR %d times for %d calls", got, ran)
			}
			switch {
			case tc.solo == NoSoloConnections && conns != 1:
				t.Errorf("NoSoloConnections: %d connections served the callers, want the shared one", conns)
			case tc.solo == 0 && conns > 1+defaultSoloConnections:
				t.Errorf("%d connections served the callers, want at most %d", conns, 1+defaultSoloConnections)
			}
		})
	}
}

// ownCalls makes one caller's calls on c, each times: a SET of k and the
// GET that must return it, an ECHO whose context ends at a random point
// (before, during or after its exchange), which must give its own value
// or its deadline and leave no reply behind for the next call, and an
// INCR of ctr, which must reply from+1, from+2 and so on. It reports the
// first wrong reply on t and stops there; expired counts the ECHOs that
// passed their deadline.
func ownCalls(t *testing.T, ctx context.Context, c *Client, g int, k, ctr, tag string, from, each int, expired *atomic.Int64) {
	for i := range each {
		v := tag + ":" + strconv.Itoa(i)
		if err := c.Set(ctx, k, v); err != nil {
			t.Errorf("caller %d: SET = %v", g, err)
			return
		}
		if got, err := c.Get(ctx, k); got != v || err != nil {
			t.Errorf("caller %d: GET = %q, %v; want its own %q", g, got, err, v)
			return
		}
		ectx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(60))*time.Microsecond)
		got, err := c.Echo(ectx, v)
		cancel()
		if err == nil && got != v || err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("caller %d: ECHO = %q, %v; want its own %q or its deadline", g, got, err, v)
			return
		} else if err != nil {
			expired.Add(1)
		}
		if n, err := c.Incr(ctx, ctr); n != int64(from+i+1) || err != nil {
			t.Errorf("caller %d: INCR = %d, %v; want %d", g, n, err, from+i+1)
			return
		}
	}
}

// TestCallersCrossingTheCrowdGetOwnReplies: waves of callers of changing
// size (2, 40, 6, 64, 12 and 3 goroutines) share one client, so that its
// commands move from the solo connections (few callers) to the shared
// connections (many, more than the client's crowd allows) and back,
// standalone and on the Cluster, whose nodes' connections count towards
// one crowd. Every caller gets its own replies (ownCalls; a caller's
// counter keeps counting across the waves), and the standalone server
// ran each INCR once (INFO commandstats).
func TestCallersCrossingTheCrowdGetOwnReplies(t *testing.T) {
	waves := []int{2, 40, 6, 64, 12, 3}
	const each = 60
	run := func(t *testing.T, c *Client) (incrs int) {
		ctx := testCtx(t)
		p := keyPrefix(t) + strconv.FormatInt(time.Now().UnixNano(), 36) + ":" // counters start at 0 under -count
		counts := make([]int, slices.Max(waves))
		t.Cleanup(func() {
			for g := range counts {
				_, _ = c.Del(context.Background(), p+strconv.Itoa(g), p+strconv.Itoa(g)+":n")
			}
		})
		var expired atomic.Int64
		for w, n := range waves {
			var wg sync.WaitGroup
			for g := range n {
				from := counts[g]
				wg.Go(func() {
					ownCalls(t, ctx, c, g, p+strconv.Itoa(g), p+strconv.Itoa(g)+":n", strconv.Itoa(w), from, each, &expired)
				})
				counts[g] += each
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			incrs += n * each
		}
		t.Logf("%d calls of each command in %d waves; %d ECHOs passed their deadline", incrs, len(waves), expired.Load())
		return incrs
	}
	t.Run("Standalone", func(t *testing.T) {
		countsCommands(t)
		addr := standaloneAddr(t)
		before := commandCalls(t, addr, "incr")
		name := "crowd-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		n := run(t, newClient(t, Options{ClientName: name}))
		if got := commandCalls(t, addr, "incr") - before; got != n {
			t.Errorf("the server ran INCR %d times for %d calls", got, n)
		}
		t.Logf("%d connections served the waves", namedConnections(t, addr, name))
	})
	t.Run("Cluster", func(t *testing.T) { run(t, clusterClient(t, Options{})) })
}

// namedConnections counts the server's connections named name (CLIENT
// LIST).
func namedConnections(t *testing.T, addr, name string) int {
	t.Helper()
	list, err := admin(t, addr, "CLIENT", "LIST").String()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	n := 0
	for line := range strings.Lines(list) {
		for f := range strings.FieldsSeq(line) {
			if f == "name="+name {
				n++
			}
		}
	}
	return n
}

// TestLaneThatCannotConnectHandsItsCommandToTheSharedConnection: a real
// server at its maxclients limit refuses every new connection ("ERR max
// number of clients reached") while the client's shared connection is
// open. A 16 KiB SET, which takes a batch connection, finds that lane's
// dial refused; the command, not written, goes on the shared connection
// instead of failing, and the server runs it once.
func TestLaneThatCannotConnectHandsItsCommandToTheSharedConnection(t *testing.T) {
	full := testenv.StartRedis(t, testenv.RedisServerPath(t), 0)
	ctx := testCtx(t)
	c := newClient(t, Options{Endpoints: []string{full.Addr}})
	if _, err := c.Do(ctx, catalog.Server.CONFIG_SET(), "maxclients", 1); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("b", 16<<10)
	if err := c.Set(ctx, "big", value); err != nil {
		t.Fatalf("SET of 16 KiB with no connection to spare: %v, want it run on the shared connection", err)
	}
	if got, err := c.Get(ctx, "big"); err != nil || got != value {
		t.Fatalf("GET big: %d bytes, %v; want the 16 KiB value", len(got), err)
	}
	if _, err := c.Do(ctx, catalog.Server.CONFIG_SET(), "maxclients", 10000); err != nil {
		t.Fatal(err)
	}
	if n := commandCalls(t, full.Addr, "set"); n != 1 {
		t.Errorf("the server ran SET %d times, want 1", n)
	}
}
