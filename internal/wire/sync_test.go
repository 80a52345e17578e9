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
func tcpPair(t testing.TB) (client, server net.Conn) {
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
	awaitRole(t, c, readerParked)
}

// awaitRole waits (polling, bounded) until the reader's role is r.
func awaitRole(t *testing.T, c *Conn, r readerRole) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); readerOf(c) != r; runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("the reader's role never became %v", r)
		}
	}
}

// awaitWriterIdle waits (polling, bounded) until nobody holds the
// writer's role.
func awaitWriterIdle(t *testing.T, c *Conn) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		c.mu.Lock()
		writing := c.writing
		c.mu.Unlock()
		if !writing {
			return
		}
		if time.Now().After(end) {
			t.Fatal("the writer's role was never released")
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

// TestDrainedBusyConnectionKeepsItsBatching proves that once more than
// ownWriteMaxPeak frames were owed at once, the first caller after every
// reply came back (nothing owed) does not write and read alone: its frame
// goes through the writer and reader goroutines, so that the callers the
// last replies woke are gathered into one write instead of one write of
// a single frame each time many callers' replies drain the connection.
// The peak decays over serial calls until a caller reads its own reply
// again, and a health tick on the idle connection forgets it at once.
func TestDrainedBusyConnectionKeepsItsBatching(t *testing.T) {
	c, p := startTCP(t, quiet)
	warm(t, c, p)
	burst := func() {
		t.Helper()
		frames := make([]*Frame, ownWriteMaxPeak+2)
		outs := make([]chan error, len(frames))
		for i := range frames {
			frames[i] = newFrame(WantBytes, "GET", "k"+strconv.Itoa(i))
			outs[i] = doAsync(c, context.Background(), time.Time{}, frames[i])
		}
		// Every frame is owed before the first reply: the last admission
		// counts ownWriteMaxPeak+1 owed.
		keys := make([]string, len(frames))
		for i := range keys {
			keys[i] = strings.TrimPrefix(p.received(t), "GET ")
		}
		for _, key := range keys {
			p.send(t, bulk("v"+key))
		}
		for i, f := range frames {
			if err := result(t, outs[i]); err != nil || f.Err != nil || string(f.Bytes) != "vk"+strconv.Itoa(i) {
				t.Fatalf("GET k%d: %v %v %q, want its own reply", i, err, f.Err, f.Bytes)
			}
			f.Release()
		}
		awaitParked(t, c)
	}
	// serial sends one GET on the idle connection and reports whether its
	// caller held the reader's role (read its own reply).
	serial := func() (own bool) {
		t.Helper()
		awaitParked(t, c)
		awaitWriterIdle(t, c) // the writer goroutine may not have seen its queue empty yet
		f := newFrame(WantBytes, "GET", "s")
		ch := doAsync(c, context.Background(), time.Time{}, f)
		if got := p.received(t); got != "GET s" {
			t.Fatalf("peer got %q", got)
		}
		own = readerOf(c) == readerCaller
		p.send(t, bulk("vs"))
		if err := result(t, ch); err != nil || f.Err != nil || string(f.Bytes) != "vs" {
			t.Fatalf("serial GET: %v %v %q", err, f.Err, f.Bytes)
		}
		f.Release()
		return own
	}

	burst()
	if serial() {
		t.Fatal("the first GET after a busy connection drained read its own reply, want the reader goroutine to")
	}
	for i := 1; !serial(); i++ {
		if i > 2*ownWriteMaxPeak {
			t.Fatalf("after %d serial calls no caller read its own reply", i)
		}
	}

	burst()
	c.forgetPeaks() // the health monitor's tick on an idle connection
	if !serial() {
		t.Fatal("after an idle health tick the first GET did not read its own reply")
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
// Config.OwnReadWait: the reader goroutine takes the reply over (with
// OwnReadWait of 1ns, before any of it arrives; a reply cut by the
// handover is TestCancellableOwnReadHandsOverMidReply's), the caller's
// cancellation ends its call with context.Canceled, the late reply is
// drained, and the next caller gets its own reply.
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
// wait, callers that are cancelled, callers cancelled as their deadline
// passes, and callers whose context can be cancelled but is not, with or
// without a deadline of its own, all on one connection whose reader parks
// and is resumed by a fast health tick, each get their own reply or their
// own error and never another caller's. It runs with the default
// OwnReadWait and with one of a nanosecond, where every caller with a
// cancellable context hands its reply over to the reader goroutine.
//
// RESPIRE_WIRE_SOAK=30s makes it a soak: 512 goroutines (or
// RESPIRE_WIRE_SOAK_GOROUTINES) for that long (half of it per
// OwnReadWait) instead of 4 x 1500 calls.
func TestRealServerMixedCallersGetOwnReplies(t *testing.T) {
	// The health tick (an eighth of a second) resumes the parked reader
	// several times during the run; a shorter timeout could retire the
	// connection of a loaded machine.
	cfg := Config{HealthTimeout: 500 * time.Millisecond}
	goroutines, each, soak := 4, 1500, time.Duration(0)
	if d, err := time.ParseDuration(os.Getenv("RESPIRE_WIRE_SOAK")); err == nil {
		cfg = guarded
		goroutines, each, soak = 512, math.MaxInt, d/2
		if n, err := strconv.Atoi(os.Getenv("RESPIRE_WIRE_SOAK_GOROUTINES")); err == nil && n > 0 {
			goroutines = n
		}
	}
	for _, wait := range []time.Duration{0, time.Nanosecond} {
		cfg.OwnReadWait = wait
		t.Run("OwnReadWait="+wait.String(), func(t *testing.T) {
			var until time.Time
			if soak > 0 {
				until = time.Now().Add(soak)
			}
			mixedCallersGetOwnReplies(t, dialRealConfig(t, cfg), goroutines, each, until)
		})
	}
}

// mixedCallersGetOwnReplies runs TestRealServerMixedCallersGetOwnReplies
// on c: goroutines callers of each calls, or until until.
func mixedCallersGetOwnReplies(t *testing.T, c *Conn, goroutines, each int, until time.Time) {
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
				how := WantBytes
				if i%2 == 1 {
					how = WantString // the reader makes the string (Client.Get)
				}
				f := newFrame(how, "ECHO", want)
				ctx, deadline := context.Background(), time.Time{}
				var cancel context.CancelFunc = func() {}
				switch rnd.IntN(7) {
				case 1:
					deadline = time.Now().Add(time.Duration(rnd.IntN(300)) * time.Microsecond)
				case 5: // cancellable, never cancelled: its reply is its own
					ctx, cancel = context.WithCancel(ctx)
				case 6: // a context deadline of its own, past or ahead
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rnd.IntN(400)-100)*time.Microsecond)
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
				gave, bad := ownOutcome(f, want, sent, err)
				switch {
				case bad != "":
					errs <- bad
					return
				case errors.Is(gave, context.DeadlineExceeded):
					expired.Add(1)
				case gave != nil:
					cancelled.Add(1)
				}
			}
		})
	}
	waitCallers(t, &wg, errs)
	t.Logf("%d calls on %d goroutines: %d passed their deadline, %d were cancelled", calls.Load(), goroutines, expired.Load(), cancelled.Load())
	lastEchoIsOwn(t, c)
}

