package respire

// Deleting stream entries with a reference policy (Redis 8.2): XACKDEL, XDELEX.

import (
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// XRefPolicy says what XACKDEL, XDELEX and XTRIM (Redis 8.2+) do with the
// references that consumer groups hold to the entries they delete. Its
// values are plain constants, safe for concurrent use.
type XRefPolicy uint8

// Reference policies.
const (
	// XRefDefault sends no policy: the server's default, KEEPREF.
	XRefDefault XRefPolicy = iota
	// XKeepRef deletes the entries and leaves other groups' pending
	// references to them (KEEPREF).
	XKeepRef
	// XDelRef deletes the entries and removes every group's pending
	// references to them (DELREF).
	XDelRef
	// XAcked deletes only the entries that every group has read and
	// acknowledged (ACKED).
	XAcked
)

func (p XRefPolicy) arg() (string, bool) {
	switch p {
	case XRefDefault:
		return "", true
	case XKeepRef:
		return "KEEPREF", true
	case XDelRef:
		return "DELREF", true
	case XAcked:
		return "ACKED", true
	}
	return "", false
}

// XDelResult is what XACKDEL or XDELEX did with one ID. Its values are plain
// constants, safe for concurrent use.
type XDelResult int64

// Results of XACKDEL and XDELEX, one per ID.
const (
	// XDelNotFound: no such entry (in the stream, or for XACKDEL pending in
	// the group).
	XDelNotFound XDelResult = -1
	// XDelDeleted: the entry was deleted (and, for XACKDEL, acknowledged).
	XDelDeleted XDelResult = 1
	// XDelReferenced: the entry was not deleted because a group still
	// references it (XAcked); XACKDEL acknowledged it.
	XDelReferenced XDelResult = 2
)

// XAckDel acknowledges the entries with the given IDs in the group group
// of the stream at key and deletes them from the stream as policy says
// (XACKDEL, Redis 8.2+), returning one result per ID in order. An empty
// group, no IDs or an unknown policy fail with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdXAckDel(key, group string, policy XRefPolicy, ids ...string) cmd[[]XDelResult] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[[]XDelResult](specXACKDEL, r)
	}
	return c.xdelexCmd(specXACKDEL, key, group, policy, ids)
}

// XDelEx deletes the entries with the given IDs from the stream at key as
// policy says (XDELEX, Redis 8.2+), returning one result per ID in order.
// No IDs or an unknown policy fail with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdXDelEx(key string, policy XRefPolicy, ids ...string) cmd[[]XDelResult] {
	return c.xdelexCmd(specXDELEX, key, "", policy, ids)
}

// xdelexCmd encodes "NAME key [group] [policy] IDS n id...".
func (c *Client) xdelexCmd(s *spec, key, group string, policy XRefPolicy, ids []string) cmd[[]XDelResult] {
	p, ok := policy.arg()
	switch {
	case !ok:
		return invalidCmd[[]XDelResult](s, "unknown reference policy")
	case len(ids) == 0:
		return invalidCmd[[]XDelResult](s, "no IDs")
	}
	n := 4 + len(ids)
	if s == specXACKDEL {
		n++
	}
	if p != "" {
		n++
	}
	f := c.newFrame(n, s.name)
	arg(f, key)
	if s == specXACKDEL {
		arg(f, group)
	}
	if p != "" {
		arg(f, p)
	}
	arg(f, "IDS")
	argInt(f, int64(len(ids)))
	for _, id := range ids {
		arg(f, id)
	}
	return typedCmd(f, s, wire.WantValue, xdelResultsOf)
}

func xdelResultsOf(v resp.Value) ([]XDelResult, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array of results", v)
	}
	out := make([]XDelResult, len(v.Elems))
	for i, e := range v.Elems {
		n, err := convInt64(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = XDelResult(n)
	}
	return out, nil
}
