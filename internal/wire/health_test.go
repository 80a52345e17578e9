package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/respire-go/respire/resp"
)

// probeDialer is a Config.Dial hook. Dial n (from 1) is a health probe
// when isProbe(n) says so (nil: every dial after the first) and then does
// what probe says; other dials reach the fake server as connections.
type probeDialer struct {
	s       *fakeServer
	probe   string // "answer" (the server's handle decides), "refuse", "hang"
	isProbe func(n int) bool
	started chan struct{} // receives once per probe dial, if not nil

	ended chan time.Time // receives when a hung probe's context ends, if not nil

	mu     sync.Mutex
	dials  int
	probes int
}

func (d *probeDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dials++
	isProbe := d.dials > 1
	if d.isProbe != nil {
		isProbe = d.isProbe(d.dials)
	}
	if isProbe {
		d.probes++
	}
	d.mu.Unlock()
	if !isProbe {
		return d.s.dial(ctx, network, addr)
	}
	if d.started != nil {
		d.started <- struct{}{}
	}
	switch d.probe {
	case "refuse":
		return nil, errors.New("probe refused")
	case "hang":
		<-ctx.Done()
		if d.ended != nil {
			d.ended <- time.Now()
		}
		return nil, ctx.Err()
	}
	return d.s.dial(ctx, network, addr)
}

// counts returns how many dials were connections and how many probes.
func (d *probeDialer) counts() (conns, probes int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials - d.probes, d.probes
}

// silentAfterHandshake answers the handshake only.
func silentAfterHandshake(args []string) []byte {
	if strings.ToUpper(args[0]) == "HELLO" {
		return defaultReply(args)
	}
	return nil
}

// silentUntil answers like silentAfterHandshake until back is set, then
// like defaultReply.
func silentUntil(back *atomic.Bool) func([]string) []byte {
	return func(args []string) []byte {
		if back.Load() {
			return defaultReply(args)
		}
		return silentAfterHandshake(args)
	}
}

// delayed answers GET after d (the server is slow, not dead) and
// everything else at once, PING with pong.
func delayed(d time.Duration, pong []byte) func([]string) []byte {
	return func(args []string) []byte {
		switch strings.ToUpper(args[0]) {
		case "GET":
			time.Sleep(d)
			return resp.AppendBulkString(nil, "slow "+args[1])
		case "PING":
			return pong
		}
		return defaultReply(args)
	}
}

// TestHealthRetiresSilentPeer proves, in virtual time, that a connection
// owing a reply from a server that went silent is retired between
// HealthTimeout and 2 x HealthTimeout plus the sampling period (a quarter
// of HealthTimeout), whatever the probe meets (no reply, refused dial,
// hung dial): the frame fails as Lost, PossiblyExecuted, caused by
// ErrHealthTimeout, and the Endpoint dials a replacement that works.
func TestHealthRetiresSilentPeer(t *testing.T) {
	const ht = time.Second
	for _, probe := range []string{"answer", "refuse", "hang"} {
		t.Run("probe "+probe, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fp := new(FramePool)
				var back atomic.Bool
				s := newFakeServer(t, silentUntil(&back))
				// Dial 2 is the probe; dial 3 the replacement.
				d := &probeDialer{s: s, probe: probe, isProbe: func(n int) bool { return n == 2 }}
				ep := NewEndpoint(Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: ht})
				defer ep.Close()
				c, err := ep.Conn(context.Background())
				if err != nil {
					t.Fatalf("Conn: %v", err)
				}
				f := frameIn(fp, WantBytes, "GET", "k")
				time.Sleep(10 * time.Millisecond) // submit between two samples of the monitor
				start := time.Now()
				submit(t, c, f)
				waitOK(t, f)
				elapsed := time.Since(start)
				t.Logf("retired after %v", elapsed)
				if lo, hi := ht, 2*ht+ht/4; elapsed < lo || elapsed > hi {
					t.Errorf("retired after %v, want between %v and %v", elapsed, lo, hi)
				}
				if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != PossiblyExecuted || !errors.Is(f.Err, ErrHealthTimeout) {
					t.Fatalf("got %v, want *ConnError Lost PossiblyExecuted caused by ErrHealthTimeout", f.Err)
				}
				f.Release()
				<-c.Dead()
				if _, probes := d.counts(); probes != 1 {
					t.Errorf("%d probes, want 1", probes)
				}

				// The replacement is healthy: a server that answers again.
				back.Store(true)
				c2, err := ep.Conn(context.Background())
				if err != nil || c2 == c {
					t.Fatalf("Conn after retirement: %v, %v; want a replacement", c2, err)
				}
				g := frameIn(fp, WantBytes, "ECHO", "again")
				submit(t, c2, g)
				waitOK(t, g)
				if g.Err != nil || string(g.Bytes) != "again" {
					t.Fatalf("replacement: got %v %q, want again", g.Err, g.Bytes)
				}
				g.Release()
				if conns, _ := d.counts(); conns != 2 {
					t.Errorf("%d connections dialed, want 2 (the original and one replacement)", conns)
				}
			})
		})
	}
}

