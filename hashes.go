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
	specHSET         = specOf(catalog.Hash.HSET())
	specHGET         = specOf(catalog.Hash.HGET())
	specHGETALL      = specOf(catalog.Hash.HGETALL())
	specHDEL         = specOf(catalog.Hash.HDEL())
	specHINCRBY      = specOf(catalog.Hash.HINCRBY())
	specHINCRBYFLOAT = specOf(catalog.Hash.HINCRBYFLOAT())
	specHEXISTS      = specOf(catalog.Hash.HEXISTS())
	specHLEN         = specOf(catalog.Hash.HLEN())
	specHKEYS        = specOf(catalog.Hash.HKEYS())
	specHVALS        = specOf(catalog.Hash.HVALS())
	specHMGET        = specOf(catalog.Hash.HMGET())
	specHSETNX       = specOf(catalog.Hash.HSETNX())
	specHSTRLEN      = specOf(catalog.Hash.HSTRLEN())
	specHRANDFIELD   = specOf(catalog.Hash.HRANDFIELD())
	specHEXPIRE      = specOf(catalog.Hash.HEXPIRE())
	specHPEXPIRE     = specOf(catalog.Hash.HPEXPIRE())
	specHEXPIREAT    = specOf(catalog.Hash.HEXPIREAT())
	specHPEXPIREAT   = specOf(catalog.Hash.HPEXPIREAT())
	specHTTL         = specOf(catalog.Hash.HTTL())
	specHPTTL        = specOf(catalog.Hash.HPTTL())
	specHEXPIRETIME  = specOf(catalog.Hash.HEXPIRETIME())
	specHPEXPIRETIME = specOf(catalog.Hash.HPEXPIRETIME())
	specHPERSIST     = specOf(catalog.Hash.HPERSIST())
	specHGETDEL      = specOf(catalog.Hash.HGETDEL())
	specHGETEX       = specOf(catalog.Hash.HGETEX())
	specHSETEX       = specOf(catalog.Hash.HSETEX())
)

// HSet sets fields of the hash at key; pairs alternate fields and values.
// It returns how many fields were added (not updated).
func (c *Client) cmdHSet(key string, pairs ...string) cmd[int64] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return invalidCmd[int64](specHSET, "want field-value pairs")
	}
	return keyArgsCmd(c, specHSET, key, pairs, intOf)
}

// HGet returns the value of field in the hash at key, or [ErrNil].
func (c *Client) cmdHGet(key, field string) cmd[string] {
	f := c.newFrame(3, "HGET")
	arg(f, key)
	arg(f, field)
	return stringCmd(f, specHGET)
}

// HGetAll returns every field and value of the hash at key (empty when
// the key does not exist).
func (c *Client) cmdHGetAll(key string) cmd[map[string]string] {
	return keyArgsCmd(c, specHGETALL, key, nil, mapOf)
}

// HDel removes fields from the hash at key and returns how many existed.
// No fields fails with [ErrInvalidArgument] before anything is sent.
func (c *Client) cmdHDel(key string, fields ...string) cmd[int64] {
	if len(fields) == 0 {
		return invalidCmd[int64](specHDEL, "no fields")
	}
	return keyArgsCmd(c, specHDEL, key, fields, intOf)
}

// HIncrBy adds delta to the integer value of field in the hash at key (a
// missing field counts as 0) and returns the new value as an int64. Its
// retry category is [WriteAccumulating]: a resend adds delta again.
func (c *Client) cmdHIncrBy(key, field string, delta int64) cmd[int64] {
	f := c.newFrame(4, "HINCRBY")
	arg(f, key)
	arg(f, field)
	argInt(f, delta)
	return typedCmd(f, specHINCRBY, wire.WantInt, intOf)
}

// HIncrByFloat adds delta to the number held by field in the hash at key
// (a missing field counts as 0) and returns the new value as a float64.
// A NaN or infinite delta, which Redis refuses, fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating]: a resend adds delta again.
func (c *Client) cmdHIncrByFloat(key, field string, delta float64) cmd[float64] {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return invalidCmd[float64](specHINCRBYFLOAT, "delta must be finite")
	}
	f := c.newFrame(4, "HINCRBYFLOAT")
	arg(f, key)
	arg(f, field)
	argFloat(f, delta)
	return typedCmd(f, specHINCRBYFLOAT, wire.WantBytes, floatOf)
}

