package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// unitSpec is the dispatch of a unit of members: the riskiest member's
// category, Never when one member has none (a raw command the catalog
// does not know has the category its caller declared, as on its own).
func (b *Batch) unitSpec(ms []int) *spec {
	cat := Always
	for i := range b.size(ms) {
		m := b.at(ms, i)
		if !m.cat.Retryable() {
			cat = Never
			break
		}
		cat = max(cat, m.cat)
	}
	kind := 0
	if b.tx {
		kind = 1
	}
	return &unitSpecs[kind][cat]
}

// unitSpecs are the dispatch of batches (0) and transactions (1) by
// their riskiest category: static, so that a unit's costs nothing.
var unitSpecs = func() (t [2][catalog.ServerAdmin + 1]spec) {
	for cat := range t[0] {
		t[0][cat] = spec{name: "batch", cat: RetryCategory(cat), unit: unitFailure}
		t[1][cat] = spec{name: "MULTI", cat: RetryCategory(cat), unit: txFailure, tx: true}
	}
	return t
}()

// multiCmd and execCmd frame a transaction.
var (
	multiCmd = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "MULTI")
	execCmd  = resp.AppendBulkString(resp.AppendArrayHeader(nil, 1), "EXEC")
)

// frame returns a frame holding the unit ms (see at): MULTI, the members
// and EXEC for a transaction.
func (b *Batch) frame(ms []int) *wire.Frame {
	f := b.c.frames.Get()
	n := b.size(ms)
	if b.tx {
		f.Buf = append(f.Buf, multiCmd...)
		n += 2
	}
	if ms == nil {
		f.Buf = append(f.Buf, b.buf...)
	} else {
		for _, i := range ms {
			f.Buf = append(f.Buf, b.enc(&b.members[i])...)
		}
	}
	if b.tx {
		f.Buf = append(f.Buf, execCmd...)
	}
	f.Want, f.Replies = wire.WantValue, n
	return f
}

// execUnit sends the unit ms (see at; a transaction when b.tx) as one
// frame, retried as one unit, and publishes the final attempt's results.
// t, when set, routes it on a Cluster; nil sends it to the standalone
// server or Sentinel primary. The replies are decoded into mem, the
// unit's reply memory from the previous execution, which keeps them.
func (b *Batch) execUnit(ctx context.Context, ms []int, t *target, mem *replyMem) error {
	c := b.c
	f := b.frame(ms)
	f.Arena, f.Values = mem.arena[:0], mem.vals[:0]
	s := b.unitSpec(ms)
	var err error
	served := c.node
	switch {
	case t != nil:
		err = c.execResolved(ctx, f, s, t)
		served = t.served
	case c.topo != nil:
		var tt target
		err = c.execTarget(ctx, f, s, &tt)
		served = tt.served
	default:
		err = c.execFrame(ctx, f, s)
	}
	if err != nil {
		if replies, ok := finalReplies(err); ok {
			// The final attempt ran every member: each keeps its own
			// reply, and the selected one its error.
			b.publish(ms, replies, resp.Value{})
			b.servedBy(ms, served)
			return err
		}
		for i := range b.size(ms) {
			m := b.at(ms, i)
			m.err, m.done = err, true
		}
		return err
	}
	var one [1]resp.Value
	replies := repliesOf(f, &one)
	if b.tx {
		replies = f.Value.Elems // EXEC's array
	}
	b.publish(ms, replies, f.Value)
	b.servedBy(ms, served)
	mem.arena, mem.vals = f.Arena, f.Values
	f.Release()
	return nil
}

// servedBy records n as the server that answered the unit ms (see at).
func (b *Batch) servedBy(ms []int, n *route.Node) {
	if n != nil {
		for i := range b.size(ms) {
			b.at(ms, i).served = n.Addr
		}
	}
}

// publish gives the members of the unit ms (see at) their replies; whole
// is the unit's reply for the error when some are missing. When the
// count is not one per member (an EXEC array of another length), which
// reply is whose is unknown: every member fails.
func (b *Batch) publish(ms []int, replies []resp.Value, whole resp.Value) {
	if len(replies) != b.size(ms) {
		replies = nil
	}
	for i := range b.size(ms) {
		m := b.at(ms, i)
		m.done = true
		switch {
		case i >= len(replies):
			m.err = unexpected("a reply per member", whole)
		case replies[i].IsError():
			m.err = newServerError(m.name, replies[i].Str)
		default:
			m.v = replies[i]
		}
	}
}

// repliesOf returns the replies of a completed unit frame: Values, or
// the one Value of a one-member frame, held in the caller's one.
func repliesOf(f *wire.Frame, one *[1]resp.Value) []resp.Value {
	switch {
	case f.Replies > 1:
		return f.Values
	case f.IsErr: // the reader keeps a lone error reply's text, not a Value
		one[0] = resp.Value{Type: resp.SimpleError, Str: f.ErrReply}
	default:
		one[0] = f.Value
	}
	return one[:]
}
