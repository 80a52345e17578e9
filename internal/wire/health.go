package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/resp"
)

// ErrHealthTimeout is the cause of frames failed because their connection
// was retired as unresponsive: it owed replies and received nothing for
// Config.HealthTimeout, and a probe on a new connection got no reply
// either; or the server answered the probe but not the connection's own
// idle PING, which was first in line; or the silence lasted
// Config.SilenceLimit. The frames fail with Reason Lost and their own
// evidence. The errors of each case match it with errors.Is.
var ErrHealthTimeout = errors.New("health check: no reply on the connection")

// The causes of the three ways a connection is retired as unresponsive.
var (
	errProbeUnanswered = fmt.Errorf("%w within the health timeout, and none to a probe on a new connection", ErrHealthTimeout)
	errPingUnanswered  = fmt.Errorf("%w to its idle PING within the health timeout, while the server answered a probe on a new connection: the connection alone is lost", ErrHealthTimeout)
	errSilenceLimit    = fmt.Errorf("%w for the silence limit, while the server answered probes on new connections: the connection alone is lost", ErrHealthTimeout)
)

// pingCmd is PING encoded as a RESP array.
var pingCmd = []byte("*1\r\n$4\r\nPING\r\n")

// probeMaxBulk bounds a probe's reply: PONG or a short error is expected.
const probeMaxBulk = 64 << 10

// meteredConn counts the socket's reads and writes that moved bytes, one
// atomic add per system call (never per reply, never a clock reading), for
// the health monitor to sample.
type meteredConn struct {
	net.Conn
	reads  atomic.Uint64
	_      [56]byte // reads and writes belong to different goroutines
	writes atomic.Uint64
	// streamed counts the parts of long writes (see writeChunk) completed
	// while more of the same write remained.
	streamed atomic.Uint64
	try      nonBlockingWriter // nil: writes wait (see trywrite.go)
	peer     peerCloseChecker  // nil: a close is seen only by a read
}

// writeChunk is the largest part of a write made in one call: a longer
// write (a large command or batch) is made part by part, so that the
// health monitor sees a command that crosses a slow link for longer than
// Config.SilenceLimit being taken by the server, part by part, rather
// than a silence. Writes of this size or less, nearly all, are one call.
const writeChunk = 256 << 10

// Read reads from the socket and counts the call if it returned bytes.
func (m *meteredConn) Read(p []byte) (int, error) {
	n, err := m.Conn.Read(p)
	if n > 0 {
		m.reads.Add(1)
	}
	return n, err
}

// Write writes to the socket and counts the call if it accepted bytes.
func (m *meteredConn) Write(p []byte) (int, error) {
	if len(p) > writeChunk {
		return m.writeLong(p)
	}
	n, err := m.Conn.Write(p)
	if n > 0 {
		m.writes.Add(1)
	}
	return n, err
}

// writeLong writes p, longer than writeChunk, part by part, counting in
// streamed each part written while more remains.
func (m *meteredConn) writeLong(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		part := p[done:min(len(p), done+writeChunk)]
		n, err := m.Conn.Write(part)
		done += n
		if n > 0 {
			m.writes.Add(1)
		}
		if err != nil || n < len(part) {
			return done, err
		}
		if done < len(p) {
			m.streamed.Add(1)
		}
	}
	return done, nil
}

// progress counts the connection's signs of life from the server: the
// reads that returned bytes and the parts of long writes it took. The
// sum grows whenever either does.
func (m *meteredConn) progress() uint64 { return m.reads.Load() + m.streamed.Load() }

// healthTick is how often the monitor samples the counters: a quarter of
// the shortest enabled interval (a solo lane's idle close among them), at
// least a millisecond. It is the granularity of every health decision.
func healthTick(cfg Config) time.Duration {
	d := cfg.HealthTimeout
	for _, e := range []time.Duration{cfg.IdlePing, cfg.idleClose()} {
		if e > 0 && (d == 0 || e < d) {
			d = e
		}
	}
	return max(d/4, time.Millisecond)
}

