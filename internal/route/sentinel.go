package route

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// SentinelConfig configures a [Sentinel].
type SentinelConfig struct {
	Nodes Config
	// Name is the primary's name at the sentinels.
	Name string
	// Addrs are the sentinels, tried in order.
	Addrs []string
	// Conn returns the configuration of a connection to a sentinel.
	Conn func(addr string) wire.Config
	// Read is the read policy (replicas come from SENTINEL replicas).
	Read ReadPolicy
	// Refresh is the periodic rediscovery interval; 0 disables it.
	Refresh time.Duration
	// QueryTimeout bounds asking one sentinel, and the confirmation of
	// the +switch-master subscription.
	QueryTimeout time.Duration
	// IdlePing and HealthTimeout keep the +switch-master subscription
	// honest, as a Subscription's: a PING is sent after IdlePing without
	// a read, and a sentinel that sends nothing for IdlePing plus
	// HealthTimeout is left for the next one. Either 0 disables it.
	IdlePing, HealthTimeout time.Duration
}

// ErrUnknownPrimary reports that every sentinel answered and none knows
// the primary's name.
var ErrUnknownPrimary = errors.New("no sentinel knows the primary")

// ErrNotSentinel reports an address that answered but is not a sentinel:
// it does not know the SENTINEL command.
var ErrNotSentinel = errors.New("the server is not a sentinel")

// errNotKnownHere is one sentinel's answer that it does not know the
// primary's name: [ErrUnknownPrimary] only when every sentinel says so
// (one that did not answer may know it).
var errNotKnownHere = errors.New("this sentinel does not know the primary")

// Sentinel follows the primary (and the replicas) a group of sentinels
// reports: discovery asks the sentinels in order, starting with the one
// that answered last (or that published a +switch-master message); a
// subscription to +switch-master on one sentinel, a lost connection to
// the primary or a replica, a read that finds no replica and a READONLY
// reply trigger rediscovery.
type Sentinel struct {
	cfg   SentinelConfig
	nodes *nodes
	snap  atomic.Pointer[sentinelSnap]
	ref   *refresher

	mu        sync.Mutex
	sentinels []string // known sentinels, configured ones first
	good      int      // index of the sentinel that answered last
	// switches counts the +switch-master messages; switchedBy is the
	// sentinel that published the last one. A discovery that began
	// before a message does not put its own sentinel first over it.
	switches   uint64
	switchedBy string

	// replicasRefused: the sentinel whose answer the last discovery
	// installed refused SENTINEL REPLICAS by ACL (see refusedReplicasGap).
	replicasRefused atomic.Bool

	watchCtx    context.Context
	watchCancel context.CancelFunc
	watchWG     sync.WaitGroup
}

type sentinelSnap struct {
	primary  *Node
	replicas []*Node
}

// MaxLearnedSentinels bounds the sentinels learnt from one SENTINEL
// SENTINELS answer, besides the configured ones.
const MaxLearnedSentinels = 32

// MaxReplicas bounds the replicas installed from one SENTINEL REPLICAS
// answer (the first ones listed, each once).
const MaxReplicas = 64

// minSentinelRefreshGap rate-limits rediscovery.
const minSentinelRefreshGap = 100 * time.Millisecond

// NewSentinel discovers the primary within ctx and starts watching for
// changes. A name no sentinel knows fails with an error wrapping
// [ErrUnknownPrimary]; a failure in which an address answered that it is
// not a sentinel wraps [ErrNotSentinel].
func NewSentinel(ctx context.Context, cfg SentinelConfig) (*Sentinel, error) {
	s := &Sentinel{cfg: cfg, sentinels: slices.Clone(cfg.Addrs)}
	// A lost replica asks too (only replica read policies dial them):
	// the group may have replaced it with one at another address.
	s.nodes = newNodes(s.replicasFollow(cfg.Nodes), func(*Node) { s.ref.request(context.Background(), false) })
	s.ref = newRefresher(s.discover, cfg.Refresh, minSentinelRefreshGap)
	if err := s.discover(ctx); err != nil {
		_ = s.nodes.close()
		return nil, err
	}
	s.ref.start()
	s.watchCtx, s.watchCancel = context.WithCancel(context.Background())
	s.watchWG.Add(1)
	go s.watch()
	return s, nil
}

