package respire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Routing errors, matched with errors.Is inside a [*RouteError].
var (
	// ErrCrossSlot reports a multi-key command on a Cluster client whose
	// keys hash to different slots (and that the client does not split);
	// nothing was sent. It also matches [ErrInvalidArgument].
	ErrCrossSlot = errors.New("respire: keys hash to different cluster slots")
	// ErrRedirectLoop reports a command that was redirected (MOVED, ASK)
	// more than ClusterOptions.MaxRedirects times in one attempt.
	ErrRedirectLoop = errors.New("respire: too many cluster redirects")
	// ErrNoRoute reports a command for which the topology has no node: a
	// slot no node serves, or no replica under [ReadReplica].
	ErrNoRoute = errors.New("respire: no node to route the command to")
)

// RouteError reports a command that Sentinel or Cluster routing could not
// deliver: no node for its slot, keys in different slots, a malformed or
// endless redirect. Nothing the command asked for ran. The library does not
// change it once returned, so it is safe for concurrent use.
type RouteError struct {
	// Command is the name of the command that could not be routed.
	Command string
	// Slot is the keys' hash slot, or -1.
	Slot int
	// Err matches ErrCrossSlot, ErrRedirectLoop or ErrNoRoute, and
	// carries the detail.
	Err error
}

// Error names the command, its slot when it has one, and why it could not
// be routed.
func (e *RouteError) Error() string {
	s := "respire: " + e.Command
	if e.Slot >= 0 {
		s += " (slot " + strconv.Itoa(e.Slot) + ")"
	}
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "respire: ")
}

// Unwrap returns the cause.
func (e *RouteError) Unwrap() error { return e.Err }

// Is makes a cross-slot error match ErrInvalidArgument too.
func (e *RouteError) Is(target error) bool {
	return target == ErrInvalidArgument && errors.Is(e.Err, ErrCrossSlot)
}

// PartialError reports a multi-key command (MGET, MSET, DEL, EXISTS,
// UNLINK, TOUCH) or a command for every primary (FLUSHALL, DBSIZE, KEYS,
// SCRIPT LOAD, ...) that a Cluster client split into one command per slot
// or per node, some of which failed. The parts are independent commands:
// those that succeeded stay done (the split call is not atomic), and
// each part followed the retry policy on its own. The library does not
// change it once returned, so it is safe for concurrent use.
type PartialError struct {
	// Command is the name of the command that was split.
	Command string
	// Parts is how many commands the call was split into; Failed how
	// many of them failed.
	Parts, Failed int
	// Err is the first part's failure.
	Err error
	ran bool
}

// Error says how many of the command's parts failed and gives the first
// part's failure.
func (e *PartialError) Error() string {
	if e.Failed == e.Parts {
		return "respire: " + e.Command + ": all " + strconv.Itoa(e.Parts) + " parts failed: " + e.Err.Error()
	}
	return "respire: " + e.Command + ": " + strconv.Itoa(e.Failed) + " of " + strconv.Itoa(e.Parts) +
		" parts failed (the others ran): " + e.Err.Error()
}

// Unwrap returns the first part's failure.
func (e *PartialError) Unwrap() error { return e.Err }

// target is where one routed call goes, resolved again at each attempt so
// that a retry reaches the current owner.
type target struct {
	slot   int         // hash slot of the keys; -1: none
	read   bool        // read-only: the read policy may choose a replica
	pinned *route.Node // a fixed node (cursor continuation, one part of a fan-out, CLIENT UNBLOCK)
	// cursor: a cursor continuation, whose cursor is a position on the
	// pinned node only: a MOVED or ASK reply is returned, never followed.
	cursor bool
	served *route.Node // the node of the last send
	// untracked: the attempt followed an ASK redirect, which replaced a
	// cached read's CLIENT CACHING prelude with ASKING (the server would
	// clear the one's flag on the other): its reply must not be cached.
	untracked bool
	// asking: the last send followed an ASK redirect and carried ASKING.
	// Set on a pinned cursor continuation, it sends ASKING first: the
	// first page reached a key that a migration moved to the importing
	// node, which refuses the continuations without it.
	asking bool
}

func (c *Client) isCluster() bool { return c.topo != nil && c.topo.Kind() == route.KindCluster }

