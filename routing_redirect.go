package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

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
		if r.err != nil && r.unwritten && r.owned && t.pinned == nil &&
			(errors.Is(r.err, route.ErrRetired) || (r.refused && node.Replica && t.read)) {
			// The node left the topology before the frame was written:
			// the map already names its successor, so the frame goes
			// there within this attempt, bounded like a redirect. A
			// read's replica that refused the handshake (an ACL without
			// READONLY) is down now: the read policy picks again
			// (ReadReplicaPreferred: another replica or the primary).
			if redirects++; redirects > c.cfg.maxRedirects {
				return r
			}
			if r := c.redirectBudget(ctx, waitDL, s, t); r != nil {
				return *r
			}
			next, err := c.pick(t)
			if err != nil {
				return attemptResult{err: routeErr(s.name, t.slot, err), failure: retry.Fatal, unwritten: true, owned: true}
			}
			if r.refused && next.Replica && next.EP.Down() {
				return r // no other node to read from (ReadReplica)
			}
			node = next
			f.Reset()
			continue
		}
		if r.err == nil || !r.owned || !f.IsErr {
			return r
		}
		if c.isCluster() && s.unit == nil { // a unit's members redirect on their own
			rd, ok, perr := route.ParseRedirect(f.ErrReply)
			if perr != nil {
				return attemptResult{err: &RouteError{Command: s.name, Slot: t.slot, Err: protocolErr(perr)},
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
				} else {
					// After MOVED the frame goes whole: a cached read's
					// prelude travels with it again, even after an ASK.
					t.untracked = false
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

// noteReadOnly asks for a topology refresh after se, the reply of a path
// that returns it instead of routing it (a blocking command, a dedicated
// connection), when it is READONLY: as after a command's READONLY, the
// node is no longer the primary, and the next call should find the one
// that replaced it.
func (c *Client) noteReadOnly(se *ServerError) {
	if c.topo != nil && se.IsReadOnly() {
		_ = c.topo.Refresh(context.Background(), false)
	}
}

// noteReadOnlyUnit asks for a topology refresh when a reply of the
// transaction frame f is READONLY: MULTI's, a queued command's, or one
// inside EXEC's array.
func (c *Client) noteReadOnlyUnit(f *wire.Frame) {
	if c.topo == nil {
		return
	}
	readOnly := func(v resp.Value) bool { return v.IsError() && selected(v.Str) == retry.ReadOnlyReply }
	found := slices.ContainsFunc(f.Values, readOnly)
	if n := len(f.Values); !found && n > 0 && f.Values[n-1].Type.Aggregate() {
		found = slices.ContainsFunc(f.Values[n-1].Elems, readOnly)
	}
	if found {
		_ = c.topo.Refresh(context.Background(), false)
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
	return &RouteError{Command: command, Slot: slot, Err: fmt.Errorf("%w; last redirect: %s", ErrRedirectLoop, reply)}
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
