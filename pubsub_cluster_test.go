package respire

// Pub/sub on a Cluster whose slots move.

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/testenv"
	"github.com/respire-go/respire/resp"
)

// TestSSubscribeStaleMapFollowsMoved: SSubscribe on a client whose slot
// map still names the old owner of the shard channel's slot gets MOVED
// from that node. The redirect is routing, not the caller's failure: the
// subscription reaches the new owner and receives the channel's messages.
func TestSSubscribeStaleMapFollowsMoved(t *testing.T) {
	testenv.UseTopology(t, true)
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	ch := keyPrefix(t) + "{m}ch"
	slot := route.Slot(ch)
	src, dst := ownerAndOther(t, c, slot)
	ids := clusterNodeIDs(t)
	t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
	migrateSlot(t, slot, src.Addr, dst, ids)
	sub, err := c.SSubscribe(ctx, ch)
	if err != nil {
		t.Fatalf("SSubscribe with the slot map before the move: %v, want the subscription on the new owner", err)
	}
	defer sub.Close()
	if n, err := c.SPublish(ctx, ch, "hello"); err != nil || n != 1 {
		t.Fatalf("SPUBLISH = %d, %v, want 1 subscriber", n, err)
	}
	for m := range sub.Channel() {
		if m.Gap {
			continue
		}
		if m.Channel != ch || m.Payload != "hello" || !m.Shard {
			t.Fatalf("message = %+v", m)
		}
		break
	}
}

// TestSUnsubscribeOtherSlotSendsNothing: on a Cluster client a
// subscription holds the shard channels of one slot, so a shard channel
// of another slot was never subscribed there. SUnsubscribe of it is
// refused before any I/O, as SSubscribe of it is (ErrCrossSlot): sent,
// the node's MOVED reply would drop the subscription's connection for
// nothing and deliver a Gap.
func TestSUnsubscribeOtherSlotSendsNothing(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	a, b := p+"{s}a", p+"x"
	if route.Slot(a) == route.Slot(b) {
		t.Fatal("test channels share a slot")
	}
	sub, err := c.SSubscribe(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.SUnsubscribe(ctx, b); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("SUnsubscribe of another slot's channel = %v, want ErrCrossSlot", err)
	}
	plain, err := c.Subscribe(ctx, p+"plain")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.SUnsubscribe(ctx, a); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SUnsubscribe on a Subscribe subscription = %v, want ErrInvalidArgument", err)
	}
	if n, err := c.SPublish(ctx, a, "one"); err != nil || n != 1 {
		t.Fatalf("SPUBLISH = %d, %v", n, err)
	}
	if m := <-sub.Channel(); m.Gap || m.Payload != "one" {
		t.Fatalf("next event %+v, want the message (no reconnection)", m)
	}
}

// refusingClusterClient is a Cluster client without periodic refresh
// whose dials to the address stored in refuse fail.
func refusingClusterClient(t *testing.T) (*Client, *atomic.Pointer[string]) {
	refuse := new(atomic.Pointer[string])
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if r := refuse.Load(); r != nil && *r == addr {
			return nil, errors.New("test: dial refused")
		}
		return d.DialContext(ctx, network, addr)
	}
	return clusterClient(t, Options{Dialer: dial, Cluster: &ClusterOptions{RefreshInterval: NoTimeout}}), refuse
}

