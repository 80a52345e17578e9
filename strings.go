package respire

import (
	"context"
	"math"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specGET    = specOf(catalog.String.GET())
	specINCR   = specOf(catalog.String.INCR())
	specINCRBY = specOf(catalog.String.INCRBY())
	specDECR   = specOf(catalog.String.DECR())
	specAPPEND = specOf(catalog.String.APPEND())
	specSTRLEN = specOf(catalog.String.STRLEN())
	specMGET   = specOf(catalog.String.MGET())
	specMSET   = specOf(catalog.String.MSET())

	specGETDEL      = specOf(catalog.String.GETDEL())
	specGETRANGE    = specOf(catalog.String.GETRANGE())
	specSETRANGE    = specOf(catalog.String.SETRANGE())
	specINCRBYFLOAT = specOf(catalog.String.INCRBYFLOAT())
	specDECRBY      = specOf(catalog.String.DECRBY())
	specMSETNX      = specOf(catalog.String.MSETNX())
	specSETNX       = specOf(catalog.String.SETNX())
	specGETEX       = specOf(catalog.String.GETEX())
	specGETSET      = specOf(catalog.String.GETSET())
	specLCS         = specOf(catalog.String.LCS())
	specPSETEX      = specOf(catalog.String.PSETEX())
	specSETEX       = specOf(catalog.String.SETEX())
	specMSETEX      = specOf(catalog.String.MSETEX())
	specDELEX       = specOf(catalog.String.DELEX())
	specDIGEST      = specOf(catalog.String.DIGEST())

	// Typed SET refines the catalog's conservative category only for the
	// audited option sets (see SetOptions).
	specSET         = specOf(catalog.String.SET())
	specSETLastWins = &spec{name: "SET", cat: WriteLastWins, desc: catalog.String.SET()}
	specSETChecked  = &spec{name: "SET", cat: WriteChecked, desc: catalog.String.SET()}
)

// Get returns the string value of key, or [ErrNil] when it does not exist.
func (c *Client) Get(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "GET")
	arg(f, key)
	return c.doString(ctx, f, specGET)
}

// GetBytes appends the value of key to dst and returns the extended slice;
// when key does not exist it returns dst unchanged and [ErrNil], and on
// any other error dst unchanged and that error. With a dst of sufficient
// capacity it does not allocate.
func (c *Client) GetBytes(ctx context.Context, key string, dst []byte) ([]byte, error) {
	f := c.newFrame(2, "GET")
	arg(f, key)
	return c.doBytes(ctx, f, specGET, dst)
}

// Set sets key to value (SET key value), overwriting any value and
// clearing any expiry. Its retry category is WriteLastWins.
func (c *Client) Set(ctx context.Context, key, value string) error {
	f := c.newFrame(3, "SET")
	arg(f, key)
	arg(f, value)
	return c.doStatus(ctx, f, specSETLastWins)
}

// SetCondition restricts when SET writes. Its values are plain constants,
// safe for concurrent use.
type SetCondition uint8

// SET conditions.
const (
	// SetAlways writes unconditionally (the default).
	SetAlways SetCondition = iota
	// SetIfNotExists writes only when the key does not exist (NX).
	SetIfNotExists
	// SetIfExists writes only when the key exists (XX).
	SetIfExists
)

// SetOptions are SET's options. The zero value is a plain SET.
//
// Retry categories: no option or [SetIfExists] alone is WriteLastWins;
// [SetIfNotExists] alone is WriteChecked (a resend re-checks the condition,
// so it may report "not set" for a write the first attempt made). Any
// expiry, KeepTTL or Get keeps the conservative WriteAccumulating. A call
// only reads it and keeps no reference to it, so one value may serve
// concurrent calls while nobody changes it.
type SetOptions struct {
	// Condition is NX or XX.
	Condition SetCondition
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX, truncated to the millisecond. Must be at least 1ms
	// when set.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT, truncated to the millisecond. Must be after the
	// Unix epoch when set.
	ExpireAt time.Time
	// KeepTTL keeps the key's current expiry (KEEPTTL).
	KeepTTL bool
	// Get returns the previous value (GET).
	Get bool
}

