package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
)

// splitDialer sends the first dial (the connection under test) to dead
// and every later one (the health probes, replacements) to live: the
// server answers on new connections while the first one has fallen
// silent, as when a NAT or a proxy dropped that connection alone without
// a reset.
type splitDialer struct {
	dead, live *fakeServer
	dials      atomic.Int64
}

func (d *splitDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.dials.Add(1) == 1 {
		return d.dead.dial(ctx, network, addr)
	}
	return d.live.dial(ctx, network, addr)
}

// cause returns the error the connection was shut down with.
func (c *Conn) causeOf() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// TestIdlePingUnansweredWhileProbeAnsweredRetires proves, in virtual time,
// that a connection whose own idle PING goes unanswered for HealthTimeout
// while the server answers a probe on a new connection is retired: the
// PING was first in line, so a live connection would have answered it at
// once. (A connection owing a caller's slow reply is kept instead: see
// TestHealthKeepsSlowServer.) This is what finds a pooled dedicated
// connection that died alone before it is lent.
func TestIdlePingUnansweredWhileProbeAnsweredRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle, ht = time.Second, time.Second
		d := &splitDialer{dead: newFakeServer(t, silentAfterHandshake), live: newFakeServer(t, defaultReply)}
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: d.dial, IdlePing: idle, HealthTimeout: ht}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		start := time.Now()
		select {
		case <-c.Dead():
		case <-time.After(time.Minute):
			t.Fatal("the connection whose PING went unanswered is still alive a minute later, while the server answers probes")
		}
		// The PING at 1 s, silence counted from 1.25 s, a probe from
		// 2.25 s answered at once, and the verdict a tick later, 2.5 s.
		if got, hi := time.Since(start), idle+ht+ht/2; got > hi || got < idle+ht {
			t.Errorf("retired after %v, want between %v and %v", got, idle+ht, hi)
		}
		if cause := c.causeOf(); !errors.Is(cause, ErrHealthTimeout) {
			t.Errorf("cause %v, want ErrHealthTimeout", cause)
		}
	})
}

// TestSilenceLimitRetiresDespiteAnsweredProbes proves, in virtual time,
// that Config.SilenceLimit retires a connection that owes a caller's
// reply and has read nothing for that long although every probe was
// answered: the frame fails as Lost, PossiblyExecuted, caused by
// ErrHealthTimeout, within one sampling period of the limit.
func TestSilenceLimitRetiresDespiteAnsweredProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht, limit = time.Second, 10 * time.Second
		d := &splitDialer{dead: newFakeServer(t, silentAfterHandshake), live: newFakeServer(t, defaultReply)}
		_, f, start := dialAndGet(t, Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: ht, SilenceLimit: limit})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := f.Wait(ctx, time.Time{}); err != nil {
			t.Fatalf("the GET on the silent connection is still unanswered a minute later (probes answered): %v", err)
		}
		if got, hi := time.Since(start), limit+ht/4; got < limit || got > hi {
			t.Errorf("retired after %v, want between %v and %v", got, limit, hi)
		}
		if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != PossiblyExecuted || !errors.Is(f.Err, ErrHealthTimeout) {
			t.Fatalf("got %v, want *ConnError Lost PossiblyExecuted caused by ErrHealthTimeout", f.Err)
		}
		f.Release()
		if n := d.dials.Load(); n < 5 {
			t.Errorf("%d dials, want the connection and several answered probes", n)
		}
	})
}

// blockedOnly answers everything at once except BLPOP, which blocks
// forever (a live server with nothing to pop).
func blockedOnly(args []string) []byte {
	if args[0] == "BLPOP" {
		return nil
	}
	return defaultReply(args)
}

// TestAnsweredIdlePingThenBlockedCommandIsKept proves that the rule of
// the unanswered idle PING does not take a blocking command for one: a
// connection whose PING was answered, then lent to a BLPOP that the live
// server holds, stays alive however many probes its silence causes.
func TestAnsweredIdlePingThenBlockedCommandIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle, ht = time.Second, time.Second
		fp := new(FramePool)
		s := newFakeServer(t, blockedOnly)
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: s.dial, IdlePing: idle, HealthTimeout: ht}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		time.Sleep(idle + idle/2) // an idle PING, answered
		synctest.Wait()
		c.HoldIdlePing(true) // lent, as Client.Dedicated and blocking calls do
		f := frameIn(fp, WantBytes, "BLPOP", "k", "0")
		submit(t, c, f)
		time.Sleep(30 * ht)
		synctest.Wait()
		if !c.Alive() {
			t.Fatalf("a connection blocked on a live server was retired: %v", c.causeOf())
		}
		s.mu.Lock()
		dials := s.dials
		s.mu.Unlock()
		if dials < 5 {
			t.Errorf("%d dials, want the probes of a silent connection", dials)
		}
		_ = c.Close()
		if f.Err == nil || f.Err.Reason != Closed {
			t.Errorf("BLPOP after Close: %v, want Closed", f.Err)
		}
		f.Release()
	})
}