// ownOutcome judges the outcome of c.Do(f) (sent, err) by a caller that
// wants the reply want: gave is the context's error when the caller gave
// up (the frame is then the connection's); bad describes any outcome but
// the caller's own reply or a context's end. f is released when it got
// its own reply.
func ownOutcome(f *Frame, want string, sent bool, err error) (gave error, bad string) {
	switch {
	case !sent:
		return nil, "not sent: " + err.Error()
	case err != nil:
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, "Do: " + err.Error()
		}
		return err, ""
	case f.Err != nil:
		return nil, "connection failed: " + f.Err.Error()
	case f.Want == WantString && (f.Str != want || len(f.Bytes) != 0):
		return nil, "got " + f.Str + ", want " + want
	case f.Want != WantString && string(f.Bytes) != want:
		return nil, "got " + string(f.Bytes) + ", want " + want
	}
	f.Release()
	return nil, ""
}

// waitCallers waits for the callers of wg, then fails t with the first
// problem any of them reported on errs.
func waitCallers(t *testing.T, wg *sync.WaitGroup, errs chan string) {
	t.Helper()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// lastEchoIsOwn proves that, once every caller has returned, one more
// caller gets its own reply and the connection then owes nothing.
func lastEchoIsOwn(t *testing.T, c *Conn) {
	t.Helper()
	f := newFrame(WantBytes, "ECHO", "last")
	if sent, err := c.Do(context.Background(), time.Time{}, f); !sent || err != nil || f.Err != nil || string(f.Bytes) != "last" {
		t.Fatalf("final ECHO: %v %v %v %q", sent, err, f.Err, f.Bytes)
	}
	f.Release()
	if n := c.owed.Load(); n != 0 {
		t.Fatalf("the connection owes %d frames after every reply, want 0", n)
	}
}

// TestOwnReadHandoverTrickledRepliesGoToOwnCallers proves that callers
// whose own read ends at any moment of a reply (OwnReadWait of 1ns: before
// its first byte; of 50µs: often in its middle), with contexts cancelled
// before, during and after the call, context deadlines already past or a
// few microseconds ahead, on a connection whose replies arrive a byte at a
// time with RESP3 pushes (no push handler) between them, and with frames
// of two replies, each get their own reply or their own error: the reader
// goroutine that takes a reply over never loses or misroutes one, and the
// connection ends owing nothing.
func TestOwnReadHandoverTrickledRepliesGoToOwnCallers(t *testing.T) {
	for _, wait := range []time.Duration{time.Nanosecond, 50 * time.Microsecond} {
		t.Run("OwnReadWait="+wait.String(), func(t *testing.T) { trickledRepliesGoToOwnCallers(t, wait) })
	}
}

// trickledRepliesGoToOwnCallers runs
// TestOwnReadHandoverTrickledRepliesGoToOwnCallers with OwnReadWait wait.
func trickledRepliesGoToOwnCallers(t *testing.T, wait time.Duration) {
	cfg := quiet
	cfg.OwnReadWait = wait
	c, p := startTCP(t, cfg)
	warm(t, c, p)
	push := []byte(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n")
	go func() { // the server: each ECHO's reply a byte at a time
		n := 0
		for cmd := range p.cmds {
			word, _ := strings.CutPrefix(cmd, "ECHO ")
			reply := bulk(word)
			if n++; n%3 == 0 {
				reply = append(push[:len(push):len(push)], reply...)
			}
			for i := range reply {
				if _, err := p.conn.Write(reply[i : i+1]); err != nil {
					return
				}
			}
		}
	}()
	const goroutines, each = 2, 200
	var wg sync.WaitGroup
	var given atomic.Int64
	errs := make(chan string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 11))
			for i := range each {
				a := "g" + strconv.Itoa(g) + ":" + strconv.Itoa(i)
				b := a + "/2"
				f := newFrame(WantBytes, "ECHO", a)
				want := a
				if rnd.IntN(3) == 0 { // a unit of two replies
					f.Buf = append(f.Buf, cmd("ECHO", b)...)
					f.Replies = 2
					want = a + b
				}
				ctx, cancel := context.WithCancel(context.Background())
				switch rnd.IntN(8) { // half of them never cancelled
				case 1:
					cancel() // cancelled before the call
				case 2:
					go cancel() // cancelled during it
				case 3: // a context deadline already past
					ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				case 4: // a context deadline passing during the own read
					ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rnd.IntN(200))*time.Microsecond)
				}
				sent, err := c.Do(ctx, time.Time{}, f)
				cancel()
				gave, bad := ownOutcome(f, want, sent, err)
				if bad != "" {
					errs <- bad
					return
				}
				if gave != nil {
					given.Add(1)
				}
			}
		})
	}
	waitCallers(t, &wg, errs)
	t.Logf("%d callers gave up", given.Load())
	lastEchoIsOwn(t, c)
}

