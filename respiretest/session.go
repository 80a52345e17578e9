package respiretest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/resp"
)

type slotKind uint8

const (
	slotForward     slotKind = iota // the reply comes from the backend
	slotReply                       // a fixed reply (injected, or an IDMP hit)
	slotDropBefore                  // close the connection here (also after the client's last frame)
	slotPassthrough                 // from here on, bytes pass through unpaired
	slotInternal                    // a proxy's own frame; never reaches the client
)

// slot is one frame's place in a session's reply order.
type slot struct {
	kind      slotKind
	counter   *cmdCounter
	rules     []*RuleHandle // rules that matched the frame, for Forwarded
	hold      *RuleHandle
	delay     time.Duration
	dropAfter bool
	// onReply, if set, sees the backend's reply (ok) or the loss of the
	// connection (!ok) before the slot becomes ready. It runs on the
	// backend reading goroutine, or on the closing one; v is borrowed.
	onReply func(v resp.Value, ok bool)
	end     int // end offset of the frame in the session's write buffer

	ready   chan struct{} // closed once reply is set
	reply   []byte
	replyAt time.Time
	drained chan struct{} // slotPassthrough: closed when the writer reaches it

	// Guarded by the session's pmu: pushes the server sent after this
	// slot's reply, to write after it, and whether it has been written.
	pushes  []byte
	written bool
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func fixedSlot(reply []byte) *slot {
	return &slot{kind: slotReply, reply: reply, replyAt: time.Now(), ready: closedChan}
}

// queueSize bounds the replies a session keeps in order before its reader
// stops reading from the client (after flushing to the backend).
const queueSize = 1024

// flushSize is the write buffer size above which the reader flushes to the
// backend before reading on.
const flushSize = 64 << 10

// session proxies one client connection over its own backend connection.
// Three goroutines: readLoop (client frames -> rules -> backend), backendLoop
// (backend replies -> slots, pushes -> client) and writeLoop (slots in frame
// order -> client).
type session struct {
	p       *Proxy
	client  net.Conn
	backend net.Conn

	done        chan struct{}
	closeOnce   sync.Once
	backendGone chan struct{} // closed when the backend connection has ended
	goneOnce    sync.Once
	wmu         sync.Mutex // serialises writes to client
	queue       chan *slot

	fmu    sync.Mutex
	fifo   []*slot // forwarded frames awaiting their backend reply
	failed bool    // the session closed: fifo is drained

	// Push frames keep their place after the replies the server sent
	// before them, unless the writer waits on a rule (Hold, Delay).
	answered *slot // backendLoop's own: the last slot the backend answered
	pmu      sync.Mutex
	deferred []*slot // slots with pushes to write after their reply
	stalled  bool    // the writer waits on a rule: pushes go at once

	// readLoop's own state.
	ahead       []byte          // read from the client during a partition, not yet parsed
	aheadErr    error           // the error that ended ahead
	inflight    chan readResult // a client read started during a partition
	wbuf        []byte
	unflushed   []*slot
	db          int
	inMulti     bool
	passthrough bool
}

func newSession(p *Proxy, client, backend net.Conn) *session {
	return &session{
		p:           p,
		client:      client,
		backend:     backend,
		done:        make(chan struct{}),
		backendGone: make(chan struct{}),
		queue:       make(chan *slot, queueSize),
	}
}

// run serves the session and returns when it has ended.
func (s *session) run() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.backendLoop() }()
	go func() { defer wg.Done(); s.writeLoop() }()
	s.readLoop()
	<-s.done
	if s.inflight != nil {
		<-s.inflight // the client is closed: the read ends
	}
	wg.Wait()
}

// close ends the session: both connections close and every frame still
// waiting for a backend reply learns it never comes. During a partition it
// first waits for the heal (or the proxy's Close): a close must not cross
// the partition either.
func (s *session) close() {
	s.closeOnce.Do(func() {
		s.p.waitHealed(nil)
		close(s.done)
		s.client.Close()
		s.backend.Close()
		s.failFIFO()
	})
}

