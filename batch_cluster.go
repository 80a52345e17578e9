package respire

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
)

// batchGroup is one Cluster group of a batch: the members one node serves.
type batchGroup struct {
	slot int         // a member's slot: the group's route
	pin  *route.Node // the server of a cursor continuation
	ms   []int
	err  error
	mem  replyMem
}

// groupKey identifies a Cluster group: its node, and whether a cursor
// continuation pinned it there.
type groupKey struct {
	node   *route.Node
	pinned bool
}

// execGroups runs a Cluster batch: members grouped by the node that
// serves their keys (keyless ones with the first group), one unit per
// group, in parallel. A cursor continuation pins its group to the server
// of its cursor (and, as a Never member, makes that group unretryable). A
// member answered with MOVED or ASK (the map changed between grouping and
// sending) is sent again on its own within the same execution, and a
// failure of that resend other than a server's reply is returned with the
// groups' errors; other groups keep their results. The members of a slot
// that no node serves fail with ErrNoRoute unsent, once per slot in the
// returned error, and the other groups run. One deadline (ctx's,
// else CommandTimeout from the call) bounds the groups and the resends.
func (b *Batch) execGroups(ctx context.Context) error {
	c := b.c
	if b.byNode == nil {
		b.byNode, b.bySlot = map[groupKey]int{}, map[int]int{}
	}
	clear(b.byNode)
	clear(b.bySlot)
	b.groups, b.keyless = b.groups[:0], b.keyless[:0]
	var unserved []error // one per slot that no node serves
	for i := range b.members {
		m := &b.members[i]
		var small [16][]byte
		slot, cross := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
		if cross {
			err := &RouteError{Command: m.name, Slot: -1, Err: ErrCrossSlot}
			b.fail(err)
			return err
		}
		var n *route.Node
		var err error
		switch {
		case m.pin != "":
			n, err = c.topo.At(m.pin)
		case slot < 0:
			b.keyless = append(b.keyless, i)
			continue
		default:
			// The members of one slot go in one group, in queue order,
			// whatever map a refresh or another caller's MOVED installs
			// while the batch is grouped: two groups run in parallel.
			g, ok := b.bySlot[slot]
			if !ok {
				if n, err = c.topo.Pick(slot, false); err != nil {
					// No node serves the slot (a map with gaps): its
					// members fail unsent, as a group whose node cannot
					// be reached would, and the other groups run.
					g = -1
					b.bySlot[slot] = g
					unserved = append(unserved, routeErr(m.name, slot, err))
				}
			}
			switch {
			case g < 0:
				m.err, m.done = routeErr(m.name, slot, route.ErrNoRoute), true
				continue
			case ok:
				b.groups[g].ms = append(b.groups[g].ms, i)
				continue
			}
		}
		if err != nil {
			err = routeErr(m.name, slot, err)
			b.fail(err)
			return err
		}
		k := groupKey{n, m.pin != ""}
		g, ok := b.byNode[k]
		if !ok {
			g = len(b.groups)
			b.byNode[k] = g
			b.addGroup(slot, n, k.pinned)
		}
		b.groups[g].ms = append(b.groups[g].ms, i)
		if m.pin == "" {
			b.bySlot[slot] = g
		}
	}
	first := 0
	for first < len(b.groups) && b.groups[first].pin != nil {
		first++
	}
	if first == len(b.groups) {
		b.addGroup(-1, nil, false)
	}
	if len(b.keyless) > 0 {
		// In queue order among the group's members, as on one server.
		g := &b.groups[first]
		g.ms = append(g.ms, b.keyless...)
		slices.Sort(g.ms)
	}
	// One deadline bounds the groups and the resends of redirected
	// members: each group's CommandTimeout starts now, and so does the
	// resends' (read before any I/O; a context is built only when a
	// member needs a resend).
	waitDL := c.waitDeadline(ctx)
	b.runGroups(ctx)
	errs := unserved
	for i := range b.groups {
		if err := b.groups[i].err; err != nil {
			errs = append(errs, err)
		}
	}
	for i := range b.members {
		m := &b.members[i]
		if m.err == nil {
			continue
		}
		var se *ServerError
		if errors.As(m.err, &se) && se.Code == "CLUSTERDOWN" {
			// As for a command (attemptRouted): the node's map may no
			// longer give it the slot. Requests are coalesced.
			_ = c.topo.Refresh(ctx, false)
		}
		if se != nil && (se.Code == "MOVED" || se.Code == "ASK") && m.pin == "" && !b.continuation(m) && !b.ranRedirect(m, se) {
			if !waitDL.IsZero() {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, waitDL)
				defer cancel()
				waitDL = time.Time{} // ctx carries it now
			}
			// A server's reply to the resend is the member's own; any
			// other failure (the context, the connection, a redirect
			// loop) is the batch's too: it did not run every member.
			if m.err = b.resendMember(ctx, m); m.err != nil && !errors.As(m.err, &se) {
				errs = append(errs, m.err)
			}
		}
	}
	return multierr.Join(errs...)
}

