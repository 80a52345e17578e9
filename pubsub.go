package respire

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// SubscriptionBuffer is the capacity of a [Subscription]'s channel.
const SubscriptionBuffer = 1024

// Message is one event of a [Subscription]: a published message, or a
// gap. It is a plain value that the library neither keeps nor changes once
// returned: safe for concurrent reads.
type Message struct {
	// Channel is the channel (or shard channel) the message was published
	// to.
	Channel string
	// Pattern is the pattern that matched Channel, for a message received
	// through PSubscribe; "" otherwise.
	Pattern string
	// Payload is the published message.
	Payload string
	// Shard reports a message published with SPUBLISH, received through
	// SSubscribe.
	Shard bool
	// Gap reports that the subscription lost its connection, reconnected
	// and subscribed again to everything: messages published in between
	// may have been lost. It comes once the server has answered every
	// name on the new connection, so a message published after the gap
	// event was received is delivered; a new connection lost before
	// that, having received nothing, adds no gap of its own (the next
	// gap carries the first cause). A gap event carries only Err, the
	// failure that ended the previous connection. A gap event that also
	// names a Channel (Shard for a shard channel) or a Pattern reports that the
	// server refused to subscribe to that name again on the new
	// connection: the name left the subscription, and Err is the
	// server's reply (a [*ServerError], such as NOPERM).
	Gap bool
	// Err is, for a gap event, why the previous connection ended; it
	// matches [ErrConnectionLost], and also [ErrHealthTimeout] when the
	// server fell silent (no reply to the keepalive PING), or
	// [ErrProtocol] when it sent a malformed value or a message larger
	// than [Options.MaxBulk] (that message is lost). On a Cluster client
	// whose shard channels' slot moved, it holds the node's MOVED reply
	// (a [*ServerError]), or says that the node unsubscribed a shard
	// channel on its own.
	Err error
}

// Subscription receives pub/sub messages on a connection of its own,
// never the shared one, so ordinary commands never wait behind pub/sub
// traffic and one subscription's messages never reach another.
//
// Messages arrive on [Subscription.Channel] in the order the server sent
// them. The channel holds [SubscriptionBuffer] events; when it is full the
// subscription stops reading its connection until the consumer catches
// up (lossless, and only this subscription stalls: other subscriptions and
// the shared connection go on). A consumer that falls so far behind that
// the server drops it (client-output-buffer-limit pubsub) sees a gap.
//
// When the connection is lost, the subscription reconnects with the
// retry policy's backoff (its defaults when the client has none; never
// less than 10 ms between dials),
// subscribes again to every channel, pattern and shard channel in its
// set, and, once the server has answered every one, delivers one event
// with Gap set before the messages of the new connection (those that
// arrive with the answers wait behind it). The connection sends a PING
// after [Options.IdlePingInterval] without a message and is treated as lost
// when, while the subscription waits for the server, nothing arrives for
// IdlePingInterval plus [Options.HealthTimeout] (either set to
// [NoTimeout] turns the check off). On a Sentinel or Cluster client each
// attempt picks the node again, and an attempt after a failed dial first
// asks for a new map. Reconnecting never ends by itself: it
// goes on, within the backoff's ceiling, until it succeeds or Close.
//
// On a Cluster client, a node that answers SSUBSCRIBE with MOVED or ASK
// (the slot map was out of date) is handled like a moved slot: the
// subscription reconnects to the slot's owner, and the waiting call
// returns once the owner confirmed; the subscription's first event is
// then a Gap.
//
// Subscribe and its kin change the set the subscription restores after a
// reconnect at once, even when their context ends before the server
// confirmed the change. Each name is sent in a command of its own, so
// that the server judges names one by one: a name it refuses (NOPERM
// under an ACL that restricts channels) fails the call that asked for
// it, with the server's [*ServerError], and leaves the set; the other
// names are subscribed, and later reconnections do not send it again.
//
// Confirmations are read in order with the messages: while the channel
// is full, a call that waits for one (Subscribe, Unsubscribe and their
// kin) waits until the consumer makes room. Called from the goroutine
// that drains the channel, such a call waits until its ctx ends; give it
// a deadline, or drain from another goroutine.
//
// Subscription confirmations and PING replies are handled inside; they
// never appear as messages. Its methods are safe for concurrent use.
// After [Subscription.Close] (or the client's Close), Subscribe,
// Unsubscribe and their kin fail with an error matching [ErrClosed],
// sending nothing.
type Subscription struct {
	c    *Client
	msgs chan Message
	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	mu   sync.Mutex
	sets [3]map[string]struct{} // the desired set per kind
	// owed is the replies the server owes, in the order their commands
	// were written on conn (or queued for the next connection while conn
	// is nil): each reply, a confirmation or an error, belongs to the
	// oldest.
	owed   []owedReply
	conn   net.Conn // the current connection, nil while reconnecting (set with setConnLocked)
	id     int64    // the server's id of conn
	closed bool

	wmu      sync.Mutex              // serialises writes to conn
	live     atomic.Pointer[connBox] // conn, for Close to end a write stuck on it without mu
	lastRead atomic.Int64            // unix nanoseconds of the last value read

	slot  int         // Cluster: the slot of the shard channels (SSubscribe); -1: any node
	moved atomic.Bool // the slot moved, or a dial failed: learn the map before reconnecting
	// redirected is set, by the goroutine that reads, when the current
	// connection answered MOVED or ASK: that reply took an owed reply's
	// place without answering it, so the replies behind it are out of
	// step with s.owed and are left to the reconnection.
	redirected bool
	// dropped is, when the goroutine that reads closed the current
	// connection itself (the slot moved), why: the cause its gap carries.
	dropped error
	// gap is the gap event of the last reconnection while the server has
	// not yet answered every name it sent (resub, under mu, counts those
	// still owed); held are the events read meanwhile, which follow it.
	// Only the goroutine that reads uses them.
	gap   *Message
	held  []Message
	resub int
}