// connectTopology starts Sentinel discovery or learns the Cluster map.
func (c *Client) connectTopology(ctx context.Context) error {
	sentinel := c.cfg.sentinel != nil
	role := func(replica bool) string {
		switch {
		case !sentinel:
			return ""
		case replica:
			return "slave"
		}
		return "master"
	}
	nodes := route.Config{
		Shared: func(addr string, replica bool) wire.Config {
			w := c.cfg.wire
			w.Addr, w.Role, w.ReadOnly = addr, role(replica), replica && !sentinel
			if replica {
				// Cached reads go to primaries only: a replica's
				// connection tracks nothing, and its end drops nothing.
				w.Tracking, w.OnPush, w.OnTrackingLost = false, nil, nil
			}
			return w
		},
		Dedicated: func(addr string, replica bool) wire.Config {
			w := c.cfg.dedicatedWire()
			w.Addr, w.Role, w.ReadOnly = addr, role(replica), replica && !sentinel
			return w
		},
		PoolMax:  c.cfg.blockingPoolSize,
		PoolIdle: dedicatedIdleTimeout,
	}
	if c.cfg.logger != nil {
		nodes.OnInstall = c.onInstall
	}
	query := c.cfg.wire.DialTimeout
	var onMoved func([]int)
	if c.cache != nil {
		onMoved = c.cache.dropSlots
	}
	if sentinel {
		so := c.cfg.sentinel
		t, err := route.NewSentinel(ctx, route.SentinelConfig{
			Nodes: nodes,
			Name:  so.PrimaryName,
			Addrs: so.Addrs,
			Conn: func(addr string) wire.Config {
				return wire.Config{Addr: addr, Dial: c.cfg.wire.Dial, TLS: so.TLS, DialTimeout: c.cfg.wire.DialTimeout,
					Username: so.Username, Password: so.Password, Proto: c.cfg.wire.Proto, MaxBulk: c.cfg.wire.MaxBulk,
					OnEvent: c.cfg.wire.OnEvent}
			},
			Read:          route.ReadPolicy(c.cfg.readFrom),
			Refresh:       defaultClusterRefresh,
			QueryTimeout:  query,
			IdlePing:      c.cfg.wire.IdlePing,
			HealthTimeout: c.cfg.wire.HealthTimeout,
		})
		if errors.Is(err, route.ErrUnknownPrimary) {
			return &ConfigError{Field: "Options.Sentinel.PrimaryName", Reason: err.Error()}
		}
		if errors.Is(err, route.ErrNotSentinel) {
			// An address answered, but not as a sentinel: a wrong address
			// (such as a data server's), not a lost connection.
			return notTopology("Options.Sentinel.Addrs", err)
		}
		if err != nil {
			return &ConnError{Command: "connect", Unwritten: true, Err: withRejection(err)}
		}
		c.topo = t
	} else {
		t, err := route.NewCluster(ctx, route.ClusterConfig{
			Nodes:        nodes,
			Seeds:        c.cfg.seeds,
			Refresh:      c.cfg.refresh,
			Read:         route.ReadPolicy(c.cfg.readFrom),
			TLS:          c.cfg.wire.TLS != nil,
			QueryTimeout: query,
			OnMoved:      onMoved,
		})
		if errors.Is(err, route.ErrNotCluster) {
			return notTopology("Options.Cluster", err)
		}
		if err != nil {
			return &ConnError{Command: "connect", Unwritten: true, Err: withRejection(err)}
		}
		c.topo = t
	}
	// Like a standalone Connect, fail now when no primary can be used (a
	// Cluster with one primary down still serves the other slots).
	first := c.dialPrimaries(ctx)
	if first != nil && sentinel {
		// The sentinel that answered may be stale: a second discovery
		// passes over the primary that just failed its dial when
		// another sentinel names a different one.
		if c.topo.Refresh(ctx, true) == nil && c.dialPrimaries(ctx) == nil {
			return nil
		}
	}
	if first == nil {
		return nil
	}
	_ = c.topo.Close()
	var we *wire.ConnError
	if errors.As(first, &we) {
		return connError("connect", we)
	}
	return first
}

// notTopology is the error of a Connect whose servers answered but are
// not the topology configured in field (a data server given as a
// sentinel, a standalone server as a Cluster seed): a *ConfigError that
// wraps the server's reply as a *ServerError.
func notTopology(field string, err error) error {
	ce := &ConfigError{Field: field, Reason: err.Error()}
	var re *wire.ReplyError
	if errors.As(err, &re) {
		ce.cause = newServerError(re.Command, []byte(re.Text))
	}
	return ce
}

// dialPrimaries connects the shared connection of the primaries of the
// topology until one succeeds: nil then, else the first failure
// (ErrNoRoute without a primary).
func (c *Client) dialPrimaries(ctx context.Context) error {
	var first error
	for _, n := range c.topo.Primaries() {
		_, err := n.EP.Conn(ctx)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = ErrNoRoute
	}
	return first
}

// withRejection returns err, the joined failures of a discovery, with the
// *ServerError of the first handshake a server rejected among them (such
// as WRONGPASS or NOAUTH) joined in front, so that errors.As finds it as
// it does after a standalone Connect; err alone when there is none.
func withRejection(err error) error {
	if se := handshakeRejection(err); se != nil {
		return errors.Join(se, err)
	}
	return err
}