// replicasFollow returns nc with the connections to a replica checking,
// at each dial, that the replica follows the current primary with its
// link up: a listed replica that now follows another primary (another
// group's, or one the sentinels have not yet reconfigured) or that lost
// its link serves no reads meant for this one.
func (s *Sentinel) replicasFollow(nc Config) Config {
	follows := func() string {
		if sn := s.snap.Load(); sn != nil {
			return sn.primary.Addr
		}
		return ""
	}
	shared, dedicated := nc.Shared, nc.Dedicated
	nc.Shared = func(addr string, replica bool) wire.Config {
		w := shared(addr, replica)
		if replica {
			w.Follows = follows
		}
		return w
	}
	nc.Dedicated = func(addr string, replica bool) wire.Config {
		w := dedicated(addr, replica)
		if replica {
			w.Follows = follows
		}
		return w
	}
	return nc
}

// Kind returns KindSentinel.
func (s *Sentinel) Kind() Kind { return KindSentinel }

// Pick returns the current primary, or a replica for a read under a
// replica read policy. slot is ignored. A read that finds no replica
// (ReadReplica, ReadReplicaPreferred) asks for rediscovery, at most once
// a second (once per refusedReplicasGap while the sentinel refuses
// SENTINEL REPLICAS): the sentinels may list one again.
func (s *Sentinel) Pick(slot int, read bool) (*Node, error) {
	sn := s.snap.Load()
	if wantsReplica(sn.replicas, read, s.cfg.Read) {
		gap := noReplicaGap
		if s.replicasRefused.Load() {
			gap = refusedReplicasGap
		}
		s.ref.noReplica(gap)
	}
	return pickIn(sn.primary, sn.replicas, read, s.cfg.Read)
}

// Primaries returns the current primary.
func (s *Sentinel) Primaries() []*Node { return []*Node{s.snap.Load().primary} }

// Replicas returns the current replicas.
func (s *Sentinel) Replicas() []*Node { return slices.Clone(s.snap.Load().replicas) }

// Moved is not a Sentinel reply.
func (s *Sentinel) Moved(int, string) (*Node, error) { return nil, ErrBadRedirect }

// Ask is not a Sentinel reply.
func (s *Sentinel) Ask(string) (*Node, error) { return nil, ErrBadRedirect }

// At returns the known node at addr (a replica one first), or a primary one.
func (s *Sentinel) At(addr string) (*Node, error) { return s.nodes.at(addr) }

// Refresh asks for rediscovery.
func (s *Sentinel) Refresh(ctx context.Context, wait bool) error { return s.ref.request(ctx, wait) }

// Close stops watching and closes every node.
func (s *Sentinel) Close() error {
	s.watchCancel()
	s.watchWG.Wait()
	s.ref.stop()
	return s.nodes.close()
}

// Sentinels returns the sentinels known now.
func (s *Sentinel) Sentinels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sentinels)
}

// order returns the sentinels to try, starting with the one that answered
// last, and the count of +switch-master messages so far (for answered).
func (s *Sentinel) order() ([]string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.sentinels))
	out = append(out, s.sentinels[s.good:]...)
	return append(out, s.sentinels[:s.good]...), s.switches
}

// answered records addr as the sentinel that answered last, and others,
// the sentinels it listed, as the learnt ones: they replace those of
// earlier answers (a sentinel that left the group is forgotten), at most
// MaxLearnedSentinels of them. nil others (the list was lost) keeps the
// learnt ones. switches is the count of +switch-master messages when the
// discovery began: when one came since, its sentinel stays first, not
// addr, whose answer may be older than the message.
func (s *Sentinel) answered(addr string, others []string, switches uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if others != nil {
		known := slices.Clone(s.cfg.Addrs)
		learnt := 0
		for _, o := range append([]string{addr}, others...) {
			if learnt == MaxLearnedSentinels {
				break
			}
			if !slices.Contains(known, o) {
				known = append(known, o)
				learnt++
			}
		}
		s.sentinels = known
	}
	if s.switches != switches {
		if i := slices.Index(s.sentinels, s.switchedBy); i >= 0 {
			s.good = i
			return
		}
	}
	s.good = max(slices.Index(s.sentinels, addr), 0)
}

