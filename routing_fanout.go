package respire

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

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
		takeReply(f, parts[0].f)
	}
	for _, p := range parts {
		p.f.Release()
	}
	return nil
}

// takeReply makes the reply of p, a part's frame, f's.
func takeReply(f, p *wire.Frame) {
	f.Str, f.Int, f.Null, f.Value = p.Str, p.Int, p.Null, p.Value
	f.Bytes = append(f.Bytes, p.Bytes...)
}

// execRandomKey runs RANDOMKEY on a Cluster client. A node answers from
// the keys of its own slots, so the primaries are asked one at a time,
// in a random order, until one answers with a key: the reply is null only
// when every primary answered null. A primary's failure does not end the
// search; when no primary had a key, the first failure is the call's
// (that shard may hold keys). A call whose ctx ended fails at once.
func (c *Client) execRandomKey(ctx context.Context, f *wire.Frame, s *spec) error {
	primaries := slices.Clone(c.topo.Primaries())
	if len(primaries) == 0 {
		f.Release()
		return &RouteError{Command: s.name, Slot: -1, Err: ErrNoRoute}
	}
	rand.Shuffle(len(primaries), func(i, j int) { primaries[i], primaries[j] = primaries[j], primaries[i] })
	var failed error
	for _, n := range primaries {
		p := c.frames.Get()
		p.Buf = append(p.Buf, f.Buf...)
		p.Want = f.Want
		if err := c.execRouted(ctx, p, s, n); err != nil {
			if ctx.Err() != nil {
				f.Release()
				return err
			}
			if failed == nil {
				failed = err
			}
			continue
		}
		if replyView(p).Type != resp.Null {
			takeReply(f, p)
			p.Release()
			return nil
		}
		p.Release()
	}
	if failed != nil {
		f.Release()
		return failed
	}
	f.Null, f.Value = true, resp.Value{Type: resp.Null}
	return nil
}
