package wire

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// tcpPeer is the server side of one loopback TCP connection: it reports
// every command it reads on cmds and writes only what the test sends.
type tcpPeer struct {
	conn net.Conn
	cmds chan string
}

// startTCP connects a Conn (RESP3, configured by cfg) to a new tcpPeer
// over a real loopback socket, so that the caller's non-blocking write and
// read deadlines are the kernel's.
func startTCP(t *testing.T, cfg Config) (*Conn, *tcpPeer) {
	t.Helper()
	nc, srv := tcpPair(t)
	p := &tcpPeer{conn: srv, cmds: make(chan string, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(p.cmds)
		rd := resp.NewReader(srv)
		for {
			args, _, err := rd.ReadCommand(nil)
			if err != nil {
				return
			}
			words := make([]string, len(args))
			for i, a := range args {
				words[i] = string(a)
			}
			p.cmds <- strings.Join(words, " ")
		}
	}()
	c := startOn(nc, 3, cfg)
	t.Cleanup(func() {
		_ = c.Close()
		_ = srv.Close()
		<-done
	})
	return c, p
}

// tcpPair returns both ends of a new loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, _ := ln.Accept()
		accepted <- s
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if server = <-accepted; server == nil {
		t.Fatal("accept failed")
	}
	return client, server
}

// received waits for the next command the peer read.
func (p *tcpPeer) received(t *testing.T) string {
	t.Helper()
	select {
	case s := <-p.cmds:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the peer received no command")
		return ""
	}
}

func (p *tcpPeer) send(t *testing.T, b []byte) {
	t.Helper()
	if _, err := p.conn.Write(b); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

func readerOf(c *Conn) readerRole {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reader
}

// awaitParked waits (polling the role, bounded) until the reader goroutine
// has parked after the connection's last reply.
func awaitParked(t *testing.T, c *Conn) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); readerOf(c) != readerParked; runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatal("the reader goroutine never parked")
		}
	}
}

// quiet is a Config whose health monitor exists (so callers may read their
// own replies) but never acts during a test.
var quiet = Config{HealthTimeout: time.Hour}

// doAsync runs Do on another goroutine and returns its outcome.
func doAsync(c *Conn, ctx context.Context, deadline time.Time, f *Frame) chan error {
	out := make(chan error, 1)
	go func() {
		sent, err := c.Do(ctx, deadline, f)
		if !sent && err == nil {
			err = errors.New("not sent")
		}
		out <- err
	}()
	return out
}

func result(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Do never returned")
		return nil
	}
}

// warm sends one command through the reader goroutine and waits until it
// parks, so that the next caller finds the connection idle.
func warm(t *testing.T, c *Conn, p *tcpPeer) {
	t.Helper()
	f := newFrame(WantNone, "PING")
	ch := doAsync(c, context.Background(), time.Time{}, f)
	p.received(t)
	p.send(t, []byte("+PONG\r\n"))
	if err := result(t, ch); err != nil || f.Err != nil {
		t.Fatalf("PING: %v %v", err, f.Err)
	}
	f.Release()
	awaitParked(t, c)
}

// nextGetsItsOwn sends late (the rest of, or the whole, reply of a frame
// its caller gave up on), then proves that the next caller gets its own
// reply and that the connection holds no frame afterwards.
func nextGetsItsOwn(t *testing.T, c *Conn, p *tcpPeer, late []byte) {
	t.Helper()
	p.send(t, late)
	g := newFrame(WantBytes, "GET", "next")
	ch := doAsync(c, context.Background(), time.Time{}, g)
	if got := p.received(t); got != "GET next" {
		t.Fatalf("peer got %q", got)
	}
	p.send(t, bulk("mine"))
	if err := result(t, ch); err != nil || g.Err != nil || string(g.Bytes) != "mine" {
		t.Fatalf("next GET: %v %v %q, want its own reply", err, g.Err, g.Bytes)
	}
	g.Release()
	if n := fifoLen(c); n != 0 {
		t.Fatalf("FIFO holds %d frames, want 0", n)
	}
}

// TestIdleCallerReadsOwnReply proves that on an idle connection a caller
// whose context cannot be cancelled holds the reader's role while its
// reply is outstanding (no goroutine reads for it), gets its own reply,
// and leaves the reader parked.
func TestIdleCallerReadsOwnReply(t *testing.T) {
	c, p := startTCP(t, quiet)
	warm(t, c, p)
	for _, key := range []string{"a", "b", "c"} {
		f := newFrame(WantBytes, "GET", key)
		ch := doAsync(c, context.Background(), time.Time{}, f)
		if got := p.received(t); got != "GET "+key {
			t.Fatalf("peer got %q", got)
		}
		if r := readerOf(c); r != readerCaller {
			t.Fatalf("while GET %s is outstanding the reader's role is %v, want the caller (%v)", key, r, readerCaller)
		}
		p.send(t, bulk("v"+key))
		if err := result(t, ch); err != nil || f.Err != nil || string(f.Bytes) != "v"+key {
			t.Fatalf("GET %s: %v %v %q", key, err, f.Err, f.Bytes)
		}
		if r := readerOf(c); r != readerParked {
			t.Fatalf("after GET %s the reader's role is %v, want parked", key, r)
		}
		f.Release()
	}
}

