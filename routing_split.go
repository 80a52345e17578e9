package respire

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

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
