package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
)

// Stream commands beyond XADD, XRANGE, XLEN and XCFGSET (streams.go):
// XREVRANGE, XDEL, trimming, XSETID, consumer groups and XACK. The specs
// of every stream file are here; pending entries and claiming are in
// streams_pending.go, XINFO in streams_info.go, XREAD and XREADGROUP in
// streams_read.go, XACKDEL and XDELEX in streams_delete.go.

var (
	specXREVRANGE            = specOf(catalog.Stream.XREVRANGE())
	specXDEL                 = specOf(catalog.Stream.XDEL())
	specXTRIM                = specOf(catalog.Stream.XTRIM())
	specXSETID               = specOf(catalog.Stream.XSETID())
	specXGROUPCREATE         = specOf(catalog.Stream.XGROUP_CREATE())
	specXGROUPCREATECONSUMER = specOf(catalog.Stream.XGROUP_CREATECONSUMER())
	specXGROUPDELCONSUMER    = specOf(catalog.Stream.XGROUP_DELCONSUMER())
	specXGROUPDESTROY        = specOf(catalog.Stream.XGROUP_DESTROY())
	specXGROUPSETID          = specOf(catalog.Stream.XGROUP_SETID())
	specXACK                 = specOf(catalog.Stream.XACK())
	specXPENDING             = specOf(catalog.Stream.XPENDING())
	specXCLAIM               = specOf(catalog.Stream.XCLAIM())
	specXAUTOCLAIM           = specOf(catalog.Stream.XAUTOCLAIM())
	specXINFOSTREAM          = specOf(catalog.Stream.XINFO_STREAM())
	specXINFOGROUPS          = specOf(catalog.Stream.XINFO_GROUPS())
	specXINFOCONSUMERS       = specOf(catalog.Stream.XINFO_CONSUMERS())
	specXACKDEL              = specOf(catalog.Stream.XACKDEL())
	specXDELEX               = specOf(catalog.Stream.XDELEX())

	// The catalog gives XREAD Never because BLOCK may hold it; a typed
	// XREAD without BLOCK only reads, so it refines the category to
	// ReadOnly. With BLOCK it keeps the catalog's Never and runs on a
	// dedicated connection.
	specXREAD         = &spec{name: "XREAD", cat: ReadOnly, desc: catalog.Stream.XREAD()}
	specXREADBlocking = specOf(catalog.Stream.XREAD())
	// XREADGROUP stays Never with or without BLOCK: it consumes, a repeat
	// delivers new entries and leaves the first ones pending.
	specXREADGROUP = specOf(catalog.Stream.XREADGROUP())
)

// XRevRange returns entries with IDs from end down to start ("+" and "-"
// for the extremes), the newest first; count > 0 limits how many, 0
// returns them all. A negative count fails with [ErrInvalidArgument]
// before anything is sent. Its retry category is [ReadOnly].
func (c *Client) cmdXRevRange(key, end, start string, count int64) cmd[[]XMessage] {
	return c.xrangeCmd(specXREVRANGE, key, end, start, count)
}

// XDel removes the entries with the given IDs from the stream at key and
// returns how many existed. No IDs fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdXDel(key string, ids ...string) cmd[int64] {
	if len(ids) == 0 {
		return invalidCmd[int64](specXDEL, "no IDs")
	}
	return keyArgsCmd(c, specXDEL, key, ids, intOf)
}

// XTrimOptions say how [Client.XTrim] trims: exactly one of MaxLen and
// MinID must be set. A call only reads it and keeps no reference to it, so
// one value may serve concurrent calls while nobody changes it.
type XTrimOptions struct {
	// MaxLen keeps the newest MaxLen entries (MAXLEN); it must be
	// positive when set. To empty a stream but keep it (and its groups),
	// set MinID to "18446744073709551615-18446744073709551615".
	MaxLen int64
	// MinID evicts the entries with IDs lower than MinID (MINID).
	MinID string
	// Approximate trims with "~" instead of "=": Redis may keep a few
	// more entries, which is cheaper.
	Approximate bool
	// Limit caps the entries an approximate trim evicts (LIMIT); 0 leaves
	// the server's default. It needs Approximate.
	Limit int64
	// Ref says what happens to consumer groups' references to the evicted
	// entries (KEEPREF, DELREF or ACKED, Redis 8.2+); [XRefDefault] sends
	// nothing, which older servers need.
	Ref XRefPolicy
}