// dialAndGet dials cfg (the connection closes when the test ends) and
// submits GET k between two samples of its health monitor. It returns the
// connection, the frame and when it was submitted.
func dialAndGet(t *testing.T, cfg Config) (*Conn, *Frame, time.Time) {
	t.Helper()
	return dialAndSubmit(t, cfg, frameIn(new(FramePool), WantBytes, "GET", "k"))
}

// dialAndSubmit is dialAndGet with the frame f.
func dialAndSubmit(t *testing.T, cfg Config, f *Frame) (*Conn, *Frame, time.Time) {
	t.Helper()
	c, err := Dial(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	time.Sleep(10 * time.Millisecond) // submit between two samples of the monitor
	start := time.Now()
	submit(t, c, f)
	return c, f, start
}

// TestProbeSharedByConnectionsToOneAddress proves, in virtual time, that
// connections sharing a Config.Probes answer each other's probes: a probe
// answered after a connection fell silent stands for that connection's
// own, so two connections blocked on a live server (as dedicated
// connections in BLPOP key 0 are) probe it about as often as one would,
// instead of once per HealthTimeout each.
func TestProbeSharedByConnectionsToOneAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht = time.Second
		fp := new(FramePool)
		s := newFakeServer(t, blockedOnly)
		cfg := Config{Addr: "fake:6379", Dial: s.dial, HealthTimeout: ht, Probes: NewProbeShare()}
		var conns []*Conn
		var frames []*Frame
		for range 2 {
			c, err := Dial(context.Background(), cfg, nil)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			f := frameIn(fp, WantBytes, "BLPOP", "k", "0")
			submit(t, c, f)
			conns, frames = append(conns, c), append(frames, f)
			time.Sleep(ht / 2) // the second falls silent half a HealthTimeout later
		}
		s.mu.Lock()
		before := s.dials
		s.mu.Unlock()
		const periods = 20
		time.Sleep(periods * ht)
		synctest.Wait()
		s.mu.Lock()
		probes := s.dials - before
		s.mu.Unlock()
		// One connection alone probes about once per HealthTimeout plus
		// a sampling period: at most 20 times in 20 s; two unshared, up
		// to 40.
		if probes > periods {
			t.Errorf("two silent connections probed %d times in %d HealthTimeouts, want at most %d: the probes are not shared", probes, periods, periods)
		}
		if probes == 0 {
			t.Error("no probe at all")
		}
		for i, c := range conns {
			if !c.Alive() {
				t.Errorf("a connection blocked on a live server was retired: %v", c.causeOf())
			}
			_ = c.Close()
			frames[i].Release()
		}
	})
}

// TestIdlePingNeverQueuedBehindAFrame proves that the idle PING is queued
// only first in line: when a frame arrived between the monitor's sample
// (nothing owed) and the PING's submission, as a BLPOP on a connection
// just taken from a pool may, the PING is not sent, so that an answered
// probe never takes a PING waiting behind a blocked command for a lost
// connection.
func TestIdlePingNeverQueuedBehindAFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		s := newFakeServer(t, blockedOnly)
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: s.dial}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		f := frameIn(fp, WantBytes, "BLPOP", "k", "0")
		submit(t, c, f)
		ping := frameIn(fp, WantNone, "PING")
		if c.submitInternal(ping) {
			t.Error("the idle PING was queued behind a BLPOP")
		}
		_ = c.Close()
		f.Release()
		ping.Release()
	})
}

// stalledUntil answers like defaultReply, except that a PING received
// before end is answered at end plus late: a server that stalled (a slow
// script, a large DEL) and then answered every connection at once, with
// this connection's reply read a moment after another's.
func stalledUntil(end time.Time, late time.Duration) func([]string) []byte {
	return func(args []string) []byte {
		if strings.EqualFold(args[0], "PING") && time.Now().Before(end) {
			time.Sleep(time.Until(end) + late)
		}
		return defaultReply(args)
	}
}