// handshakeRejection finds, depth first, a handshake that a server
// answered with an error reply among err's causes.
func handshakeRejection(err error) *ServerError {
	for err != nil {
		if we, ok := err.(*wire.ConnError); ok && we.Reason == wire.Handshake {
			var re *wire.ReplyError
			if errors.As(we.Cause, &re) {
				return newServerError(re.Command, []byte(re.Text))
			}
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if se := handshakeRejection(e); se != nil {
					return se
				}
			}
			return nil
		}
		err = errors.Unwrap(err)
	}
	return nil
}

// execOn is exec on one node: the standalone server, or node of a
// topology.
func (c *Client) execOn(ctx context.Context, f *wire.Frame, s *spec, node *route.Node) error {
	if c.topo == nil {
		return c.exec(ctx, f, s)
	}
	return c.execRouted(ctx, f, s, node)
}

// keyNode returns the primary serving the keys of the command in f (nil:
// no command, any primary): the
// standalone server, the Sentinel primary, or the Cluster owner of the
// keys' slot. Keys in several slots are an ErrCrossSlot.
func (c *Client) keyNode(f *wire.Frame, s *spec) (*route.Node, error) {
	if c.topo == nil {
		return c.node, nil
	}
	slot := -1
	if c.isCluster() && f != nil {
		var small [16][]byte
		var cross bool
		if slot, cross = keySlot(s.desc, frameArgs(f.Buf, small[:0])); cross {
			return nil, &RouteError{Command: s.name, Slot: -1, Err: ErrCrossSlot}
		}
	}
	n, err := c.topo.Pick(slot, false)
	if err != nil {
		return nil, routeErr(s.name, slot, err)
	}
	return n, nil
}

// pick returns the node of t's next attempt.
func (c *Client) pick(t *target) (*route.Node, error) {
	if t.pinned != nil {
		return t.pinned, nil
	}
	return c.topo.Pick(t.slot, t.read)
}

// routeErr converts a routing failure into the call's error.
func routeErr(name string, slot int, err error) error {
	switch {
	case errors.Is(err, route.ErrNoRoute), errors.Is(err, route.ErrNoReplica):
		err = errors.Join(ErrNoRoute, err)
	case errors.Is(err, route.ErrBadRedirect):
		err = errors.Join(ErrProtocol, err)
	}
	var we *wire.ConnError
	if errors.As(err, &we) {
		return connError(name, we)
	}
	return &RouteError{Command: name, Slot: slot, Err: err}
}

// execRouted is exec on a Sentinel or Cluster client; pin fixes the node.
func (c *Client) execRouted(ctx context.Context, f *wire.Frame, s *spec, pin *route.Node) error {
	t := target{pinned: pin}
	return c.execTarget(ctx, f, s, &t)
}

// execTarget is execRouted with the caller's target, which tells the
// caller the node that served the call (t.served).
func (c *Client) execTarget(ctx context.Context, f *wire.Frame, s *spec, t *target) error {
	t.slot = -1
	t.read = c.cfg.readFrom != ReadPrimary && s.desc.Flags().Has(catalog.FlagReadOnly)
	if t.pinned == nil && c.isCluster() {
		var small [16][]byte
		args := frameArgs(f.Buf, small[:0])
		slot, cross := keySlot(s.desc, args)
		// The descriptor's name, not the caller's: NewCommand("SCRIPT")
		// with "LOAD" as its first argument is SCRIPT LOAD.
		name := s.desc.FullName()
		switch {
		case cross && splitOf(name) != splitNone:
			return c.execSplit(ctx, f, s, args)
		case cross:
			f.Release()
			return &RouteError{Command: s.name, Slot: -1, Err: ErrCrossSlot}
		case slot < 0 && fanOutOf(name) != fanNone:
			return c.execFanOut(ctx, f, s)
		}
		t.slot = slot
		// A raw continuation: its cursor is a position on the server
		// that issued it, which a redirect would leave.
		t.cursor = t.cursor || cursorContinuation(s.desc, args)
	}
	return c.execResolved(ctx, f, s, t)
}

// ranRedirect reports whether rd, the redirect that a call of desc to
// the keys of slot (-1: none) was answered with, is the call's own error
// reply: a server redirects a script or function call before running it,
// naming its keys' slot (a keyless call never), so a script's redirect
// naming another slot means the call ran. Following it would run it
// again.
func ranRedirect(desc catalog.Command, slot int, rd route.Redirect) bool {
	return rd.Slot != slot && desc.Flags().Has(catalog.FlagScripting)
}

// askingPrelude is ASKING, sent ahead of a command that follows an ASK
// redirect in the same frame, so that no other caller's command can come
// between them on the shared connection.
var askingPrelude = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "ASKING")

// attachAsking puts ASKING ahead of the frame's command (in place of a
// cached read's CLIENT CACHING prelude, whose reply then is not cached)
// and returns the frame's own bytes, which the caller restores once the
// send is over.
func attachAsking(f *wire.Frame, s *spec, t *target) (orig []byte) {
	orig = f.Buf
	body := orig
	if s.tracked {
		// ASKING takes the place of the cached read's prelude.
		body, t.untracked = orig[len(cachingPrelude):], true
	} else {
		// ASKING is one more reply ahead.
		f.Replies, f.Prelude = max(f.Replies, 1)+1, f.Prelude+1
	}
	f.Buf = append(append(make([]byte, 0, len(askingPrelude)+len(body)), askingPrelude...), body...)
	return orig
}

