package respire

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/clock"
	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specXADD        = specOf(catalog.Stream.XADD())
	specXADDChecked = &spec{name: "XADD", cat: WriteChecked, desc: catalog.Stream.XADD()}
	specXRANGE      = specOf(catalog.Stream.XRANGE())
	specXLEN        = specOf(catalog.Stream.XLEN())
	specXCFGSET     = specOf(catalog.Stream.XCFGSET())
)

// XAddIdempotency attaches a producer identity to an XADD (Redis 8.6+),
// so that a resend with the same identity returns the original entry ID
// instead of appending again.
//
// Redis keeps an identity only within the stream's IDMP-DURATION and
// among the producer's IDMP-MAXSIZE most recent ones (see
// [Client.XCfgSet]): a resend that arrives after its identity expired or
// was evicted appends again. A call only reads it and keeps no reference to
// it, so one value may serve concurrent calls while nobody changes it.
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
// [Client.XAdd] may attach an identity by itself; see there. A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type XAddOptions struct {
	// NoMkStream does not create a missing stream (NOMKSTREAM); the call
	// then returns [ErrNil].
	NoMkStream bool
	// Idempotency sends IDMP or IDMPAUTO (Redis 8.6+). Setting it turns
	// off the automatic identity of [Client.XAdd]: the caller's choice is
	// sent as is, and a server without IDMP answers it with an error.
	Idempotency *XAddIdempotency
	// MaxLen trims the stream to at most MaxLen entries (MAXLEN).
	MaxLen int64
	// MinID trims entries with IDs lower than MinID (MINID).
	MinID string
	// Approximate trims with "~" instead of "=": it needs MaxLen or
	// MinID.
	Approximate bool
	// Limit caps the entries evicted by an approximate trim (LIMIT).
	Limit int64
	// ID is an explicit entry ID; empty (or "*") means "*", an ID the
	// server generates. Another ID turns off the automatic identity of
	// [Client.XAdd] (Redis accepts IDMP only with "*").
	ID string
}

// XAdd appends an entry with the given field-value pairs to the stream at
// key and returns its ID.
//
// # Automatic idempotency
//
// When the client's [RetryPolicy] selects [RetryOnConnectionLoss] and its
// MaxCommandRetryCategory is [WriteChecked] or riskier, a call whose
// options set neither Idempotency nor an ID other than "*" carries IDMP
// (Redis 8.6+) automatically and is WriteChecked: the producer ID is the
// client's
// [Options.StreamProducerID], the message ID 16 random bytes (from
// crypto/rand) in unpadded base64url, 22 characters, new for each call
// and reused by every resend of that call. A resend after a lost reply
// then returns the original entry ID instead of appending a second entry.
// Without such a policy, or with the caller's own Idempotency or
// explicit ID, XAdd sends exactly the options given.
//
// A server without IDMP (before Redis 8.6) rejects the identity, before
// running anything, with "ERR Invalid stream ID specified as stream
// command argument". On exactly that reply XAdd sends the call once more
// as a plain XADD, within the call's original deadline, under the rules
// of a plain XADD ([WriteAccumulating]: under a WriteChecked maximum a
// lost reply of that plain XADD is not resent). Every call tries IDMP
// again, so such a server sees one rejected XADD per append; other
// errors reach the caller. The call, fallback included, is one XADD to
// [Options.Hooks] and the command duration metric.
//
// There is no fallback when an earlier attempt of the same call may have
// executed: its reply was lost on a server with IDMP, and the resend met
// a server without it (a Sentinel failover onto an older server, say).
// That attempt may have appended the entry, and a plain XADD would
// append it again. XAdd then returns the rejection wrapped in an error
// that says so; errors.As still finds the [*ServerError] and the
// [*RetryError], and [MayHaveExecuted] reports true. An earlier attempt
// that never reached the server, or that the server refused with
// LOADING, READONLY, MASTERDOWN or TRYAGAIN (replies sent before running
// a command), did not append: the fallback still happens.
//
// Warning: Redis remembers an identity only within the stream's
// IDMP-DURATION and among the producer's IDMP-MAXSIZE most recent
// identities (see [Client.XCfgSet]). A resend that arrives after its
// identity expired or was evicted appends again. Retries never provide
// exactly-once execution.
func (c *Client) XAdd(ctx context.Context, key string, opt XAddOptions, pairs ...string) (string, error) {
	if opt.Idempotency == nil && (opt.ID == "" || opt.ID == "*") && c.autoIDMP() {
		return c.xaddAuto(ctx, key, opt, pairs)
	}
	f, s, err := c.xaddFrame(key, opt, pairs)
	if err != nil {
		return "", err
	}
	return c.doString(ctx, f, s)
}