// connBox holds a connection in an atomic pointer.
type connBox struct{ nc net.Conn }

// setConnLocked makes nc (nil: none) the current connection.
func (s *Subscription) setConnLocked(nc net.Conn) {
	s.conn = nc
	if nc == nil {
		s.live.Store(nil)
	} else {
		s.live.Store(&connBox{nc})
	}
}

// subKind is a family of subscriptions.
type subKind uint8

const (
	kindChannel subKind = iota // SUBSCRIBE, message
	kindPattern                // PSUBSCRIBE, pmessage
	kindShard                  // SSUBSCRIBE, smessage
)

var subCommands = [3]struct{ sub, unsub string }{
	{"SUBSCRIBE", "UNSUBSCRIBE"},
	{"PSUBSCRIBE", "PUNSUBSCRIBE"},
	{"SSUBSCRIBE", "SUNSUBSCRIBE"},
}

// confirmKinds maps a confirmation's first element to its family.
var confirmKinds = map[string]confirmKey{
	"subscribe": {kind: kindChannel}, "unsubscribe": {kind: kindChannel, unsub: true},
	"psubscribe": {kind: kindPattern}, "punsubscribe": {kind: kindPattern, unsub: true},
	"ssubscribe": {kind: kindShard}, "sunsubscribe": {kind: kindShard, unsub: true},
}

// confirmKey names a confirmation the server sends for one name.
type confirmKey struct {
	kind  subKind
	unsub bool
	name  string
}

// owedReply is one reply the server owes a subscription: the confirmation
// (or refusal) of one name, or a keepalive PING's reply. Each name
// travels in a command of its own, so the server refuses names one by
// one (an ACL that denies one channel refuses a whole SUBSCRIBE), and
// every error reply belongs to exactly one name.
type owedReply struct {
	confirmKey
	ping  bool
	resub bool         // sent by a reconnection (see Subscription.gap)
	waits []chan error // the calls waiting for it
}