// attemptRouted is one attempt on a topology: the node is picked from the
// current snapshot, and MOVED and ASK replies, and a node the topology
// retired before the frame was written, are followed within the attempt
// (bounded by MaxRedirects and the deadline; they are not attempts).
func (c *Client) attemptRouted(ctx context.Context, f *wire.Frame, waitDL time.Time, s *spec, t *target) attemptResult {
	node, err := c.pick(t)
	if err != nil {
		return attemptResult{err: routeErr(s.name, t.slot, err), failure: retry.Fatal, unwritten: true, owned: true}
	}
	var orig []byte // the frame's own bytes while the ASKING prelude is attached
	origReplies, origPrelude := f.Replies, f.Prelude
	t.untracked = false
	if t.asking && t.pinned != nil {
		orig = attachAsking(f, s, t)
	} else {
		t.asking = false
	}
	for redirects := 0; ; {
		t.served = node
		r := c.send(ctx, f, waitDL, s, node.EP)
		r.started, r.replica = true, node.Replica
		if orig != nil && r.owned {
			f.Buf, f.Replies, f.Prelude = orig, origReplies, origPrelude
			orig = nil
		}
		if r.err != nil && r.unwritten && r.owned && t.pinned == nil && errors.Is(r.err, route.ErrRetired) {
			// The node left the topology before the frame was written:
			// the map already names its successor, so the frame goes
			// there within this attempt, bounded like a redirect.
			if redirects++; redirects > c.cfg.maxRedirects {
				return r
			}
			if r := c.redirectBudget(ctx, waitDL, s, t); r != nil {
				return *r
			}
			if node, err = c.pick(t); err != nil {
				return attemptResult{err: routeErr(s.name, t.slot, err), failure: retry.Fatal, unwritten: true, owned: true}
			}
			f.Reset()
			continue
		}
		if r.err == nil || !r.owned || !f.IsErr {
			return r
		}
		if c.isCluster() && s.unit == nil { // a unit's members redirect on their own
			rd, ok, perr := route.ParseRedirect(f.ErrReply)
			if perr != nil {
				return attemptResult{err: &RouteError{Command: s.name, Slot: t.slot, Err: errors.Join(ErrProtocol, perr, errors.New(string(f.ErrReply)))},
					failure: retry.Fatal, unwritten: true, owned: true}
			}
			if ok && ranRedirect(s.desc, t.slot, rd) {
				return r
			}
			if ok && t.cursor {
				// Another server would read the cursor as a position
				// in a table it does not have, silently skipping or
				// repeating elements: the iteration ends here.
				c.noteMoved(f.ErrReply, node)
				return r
			}
			if ok {
				var fail *attemptResult
				if node, fail = c.nextHop(ctx, waitDL, s, t, &redirects, rd, string(f.ErrReply), node); fail != nil {
					return *fail
				}
				f.Reset()
				if t.asking = rd.Ask; rd.Ask {
					orig = attachAsking(f, s, t)
				}
				continue
			}
		}
		if se := serverError(r.err); c.isCluster() && s.tx && t.pinned == nil && se != nil && se.Code == "MOVED" {
			// A transaction's member was queued on a node that no longer
			// serves its slot (EXEC then aborted it): routing, followed
			// within the attempt like a command's MOVED, so that it is
			// no attempt and leaves the retry budget as it was. ASK ends
			// the unit instead (a transaction never follows it).
			rd, ok, perr := route.ParseRedirect([]byte(se.Message))
			if !ok || perr != nil {
				return r
			}
			var fail *attemptResult
			if node, fail = c.nextHop(ctx, waitDL, s, t, &redirects, rd, se.Message, node); fail != nil {
				return *fail
			}
			f.Reset()
			continue
		}
		if r.failure == retry.ReadOnlyReply {
			// The node is no longer the primary: learn the new one before
			// the retry decision, so that a retry writes there. A call
			// that cannot be retried only asks for the refresh.
			if c.retries && s.cat.Retryable() {
				c.refreshWithin(ctx, waitDL)
			} else {
				_ = c.topo.Refresh(ctx, false)
			}
		}
		if r.failure == retry.Unselectable && c.isCluster() {
			if se := serverError(r.err); se != nil && se.Code == "CLUSTERDOWN" {
				// The node's map has no owner for the slot that the
				// client's map gives it ("Hash slot not served"), or the
				// cluster is failing over: learn the map it now has, as
				// after a MOVED. The reply is the call's (not selectable).
				_ = c.topo.Refresh(ctx, false)
			}
		}
		return r
	}
}