// HExists reports whether field exists in the hash at key (false when
// the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdHExists(key, field string) cmd[bool] {
	f := c.newFrame(3, "HEXISTS")
	arg(f, key)
	arg(f, field)
	return typedCmd(f, specHEXISTS, wire.WantInt, flagOf)
}

// HLen returns the number of fields in the hash at key as an int64 (0
// when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdHLen(key string) cmd[int64] {
	return keyArgsCmd(c, specHLEN, key, nil, intOf)
}

// HKeys returns the fields of the hash at key as a []string, in no
// particular order (empty when the key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) cmdHKeys(key string) cmd[[]string] {
	return keyArgsCmd(c, specHKEYS, key, nil, strsOf)
}

// HVals returns the values of the hash at key as a []string, in the
// order [Client.HKeys] returns their fields (empty when the key does not
// exist). Its retry category is [ReadOnly].
func (c *Client) cmdHVals(key string) cmd[[]string] {
	return keyArgsCmd(c, specHVALS, key, nil, strsOf)
}

// HMGet is defined here for its Batch member, whose Future holds the
// values and whether each field exists as a [FieldValues]; the Client
// method, which returns them apart, is written by hand below.
//
// respire:client manual
func (c *Client) cmdHMGet(key string, fields ...string) cmd[FieldValues] {
	if len(fields) == 0 {
		return invalidCmd[FieldValues](specHMGET, "no fields")
	}
	return keyArgsCmd(c, specHMGET, key, fields, fieldValuesOf(len(fields)))
}

// HMGet returns the values of fields in the hash at key, one per field
// in order; found[i] reports whether fields[i] exists (values[i] is ""
// when it does not), as with [Client.MGet]. No fields fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly]. Its Batch member's Future holds both as a [FieldValues].
func (c *Client) HMGet(ctx context.Context, key string, fields ...string) (values []string, found []bool, err error) {
	v, err := call(ctx, c, c.cmdHMGet(key, fields...))
	if err != nil {
		return nil, nil, err
	}
	return v.Values, v.Found, nil
}

// FieldValues holds one value per requested field, in order, as HMGET,
// HGETDEL and HGETEX return them: Found[i] reports whether the i-th
// field existed (Values[i] is "" when it did not). It is a plain value that
// the library neither keeps nor changes once returned: safe for concurrent
// reads.
type FieldValues struct {
	Values []string
	Found  []bool
}

// fieldValuesOf converts an array of n strings or nulls, one per field
// asked for: another length fails (a caller indexes Found by field).
func fieldValuesOf(n int) func(resp.Value) (FieldValues, error) {
	return func(v resp.Value) (FieldValues, error) {
		values, found, err := valuesFound(v, n)
		return FieldValues{Values: values, Found: found}, err
	}
}

// valuesFound converts an array of n strings or nulls, such as MGET's and
// HMGET's replies, to values and whether each was present.
func valuesFound(v resp.Value, n int) (values []string, found []bool, err error) {
	if !v.Type.Aggregate() || len(v.Elems) != n {
		return nil, nil, unexpected("array of one value per key or field", v)
	}
	values, found = make([]string, n), make([]bool, n)
	for i, e := range v.Elems {
		switch {
		case e.Type.Aggregate():
			return nil, nil, unexpected("string element", e)
		case e.IsError(): // a proxy's per-key failure: not a value
			return nil, nil, atElement(i, unexpected("string element", e))
		}
		found[i] = !e.IsNull()
		values[i] = string(e.TextBytes())
	}
	return values, found, nil
}

// HSetNX sets field in the hash at key to value only if the field does
// not exist, and reports whether it did so. Its retry category is
// [WriteChecked]: a resend re-checks the field, so it may report false
// for a write the first attempt made.
func (c *Client) cmdHSetNX(key, field, value string) cmd[bool] {
	f := c.newFrame(4, "HSETNX")
	arg(f, key)
	arg(f, field)
	arg(f, value)
	return typedCmd(f, specHSETNX, wire.WantInt, flagOf)
}