// healthLoop is the connection's third goroutine, run only when
// Config.HealthTimeout or Config.IdlePing is set. On each tick it compares
// the read and write counters and the number of owed frames with the
// previous tick:
//
//   - silence: the connection owed frames at this tick and the last one and
//     heard nothing in between: read no byte, and the server took no part
//     of a long write (a command still crossing a slow link is not
//     silence; see writeChunk). After HealthTimeout of silence it probes the
//     server on a new connection (bounded by HealthTimeout), unless
//     Config.Probes holds a probe of the address answered during the
//     silence, which then stands for it. A probe reply,
//     or any byte read meanwhile, restarts the silence; otherwise the
//     connection is shut down with [ErrHealthTimeout]. A probe reply while
//     the connection's own idle PING is still unanswered, and still so a
//     tick later with nothing read, shuts it down too (the PING was first
//     in line: only a lost connection leaves it unanswered while the
//     server answers others), and so does silence
//     lasting Config.SilenceLimit, however many probes were answered.
//   - idleness: the connection owed nothing and neither read nor wrote.
//     After IdlePing of idleness it sends an internal PING frame, which is
//     owed like any other (so HealthTimeout covers it) and whose reply is
//     dropped here.
//   - disuse, on a solo lane (Config.SoloIdleClose): no caller took the
//     connection ([Endpoint.For]) and it owed nothing at any tick for
//     SoloIdleClose: it closes (closeIdle), and the lane is dialed again
//     when a caller needs it.
//
// It exits when the connection shuts down, after joining its probe.
func (c *Conn) healthLoop(cfg Config) {
	defer c.loopDone()
	var (
		probes      sync.WaitGroup
		probeCancel context.CancelFunc
		probeResult chan probeVerdict // nil: no probe in flight
	)
	endProbe := func() {
		if probeCancel != nil {
			probeCancel()
			probes.Wait()
			probeCancel, probeResult = nil, nil
		}
	}
	defer endProbe()

	var ping *Frame
	pinging := false // ping is submitted and its completion not yet seen
	if cfg.IdlePing > 0 {
		ping = &Frame{Buf: bytes.Clone(pingCmd), Want: WantNone, done: make(chan struct{}, 1), pool: new(FramePool)}
	}
	// pingDone reports whether the submitted ping has completed, noting it.
	pingDone := func() bool {
		select {
		case <-ping.done:
			pinging = false
			return true
		default:
			return false
		}
	}

	tick := healthTick(cfg)
	t := time.NewTicker(tick)
	defer t.Stop()
	// suspect: a probe was answered while the idle PING was not; the
	// connection is retired if, a tick later, it still has heard nothing
	// since (suspectHeard) and the PING is still unanswered.
	suspect, suspectAt, suspectHeard := false, time.Time{}, uint64(0)
	// heardAt and writes are the counters at the last tick: heardAt the
	// connection's progress (bytes read, parts of a long write taken).
	heardAt, writes := c.nc.progress(), c.nc.writes.Load()
	now := time.Now()
	// quietSince starts the silence a probe restarts; silentSince the one
	// only a sign of life (a byte read, a part of a long write taken) or
	// owing nothing ends, for Config.SilenceLimit.
	quietSince, idleSince, silentSince := now, now, now
	usedAt := now // a solo lane's: when a caller last took it or it last owed
	owing := false
	for {
		select {
		case <-c.stop:
			return
		case v := <-probeResult:
			endProbe()
			if c.nc.progress() == heardAt && c.owed.Load() != 0 {
				if v == probeSilent {
					c.shutdown(Lost, errProbeUnanswered)
					return
				}
				if v == probeFree && pinging && !pingDone() {
					// The PING went out when nothing was owed: a live
					// connection answers it before anything sent after it.
					// A server that stalled answers both at once, and
					// this connection may read its reply a moment after
					// the probe's: the verdict waits for a whole tick.
					suspect, suspectAt, suspectHeard = true, time.Now(), heardAt
				}
			}
			quietSince = time.Now()
			if v == probeBusy {
				// Every connection waits for the script: the silence
				// is the server's, not the connection's.
				silentSince = quietSince
			}
			continue
		case now = <-t.C:
		}
		if suspect && now.Sub(suspectAt) >= tick {
			suspect = false
			if c.nc.progress() == suspectHeard && pinging && !pingDone() {
				c.shutdown(Lost, errPingUnanswered)
				return
			}
		}
		if c.syncOK {
			c.resumeReader()
		}
		h, w, owed := c.nc.progress(), c.nc.writes.Load(), c.owed.Load()
		heard, wrote := h != heardAt, w != writes
		heardAt, writes = h, w
		if heard || owed == 0 || !owing {
			quietSince, silentSince = now, now
		}
		owing = owed > 0
		if cfg.SilenceLimit > 0 && owing && now.Sub(silentSince) >= cfg.SilenceLimit {
			c.shutdown(Lost, errSilenceLimit)
			return
		}
		if probeResult != nil && (heard || !owing) {
			endProbe() // alive, or nothing left to answer for
		}
		if cfg.HealthTimeout > 0 && owing && probeResult == nil && now.Sub(quietSince) >= cfg.HealthTimeout {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.HealthTimeout)
			res := make(chan probeVerdict, 1)
			probeCancel, probeResult = cancel, res
			if cfg.Probes != nil && cfg.Probes.answeredSince(cfg.Addr, quietSince) {
				res <- probeFree // another connection's probe, answered during this silence
			} else {
				probes.Go(func() {
					v := probe(ctx, cfg)
					if v == probeFree && cfg.Probes != nil {
						cfg.Probes.answered(cfg.Addr, time.Now())
					}
					res <- v
				})
			}
		}

		if heard || wrote || owing {
			idleSince = now
		} else {
			c.forgetPeaks()
		}
		if idleClose := cfg.idleClose(); idleClose > 0 {
			if c.used.Swap(false) || owing {
				usedAt = now
			} else if now.Sub(usedAt) >= idleClose && c.closeIdle() {
				return
			}
		}
		if ping != nil && !owing && now.Sub(idleSince) >= cfg.IdlePing {
			if pinging {
				pingDone() // if not yet, its reply is being handed over; next tick
			}
			if !pinging {
				ping.Reset()
				pinging = c.submitInternal(ping)
				idleSince = now
			}
		}
	}
}