// nextHop follows rd, the redirect (its text reply) that from sent,
// within an attempt: counted against MaxRedirects and bounded by the
// deadline, it returns the node to send to next, or the attempt's
// failure.
func (c *Client) nextHop(ctx context.Context, waitDL time.Time, s *spec, t *target, redirects *int,
	rd route.Redirect, reply string, from *route.Node) (*route.Node, *attemptResult) {
	if *redirects++; *redirects > c.cfg.maxRedirects {
		return nil, &attemptResult{err: redirectLoop(s.name, t.slot, reply), failure: retry.Fatal, unwritten: true, owned: true}
	}
	if r := c.redirectBudget(ctx, waitDL, s, t); r != nil {
		return nil, r
	}
	addr := redirectAddr(rd.Addr, from.Addr)
	var n *route.Node
	var err error
	if rd.Ask {
		n, err = c.topo.Ask(addr)
	} else {
		n, err = c.topo.Moved(rd.Slot, addr)
	}
	if err != nil {
		return nil, &attemptResult{err: routeErr(s.name, t.slot, err), failure: retry.Fatal, unwritten: true, owned: true}
	}
	return n, nil
}

// noteMoved learns the slot owner that a MOVED reply names, on a path
// that returns the reply instead of following it (a blocking command, a
// dedicated connection): the map records the owner, as after a followed
// MOVED, and a refresh is requested, so that the next call goes there.
// from is the node that answered.
func (c *Client) noteMoved(reply []byte, from *route.Node) {
	if !c.isCluster() || from == nil {
		return
	}
	if rd, ok, err := route.ParseRedirect(reply); ok && err == nil && !rd.Ask {
		_, _ = c.topo.Moved(rd.Slot, redirectAddr(rd.Addr, from.Addr))
	}
}

// redirectAddr is the address of a redirect that from sent: a redirect
// without a host ("MOVED 3999 :6381") means from's host.
func redirectAddr(addr, from string) string {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		h, _, _ := net.SplitHostPort(from)
		return net.JoinHostPort(h, port)
	}
	return addr
}

// redirectLoop is the error of a command (or transaction) redirected
// more than MaxRedirects times; reply is the last redirect's text.
func redirectLoop(command string, slot int, reply string) error {
	return &RouteError{Command: command, Slot: slot, Err: errors.Join(ErrRedirectLoop, errors.New("last redirect: "+reply))}
}

// redirectBudget returns the failure of an attempt whose deadline or
// context ended while it was being redirected, or nil.
func (c *Client) redirectBudget(ctx context.Context, waitDL time.Time, s *spec, t *target) *attemptResult {
	if err := ctx.Err(); err != nil {
		return &attemptResult{err: &ContextError{Command: s.name, Err: err}, failure: retry.Fatal, unwritten: true, owned: true}
	}
	if !waitDL.IsZero() && !time.Now().Before(waitDL) {
		return &attemptResult{err: &ContextError{Command: s.name, Err: context.DeadlineExceeded}, failure: retry.Fatal, unwritten: true, owned: true}
	}
	return nil
}

// refreshWithin waits for a topology refresh within ctx and waitDL.
func (c *Client) refreshWithin(ctx context.Context, waitDL time.Time) {
	if !waitDL.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, waitDL)
		defer cancel()
	}
	_ = c.topo.Refresh(ctx, true)
}

// frameArgs splits a frame's (first) encoded command, an array of bulk
// strings, into its words, appended to dst; nil when the frame does not
// start with a command.
func frameArgs(buf []byte, dst [][]byte) [][]byte {
	words, _ := nextCommand(buf, dst)
	return words
}

// nextCommand splits the first encoded command of buf into its words,
// appended to dst, and returns the offset of what follows it; nil words
// when buf does not start with a command.
func nextCommand(buf []byte, dst [][]byte) ([][]byte, int) {
	if len(buf) < 4 || buf[0] != '*' {
		return nil, 0
	}
	n, i, ok := readLen(buf, 1)
	if !ok {
		return nil, 0
	}
	for ; n > 0; n-- {
		if i >= len(buf) || buf[i] != '$' {
			return nil, 0
		}
		var l int
		if l, i, ok = readLen(buf, i+1); !ok || i+l+2 > len(buf) {
			return nil, 0
		}
		dst = append(dst, buf[i:i+l])
		i += l + 2
	}
	return dst, i
}

// readLen reads a decimal length ending in CRLF at buf[i:]. A length
// beyond buf's is refused before it can overflow.
func readLen(buf []byte, i int) (n, next int, ok bool) {
	start := i
	for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
		if n = n*10 + int(buf[i]-'0'); n > len(buf) {
			return 0, 0, false
		}
		i++
	}
	if i == start || i+1 >= len(buf) || buf[i] != '\r' || buf[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}