// errNoIDMP is the exact reply of a server without IDMP (Redis 7.0.15
// takes the IDMP token for the entry ID) to an XADD carrying IDMP.
const errNoIDMP = "ERR Invalid stream ID specified as stream command argument"

// autoIDMP reports whether the client's policy gives typed XADDs an
// automatic identity: it resends after a lost connection and accepts
// WriteChecked after possible execution.
func (c *Client) autoIDMP() bool {
	p := c.cfg.policy
	return c.retries && p.Retryable()&retry.ConnectionLoss != 0 && p.MaxCategory().Permits(catalog.WriteChecked)
}

// xaddAuto is XAdd with the client's producer ID and a fresh message ID,
// falling back to a plain XADD on a server without IDMP. The call, its
// fallback included, is one operation to the process hooks and the
// command duration metric, as a script's EVAL fallback is: a successful
// append is not a failed XADD followed by another.
func (c *Client) xaddAuto(ctx context.Context, key string, opt XAddOptions, pairs []string) (string, error) {
	if c.hooks == nil && c.cmdMetrics == nil {
		f, err := c.xaddAutoFrames(ctx, key, opt, pairs)
		if err != nil {
			return "", err
		}
		return frameString(f)
	}
	s := specXADDChecked // every XADD with an automatic identity
	var began time.Time
	if c.cmdMetrics != nil {
		began = clock.Now()
	}
	var f *wire.Frame
	var err error
	if c.hooks == nil {
		f, err = c.xaddAutoFrames(ctx, key, opt, pairs)
	} else {
		err = c.processHooked(ctx, s.name, s.cat, func(ctx context.Context) error {
			var err error
			f, err = c.xaddAutoFrames(ctx, key, opt, pairs)
			return err
		})
	}
	if c.cmdMetrics != nil {
		c.recordCommand(s, began, err)
	}
	if err != nil {
		return "", err
	}
	return frameString(f)
}

// xaddAutoFrames sends the XADD of xaddAuto, then its plain fallback if
// the server has no IDMP, past the process hooks and the duration metric
// (xaddAuto runs them once around both). It returns the frame holding
// the reply; on error it has released it.
func (c *Client) xaddAutoFrames(ctx context.Context, key string, opt XAddOptions, pairs []string) (*wire.Frame, error) {
	idem := XAddIdempotency{ProducerID: c.cfg.streamProducerID, MessageID: newStreamMessageID()}
	auto := opt
	auto.Idempotency = &idem
	f, s, err := c.xaddFrame(key, auto, pairs)
	if err != nil {
		return nil, err
	}
	// The fallback shares the call's deadline: compute it before the
	// first send, as exec does.
	dl := c.waitDeadline(ctx)
	f.Want = wire.WantString
	err = c.execFrame(ctx, f, s)
	if err == nil || !isNoIDMP(err) {
		return f, err
	}
	if ranBeforeLast(err) {
		// An earlier attempt may have appended the entry before a server
		// without IDMP answered the resend (a failover onto an older
		// server): a plain XADD could append it a second time.
		return nil, &causedError{command: "XADD", text: "the server rejected IDMP after an earlier attempt may have appended the entry; not sent again as a plain XADD", err: err}
	}
	// The server has no IDMP: it rejected the identity before running the
	// XADD. Send the call once more without it, as a plain XADD.
	if !dl.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	if f, s, err = c.xaddFrame(key, opt, pairs); err != nil {
		return nil, err
	}
	f.Want = wire.WantString
	return f, c.execFrame(ctx, f, s)
}

