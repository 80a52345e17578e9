package respire

import (
	"context"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Stream commands beyond XADD, XRANGE, XLEN and XCFGSET (streams.go):
// reading, trimming, consumer groups, claiming and introspection.

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
// for the extremes), the newest first; count > 0 limits how many. Its
// retry category is [ReadOnly].
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
// MinID must be set.
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
	if opt.MaxLen != 0 {
		arg(f, "MAXLEN")
	} else {
		arg(f, "MINID")
	}
	if opt.Approximate {
		arg(f, "~")
	} else {
		arg(f, "=")
	}
	if opt.MaxLen != 0 {
		argInt(f, opt.MaxLen)
	} else {
		arg(f, opt.MinID)
	}
	if opt.Limit != 0 {
		arg(f, "LIMIT")
		argInt(f, opt.Limit)
	}
	if ref != "" {
		arg(f, ref)
	}
	return typedCmd(f, specXTRIM, wire.WantInt, intOf)
}

// XSetIDOptions are XSETID's optional arguments (Redis 7.0+).
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

// XGroupCreateOptions are XGROUP CREATE's optional arguments.
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
	case group == "" || start == "":
		return invalidCmd[struct{}](specXGROUPCREATE, "empty group or start ID")
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

// xsubCmd encodes "NAME SUB args..." whose whole reply conv converts.
func xsubCmd[T any](c *Client, s *spec, want wire.Want, conv func(resp.Value) (T, error), args ...string) cmd[T] {
	f := c.newFrame(2+len(args), s.desc.Name())
	arg(f, s.desc.Subcommand())
	for _, a := range args {
		arg(f, a)
	}
	return typedCmd(f, s, want, conv)
}

// XGroupCreateConsumer creates consumer in the group group of the stream
// at key and reports whether it was new (false when it existed). Its
// retry category is [WriteAccumulating].
func (c *Client) cmdXGroupCreateConsumer(key, group, consumer string) cmd[bool] {
	return xsubCmd(c, specXGROUPCREATECONSUMER, wire.WantInt, flagOf, key, group, consumer)
}

// XGroupDelConsumer deletes consumer from the group group of the stream
// at key and returns how many entries it had pending (they are no longer
// pending for anyone). Its retry category is [WriteAccumulating]: a
// resend after a lost reply returns 0.
func (c *Client) cmdXGroupDelConsumer(key, group, consumer string) cmd[int64] {
	return xsubCmd(c, specXGROUPDELCONSUMER, wire.WantInt, intOf, key, group, consumer)
}

// XGroupDestroy deletes the consumer group group of the stream at key and
// reports whether it existed. Its retry category is [WriteAccumulating].
func (c *Client) cmdXGroupDestroy(key, group string) cmd[bool] {
	return xsubCmd(c, specXGROUPDESTROY, wire.WantInt, flagOf, key, group)
}