// command is the name of the command that owes r.
func (r *owedReply) command() string {
	switch {
	case r.ping:
		return "PING"
	case r.unsub:
		return subCommands[r.kind].unsub
	}
	return subCommands[r.kind].sub
}

// encodeEach encodes one command per name.
func encodeEach(command string, names []string) []byte {
	var b []byte
	for _, n := range names {
		b = append(b, encodeCommand(command, []string{n})...)
	}
	return b
}

// Subscribe subscribes to channels on a new [Subscription]. It returns
// once the server has confirmed every channel, so a message published
// after it returns is received. No channel, or an empty name, is an
// [ErrInvalidArgument] and nothing is sent.
func (c *Client) Subscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.subscribe(ctx, kindChannel, channels)
}

// PSubscribe subscribes to glob patterns on a new [Subscription], like
// [Client.Subscribe].
func (c *Client) PSubscribe(ctx context.Context, patterns ...string) (*Subscription, error) {
	return c.subscribe(ctx, kindPattern, patterns)
}

// SSubscribe subscribes to shard channels (SPUBLISH, Redis 7) on a new
// [Subscription], like [Client.Subscribe].
func (c *Client) SSubscribe(ctx context.Context, shardChannels ...string) (*Subscription, error) {
	return c.subscribe(ctx, kindShard, shardChannels)
}

func (c *Client) subscribe(ctx context.Context, kind subKind, names []string) (*Subscription, error) {
	name := subCommands[kind].sub
	if err := checkNames(name, names); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, errNilContext(name)
	}
	if c.closed.Load() {
		return nil, &ConnError{Command: name, Unwritten: true, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		// As for every command: an ended context dials and sends nothing.
		return nil, &ContextError{Command: name, Err: err}
	}
	slot, err := c.subscriptionSlot(name, kind, -1, names)
	if err != nil {
		return nil, err
	}
	s := &Subscription{
		c:    c,
		slot: slot,
		msgs: make(chan Message, SubscriptionBuffer),
		done: make(chan struct{}),
		sets: [3]map[string]struct{}{{}, {}, {}},
	}
	// Close ends the dial too: s is not tracked yet, and a handshake
	// may wait for a reply until the dial timeout.
	dctx, cancel := cancelOn(ctx, c.done)
	nc, rd, id, err := s.dial(dctx, name)
	cancel()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// As for every call whose context ended before its command
			// was sent, whatever the dial's own error says.
			return nil, &ContextError{Command: name, Err: cerr}
		}
		if c.closed.Load() {
			return nil, &ConnError{Command: name, Unwritten: true, Err: ErrClosed}
		}
		return nil, err
	}
	s.setConnLocked(nc) // not shared yet: no lock needed
	s.id = id
	// Counted before Close can see s: a Close between the two then
	// waits for the goroutine instead of returning before it starts.
	s.wg.Add(1)
	if !c.track(s) {
		s.wg.Done()
		_ = nc.Close()
		return nil, &ConnError{Command: name, Unwritten: true, Err: ErrClosed}
	}
	go s.run(nc, rd)
	if err := s.change(ctx, kind, false, names); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// subscriptionSlot returns the slot a Cluster subscription must use:
// shard channels all hash to one slot (want, when not -1), whose owner
// serves them; other kinds use any node (-1).
func (c *Client) subscriptionSlot(command string, kind subKind, want int, names []string) (int, error) {
	if kind != kindShard || !c.isCluster() {
		return want, nil
	}
	slot := want
	for _, n := range names {
		sl := route.Slot(n)
		if slot >= 0 && sl != slot {
			return 0, &RouteError{Command: command, Slot: slot, Err: errors.Join(ErrCrossSlot,
				errors.New("a Cluster subscription's shard channels must share one slot (open one SSubscribe per slot)"))}
		}
		slot = sl
	}
	return slot, nil
}