// keySlot returns the hash slot of a command's keys (-1: no keys) and
// whether they span several slots. CLUSTER COUNTKEYSINSLOT and
// GETKEYSINSLOT have no key but name a slot, which a node answers from
// its own keys without redirecting: that slot routes them.
func keySlot(desc catalog.Command, args [][]byte) (slot int, cross bool) {
	slot = -1
	visitKeys(desc, args, func(k []byte) {
		s := route.SlotBytes(k)
		if slot >= 0 && s != slot {
			cross = true
		}
		if slot < 0 {
			slot = s
		}
	})
	if slot < 0 && desc.Name() == "CLUSTER" {
		slot = slotOperand(desc.Subcommand(), args)
	}
	return slot, cross
}

// slotOperand returns the slot that CLUSTER COUNTKEYSINSLOT or
// GETKEYSINSLOT (args: the full command) names, or -1: another
// subcommand, or a slot the server will reject, from whichever node.
func slotOperand(sub string, args [][]byte) int {
	if (sub != "COUNTKEYSINSLOT" && sub != "GETKEYSINSLOT") || len(args) < 3 {
		return -1
	}
	n, err := strconv.Atoi(string(args[2]))
	if err != nil || n < 0 || n >= route.Slots || string(args[2]) != strconv.Itoa(n) {
		return -1
	}
	return n
}

// visitKeys calls visit with each key of a command (args: its words, the
// name first). Key positions come from the catalog; for commands whose keys
// move with their arguments, from the numkeys or STREAMS argument.
func visitKeys(desc catalog.Command, args [][]byte, visit func(k []byte)) {
	// A server refuses an argument count its arity rules out before it
	// looks for keys: such a command has none, so that the server's
	// error, not a cross-slot one, answers it.
	if a := desc.Arity(); len(args) == 0 || (a > 0 && len(args) != a) || (a < 0 && len(args) < -a) {
		return
	}
	name := desc.FullName() // once: a subcommand's is built by concatenation
	if first, count, step, ok := movableKeys(name, args); ok {
		if strings.HasPrefix(name, "Z") && strings.HasSuffix(name, "STORE") && len(args) > 1 {
			visit(args[1]) // the destination
		}
		for i := 0; i < count && first+i*step < len(args); i++ {
			visit(args[first+i*step])
		}
		return
	}
	first, last, step := desc.Keys()
	if first <= 0 || first >= len(args) {
		return
	}
	if last < 0 {
		last += len(args)
	}
	last = min(last, len(args)-1)
	if step <= 0 {
		step = 1
	}
	for i := first; i <= last; i += step {
		visit(args[i])
	}
	if i := storeKey(name, args); i > 0 {
		visit(args[i])
	}
}

// storeKey returns the position of the destination key that SORT (after
// STORE) and GEORADIUS, GEORADIUSBYMEMBER (after STORE or STOREDIST)
// take besides their fixed key, 0 when there is none. As for the server,
// the last one counts, the arguments of BY, GET and LIMIT are skipped,
// and the geo options start after the unit.
func storeKey(name string, args [][]byte) (at int) {
	switch name {
	case "SORT": // SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] ... [STORE destination]
		for i := 2; i < len(args); i++ {
			switch a := string(args[i]); {
			case strings.EqualFold(a, "LIMIT"):
				i += 2
			case strings.EqualFold(a, "BY"), strings.EqualFold(a, "GET"):
				i++
			case strings.EqualFold(a, "STORE") && i+1 < len(args):
				at = i + 1
				i++
			}
		}
	case "GEORADIUS", "GEORADIUSBYMEMBER":
		// GEORADIUS key longitude latitude radius unit [options]
		// GEORADIUSBYMEMBER key member radius unit [options]
		i := 6
		if name == "GEORADIUSBYMEMBER" {
			i = 5
		}
		for ; i+1 < len(args); i++ {
			if a := string(args[i]); strings.EqualFold(a, "STORE") || strings.EqualFold(a, "STOREDIST") {
				at = i + 1
				i++
			}
		}
	}
	return at
}