// TestIdlePingAnsweredJustAfterProbeIsKept proves, in virtual time, that
// the rule of the unanswered idle PING leaves a live connection alone when
// a stalled server answers the probe a moment before the connection's own
// PING: the two replies left the server together, and the connection
// that reads its own a millisecond later is not lost.
func TestIdlePingAnsweredJustAfterProbeIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle, ht = time.Second, time.Second
		// The PING goes out at 1 s, the probe at 2.25 s; the stall ends
		// at 3 s, before the probe's own timeout.
		end := time.Now().Add(3 * time.Second)
		d := &splitDialer{dead: newFakeServer(t, stalledUntil(end, time.Millisecond)), live: newFakeServer(t, stalledUntil(end, 0))}
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: d.dial, IdlePing: idle, HealthTimeout: ht}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		select {
		case <-c.Dead():
			t.Fatalf("the connection was retired (%v) although its PING was answered 1 ms after the probe", c.causeOf())
		case <-time.After(10 * time.Second):
		}
		if n := d.dials.Load(); n < 2 {
			t.Fatalf("%d dials, want the connection and a probe (the stall did not cause one)", n)
		}
	})
}

// busyProbes answers like silentAfterHandshake on the first connection
// (it runs a long script for its caller) and with Redis's BUSY error on
// every other: the server is alive but runs a script, so every connection
// waits, the silent one included.
func busyProbes(args []string) []byte {
	if strings.EqualFold(args[0], "PING") {
		return resp.AppendError(nil, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
	}
	return defaultReply(args)
}

// TestSilenceLimitSparesAConnectionWaitingOnABusyServer proves, in
// virtual time, that a probe answered with BUSY is no evidence that the
// connection alone is lost: a connection owing the reply of a script that
// runs three times Config.SilenceLimit (the server answers everyone else
// with BUSY meanwhile) is kept, and its reply is delivered when the
// script ends.
func TestSilenceLimitSparesAConnectionWaitingOnABusyServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht, limit = time.Second, 10 * time.Second
		d := &splitDialer{dead: newFakeServer(t, delayed(3*limit, nil)), live: newFakeServer(t, busyProbes)}
		c, f, _ := dialAndGet(t, Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: ht, SilenceLimit: limit})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := f.Wait(ctx, time.Time{}); err != nil || f.Err != nil {
			t.Fatalf("the reply after the script: %v, %v; want it delivered, the connection kept (%v)", err, f.Err, c.causeOf())
		}
		f.Release()
		if n := d.dials.Load(); n < 5 {
			t.Fatalf("%d dials, want the connection and several probes answered with BUSY", n)
		}
	})
}

// trickleConn is a server's side of a link that carries its first free
// bytes at once, then n bytes every period towards the server: a large
// command crosses it slowly.
type trickleConn struct {
	net.Conn
	free, n int
	period  time.Duration
}

func (tc *trickleConn) Read(p []byte) (int, error) {
	if tc.free > 0 {
		n, err := tc.Conn.Read(p[:min(len(p), tc.free)])
		tc.free -= n
		return n, err
	}
	time.Sleep(tc.period)
	return tc.Conn.Read(p[:min(len(p), tc.n)])
}

// trickleFirst returns a Config.Dial hook whose first connection (the one
// under test) reaches s over a trickleConn carrying 1 KiB at once (the
// handshake), then n bytes every period, and every later one (probes)
// directly.
func trickleFirst(s *fakeServer, n int, period time.Duration) func(context.Context, string, string) (net.Conn, error) {
	var dials atomic.Int64
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) > 1 {
			return s.dial(ctx, network, addr)
		}
		return s.dialVia(func(srv net.Conn) net.Conn {
			return &trickleConn{Conn: srv, free: 1 << 10, n: n, period: period}
		}), nil
	}
}

// dialAndSetLarge dials a connection to s through trickleFirst(s, 64 KiB,
// period), with HealthTimeout ht and SilenceLimit limit, and submits a
// 4 MiB SET between two samples of its health monitor. It returns the
// connection (closed when the test ends), the frame and when it was
// submitted.
func dialAndSetLarge(t *testing.T, s *fakeServer, period, ht, limit time.Duration) (*Conn, *Frame, time.Time) {
	t.Helper()
	cfg := Config{Addr: "fake:6379", Dial: trickleFirst(s, 64<<10, period), HealthTimeout: ht, SilenceLimit: limit}
	return dialAndSubmit(t, cfg, frameIn(new(FramePool), WantNone, "SET", "k", strings.Repeat("v", 4<<20)))
}