// SetResult is the outcome of [Client.SetWithOptions]. It is a plain value
// that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type SetResult struct {
	// Written reports whether the value was written (false when the
	// condition did not hold).
	Written bool
	// Previous is the old value when SetOptions.Get was set and the key
	// existed; PreviousExists says whether it did.
	Previous       string
	PreviousExists bool
}

// SetWithOptions runs SET with options. Contradictory options (more than
// one of TTL, ExpireAt and KeepTTL, a TTL below 1ms, an ExpireAt not after
// the epoch, an undefined condition) fail with [ErrInvalidArgument] before
// anything is sent.
func (c *Client) SetWithOptions(ctx context.Context, key, value string, opt SetOptions) (SetResult, error) {
	f, s, err := c.setFrame(key, value, opt)
	if err != nil {
		return SetResult{}, err
	}
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return SetResult{}, err
	}
	return setResult(v, opt)
}

// setFrame validates opt and encodes SET with it, with its category.
func (c *Client) setFrame(key, value string, opt SetOptions) (*wire.Frame, *spec, error) {
	expiry, bad := expiryWords(opt.TTL, opt.ExpireAt, opt.KeepTTL, "KeepTTL")
	if bad != "" {
		return nil, nil, errInvalid("SET", bad)
	}
	if opt.Condition > SetIfExists {
		return nil, nil, errInvalid("SET", "undefined condition")
	}
	n := 3 + expiry
	if opt.Condition != SetAlways {
		n++
	}
	if opt.Get {
		n++
	}
	f := c.newFrame(n, "SET")
	arg(f, key)
	arg(f, value)
	switch opt.Condition {
	case SetIfNotExists:
		arg(f, "NX")
	case SetIfExists:
		arg(f, "XX")
	}
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.KeepTTL {
		arg(f, "KEEPTTL")
	}
	if opt.Get {
		arg(f, "GET")
	}
	s := specSET
	if expiry == 0 && !opt.Get {
		switch opt.Condition {
		case SetAlways, SetIfExists:
			s = specSETLastWins
		case SetIfNotExists:
			s = specSETChecked
		}
	}
	return f, s, nil
}

// setResult converts SET's reply under opt.
// Without GET the reply is OK (written) or null (the condition did not
// hold); with GET it is the old value as a string, or null. Any other
// reply is [ErrUnexpectedReply].
func setResult(v resp.Value, opt SetOptions) (SetResult, error) {
	var r SetResult
	if opt.Get {
		switch v.Type {
		case resp.BulkString, resp.Verbatim, resp.Null:
		default:
			return SetResult{}, unexpected("previous value", v)
		}
		// With GET the reply is the old value (or null); whether the
		// write happened under NX/XX follows from the old value.
		r.PreviousExists = !v.IsNull()
		r.Previous = string(v.TextBytes())
		switch opt.Condition {
		case SetIfNotExists:
			r.Written = !r.PreviousExists
		case SetIfExists:
			r.Written = r.PreviousExists
		default:
			r.Written = true
		}
		return r, nil
	}
	switch {
	case v.IsNull():
	case v.Type == resp.SimpleString && string(v.Str) == "OK":
		r.Written = true
	default:
		return SetResult{}, unexpected("OK or null", v)
	}
	return r, nil
}

// Incr increments the integer at key by one and returns the new value.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "INCR")
	arg(f, key)
	return c.doInt(ctx, f, specINCR)
}

// IncrBy increments the integer at key by delta and returns the new value.
func (c *Client) IncrBy(ctx context.Context, key string, delta int64) (int64, error) {
	f := c.newFrame(3, "INCRBY")
	arg(f, key)
	argInt(f, delta)
	return c.doInt(ctx, f, specINCRBY)
}

// Decr decrements the integer at key by one and returns the new value.
func (c *Client) cmdDecr(key string) cmd[int64] {
	f := c.newFrame(2, "DECR")
	arg(f, key)
	return typedCmd(f, specDECR, wire.WantInt, intOf)
}

// Append appends value to the string at key and returns the new length.
func (c *Client) cmdAppend(key, value string) cmd[int64] {
	f := c.newFrame(3, "APPEND")
	arg(f, key)
	arg(f, value)
	return typedCmd(f, specAPPEND, wire.WantInt, intOf)
}