// checkNames rejects an empty list and empty names.
func checkNames(command string, names []string) error {
	if len(names) == 0 {
		return errInvalid(command, "no channel or pattern")
	}
	for _, n := range names {
		if n == "" {
			return errInvalid(command, "empty channel or pattern name")
		}
	}
	return nil
}

// Channel returns the channel of messages and gap events. It is closed
// after [Subscription.Close] (or the client's Close).
func (s *Subscription) Channel() <-chan Message { return s.msgs }

// Subscribe adds channels to the subscription and waits, within ctx, for
// the server's confirmation. The channels join the subscription's set
// even when ctx ends first, so they are subscribed after a reconnect. A
// channel the server refuses (NOPERM, say) leaves the set, and the call
// returns the refusal as a [*ServerError]; its other channels are
// subscribed. A write that ctx ends before it is out (a server that
// stopped reading) replaces the connection, as a lost one is: a gap
// event, then the whole set on the new one. No channel, or an empty name,
// is an [ErrInvalidArgument] and nothing is sent.
func (s *Subscription) Subscribe(ctx context.Context, channels ...string) error {
	return s.change(ctx, kindChannel, false, channels)
}

// Unsubscribe removes channels from the subscription and waits, within
// ctx, for the server's confirmation. Once it returns nil the server
// sends no further message of those channels to this subscription (until
// they are subscribed again); messages it sent before confirming are
// already in [Subscription.Channel], up to [SubscriptionBuffer] of them,
// and are still received after the call returns. A message of such a
// channel that matches one of the subscription's patterns still arrives
// through the pattern (with Pattern set). No channel, or an empty name,
// is an [ErrInvalidArgument] and nothing is sent: unlike UNSUBSCRIBE
// without arguments, it never means every channel (to end them all, use
// [Subscription.Close]).
func (s *Subscription) Unsubscribe(ctx context.Context, channels ...string) error {
	return s.change(ctx, kindChannel, true, channels)
}

// PSubscribe adds patterns, like [Subscription.Subscribe].
func (s *Subscription) PSubscribe(ctx context.Context, patterns ...string) error {
	return s.change(ctx, kindPattern, false, patterns)
}

// PUnsubscribe removes patterns, like [Subscription.Unsubscribe].
func (s *Subscription) PUnsubscribe(ctx context.Context, patterns ...string) error {
	return s.change(ctx, kindPattern, true, patterns)
}

// SSubscribe adds shard channels, like [Subscription.Subscribe]. On a
// Cluster client only a subscription opened with [Client.SSubscribe] takes
// shard channels, and only of its slot: others fail before anything is
// sent, with an [ErrInvalidArgument] (a channel of another slot: a
// [*RouteError] matching [ErrCrossSlot] too).
func (s *Subscription) SSubscribe(ctx context.Context, shardChannels ...string) error {
	return s.change(ctx, kindShard, false, shardChannels)
}

// SUnsubscribe removes shard channels, like [Subscription.Unsubscribe].
// On a Cluster client a subscription holds the shard channels of one
// slot: a channel of another slot is refused as [Subscription.SSubscribe]
// refuses it, before anything is sent.
func (s *Subscription) SUnsubscribe(ctx context.Context, shardChannels ...string) error {
	return s.change(ctx, kindShard, true, shardChannels)
}