// movableKeys finds the keys of commands whose key positions depend on
// their arguments: first position, count and step.
func movableKeys(name string, args [][]byte) (first, count, step int, ok bool) {
	// numkeys reads the count at args[first-1] of keys starting at first,
	// step apart. A count that is not a number, or that more arguments
	// than there are would have to hold, makes the server reject the
	// command: then there is no key, so that the server's error, not a
	// cross-slot one, answers (COMMAND GETKEYS finds none either, but for
	// a count with a numeric head, "1A", that it reads as 1: a keyless
	// call is redirected there, to the same error).
	numkeys := func(first, step int) (int, int, int, bool) {
		if first > len(args) {
			return first, 0, step, true
		}
		n, err := strconv.Atoi(string(args[first-1]))
		if err != nil || n < 0 || n > (len(args)-first)/step {
			return first, 0, step, true
		}
		return first, n, step, true
	}
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO", "BLMPOP", "BZMPOP",
		"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE": // the Z*STORE destination is checked by keySlot
		return numkeys(3, 1)
	case "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "SINTERCARD", "LMPOP", "ZMPOP":
		return numkeys(2, 1)
	case "MSETEX": // MSETEX numkeys key value [key value ...] [options]
		return numkeys(2, 2)
	case "MIGRATE": // MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...]
		for i := 6; i < len(args); i++ {
			switch a := string(args[i]); {
			case strings.EqualFold(a, "AUTH"):
				i++
			case strings.EqualFold(a, "AUTH2"):
				i += 2
			case strings.EqualFold(a, "KEYS") && len(args[3]) > 0:
				return 0, 0, 0, true // the server rejects a key besides KEYS
			case strings.EqualFold(a, "KEYS"):
				return i + 1, len(args) - i - 1, 1, true
			}
		}
		return 3, 1, 1, true
	case "XREAD", "XREADGROUP":
		// As the server does, skip the options' arguments to find
		// STREAMS: a group or a consumer may be named "streams".
		for i := 1; i < len(args); i++ {
			switch a := string(args[i]); {
			case strings.EqualFold(a, "COUNT"), strings.EqualFold(a, "BLOCK"), strings.EqualFold(a, "CLAIM"):
				i++
			case strings.EqualFold(a, "GROUP"):
				i += 2
			case strings.EqualFold(a, "STREAMS"):
				n := (len(args) - i - 1) / 2
				return i + 1, n, 1, true
			}
		}
		return 0, 0, 0, true
	}
	return 0, 0, 0, false
}

// Split kinds: how a cross-slot multi-key command is split per slot and
// its replies reassembled.
type splitKind uint8

const (
	splitNone  splitKind = iota
	splitSum             // DEL, EXISTS, UNLINK, TOUCH: integer replies summed
	splitArray           // MGET: array replies reassembled in key order
	splitOK              // MSET: key-value pairs, OK when every part is
)

func splitOf(name string) splitKind {
	switch name {
	case "DEL", "EXISTS", "UNLINK", "TOUCH":
		return splitSum
	case "MGET":
		return splitArray
	case "MSET":
		return splitOK
	}
	return splitNone
}

// maxParallelParts bounds the parts of one split call in flight at once.
const maxParallelParts = 16

// part is one per-slot or per-node command of a split call.
type part struct {
	pos  []int // for a split: positions of the keys (into args) it carries
	node *route.Node
	f    *wire.Frame
	err  error
}

// execSplit runs a cross-slot MGET/MSET/DEL/EXISTS/UNLINK/TOUCH as one
// command per slot, in parallel, and reassembles the replies into f.
func (c *Client) execSplit(ctx context.Context, f *wire.Frame, s *spec, args [][]byte) error {
	name := s.desc.FullName() // a command without a subcommand
	kind := splitOf(name)
	step := 1
	if kind == splitOK {
		step = 2
		if (len(args)-1)%2 != 0 {
			f.Release()
			return errInvalid(s.name, "want key-value pairs")
		}
	}
	bySlot := map[int]int{}
	var parts []*part
	for i := 1; i < len(args); i += step {
		sl := route.SlotBytes(args[i])
		j, ok := bySlot[sl]
		if !ok {
			j = len(parts)
			bySlot[sl] = j
			parts = append(parts, &part{})
		}
		parts[j].pos = append(parts[j].pos, i)
	}
	for _, p := range parts {
		p.f = c.newFrame(1+len(p.pos)*step, name)
		for _, i := range p.pos {
			for k := 0; k < step; k++ {
				p.f.Buf = resp.AppendBulk(p.f.Buf, args[i+k])
			}
		}
		p.f.Want = f.Want
	}
	if err := c.runParts(ctx, f, s, parts); err != nil {
		return err
	}
	switch kind {
	case splitSum:
		sumParts(f, parts)
	case splitOK:
		f.Value = parts[0].f.Value // every part answered OK
	case splitArray:
		elems := make([]resp.Value, (len(args)-1)/step)
		for _, p := range parts {
			if !p.f.Value.Type.Aggregate() || len(p.f.Value.Elems) != len(p.pos) {
				f.Value = p.f.Value // the caller reports the unexpected shape
				elems = nil
				break
			}
			for j, i := range p.pos {
				elems[(i-1)/step] = p.f.Value.Elems[j]
			}
		}
		if elems != nil {
			f.Value = resp.Value{Type: resp.Array, Elems: elems}
		}
	}
	for _, p := range parts {
		p.f.Release()
	}
	return nil
}

// sumParts adds up the integer replies of parts into f. A part whose reply
// is not an integer (another type, or a null) makes that reply f's, so
// that the caller reports it instead of a sum that leaves a node out.
func sumParts(f *wire.Frame, parts []*part) {
	var sum int64
	for _, p := range parts {
		v := replyView(p.f)
		if v.Type != resp.Integer {
			f.Int, f.Null, f.Value = 0, v.Type == resp.Null, v.Clone()
			return
		}
		sum += v.Int
	}
	f.Int = sum
	if f.Want == wire.WantValue {
		f.Value = resp.Value{Type: resp.Integer, Int: sum}
	}
}

