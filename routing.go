package respire

import (
	"context"
	"errors"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
)

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
	// untracked: the last send followed an ASK redirect, which replaced
	// a cached read's CLIENT CACHING prelude with ASKING (the server would
	// clear the one's flag on the other): its reply must not be cached. A
	// MOVED after it sends the whole frame again, prelude included, and
	// clears it.
	untracked bool
	// asking: the last send followed an ASK redirect and carried ASKING.
	// Set on a pinned cursor continuation, it sends ASKING first: the
	// first page reached a key that a migration moved to the importing
	// node, which refuses the continuations without it.
	asking bool
}

func (c *Client) isCluster() bool { return c.topo != nil && c.topo.Kind() == route.KindCluster }

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
		err = multierr.With(ErrNoRoute, err)
	case errors.Is(err, route.ErrBadRedirect):
		err = protocolErr(err)
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
		case slot < 0 && name == "RANDOMKEY":
			return c.execRandomKey(ctx, f, s)
		}
		t.slot = slot
		// A raw continuation: its cursor is a position on the server
		// that issued it, which a redirect would leave.
		t.cursor = t.cursor || cursorContinuation(s.desc, args)
	}
	return c.execResolved(ctx, f, s, t)
}