// TestCancellableCallerReadsOwnReply proves that a caller whose context
// can be cancelled also reads its own reply on an idle connection (within
// Config.OwnReadWait), gets it, and leaves the reader parked.
func TestCancellableCallerReadsOwnReply(t *testing.T) {
	cfg := quiet
	cfg.OwnReadWait = time.Hour
	c, p := startTCP(t, cfg)
	warm(t, c, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFrame(WantBytes, "GET", "k")
	ch := doAsync(c, ctx, time.Time{}, f)
	p.received(t)
	if r := readerOf(c); r != readerCaller {
		t.Fatalf("while GET is outstanding the reader's role is %v, want the caller (%v)", r, readerCaller)
	}
	p.send(t, bulk("v"))
	if err := result(t, ch); err != nil || string(f.Bytes) != "v" {
		t.Fatalf("GET: %v %q", err, f.Bytes)
	}
	if r := readerOf(c); r != readerParked {
		t.Fatalf("after GET the reader's role is %v, want parked", r)
	}
	f.Release()
}

// TestCancellableCallerHandsOverAfterOwnReadWait proves that a caller
// whose context can be cancelled stops reading its own reply after
// Config.OwnReadWait: the reader goroutine takes the reply over (here
// half of it already read), the caller's cancellation ends its call with
// context.Canceled, the late reply is drained, and the next caller gets
// its own reply.
func TestCancellableCallerHandsOverAfterOwnReadWait(t *testing.T) {
	cfg := quiet
	cfg.OwnReadWait = time.Nanosecond
	c, p := startTCP(t, cfg)
	warm(t, c, p)
	ctx, cancel := context.WithCancel(context.Background())
	f := newFrame(WantBytes, "GET", "slow")
	ch := doAsync(c, ctx, time.Time{}, f)
	p.received(t)
	p.send(t, []byte("$4\r\nla"))
	cancel()
	if err := result(t, ch); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do: got %v, want context.Canceled", err)
	}
	nextGetsItsOwn(t, c, p, []byte("te\r\n"))
}

// TestCancellableCallerOwnReadEndsAtContextDeadline proves that a caller
// reading its own reply stops at its context's deadline even when
// Config.OwnReadWait is longer: a held reply ends the call with
// context.DeadlineExceeded, not after OwnReadWait.
func TestCancellableCallerOwnReadEndsAtContextDeadline(t *testing.T) {
	cfg := quiet
	cfg.OwnReadWait = time.Hour
	c, p := startTCP(t, cfg)
	warm(t, c, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	f := newFrame(WantBytes, "GET", "held")
	ch := doAsync(c, ctx, time.Time{}, f)
	p.received(t)
	if err := result(t, ch); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do: got %v, want context.DeadlineExceeded", err)
	}
	nextGetsItsOwn(t, c, p, bulk("late"))
}

// TestOwnReadDeadlineHandsReplyOver proves that when the deadline of a
// caller reading its own reply passes in the middle of that reply, the
// caller gives up with context.DeadlineExceeded, the reader goroutine
// drains the rest of the late reply, and the next caller gets its own.
func TestOwnReadDeadlineHandsReplyOver(t *testing.T) {
	c, p := startTCP(t, quiet)
	warm(t, c, p)
	f := newFrame(WantBytes, "GET", "slow")
	ch := doAsync(c, context.Background(), time.Now().Add(50*time.Millisecond), f)
	p.received(t)
	p.send(t, []byte("$4\r\nla")) // half of the reply, then the deadline
	if err := result(t, ch); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do: got %v, want context.DeadlineExceeded", err)
	}
	// f now belongs to the connection.
	nextGetsItsOwn(t, c, p, []byte("te\r\n"))
}

// TestOwnReaderWithConcurrentCaller proves that a frame submitted while a
// caller reads its own reply is written by the writer goroutine and its
// reply goes to its own caller, read by the reader goroutine once the
// first caller has its reply.
func TestOwnReaderWithConcurrentCaller(t *testing.T) {
	c, p := startTCP(t, quiet)
	warm(t, c, p)
	a := newFrame(WantBytes, "GET", "a")
	cha := doAsync(c, context.Background(), time.Time{}, a)
	p.received(t)
	b := newFrame(WantBytes, "GET", "b")
	chb := doAsync(c, context.Background(), time.Time{}, b)
	p.received(t)
	p.send(t, append(bulk("va"), bulk("vb")...))
	if err := result(t, cha); err != nil || string(a.Bytes) != "va" {
		t.Fatalf("GET a: %v %q", err, a.Bytes)
	}
	if err := result(t, chb); err != nil || string(b.Bytes) != "vb" {
		t.Fatalf("GET b: %v %q", err, b.Bytes)
	}
	a.Release()
	b.Release()
}

