package respire

// Reading streams: XREAD and XREADGROUP.

import (
	"context"
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// XStream is the entries read from one stream by XREAD or XREADGROUP. It is
// a plain value that the library neither keeps nor changes once returned:
// safe for concurrent reads.
type XStream struct {
	Stream   string
	Messages []XMessage
}

// XReadOptions are XREAD's optional arguments. A call only reads it and
// keeps no reference to it, so one value may serve concurrent calls while
// nobody changes it.
type XReadOptions struct {
	// Count is the most entries to return per stream (COUNT); 0 means no
	// limit. Must not be negative.
	Count int64
	// Block waits up to Block for an entry when none is there yet (BLOCK),
	// with millisecond precision; 0 does not wait. A positive Block under a
	// millisecond is refused (the server would read it as "forever").
	Block time.Duration
	// BlockForever waits until an entry arrives or ctx ends (BLOCK 0).
	// Block must then be 0.
	BlockForever bool
}

// XReadGroupOptions are XREADGROUP's optional arguments. A call only reads
// it and keeps no reference to it, so one value may serve concurrent calls
// while nobody changes it.
type XReadGroupOptions struct {
	// Count, Block and BlockForever are as in [XReadOptions].
	Count        int64
	Block        time.Duration
	BlockForever bool
	// NoAck delivers without adding the entries to the pending entries
	// (NOACK): they count as acknowledged at once.
	NoAck bool
}

// blocks reports whether the options send BLOCK.
func (o XReadOptions) blocks() bool { return o.Block != 0 || o.BlockForever }

func (o XReadGroupOptions) blocks() bool { return o.Block != 0 || o.BlockForever }

// XRead returns the entries after the given IDs of streams, which
// alternates stream keys and IDs ("$" for only entries added after the
// call, with Block); [ErrNil] when there are none, also when Block passes
// without one.
//
// Without Block, XRead only reads and its retry category is [ReadOnly] (a
// refinement of the catalog's Never, which allows for BLOCK). With Block
// or BlockForever it is a blocking command: it runs on a dedicated
// connection, is never resent, and waits as [Client.BLPop] does. A batch
// member refuses Block and BlockForever with [ErrInvalidArgument] (a
// blocking member would hold the connection of every other one).
//
// No streams, an odd number of arguments, a negative Count or Block, a
// positive Block under a millisecond, or Block with BlockForever fail with
// [ErrInvalidArgument] before anything is sent. On a Cluster client the
// streams must share a slot.
func (c *Client) XRead(ctx context.Context, opt XReadOptions, streams ...string) ([]XStream, error) {
	if !opt.blocks() {
		return call(ctx, c, c.cmdXRead(opt, streams...))
	}
	f, bt, err := c.xreadFrame(specXREADBlocking, "", "", opt.Count, opt.Block, opt.BlockForever, false, streams)
	if err != nil {
		return nil, errInvalid("XREAD", err.Error())
	}
	return c.xreadBlocking(ctx, f, specXREADBlocking, bt)
}

// XRead reads entries of streams without blocking; see the Client method.
//
// respire:client manual
func (c *Client) cmdXRead(opt XReadOptions, streams ...string) cmd[[]XStream] {
	if opt.blocks() {
		return invalidCmd[[]XStream](specXREAD, "a batch refuses BLOCK (it would hold the connection of every other member); use Client.XRead")
	}
	f, _, err := c.xreadFrame(specXREAD, "", "", opt.Count, 0, false, false, streams)
	if err != nil {
		return invalidCmd[[]XStream](specXREAD, err.Error())
	}
	return typedCmd(f, specXREAD, wire.WantValue, xstreamsOf)
}

// XReadGroup reads entries of streams as consumer of the group group:
// streams alternates stream keys and IDs (">" for entries never delivered
// to the group, another ID for the consumer's own pending entries after
// it). A read of new entries (">") returns [ErrNil] when there are none,
// also when Block passes without one. A read of pending entries never
// does: once none is left after the ID it returns each stream with no
// Messages (a loop that reads them until ErrNil never ends). Pending
// entries deleted from the stream come with nil Fields.
//
// Its retry category is [Never], with or without Block: it consumes (a
// repeat delivers new entries and leaves the first ones pending). With
// Block or BlockForever it runs on a dedicated connection and waits as
// [Client.BLPop] does; a batch member refuses them with
// [ErrInvalidArgument]. So a call whose ctx ends after the server
// delivered entries returns them as a success, never leaving them
// pending for nobody to read; only when the server cannot be told (the
// connection is closed instead) may entries delivered at that moment
// stay pending for consumer (find them with XPENDING, take them with
// XCLAIM or XAUTOCLAIM), or, with NoAck, be lost.
//
// An empty group or consumer, no streams, an odd number of arguments, a
// negative Count or Block, a positive Block under a millisecond, or Block
// with BlockForever fail with [ErrInvalidArgument] before anything is
// sent. On a Cluster client the streams must share a slot.
func (c *Client) XReadGroup(ctx context.Context, group, consumer string, opt XReadGroupOptions, streams ...string) ([]XStream, error) {
	if !opt.blocks() {
		return call(ctx, c, c.cmdXReadGroup(group, consumer, opt, streams...))
	}
	f, bt, err := c.xreadFrame(specXREADGROUP, group, consumer, opt.Count, opt.Block, opt.BlockForever, opt.NoAck, streams)
	if err != nil {
		return nil, errInvalid("XREADGROUP", err.Error())
	}
	return c.xreadBlocking(ctx, f, specXREADGROUP, bt)
}

// XReadGroup reads entries of streams for a consumer group without
// blocking; see the Client method.
//
// respire:client manual
func (c *Client) cmdXReadGroup(group, consumer string, opt XReadGroupOptions, streams ...string) cmd[[]XStream] {
	if opt.blocks() {
		return invalidCmd[[]XStream](specXREADGROUP, "a batch refuses BLOCK (it would hold the connection of every other member); use Client.XReadGroup")
	}
	f, _, err := c.xreadFrame(specXREADGROUP, group, consumer, opt.Count, 0, false, opt.NoAck, streams)
	if err != nil {
		return invalidCmd[[]XStream](specXREADGROUP, err.Error())
	}
	return typedCmd(f, specXREADGROUP, wire.WantValue, xstreamsOf)
}

// xreadFrame validates and encodes XREAD or XREADGROUP (s), with the
// block time its BLOCK asks for; an error is the reason the arguments are
// invalid.
func (c *Client) xreadFrame(s *spec, group, consumer string, count int64, block time.Duration, forever, noAck bool, streams []string) (*wire.Frame, blockTime, error) {
	grouped := s == specXREADGROUP
	var reason string
	if grouped {
		reason = groupRefusal(group, consumer, true)
	}
	switch {
	case reason != "":
	case len(streams) == 0 || len(streams)%2 != 0:
		reason = "want stream-ID pairs"
	case count < 0:
		reason = "Count must not be negative"
	case block < 0:
		reason = "Block must not be negative"
	case block > 0 && block < time.Millisecond:
		reason = "Block " + block.String() + " is under a millisecond (the server would block forever)"
	case block != 0 && forever:
		reason = "Block and BlockForever are mutually exclusive"
	}
	if reason != "" {
		return nil, blockTime{}, xargReason(reason)
	}
	n := 2 + len(streams)
	if grouped {
		n += 3
	}
	if count > 0 {
		n += 2
	}
	blocking := block != 0 || forever
	if blocking {
		n += 2
	}
	if noAck {
		n++
	}
	f := c.newFrame(n, s.name)
	if grouped {
		arg(f, "GROUP")
		arg(f, group)
		arg(f, consumer)
	}
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	if blocking {
		arg(f, "BLOCK")
		argInt(f, block.Milliseconds())
	}
	if noAck {
		arg(f, "NOACK")
	}
	arg(f, "STREAMS")
	for i := 0; i < len(streams); i += 2 {
		arg(f, streams[i])
	}
	for i := 1; i < len(streams); i += 2 {
		arg(f, streams[i])
	}
	return f, blockTime{d: block, forever: forever}, nil
}

// xreadBlocking runs a prepared XREAD or XREADGROUP with BLOCK.
func (c *Client) xreadBlocking(ctx context.Context, f *wire.Frame, s *spec, bt blockTime) ([]XStream, error) {
	v, err := c.blockingValue(ctx, f, s, bt)
	if err != nil {
		return nil, err
	}
	return xstreamsOf(v)
}

// xstreamsOf converts an XREAD reply: a RESP3 map or a RESP2 array of
// [stream, entries] pairs, in the server's order; null is [ErrNil].
func xstreamsOf(v resp.Value) ([]XStream, error) {
	if v.Type == resp.Null {
		return nil, ErrNil
	}
	if v.Type != resp.Map && v.Type != resp.Array {
		return nil, unexpected("map of streams", v)
	}
	out := make([]XStream, 0, convPairCount(v))
	err := convPairs(v, func(k []byte, val resp.Value) error {
		msgs, err := toXMessages(val)
		if err != nil {
			return atValue(k, err)
		}
		out = append(out, XStream{Stream: string(k), Messages: msgs})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
