package respire

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/respire-go/respire/resp"
)

// dispatch handles one value from the server; it reports false when the
// subscription closed while delivering.
func (s *Subscription) dispatch(v resp.Value) bool {
	if v.IsError() {
		if s.redirected {
			return true // out of step with s.owed: see redirected
		}
		if s.c.isCluster() && (bytes.HasPrefix(v.Str, []byte("MOVED ")) || bytes.HasPrefix(v.Str, []byte("ASK "))) {
			// A shard channel's slot is elsewhere: reconnect to its
			// owner. The redirect is routing, not the callers' failure:
			// the reconnection subscribes the whole set again, and its
			// confirmations answer the calls still waiting. Replies
			// already read behind it answer nobody.
			s.redirected = true
			s.dropForMove(s.redirect(v.Str))
			return true
		}
		if ev := s.refused(v.Str); ev != nil && !s.emit(*ev) {
			return false
		}
		return s.gapDue()
	}
	if !v.Type.Aggregate() {
		if v.Type == resp.SimpleString && bytes.EqualFold(v.Str, []byte("PONG")) {
			s.answered(func(r *owedReply) bool { return r.ping }) // RESP3, or RESP2 outside subscribed mode
		}
		return true
	}
	if len(v.Elems) < 2 {
		return true
	}
	e := v.Elems
	str := func(i int) string { return string(e[i].TextBytes()) }
	switch kind := strings.ToLower(str(0)); kind {
	case "pong":
		s.answered(func(r *owedReply) bool { return r.ping })
	case "message", "smessage":
		if len(e) == 3 {
			return s.emit(Message{Channel: str(1), Payload: str(2), Shard: kind == "smessage"})
		}
	case "pmessage":
		if len(e) == 4 {
			return s.emit(Message{Pattern: str(1), Channel: str(2), Payload: str(3)})
		}
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		if e[1].IsNull() || s.redirected {
			return true // UNSUBSCRIBE with nothing subscribed; or see redirected
		}
		k := confirmKinds[kind]
		k.name = str(1)
		confirmed := s.answered(func(r *owedReply) bool { return !r.ping && r.confirmKey == k })
		if !confirmed && kind == "sunsubscribe" && s.subscribed(kindShard, k.name) {
			// The server dropped a shard channel nobody unsubscribed: its
			// slot moved. Reconnecting reaches the new owner, with a Gap.
			s.dropForMove(errors.New("respire: the server unsubscribed shard channel " + strconv.Quote(k.name) + " on its own: its slot moved"))
		}
		return s.gapDue()
	}
	return true // anything unknown: not a message
}

// emit delivers m, or holds it while the gap it follows waits for the
// server's answers to the reconnection.
func (s *Subscription) emit(m Message) bool {
	if s.gap != nil {
		s.held = append(s.held, m)
		return true
	}
	return s.deliver(m)
}

// gapDue delivers the pending gap event, and the events held behind it,
// once the server has answered every name the reconnection sent; it
// reports false when the subscription closed while delivering.
func (s *Subscription) gapDue() bool {
	if s.gap == nil {
		return true
	}
	s.mu.Lock()
	left := s.resub
	s.mu.Unlock()
	if left > 0 {
		return true
	}
	return s.releaseGap()
}

// releaseGap delivers the pending gap event and the events held behind it.
func (s *Subscription) releaseGap() bool {
	ev, held := s.gap, s.held
	s.gap, s.held = nil, nil
	if !s.deliver(*ev) {
		return false
	}
	for _, m := range held {
		if !s.deliver(m) {
			return false
		}
	}
	return true
}

// deliver puts m on the channel, waiting while it is full.
func (s *Subscription) deliver(m Message) bool {
	select {
	case s.msgs <- m:
		return true
	case <-s.done:
		return false
	}
}

// dropForMove closes the connection of a subscription whose slot moved,
// for cause; the reconnection first waits for the new slot map.
func (s *Subscription) dropForMove(cause error) {
	if s.dropped == nil {
		s.dropped = cause
	}
	s.moved.Store(true)
	s.mu.Lock()
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.mu.Unlock()
}

// redirect is the error of a MOVED or ASK reply (text): a
// [*ServerError] of the command whose reply it took the place of.
func (s *Subscription) redirect(text []byte) error {
	command := "SSUBSCRIBE"
	s.mu.Lock()
	for _, r := range s.owed {
		if !r.ping {
			command = r.command()
			break
		}
	}
	s.mu.Unlock()
	return newServerError(command, text)
}

// subscribed reports whether name is in the desired set of kind.
func (s *Subscription) subscribed(kind subKind, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sets[kind][name]
	return ok
}

// answered takes the oldest owed reply when it is the one that arrived
// (is reports so), answers its calls, and reports whether it did. Any
// other value (a sunsubscribe the server sent on its own) owes nothing.
func (s *Subscription) answered(is func(*owedReply) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	// PING replies are known by their shape; should a server answer one
	// in a shape not known here, the replies behind it still find their
	// calls.
	i := 0
	for i < len(s.owed) && s.owed[i].ping && !is(&s.owed[i]) {
		i++
	}
	if i == len(s.owed) || !is(&s.owed[i]) {
		return false
	}
	for _, w := range s.owed[i].waits {
		w <- nil
	}
	if s.owed[i].resub {
		s.resub-- // the pings skipped before it are never a reconnection's
	}
	s.owed = s.owed[i+1:]
	return true
}

// refused handles an error reply: it belongs to the oldest owed reply.
// A refused subscription leaves the set (unless a later command asks for
// the name again), so that reconnections do not send it again. When no
// call waits to hear the refusal (a reconnection sent the command), it
// returns the gap event that reports the name's loss.
func (s *Subscription) refused(text []byte) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.owed) == 0 {
		return nil
	}
	r := s.owed[0]
	s.owed = s.owed[1:]
	if r.resub {
		s.resub--
	}
	err := newServerError(r.command(), text)
	for _, w := range r.waits {
		w <- err
	}
	if r.ping || r.unsub {
		return nil
	}
	for _, later := range s.owed {
		if !later.ping && later.kind == r.kind && later.name == r.name {
			return nil
		}
	}
	delete(s.sets[r.kind], r.name)
	if len(r.waits) > 0 {
		return nil
	}
	ev := &Message{Gap: true, Err: err}
	switch r.kind {
	case kindPattern:
		ev.Pattern = r.name
	case kindShard:
		ev.Channel, ev.Shard = r.name, true
	default:
		ev.Channel = r.name
	}
	return ev
}
