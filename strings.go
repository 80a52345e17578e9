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
// when key does not exist it returns dst unchanged and [ErrNil]. With a dst
// of sufficient capacity it does not allocate.
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

// SetCondition restricts when SET writes.
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
// expiry, KeepTTL or Get keeps the conservative WriteAccumulating.
type SetOptions struct {
	// Condition is NX or XX.
	Condition SetCondition
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX. Must be positive when set.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT.
	ExpireAt time.Time
	// KeepTTL keeps the key's current expiry (KEEPTTL).
	KeepTTL bool
	// Get returns the previous value (GET).
	Get bool
}

// SetResult is the outcome of [Client.SetWithOptions].
type SetResult struct {
	// Written reports whether the value was written (false when the
	// condition did not hold).
	Written bool
	// Previous is the old value when SetOptions.Get was set and the key
	// existed; PreviousExists says whether it did.
	Previous       string
	PreviousExists bool
}

// SetWithOptions runs SET with options. Contradictory options (TTL with
// ExpireAt or KeepTTL, a non-positive TTL, an undefined condition) fail with
// [ErrInvalidArgument] before anything is sent.
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
	expiries := 0
	if opt.TTL != 0 {
		expiries++
		if opt.TTL < time.Millisecond {
			return nil, nil, errInvalid("SET", "TTL must be at least 1ms")
		}
	}
	if !opt.ExpireAt.IsZero() {
		expiries++
		if opt.ExpireAt.UnixMilli() <= 0 {
			return nil, nil, errInvalid("SET", "ExpireAt must be after the Unix epoch")
		}
	}
	if opt.KeepTTL {
		expiries++
	}
	if expiries > 1 {
		return nil, nil, errInvalid("SET", "TTL, ExpireAt and KeepTTL are mutually exclusive")
	}
	if opt.Condition > SetIfExists {
		return nil, nil, errInvalid("SET", "undefined condition")
	}
	n := 3
	if opt.Condition != SetAlways {
		n++
	}
	if expiries > 0 {
		n += 2
		if opt.KeepTTL {
			n--
		}
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
	if expiries == 0 && !opt.Get {
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
func setResult(v resp.Value, opt SetOptions) (SetResult, error) {

	var r SetResult
	if opt.Get {
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
	r.Written = !v.IsNull()
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
func (c *Client) Decr(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "DECR")
	arg(f, key)
	return c.doInt(ctx, f, specDECR)
}

// Append appends value to the string at key and returns the new length.
func (c *Client) Append(ctx context.Context, key, value string) (int64, error) {
	f := c.newFrame(3, "APPEND")
	arg(f, key)
	arg(f, value)
	return c.doInt(ctx, f, specAPPEND)
}

// StrLen returns the length of the string at key (0 when missing).
func (c *Client) StrLen(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "STRLEN")
	arg(f, key)
	return c.doInt(ctx, f, specSTRLEN)
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
	if v.Type.Aggregate() == false || len(v.Elems) != len(keys) {
		return nil, nil, unexpected("array of one value per key", v)
	}
	values, found = make([]string, len(keys)), make([]bool, len(keys))
	for i, e := range v.Elems {
		found[i] = !e.IsNull()
		values[i] = string(e.TextBytes())
	}
	return values, found, nil
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
func (c *Client) GetDel(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "GETDEL")
	arg(f, key)
	return c.doString(ctx, f, specGETDEL)
}

// GetRange returns the bytes start to end (inclusive; negative offsets
// count from the end) of the string at key (GETRANGE); "" when key does not
// exist or the range is empty. Its retry category is ReadOnly.
func (c *Client) GetRange(ctx context.Context, key string, start, end int64) (string, error) {
	return c.doString(ctx, c.rangeFrame(specGETRANGE, key, start, end), specGETRANGE)
}

// SetRange overwrites the string at key from offset with value (SETRANGE),
// padding with zero bytes as needed, and returns the new length. A
// negative offset fails with [ErrInvalidArgument]. Its retry category is
// WriteLastWins.
func (c *Client) SetRange(ctx context.Context, key string, offset int64, value string) (int64, error) {
	if offset < 0 {
		return 0, errInvalid("SETRANGE", "offset is negative")
	}
	f := c.newFrame(4, "SETRANGE")
	arg(f, key)
	argInt(f, offset)
	arg(f, value)
	return c.doInt(ctx, f, specSETRANGE)
}

// IncrByFloat adds delta to the number at key (INCRBYFLOAT), treating a
// missing key as 0, and returns the new value. A NaN or infinite delta
// fails with [ErrInvalidArgument]. Its retry category is
// WriteAccumulating.
func (c *Client) IncrByFloat(ctx context.Context, key string, delta float64) (float64, error) {
	if math.IsNaN(delta) || math.IsInf(delta, 0) {
		return 0, errInvalid("INCRBYFLOAT", "delta is NaN or infinite")
	}
	f := c.newFrame(3, "INCRBYFLOAT")
	arg(f, key)
	argFloat(f, delta)
	v, err := c.doValue(ctx, f, specINCRBYFLOAT)
	if err != nil {
		return 0, err
	}
	return toFloat64(v)
}

// DecrBy decrements the integer at key by delta (DECRBY) and returns the
// new value. Its retry category is WriteAccumulating.
func (c *Client) DecrBy(ctx context.Context, key string, delta int64) (int64, error) {
	f := c.newFrame(3, "DECRBY")
	arg(f, key)
	argInt(f, delta)
	return c.doInt(ctx, f, specDECRBY)
}

// MSetNX sets several keys only when none of them exists (MSETNX) and
// reports whether it set them; pairs alternate keys and values. No pairs
// or an odd count fails with [ErrInvalidArgument]. Its retry category is
// WriteChecked (a resend re-checks, so it may report false for a write the
// first attempt made).
func (c *Client) MSetNX(ctx context.Context, pairs ...string) (bool, error) {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return false, errInvalid("MSETNX", "want key-value pairs")
	}
	f := c.newFrame(1+len(pairs), "MSETNX")
	for _, p := range pairs {
		arg(f, p)
	}
	n, err := c.doInt(ctx, f, specMSETNX)
	return n == 1, err
}

// SetNX sets key to value only when key does not exist (SETNX) and reports
// whether it did. For an expiry as well, use [Client.SetWithOptions] with
// [SetIfNotExists]. Its retry category is WriteChecked (a resend re-checks,
// so it may report false for a write the first attempt made).
func (c *Client) SetNX(ctx context.Context, key, value string) (bool, error) {
	f := c.newFrame(3, "SETNX")
	arg(f, key)
	arg(f, value)
	n, err := c.doInt(ctx, f, specSETNX)
	return n == 1, err
}

// GetExOptions are GETEX's options: at most one of them may be set. The
// zero value leaves the expiry unchanged.
type GetExOptions struct {
	// TTL sets a relative expiry: EX when a whole number of seconds,
	// otherwise PX. Must be at least 1ms when set. Defaults to none.
	TTL time.Duration
	// ExpireAt sets an absolute expiry: EXAT when on a whole second,
	// otherwise PXAT. Must be after the Unix epoch when set. Defaults to
	// none.
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
func (c *Client) GetEx(ctx context.Context, key string, opt GetExOptions) (string, error) {
	set := 0
	if opt.TTL != 0 {
		set++
		if opt.TTL < time.Millisecond {
			return "", errInvalid("GETEX", "TTL must be at least 1ms")
		}
	}
	if !opt.ExpireAt.IsZero() {
		set++
		if opt.ExpireAt.UnixMilli() <= 0 {
			return "", errInvalid("GETEX", "ExpireAt must be after the Unix epoch")
		}
	}
	if opt.Persist {
		set++
	}
	if set > 1 {
		return "", errInvalid("GETEX", "TTL, ExpireAt and Persist are mutually exclusive")
	}
	n := 2
	switch {
	case opt.Persist:
		n++
	case set == 1:
		n += 2
	}
	f := c.newFrame(n, "GETEX")
	arg(f, key)
	if !argExpiry(f, opt.TTL, opt.ExpireAt) && opt.Persist {
		arg(f, "PERSIST")
	}
	return c.doString(ctx, f, specGETEX)
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