// StrLen returns the length of the string at key (0 when missing).
func (c *Client) cmdStrLen(key string) cmd[int64] {
	f := c.newFrame(2, "STRLEN")
	arg(f, key)
	return typedCmd(f, specSTRLEN, wire.WantInt, intOf)
}

// MGet returns the values of keys; a missing key is reported in found.
func (c *Client) MGet(ctx context.Context, keys ...string) (values []string, found []bool, err error) {
	if len(keys) == 0 {
		return nil, nil, errInvalid("MGET", "no keys")
	}
	f := c.newFrame(1+len(keys), "MGET")
	for _, k := range keys {
		arg(f, k)
	}
	v, err := c.doValue(ctx, f, specMGET)
	if err != nil {
		return nil, nil, err
	}
	return valuesFound(v, len(keys))
}

// MSet sets several keys; pairs alternate keys and values.
func (c *Client) MSet(ctx context.Context, pairs ...string) error {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return errInvalid("MSET", "want key-value pairs")
	}
	f := c.newFrame(1+len(pairs), "MSET")
	for _, p := range pairs {
		arg(f, p)
	}
	return c.doStatus(ctx, f, specMSET)
}

// GetDel returns the value of key and deletes the key (GETDEL; Redis 6.2
// or later), or [ErrNil] when it does not exist. Its retry category is
// WriteAccumulating: a resend after the delete took effect returns
// [ErrNil].
func (c *Client) cmdGetDel(key string) cmd[string] {
	f := c.newFrame(2, "GETDEL")
	arg(f, key)
	return stringCmd(f, specGETDEL)
}

// GetRange returns the bytes start to end (inclusive; negative offsets
// count from the end) of the string at key (GETRANGE); "" when key does not
// exist or the range is empty. Its retry category is ReadOnly.
func (c *Client) cmdGetRange(key string, start, end int64) cmd[string] {
	return stringCmd(c.rangeFrame(specGETRANGE, key, start, end), specGETRANGE)
}

// SetRange overwrites the string at key from offset with value (SETRANGE),
// padding with zero bytes as needed, and returns the new length. A
// negative offset fails with [ErrInvalidArgument]. Its retry category is
// WriteLastWins.
func (c *Client) cmdSetRange(key string, offset int64, value string) cmd[int64] {
	if offset < 0 {
		return invalidCmd[int64](specSETRANGE, "offset is negative")
	}
	f := c.newFrame(4, "SETRANGE")
	arg(f, key)
	argInt(f, offset)
	arg(f, value)
	return typedCmd(f, specSETRANGE, wire.WantInt, intOf)
}

// IncrByFloat adds delta to the number at key (INCRBYFLOAT), treating a
// missing key as 0, and returns the new value. A NaN or infinite delta
// fails with [ErrInvalidArgument]. Its retry category is
// WriteAccumulating.
func (c *Client) cmdIncrByFloat(key string, delta float64) cmd[float64] {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return invalidCmd[float64](specINCRBYFLOAT, "delta is NaN or infinite")
	}
	f := c.newFrame(3, "INCRBYFLOAT")
	arg(f, key)
	argFloat(f, delta)
	return typedCmd(f, specINCRBYFLOAT, wire.WantBytes, floatOf)
}

// DecrBy decrements the integer at key by delta (DECRBY) and returns the
// new value. Its retry category is WriteAccumulating.
func (c *Client) cmdDecrBy(key string, delta int64) cmd[int64] {
	f := c.newFrame(3, "DECRBY")
	arg(f, key)
	argInt(f, delta)
	return typedCmd(f, specDECRBY, wire.WantInt, intOf)
}

// MSetNX sets several keys only when none of them exists (MSETNX) and
// reports whether it set them; pairs alternate keys and values. No pairs
// or an odd count fails with [ErrInvalidArgument]. On a Cluster client the
// keys must share a slot (MSETNX is never split). Its retry category is
// WriteChecked (a resend re-checks, so it may report false for a write the
// first attempt made).
func (c *Client) cmdMSetNX(pairs ...string) cmd[bool] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return invalidCmd[bool](specMSETNX, "want key-value pairs")
	}
	f := c.newFrame(1+len(pairs), "MSETNX")
	for _, p := range pairs {
		arg(f, p)
	}
	return typedCmd(f, specMSETNX, wire.WantInt, flagOf)
}