// TestHealthKeepsSlowServer proves, in virtual time, that a slow but live
// server is never retired: a reply after 2 s with HealthTimeout 3 s needs
// no probe; a reply after 8 s with HealthTimeout 1 s survives because
// each probe is answered, by PONG or by an error reply (NOAUTH, LOADING,
// BUSY count as alive). (Delays stay below waitOK's 10 s safety timeout.)
func TestHealthKeepsSlowServer(t *testing.T) {
	tests := []struct {
		name       string
		ht, delay  time.Duration
		pong       string
		wantProbes bool
	}{
		{"DEBUG SLEEP 2 with HealthTimeout 3s", 3 * time.Second, 2 * time.Second, "+PONG\r\n", false},
		{"8s script, probes answered PONG", time.Second, 8 * time.Second, "+PONG\r\n", true},
		{"8s script, probes answered NOAUTH", time.Second, 8 * time.Second, "-NOAUTH Authentication required.\r\n", true},
		{"8s script, probes answered LOADING", time.Second, 8 * time.Second, "-LOADING Redis is loading the dataset in memory\r\n", true},
		{"8s script, probes answered BUSY", time.Second, 8 * time.Second, "-BUSY Redis is busy running a script.\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFakeServer(t, delayed(tt.delay, []byte(tt.pong)))
				d := &probeDialer{s: s, probe: "answer"}
				c, f, start := dialAndGet(t, Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: tt.ht})
				waitOK(t, f)
				if f.Err != nil || string(f.Bytes) != "slow k" {
					t.Fatalf("got %v %q, want the slow reply", f.Err, f.Bytes)
				}
				if got := time.Since(start); got != tt.delay {
					t.Errorf("reply after %v, want %v", got, tt.delay)
				}
				f.Release()
				if !c.Alive() {
					t.Fatal("a slow but live server's connection was retired")
				}
				if _, probes := d.counts(); (probes > 0) != tt.wantProbes {
					t.Errorf("%d probes, want some: %v", probes, tt.wantProbes)
				}
			})
		})
	}
}

// TestHealthReplyDuringProbe proves that a byte arriving on the
// connection while a probe is still dialing counts as alive: the probe is
// cancelled at the next sample, long before its own timeout, and the
// connection keeps serving.
func TestHealthReplyDuringProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ht = time.Second
		fp := new(FramePool)
		// The reply comes 1.6 s after the command: after the probe has
		// started (silence of 1 s, sampled every 250 ms) and before it
		// would time out.
		s := newFakeServer(t, delayed(1600*time.Millisecond, nil))
		d := &probeDialer{s: s, probe: "hang", started: make(chan struct{}, 1), ended: make(chan time.Time, 1)}
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: ht}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		f := frameIn(fp, WantBytes, "GET", "k")
		time.Sleep(10 * time.Millisecond) // submit between two samples of the monitor
		start := time.Now()
		submit(t, c, f)
		<-d.started // the probe is dialing
		if got := time.Since(start); got < ht {
			t.Errorf("probe started %v after the command, want at least HealthTimeout %v", got, ht)
		}
		waitOK(t, f)
		if f.Err != nil {
			t.Fatalf("got %v, want the reply", f.Err)
		}
		f.Release()
		ended := <-d.ended
		if got, want := ended.Sub(start), 1600*time.Millisecond+ht/4; got > want {
			t.Errorf("probe cancelled %v after the command, want by the first sample after the reply (%v)", got, want)
		}
		if !c.Alive() {
			t.Fatal("connection retired although its reply arrived during the probe")
		}
	})
}