// isNoIDMP reports whether err is the exact rejection of IDMP by a
// server without it (possibly after resends of the rejected call).
func isNoIDMP(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && se.Message == errNoIDMP
}

// ranBeforeLast reports whether an attempt of the call that failed with
// err, before its last one, may have executed.
func ranBeforeLast(err error) bool {
	var re *RetryError
	return errors.As(err, &re) && re.earlier
}

// newStreamMessageID returns 16 random bytes in unpadded base64url.
func newStreamMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	var out [22]byte
	base64.RawURLEncoding.Encode(out[:], b[:])
	return string(out[:])
}

// streamProducerID returns the producer ID a client uses for automatic
// stream idempotency: id (validated [Options.StreamProducerID]) or, when
// it is empty, "respire-" and a random version 4 UUID.
func streamProducerID(id string) string {
	if id != "" {
		return id
	}
	var u [16]byte
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	var out [8 + 36]byte
	copy(out[:], "respire-")
	b := out[8:]
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(out[:])
}

// maxStreamProducerID bounds [Options.StreamProducerID], which every
// automatically identified XADD carries.
const maxStreamProducerID = 256

// validateStreamProducerID checks [Options.StreamProducerID]; "" (the
// default) is valid.
func validateStreamProducerID(id string) error {
	if id == "" {
		return nil
	}
	const field = "Options.StreamProducerID"
	switch {
	case len(id) > maxStreamProducerID:
		return &ConfigError{Field: field, Reason: "must be at most 256 bytes"}
	case !utf8.ValidString(id):
		return &ConfigError{Field: field, Reason: "must be valid UTF-8"}
	}
	if strings.TrimSpace(id) == "" {
		return &ConfigError{Field: field, Reason: "must not be blank (leave it empty for the default)"}
	}
	if strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return &ConfigError{Field: field, Reason: "must not contain spaces or control characters"}
	}
	return nil
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
	if opt.Approximate && opt.MaxLen == 0 && opt.MinID == "" {
		return nil, nil, errInvalid("XADD", "Approximate needs MaxLen or MinID")
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
		argTrim(f, opt.MaxLen, opt.MinID, opt.Approximate, opt.Limit)
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

// XMessage is one stream entry. It is a plain value that the library neither
// keeps nor changes once returned: safe for concurrent reads.
type XMessage struct {
	// ID is the entry's ID ("<ms>-<seq>").
	ID string
	// Fields alternates field names and values, in insertion order.
	Fields []string
}

// XRange returns entries with IDs from start to end ("-" and "+" for the
// extremes); count > 0 limits how many, 0 returns them all. A negative
// count fails with [ErrInvalidArgument] before anything is sent. Its retry
// category is [ReadOnly].
func (c *Client) cmdXRange(key, start, end string, count int64) cmd[[]XMessage] {
	return c.xrangeCmd(specXRANGE, key, start, end, count)
}

// xrangeCmd encodes "NAME key a b [COUNT count]" (XRANGE, XREVRANGE).
func (c *Client) xrangeCmd(s *spec, key, a, b string, count int64) cmd[[]XMessage] {
	if count < 0 {
		return invalidCmd[[]XMessage](s, "negative count")
	}
	n := 4
	if count > 0 {
		n += 2
	}
	f := c.newFrame(n, s.name)
	arg(f, key)
	arg(f, a)
	arg(f, b)
	if count > 0 {
		arg(f, "COUNT")
		argInt(f, count)
	}
	return typedCmd(f, s, wire.WantValue, toXMessages)
}

func toXMessages(v resp.Value) ([]XMessage, error) {
	if v.Type != resp.Array {
		return nil, unexpected("array", v)
	}
	out := make([]XMessage, 0, len(v.Elems))
	for _, e := range v.Elems {
		m, err := xmessageOf(e)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// XLen returns the number of entries in the stream at key.
func (c *Client) cmdXLen(key string) cmd[int64] {
	return keyArgsCmd(c, specXLEN, key, nil, intOf)
}

// XCfgOptions are XCFGSET's settings of a stream's IDMP deduplication
// (Redis 8.6+). A zero field leaves that setting unchanged; at least one
// must be set. A call only reads it and keeps no reference to it, so one
// value may serve concurrent calls while nobody changes it.
type XCfgOptions struct {
	// Duration is how long the stream remembers each idempotent ID
	// (IDMP-DURATION), in whole seconds; Redis accepts 1 s through 86400 s
	// and defaults to 100 s. Must not be negative.
	Duration time.Duration
	// MaxSize is how many idempotent IDs the stream remembers per producer
	// (IDMP-MAXSIZE), the oldest evicted first; Redis accepts 1 through
	// 10000 and defaults to 100. Must not be negative.
	MaxSize int64
}

// XCfgSet sets the IDMP deduplication limits of the existing stream at key
// (XCFGSET, Redis 8.6+). Redis applies them at once and clears the
// stream's recorded identities: an XADD resent after XCfgSet, or whose
// identity later expires (Duration) or is evicted (MaxSize), appends
// again. A server before 8.6 answers "ERR unknown command".
//
// XCfgSet is WriteAccumulating, the catalog's category for XCFGSET: a
// repeat does not only write the same settings again, it also clears the
// identities recorded in between, so appends resent after it are no
// longer deduplicated.
//
// Invalid options (both zero, negative values, a Duration that is not a
// whole number of seconds) fail with [ErrInvalidArgument] before anything
// is sent; the server judges the upper bounds.
func (c *Client) XCfgSet(ctx context.Context, key string, opt XCfgOptions) error {
	_, err := call(ctx, c, c.cmdXCfgSet(key, opt))
	return err
}

// XCfgSet sets the IDMP deduplication limits of the stream at key; see
// the Client method, which returns only the error.
//
// respire:client manual
func (c *Client) cmdXCfgSet(key string, opt XCfgOptions) cmd[struct{}] {
	switch {
	case opt.Duration < 0 || opt.MaxSize < 0:
		return invalidCmd[struct{}](specXCFGSET, "Duration and MaxSize must not be negative")
	case opt.Duration == 0 && opt.MaxSize == 0:
		return invalidCmd[struct{}](specXCFGSET, "set Duration or MaxSize")
	case opt.Duration%time.Second != 0:
		return invalidCmd[struct{}](specXCFGSET, "Duration must be a whole number of seconds")
	}
	n := 2
	if opt.Duration != 0 {
		n += 2
	}
	if opt.MaxSize != 0 {
		n += 2
	}
	f := c.newFrame(n, "XCFGSET")
	arg(f, key)
	if opt.Duration != 0 {
		arg(f, "IDMP-DURATION")
		argInt(f, int64(opt.Duration/time.Second))
	}
	if opt.MaxSize != 0 {
		arg(f, "IDMP-MAXSIZE")
		argInt(f, opt.MaxSize)
	}
	return typedCmd(f, specXCFGSET, wire.WantNone, statusOf)
}

// argTrim encodes a stream trim (XADD and XTRIM): MAXLEN maxLen when it
// is set, else MINID minID; "~" when approximate, else "="; LIMIT limit
// when it is set.
func argTrim(f *wire.Frame, maxLen int64, minID string, approximate bool, limit int64) {
	if maxLen != 0 {
		arg(f, "MAXLEN")
	} else {
		arg(f, "MINID")
	}
	if approximate {
		arg(f, "~")
	} else {
		arg(f, "=")
	}
	if maxLen != 0 {
		argInt(f, maxLen)
	} else {
		arg(f, minID)
	}
	if limit != 0 {
		arg(f, "LIMIT")
		argInt(f, limit)
	}
}