// addGroup appends a group routed by slot (or pinned to n), reusing the
// member list and reply memory of a group of an earlier execution.
func (b *Batch) addGroup(slot int, n *route.Node, pinned bool) {
	if len(b.groups) == cap(b.groups) {
		b.groups = append(b.groups, batchGroup{})
	} else {
		b.groups = b.groups[:len(b.groups)+1]
	}
	g := &b.groups[len(b.groups)-1]
	g.slot, g.pin, g.ms, g.err = slot, nil, g.ms[:0], nil
	if pinned {
		g.pin = n
	}
}

// runGroups sends every non-empty group as its own unit, in parallel: one
// on the calling goroutine, each other one on a goroutine of its own.
func (b *Batch) runGroups(ctx context.Context) {
	var first *batchGroup
	more := false
	for i := range b.groups {
		switch g := &b.groups[i]; {
		case len(g.ms) == 0:
		case first == nil:
			first = g
		default:
			more = true
		}
	}
	if more {
		b.runOthersAside(ctx, first)
	} else if first != nil {
		b.runGroup(ctx, first)
	}
}

// runOthersAside runs first on the calling goroutine and every other
// non-empty group on a goroutine of its own, and waits for them. It is
// apart from runGroups so that a batch of one group, the common case,
// builds no closure and allocates nothing.
func (b *Batch) runOthersAside(ctx context.Context, first *batchGroup) {
	var wg sync.WaitGroup
	for i := range b.groups {
		if g := &b.groups[i]; g != first && len(g.ms) > 0 {
			wg.Go(func() { b.runGroup(ctx, g) })
		}
	}
	b.runGroup(ctx, first)
	wg.Wait()
}

// runGroup sends g as one unit routed by its slot (or pin).
func (b *Batch) runGroup(ctx context.Context, g *batchGroup) {
	var t target
	g.err = b.execGroup(ctx, g.ms, g.slot, g.pin, &t, &g.mem)
}

// execGroup sends one Cluster group as a unit routed by slot (or pinned).
// A group of reads only follows the read policy (and its replica route
// retries as a group); any write sends it to the primary.
func (b *Batch) execGroup(ctx context.Context, ms []int, slot int, pin *route.Node, t *target, mem *replyMem) error {
	t.slot, t.pinned, t.read = slot, pin, b.c.cfg.readFrom != ReadPrimary && pin == nil
	for _, i := range ms {
		t.read = t.read && b.members[i].desc.Flags().Has(catalog.FlagReadOnly)
	}
	return b.execUnit(ctx, ms, t, mem)
}

// continuation reports whether m is a raw cursor continuation, whose
// cursor is a position on the server that issued it: a redirect is its
// reply, never followed.
func (b *Batch) continuation(m *member) bool {
	var small [16][]byte
	return cursorContinuation(m.desc, frameArgs(b.enc(m), small[:0]))
}