// SetNX sets key to value only when key does not exist (SETNX) and reports
// whether it did. For an expiry as well, use [Client.SetWithOptions] with
// [SetIfNotExists]. Its retry category is WriteChecked (a resend re-checks,
// so it may report false for a write the first attempt made).
func (c *Client) cmdSetNX(key, value string) cmd[bool] {
	f := c.newFrame(3, "SETNX")
	arg(f, key)
	arg(f, value)
	return typedCmd(f, specSETNX, wire.WantInt, flagOf)
}

// GetExOptions are GETEX's options: at most one of them may be set. The
// zero value leaves the expiry unchanged. A call only reads it and keeps no
// reference to it, so one value may serve concurrent calls while nobody
// changes it.
type GetExOptions struct {
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX, truncated to the millisecond. Must be at least 1ms
	// when set. Defaults to none.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT, truncated to the millisecond. Must be after the
	// Unix epoch when set. Defaults to none.
	ExpireAt time.Time
	// Persist removes the expiry (PERSIST). Defaults to false.
	Persist bool
}

// GetEx returns the value of key and changes its expiry as opt says
// (GETEX; Redis 6.2 or later), or [ErrNil] when key does not exist.
// Contradictory options (more than one of TTL, ExpireAt and Persist, a TTL
// below 1ms, an ExpireAt not after the epoch) fail with
// [ErrInvalidArgument] naming the field before anything is sent. Its retry
// category is WriteAccumulating, the catalog's: kept for every option,
// since a resent relative TTL restarts the countdown.
func (c *Client) cmdGetEx(key string, opt GetExOptions) cmd[string] {
	expiry, bad := expiryWords(opt.TTL, opt.ExpireAt, opt.Persist, "Persist")
	if bad != "" {
		return invalidCmd[string](specGETEX, bad)
	}
	f := c.newFrame(2+expiry, "GETEX")
	arg(f, key)
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.Persist {
		arg(f, "PERSIST")
	}
	return stringCmd(f, specGETEX)
}

// expiryWords validates an expiry given as a TTL, a time or a flag (at
// most one) and returns how many words it takes.
func expiryWords(ttl time.Duration, at time.Time, flag bool, flagName string) (int, string) {
	set, words := 0, 0
	if ttl != 0 {
		set, words = set+1, 2
		if ttl < time.Millisecond {
			return 0, "TTL must be at least 1ms"
		}
	}
	if !at.IsZero() {
		set, words = set+1, 2
		if at.UnixMilli() <= 0 {
			return 0, "ExpireAt must be after the Unix epoch"
		}
	}
	if flag {
		set, words = set+1, 1
	}
	if set > 1 {
		return 0, "TTL, ExpireAt and " + flagName + " are mutually exclusive"
	}
	return words, ""
}

// argExpiry appends the expiry of ttl or at (EX/PX for whole seconds or
// not, EXAT/PXAT likewise) and reports whether it appended one.
func argExpiry(f *wire.Frame, ttl time.Duration, at time.Time) bool {
	switch {
	case ttl != 0 && ttl%time.Second == 0:
		arg(f, "EX")
		argInt(f, int64(ttl/time.Second))
	case ttl != 0:
		arg(f, "PX")
		argInt(f, ttl.Milliseconds())
	case !at.IsZero() && at.UnixMilli()%1000 == 0:
		arg(f, "EXAT")
		argInt(f, at.Unix())
	case !at.IsZero():
		arg(f, "PXAT")
		argInt(f, at.UnixMilli())
	default:
		return false
	}
	return true
}

// GetSet sets key to value and returns the value it held (GETSET), or
// [ErrNil] when key did not exist (it is set all the same). GETSET is
// deprecated since Redis 6.2 in favour of SET with GET
// ([Client.SetWithOptions] with Get). Its retry category is
// WriteAccumulating: a resend returns the value the first attempt wrote
// instead of the original.
func (c *Client) cmdGetSet(key, value string) cmd[string] {
	f := c.newFrame(3, "GETSET")
	arg(f, key)
	arg(f, value)
	return stringCmd(f, specGETSET)
}

// LCS returns the longest common subsequence of the strings at key1 and
// key2 (LCS; Redis 7.0 or later); a missing key counts as "". On a
// Cluster client the keys must share a slot. Its retry category is
// ReadOnly.
func (c *Client) cmdLCS(key1, key2 string) cmd[string] {
	f := c.newFrame(3, "LCS")
	arg(f, key1)
	arg(f, key2)
	return stringCmd(f, specLCS)
}