// discover asks the sentinels for the primary, its replicas and the other
// sentinels, and installs what the first one that knows the name says.
// An answer that would replace the current primary with another address
// is verified first, as the Sentinel client guidelines ask: the address
// must accept a connection whose ROLE is master (within ctx and
// QueryTimeout); one that does not (a stale sentinel naming the dead old
// primary, or a replica) is passed over for the next sentinel's answer,
// and when no answer verifies the current primary stays and the
// discovery fails with every reason. A sentinel that names the current
// primary while the client cannot reach it (its last dial failed) is
// passed over likewise for one that names a verified other; if none
// does, the first such answer is installed. The first discovery, with no
// primary yet, installs the first answer unverified: the primary's own
// connection checks its ROLE.
func (s *Sentinel) discover(ctx context.Context) error {
	var errs []error
	unknown := 0
	order, switches := s.order()
	cur := s.snap.Load()
	var first *answer
	for _, addr := range order {
		if ctx.Err() != nil {
			break
		}
		a, err := s.ask(ctx, addr)
		if err == nil && cur != nil && a.primary != cur.primary.Addr {
			err = s.verify(ctx, addr, a.primary)
		}
		if err != nil && ctx.Err() != nil {
			// The caller's context ended the query: the sentinel is not
			// to blame for the timeout that cut it short.
			err = &sentinelError{addr: addr, err: ctx.Err()}
		}
		if errors.Is(err, errNotKnownHere) {
			unknown++
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s.unreachable(a.primary) {
			if first == nil {
				first = &a
			}
			continue
		}
		s.answered(addr, a.others, switches)
		return s.installAnswer(&a)
	}
	if err := ctx.Err(); err != nil {
		if len(errs) == 0 || !errors.Is(errs[len(errs)-1], err) {
			errs = append(errs, err)
		}
		return &discoveryError{errs: errs}
	}
	if first != nil {
		s.answered(first.addr, first.others, switches)
		return s.installAnswer(first)
	}
	if unknown == len(order) {
		return &sentinelError{name: s.cfg.Name, err: ErrUnknownPrimary}
	}
	return &discoveryError{errs: errs}
}

// queryContext bounds one sentinel query, or one verification, by
// QueryTimeout when it is set.
func (s *Sentinel) queryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.QueryTimeout > 0 {
		return context.WithTimeout(ctx, s.cfg.QueryTimeout)
	}
	return ctx, func() {}
}

// verify dials primary, which the sentinel at addr named, and checks that
// its ROLE is master, within ctx and QueryTimeout; the connection is
// closed at once. The error names the sentinel and the address.
func (s *Sentinel) verify(ctx context.Context, addr, primary string) error {
	ctx, cancel := s.queryContext(ctx)
	defer cancel()
	cfg := s.nodes.cfg.Shared(primary, false)
	cfg.Role, cfg.ReadOnly, cfg.Tracking, cfg.OnPush, cfg.OnTrackingLost = "master", false, false, nil, nil
	nc, _, _, _, err := wire.DialRaw(ctx, cfg)
	if err != nil {
		return &sentinelError{addr: addr, err: fmt.Errorf("named primary %s, which is not a reachable primary: %w", primary, err)}
	}
	_ = nc.Close()
	return nil
}

// discoveryError reports a discovery in which no sentinel named a
// primary that could be installed: it gives every sentinel's reason, and
// matches each of them.
type discoveryError struct{ errs []error }

func (e *discoveryError) Error() string {
	s := "sentinel discovery failed"
	for i, err := range e.errs {
		if i == 0 {
			s += ": "
		} else {
			s += "; "
		}
		s += err.Error()
	}
	return s
}

func (e *discoveryError) Unwrap() []error { return e.errs }

// unreachable reports whether the client knows a primary node at addr
// whose last dial failed and that has no live connection.
func (s *Sentinel) unreachable(addr string) bool {
	n := s.nodes.lookup(addr, false)
	return n != nil && n.EP.Down()
}

// answer is one sentinel's: the primary, its replicas (nil: unknown, the
// reply was lost, unusable or refused, replicasRefused when by ACL; empty:
// none healthy) and the other sentinels (likewise).
type answer struct {
	addr, primary    string
	replicas, others []string
	replicasRefused  bool
}

// installAnswer installs a's primary and replicas, and remembers whether
// its sentinel refused SENTINEL REPLICAS.
func (s *Sentinel) installAnswer(a *answer) error {
	if err := s.install(a.primary, a.replicas); err != nil {
		return err
	}
	s.replicasRefused.Store(a.replicasRefused)
	return nil
}