// endBackend records that the backend connection has ended. The session
// lives on until the writer has delivered every reply that did arrive (a
// server that answers QUIT and closes is seen to do so), then closes.
func (s *session) endBackend() {
	s.goneOnce.Do(func() {
		s.backend.Close()
		s.failFIFO()
		close(s.backendGone)
	})
}

// failFIFO tells every frame still waiting for a backend reply that none
// will come.
func (s *session) failFIFO() {
	s.fmu.Lock()
	s.failed = true
	lost := s.fifo
	s.fifo = nil
	s.fmu.Unlock()
	for _, sl := range lost {
		if sl.onReply != nil {
			sl.onReply(resp.Value{}, false)
		}
	}
}

func (s *session) readLoop() {
	rd := resp.NewReader(flushingReader{s})
	var args [][]byte
	for {
		if len(s.wbuf) >= flushSize && !s.flush() {
			return
		}
		var raw []byte
		var err error
		args, raw, err = rd.ReadCommand(args[:0])
		if (err == io.EOF || err == io.ErrUnexpectedEOF) && !s.passthrough {
			// The client has sent its last frame (it closed, or shut its
			// writing half): like a server, deliver the replies of the
			// frames that came, then close.
			if s.flush() {
				s.enqueue(&slot{kind: slotDropBefore, ready: closedChan})
			}
			return
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			// Passing through, the proxy cannot tell which replies are
			// still to come: it passes the client's end on to the server,
			// whose replies then flow until it closes.
			if cw, ok := s.backend.(interface{ CloseWrite() error }); ok && s.flush() && cw.CloseWrite() == nil {
				return
			}
			s.close()
			return
		}
		var pe *resp.ProtocolError
		if errors.As(err, &pe) && !s.passthrough {
			// Like a server: the replies to the frames before, then a
			// protocol error, then the close.
			if s.flush() && s.enqueue(fixedSlot(resp.AppendError(nil, "ERR Protocol error: "+pe.Reason))) {
				s.enqueue(&slot{kind: slotDropBefore, ready: closedChan})
			}
			return
		}
		if err != nil {
			s.flush()
			s.close()
			return
		}
		if len(args) == 0 {
			continue // an empty inline line: Redis ignores it too
		}
		name := ascii.Upper(string(args[0]))
		ctr := s.p.counter(name)
		ctr.received.Add(1)
		if s.passthrough {
			if !s.send(&slot{counter: ctr}, raw, false) {
				return
			}
			continue
		}
		act, matched := s.p.decide(name, args, s.flushBeforeFire)
		kind := actPass
		if act != nil {
			kind = act.rule.Action.kind
		}
		switch kind {
		case actDropBefore:
			s.enqueue(&slot{kind: slotDropBefore, ready: closedChan})
			s.flush()
			return
		case actInject:
			if !s.enqueue(fixedSlot(act.rule.Action.reply)) {
				return
			}
			continue
		}
		if s.p.engine && !isASCII(args[0]) {
			// The engine upper-cases names with Unicode rules ("pıng"
			// runs PING); Redis folds a-z only, so no command name
			// with another byte is known.
			if !s.enqueue(fixedSlot(resp.AppendError(nil, unknownCommand(string(args[0]), copyArgs(args[1:]))))) {
				return
			}
			continue
		}
		s.track(name, args) // only frames that go on count
		sl := &slot{kind: slotForward, counter: ctr, rules: matched, ready: make(chan struct{})}
		switch kind {
		case actHold:
			sl.hold = act
		case actDelay:
			sl.delay = act.rule.Action.delay
		case actDropAfter, actLoseReply:
			sl.dropAfter = true
		}
		ok := true
		switch {
		case s.p.idmp != nil && (name == "XADD" || name == "XCFGSET"):
			ok = s.idmpFrame(name, args, raw, sl)
		case passthroughCommands[name] || repliesOff(name, args):
			sl.kind = slotPassthrough
			sl.drained = make(chan struct{})
			s.passthrough = true
			ok = s.send(sl, raw, true)
		default:
			ok = s.send(sl, raw, true)
		}
		if !ok {
			return
		}
		if kind == actDropAfter && !s.passthrough {
			// (On SUBSCRIBE and MONITOR it has no effect: the connection
			// passes through from here on.)
			s.flush()
			return
		}
	}
}

