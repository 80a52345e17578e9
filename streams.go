package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specXADD        = specOf(catalog.Stream.XADD())
	specXADDChecked = &spec{name: "XADD", cat: WriteChecked, desc: catalog.Stream.XADD()}
	specXRANGE      = specOf(catalog.Stream.XRANGE())
	specXLEN        = specOf(catalog.Stream.XLEN())
)

// XAddIdempotency attaches a producer identity to an XADD (Redis 8.6+),
// so that a resend with the same identity returns the original entry ID
// instead of appending again.
type XAddIdempotency struct {
	// ProducerID identifies the producer (IDMP/IDMPAUTO producer-id).
	ProducerID string
	// MessageID identifies the message within the producer (IDMP's
	// idempotent-id). Empty with Auto set sends IDMPAUTO.
	MessageID string
	// Auto lets the server derive the message ID from the content (IDMPAUTO).
	Auto bool
}

// XAddOptions are XADD's options. The zero value appends with an
// auto-generated ID.
//
// Retry categories: a plain XADD is WriteAccumulating (a resend after a
// lost reply duplicates the entry); with Idempotency it is WriteChecked.
type XAddOptions struct {
	// NoMkStream does not create a missing stream (NOMKSTREAM); the call
	// then returns [ErrNil].
	NoMkStream bool
	// Idempotency sends IDMP or IDMPAUTO (Redis 8.6+).
	Idempotency *XAddIdempotency
	// MaxLen trims the stream to at most MaxLen entries (MAXLEN).
	MaxLen int64
	// MinID trims entries with IDs lower than MinID (MINID).
	MinID string
	// Approximate trims with "~" instead of "=".
	Approximate bool
	// Limit caps the entries evicted by an approximate trim (LIMIT).
	Limit int64
	// ID is an explicit entry ID; empty means "*".
	ID string
}

// XAdd appends an entry with the given field-value pairs to the stream at
// key and returns its ID.
func (c *Client) XAdd(ctx context.Context, key string, opt XAddOptions, pairs ...string) (string, error) {
	f, s, err := c.xaddFrame(key, opt, pairs)
	if err != nil {
		return "", err
	}
	return c.doString(ctx, f, s)
}

// xaddFrame validates opt and pairs and encodes XADD, with its category.
func (c *Client) xaddFrame(key string, opt XAddOptions, pairs []string) (*wire.Frame, *spec, error) {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return nil, nil, errInvalid("XADD", "want field-value pairs")
	}
	if opt.MaxLen != 0 && opt.MinID != "" {
		return nil, nil, errInvalid("XADD", "MaxLen and MinID are mutually exclusive")
	}
	if opt.MaxLen < 0 || opt.Limit < 0 {
		return nil, nil, errInvalid("XADD", "MaxLen and Limit must not be negative")
	}
	if opt.Limit != 0 && (!opt.Approximate || (opt.MaxLen == 0 && opt.MinID == "")) {
		return nil, nil, errInvalid("XADD", "Limit needs an approximate trim")
	}
	idem := opt.Idempotency
	if idem != nil && (idem.ProducerID == "" || (idem.MessageID == "") != idem.Auto) {
		return nil, nil, errInvalid("XADD", "Idempotency needs a ProducerID and either a MessageID or Auto")
	}
	n := 3 + len(pairs)
	if opt.NoMkStream {
		n++
	}
	if idem != nil {
		n += 2
		if !idem.Auto {
			n++
		}
	}
	trim := opt.MaxLen != 0 || opt.MinID != ""
	if trim {
		n += 3
		if opt.Limit != 0 {
			n += 2
		}
	}
	f := c.newFrame(n, "XADD")
	arg(f, key)
	if opt.NoMkStream {
		arg(f, "NOMKSTREAM")
	}
	if idem != nil {
		if idem.Auto {
			arg(f, "IDMPAUTO")
			arg(f, idem.ProducerID)
		} else {
			arg(f, "IDMP")
			arg(f, idem.ProducerID)
			arg(f, idem.MessageID)
		}
	}
	if trim {
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
	}
	if opt.ID == "" {
		arg(f, "*")
	} else {
		arg(f, opt.ID)
	}
	for _, p := range pairs {
		arg(f, p)
	}
	s := specXADD
	if idem != nil {
		s = specXADDChecked
	}
	return f, s, nil
}

// XMessage is one stream entry.
type XMessage struct {
	ID string
	// Fields alternates field names and values, in insertion order.
	Fields []string
}

// XRange returns entries with IDs from start to end ("-" and "+" for the
// extremes); count > 0 limits how many.
func (c *Client) XRange(ctx context.Context, key, start, end string, count int64) ([]XMessage, error) {
	n := 4
	if count > 0 {
		n += 2
	}
	f := c.newFrame(n, "XRANGE")
	arg(f, key)
	arg(f, start)
	arg(f, end)
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	v, err := c.doValue(ctx, f, specXRANGE)
	if err != nil {
		return nil, err
	}
	return toXMessages(v)
}

func toXMessages(v resp.Value) ([]XMessage, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array", v)
	}
	out := make([]XMessage, 0, len(v.Elems))
	for _, e := range v.Elems {
		if len(e.Elems) != 2 {
			return nil, unexpected("stream entry", e)
		}
		fields, err := toStrings(e.Elems[1])
		if err != nil {
			return nil, err
		}
		out = append(out, XMessage{ID: string(e.Elems[0].TextBytes()), Fields: fields})
	}
	return out, nil
}

// XLen returns the number of entries in the stream at key.
func (c *Client) XLen(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "XLEN")
	arg(f, key)
	return c.doInt(ctx, f, specXLEN)
}