// TestOwnReaderConnectionEnds proves that a caller reading its own reply,
// whose context can never be cancelled or can be (OwnReadWait long), is
// not left waiting when the connection ends under it, whether the peer
// closes or the client closes: its frame fails with the connection's
// reason as possibly executed, and the connection dies with every
// goroutine gone.
func TestOwnReaderConnectionEnds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancellable bool
		reason      Reason
		end         func(c *Conn, p *tcpPeer)
	}{
		{"peer closes", false, Lost, func(_ *Conn, p *tcpPeer) { _ = p.conn.Close() }},
		{"peer closes, cancellable", true, Lost, func(_ *Conn, p *tcpPeer) { _ = p.conn.Close() }},
		{"client closes", false, Closed, func(c *Conn, _ *tcpPeer) { _ = c.Close() }},
		{"client closes, cancellable", true, Closed, func(c *Conn, _ *tcpPeer) { _ = c.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet
			cfg.OwnReadWait = time.Hour
			c, p := startTCP(t, cfg)
			warm(t, c, p)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.cancellable {
				ctx, cancel = context.WithCancel(ctx)
			}
			defer cancel()
			f := newFrame(WantInt, "INCR", "n")
			ch := doAsync(c, ctx, time.Time{}, f)
			p.received(t)
			if r := readerOf(c); r != readerCaller {
				t.Fatalf("while INCR is outstanding the reader's role is %v, want the caller", r)
			}
			tc.end(c, p)
			if err := result(t, ch); err != nil {
				t.Fatalf("Do: %v", err)
			}
			if f.Err == nil || f.Err.Reason != tc.reason || f.Err.Evidence != PossiblyExecuted {
				t.Fatalf("got Err %v, want reason %v and possibly executed", f.Err, tc.reason)
			}
			<-c.Dead()
		})
	}
}