// flushingReader reads from the client, first flushing what the session
// buffered for the backend: frames are forwarded no later than the moment
// the proxy would wait for more input. During a partition it reads on
// and flushes at the heal.
type flushingReader struct{ s *session }

func (r flushingReader) Read(p []byte) (int, error) {
	s := r.s
	for len(s.ahead) == 0 && s.aheadErr == nil {
		if pt := s.p.partition.Load(); pt != nil && len(s.wbuf) > 0 {
			if !s.readAhead() {
				s.close() // ends a read in flight
				return 0, net.ErrClosed
			}
			continue
		}
		if !s.flush() {
			return 0, net.ErrClosed
		}
		if s.inflight == nil {
			return s.client.Read(p)
		}
		s.takeRead(<-s.inflight)
	}
	if len(s.ahead) > 0 {
		n := copy(p, s.ahead)
		s.ahead = s.ahead[n:]
		if len(s.ahead) == 0 {
			s.ahead = nil
		}
		return n, nil
	}
	return 0, s.aheadErr
}

// passthroughCommands switch a connection to unpaired byte forwarding.
// The unsubscribe family is among them: outside subscribe mode it gets a
// reply per channel in RESP2, and none but push frames in RESP3.
var passthroughCommands = map[string]bool{
	"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true, "MONITOR": true,
	"UNSUBSCRIBE": true, "PUNSUBSCRIBE": true, "SUNSUBSCRIBE": true,
}

// repliesOff reports whether the frame is CLIENT REPLY OFF or SKIP, after
// which the server sends no reply to some frames: the proxy can no longer
// pair replies with frames, so the connection passes through.
func repliesOff(name string, args [][]byte) bool {
	if name != "CLIENT" || len(args) != 3 || ascii.Upper(string(args[1])) != "REPLY" {
		return false
	}
	mode := ascii.Upper(string(args[2]))
	return mode == "OFF" || mode == "SKIP"
}

// track follows the connection state that the IDMP emulation needs.
func (s *session) track(name string, args [][]byte) {
	switch name {
	case "SELECT":
		if len(args) == 2 {
			if n, err := strconv.Atoi(string(args[1])); err == nil {
				s.db = n
			}
		}
	case "RESET":
		s.db, s.inMulti = 0, false
	case "MULTI":
		s.inMulti = true
	case "EXEC", "DISCARD":
		s.inMulti = false
	}
	if s.p.idmp != nil {
		s.p.idmp.observe(s.db, name, args)
	}
}

// decide counts the frame for every rule and returns the rule that acts on
// it (nil: forward unchanged) and the rules it matched. Before the first
// rule fires it calls beforeFire, which flushes the frames read so far: by
// the time a test hears of a frame, every earlier frame of its connection
// has been written to the backend.
func (p *Proxy) decide(name string, args [][]byte, beforeFire func()) (act *RuleHandle, matched []*RuleHandle) {
	p.mu.Lock()
	rules := p.rules
	p.mu.Unlock()
	for _, h := range rules {
		if h.removed.Load() || !h.matches(name, args) {
			continue
		}
		matched = append(matched, h)
		if !h.occurrence() {
			continue
		}
		if h.rule.Action.kind != actPass {
			if act != nil {
				continue
			}
			act = h
		}
		if beforeFire != nil {
			beforeFire()
			beforeFire = nil
		}
		h.fire(args)
	}
	return act, matched
}

// send queues a frame for the backend. With reply set, sl takes its place
// in the reply order; otherwise (passthrough frames) only counts are kept.
// It reports false when the session has closed.
func (s *session) send(sl *slot, raw []byte, reply bool) bool {
	if reply {
		s.fmu.Lock()
		if s.failed {
			s.fmu.Unlock()
			if sl.onReply != nil {
				sl.onReply(resp.Value{}, false)
			}
			return false
		}
		s.fifo = append(s.fifo, sl)
		s.fmu.Unlock()
	}
	s.wbuf = append(s.wbuf, raw...)
	sl.end = len(s.wbuf)
	s.unflushed = append(s.unflushed, sl)
	if reply && sl.kind != slotInternal {
		return s.enqueue(sl)
	}
	return true
}