// ask queries one sentinel on a connection of its own.
func (s *Sentinel) ask(ctx context.Context, addr string) (a answer, err error) {
	a.addr = addr
	ctx, cancel := s.queryContext(ctx)
	defer cancel()
	nc, rd, _, _, err := wire.DialRaw(ctx, s.cfg.Conn(addr))
	if err != nil {
		return a, &sentinelError{addr: addr, err: err}
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	v, err := rawCall(nc, rd, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.cfg.Name)
	var re *wire.ReplyError
	if errors.As(err, &re) && strings.HasPrefix(re.Text, "ERR unknown command") {
		return a, &sentinelError{addr: addr, err: fmt.Errorf("%w (%w)", ErrNotSentinel, err)}
	}
	if err != nil {
		return a, &sentinelError{addr: addr, err: err}
	}
	if v.IsNull() {
		return a, &sentinelError{addr: addr, name: s.cfg.Name, err: errNotKnownHere}
	}
	if a.primary, err = primaryAddr(v); err != nil {
		return a, &sentinelError{addr: addr, err: err}
	}
	if v, err := rawCall(nc, rd, "SENTINEL", "REPLICAS", s.cfg.Name); err == nil && v.Type.Aggregate() {
		a.replicas = append(make([]string, 0, len(v.Elems)), instances(v, true)...)
	} else {
		a.replicasRefused = errors.As(err, &re) && aclCode(re.Text)
	}
	if v, err := rawCall(nc, rd, "SENTINEL", "SENTINELS", s.cfg.Name); err == nil && v.Type.Aggregate() {
		a.others = append(make([]string, 0, len(v.Elems)), instances(v, false)...)
	}
	return a, nil
}

// primaryAddr returns the host:port of a SENTINEL GET-MASTER-ADDR-BY-NAME
// reply that names one, else a *badAddrReply.
func primaryAddr(v resp.Value) (string, error) {
	if !v.Type.Aggregate() || len(v.Elems) != 2 {
		got := withArticle(v.Type.String())
		if v.Type.Aggregate() {
			got += " of " + strconv.Itoa(len(v.Elems)) + " elements"
		}
		return "", &badAddrReply{got: got}
	}
	addr := net.JoinHostPort(v.Elems[0].Text(), v.Elems[1].Text())
	if checkAddr(addr) != nil {
		return "", &badAddrReply{got: strconv.Quote(addr)}
	}
	return addr, nil
}

// HealthyReplicas returns the replicas of a SENTINEL REPLICAS reply that
// discovery would use: linked to their primary and not flagged down.
func HealthyReplicas(v resp.Value) []string { return instances(v, true) }

// instances returns the addresses of the healthy instances a SENTINEL
// REPLICAS or SENTINELS reply lists (flat field/value arrays, or maps).
func instances(v resp.Value, replicas bool) []string {
	var out []string
	for _, e := range v.Elems {
		fields := map[string]string{}
		for i := 0; i+1 < len(e.Elems); i += 2 {
			fields[e.Elems[i].Text()] = e.Elems[i+1].Text()
		}
		flags := fields["flags"]
		if containsFlag(flags, "s_down") || containsFlag(flags, "o_down") || containsFlag(flags, "disconnected") {
			continue
		}
		if replicas && fields["master-link-status"] != "ok" {
			continue
		}
		addr := net.JoinHostPort(fields["ip"], fields["port"])
		if checkAddr(addr) == nil {
			out = append(out, addr)
		}
	}
	return out
}

func containsFlag(flags, f string) bool {
	for len(flags) > 0 {
		i := 0
		for i < len(flags) && flags[i] != ',' {
			i++
		}
		if flags[:i] == f {
			return true
		}
		flags = flags[min(i+1, len(flags)):]
	}
	return false
}

// checkAddr validates a host:port with a port from 1 through 65535.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return ErrBadTopology
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return ErrBadTopology
	}
	return nil
}

