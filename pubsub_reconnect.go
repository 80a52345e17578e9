package respire

import (
	"context"
	"math/rand/v2"
	"net"
	"time"

	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/resp"
)

// reconnect waits out the backoff, dials, starts writing the whole set
// again and leaves the gap event for serve to deliver once the server
// answered (see Subscription.gap). It returns nil when the subscription
// closed.
func (s *Subscription) reconnect(cause error) (net.Conn, *resp.Reader) {
	s.mu.Lock()
	s.setConnLocked(nil)
	s.mu.Unlock()
	if s.gap != nil {
		// The previous reconnection's connection ended before the server
		// answered it. When it delivered nothing, its gap is this one,
		// with the first cause; otherwise its events go out first.
		if len(s.held) == 0 {
			cause, s.gap = s.gap.Err, nil
		} else if !s.releaseGap() {
			return nil, nil
		}
	}
	policy := s.c.reconnectPolicy()
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(max(policy.Delay(attempt, rand.Float64()), minReconnectDelay))
		select {
		case <-s.done:
			t.Stop()
			return nil, nil
		case <-t.C:
		}
		ctx, cancel := cancelOn(context.Background(), s.done)
		nc, rd, id, err := s.dial(ctx, "SUBSCRIBE") // its error is not reported
		cancel()
		if err != nil {
			// The node may be gone (a failover): the next attempt learns
			// the current map first, even when nothing else asks for it.
			s.moved.Store(true)
			continue
		}
		// The write lock before mu, as in change: a change or PING
		// holding it is writing on the old connection, which serve
		// closed before returning, or on none, so it comes soon; and
		// Close ends the wait (lockWrite watches done).
		if s.lockWrite(nil) != nil {
			_ = nc.Close()
			return nil, nil
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.unlockWrite()
			_ = nc.Close()
			return nil, nil
		}
		// The replies owed on the old connection never come. The new
		// connection is subscribed to none of the names removed
		// meanwhile: calls waiting to hear that (or waiting for a
		// subscription that was removed since) are answered now; calls
		// waiting for a name still in the set wait for its confirmation
		// on the new connection.
		carry := map[confirmKey][]chan error{}
		for _, r := range s.owed {
			if r.ping {
				continue
			}
			if _, want := s.sets[r.kind][r.name]; r.unsub || !want {
				for _, w := range r.waits {
					w <- nil
				}
				continue
			}
			carry[r.confirmKey] = append(carry[r.confirmKey], r.waits...)
		}
		s.owed = s.owed[:0]
		var b []byte
		for kind, set := range s.sets {
			for n := range set {
				k := confirmKey{kind: subKind(kind), name: n}
				s.owed = append(s.owed, owedReply{confirmKey: k, resub: true, waits: carry[k]})
				b = append(b, encodeCommand(subCommands[kind].sub, []string{n})...)
			}
		}
		s.resub = len(s.owed)
		s.setConnLocked(nc)
		s.id = id
		// As in change: the write lock is held from the snapshot of the
		// set to its write, so that a Subscribe or Unsubscribe applied
		// after it reaches the server after it (an Unsubscribe sent
		// first would leave the name subscribed on the server).
		s.mu.Unlock()
		if len(b) == 0 {
			s.unlockWrite()
		} else {
			// Written while serve reads the answers: a set larger than
			// the link buffers would otherwise wait for a server that
			// stops reading while its replies wait (or drops the
			// connection at its output limit). A failed write closes nc,
			// and serve reconnects; the write lock goes with the write.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.unlockWrite()
				_ = s.writeLocked(context.Background(), nc, b)
			}()
		}
		// The gap event waits for the server's answers to the names
		// sent (read by serve): a message published once the consumer
		// has it is received.
		s.gap = &Message{Gap: true, Err: cause}
		if len(b) == 0 && !s.releaseGap() {
			return nil, nil
		}
		return nc, rd
	}
}

// minReconnectDelay is the least time between a subscription's dials: a
// policy's delays may be as short as a nanosecond, and unlike a command's
// retries the reconnect loop has no attempt bound.
const minReconnectDelay = 10 * time.Millisecond

// reconnectPolicy is the backoff of a subscription's reconnects: the
// client's retry policy, or its defaults when the client has none (or
// disabled delays, which would make a reconnect loop spin).
func (c *Client) reconnectPolicy() retry.Policy {
	if c.cfg.policy.Ceiling(1) > 0 {
		return c.cfg.policy
	}
	p, _ := retry.Compile(retry.Settings{})
	return p
}