// flush writes the buffered frames to the backend. Frames are counted as
// forwarded just before the write (so a reply can never be seen before its
// count, and a frame a partition holds is not counted); a failed write
// takes back the count of every frame whose last byte was not written. It
// reports false when the session has closed.
func (s *session) flush() bool {
	if len(s.wbuf) == 0 {
		return true
	}
	if !s.p.waitHealed(s.done) {
		return false
	}
	for _, sl := range s.unflushed {
		if sl.counter != nil {
			sl.counter.forwarded.Add(1)
		}
		for _, r := range sl.rules {
			r.forwarded.Add(1)
		}
	}
	n, err := s.backend.Write(s.wbuf)
	if err != nil {
		for _, sl := range s.unflushed {
			if sl.end <= n {
				continue
			}
			if sl.counter != nil {
				sl.counter.forwarded.Add(-1)
			}
			for _, r := range sl.rules {
				r.forwarded.Add(-1)
			}
		}
	}
	clear(s.unflushed)
	s.unflushed = s.unflushed[:0]
	if cap(s.wbuf) > 4*flushSize {
		s.wbuf = nil
	} else {
		s.wbuf = s.wbuf[:0]
	}
	if err != nil {
		s.endBackend()
		return false
	}
	return true
}

// enqueue gives sl its place in the reply order. It flushes before it
// would block, so the writer never waits for a frame still in wbuf.
func (s *session) enqueue(sl *slot) bool {
	select {
	case s.queue <- sl:
		return true
	default:
	}
	if !s.flush() {
		return false
	}
	select {
	case s.queue <- sl:
		return true
	case <-s.done:
		return false
	}
}

func (s *session) pop() *slot {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if len(s.fifo) == 0 {
		return nil
	}
	sl := s.fifo[0]
	s.fifo[0] = nil
	s.fifo = s.fifo[1:]
	return sl
}

func (s *session) backendLoop() {
	rd := resp.NewReader(s.backend)
	rawMode := false
	for {
		v, raw, err := rd.ReadValueRaw()
		if err != nil {
			s.endBackend()
			return
		}
		if rawMode || v.Type == resp.Push {
			if !rawMode && s.deferPush(raw) {
				continue
			}
			if !s.writeClient(raw) {
				return
			}
			continue
		}
		sl := s.pop()
		if sl == nil {
			s.endBackend() // a reply nobody asked for: stop listening
			return
		}
		if sl.onReply != nil {
			sl.onReply(v, true)
		}
		if sl.kind == slotPassthrough {
			select {
			case <-sl.drained:
			case <-s.done:
				return
			}
			if !s.writeClient(raw) {
				return
			}
			rawMode = true
			continue
		}
		sl.reply = bytes.Clone(raw)
		sl.replyAt = time.Now()
		if sl.kind == slotForward {
			s.answered = sl
		}
		close(sl.ready)
	}
}

// deferPush keeps a push frame to write after the last reply the backend
// sent, if the writer has yet to write that reply and waits on no rule.
func (s *session) deferPush(raw []byte) bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	sl := s.answered
	if sl == nil || sl.written || s.stalled {
		return false
	}
	if sl.pushes == nil {
		s.deferred = append(s.deferred, sl)
	}
	sl.pushes = append(sl.pushes, raw...)
	return true
}

// takePushes returns the pushes deferred behind sl so far.
func (s *session) takePushes(sl *slot) []byte {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p := sl.pushes
	if p != nil {
		sl.pushes = sl.pushes[:0:0] // still listed in deferred
	}
	return p
}