// install swaps in the primary and replicas (each once, at most
// MaxReplicas of them); a primary that changed
// retires the old one, whose commands in flight fail as connection loss.
// nil replicas (unknown: the sentinel's reply was lost) keeps the replicas
// of the current snapshot, but the new primary.
func (s *Sentinel) install(primary string, replicas []string) error {
	p, err := s.nodes.get(primary, false)
	if err != nil {
		return err
	}
	cur := s.snap.Load()
	if replicas == nil && cur != nil {
		for _, n := range cur.replicas {
			replicas = append(replicas, n.Addr)
		}
	}
	if cur != nil && cur.primary != p {
		// The replicas' connections checked that they follow the old
		// primary: retire them, so that the replicas serve reads again
		// only through connections that check the new one.
		s.nodes.retireIf(func(n *Node) bool { return n.Replica })
	}
	sn := &sentinelSnap{primary: p}
	keep := map[*Node]bool{p: true}
	for _, r := range replicas {
		if len(sn.replicas) == MaxReplicas {
			break
		}
		if r == primary {
			continue
		}
		n, err := s.nodes.get(r, true)
		if err != nil {
			return err
		}
		if !keep[n] {
			keep[n] = true
			sn.replicas = append(sn.replicas, n)
		}
	}
	old := s.snap.Swap(sn)
	s.nodes.retain(keep)
	if f := s.cfg.Nodes.OnInstall; f != nil {
		f(fmt.Sprintf("sentinel primary %q: %s, %d replicas", s.cfg.Name, p.Addr, len(sn.replicas)), old == nil || old.primary != p)
	}
	return nil
}

// refusedWatchBackoffMax bounds the pause between rounds of the watch in
// which every sentinel refused it (NOPERM, WRONGPASS: an ACL without the
// +switch-master channel, say): the refusal does not pass by itself, and
// the client follows the primary without the watch (rediscovery on lost
// connections and READONLY replies, the periodic refresh). Other failed
// rounds pause at most a second.
const refusedWatchBackoffMax = 30 * time.Second

// watch subscribes to +switch-master on one sentinel at a time and asks
// for rediscovery on every message and after every reconnection (a
// message may have been missed).
func (s *Sentinel) watch() {
	defer s.watchWG.Done()
	backoff := 50 * time.Millisecond
	first := true
	for s.watchCtx.Err() == nil {
		order, _ := s.order()
		refusedAll := true
		for _, addr := range order {
			if s.watchCtx.Err() != nil {
				return
			}
			subscribed, refused := s.watchOne(addr, !first)
			if subscribed {
				backoff = 50 * time.Millisecond
			}
			refusedAll = refusedAll && refused
			first = false
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.watchCtx.Done():
			t.Stop()
		}
		limit := time.Second
		if refusedAll {
			limit = refusedWatchBackoffMax
		}
		backoff = min(backoff*2, limit)
	}
}

// refusal reports whether err is a sentinel's refusal of the watch's
// connection or commands by authentication or ACL (a rejected handshake,
// a NOPERM reply), which retrying soon would not change.
func refusal(err error) bool {
	var ce *wire.ConnError
	if errors.As(err, &ce) {
		return ce.Reason == wire.Handshake
	}
	var re *wire.ReplyError
	return errors.As(err, &re) && aclCode(re.Text)
}

// aclCode reports whether an error reply's text is an authentication or
// permission failure.
func aclCode(text string) bool {
	for _, code := range []string{"NOPERM ", "NOAUTH ", "WRONGPASS "} {
		if strings.HasPrefix(text, code) {
			return true
		}
	}
	return false
}

// watchOne follows +switch-master on one sentinel until the connection
// ends; it reports whether the subscription was established, and, when
// not, whether the sentinel refused it (see refusal).
func (s *Sentinel) watchOne(addr string, resync bool) (subscribed, refused bool) {
	ctx := s.watchCtx
	dctx := ctx
	if s.cfg.QueryTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, s.cfg.QueryTimeout)
		defer cancel()
	}
	nc, rd, _, _, err := wire.DialRaw(dctx, s.cfg.Conn(addr))
	if err != nil {
		return false, refusal(err)
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	// A sentinel that never answers or confirms must not hold the watch:
	// the question and the confirmation are bounded like a query.
	if s.cfg.QueryTimeout > 0 {
		_ = nc.SetDeadline(time.Now().Add(s.cfg.QueryTimeout))
	}
	// Only a sentinel that monitors the primary publishes its
	// +switch-master: a data server listed among the addresses, which
	// accepts the SUBSCRIBE as well, or a sentinel that does not know the
	// name (or answers with no address) would hold the watch with nothing
	// to say.
	if v, err := rawCall(nc, rd, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.cfg.Name); err != nil {
		return false, refusal(err)
	} else if _, err := primaryAddr(v); err != nil {
		return false, false
	}
	if _, err := nc.Write(encode("SUBSCRIBE", "+switch-master")); err != nil {
		return false, false
	}
	// The subscribe confirmation; an error reply (an ACL that denies the
	// channel) or anything else leaves a connection on which no message
	// will ever come.
	if v, err := rd.ReadValue(); err != nil || !v.Type.Aggregate() || len(v.Elems) == 0 || v.Elems[0].Text() != "subscribe" {
		return false, err == nil && v.IsError() && aclCode(string(v.Str))
	}
	_ = nc.SetDeadline(time.Time{})
	if resync {
		s.ref.request(ctx, false)
	}
	// A sentinel that falls silent (stopped, or cut off without a reset)
	// must not hold the watch either: PING it when nothing was read for
	// IdlePing, and leave it when nothing arrives for IdlePing plus
	// HealthTimeout.
	var silence time.Duration
	if s.cfg.IdlePing > 0 && s.cfg.HealthTimeout > 0 {
		silence = s.cfg.IdlePing + s.cfg.HealthTimeout
		var lastRead atomic.Int64
		lastRead.Store(time.Now().UnixNano())
		defer s.watchPing(nc, &lastRead)()
		for {
			_ = nc.SetReadDeadline(time.Now().Add(silence))
			v, err := rd.ReadValue()
			if err != nil {
				return true, false
			}
			lastRead.Store(time.Now().UnixNano())
			s.watchMessage(ctx, addr, v)
		}
	}
	for {
		v, err := rd.ReadValue()
		if err != nil {
			return true, false
		}
		s.watchMessage(ctx, addr, v)
	}
}