// XGroupSetIDOptions are XGROUP SETID's optional arguments.
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
	case group == "" || id == "":
		return invalidCmd[struct{}](specXGROUPSETID, "empty group or ID")
	case opt.EntriesRead < 0:
		return invalidCmd[struct{}](specXGROUPSETID, "EntriesRead must not be negative")
	}
	if opt.EntriesRead == 0 {
		return xsubCmd(c, specXGROUPSETID, wire.WantNone, statusOf, key, group, id)
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
// how many were pending. No IDs fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating]: a resend
// after a lost reply counts 0 for the IDs acknowledged the first time.
func (c *Client) cmdXAck(key, group string, ids ...string) cmd[int64] {
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

// XPendingSummary is the summary form of XPENDING: a group's pending
// entries in total and per consumer.
type XPendingSummary struct {
	// Count is the number of pending entries.
	Count int64
	// LowestID and HighestID are the lowest and highest pending IDs (""
	// when nothing is pending).
	LowestID, HighestID string
	// Consumers are the consumers with pending entries, in the server's
	// order.
	Consumers []XPendingConsumer
}

// XPendingConsumer is one consumer of an [XPendingSummary].
type XPendingConsumer struct {
	Name    string
	Pending int64
}

// XPending returns the summary of the pending entries of the group group
// of the stream at key; [Client.XPendingExt] lists them. Its retry
// category is [ReadOnly].
func (c *Client) cmdXPending(key, group string) cmd[XPendingSummary] {
	f := c.newFrame(3, "XPENDING")
	arg(f, key)
	arg(f, group)
	return typedCmd(f, specXPENDING, wire.WantValue, xpendingSummaryOf)
}

func xpendingSummaryOf(v resp.Value) (XPendingSummary, error) {
	if v.Type != resp.Array || len(v.Elems) != 4 {
		return XPendingSummary{}, unexpected("array of count, lowest and highest ID, consumers", v)
	}
	n, err := convInt64(v.Elems[0])
	if err != nil {
		return XPendingSummary{}, err
	}
	out := XPendingSummary{Count: n}
	if out.LowestID, err = xoptText(v.Elems[1]); err != nil {
		return XPendingSummary{}, err
	}
	if out.HighestID, err = xoptText(v.Elems[2]); err != nil {
		return XPendingSummary{}, err
	}
	cs := v.Elems[3]
	switch cs.Type {
	case resp.Null:
		return out, nil
	case resp.Array:
	default:
		return XPendingSummary{}, unexpected("array of consumers", cs)
	}
	out.Consumers = make([]XPendingConsumer, len(cs.Elems))
	for i, e := range cs.Elems {
		if e.Type != resp.Array || len(e.Elems) != 2 {
			return XPendingSummary{}, atElement(i, unexpected("consumer and count", e))
		}
		name, err := convScalar(e.Elems[0], "consumer name")
		if err != nil {
			return XPendingSummary{}, atElement(i, err)
		}
		p, err := convInt64(e.Elems[1])
		if err != nil {
			return XPendingSummary{}, atElement(i, err)
		}
		out.Consumers[i] = XPendingConsumer{Name: string(name), Pending: p}
	}
	return out, nil
}

// xoptText is the text of a string reply, "" for null.
func xoptText(v resp.Value) (string, error) {
	if v.Type == resp.Null {
		return "", nil
	}
	b, err := convScalar(v, "string")
	return string(b), err
}

// XPendingExtOptions select the pending entries [Client.XPendingExt]
// lists.
type XPendingExtOptions struct {
	// Idle lists only entries idle at least this long (IDLE, Redis 6.2+),
	// in whole milliseconds; 0 lists all.
	Idle time.Duration
	// Start and End bound the IDs ("" means "-" and "+": all).
	Start, End string
	// Count is the most entries to list; it must be positive.
	Count int64
	// Consumer lists only that consumer's entries; "" lists every
	// consumer's.
	Consumer string
}

// XPendingEntry is one pending entry of a consumer group.
type XPendingEntry struct {
	ID       string
	Consumer string
	// Idle is how long ago the entry was last delivered.
	Idle time.Duration
	// Deliveries is how many times it was delivered.
	Deliveries int64
}

// XPendingExt lists the pending entries of the group group of the stream
// at key as opt selects, in ID order. A Count that is not positive, or a
// negative Idle or one that is not a whole number of milliseconds, fails
// with [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly].
func (c *Client) cmdXPendingExt(key, group string, opt XPendingExtOptions) cmd[[]XPendingEntry] {
	if opt.Count <= 0 {
		return invalidCmd[[]XPendingEntry](specXPENDING, "Count must be positive")
	}
	idle, err := streamMillis("Idle", opt.Idle)
	if err != nil {
		return invalidCmd[[]XPendingEntry](specXPENDING, err.Error())
	}
	start, end := opt.Start, opt.End
	if start == "" {
		start = "-"
	}
	if end == "" {
		end = "+"
	}
	n := 6
	if idle > 0 {
		n += 2
	}
	if opt.Consumer != "" {
		n++
	}
	f := c.newFrame(n, "XPENDING")
	arg(f, key)
	arg(f, group)
	if idle > 0 {
		arg(f, "IDLE")
		argInt(f, idle)
	}
	arg(f, start)
	arg(f, end)
	argInt(f, opt.Count)
	if opt.Consumer != "" {
		arg(f, opt.Consumer)
	}
	return typedCmd(f, specXPENDING, wire.WantValue, xpendingEntriesOf)
}

func xpendingEntriesOf(v resp.Value) ([]XPendingEntry, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array of pending entries", v)
	}
	out := make([]XPendingEntry, len(v.Elems))
	for i, e := range v.Elems {
		if e.Type != resp.Array || len(e.Elems) != 4 {
			return nil, atElement(i, unexpected("ID, consumer, idle time and deliveries", e))
		}
		id, err := convScalar(e.Elems[0], "ID")
		if err != nil {
			return nil, atElement(i, err)
		}
		consumer, err := convScalar(e.Elems[1], "consumer")
		if err != nil {
			return nil, atElement(i, err)
		}
		idle, err := convInt64(e.Elems[2])
		if err != nil {
			return nil, atElement(i, err)
		}
		n, err := convInt64(e.Elems[3])
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = XPendingEntry{ID: string(id), Consumer: string(consumer), Idle: time.Duration(idle) * time.Millisecond, Deliveries: n}
	}
	return out, nil
}

// streamMillis is a non-negative duration d in whole milliseconds, or the
// reason it is not one, naming it what.
func streamMillis(what string, d time.Duration) (int64, error) {
	switch {
	case d < 0:
		return 0, xargReason(what + " must not be negative")
	case d%time.Millisecond != 0:
		return 0, xargReason(what + " must be a whole number of milliseconds")
	}
	return d.Milliseconds(), nil
}

// xargReason is an invalid argument's reason, for invalidCmd.
type xargReason string

func (e xargReason) Error() string { return string(e) }

// XClaimOptions are XCLAIM's arguments besides the group, consumer and
// IDs.
type XClaimOptions struct {
	// MinIdle claims only the entries idle at least this long, in whole
	// milliseconds; 0 claims them whatever their idle time.
	MinIdle time.Duration
	// Idle sets the claimed entries' idle time (IDLE), in whole
	// milliseconds; 0 resets it to zero as XCLAIM does by default.
	Idle time.Duration
	// Time sets the claimed entries' last delivery time (TIME) instead of
	// Idle; the zero Time leaves it out.
	Time time.Time
	// RetryCount sets the claimed entries' delivery count (RETRYCOUNT); 0
	// leaves the server's increment. Must not be negative.
	RetryCount int64
	// Force claims IDs that are not pending in the group yet but exist in
	// the stream (FORCE).
	Force bool
	// LastID updates the group's last delivered ID (LASTID).
	LastID string
}

// XClaim gives consumer the ownership of the pending entries with the
// given IDs of the group group of the stream at key that are idle at least
// opt.MinIdle, and returns the claimed entries (deleted entries are left
// out). No IDs, a negative duration or one that is not a whole number of
// milliseconds, both Idle and Time, or a negative RetryCount fail with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend counts another delivery.
func (c *Client) cmdXClaim(key, group, consumer string, opt XClaimOptions, ids ...string) cmd[[]XMessage] {
	f, err := c.xclaimFrame(key, group, consumer, opt, false, ids)
	if err != nil {
		return invalidCmd[[]XMessage](specXCLAIM, err.Error())
	}
	return typedCmd(f, specXCLAIM, wire.WantValue, xclaimedOf)
}

// XClaimJustID is [Client.XClaim] with JUSTID: it returns only the
// claimed IDs and does not count a delivery. Its retry category is
// [WriteAccumulating].
func (c *Client) cmdXClaimJustID(key, group, consumer string, opt XClaimOptions, ids ...string) cmd[[]string] {
	f, err := c.xclaimFrame(key, group, consumer, opt, true, ids)
	if err != nil {
		return invalidCmd[[]string](specXCLAIM, err.Error())
	}
	return typedCmd(f, specXCLAIM, wire.WantValue, strsOf)
}

func (c *Client) xclaimFrame(key, group, consumer string, opt XClaimOptions, justID bool, ids []string) (*wire.Frame, error) {
	if len(ids) == 0 {
		return nil, xargReason("no IDs")
	}
	mi, err := streamMillis("MinIdle", opt.MinIdle)
	if err != nil {
		return nil, err
	}
	idle, err := streamMillis("Idle", opt.Idle)
	if err != nil {
		return nil, err
	}
	switch {
	case idle != 0 && !opt.Time.IsZero():
		return nil, xargReason("Idle and Time are mutually exclusive")
	case opt.RetryCount < 0:
		return nil, xargReason("RetryCount must not be negative")
	}
	n := 5 + len(ids)
	if idle != 0 || !opt.Time.IsZero() {
		n += 2
	}
	if opt.RetryCount != 0 {
		n += 2
	}
	if opt.Force {
		n++
	}
	if justID {
		n++
	}
	if opt.LastID != "" {
		n += 2
	}
	f := c.newFrame(n, "XCLAIM")
	arg(f, key)
	arg(f, group)
	arg(f, consumer)
	argInt(f, mi)
	for _, id := range ids {
		arg(f, id)
	}
	if idle != 0 {
		arg(f, "IDLE")
		argInt(f, idle)
	} else if !opt.Time.IsZero() {
		arg(f, "TIME")
		argInt(f, opt.Time.UnixMilli())
	}
	if opt.RetryCount != 0 {
		arg(f, "RETRYCOUNT")
		argInt(f, opt.RetryCount)
	}
	if opt.Force {
		arg(f, "FORCE")
	}
	if justID {
		arg(f, "JUSTID")
	}
	if opt.LastID != "" {
		arg(f, "LASTID")
		arg(f, opt.LastID)
	}
	return f, nil
}

// xclaimedOf converts claimed entries, leaving out the null entries that
// servers before Redis 7.0 send for deleted ones.
func xclaimedOf(v resp.Value) ([]XMessage, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array", v)
	}
	out := make([]XMessage, 0, len(v.Elems))
	for i, e := range v.Elems {
		if e.Type == resp.Null {
			continue
		}
		m, err := xmessageOf(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// xmessageOf converts one [id, fields] entry; null fields (an entry
// deleted while pending, in XREADGROUP's history) give nil Fields.
func xmessageOf(e resp.Value) (XMessage, error) {
	if e.Type != resp.Array || len(e.Elems) != 2 {
		return XMessage{}, unexpected("stream entry", e)
	}
	id, err := convScalar(e.Elems[0], "entry ID")
	if err != nil {
		return XMessage{}, err
	}
	fields, err := toStrings(e.Elems[1])
	if err != nil {
		return XMessage{}, err
	}
	return XMessage{ID: string(id), Fields: fields}, nil
}

// XAutoClaimOptions are XAUTOCLAIM's arguments besides the group and
// consumer.
type XAutoClaimOptions struct {
	// MinIdle claims only the entries idle at least this long, in whole
	// milliseconds.
	MinIdle time.Duration
	// Start is the cursor: the ID the scan starts at ("" means "0-0"), the
	// Next of the previous call.
	Start string
	// Count is the most entries to claim (COUNT); 0 leaves the server's
	// default (100). Must not be negative.
	Count int64
}

// XAutoClaimResult is the result of [Client.XAutoClaim].
type XAutoClaimResult struct {
	// Next is the cursor of the next call ("0-0" when the scan is done).
	Next string
	// Messages are the claimed entries.
	Messages []XMessage
	// Deleted are the IDs that were pending but no longer in the stream;
	// the server removed them from the pending entries (Redis 7.0+).
	Deleted []string
}

// XAutoClaimJustIDResult is the result of [Client.XAutoClaimJustID].
type XAutoClaimJustIDResult struct {
	// Next is the cursor of the next call ("0-0" when the scan is done).
	Next string
	// IDs are the claimed entries' IDs.
	IDs []string
	// Deleted are the IDs that were pending but no longer in the stream.
	Deleted []string
}

// XAutoClaim gives consumer the ownership of up to opt.Count pending
// entries of the group group of the stream at key idle at least
// opt.MinIdle, scanning from opt.Start, and returns them with the cursor
// to pass as the next Start. A negative Count, or a negative MinIdle or
// one that is not a whole number of milliseconds, fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating]: a resend counts another
// delivery.
func (c *Client) cmdXAutoClaim(key, group, consumer string, opt XAutoClaimOptions) cmd[XAutoClaimResult] {
	f, err := c.xautoclaimFrame(key, group, consumer, opt, false)
	if err != nil {
		return invalidCmd[XAutoClaimResult](specXAUTOCLAIM, err.Error())
	}
	return typedCmd(f, specXAUTOCLAIM, wire.WantValue, xautoclaimOf)
}

// XAutoClaimJustID is [Client.XAutoClaim] with JUSTID: it returns only
// the claimed IDs and does not count a delivery. Its retry category is
// [WriteAccumulating].
func (c *Client) cmdXAutoClaimJustID(key, group, consumer string, opt XAutoClaimOptions) cmd[XAutoClaimJustIDResult] {
	f, err := c.xautoclaimFrame(key, group, consumer, opt, true)
	if err != nil {
		return invalidCmd[XAutoClaimJustIDResult](specXAUTOCLAIM, err.Error())
	}
	return typedCmd(f, specXAUTOCLAIM, wire.WantValue, xautoclaimJustIDOf)
}

func (c *Client) xautoclaimFrame(key, group, consumer string, opt XAutoClaimOptions, justID bool) (*wire.Frame, error) {
	mi, err := streamMillis("MinIdle", opt.MinIdle)
	if err != nil {
		return nil, err
	}
	start, count := opt.Start, opt.Count
	if count < 0 {
		return nil, xargReason("Count must not be negative")
	}
	if start == "" {
		start = "0-0"
	}
	n := 6
	if count > 0 {
		n += 2
	}
	if justID {
		n++
	}
	f := c.newFrame(n, "XAUTOCLAIM")
	arg(f, key)
	arg(f, group)
	arg(f, consumer)
	argInt(f, mi)
	arg(f, start)
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	if justID {
		arg(f, "JUSTID")
	}
	return f, nil
}

// xautoclaimParts splits an XAUTOCLAIM reply: [next, claimed] before Redis
// 7.0, [next, claimed, deleted] since.
func xautoclaimParts(v resp.Value) (next string, claimed resp.Value, deleted []string, err error) {
	if v.Type != resp.Array || (len(v.Elems) != 2 && len(v.Elems) != 3) {
		return "", resp.Value{}, nil, unexpected("array of cursor, claimed and deleted entries", v)
	}
	cur, err := convScalar(v.Elems[0], "cursor")
	if err != nil {
		return "", resp.Value{}, nil, err
	}
	if len(v.Elems) == 3 {
		if deleted, err = toStrings(v.Elems[2]); err != nil {
			return "", resp.Value{}, nil, err
		}
	}
	return string(cur), v.Elems[1], deleted, nil
}

func xautoclaimOf(v resp.Value) (XAutoClaimResult, error) {
	next, claimed, deleted, err := xautoclaimParts(v)
	if err != nil {
		return XAutoClaimResult{}, err
	}
	msgs, err := xclaimedOf(claimed)
	if err != nil {
		return XAutoClaimResult{}, err
	}
	return XAutoClaimResult{Next: next, Messages: msgs, Deleted: deleted}, nil
}

func xautoclaimJustIDOf(v resp.Value) (XAutoClaimJustIDResult, error) {
	next, claimed, deleted, err := xautoclaimParts(v)
	if err != nil {
		return XAutoClaimJustIDResult{}, err
	}
	ids, err := toStrings(claimed)
	if err != nil {
		return XAutoClaimJustIDResult{}, err
	}
	return XAutoClaimJustIDResult{Next: next, IDs: ids, Deleted: deleted}, nil
}

// XStreamInfo is what XINFO STREAM reports of a stream. Fields a server
// does not report (the Redis 7.0 ones on an older server) stay zero.
type XStreamInfo struct {
	// Length is the number of entries.
	Length int64
	// RadixTreeKeys and RadixTreeNodes describe the stream's radix tree.
	RadixTreeKeys, RadixTreeNodes int64
	// LastGeneratedID is the ID of the last entry added (not necessarily
	// still in the stream).
	LastGeneratedID string
	// MaxDeletedEntryID is the highest ID deleted (Redis 7.0+).
	MaxDeletedEntryID string
	// EntriesAdded counts the entries ever added (Redis 7.0+).
	EntriesAdded int64
	// RecordedFirstEntryID is the first entry's ID as recorded (Redis 7.0+).
	RecordedFirstEntryID string
	// Groups is the number of consumer groups.
	Groups int64
	// FirstEntry and LastEntry are the first and last entries; nil for an
	// empty stream.
	FirstEntry, LastEntry *XMessage
}

// XInfoStream describes the stream at key (XINFO STREAM;
// [Client.XInfoStreamFull] sends FULL). A missing key is a server error. Its retry
// category is [ReadOnly].
func (c *Client) cmdXInfoStream(key string) cmd[XStreamInfo] {
	return xsubCmd(c, specXINFOSTREAM, wire.WantValue, xstreamInfoOf, key)
}

func xstreamInfoOf(v resp.Value) (XStreamInfo, error) {
	var out XStreamInfo
	if v.Type != resp.Map && v.Type != resp.Array {
		return out, unexpected("map", v)
	}
	err := convPairs(v, func(k []byte, val resp.Value) error {
		var err error
		switch string(k) {
		case "length":
			out.Length, err = convInt64(val)
		case "radix-tree-keys":
			out.RadixTreeKeys, err = convInt64(val)
		case "radix-tree-nodes":
			out.RadixTreeNodes, err = convInt64(val)
		case "last-generated-id":
			out.LastGeneratedID, err = xoptText(val)
		case "max-deleted-entry-id":
			out.MaxDeletedEntryID, err = xoptText(val)
		case "entries-added":
			out.EntriesAdded, err = convInt64(val)
		case "recorded-first-entry-id":
			out.RecordedFirstEntryID, err = xoptText(val)
		case "groups":
			out.Groups, err = convInt64(val)
		case "first-entry":
			out.FirstEntry, err = xoptMessage(val)
		case "last-entry":
			out.LastEntry, err = xoptMessage(val)
		}
		if err != nil {
			return atValue(k, err)
		}
		return nil
	})
	return out, err
}

// xoptMessage converts an entry, nil for null.
func xoptMessage(v resp.Value) (*XMessage, error) {
	if v.Type == resp.Null {
		return nil, nil
	}
	m, err := xmessageOf(v)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// XStreamFullInfo is what XINFO STREAM FULL reports of a stream: its
// entries and every group's pending entries and consumers.
type XStreamFullInfo struct {
	// Length, RadixTreeKeys, RadixTreeNodes, LastGeneratedID,
	// MaxDeletedEntryID, EntriesAdded and RecordedFirstEntryID are as in
	// [XStreamInfo].
	Length                        int64
	RadixTreeKeys, RadixTreeNodes int64
	LastGeneratedID               string
	MaxDeletedEntryID             string
	EntriesAdded                  int64
	RecordedFirstEntryID          string
	// Entries are the stream's entries, from the first, as many as the
	// call's count allows.
	Entries []XMessage
	// Groups are the consumer groups.
	Groups []XGroupFullInfo
}

// XGroupFullInfo is one consumer group in an [XStreamFullInfo].
type XGroupFullInfo struct {
	Name            string
	LastDeliveredID string
	// EntriesRead and Lag are as in [XGroupInfo] (-1 when unknown).
	EntriesRead, Lag int64
	// PelCount is the number of pending entries, of which Pending lists
	// as many as the call's count allows.
	PelCount int64
	Pending  []XStreamPendingEntry
	// Consumers are the group's consumers.
	Consumers []XConsumerFullInfo
}

// XConsumerFullInfo is one consumer in an [XGroupFullInfo].
type XConsumerFullInfo struct {
	Name string
	// SeenTime is the consumer's last attempted interaction.
	SeenTime time.Time
	// ActiveTime is its last successful interaction (Redis 7.2+); zero
	// when it had none or the server does not report it.
	ActiveTime time.Time
	// PelCount is the number of its pending entries, of which Pending
	// lists as many as the call's count allows.
	PelCount int64
	Pending  []XStreamPendingEntry
}

// XStreamPendingEntry is one pending entry in an [XStreamFullInfo].
type XStreamPendingEntry struct {
	ID string
	// Consumer owns the entry.
	Consumer string
	// DeliveryTime is when the entry was last delivered.
	DeliveryTime time.Time
	// Deliveries is how many times it was delivered.
	Deliveries int64
}

// XInfoStreamFull describes the stream at key with its entries, pending
// entries and consumers (XINFO STREAM FULL COUNT count): count > 0 limits
// the entries and each pending list to count, 0 lists them all (which may
// be slow on a large stream). A negative count fails with
// [ErrInvalidArgument] before anything is sent; a missing key is a server
// error. Its retry category is [ReadOnly].
func (c *Client) cmdXInfoStreamFull(key string, count int64) cmd[XStreamFullInfo] {
	if count < 0 {
		return invalidCmd[XStreamFullInfo](specXINFOSTREAM, "count must not be negative")
	}
	f := c.newFrame(6, "XINFO")
	arg(f, "STREAM")
	arg(f, key)
	arg(f, "FULL")
	arg(f, "COUNT")
	argInt(f, count)
	return typedCmd(f, specXINFOSTREAM, wire.WantValue, xstreamFullInfoOf)
}

func xstreamFullInfoOf(v resp.Value) (XStreamFullInfo, error) {
	var out XStreamFullInfo
	if v.Type != resp.Map && v.Type != resp.Array {
		return out, unexpected("map", v)
	}
	err := convPairs(v, func(k []byte, val resp.Value) error {
		var err error
		switch string(k) {
		case "length":
			out.Length, err = convInt64(val)
		case "radix-tree-keys":
			out.RadixTreeKeys, err = convInt64(val)
		case "radix-tree-nodes":
			out.RadixTreeNodes, err = convInt64(val)
		case "last-generated-id":
			out.LastGeneratedID, err = xoptText(val)
		case "max-deleted-entry-id":
			out.MaxDeletedEntryID, err = xoptText(val)
		case "entries-added":
			out.EntriesAdded, err = convInt64(val)
		case "recorded-first-entry-id":
			out.RecordedFirstEntryID, err = xoptText(val)
		case "entries":
			out.Entries, err = xclaimedOf(val)
		case "groups":
			out.Groups, err = xeach(val, xgroupFullInfoOf)
		}
		if err != nil {
			return atValue(k, err)
		}
		return nil
	})
	return out, err
}

// xeach converts an array (null: empty) whose elements conv converts.
func xeach[T any](v resp.Value, conv func(resp.Value) (T, error)) ([]T, error) {
	switch v.Type {
	case resp.Null, 0: // 0: absent
		return []T{}, nil
	case resp.Array:
	default:
		return nil, unexpected("array", v)
	}
	out := make([]T, len(v.Elems))
	for i, e := range v.Elems {
		x, err := conv(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = x
	}
	return out, nil
}

func xgroupFullInfoOf(v resp.Value) (XGroupFullInfo, error) {
	g := XGroupFullInfo{EntriesRead: -1, Lag: -1}
	if v.Type != resp.Map && v.Type != resp.Array {
		return g, unexpected("map", v)
	}
	err := convPairs(v, func(k []byte, val resp.Value) error {
		var err error
		switch string(k) {
		case "name":
			g.Name, err = xoptText(val)
		case "last-delivered-id":
			g.LastDeliveredID, err = xoptText(val)
		case "entries-read":
			g.EntriesRead, err = xoptInt(val)
		case "lag":
			g.Lag, err = xoptInt(val)
		case "pel-count":
			g.PelCount, err = convInt64(val)
		case "pending":
			g.Pending, err = xeach(val, xgroupPendingOf)
		case "consumers":
			g.Consumers, err = xeach(val, xconsumerFullInfoOf)
		}
		if err != nil {
			return atValue(k, err)
		}
		return nil
	})
	return g, err
}

// xgroupPendingOf converts a group's [id, consumer, delivery ms, count].
func xgroupPendingOf(v resp.Value) (XStreamPendingEntry, error) {
	if v.Type != resp.Array || len(v.Elems) != 4 {
		return XStreamPendingEntry{}, unexpected("ID, consumer, delivery time and count", v)
	}
	p, err := xpendingTail(v.Elems[0], v.Elems[2], v.Elems[3])
	if err != nil {
		return p, err
	}
	p.Consumer, err = xoptText(v.Elems[1])
	return p, err
}

func xpendingTail(id, at, n resp.Value) (XStreamPendingEntry, error) {
	var p XStreamPendingEntry
	var err error
	if p.ID, err = xoptText(id); err != nil {
		return p, err
	}
	ms, err := convInt64(at)
	if err != nil {
		return p, err
	}
	p.DeliveryTime = time.UnixMilli(ms)
	p.Deliveries, err = convInt64(n)
	return p, err
}

func xconsumerFullInfoOf(v resp.Value) (XConsumerFullInfo, error) {
	var ci XConsumerFullInfo
	if v.Type != resp.Map && v.Type != resp.Array {
		return ci, unexpected("map", v)
	}
	var pending resp.Value
	err := convPairs(v, func(k []byte, val resp.Value) error {
		var err error
		var ms int64
		switch string(k) {
		case "name":
			ci.Name, err = xoptText(val)
		case "seen-time":
			ms, err = convInt64(val)
			ci.SeenTime = time.UnixMilli(ms)
		case "active-time":
			if ms, err = xoptInt(val); err == nil && ms >= 0 {
				ci.ActiveTime = time.UnixMilli(ms)
			}
		case "pel-count":
			ci.PelCount, err = convInt64(val)
		case "pending":
			pending = val // converted once the name is known
		}
		if err != nil {
			return atValue(k, err)
		}
		return nil
	})
	if err != nil {
		return ci, err
	}
	ci.Pending, err = xeach(pending, xconsumerPendingOf)
	if err != nil {
		return ci, atValue([]byte("pending"), err)
	}
	for i := range ci.Pending {
		ci.Pending[i].Consumer = ci.Name
	}
	return ci, nil
}

// xconsumerPendingOf converts a consumer's [id, delivery ms, count].
func xconsumerPendingOf(v resp.Value) (XStreamPendingEntry, error) {
	if v.Type != resp.Array || len(v.Elems) != 3 {
		return XStreamPendingEntry{}, unexpected("ID, delivery time and count", v)
	}
	return xpendingTail(v.Elems[0], v.Elems[1], v.Elems[2])
}

// XGroupInfo is what XINFO GROUPS reports of one consumer group.
type XGroupInfo struct {
	Name string
	// Consumers is the number of consumers.
	Consumers int64
	// Pending is the number of pending entries.
	Pending int64
	// LastDeliveredID is the ID of the last entry delivered.
	LastDeliveredID string
	// EntriesRead is the number of entries the group has read (Redis
	// 7.0+); -1 when the server does not know it or does not report it.
	EntriesRead int64
	// Lag is the number of entries not yet delivered (Redis 7.0+); -1
	// when the server cannot tell or does not report it.
	Lag int64
}

// XInfoGroups describes the consumer groups of the stream at key. A
// missing key is a server error. Its retry category is [ReadOnly].
func (c *Client) cmdXInfoGroups(key string) cmd[[]XGroupInfo] {
	return xsubCmd(c, specXINFOGROUPS, wire.WantValue, xgroupInfosOf, key)
}

func xgroupInfosOf(v resp.Value) ([]XGroupInfo, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array of groups", v)
	}
	out := make([]XGroupInfo, len(v.Elems))
	for i, e := range v.Elems {
		g := XGroupInfo{EntriesRead: -1, Lag: -1}
		if e.Type != resp.Map && e.Type != resp.Array {
			return nil, atElement(i, unexpected("map", e))
		}
		err := convPairs(e, func(k []byte, val resp.Value) error {
			var err error
			switch string(k) {
			case "name":
				g.Name, err = xoptText(val)
			case "consumers":
				g.Consumers, err = convInt64(val)
			case "pending":
				g.Pending, err = convInt64(val)
			case "last-delivered-id":
				g.LastDeliveredID, err = xoptText(val)
			case "entries-read":
				g.EntriesRead, err = xoptInt(val)
			case "lag":
				g.Lag, err = xoptInt(val)
			}
			if err != nil {
				return atValue(k, err)
			}
			return nil
		})
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = g
	}
	return out, nil
}

// xoptInt converts an integer, -1 for null.
func xoptInt(v resp.Value) (int64, error) {
	if v.Type == resp.Null {
		return -1, nil
	}
	return convInt64(v)
}

// XConsumerInfo is what XINFO CONSUMERS reports of one consumer.
type XConsumerInfo struct {
	Name string
	// Pending is the number of entries pending for the consumer.
	Pending int64
	// Idle is the time since the consumer's last attempted interaction.
	Idle time.Duration
	// Inactive is the time since its last successful interaction (Redis
	// 7.2+); negative when it had none or the server does not report it.
	Inactive time.Duration
}

// XInfoConsumers describes the consumers of the group group of the
// stream at key. A missing key or group is a server error. Its retry
// category is [ReadOnly].
func (c *Client) cmdXInfoConsumers(key, group string) cmd[[]XConsumerInfo] {
	return xsubCmd(c, specXINFOCONSUMERS, wire.WantValue, xconsumerInfosOf, key, group)
}

func xconsumerInfosOf(v resp.Value) ([]XConsumerInfo, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array of consumers", v)
	}
	out := make([]XConsumerInfo, len(v.Elems))
	for i, e := range v.Elems {
		ci := XConsumerInfo{Inactive: -1}
		if e.Type != resp.Map && e.Type != resp.Array {
			return nil, atElement(i, unexpected("map", e))
		}
		err := convPairs(e, func(k []byte, val resp.Value) error {
			var err error
			var n int64
			switch string(k) {
			case "name":
				ci.Name, err = xoptText(val)
			case "pending":
				ci.Pending, err = convInt64(val)
			case "idle":
				n, err = convInt64(val)
				ci.Idle = time.Duration(n) * time.Millisecond
			case "inactive":
				if n, err = xoptInt(val); n >= 0 {
					ci.Inactive = time.Duration(n) * time.Millisecond
				} else {
					ci.Inactive = -1
				}
			}
			if err != nil {
				return atValue(k, err)
			}
			return nil
		})
		if err != nil {
			return nil, atElement(i, err)
		}
		out[i] = ci
	}
	return out, nil
}

// XStream is the entries read from one stream by XREAD or XREADGROUP.
type XStream struct {
	Stream   string
	Messages []XMessage
}

// XReadOptions are XREAD's optional arguments.
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

// XReadGroupOptions are XREADGROUP's optional arguments.
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
// it). It returns [ErrNil] when there are none, also when Block passes
// without one. Pending entries deleted from the stream come with nil
// Fields.
//
// Its retry category is [Never], with or without Block: it consumes (a
// repeat delivers new entries and leaves the first ones pending). With
// Block or BlockForever it runs on a dedicated connection and waits as
// [Client.BLPop] does; a batch member refuses them with
// [ErrInvalidArgument].
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
	switch {
	case grouped && (group == "" || consumer == ""):
		reason = "empty group or consumer"
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

// XRefPolicy says what XACKDEL, XDELEX and XTRIM (Redis 8.2+) do with the
// references that consumer groups hold to the entries they delete.
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

// XDelResult is what XACKDEL or XDELEX did with one ID.
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
// (XACKDEL, Redis 8.2+), returning one result per ID in order. No IDs or
// an unknown policy fail with [ErrInvalidArgument] before anything is
// sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdXAckDel(key, group string, policy XRefPolicy, ids ...string) cmd[[]XDelResult] {
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