// HStrLen returns the length in bytes of the value of field in the hash
// at key as an int64 (0 when the field or key does not exist). Its retry
// category is [ReadOnly].
func (c *Client) cmdHStrLen(key, field string) cmd[int64] {
	f := c.newFrame(3, "HSTRLEN")
	arg(f, key)
	arg(f, field)
	return typedCmd(f, specHSTRLEN, wire.WantInt, intOf)
}

// HRandField returns random fields of the hash at key as a []string
// (HRANDFIELD key count): with a positive count, up to count distinct
// fields; with a negative count, exactly -count fields that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is [ReadOnly].
func (c *Client) cmdHRandField(key string, count int64) cmd[[]string] {
	f := c.newFrame(3, "HRANDFIELD")
	arg(f, key)
	argInt(f, count)
	return typedCmd(f, specHRANDFIELD, wire.WantValue, strsOf)
}

// Hash field expiration (Redis 7.4 or later; HGETDEL, HGETEX and HSETEX
// 8.0). Each command names its fields after FIELDS numfields and answers
// per field, in order.

// HExpireCondition restricts which fields HEXPIRE and its variants
// change. Its values are plain constants, safe for concurrent use.
type HExpireCondition uint8

// Field expiry conditions.
const (
	// HExpireAlways sets every field's expiry (the default).
	HExpireAlways HExpireCondition = iota
	// HExpireNX sets it only on fields without one (NX).
	HExpireNX
	// HExpireXX sets it only on fields that have one (XX).
	HExpireXX
	// HExpireGT sets it only when later than the field's current one; a
	// field without one counts as never expiring (GT).
	HExpireGT
	// HExpireLT sets it only when earlier than the field's current one
	// (LT).
	HExpireLT
)

// HExpireCode is the outcome of HEXPIRE and its variants for one field. Its
// values are plain constants, safe for concurrent use.
type HExpireCode int64

// Per-field outcomes of [Client.HExpire] and its variants, as Redis sends
// them.
const (
	// HExpireNoField: the field (or the key) does not exist.
	HExpireNoField HExpireCode = -2
	// HExpireNotSet: the condition did not hold; nothing changed.
	HExpireNotSet HExpireCode = 0
	// HExpireSet: the expiry was set.
	HExpireSet HExpireCode = 1
	// HExpireDeleted: the field was deleted at once (a zero TTL or a
	// time in the past).
	HExpireDeleted HExpireCode = 2
)

// HPersistCode is the outcome of HPERSIST for one field. Its values are
// plain constants, safe for concurrent use.
type HPersistCode int64

// Per-field outcomes of [Client.HPersist], as Redis sends them.
const (
	// HPersistNoField: the field (or the key) does not exist.
	HPersistNoField HPersistCode = -2
	// HPersistNoExpiry: the field had no expiry.
	HPersistNoExpiry HPersistCode = -1
	// HPersistRemoved: the expiry was removed.
	HPersistRemoved HPersistCode = 1
)

// Special values of [Client.HExpireTime] and [Client.HPExpireTime].
const (
	// HExpireTimeNoField means the field (or the key) does not exist.
	HExpireTimeNoField int64 = -2
	// HExpireTimeNone means the field has no expiry.
	HExpireTimeNone int64 = -1
)

// fieldsFrame starts "NAME key" for a command of extra option words
// after the key, then FIELDS numfields and nfields fields ([argFields]).
func (c *Client) fieldsFrame(name, key string, extra, nfields int) *wire.Frame {
	f := c.newFrame(4+extra+nfields, name)
	arg(f, key)
	return f
}

// argFields appends "FIELDS n fields...".
func argFields(f *wire.Frame, fields []string) {
	arg(f, "FIELDS")
	argInt(f, int64(len(fields)))
	for _, field := range fields {
		arg(f, field)
	}
}

