package respire

// Stream introspection: XINFO STREAM, GROUPS and CONSUMERS.

import (
	"time"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// XStreamInfo is what XINFO STREAM reports of a stream. Fields a server
// does not report (the Redis 7.0 ones on an older server) stay zero. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
type XStreamInfo struct {
	XStreamState
	// Groups is the number of consumer groups.
	Groups int64
	// FirstEntry and LastEntry are the first and last entries; nil for an
	// empty stream.
	FirstEntry, LastEntry *XMessage
}

// XStreamState is what XINFO STREAM reports of a stream with or without
// FULL: its size and IDs. It is a plain value that the library neither keeps
// nor changes once returned: safe for concurrent reads.
type XStreamState struct {
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
}

// field sets the field XINFO STREAM names k, reporting whether k is one.
func (st *XStreamState) field(k string, val resp.Value) (bool, error) {
	var err error
	switch k {
	case "length":
		st.Length, err = convInt64(val)
	case "radix-tree-keys":
		st.RadixTreeKeys, err = convInt64(val)
	case "radix-tree-nodes":
		st.RadixTreeNodes, err = convInt64(val)
	case "last-generated-id":
		st.LastGeneratedID, err = xoptText(val)
	case "max-deleted-entry-id":
		st.MaxDeletedEntryID, err = xoptText(val)
	case "entries-added":
		st.EntriesAdded, err = convInt64(val)
	case "recorded-first-entry-id":
		st.RecordedFirstEntryID, err = xoptText(val)
	default:
		return false, nil
	}
	return true, err
}

// XInfoStream describes the stream at key (XINFO STREAM;
// [Client.XInfoStreamFull] sends FULL). A missing key is a server error. Its retry
// category is [ReadOnly].
func (c *Client) cmdXInfoStream(key string) cmd[XStreamInfo] {
	return subCmd(c, specXINFOSTREAM, wire.WantValue, xstreamInfoOf, key)
}

func xstreamInfoOf(v resp.Value) (XStreamInfo, error) {
	var out XStreamInfo
	if v.Type != resp.Map && v.Type != resp.Array {
		return out, unexpected("map", v)
	}
	err := convPairs(v, func(k []byte, val resp.Value) error {
		if ok, err := out.field(string(k), val); ok && err != nil {
			return atValue(k, err)
		} else if ok {
			return nil
		}
		var err error
		switch string(k) {
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
// entries and every group's pending entries and consumers. It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type XStreamFullInfo struct {
	XStreamState
	// Entries are the stream's entries, from the first, as many as the
	// call's count allows.
	Entries []XMessage
	// Groups are the consumer groups.
	Groups []XGroupFullInfo
}

// XGroupFullInfo is one consumer group in an [XStreamFullInfo]. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
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

// XConsumerFullInfo is one consumer in an [XGroupFullInfo]. It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
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

// XStreamPendingEntry is one pending entry in an [XStreamFullInfo]. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
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
		if ok, err := out.field(string(k), val); ok && err != nil {
			return atValue(k, err)
		} else if ok {
			return nil
		}
		var err error
		switch string(k) {
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

// XGroupInfo is what XINFO GROUPS reports of one consumer group. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
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
	return subCmd(c, specXINFOGROUPS, wire.WantValue, xgroupInfosOf, key)
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

// XConsumerInfo is what XINFO CONSUMERS reports of one consumer. It is a
// plain value that the library neither keeps nor changes once returned: safe
// for concurrent reads.
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
// stream at key. A missing key or group is a server error; an empty group
// fails with [ErrInvalidArgument] before anything is sent. Its retry
// category is [ReadOnly].
func (c *Client) cmdXInfoConsumers(key, group string) cmd[[]XConsumerInfo] {
	if r := groupRefusal(group, "", false); r != "" {
		return invalidCmd[[]XConsumerInfo](specXINFOCONSUMERS, r)
	}
	return subCmd(c, specXINFOCONSUMERS, wire.WantValue, xconsumerInfosOf, key, group)
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