// LCSLen returns the length of the longest common subsequence of the
// strings at key1 and key2 (LCS LEN); see [Client.LCS].
func (c *Client) cmdLCSLen(key1, key2 string) cmd[int64] {
	f := c.newFrame(4, "LCS")
	arg(f, key1)
	arg(f, key2)
	arg(f, "LEN")
	return typedCmd(f, specLCS, wire.WantInt, intOf)
}

// LCSRange is a range of bytes, both ends included. It is a plain value that
// the library neither keeps nor changes once returned: safe for concurrent
// reads.
type LCSRange struct{ Start, End int64 }

// LCSMatch is one run of bytes that the strings of [Client.LCSIdx] share. It
// is a plain value that the library neither keeps nor changes once returned:
// safe for concurrent reads.
type LCSMatch struct {
	// Key1 and Key2 are where the run lies in the first and the second
	// string.
	Key1, Key2 LCSRange
	// Len is the run's length in bytes.
	Len int64
}

// LCSResult is the reply of [Client.LCSIdx]. It is a plain value that the
// library neither keeps nor changes once returned: safe for concurrent
// reads.
type LCSResult struct {
	// Matches are the runs of the longest common subsequence, from the
	// last one to the first, as Redis lists them.
	Matches []LCSMatch
	// Len is the length of the longest common subsequence.
	Len int64
}

// LCSIdx returns where the longest common subsequence of the strings at
// key1 and key2 lies in each of them (LCS IDX WITHMATCHLEN), leaving out
// the runs shorter than minMatchLen (MINMATCHLEN; 0 or 1 keeps every run).
// A negative minMatchLen fails with [ErrInvalidArgument]. The result is
// the same under RESP2 and RESP3; see [Client.LCS].
func (c *Client) cmdLCSIdx(key1, key2 string, minMatchLen int64) cmd[LCSResult] {
	if minMatchLen < 0 {
		return invalidCmd[LCSResult](specLCS, "minMatchLen is negative")
	}
	n := 5
	if minMatchLen > 0 {
		n += 2
	}
	f := c.newFrame(n, "LCS")
	arg(f, key1)
	arg(f, key2)
	arg(f, "IDX")
	if minMatchLen > 0 {
		arg(f, "MINMATCHLEN")
		argInt(f, minMatchLen)
	}
	arg(f, "WITHMATCHLEN")
	return typedCmd(f, specLCS, wire.WantValue, lcsResultOf)
}

// lcsResultOf converts LCS IDX WITHMATCHLEN's reply: a map (RESP3) or
// flat array (RESP2) of "matches" and "len".
func lcsResultOf(v resp.Value) (LCSResult, error) {
	var r LCSResult
	seen := 0
	err := convPairs(v, func(k []byte, val resp.Value) error {
		switch string(k) {
		case "len":
			seen |= 1
			n, err := convInt64(val)
			if err != nil {
				return atValue(k, err)
			}
			r.Len = n
		case "matches":
			seen |= 2
			if err := convList(val, "array of matches"); err != nil {
				return atValue(k, err)
			}
			r.Matches = make([]LCSMatch, len(val.Elems))
			for i, m := range val.Elems {
				if err := lcsMatchOf(m, &r.Matches[i]); err != nil {
					return atValue(k, atElement(i, err))
				}
			}
		}
		return nil
	})
	if err == nil && seen != 3 {
		err = unexpected("map of matches and len", v)
	}
	return r, err
}

// lcsMatchOf converts one match: [[start1, end1], [start2, end2], len].
func lcsMatchOf(v resp.Value, m *LCSMatch) error {
	if v.Type != resp.Array || len(v.Elems) != 3 {
		return unexpected("array of two ranges and a length", v)
	}
	for i, dst := range []*LCSRange{&m.Key1, &m.Key2} {
		e := v.Elems[i]
		if e.Type != resp.Array || len(e.Elems) != 2 {
			return atElement(i, unexpected("two-element range", e))
		}
		var err error
		if dst.Start, err = convInt64(e.Elems[0]); err != nil {
			return atElement(i, err)
		}
		if dst.End, err = convInt64(e.Elems[1]); err != nil {
			return atElement(i, err)
		}
	}
	n, err := convInt64(v.Elems[2])
	if err != nil {
		return atElement(2, err)
	}
	m.Len = n
	return nil
}