// fieldsCmd defines "NAME key FIELDS n fields..." with no options.
func fieldsCmd[T any](c *Client, s *spec, key string, fields []string, conv func(resp.Value) (T, error)) cmd[T] {
	if len(fields) == 0 {
		return invalidCmd[T](s, "no fields")
	}
	f := c.fieldsFrame(s.name, key, 0, len(fields))
	argFields(f, fields)
	return typedCmd(f, s, wire.WantValue, conv)
}

// hexpireCmd defines HEXPIRE and its variants: "NAME key n [cond] FIELDS
// numfields fields...".
func hexpireCmd(c *Client, s *spec, key string, n int64, cond HExpireCondition, fields []string) cmd[[]HExpireCode] {
	if len(fields) == 0 {
		return invalidCmd[[]HExpireCode](s, "no fields")
	}
	var word string
	switch cond {
	case HExpireAlways:
	case HExpireNX:
		word = "NX"
	case HExpireXX:
		word = "XX"
	case HExpireGT:
		word = "GT"
	case HExpireLT:
		word = "LT"
	default:
		return invalidCmd[[]HExpireCode](s, "undefined condition")
	}
	extra := 1
	if word != "" {
		extra++
	}
	f := c.fieldsFrame(s.name, key, extra, len(fields))
	argInt(f, n)
	if word != "" {
		arg(f, word)
	}
	argFields(f, fields)
	return typedCmd(f, s, wire.WantValue, codesOf[HExpireCode])
}

// codesOf converts an array of integers to per-field codes (a null reply,
// which no version sends, to nil).
func codesOf[T ~int64](v resp.Value) ([]T, error) {
	ns, err := Reply{v: v}.Int64s()
	if err != nil || ns == nil {
		return nil, err
	}
	out := make([]T, len(ns))
	for i, n := range ns {
		out[i] = T(n)
	}
	return out, nil
}

// HExpire sets the expiry of fields of the hash at key to ttl from now,
// in whole seconds, where cond holds (HEXPIRE; Redis 7.4 or later), and
// returns the outcome for each field in order. A zero ttl deletes the
// fields. No fields, a negative ttl or one below 1s but not zero (use
// [Client.HPExpire]), or an undefined condition fail with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// WriteAccumulating, the catalog's: a resend restarts the countdown and
// may report [HExpireNotSet] or [HExpireNoField] for what the first
// attempt did.
func (c *Client) cmdHExpire(key string, ttl time.Duration, cond HExpireCondition, fields ...string) cmd[[]HExpireCode] {
	if ttl < 0 || (ttl > 0 && ttl < time.Second) {
		return invalidCmd[[]HExpireCode](specHEXPIRE, "ttl must be zero or at least 1s")
	}
	return hexpireCmd(c, specHEXPIRE, key, int64(ttl/time.Second), cond, fields)
}

// HPExpire is [Client.HExpire] in milliseconds (HPEXPIRE): ttl is
// truncated to the millisecond, and a ttl below 1ms but not zero fails
// with [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) cmdHPExpire(key string, ttl time.Duration, cond HExpireCondition, fields ...string) cmd[[]HExpireCode] {
	if ttl < 0 || (ttl > 0 && ttl < time.Millisecond) {
		return invalidCmd[[]HExpireCode](specHPEXPIRE, "ttl must be zero or at least 1ms")
	}
	return hexpireCmd(c, specHPEXPIRE, key, ttl.Milliseconds(), cond, fields)
}

// HExpireAt makes fields of the hash at key expire at tm, truncated to
// the second, where cond holds (HEXPIREAT, in Unix seconds), and returns
// the outcome for each field in order; a time in the past deletes them.
// No fields, the zero time, a time before the Unix epoch or an undefined
// condition fail with [ErrInvalidArgument]. Its retry category is
// WriteAccumulating, the catalog's.
func (c *Client) cmdHExpireAt(key string, tm time.Time, cond HExpireCondition, fields ...string) cmd[[]HExpireCode] {
	if tm.IsZero() || tm.Unix() < 0 {
		return invalidCmd[[]HExpireCode](specHEXPIREAT, "time must be after the Unix epoch")
	}
	return hexpireCmd(c, specHEXPIREAT, key, tm.Unix(), cond, fields)
}