// TestSSubscribeReconnectLearnsNewOwnerAfterFailedDials: a shard
// subscription whose node cannot be reached asks for a new slot map
// after a failed dial, so it reaches the slot's new owner even when
// nothing else refreshes the map (no periodic refresh, no other traffic).
func TestSSubscribeReconnectLearnsNewOwnerAfterFailedDials(t *testing.T) {
	testenv.UseTopology(t, true)
	c, refuse := refusingClusterClient(t)
	ctx := testCtx(t)
	ch := keyPrefix(t) + "{f}ch"
	slot := route.Slot(ch)
	src, dst := ownerAndOther(t, c, slot)
	sub, err := c.SSubscribe(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ids := clusterNodeIDs(t)
	t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
	refuse.Store(&src.Addr)
	killClient(t, src.Addr, strconv.FormatInt(subID(sub), 10))
	migrateSlot(t, slot, src.Addr, dst, ids)
	eventually(t, 10*time.Second, "the subscription to reach the slot's new owner "+dst, func() bool {
		n, err := admin(t, dst, "SPUBLISH", ch, "x").Int64()
		return err == nil && n == 1
	})
}

// TestSSubscribeFailedDialAsksForNewMap: a first SSubscribe whose dial
// to the slot's owner fails asks for a new slot map, as a lost shared
// connection does, so a later SSubscribe reaches the slot's new owner.
// Without it the map stayed stale (no periodic refresh, the shared
// connection to the old owner still up) and every SSubscribe failed.
func TestSSubscribeFailedDialAsksForNewMap(t *testing.T) {
	testenv.UseTopology(t, true)
	c, refuse := refusingClusterClient(t)
	ctx := testCtx(t)
	ch := keyPrefix(t) + "{g}ch"
	slot := route.Slot(ch)
	src, dst := ownerAndOther(t, c, slot)
	ids := clusterNodeIDs(t)
	t.Cleanup(func() { migrateSlot(t, slot, dst, src.Addr, ids) })
	migrateSlot(t, slot, src.Addr, dst, ids)
	refuse.Store(&src.Addr)
	if _, err := c.SSubscribe(ctx, ch); err == nil {
		t.Fatal("SSubscribe reached the old owner through a refused dial")
	}
	var sub *Subscription
	eventually(t, 10*time.Second, "an SSubscribe to reach the slot's new owner "+dst, func() bool {
		var err error
		sub, err = c.SSubscribe(ctx, ch)
		return err == nil
	})
	defer sub.Close()
	if n, err := admin(t, dst, "SPUBLISH", ch, "x").Int64(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH on %s: %d subscribers, %v; want 1", dst, n, err)
	}
}

// TestClusterShardPubSubIntrospectionCoversEveryPrimary: a node knows
// only the shard channels of the slots it serves, so on a Cluster client
// PUBSUB SHARDCHANNELS and SHARDNUMSUB sent with Do ask every primary and
// combine the answers. Sent to one node, they reported 0 subscribers and
// no channel for every shard channel served elsewhere, without an error.
func TestClusterShardPubSubIntrospectionCoversEveryPrimary(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	p := keyPrefix(t)
	// One shard channel on each primary, each with one subscriber.
	var chans []string
	served := map[string]bool{}
	for i := 0; len(chans) < len(c.topo.Primaries()) && i < 10000; i++ {
		ch := p + "{" + strconv.Itoa(i) + "}ch"
		n, err := c.topo.Pick(route.Slot(ch), false)
		if err != nil {
			t.Fatal(err)
		}
		if !served[n.Addr] {
			served[n.Addr] = true
			chans = append(chans, ch)
		}
	}
	if len(chans) < 2 {
		t.Fatalf("shard channels on %d primaries, want at least 2", len(chans))
	}
	for _, ch := range chans {
		sub, err := c.SSubscribe(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Close() })
	}
	r, err := c.Do(ctx, catalog.PubSub.PUBSUB_SHARDNUMSUB(), anys(chans)...)
	if err != nil {
		t.Fatalf("PUBSUB SHARDNUMSUB: %v", err)
	}
	counts, err := r.Int64Map()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chans {
		if counts[ch] != 1 {
			t.Errorf("PUBSUB SHARDNUMSUB %s = %d, want its 1 subscriber", ch, counts[ch])
		}
	}
	r, err = c.Do(ctx, catalog.PubSub.PUBSUB_SHARDCHANNELS(), escapeGlob(p)+"*")
	if err != nil {
		t.Fatalf("PUBSUB SHARDCHANNELS: %v", err)
	}
	got, err := r.Strings()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := slices.Clone(chans)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("PUBSUB SHARDCHANNELS = %q, want %q", got, want)
	}
}