// HoldIdlePing stops (hold) or resumes the connection's idle PINGs
// (Config.IdlePing). A connection lent to one caller holds them: between
// that caller's commands its state is the caller's, and in a transaction
// (after MULTI) a PING of the connection's own would be queued and
// answered inside EXEC's reply. A PING queued before the hold was queued
// before any frame submitted after it, and is answered before them.
func (c *Conn) HoldIdlePing(hold bool) {
	c.mu.Lock()
	c.idleHeld = hold
	c.mu.Unlock()
}

// submitInternal queues a frame of the connection's own, outside the
// pending bounds (it is sent only when nothing is pending) but counted as
// owed. It reports whether the frame was queued: not when the connection
// closed or holds its idle PINGs, nor when a frame came since the
// monitor's sample (the frame is then never behind another, which the
// health check's unanswered-PING rule relies on).
func (c *Conn) submitInternal(f *Frame) bool {
	c.mu.Lock()
	if c.closed || c.idleHeld || c.owed.Load() != 0 {
		c.mu.Unlock()
		return false
	}
	c.admitLocked(f, int64(len(f.Buf)))
	c.mu.Unlock()
	return true
}

// ProbeShare lets the connections of one client share their health
// probes: each address's latest answered probe is kept, and a connection
// that fell silent after that answer takes it for its own probe, so that
// many connections silent at once (dedicated connections blocked in
// BLPOP key 0) probe a live server about once per HealthTimeout in all
// rather than each. An unanswered probe is never shared: each connection
// retires itself only on its own evidence. Its methods are safe for
// concurrent use.
type ProbeShare struct {
	mu    sync.Mutex
	alive map[string]time.Time // address -> when a probe of it was last answered
}

// NewProbeShare returns an empty ProbeShare.
func NewProbeShare() *ProbeShare { return &ProbeShare{alive: make(map[string]time.Time)} }

// answeredSince reports whether a probe of addr was answered after since.
func (s *ProbeShare) answeredSince(addr string, since time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.alive[addr].After(since)
}

// answered records that a probe of addr was answered at.
func (s *ProbeShare) answered(addr string, at time.Time) {
	s.mu.Lock()
	if at.After(s.alive[addr]) {
		s.alive[addr] = at
	}
	s.mu.Unlock()
}

// probeVerdict is what a probe found.
type probeVerdict uint8

const (
	// probeSilent: no reply before the probe's deadline.
	probeSilent probeVerdict = iota
	// probeFree: a reply, error replies such as NOAUTH or LOADING
	// included: the server is alive and answers new connections.
	probeFree
	// probeBusy: BUSY, the server runs a long script or function; it
	// answers no command of any connection until the script ends.
	probeBusy
)

// probe sends a PING to the server at cfg.Addr on a new connection
// (dialed like the original, TLS included, without a handshake) and
// reports what came back before ctx ended.
func probe(ctx context.Context, cfg Config) probeVerdict {
	nc, err := dialSocket(ctx, cfg)
	if err != nil {
		return probeSilent
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	if _, err := nc.Write(pingCmd); err != nil {
		return probeSilent
	}
	rd := resp.NewReader(nc)
	rd.MaxBulk = probeMaxBulk
	v, err := rd.ReadValue()
	switch {
	case err != nil:
		return probeSilent
	case v.IsError() && bytes.HasPrefix(v.Str, []byte("BUSY ")):
		return probeBusy
	}
	return probeFree
}