// HPExpireAt is [Client.HExpireAt] in milliseconds (HPEXPIREAT). Its
// retry category is WriteAccumulating.
func (c *Client) cmdHPExpireAt(key string, tm time.Time, cond HExpireCondition, fields ...string) cmd[[]HExpireCode] {
	if tm.IsZero() || tm.UnixMilli() < 0 {
		return invalidCmd[[]HExpireCode](specHPEXPIREAT, "time must be after the Unix epoch")
	}
	return hexpireCmd(c, specHPEXPIREAT, key, tm.UnixMilli(), cond, fields)
}

// httlOf converts HTTL's and HPTTL's per-field integers, keeping -2 and
// -1 as [TTLMissing] and [TTLPersistent].
func httlOf(unit time.Duration) func(resp.Value) ([]time.Duration, error) {
	return func(v resp.Value) ([]time.Duration, error) {
		ns, err := Reply{v: v}.Int64s()
		if err != nil || ns == nil {
			return nil, err
		}
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = ttlResult(n, unit)
		}
		return out, nil
	}
}

// The HTTL converters, made once.
var (
	httlSeconds = httlOf(time.Second)
	httlMillis  = httlOf(time.Millisecond)
)

// HTTL returns the remaining time to live of fields of the hash at key
// in whole seconds, one per field in order (HTTL; Redis 7.4 or later):
// [TTLMissing] for a field (or key) that does not exist and
// [TTLPersistent] for a field without an expiry, as [Client.TTL] does
// for keys. No fields fails with [ErrInvalidArgument]. Its retry
// category is ReadOnly.
func (c *Client) cmdHTTL(key string, fields ...string) cmd[[]time.Duration] {
	return fieldsCmd(c, specHTTL, key, fields, httlSeconds)
}

// HPTTL is [Client.HTTL] in milliseconds (HPTTL), with the same
// [TTLMissing] and [TTLPersistent]. Its retry category is ReadOnly.
func (c *Client) cmdHPTTL(key string, fields ...string) cmd[[]time.Duration] {
	return fieldsCmd(c, specHPTTL, key, fields, httlMillis)
}

// HExpireTime returns the Unix time in seconds at which each of fields
// of the hash at key expires, in order (HEXPIRETIME; Redis 7.4 or
// later), or [HExpireTimeNoField] for a field (or key) that does not
// exist and [HExpireTimeNone] for a field without an expiry: convert the
// others with [time.Unix]. No fields fails with [ErrInvalidArgument]. Its
// retry category is ReadOnly.
func (c *Client) cmdHExpireTime(key string, fields ...string) cmd[[]int64] {
	return fieldsCmd(c, specHEXPIRETIME, key, fields, int64sOf)
}

// HPExpireTime is [Client.HExpireTime] in Unix milliseconds
// (HPEXPIRETIME; convert with [time.UnixMilli]), with the same special
// values. Its retry category is ReadOnly.
func (c *Client) cmdHPExpireTime(key string, fields ...string) cmd[[]int64] {
	return fieldsCmd(c, specHPEXPIRETIME, key, fields, int64sOf)
}

func int64sOf(v resp.Value) ([]int64, error) { return Reply{v: v}.Int64s() }

// HPersist removes the expiry of fields of the hash at key and returns
// the outcome for each field in order (HPERSIST; Redis 7.4 or later). No
// fields fails with [ErrInvalidArgument]. Its retry category is
// WriteAccumulating, the catalog's: a resend reports [HPersistNoExpiry]
// for an expiry the first attempt removed.
func (c *Client) cmdHPersist(key string, fields ...string) cmd[[]HPersistCode] {
	return fieldsCmd(c, specHPERSIST, key, fields, codesOf[HPersistCode])
}

// HGetDel returns the values of fields of the hash at key and deletes
// the fields (HGETDEL; Redis 8.0 or later), deleting the key when no
// field is left. No fields fails with [ErrInvalidArgument]. Its retry
// category is WriteAccumulating, the catalog's: a resend finds the
// fields gone, so the values the first attempt read are lost.
func (c *Client) cmdHGetDel(key string, fields ...string) cmd[FieldValues] {
	return fieldsCmd(c, specHGETDEL, key, fields, fieldValuesOf(len(fields)))
}