// SetEx sets key to value with a time to live in whole seconds (SETEX),
// like [Client.SetWithOptions] with a TTL. ttl is truncated to seconds; a
// ttl under one second fails with [ErrInvalidArgument] (use
// [Client.PSetEx]). Its retry category is WriteAccumulating: a resend
// restarts the countdown.
//
// respire:client manual
func (c *Client) cmdSetEx(key, value string, ttl time.Duration) cmd[struct{}] {
	if ttl < time.Second {
		return invalidCmd[struct{}](specSETEX, "ttl must be at least 1s (use PSetEx)")
	}
	f := c.newFrame(4, "SETEX")
	arg(f, key)
	argInt(f, int64(ttl/time.Second))
	arg(f, value)
	return typedCmd(f, specSETEX, wire.WantNone, statusOf)
}

// SetEx sets key to value with a time to live in whole seconds (SETEX),
// like [Client.SetWithOptions] with a TTL. ttl is truncated to seconds; a
// ttl under one second fails with [ErrInvalidArgument] (use
// [Client.PSetEx]). Its retry category is WriteAccumulating: a resend
// restarts the countdown.
func (c *Client) SetEx(ctx context.Context, key, value string, ttl time.Duration) error {
	_, err := call(ctx, c, c.cmdSetEx(key, value, ttl))
	return err
}

// PSetEx sets key to value with a time to live in milliseconds (PSETEX).
// ttl is truncated to milliseconds; a ttl under one millisecond fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating: a resend
// restarts the countdown.
//
// respire:client manual
func (c *Client) cmdPSetEx(key, value string, ttl time.Duration) cmd[struct{}] {
	if ttl < time.Millisecond {
		return invalidCmd[struct{}](specPSETEX, "ttl must be at least 1ms")
	}
	f := c.newFrame(4, "PSETEX")
	arg(f, key)
	argInt(f, ttl.Milliseconds())
	arg(f, value)
	return typedCmd(f, specPSETEX, wire.WantNone, statusOf)
}

// PSetEx sets key to value with a time to live in milliseconds (PSETEX).
// ttl is truncated to milliseconds; a ttl under one millisecond fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating: a resend
// restarts the countdown.
func (c *Client) PSetEx(ctx context.Context, key, value string, ttl time.Duration) error {
	_, err := call(ctx, c, c.cmdPSetEx(key, value, ttl))
	return err
}

// MSetExOptions are MSETEX's options. The zero value writes every key
// unconditionally and clears their expiry, as MSET does. A call only reads
// it and keeps no reference to it, so one value may serve concurrent calls
// while nobody changes it.
type MSetExOptions struct {
	// Condition writes only when no key exists (SetIfNotExists, NX) or
	// when every key exists (SetIfExists, XX). Defaults to SetAlways.
	Condition SetCondition
	// TTL sets a relative expiry on every key: EX when a whole number of
	// seconds, otherwise PX, truncated to the millisecond. Must be at
	// least 1ms when set.
	TTL time.Duration
	// ExpireAt sets an absolute expiry on every key: EXAT when on a whole
	// second, otherwise PXAT, truncated to the millisecond. Must be after
	// the Unix epoch when set.
	ExpireAt time.Time
	// KeepTTL keeps each key's current expiry (KEEPTTL).
	KeepTTL bool
}

