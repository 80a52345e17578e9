package respiretest

import "sync"

// Partition is a network partition injected by [Proxy.Partition]: while it
// lasts, no byte crosses the proxy in either direction and new client
// connections are held, but no connection is closed, as when a link goes
// silently dead. Its methods are safe for concurrent use.
type Partition struct {
	p        *Proxy
	healed   chan struct{}
	healOnce sync.Once
}

// Partition starts a partition, or returns the one in force. Bytes the
// client writes are read and kept (at least 64 KiB a connection, as a
// socket buffer would take them); bytes the server replies are kept;
// nothing is forwarded until [Partition.Heal], when the kept bytes flow on
// in order, as TCP delivers them once a link returns. A rule that
// applies to a frame read behind others during the partition fires at
// the heal (see [RuleHandle.Received]); the proxy reads on meanwhile. A
// connection that either side closes during the partition ends at the
// heal (or at [Proxy.Close]), never before, so a client sees only
// silence. New client
// connections wait at the door like dials held by [Proxy.HoldDials].
func (p *Proxy) Partition() *Partition {
	for {
		if cur := p.partition.Load(); cur != nil {
			return cur
		}
		pt := &Partition{p: p, healed: make(chan struct{})}
		if p.partition.CompareAndSwap(nil, pt) {
			return pt
		}
	}
}

// Heal ends the partition: held bytes and connections proceed. Healing
// twice does nothing.
func (pt *Partition) Heal() {
	pt.healOnce.Do(func() {
		pt.p.partition.CompareAndSwap(pt, nil)
		close(pt.healed)
	})
}

// Healed returns a channel closed when the partition has healed.
func (pt *Partition) Healed() <-chan struct{} { return pt.healed }

// waitHealed blocks while a partition is in force. It reports false when
// done closes or the proxy closes first.
func (p *Proxy) waitHealed(done <-chan struct{}) bool {
	for {
		pt := p.partition.Load()
		if pt == nil {
			return true
		}
		select {
		case <-pt.healed:
		case <-done:
			return false
		case <-p.done:
			return false
		}
	}
}

// flushBeforeFire writes the frames read so far to the backend before a
// rule fires. During a partition it reads ahead meanwhile (readAhead), so
// the client is read on while the rule waits for the heal.
func (s *session) flushBeforeFire() {
	if s.p.partition.Load() != nil && len(s.wbuf) > 0 {
		s.readAhead()
	}
	s.flush()
}

// readResult is what a read in flight got.
type readResult struct {
	b   []byte
	err error
}

// readAhead reads from the client while a partition keeps the frames in
// wbuf from the backend, as a kernel keeps reading a dead link's bytes (an
// in-memory client's writes would block otherwise), into ahead, which the
// reader consumes later. Each read runs on a goroutine of its own, so the
// heal is seen at once; a read still in flight at the heal is taken up by
// the next Read. It returns at the heal, once ahead holds flushSize bytes
// (like a full socket buffer) or the client's read failed, and reports
// false when the session or the proxy closed first.
func (s *session) readAhead() bool {
	for len(s.ahead) < flushSize && s.aheadErr == nil {
		pt := s.p.partition.Load()
		if pt == nil {
			return true
		}
		if s.inflight == nil {
			buf, read := make([]byte, 16<<10), make(chan readResult, 1)
			go func() {
				n, err := s.client.Read(buf)
				read <- readResult{buf[:n], err}
			}()
			s.inflight = read
		}
		select {
		case r := <-s.inflight:
			s.takeRead(r)
		case <-pt.healed:
		case <-s.done:
			return false
		case <-s.p.done:
			return false
		}
	}
	return true
}

// takeRead keeps what the read in flight got.
func (s *session) takeRead(r readResult) {
	s.inflight = nil
	s.ahead = append(s.ahead, r.b...)
	s.aheadErr = r.err
}