// HGetExOptions are HGETEX's options: at most one may be set. The zero
// value leaves the fields' expiry unchanged. A call only reads it and keeps
// no reference to it, so one value may serve concurrent calls while nobody
// changes it.
type HGetExOptions struct {
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX, truncated to the millisecond. Must be at least 1ms
	// when set.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT, truncated to the millisecond. Must be after the
	// Unix epoch when set.
	ExpireAt time.Time
	// Persist removes the expiry (PERSIST).
	Persist bool
}

// HGetEx returns the values of fields of the hash at key and changes
// their expiry as opt says (HGETEX; Redis 8.0 or later). No fields or
// contradictory options (more than one set, a TTL below 1ms, an ExpireAt
// not after the epoch) fail with [ErrInvalidArgument] before anything is
// sent. Its retry category is WriteAccumulating, the catalog's: a resent
// relative TTL restarts the countdown.
func (c *Client) cmdHGetEx(key string, opt HGetExOptions, fields ...string) cmd[FieldValues] {
	if len(fields) == 0 {
		return invalidCmd[FieldValues](specHGETEX, "no fields")
	}
	extra, bad := expiryWords(opt.TTL, opt.ExpireAt, opt.Persist, "Persist")
	if bad != "" {
		return invalidCmd[FieldValues](specHGETEX, bad)
	}
	f := c.fieldsFrame("HGETEX", key, extra, len(fields))
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.Persist {
		arg(f, "PERSIST")
	}
	argFields(f, fields)
	return typedCmd(f, specHGETEX, wire.WantValue, fieldValuesOf(len(fields)))
}

// HSetExOptions are HSETEX's options. The zero value sets the fields and
// clears their expiry, as HSET does. A call only reads it and keeps no
// reference to it, so one value may serve concurrent calls while nobody
// changes it.
type HSetExOptions struct {
	// Condition sets the fields only if none exists ([SetIfNotExists],
	// FNX) or only if all exist ([SetIfExists], FXX).
	Condition SetCondition
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX, truncated to the millisecond. Must be at least 1ms
	// when set.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT, truncated to the millisecond. Must be after the
	// Unix epoch when set.
	ExpireAt time.Time
	// KeepTTL keeps the fields' current expiry (KEEPTTL). At most one of
	// TTL, ExpireAt and KeepTTL may be set.
	KeepTTL bool
}

// HSetEx sets fields of the hash at key, with an expiry as opt says
// (HSETEX; Redis 8.0 or later); pairs alternate fields and values. It
// reports whether it set them: all are set, or none when opt.Condition
// did not hold. No pairs, an odd count, an undefined condition or
// contradictory options fail with [ErrInvalidArgument] before anything
// is sent. Its retry category is WriteAccumulating, the catalog's: a
// resent condition re-checks fields the first attempt set.
func (c *Client) cmdHSetEx(key string, opt HSetExOptions, pairs ...string) cmd[bool] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return invalidCmd[bool](specHSETEX, "want field-value pairs")
	}
	if opt.Condition > SetIfExists {
		return invalidCmd[bool](specHSETEX, "undefined condition")
	}
	extra, bad := expiryWords(opt.TTL, opt.ExpireAt, opt.KeepTTL, "KeepTTL")
	if bad != "" {
		return invalidCmd[bool](specHSETEX, bad)
	}
	if opt.Condition != SetAlways {
		extra++
	}
	f := c.newFrame(4+extra+len(pairs), "HSETEX")
	arg(f, key)
	switch opt.Condition {
	case SetIfNotExists:
		arg(f, "FNX")
	case SetIfExists:
		arg(f, "FXX")
	}
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.KeepTTL {
		arg(f, "KEEPTTL")
	}
	arg(f, "FIELDS")
	argInt(f, int64(len(pairs)/2))
	for _, p := range pairs {
		arg(f, p)
	}
	return typedCmd(f, specHSETEX, wire.WantInt, flagOf)
}