// forgedConn replaces the frames named in its forger's script with a
// PING, whose reply a subscription ignores, and reads the script's replies
// in their place: all of them in one Read, once every scripted frame was
// written, so that they reach the reader's buffer together.
type forgedConn struct {
	net.Conn
	f       *forger
	mu      sync.Mutex
	forged  []byte // the scripted replies of the frames written so far
	pending int    // scripted frames not written yet; -1: nothing scripted on this connection
	early   []byte // real bytes read before the last scripted frame was written
}

// forger is the script every forgedConn of a dialer follows: each frame
// is replaced once, on whichever connection writes it.
type forger struct {
	mu      sync.Mutex
	frames  [][]byte        // encoded frames, in the order they will be written
	reply   [][]byte        // the encoded reply of each
	written []chan struct{} // closed once each is written
}

func (f *forger) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &forgedConn{Conn: nc, f: f, pending: -1}, nil
	}
}

// script arms f: frame (command and one argument) is answered with
// reply. The channel it returns is closed once the frame is written.
func (f *forger) script(reply []byte, command, arg string) <-chan struct{} {
	w := make(chan struct{})
	f.mu.Lock()
	f.frames = append(f.frames, encodeCommand(command, []string{arg}))
	f.reply = append(f.reply, reply)
	f.written = append(f.written, w)
	f.mu.Unlock()
	return w
}