// XTrim trims the stream at key as opt says and returns how many entries
// it evicted. Options that set neither or both of MaxLen and MinID, a
// negative value, or a Limit without Approximate fail with
// [ErrInvalidArgument] before anything is sent, as does an unknown Ref.
// Its retry category is [WriteAccumulating]: a resend after newer appends
// evicts again.
func (c *Client) cmdXTrim(key string, opt XTrimOptions) cmd[int64] {
	ref, ok := opt.Ref.arg()
	switch {
	case !ok:
		return invalidCmd[int64](specXTRIM, "unknown reference policy")
	case opt.MaxLen < 0 || opt.Limit < 0:
		return invalidCmd[int64](specXTRIM, "MaxLen and Limit must not be negative")
	case (opt.MaxLen != 0) == (opt.MinID != ""):
		return invalidCmd[int64](specXTRIM, "set exactly one of MaxLen and MinID")
	case opt.Limit != 0 && !opt.Approximate:
		return invalidCmd[int64](specXTRIM, "Limit needs Approximate")
	}
	n := 5
	if opt.Limit != 0 {
		n += 2
	}
	if ref != "" {
		n++
	}
	f := c.newFrame(n, "XTRIM")
	arg(f, key)
	argTrim(f, opt.MaxLen, opt.MinID, opt.Approximate, opt.Limit)
	if ref != "" {
		arg(f, ref)
	}
	return typedCmd(f, specXTRIM, wire.WantInt, intOf)
}

// XSetIDOptions are XSETID's optional arguments (Redis 7.0+). A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type XSetIDOptions struct {
	// EntriesAdded sets the count of entries ever added (ENTRIESADDED);
	// 0 leaves it unchanged. Must not be negative.
	EntriesAdded int64
	// MaxDeletedID sets the highest deleted entry ID (MAXDELETEDID); ""
	// leaves it unchanged.
	MaxDeletedID string
}

// XSetID sets the last ID of the stream at key to lastID, the ID below
// which XADD refuses new entries. An empty lastID or a negative
// EntriesAdded fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating].
func (c *Client) XSetID(ctx context.Context, key, lastID string, opt XSetIDOptions) error {
	_, err := call(ctx, c, c.cmdXSetID(key, lastID, opt))
	return err
}

// XSetID sets the last ID of the stream at key; see the Client method,
// which returns only the error.
//
// respire:client manual
func (c *Client) cmdXSetID(key, lastID string, opt XSetIDOptions) cmd[struct{}] {
	switch {
	case lastID == "":
		return invalidCmd[struct{}](specXSETID, "empty last ID")
	case opt.EntriesAdded < 0:
		return invalidCmd[struct{}](specXSETID, "EntriesAdded must not be negative")
	}
	n := 3
	if opt.EntriesAdded != 0 {
		n += 2
	}
	if opt.MaxDeletedID != "" {
		n += 2
	}
	f := c.newFrame(n, "XSETID")
	arg(f, key)
	arg(f, lastID)
	if opt.EntriesAdded != 0 {
		arg(f, "ENTRIESADDED")
		argInt(f, opt.EntriesAdded)
	}
	if opt.MaxDeletedID != "" {
		arg(f, "MAXDELETEDID")
		arg(f, opt.MaxDeletedID)
	}
	return typedCmd(f, specXSETID, wire.WantNone, statusOf)
}

// XGroupCreateOptions are XGROUP CREATE's optional arguments. A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type XGroupCreateOptions struct {
	// MkStream creates the stream, empty, when it does not exist
	// (MKSTREAM); without it a missing stream is an error.
	MkStream bool
	// EntriesRead is the number of entries the group has read so far
	// (ENTRIESREAD, Redis 7.0+), which lets the server compute its lag; 0
	// leaves it to the server. Must not be negative.
	EntriesRead int64
}

// XGroupCreate creates the consumer group group of the stream at key,
// which delivers the entries after start ("$": only new entries, "0":
// all). A group that exists is a server error (BUSYGROUP). An empty group
// or start, or a negative EntriesRead, fails with [ErrInvalidArgument]
// before anything is sent. Its retry category is [WriteAccumulating] (a
// resend after a lost reply answers BUSYGROUP).
func (c *Client) XGroupCreate(ctx context.Context, key, group, start string, opt XGroupCreateOptions) error {
	_, err := call(ctx, c, c.cmdXGroupCreate(key, group, start, opt))
	return err
}

// XGroupCreate creates a consumer group; see the Client method, which
// returns only the error.
//
// respire:client manual
func (c *Client) cmdXGroupCreate(key, group, start string, opt XGroupCreateOptions) cmd[struct{}] {
	switch {
	case group == "":
		return invalidCmd[struct{}](specXGROUPCREATE, groupRefusal(group, "", false))
	case start == "":
		return invalidCmd[struct{}](specXGROUPCREATE, "empty start ID")
	case opt.EntriesRead < 0:
		return invalidCmd[struct{}](specXGROUPCREATE, "EntriesRead must not be negative")
	}
	n := 5
	if opt.MkStream {
		n++
	}
	if opt.EntriesRead != 0 {
		n += 2
	}
	f := c.newFrame(n, "XGROUP")
	arg(f, "CREATE")
	arg(f, key)
	arg(f, group)
	arg(f, start)
	if opt.MkStream {
		arg(f, "MKSTREAM")
	}
	if opt.EntriesRead != 0 {
		arg(f, "ENTRIESREAD")
		argInt(f, opt.EntriesRead)
	}
	return typedCmd(f, specXGROUPCREATE, wire.WantNone, statusOf)
}