// TestRealServerLargeReplyHandedOverMidway proves that an ECHO of a
// megabyte by a caller with a cancellable context, whose own write the
// writer goroutine finishes and whose own read (OwnReadWait of 20µs) ends
// long before the reply has arrived, possibly in the middle of its bulk,
// reaches its own caller intact, call after call: the reader goroutine
// decodes it from the bytes already read and the rest.
func TestRealServerLargeReplyHandedOverMidway(t *testing.T) {
	cfg := quiet
	cfg.OwnReadWait = 20 * time.Microsecond
	c := dialRealConfig(t, cfg)
	val := make([]byte, 1<<20)
	for i := range 8 {
		for j := range val {
			val[j] = byte('a' + (i+j*7)%26)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f := newFrame(WantBytes, "ECHO", string(val))
		sent, err := c.Do(ctx, time.Time{}, f)
		cancel()
		if !sent || err != nil || f.Err != nil {
			t.Fatalf("ECHO %d: %v %v %v", i, sent, err, f.Err)
		}
		if string(f.Bytes) != string(val) {
			t.Fatalf("ECHO %d: got %d bytes that are not its own value", i, len(f.Bytes))
		}
		f.Release()
	}
}

// TestCancellableOwnReadHandsOverMidReply proves that when the own read of
// a caller whose context can be cancelled (and is not) ends in the middle
// of its frame's replies, the reader goroutine takes over the part already
// read and the caller gets its whole reply, its own, then the next caller
// gets its own: a single reply cut in its bulk, a unit of two replies cut
// between them or inside the second, and a reply preceded by a RESP3 push
// (no push handler).
func TestCancellableOwnReadHandsOverMidReply(t *testing.T) {
	push := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
	for _, tc := range []struct {
		name          string
		replies       int
		before, after string // the replies' bytes sent before and after the handover
		want          string
	}{
		{"bulk cut", 1, "$4\r\nmi", "ne\r\n", "mine"},
		{"unit cut between replies", 2, "$2\r\nab\r\n", "$2\r\ncd\r\n", "abcd"},
		{"unit cut in its second reply", 2, "$2\r\nab\r\n$2\r", "\ncd\r\n", "abcd"},
		{"push, then the reply cut", 1, push + "$4\r\nmi", "ne\r\n", "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet
			cfg.OwnReadWait = 50 * time.Millisecond
			c, p := startTCP(t, cfg)
			warm(t, c, p)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := newFrame(WantBytes, "GET", "a")
			if tc.replies == 2 {
				f.Buf = append(f.Buf, cmd("GET", "b")...)
				f.Replies = 2
			}
			ch := doAsync(c, ctx, time.Time{}, f)
			for range tc.replies {
				p.received(t)
			}
			p.send(t, []byte(tc.before))
			awaitRole(t, c, readerGoroutine) // the own read ended: handed over
			p.send(t, []byte(tc.after))
			if err := result(t, ch); err != nil || f.Err != nil || string(f.Bytes) != tc.want {
				t.Fatalf("Do: %v %v %q, want its own reply %q", err, f.Err, f.Bytes, tc.want)
			}
			f.Release()
			nextGetsItsOwn(t, c, p, nil)
		})
	}
}
