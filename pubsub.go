package respire

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/route"
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
// confirmed the change; a call whose context ends while it waits for
// another write to finish (a server that stopped reading holds it)
// changes nothing, and its [*ContextError]'s Sent is false. Each name is sent in a command of its own, so
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

	// wlock, a 1-buffered channel, is the write lock: it serialises
	// writes to conn and the changes to sets and owed that go with them,
	// so that owed lists the replies in the order their commands were
	// written. Lock order: wlock before mu. A change waits for it within
	// its ctx (see lockWrite).
	wlock    chan struct{}
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
		c:     c,
		slot:  slot,
		msgs:  make(chan Message, SubscriptionBuffer),
		done:  make(chan struct{}),
		wlock: make(chan struct{}, 1),
		sets:  [3]map[string]struct{}{{}, {}, {}},
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
			return 0, &RouteError{Command: command, Slot: slot, Err: multierr.With(ErrCrossSlot,
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
// even when ctx ends first, so they are subscribed after a reconnect;
// only a call whose ctx ends while it waits for another write to finish
// (a server that stopped reading holds it) leaves the set as it was,
// with a [*ContextError] whose Sent is false (false too when the
// subscription was between connections: the reconnection sends the set).
// A channel the server refuses (NOPERM, say) leaves the set, and the call
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
	// The write lock comes first, within ctx: a write stuck on a server
	// that stopped reading holds it. A call that leaves while waiting
	// changed nothing: its names are neither in the set nor owed.
	if err := s.lockWrite(ctx.Done()); err != nil {
		if errors.Is(err, ErrClosed) {
			return &ConnError{Command: command, Unwritten: true, Err: errSubscriptionClosed}
		}
		return &ContextError{Command: command, Err: ctx.Err()}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.unlockWrite()
		return &ConnError{Command: command, Unwritten: true, Err: errSubscriptionClosed}
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
	// Changed and written under the write lock: commands reach the
	// server in the order their changes were applied to the set (a
	// concurrent Subscribe and Unsubscribe of one name agree with the
	// set on the server), and owed in that order too.
	nc := s.conn
	s.mu.Unlock()
	if nc != nil {
		// A failed write ends the connection; the reconnect sends the
		// whole set and its confirmations answer these waiters.
		_ = s.writeLocked(ctx, nc, encodeEach(command, names))
	}
	s.unlockWrite()
	for _, w := range waits {
		select {
		case err := <-w:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			// Without a connection nothing was written: the reconnection
			// sends the set, names included, when it comes.
			return &ContextError{Command: command, Sent: nc != nil, Err: ctx.Err()}
		case <-s.done:
			return &ConnError{Command: command, Err: errSubscriptionClosed}
		}
	}
	return nil
}

// errSubscriptionClosed is the cause of the calls of a closed
// Subscription, which its Close or the client's closed.
var errSubscriptionClosed error = closedError("the subscription is closed")

// lockWrite takes the write lock; it gives up, with ErrClosed, when the
// subscription closes, or, with context.Canceled, when stop closes.
func (s *Subscription) lockWrite(stop <-chan struct{}) error {
	select {
	case s.wlock <- struct{}{}:
		return nil
	case <-s.done:
		return ErrClosed
	case <-stop:
		return context.Canceled
	}
}

// unlockWrite releases the write lock.
func (s *Subscription) unlockWrite() { <-s.wlock }

// Close ends the subscription: it closes the connection, stops its
// goroutines and closes the channel. It returns once they have stopped,
// also when another Close (the client's, say) runs at the same time.
// Closing twice does nothing more.
func (s *Subscription) Close() error {
	// A write stuck on a server that stopped reading (no HealthTimeout,
	// no deadline in its caller's ctx) holds the write lock: closing the
	// connection first ends it.
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