// XGroupCreateConsumer creates consumer in the group group of the stream
// at key and reports whether it was new (false when it existed). An empty
// group or consumer fails with [ErrInvalidArgument] before anything is
// sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdXGroupCreateConsumer(key, group, consumer string) cmd[bool] {
	if r := groupRefusal(group, consumer, true); r != "" {
		return invalidCmd[bool](specXGROUPCREATECONSUMER, r)
	}
	return subCmd(c, specXGROUPCREATECONSUMER, wire.WantInt, flagOf, key, group, consumer)
}

// XGroupDelConsumer deletes consumer from the group group of the stream
// at key and returns how many entries it had pending (they are no longer
// pending for anyone). An empty group or consumer fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend after a lost reply returns 0.
func (c *Client) cmdXGroupDelConsumer(key, group, consumer string) cmd[int64] {
	if r := groupRefusal(group, consumer, true); r != "" {
		return invalidCmd[int64](specXGROUPDELCONSUMER, r)
	}
	return subCmd(c, specXGROUPDELCONSUMER, wire.WantInt, intOf, key, group, consumer)
}

// XGroupDestroy deletes the consumer group group of the stream at key and
// reports whether it existed. An empty group fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating].
func (c *Client) cmdXGroupDestroy(key, group string) cmd[bool] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[bool](specXGROUPDESTROY, r)
	}
	return subCmd(c, specXGROUPDESTROY, wire.WantInt, flagOf, key, group)
}

// XGroupSetIDOptions are XGROUP SETID's optional arguments. A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type XGroupSetIDOptions struct {
	// EntriesRead is the number of entries the group has read (ENTRIESREAD,
	// Redis 7.0+); 0 leaves it to the server. Must not be negative.
	EntriesRead int64
}

// XGroupSetID sets the last delivered ID of the group group of the stream
// at key to id ("$": the stream's last entry). An empty group or id, or a
// negative EntriesRead, fails with [ErrInvalidArgument] before anything is
// sent. Its retry category is [WriteAccumulating].
func (c *Client) XGroupSetID(ctx context.Context, key, group, id string, opt XGroupSetIDOptions) error {
	_, err := call(ctx, c, c.cmdXGroupSetID(key, group, id, opt))
	return err
}

// XGroupSetID sets a group's last delivered ID; see the Client method,
// which returns only the error.
//
// respire:client manual
func (c *Client) cmdXGroupSetID(key, group, id string, opt XGroupSetIDOptions) cmd[struct{}] {
	switch {
	case group == "":
		return invalidCmd[struct{}](specXGROUPSETID, groupRefusal(group, "", false))
	case id == "":
		return invalidCmd[struct{}](specXGROUPSETID, "empty ID")
	case opt.EntriesRead < 0:
		return invalidCmd[struct{}](specXGROUPSETID, "EntriesRead must not be negative")
	}
	if opt.EntriesRead == 0 {
		return subCmd(c, specXGROUPSETID, wire.WantNone, statusOf, key, group, id)
	}
	f := c.newFrame(7, "XGROUP")
	arg(f, "SETID")
	arg(f, key)
	arg(f, group)
	arg(f, id)
	arg(f, "ENTRIESREAD")
	argInt(f, opt.EntriesRead)
	return typedCmd(f, specXGROUPSETID, wire.WantNone, statusOf)
}

// XAck acknowledges the entries with the given IDs in the group group of
// the stream at key (removes them from its pending entries) and returns
// how many were pending. An empty group or no IDs fail with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend after a lost reply counts 0 for the IDs
// acknowledged the first time.
func (c *Client) cmdXAck(key, group string, ids ...string) cmd[int64] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[int64](specXACK, r)
	}
	if len(ids) == 0 {
		return invalidCmd[int64](specXACK, "no IDs")
	}
	f := c.newFrame(3+len(ids), "XACK")
	arg(f, key)
	arg(f, group)
	for _, id := range ids {
		arg(f, id)
	}
	return typedCmd(f, specXACK, wire.WantInt, intOf)
}

// groupRefusal is why a command naming a consumer group is refused before
// any I/O: an empty group, or, when it names a consumer (hasConsumer), an
// empty consumer. It is "" when the names are set.
func groupRefusal(group, consumer string, hasConsumer bool) string {
	switch {
	case group == "":
		return "empty group"
	case hasConsumer && consumer == "":
		return "empty consumer"
	}
	return ""
}