// change updates the set, sends the command and waits for one
// confirmation per name.
func (s *Subscription) change(ctx context.Context, kind subKind, unsub bool, names []string) error {
	command := subCommands[kind].sub
	if unsub {
		command = subCommands[kind].unsub
	}
	if ctx == nil {
		return errNilContext(command)
	}
	if err := checkNames(command, names); err != nil {
		return err
	}
	if kind == kindShard {
		// A Cluster subscription holds shard channels of its slot only:
		// one of another slot was never subscribed here (and its node
		// would answer MOVED, which drops the connection).
		if s.c.isCluster() && s.slot < 0 {
			return errInvalid(command, "on a Cluster client shard channels need a subscription of their own, opened with Client.SSubscribe on their slot's node")
		}
		if _, err := s.c.subscriptionSlot(command, kind, s.slot, names); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return &ContextError{Command: command, Err: err}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &ConnError{Command: command, Unwritten: true, Err: ErrClosed}
	}
	waits := make([]chan error, len(names))
	for i, n := range names {
		if unsub {
			delete(s.sets[kind], n)
		} else {
			s.sets[kind][n] = struct{}{}
		}
		waits[i] = make(chan error, 1)
		s.owed = append(s.owed, owedReply{confirmKey: confirmKey{kind: kind, unsub: unsub, name: n}, waits: waits[i : i+1 : i+1]})
	}
	// The write lock is taken before mu is released, so that commands
	// reach the server in the order their changes were applied to the
	// set (a concurrent Subscribe and Unsubscribe of one name agree with
	// the set on the server).
	nc := s.conn
	s.wmu.Lock()
	s.mu.Unlock()
	if nc != nil {
		// A failed write ends the connection; the reconnect sends the
		// whole set and its confirmations answer these waiters.
		_ = s.writeLocked(ctx, nc, encodeEach(command, names))
	}
	s.wmu.Unlock()
	for _, w := range waits {
		select {
		case err := <-w:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return &ContextError{Command: command, Sent: true, Err: ctx.Err()}
		case <-s.done:
			return &ConnError{Command: command, Err: ErrClosed}
		}
	}
	return nil
}

// Close ends the subscription: it closes the connection, stops its
// goroutines and closes the channel. It returns once they have stopped,
// also when another Close (the client's, say) runs at the same time.
// Closing twice does nothing more.
func (s *Subscription) Close() error {
	// A write stuck on a server that stopped reading (no HealthTimeout,
	// no deadline in its caller's ctx) holds the write lock, and a change
	// waiting for it holds mu: closing the connection first ends it.
	if b := s.live.Load(); b != nil {
		_ = b.nc.Close()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait() // the first Close may still be waiting for it
		return nil
	}
	s.closed = true
	close(s.done)
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.c.untrack(s)
	return nil
}

