package respire

// Stream consumer groups: pending entries (XPENDING) and claiming them (XCLAIM, XAUTOCLAIM).

import (
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// XPendingSummary is the summary form of XPENDING: a group's pending
// entries in total and per consumer. It is a plain value that the library
// neither keeps nor changes once returned: safe for concurrent reads.
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

// XPendingConsumer is one consumer of an [XPendingSummary]. It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type XPendingConsumer struct {
	Name    string
	Pending int64
}

// XPending returns the summary of the pending entries of the group group
// of the stream at key; [Client.XPendingExt] lists them. An empty group
// fails with [ErrInvalidArgument] before anything is sent. Its retry
// category is [ReadOnly].
func (c *Client) cmdXPending(key, group string) cmd[XPendingSummary] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[XPendingSummary](specXPENDING, r)
	}
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
// lists. A call only reads it and keeps no reference to it, so one value may
// serve concurrent calls while nobody changes it.
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

// XPendingEntry is one pending entry of a consumer group. It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type XPendingEntry struct {
	ID       string
	Consumer string
	// Idle is how long ago the entry was last delivered.
	Idle time.Duration
	// Deliveries is how many times it was delivered.
	Deliveries int64
}

// XPendingExt lists the pending entries of the group group of the stream
// at key as opt selects, in ID order. An empty group, a Count that is not
// positive, or a negative Idle or one that is not a whole number of
// milliseconds, fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [ReadOnly].
func (c *Client) cmdXPendingExt(key, group string, opt XPendingExtOptions) cmd[[]XPendingEntry] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[[]XPendingEntry](specXPENDING, r)
	}
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
// IDs. A call only reads it and keeps no reference to it, so one value may
// serve concurrent calls while nobody changes it.
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
// out). An empty group or consumer, no IDs, a negative duration or one
// that is not a whole number of milliseconds, both Idle and Time, or a
// negative RetryCount fail with [ErrInvalidArgument] before anything is
// sent. Its retry category is
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
	if r := groupRefusal(group, consumer, true); r != "" {
		return nil, xargReason(r)
	}
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
// consumer. A call only reads it and keeps no reference to it, so one value
// may serve concurrent calls while nobody changes it.
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

// XAutoClaimResult is the result of [Client.XAutoClaim]. It is a plain value
// that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type XAutoClaimResult struct {
	// Next is the cursor of the next call ("0-0" when the scan is done).
	Next string
	// Messages are the claimed entries.
	Messages []XMessage
	// Deleted are the IDs that were pending but no longer in the stream;
	// the server removed them from the pending entries (Redis 7.0+).
	Deleted []string
}

// XAutoClaimJustIDResult is the result of [Client.XAutoClaimJustID]. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
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
// to pass as the next Start. An empty group or consumer, a negative
// Count, or a negative MinIdle or one that is not a whole number of
// milliseconds, fails with [ErrInvalidArgument] before anything is sent.
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
	if r := groupRefusal(group, consumer, true); r != "" {
		return nil, xargReason(r)
	}
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