func (c *forgedConn) Write(p []byte) (int, error) {
	n := len(p)
	c.f.mu.Lock()
	for i := 0; i < len(c.f.frames); {
		fr := c.f.frames[i]
		if !bytes.Contains(p, fr) {
			i++
			continue
		}
		p = bytes.Replace(p, fr, pingBytes, 1)
		c.mu.Lock()
		if c.pending < 0 {
			c.pending = len(c.f.frames)
		}
		c.pending--
		c.forged = append(c.forged, c.f.reply[i]...)
		c.mu.Unlock()
		close(c.f.written[i])
		c.f.frames = slices.Delete(c.f.frames, i, i+1)
		c.f.reply = slices.Delete(c.f.reply, i, i+1)
		c.f.written = slices.Delete(c.f.written, i, i+1)
	}
	c.f.mu.Unlock()
	if _, err := c.Conn.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

func (c *forgedConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		scripted, done := c.pending >= 0, c.pending == 0
		c.mu.Unlock()
		if !scripted || done {
			break
		}
		// Wait for the rest of the script: keep what arrives meanwhile
		// (the PINGs' replies) for after the forged replies.
		buf := make([]byte, 4096)
		n, err := c.Conn.Read(buf)
		c.mu.Lock()
		c.early = append(c.early, buf[:n]...)
		c.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	c.mu.Lock()
	if len(c.forged) > 0 || len(c.early) > 0 {
		b := append(c.forged, c.early...)
		n := copy(p, b)
		c.forged, c.early = nil, b[n:]
		if len(c.early) == 0 {
			c.early = nil
		}
		c.mu.Unlock()
		return n, nil
	}
	c.mu.Unlock()
	return c.Conn.Read(p)
}

// forgedShardSubscription connects a Cluster client with opts through a
// forger's dialer and subscribes to the shard channel ch; other is a
// primary that does not serve ch's slot.
func forgedShardSubscription(t *testing.T, opts Options, ch string) (c *Client, f *forger, sub *Subscription, other string) {
	t.Helper()
	f = &forger{}
	opts.Dialer = f.dialer()
	c = clusterClient(t, opts)
	_, other = ownerAndOther(t, c, route.Slot(ch))
	sub, err := c.SSubscribe(testCtx(t), ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	return c, f, sub, other
}

// TestSubscriptionRepliesAfterMovedReachNoOtherCall: a MOVED reply takes
// the place of one name's confirmation without answering it (the
// reconnection to the slot's owner does), so the replies read after it
// on the same connection are out of step with the calls still waiting.
// An error among them must not fail another call, nor drop another name
// from the set: here the refusal of a plain channel (NOPERM, answering a
// concurrent Subscribe) used to fail the SSubscribe whose shard channel
// was redirected, and to leave that shard channel unsubscribed.
func TestSubscriptionRepliesAfterMovedReachNoOtherCall(t *testing.T) {
	ctx := testCtx(t)
	p := keyPrefix(t)
	x, y, z := p+"{r}x", p+"{r}y", p+"z"
	slot := route.Slot(x)
	c, f, sub, other := forgedShardSubscription(t, Options{}, x)
	redirected := f.script(resp.AppendError(nil, "MOVED "+strconv.Itoa(slot)+" "+other), "SSUBSCRIBE", y)
	f.script(resp.AppendError(nil, "NOPERM no permissions to access the '"+z+"' channel"), "SUBSCRIBE", z)
	shard, plain := make(chan error, 1), make(chan error, 1)
	go func() { shard <- sub.SSubscribe(ctx, y) }()
	select {
	case <-redirected: // SSUBSCRIBE first, its reply owed first
	case <-ctx.Done():
		t.Fatal("SSUBSCRIBE never written")
	}
	go func() { plain <- sub.Subscribe(ctx, z) }()
	if err := <-shard; err != nil {
		t.Errorf("SSubscribe of the redirected shard channel = %v, want nil once the owner confirmed", err)
	}
	<-plain // NOPERM, or the confirmation of the reconnection's SUBSCRIBE
	if n, err := c.SPublish(ctx, y, "m"); err != nil || n != 1 {
		t.Errorf("SPUBLISH to the redirected shard channel = %d, %v, want its 1 subscriber", n, err)
	}
}

// TestSubscriptionGapSaysTheSlotMoved: the Gap after a shard channel's
// slot moved carries why the connection ended: the node's MOVED reply (a
// *ServerError), or its SUNSUBSCRIBE of a channel nobody unsubscribed.
// It carried the error of the client's own Close of the connection ("use
// of closed network connection"), which says nothing of the move.
func TestSubscriptionGapSaysTheSlotMoved(t *testing.T) {
	for _, p := range protocols {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			ctx := testCtx(t)
			pre := keyPrefix(t)
			x := pre + "{g}x"
			slot := route.Slot(x)
			_, f, sub, other := forgedShardSubscription(t, Options{Protocol: p}, x)
			gap := func(what string) error {
				t.Helper()
				for m := range sub.Channel() {
					if m.Gap {
						if !errors.Is(m.Err, ErrConnectionLost) {
							t.Errorf("%s: Gap.Err = %v, want a match of ErrConnectionLost", what, m.Err)
						}
						return m.Err
					}
				}
				t.Fatalf("%s: the channel closed without a Gap", what)
				return nil
			}
			f.script(resp.AppendError(nil, "MOVED "+strconv.Itoa(slot)+" "+other), "SSUBSCRIBE", pre+"{g}y")
			if err := sub.SSubscribe(ctx, pre+"{g}y"); err != nil {
				t.Fatal(err)
			}
			var se *ServerError
			if err := gap("MOVED"); !errors.As(err, &se) || se.Code != "MOVED" {
				t.Errorf("after MOVED: Gap.Err = %v, want the MOVED reply as a *ServerError", err)
			}
			// The server's own SUNSUBSCRIBE of x (its slot moved), in the
			// place of a confirmation.
			push := resp.AppendArrayHeader(nil, 3)
			if p == 3 {
				push[0] = '>'
			}
			push = resp.AppendBulkString(push, "sunsubscribe")
			push = resp.AppendBulkString(push, x)
			push = append(push, ":0\r\n"...)
			f.script(push, "SSUBSCRIBE", pre+"{g}z")
			if err := sub.SSubscribe(ctx, pre+"{g}z"); err != nil {
				t.Fatal(err)
			}
			if err := gap("SUNSUBSCRIBE"); err == nil || !strings.Contains(err.Error(), "slot moved") || !strings.Contains(err.Error(), x) {
				t.Errorf("after the server's SUNSUBSCRIBE: Gap.Err = %v, want it to say that the slot of %s moved", err, x)
			}
		})
	}
}