// MSetEx sets several keys at once with a shared expiry and condition
// (MSETEX; Redis 8.4 or later) and reports whether it set them (false when
// opt.Condition did not hold; then it set none). pairs alternate keys and
// values. No pairs, an odd count, or contradictory options (more than one
// of TTL, ExpireAt and KeepTTL, a TTL below 1ms, an ExpireAt not after the
// epoch, an undefined condition) fail with [ErrInvalidArgument] before
// anything is sent. On a Cluster client the keys must share a slot. Its
// retry category is WriteAccumulating, the catalog's: a resent relative
// TTL restarts the countdown.
func (c *Client) cmdMSetEx(opt MSetExOptions, pairs ...string) cmd[bool] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return invalidCmd[bool](specMSETEX, "want key-value pairs")
	}
	expiry, bad := expiryWords(opt.TTL, opt.ExpireAt, opt.KeepTTL, "KeepTTL")
	if bad != "" {
		return invalidCmd[bool](specMSETEX, bad)
	}
	if opt.Condition > SetIfExists {
		return invalidCmd[bool](specMSETEX, "undefined condition")
	}
	n := 2 + len(pairs) + expiry
	if opt.Condition != SetAlways {
		n++
	}
	f := c.newFrame(n, "MSETEX")
	argInt(f, int64(len(pairs)/2))
	for _, p := range pairs {
		arg(f, p)
	}
	switch opt.Condition {
	case SetIfNotExists:
		arg(f, "NX")
	case SetIfExists:
		arg(f, "XX")
	}
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.KeepTTL {
		arg(f, "KEEPTTL")
	}
	return typedCmd(f, specMSETEX, wire.WantInt, flagOf)
}

// DelExCondition is the condition of [Client.DelEx]. Its values are plain
// constants, safe for concurrent use.
type DelExCondition uint8

// DELEX conditions.
const (
	// DelExAlways deletes the key whatever it holds, like DEL.
	DelExAlways DelExCondition = iota
	// DelExIfEqual deletes the key only if its value equals
	// DelExOptions.Value (IFEQ).
	DelExIfEqual
	// DelExIfNotEqual deletes the key only if its value differs from
	// DelExOptions.Value (IFNE).
	DelExIfNotEqual
	// DelExIfDigestEqual deletes the key only if the digest of its value
	// ([Client.Digest]) equals DelExOptions.Value (IFDEQ).
	DelExIfDigestEqual
	// DelExIfDigestNotEqual deletes the key only if the digest of its
	// value differs from DelExOptions.Value (IFDNE).
	DelExIfDigestNotEqual
)

// DelExOptions are DELEX's options. The zero value deletes the key
// unconditionally. A call only reads it and keeps no reference to it, so one
// value may serve concurrent calls while nobody changes it.
type DelExOptions struct {
	// Condition says when the key is deleted. Defaults to DelExAlways.
	Condition DelExCondition
	// Value is the value (DelExIfEqual, DelExIfNotEqual) or the hex
	// digest (DelExIfDigestEqual, DelExIfDigestNotEqual) compared with
	// the key's. A digest must not be empty; with DelExAlways Value must
	// be empty.
	Value string
}

// DelEx deletes key under opt's condition (DELEX; Redis 8.4 or later) and
// reports whether it deleted it (false when key does not exist or the
// condition does not hold). With a condition the key must hold a string
// (else a [*ServerError]). An undefined condition, an empty digest, or a
// Value without a condition fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is WriteAccumulating, the
// catalog's.
func (c *Client) cmdDelEx(key string, opt DelExOptions) cmd[bool] {
	var word string
	switch opt.Condition {
	case DelExAlways:
		if opt.Value != "" {
			return invalidCmd[bool](specDELEX, "Value without a Condition")
		}
	case DelExIfEqual:
		word = "IFEQ"
	case DelExIfNotEqual:
		word = "IFNE"
	case DelExIfDigestEqual:
		word = "IFDEQ"
	case DelExIfDigestNotEqual:
		word = "IFDNE"
	default:
		return invalidCmd[bool](specDELEX, "undefined Condition")
	}
	if opt.Condition >= DelExIfDigestEqual && opt.Value == "" {
		return invalidCmd[bool](specDELEX, "empty digest in Value")
	}
	n := 2
	if word != "" {
		n += 2
	}
	f := c.newFrame(n, "DELEX")
	arg(f, key)
	if word != "" {
		arg(f, word)
		arg(f, opt.Value)
	}
	return typedCmd(f, specDELEX, wire.WantInt, flagOf)
}

// Digest returns the hash digest of the string at key as hexadecimal text
// (DIGEST; Redis 8.4 or later), for [DelExOptions], or [ErrNil] when key
// does not exist. A key that holds another type is a [*ServerError]. Its
// retry category is ReadOnly.
func (c *Client) cmdDigest(key string) cmd[string] {
	f := c.newFrame(2, "DIGEST")
	arg(f, key)
	return stringCmd(f, specDIGEST)
}