// encodeCommand encodes name with args.
func encodeCommand(name string, args []string) []byte {
	b := resp.AppendArrayHeader(nil, 1+len(args))
	b = resp.AppendBulkString(b, name)
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// ping sends a keepalive PING on nc, the current connection, and notes
// the reply it is owed. Lock order: mu before wmu.
func (s *Subscription) ping(nc net.Conn, b []byte) error {
	s.mu.Lock()
	if s.conn != nc {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.owed = append(s.owed, owedReply{ping: true})
	s.wmu.Lock()
	s.mu.Unlock()
	defer s.wmu.Unlock()
	return s.writeLocked(context.Background(), nc, b)
}

// pastDeadline is a write deadline that has passed: setting it ends a
// write in progress.
var pastDeadline = time.Unix(1, 0)

// writeLocked is write with wmu held, also bounded by ctx: a server that
// stops reading cannot hold a caller past its context. A write that ctx
// ended may have sent part of b, so it fails and closes nc like any other
// failed write, and the reconnection sends the whole set again.
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
				return &lostError{err: errors.Join(ErrProtocol, err)}
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
			if s.ping(nc, ping) != nil {
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
	return "respire: subscription connection lost: " + e.err.Error()
}

func (e *lostError) Unwrap() error { return e.err }

func (e *lostError) Is(target error) bool { return target == ErrConnectionLost }

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
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
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
		// As in change: the write lock is taken before mu is released,
		// so that a Subscribe or Unsubscribe applied after this snapshot
		// of the set reaches the server after it (an Unsubscribe sent
		// first would leave the name subscribed on the server).
		s.wmu.Lock()
		s.mu.Unlock()
		if len(b) == 0 {
			s.wmu.Unlock()
		} else {
			// Written while serve reads the answers: a set larger than
			// the link buffers would otherwise wait for a server that
			// stops reading while its replies wait (or drops the
			// connection at its output limit). A failed write closes nc,
			// and serve reconnects; the write lock goes with the write.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.wmu.Unlock()
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

// track registers s so that Close closes it; false once the client has
// closed.
func (c *Client) track(s *Subscription) bool {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	if c.closed.Load() {
		return false
	}
	if c.subs == nil {
		c.subs = map[*Subscription]struct{}{}
	}
	c.subs[s] = struct{}{}
	return true
}

func (c *Client) untrack(s *Subscription) {
	c.subsMu.Lock()
	delete(c.subs, s)
	c.subsMu.Unlock()
}

// closeSubscriptions closes every open subscription.
func (c *Client) closeSubscriptions() {
	c.subsMu.Lock()
	subs := make([]*Subscription, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.subsMu.Unlock()
	for _, s := range subs {
		_ = s.Close()
	}
}

var (
	specPUBLISH        = specOf(catalog.PubSub.PUBLISH())
	specSPUBLISH       = specOf(catalog.PubSub.SPUBLISH())
	specPUBSUBCHANNELS = specOf(catalog.PubSub.PUBSUB_CHANNELS())
	specPUBSUBNUMSUB   = specOf(catalog.PubSub.PUBSUB_NUMSUB())
)

// Publish posts message to channel and returns how many subscribers
// received it (on a cluster: of the node that received it). Its retry
// category is the catalog's, WriteAccumulating: a resend may deliver the
// message twice.
func (c *Client) Publish(ctx context.Context, channel, message string) (int64, error) {
	return c.keyArgsInt(ctx, specPUBLISH, channel, []string{message}, "message")
}

// SPublish posts message to the shard channel (Redis 7) and returns how
// many subscribers received it. Its retry category is WriteAccumulating,
// like Publish.
func (c *Client) SPublish(ctx context.Context, shardChannel, message string) (int64, error) {
	return c.keyArgsInt(ctx, specSPUBLISH, shardChannel, []string{message}, "message")
}

// PubSubChannels returns the channels with at least one subscriber whose
// names match the glob pattern ("" for all). Redis counts subscribers per
// node: on a Cluster client the answer is that of one node, the owner of
// slot 0, which is where this client's Subscribe and PSubscribe connect;
// subscribers connected to other nodes are not seen.
func (c *Client) PubSubChannels(ctx context.Context, pattern string) ([]string, error) {
	n := 2
	if pattern != "" {
		n++
	}
	f := c.newFrame(n, "PUBSUB")
	arg(f, "CHANNELS")
	if pattern != "" {
		arg(f, pattern)
	}
	return c.doStrings(ctx, f, specPUBSUBCHANNELS)
}

// PubSubNumSub returns the number of subscribers of each channel
// (pattern subscribers not counted); on a Cluster client, of one node, as
// for [Client.PubSubChannels]. No channel is an [ErrInvalidArgument] and
// nothing is sent.
func (c *Client) PubSubNumSub(ctx context.Context, channels ...string) (map[string]int64, error) {
	if len(channels) == 0 {
		return nil, errInvalid("PUBSUB NUMSUB", "no channels")
	}
	f := c.newFrame(2+len(channels), "PUBSUB")
	arg(f, "NUMSUB")
	for _, ch := range channels {
		arg(f, ch)
	}
	v, err := c.doValue(ctx, f, specPUBSUBNUMSUB)
	if err != nil {
		return nil, err
	}
	if (v.Type != resp.Array && v.Type != resp.Map) || len(v.Elems)%2 != 0 {
		return nil, unexpected("array of channel-count pairs", v)
	}
	out := make(map[string]int64, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		name := v.Elems[i]
		if name.Type.Aggregate() {
			return nil, unexpected("channel name", name)
		}
		n, err := convInt64(v.Elems[i+1])
		if err != nil {
			return nil, err
		}
		out[string(name.TextBytes())] = n
	}
	return out, nil
}
