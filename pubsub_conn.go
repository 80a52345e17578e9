package respire

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// ping sends a keepalive PING on nc, the current connection, and notes
// the reply it is owed; it gives up when stop closes.
func (s *Subscription) ping(nc net.Conn, b []byte, stop <-chan struct{}) error {
	if err := s.lockWrite(stop); err != nil {
		return err
	}
	defer s.unlockWrite()
	s.mu.Lock()
	if s.conn != nc {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.owed = append(s.owed, owedReply{ping: true})
	s.mu.Unlock()
	return s.writeLocked(context.Background(), nc, b)
}

// pastDeadline is a write deadline that has passed: setting it ends a
// write in progress.
var pastDeadline = time.Unix(1, 0)

// writeLocked is write with the write lock held, also bounded by ctx: a
// server that stops reading cannot hold a caller past its context. A write
// that ctx ended may have sent part of b, so it fails and closes nc like
// any other failed write, and the reconnection sends the whole set again.
func (s *Subscription) writeLocked(ctx context.Context, nc net.Conn, b []byte) error {
	var dl time.Time // every write sets its own: an earlier ctx may have left one in the past
	if d := s.c.cfg.wire.HealthTimeout; d > 0 {
		dl = time.Now().Add(d)
	}
	if cdl, ok := ctx.Deadline(); ok && (dl.IsZero() || cdl.Before(dl)) {
		dl = cdl
	}
	_ = nc.SetWriteDeadline(dl)
	if ctx.Done() != nil {
		ended := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = nc.SetWriteDeadline(pastDeadline)
			close(ended)
		})
		defer func() {
			if !stop() {
				<-ended // it must not end the next write
			}
		}()
	}
	_, err := nc.Write(b)
	if err != nil {
		_ = nc.Close()
	}
	return err
}

// dial opens and prepares a connection of the subscription's own; its
// errors name command.
func (s *Subscription) dial(ctx context.Context, command string) (net.Conn, *resp.Reader, int64, error) {
	cfg := s.c.cfg.dedicatedWire()
	if s.c.topo != nil {
		// Each (re)connection asks the topology: after a failover or a
		// moved slot it reaches the node that serves now.
		if s.moved.Swap(false) {
			_ = s.c.topo.Refresh(ctx, true)
		}
		n, err := s.c.topo.Pick(s.slot, false)
		if err != nil {
			return nil, nil, 0, routeErr(command, s.slot, err)
		}
		cfg = n.Dedicated
	}
	nc, rd, _, id, err := wire.DialRaw(ctx, cfg)
	if err != nil {
		if s.c.topo != nil && ctx.Err() == nil {
			// The node may be gone, as when a shared connection is
			// lost: the next dial (this subscription's reconnect, or
			// the caller's next Subscribe) finds the current map.
			_ = s.c.topo.Refresh(context.Background(), false)
		}
		var we *wire.ConnError
		if errors.As(err, &we) {
			return nil, nil, 0, connError(command, we)
		}
		return nil, nil, 0, err
	}
	return nc, rd, id, nil
}

// cancelOn returns a context derived from ctx that is also cancelled
// when done closes. Its goroutine exits when cancel is called.
func cancelOn(ctx context.Context, done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// run reads the current connection until it ends, then reconnects, until
// the subscription closes; it closes the channel when it exits.
func (s *Subscription) run(nc net.Conn, rd *resp.Reader) {
	defer s.wg.Done()
	defer close(s.msgs)
	for {
		err := s.serve(nc, rd)
		if nc, rd = s.reconnect(err); nc == nil {
			return
		}
	}
}

// serve reads and dispatches nc's values until it fails, with a keepalive
// alongside.
func (s *Subscription) serve(nc net.Conn, rd *resp.Reader) error {
	s.lastRead.Store(time.Now().UnixNano())
	s.redirected, s.dropped = false, nil
	stop := make(chan struct{})
	var keep sync.WaitGroup
	if every := s.c.cfg.wire.IdlePing; every > 0 {
		keep.Go(func() { s.keepalive(nc, every, stop) })
	}
	defer func() {
		close(stop)
		_ = nc.Close()
		keep.Wait()
	}()
	// The keepalive sends a PING at most IdlePing after the last value
	// read (or the last PING), so a live server has said something within
	// IdlePing plus HealthTimeout of every read. The deadline covers only
	// reads: a reader waiting for room on the channel (a slow consumer)
	// is never mistaken for a silent server.
	silence := time.Duration(0)
	if s.c.cfg.wire.IdlePing > 0 && s.c.cfg.wire.HealthTimeout > 0 {
		silence = s.c.cfg.wire.IdlePing + s.c.cfg.wire.HealthTimeout
	}
	for {
		if silence > 0 {
			_ = nc.SetReadDeadline(time.Now().Add(silence))
		}
		v, err := rd.ReadValue()
		if err != nil && s.dropped != nil {
			return &lostError{err: s.dropped}
		}
		if err != nil {
			var ne net.Error
			if silence > 0 && errors.As(err, &ne) && ne.Timeout() {
				return &lostError{err: ErrHealthTimeout}
			}
			if errors.Is(err, resp.ErrProtocol) {
				// A malformed value, or one over MaxBulk: the connection
				// is reset, as every connection is, with ErrProtocol.
				return &lostError{err: protocolErr(err)}
			}
			return &lostError{err: err}
		}
		s.lastRead.Store(time.Now().UnixNano())
		if !s.dispatch(v) {
			return ErrClosed
		}
	}
}

// keepalive sends a PING once nothing was read, and no PING sent, for
// every: its timer is aimed at the moment that becomes true, so the PING
// is never late by a sampling period.
func (s *Subscription) keepalive(nc net.Conn, every time.Duration, stop <-chan struct{}) {
	t := time.NewTimer(every)
	defer t.Stop()
	ping := encodeCommand("PING", nil)
	var pinged time.Time
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := time.Now()
		due := time.Unix(0, s.lastRead.Load()).Add(every)
		if p := pinged.Add(every); p.After(due) {
			due = p
		}
		if !now.Before(due) {
			if s.ping(nc, ping, stop) != nil {
				return
			}
			pinged, due = now, now.Add(every)
		}
		t.Reset(due.Sub(now))
	}
}

// lostError is the cause a gap event carries: why the subscription's
// previous connection ended. It matches [ErrConnectionLost], and
// [ErrHealthTimeout] when the server fell silent, [ErrProtocol] when it
// sent a malformed or oversized value.
type lostError struct{ err error }

func (e *lostError) Error() string {
	return "respire: subscription connection lost: " + causeText(e.err, "")
}

func (e *lostError) Unwrap() error { return e.err }

func (e *lostError) Is(target error) bool { return target == ErrConnectionLost }