// TestSilenceLimitSparesALargeCommandStillBeingSent proves, in virtual
// time, that a connection sending a command too large to cross the link
// within Config.SilenceLimit is not retired while the server keeps
// receiving it: the server cannot answer a command it has not received
// whole, and the bytes it takes meanwhile are the connection's sign of
// life. The 4 MiB SET crosses at 64 KiB a second (a minute), six times the
// limit, and its OK is delivered.
func TestSilenceLimitSparesALargeCommandStillBeingSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht, limit = time.Second, 10 * time.Second
		c, f, start := dialAndSetLarge(t, newFakeServer(t, defaultReply), time.Second, ht, limit)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := f.Wait(ctx, time.Time{}); err != nil || f.Err != nil {
			t.Fatalf("the SET still being received: %v, %v; want its OK, the connection kept (%v)", err, f.Err, c.causeOf())
		}
		if took := time.Since(start); took < 6*limit {
			t.Errorf("the SET crossed in %v, want the slow link to take over %v", took, 6*limit)
		}
		f.Release()
	})
}

// TestSilenceLimitRetiresAConnectionWhoseWriteIsStuck proves, in virtual
// time, that a long write is a sign of life only while the server takes
// it: a connection whose large command stopped crossing (the server, or
// the path to it, takes nothing more) is retired at Config.SilenceLimit
// although the server answers every probe.
func TestSilenceLimitRetiresAConnectionWhoseWriteIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht, limit = time.Second, 10 * time.Second
		_, f, start := dialAndSetLarge(t, newFakeServer(t, defaultReply), time.Hour, ht, limit)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := f.Wait(ctx, time.Time{}); err != nil {
			t.Fatalf("the SET stuck on its way is still pending a minute later (probes answered): %v", err)
		}
		if got, hi := time.Since(start), limit+ht/4; got < limit || got > hi {
			t.Errorf("retired after %v, want between %v and %v", got, limit, hi)
		}
		if f.Err == nil || f.Err.Reason != Lost || !errors.Is(f.Err, ErrHealthTimeout) {
			t.Fatalf("got %v, want *ConnError Lost caused by ErrHealthTimeout", f.Err)
		}
		f.Release()
	})
}

// dripConn is a server's side of a link that carries n bytes every period
// towards the client: a large reply crosses it slowly.
type dripConn struct {
	net.Conn
	n      int
	period time.Duration
}

func (dc *dripConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		time.Sleep(dc.period)
		n, err := dc.Conn.Write(p[done:min(len(p), done+dc.n)])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// TestSilenceLimitSparesALargeReplyStillArriving proves, in virtual time,
// that a reply too large to cross the link within Config.SilenceLimit
// keeps its connection alive while it arrives: every read that returns
// part of it counts, not only a whole reply. The 4 MiB reply crosses at
// 64 KiB a second (a minute), six times the limit, and is delivered whole.
func TestSilenceLimitSparesALargeReplyStillArriving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht, limit = time.Second, 10 * time.Second
		big := strings.Repeat("v", 4<<20)
		s := newFakeServer(t, func(args []string) []byte {
			if strings.EqualFold(args[0], "GET") {
				return resp.AppendBulkString(nil, big)
			}
			return defaultReply(args)
		})
		var dials atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				return s.dial(ctx, network, addr)
			}
			var handshake atomic.Bool // the handshake's reply crosses at once
			return s.dialVia(func(srv net.Conn) net.Conn {
				return &handshakeThen{Conn: srv, first: &handshake, then: &dripConn{Conn: srv, n: 64 << 10, period: time.Second}}
			}), nil
		}
		c, f, start := dialAndGet(t, Config{Addr: "fake:6379", Dial: dial, HealthTimeout: ht, SilenceLimit: limit})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := f.Wait(ctx, time.Time{}); err != nil || f.Err != nil {
			t.Fatalf("the GET whose reply is still arriving: %v, %v; want its reply, the connection kept (%v)", err, f.Err, c.causeOf())
		}
		if len(f.Bytes) != len(big) {
			t.Errorf("reply of %d bytes, want %d", len(f.Bytes), len(big))
		}
		if took := time.Since(start); took < 6*limit {
			t.Errorf("the reply crossed in %v, want the slow link to take over %v", took, 6*limit)
		}
		f.Release()
	})
}