// TestHealthCloseDuringProbe proves that Close while a probe is in
// flight returns at once and leaves no goroutine (the bubble would not end
// otherwise): the probe's dial is cancelled and joined.
func TestHealthCloseDuringProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := new(FramePool)
		s := newFakeServer(t, silentAfterHandshake)
		d := &probeDialer{s: s, probe: "hang", started: make(chan struct{}, 1)}
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: d.dial, HealthTimeout: time.Second}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		f := frameIn(fp, WantBytes, "GET", "k")
		submit(t, c, f)
		<-d.started
		start := time.Now()
		_ = c.Close()
		if got := time.Since(start); got != 0 {
			t.Errorf("Close took %v during a probe, want no wait", got)
		}
		if f.Err == nil || f.Err.Reason != Closed {
			t.Errorf("frame: got %v, want Closed", f.Err)
		}
		f.Release()
	})
}

// TestIdlePing proves, in virtual time, that an idle connection sends an
// internal PING after IdlePing without reads or writes (and again after
// each idle period), that its reply is consumed inside the connection
// (the next caller gets its own reply), and that a busy connection, or
// one owing a slow reply, sends none.
func TestIdlePing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Second
		fp := new(FramePool)
		s := newFakeServer(t, delayed(3*idle, []byte("+PONG\r\n")))
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: s.dial, IdlePing: idle}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		pings := func() int {
			n := 0
			for _, cmd := range s.received() {
				if cmd == "PING" {
					n++
				}
			}
			return n
		}
		time.Sleep(idle - time.Nanosecond)
		synctest.Wait()
		if n := pings(); n != 0 {
			t.Fatalf("%d PINGs before IdlePing passed, want 0", n)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := pings(); n != 1 {
			t.Fatalf("%d PINGs after IdlePing of idleness, want 1", n)
		}
		if n, _ := c.pending(); n != 0 {
			t.Fatalf("pending = %d after the PING's reply, want 0 (consumed)", n)
		}
		f := frameIn(fp, WantBytes, "ECHO", "mine")
		submit(t, c, f)
		waitOK(t, f)
		if f.Err != nil || string(f.Bytes) != "mine" {
			t.Fatalf("caller after an idle PING got %v %q, want its own reply", f.Err, f.Bytes)
		}
		f.Release()

		// Busy for 5 s (a command every half IdlePing): no PING.
		before := pings()
		for range 10 {
			time.Sleep(idle / 2)
			g := frameIn(fp, WantBytes, "ECHO", "busy")
			submit(t, c, g)
			waitOK(t, g)
			g.Release()
		}
		// Owing a slow reply for 3 s: no PING either.
		g := frameIn(fp, WantBytes, "GET", "slow")
		submit(t, c, g)
		waitOK(t, g)
		if g.Err != nil || string(g.Bytes) != "slow slow" {
			t.Fatalf("slow GET: got %v %q", g.Err, g.Bytes)
		}
		g.Release()
		if n := pings() - before; n != 0 {
			t.Errorf("%d PINGs on a busy connection, want 0", n)
		}
		// Idle again for 5 s: one PING per idle period, each period
		// between IdlePing and IdlePing plus the sampling period.
		time.Sleep(5 * idle)
		synctest.Wait()
		if n := pings() - before; n < 4 || n > 5 {
			t.Errorf("%d PINGs in 5 idle periods, want 4 or 5", n)
		}
	})
}

// TestIdlePingFindsSilentPeer proves that the idle PING is owed like any
// frame: with IdlePing and HealthTimeout, an idle connection to a server
// that went silent is retired with ErrHealthTimeout although no caller
// used it.
func TestIdlePingFindsSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle, ht = time.Second, time.Second
		s := newFakeServer(t, silentAfterHandshake)
		c, err := Dial(context.Background(), Config{Addr: "fake:6379", Dial: s.dial, IdlePing: idle, HealthTimeout: ht}, nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		start := time.Now()
		<-c.Dead()
		t.Logf("retired after %v", time.Since(start))
		// Sampling every 250 ms: the PING at 1 s, silence counted from
		// 1.25 s, a probe from 2.25 s that times out at 3.25 s.
		if got, hi := time.Since(start), idle+2*ht+2*ht/4; got > hi || got < idle+ht {
			t.Errorf("idle silent connection retired after %v, want between %v and %v", got, idle+ht, hi)
		}
		c.mu.Lock()
		cause := c.cause
		c.mu.Unlock()
		if !errors.Is(cause, ErrHealthTimeout) {
			t.Errorf("cause %v, want ErrHealthTimeout", cause)
		}
	})
}