// TestOwnReaderPeerCloses proves that a connection lost while a caller
// reads its own reply fails that frame as possibly executed and dies with
// every goroutine gone.
func TestOwnReaderPeerCloses(t *testing.T) {
	c, p := startTCP(t, quiet)
	warm(t, c, p)
	f := newFrame(WantInt, "INCR", "n")
	ch := doAsync(c, context.Background(), time.Time{}, f)
	p.received(t)
	_ = p.conn.Close()
	if err := result(t, ch); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if f.Err == nil || f.Err.Reason != Lost || f.Err.Evidence != PossiblyExecuted {
		t.Fatalf("got Err %v, want Lost and possibly executed", f.Err)
	}
	<-c.Dead()
}

// TestIdleConnectionSeesServerClose proves that a parked reader does not
// leave an idle connection unread: the health monitor's tick gives it back
// to the reader goroutine, which sees the server's close, so the
// connection dies before any caller writes to it.
func TestIdleConnectionSeesServerClose(t *testing.T) {
	c, p := startTCP(t, Config{HealthTimeout: 40 * time.Millisecond})
	warm(t, c, p)
	_ = p.conn.Close()
	select {
	case <-c.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection never noticed the server's close")
	}
}

// TestRealServerMixedCallersGetOwnReplies proves, against the real server,
// that callers reading their own replies, callers served by the reader
// goroutine, callers whose deadline passes mid-exchange or while they
// wait, callers that are cancelled and callers cancelled as their
// deadline passes, all on one connection whose reader parks and is resumed
// by a fast health tick, each get their own reply or their own error and
// never another caller's.
//
// RESPIRE_WIRE_SOAK=30s makes it a soak: 512 goroutines (or
// RESPIRE_WIRE_SOAK_GOROUTINES) for that long instead of 4 x 1500 calls.
func TestRealServerMixedCallersGetOwnReplies(t *testing.T) {
	// The health tick (an eighth of a second) resumes the parked reader
	// several times during the run; a shorter timeout could retire the
	// connection of a loaded machine.
	cfg := Config{HealthTimeout: 500 * time.Millisecond}
	goroutines, each, until := 4, 1500, time.Time{}
	if d, err := time.ParseDuration(os.Getenv("RESPIRE_WIRE_SOAK")); err == nil {
		cfg = guarded
		goroutines, each, until = 512, math.MaxInt, time.Now().Add(d)
		if n, err := strconv.Atoi(os.Getenv("RESPIRE_WIRE_SOAK_GOROUTINES")); err == nil && n > 0 {
			goroutines = n
		}
	}
	c := dialRealConfig(t, cfg)
	var wg sync.WaitGroup
	var calls, expired, cancelled atomic.Int64
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range each {
				if !until.IsZero() && i%64 == 0 && time.Now().After(until) {
					return
				}
				calls.Add(1)
				want := "g" + strconv.Itoa(g) + ":" + strconv.Itoa(i)
				f := newFrame(WantBytes, "ECHO", want)
				ctx, deadline := context.Background(), time.Time{}
				var cancel context.CancelFunc = func() {}
				switch rnd.IntN(5) {
				case 1:
					deadline = time.Now().Add(time.Duration(rnd.IntN(300)) * time.Microsecond)
				case 2:
					ctx, cancel = context.WithCancel(ctx)
					if rnd.IntN(2) == 0 {
						go cancel()
					}
				case 3: // cancelled as the alarm may expire it
					deadline = time.Now().Add(time.Duration(rnd.IntN(300)) * time.Microsecond)
					ctx, cancel = context.WithCancel(ctx)
					go cancel()
				}
				sent, err := c.Do(ctx, deadline, f)
				cancel()
				switch {
				case !sent:
					errs <- "not sent: " + err.Error()
					return
				case err != nil:
					switch {
					case errors.Is(err, context.DeadlineExceeded):
						expired.Add(1)
					case errors.Is(err, context.Canceled):
						cancelled.Add(1)
					default:
						errs <- "Do: " + err.Error()
						return
					}
					continue // the frame belongs to the connection now
				case f.Err != nil:
					errs <- "connection failed: " + f.Err.Error()
					return
				case string(f.Bytes) != want:
					errs <- "got " + string(f.Bytes) + ", want " + want
					return
				}
				f.Release()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	t.Logf("%d calls on %d goroutines: %d passed their deadline, %d were cancelled", calls.Load(), goroutines, expired.Load(), cancelled.Load())
	f := newFrame(WantBytes, "ECHO", "last")
	if sent, err := c.Do(context.Background(), time.Time{}, f); !sent || err != nil || string(f.Bytes) != "last" {
		t.Fatalf("final ECHO: %v %v %q", sent, err, f.Bytes)
	}
	f.Release()
}