// watchMessage asks for rediscovery when v is a +switch-master message
// from the sentinel at addr, which the rediscovery asks first: the
// sentinel that answered last may not have switched yet (sentinels switch
// up to a tenth of a second apart) and would name the old primary.
func (s *Sentinel) watchMessage(ctx context.Context, addr string, v resp.Value) {
	if len(v.Elems) == 3 && v.Elems[0].Text() == "message" {
		s.mu.Lock()
		if i := slices.Index(s.sentinels, addr); i >= 0 {
			s.good = i
		}
		s.switches++
		s.switchedBy = addr
		s.mu.Unlock()
		s.ref.request(ctx, false)
	}
}

// watchPing sends a PING on the watch connection nc whenever nothing was
// read (lastRead, in Unix nanoseconds) and no PING sent for IdlePing,
// until the returned stop is called; stop waits for it to end.
func (s *Sentinel) watchPing(nc net.Conn, lastRead *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	every := s.cfg.IdlePing
	ping := encode("PING")
	wg.Go(func() {
		t := time.NewTimer(every)
		defer t.Stop()
		var pinged time.Time
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := time.Now()
			due := time.Unix(0, lastRead.Load()).Add(every)
			if p := pinged.Add(every); p.After(due) {
				due = p
			}
			if !now.Before(due) {
				_ = nc.SetWriteDeadline(now.Add(s.cfg.HealthTimeout))
				if _, err := nc.Write(ping); err != nil {
					_ = nc.Close()
					return
				}
				pinged, due = now, now.Add(every)
			}
			t.Reset(due.Sub(now))
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// rawCall writes one command on a connection the caller owns and reads
// its reply; an error reply is a *wire.ReplyError.
func rawCall(nc net.Conn, rd *resp.Reader, args ...string) (resp.Value, error) {
	if _, err := nc.Write(encode(args...)); err != nil {
		return resp.Value{}, err
	}
	v, err := rd.ReadValue()
	if err != nil {
		return resp.Value{}, err
	}
	if v.IsError() {
		return resp.Value{}, &wire.ReplyError{Command: args[0] + " " + args[1], Text: string(v.Str)}
	}
	return v.Clone(), nil
}

func encode(args ...string) []byte {
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// badAddrReply reports a SENTINEL GET-MASTER-ADDR-BY-NAME reply that is
// not a host and a port from 1 through 65535 (got says what it was). It
// matches [ErrBadTopology].
type badAddrReply struct{ got string }

func (e *badAddrReply) Error() string {
	return "SENTINEL GET-MASTER-ADDR-BY-NAME answered " + e.got + ", not a primary's host and port"
}

func (e *badAddrReply) Unwrap() error { return ErrBadTopology }

// withArticle puts "a" or "an" before a type's name.
func withArticle(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// sentinelError reports a failed discovery step.
type sentinelError struct {
	addr, name string
	err        error
}

func (e *sentinelError) Error() string {
	s := "sentinel"
	if e.addr != "" {
		s += " " + e.addr
	}
	if e.name != "" {
		s += ": primary " + strconv.Quote(e.name)
	}
	return s + ": " + e.err.Error()
}

func (e *sentinelError) Unwrap() error { return e.err }