// handshakeThen writes its first reply directly and the rest through
// then.
type handshakeThen struct {
	net.Conn
	first *atomic.Bool // set once the first reply was written
	then  net.Conn
}

func (h *handshakeThen) Write(p []byte) (int, error) {
	if h.first.Swap(true) {
		return h.then.Write(p)
	}
	return h.Conn.Write(p)
}

// TestProbeShareNeverStandsForAnotherAddress proves, in virtual time,
// that a probe answered by one address never stands for a connection to
// another: with one Config.Probes shared by connections to a live server
// (its slow GET keeps it probing, each probe answered) and to a dead one
// (whose probes hang), the connection to the dead server is retired as it
// would be alone, between HealthTimeout and twice HealthTimeout plus a
// sampling period, while the other is kept.
func TestProbeShareNeverStandsForAnotherAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht = time.Second
		share := NewProbeShare()
		live := newFakeServer(t, delayed(time.Hour, resp.AppendSimpleString(nil, "PONG")))
		dead := newFakeServer(t, silentAfterHandshake)
		var deadDials atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "live:6379" {
				return live.dial(ctx, network, addr)
			}
			if deadDials.Add(1) == 1 {
				return dead.dial(ctx, network, addr)
			}
			<-ctx.Done() // the dead server's probes hang
			return nil, ctx.Err()
		}
		a, fa, _ := dialAndGet(t, Config{Addr: "live:6379", Dial: dial, HealthTimeout: ht, Probes: share})
		time.Sleep(ht / 2) // a's silence, and its probes, start first
		b, fb, start := dialAndGet(t, Config{Addr: "dead:6379", Dial: dial, HealthTimeout: ht, Probes: share})
		waitRetiredByOwnProbe(t, fb, start, ht)
		if !a.Alive() {
			t.Errorf("the connection to the live server was retired: %v", a.causeOf())
		}
		if !share.answeredSince("live:6379", start) {
			t.Error("no probe of the live server was answered meanwhile: the test proves nothing")
		}
		_, _ = a.Close(), b.Close()
		fa.Release()
		fb.Release()
	})
}

// TestProbeShareNeverStandsForAnEarlierSilence proves, in virtual time,
// that a shared probe answered before a connection fell silent never
// stands for that silence: connection a's probe is answered (its slow GET
// then too), and connection b, to the same address, falls silent
// afterwards while its own probes hang: it is retired as it would be
// alone, between HealthTimeout and twice HealthTimeout plus a sampling
// period, not a HealthTimeout later on the strength of a's old answer.
func TestProbeShareNeverStandsForAnEarlierSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht = time.Second
		share := NewProbeShare()
		live := newFakeServer(t, delayed(ht+ht/2, resp.AppendSimpleString(nil, "PONG")))
		dead := newFakeServer(t, silentAfterHandshake)
		var dials atomic.Int64
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			switch dials.Add(1) {
			case 1, 2: // a, then a's probe
				return live.dial(ctx, network, addr)
			case 3: // b
				return dead.dial(ctx, network, addr)
			}
			<-ctx.Done() // b's probes hang
			return nil, ctx.Err()
		}
		cfg := Config{Addr: "fake:6379", Dial: dial, HealthTimeout: ht, Probes: share}
		_, fa, _ := dialAndGet(t, cfg)
		waitOK(t, fa) // answered at 1.5 s, after a's probe
		fa.Release()
		if !share.answeredSince("fake:6379", time.Time{}) {
			t.Fatal("a's probe was not answered: the test proves nothing")
		}
		_, fb, start := dialAndGet(t, cfg)
		waitRetiredByOwnProbe(t, fb, start, ht)
		fb.Release()
	})
}

// waitRetiredByOwnProbe waits for f, submitted at start on a silent
// connection whose own probes hang, and fails the test unless it failed
// with ErrHealthTimeout as without a shared probe: between ht and twice
// ht plus a sampling period after start.
func waitRetiredByOwnProbe(t *testing.T, f *Frame, start time.Time, ht time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.Wait(ctx, time.Time{}); err != nil {
		t.Fatalf("the GET on the silent connection is still pending a minute later: %v", err)
	}
	if got, hi := time.Since(start), 2*ht+ht/4; got < ht || got > hi {
		t.Errorf("retired after %v, want between %v and %v", got, ht, hi)
	}
	if f.Err == nil || !errors.Is(f.Err, ErrHealthTimeout) {
		t.Errorf("got %v, want ErrHealthTimeout", f.Err)
	}
}