// ranRedirect reports whether m's redirect reply se is its own error
// reply, the error of a script or function that ran ([ranRedirect]).
func (b *Batch) ranRedirect(m *member, se *ServerError) bool {
	rd, ok, err := route.ParseRedirect([]byte(se.Message))
	if !ok || err != nil {
		return false
	}
	var small [16][]byte
	slot, _ := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
	return ranRedirect(m.desc, slot, rd)
}

// resendMember sends one member again after its group's node redirected
// it, following the redirect like a single command (never retried: the
// member ran nowhere, but its group's unit was the retry unit).
func (b *Batch) resendMember(ctx context.Context, m *member) error {
	c := b.c
	var se *ServerError
	if errors.As(m.err, &se) && se.Code == "MOVED" {
		if rd, ok, err := route.ParseRedirect([]byte(se.Message)); ok && err == nil {
			_, _ = c.topo.Moved(rd.Slot, redirectAddr(rd.Addr, m.served))
		}
	}
	f := c.frames.Get()
	f.Buf = append(f.Buf, b.enc(m)...)
	f.Want = wire.WantValue
	s := spec{name: m.name, cat: Never, desc: m.desc}
	if err := c.execRouted(ctx, f, &s, nil); err != nil {
		return err
	}
	m.v = f.Value
	f.Release()
	return nil
}

// txSlot returns the one slot of a Cluster transaction's keys (-1: no
// keys), which must be slot when it is not -1 (the slot of a Watch's
// keys). Keys in two slots fail every member with a [RouteError]
// matching [ErrCrossSlot], before anything is sent.
func (b *Batch) txSlot(slot int) (int, error) {
	for i := range b.members {
		m := &b.members[i]
		var small [16][]byte
		s, cross := keySlot(m.desc, frameArgs(b.enc(m), small[:0]))
		if cross || (s >= 0 && slot >= 0 && s != slot) {
			err := &RouteError{Command: "MULTI", Slot: slot, Err: multierr.With(ErrCrossSlot,
				errors.New("every key of a Cluster transaction, watched keys included, must hash to one slot"))}
			b.fail(err)
			return slot, err
		}
		if s >= 0 {
			slot = s
		}
	}
	return slot, nil
}

// txPin returns the server of a Cluster transaction's members that name
// one (a SCAN page: its cursor's server), or nil. Members naming two
// servers, or keys (of slot) that another node serves, are an
// [ErrInvalidArgument]: one transaction runs on one node.
func (b *Batch) txPin(slot int) (*route.Node, error) {
	var pin string
	for i := range b.members {
		switch p := b.members[i].pin; {
		case p == "":
		case pin != "" && p != pin:
			return nil, errInvalid("SCAN", "pages of two servers ("+pin+", "+p+") in one transaction")
		default:
			pin = p
		}
	}
	if pin == "" {
		return nil, nil
	}
	n, err := b.c.topo.At(pin)
	if err != nil {
		return nil, routeErr("SCAN", slot, err)
	}
	if slot >= 0 {
		owner, err := b.c.topo.Pick(slot, false)
		if err != nil {
			return nil, routeErr("MULTI", slot, err)
		}
		if owner.Addr != n.Addr {
			return nil, errInvalid("MULTI", "the transaction's keys are served by "+owner.Addr+", its SCAN cursor by "+pin)
		}
	}
	return n, nil
}

// execClusterTx runs a Cluster transaction on the node of its one slot
// (or, holding a SCAN page that names its server, on that server).
// A MOVED (the slot moved since the map was read) updates the map and the
// unit is sent again within the same attempt, without using retry
// budget, up to MaxRedirects times (then [ErrRedirectLoop], as for a
// single command); an ASK ends it. One deadline (ctx's, else
// CommandTimeout from now) bounds the unit, its redirects and its
// retries.
func (b *Batch) execClusterTx(ctx context.Context) error {
	slot, err := b.txSlot(-1)
	if err != nil {
		return err
	}
	pin, err := b.txPin(slot)
	if err != nil {
		b.fail(err)
		return err
	}
	t := target{slot: slot, pinned: pin}
	return b.execUnit(ctx, nil, &t, &b.mem)
}