// written marks the slots of a batch written and writes the pushes
// deferred behind them meanwhile. It holds pmu while it writes, so that
// no later push overtakes them. It reports false when the session has
// closed.
func (s *session) written(batch []*slot) bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	var p []byte
	for _, sl := range batch {
		sl.written = true
		if sl.pushes != nil {
			p = append(p, sl.pushes...)
			sl.pushes = nil
			s.deferred = slices.DeleteFunc(s.deferred, func(d *slot) bool { return d == sl })
		}
	}
	return len(p) == 0 || s.writeClient(p)
}

// stall tells that the writer waits on a rule, and writes every push
// deferred so far: while the writer waits, pushes go at once. unstall
// ends the wait. It reports false when the session has closed.
func (s *session) stall() bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.stalled = true
	var p []byte
	for _, sl := range s.deferred {
		p = append(p, sl.pushes...)
		sl.pushes = nil
	}
	clear(s.deferred)
	s.deferred = s.deferred[:0]
	return len(p) == 0 || s.writeClient(p)
}

func (s *session) unstall() {
	s.pmu.Lock()
	s.stalled = false
	s.pmu.Unlock()
}

func (s *session) writeClient(b []byte) bool {
	if !s.p.waitHealed(s.done) {
		s.close()
		return false
	}
	s.wmu.Lock()
	_, err := s.client.Write(b)
	s.wmu.Unlock()
	if err != nil {
		s.close()
		return false
	}
	return true
}

// plain reports whether sl is ready and needs nothing but writing.
func (sl *slot) plain() bool {
	if sl.kind != slotForward && sl.kind != slotReply {
		return false
	}
	if sl.hold != nil || sl.delay > 0 || sl.dropAfter {
		return false
	}
	select {
	case <-sl.ready:
		return true
	default:
		return false
	}
}

func (s *session) writeLoop() {
	var buf []byte
	var batch []*slot
	var next *slot
	for {
		sl := next
		next = nil
		if sl == nil {
			select {
			case sl = <-s.queue:
			default:
				select {
				case sl = <-s.queue:
				case <-s.done:
					return
				case <-s.backendGone:
					select {
					case sl = <-s.queue:
					default:
						s.close() // every reply that came is delivered
						return
					}
				}
			}
		}
		if sl.kind == slotPassthrough {
			// From here on backendLoop writes; end with the backend.
			close(sl.drained)
			select {
			case <-s.backendGone:
				s.close()
			case <-s.done:
			}
			return
		}
		select {
		case <-sl.ready:
		default:
			select {
			case <-sl.ready:
			case <-s.done:
				return
			case <-s.backendGone:
				select {
				case <-sl.ready:
				default:
					s.close() // this reply will never come
					return
				}
			}
		}
		if sl.kind == slotDropBefore {
			s.close()
			return
		}
		if sl.hold != nil {
			select {
			case <-sl.hold.released:
			default:
				if !s.stall() {
					return
				}
				select {
				case <-sl.hold.released:
					s.unstall()
				case <-s.done:
					return
				}
			}
		}
		if sl.delay > 0 {
			if wait := time.Until(sl.replyAt.Add(sl.delay)); wait > 0 {
				if !s.stall() {
					return
				}
				t := time.NewTimer(wait)
				select {
				case <-t.C:
					s.unstall()
				case <-s.done:
					t.Stop()
					return
				}
			}
		}
		if sl.dropAfter {
			s.close()
			return
		}
		// Batch the replies that are ready behind this one, each followed
		// by the pushes the server sent after it.
		batch = append(batch[:0], sl)
		buf = append(append(buf[:0], sl.reply...), s.takePushes(sl)...)
	more:
		for len(buf) < flushSize {
			select {
			case n := <-s.queue:
				if !n.plain() {
					next = n
					break more
				}
				batch = append(batch, n)
				buf = append(append(buf, n.reply...), s.takePushes(n)...)
			default:
				break more
			}
		}
		if !s.writeClient(buf) {
			return
		}
		// Pushes that came during the write follow it.
		ok := s.written(batch)
		clear(batch)
		if !ok {
			return
		}
		if cap(buf) > 4*flushSize {
			buf = nil
		}
	}
}

// isASCII reports whether b has no byte above 0x7f.
func isASCII[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}