// sumPairs combines replies of names and counts asked in the same order
// (PUBSUB SHARDNUMSUB's flat array) into one with each name's counts
// summed. A reply of another shape, or whose names differ from the
// first's, is returned as it is, for the caller to report.
func sumPairs(parts []*part) resp.Value {
	first := parts[0].f.Value
	if first.Type != resp.Array || len(first.Elems)%2 != 0 {
		return first
	}
	out := resp.Value{Type: resp.Array, Elems: slices.Clone(first.Elems)}
	for _, p := range parts[1:] {
		v := p.f.Value
		if v.Type != resp.Array || len(v.Elems) != len(out.Elems) {
			return v
		}
		for i := 0; i < len(v.Elems); i += 2 {
			name, n := v.Elems[i], v.Elems[i+1]
			if !bytes.Equal(name.Str, out.Elems[i].Str) || n.Type != resp.Integer || out.Elems[i+1].Type != resp.Integer {
				return v
			}
			out.Elems[i+1].Int += n.Int
		}
	}
	return out
}

// runParts executes every part (routed by its own keys, or pinned to its
// node), at most maxParallelParts at a time, and waits for all of them.
// When any part failed it releases f and every part and returns the
// *PartialError; otherwise the caller reassembles the parts into f.
func (c *Client) runParts(ctx context.Context, f *wire.Frame, s *spec, parts []*part) error {
	sem := make(chan struct{}, maxParallelParts)
	var wg sync.WaitGroup
	for _, p := range parts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.execRouted(ctx, p.f, s, p.node); err != nil {
				p.err = err
			}
		}()
	}
	wg.Wait()
	var first error
	failed, ran := 0, false
	for _, p := range parts {
		if p.err != nil {
			failed++
			if first == nil {
				first = p.err
			}
			ran = ran || MayHaveExecuted(p.err)
		} else {
			ran = true
		}
	}
	if failed == 0 {
		return nil
	}
	for _, p := range parts {
		if p.err == nil {
			p.f.Release()
		}
	}
	f.Release()
	return &PartialError{Command: s.name, Parts: len(parts), Failed: failed, Err: first, ran: ran}
}

// Fan-out kinds: keyless commands whose meaning is "on every primary".
type fanOutKind uint8

const (
	fanNone    fanOutKind = iota
	fanAll                // the first primary's reply, when every one succeeded
	fanSum                // DBSIZE: integers summed
	fanConcat             // KEYS: arrays concatenated
	fanPairSum            // PUBSUB SHARDNUMSUB: the counts of each name summed
)

func fanOutOf(name string) fanOutKind {
	switch name {
	case "FLUSHALL", "FLUSHDB", "SCRIPT LOAD", "SCRIPT FLUSH", "FUNCTION LOAD", "FUNCTION DELETE",
		"FUNCTION FLUSH", "FUNCTION RESTORE", "CONFIG SET", "CONFIG RESETSTAT":
		return fanAll
	case "DBSIZE":
		return fanSum
	case "KEYS", "PUBSUB SHARDCHANNELS": // a node knows the shard channels of its slots
		return fanConcat
	case "PUBSUB SHARDNUMSUB":
		return fanPairSum
	}
	return fanNone
}

// execFanOut sends f's command to every primary and combines the replies
// into f.
func (c *Client) execFanOut(ctx context.Context, f *wire.Frame, s *spec) error {
	primaries := c.topo.Primaries()
	if len(primaries) == 0 {
		f.Release()
		return &RouteError{Command: s.name, Slot: -1, Err: ErrNoRoute}
	}
	parts := make([]*part, len(primaries))
	for i, n := range primaries {
		p := &part{node: n, f: c.frames.Get()}
		p.f.Buf = append(p.f.Buf, f.Buf...)
		p.f.Want = f.Want
		parts[i] = p
	}
	if err := c.runParts(ctx, f, s, parts); err != nil {
		return err
	}
	switch fanOutOf(s.desc.FullName()) {
	case fanSum:
		sumParts(f, parts)
	case fanPairSum:
		f.Value = sumPairs(parts)
	case fanConcat:
		var elems []resp.Value
		for _, p := range parts {
			if !p.f.Value.Type.Aggregate() {
				elems = nil
				f.Value = p.f.Value // the caller reports the unexpected shape
				break
			}
			elems = append(elems, p.f.Value.Elems...)
		}
		if f.Value.Type == 0 {
			f.Value = resp.Value{Type: resp.Array, Elems: elems}
		}
	default:
		p := parts[0].f
		f.Int, f.Null, f.Value = p.Int, p.Null, p.Value
		f.Bytes = append(f.Bytes, p.Bytes...)
	}
	for _, p := range parts {
		p.f.Release()
	}
	return nil
}
