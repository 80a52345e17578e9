package respire

import (
	"context"
	"time"

	"github.com/respire-go/respire/catalog"
)

var (
	specPING    = specOf(catalog.Conn.PING())
	specECHO    = specOf(catalog.Conn.ECHO())
	specDEL     = specOf(catalog.Generic.DEL())
	specEXISTS  = specOf(catalog.Generic.EXISTS())
	specEXPIRE  = specOf(catalog.Generic.EXPIRE())
	specPEXPIRE = specOf(catalog.Generic.PEXPIRE())
	specTTL     = specOf(catalog.Generic.TTL())
	specPTTL    = specOf(catalog.Generic.PTTL())

	specTYPE           = specOf(catalog.Generic.TYPE())
	specRENAME         = specOf(catalog.Generic.RENAME())
	specRENAMENX       = specOf(catalog.Generic.RENAMENX())
	specPERSIST        = specOf(catalog.Generic.PERSIST())
	specEXPIREAT       = specOf(catalog.Generic.EXPIREAT())
	specPEXPIREAT      = specOf(catalog.Generic.PEXPIREAT())
	specUNLINK         = specOf(catalog.Generic.UNLINK())
	specTOUCH          = specOf(catalog.Generic.TOUCH())
	specCOPY           = specOf(catalog.Generic.COPY())
	specOBJECTENCODING = specOf(catalog.Generic.OBJECT_ENCODING())
	specEXPIRETIME     = specOf(catalog.Generic.EXPIRETIME())
	specPEXPIRETIME    = specOf(catalog.Generic.PEXPIRETIME())
)

// Ping checks the connection (PING).
func (c *Client) Ping(ctx context.Context) error {
	return c.doStatus(ctx, c.newFrame(1, "PING"), specPING)
}

// Echo returns message as echoed by the server (ECHO).
func (c *Client) Echo(ctx context.Context, message string) (string, error) {
	f := c.newFrame(2, "ECHO")
	arg(f, message)
	return c.doString(ctx, f, specECHO)
}

// Del deletes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	if len(keys) == 0 {
		return 0, errInvalid("DEL", "no keys")
	}
	f := c.newFrame(1+len(keys), "DEL")
	for _, k := range keys {
		arg(f, k)
	}
	return c.doInt(ctx, f, specDEL)
}

// Exists returns how many of keys exist (a key named twice counts twice).
func (c *Client) Exists(ctx context.Context, keys ...string) (int64, error) {
	if len(keys) == 0 {
		return 0, errInvalid("EXISTS", "no keys")
	}
	f := c.newFrame(1+len(keys), "EXISTS")
	for _, k := range keys {
		arg(f, k)
	}
	return c.doInt(ctx, f, specEXISTS)
}

// Expire sets key's time to live in whole seconds (EXPIRE) and reports
// whether the key exists. ttl is truncated to seconds; a positive ttl
// below one second fails with [ErrInvalidArgument] (it would be sent as 0,
// which deletes the key: use [Client.PExpire]). A ttl of 0 or less deletes
// the key, as in Redis.
func (c *Client) Expire(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl > 0 && ttl < time.Second {
		return false, errInvalid("EXPIRE", "ttl below 1s would delete the key (use PExpire)")
	}
	f := c.newFrame(3, "EXPIRE")
	arg(f, key)
	argInt(f, int64(ttl/time.Second))
	n, err := c.doInt(ctx, f, specEXPIRE)
	return n == 1, err
}

// PExpire sets key's time to live in milliseconds (PEXPIRE) and reports
// whether the key exists. ttl is truncated to milliseconds; a positive ttl
// below one millisecond fails with [ErrInvalidArgument] (it would delete
// the key). A ttl of 0 or less deletes the key, as in Redis.
func (c *Client) PExpire(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl > 0 && ttl < time.Millisecond {
		return false, errInvalid("PEXPIRE", "ttl below 1ms would delete the key")
	}
	f := c.newFrame(3, "PEXPIRE")
	arg(f, key)
	argInt(f, ttl.Milliseconds())
	n, err := c.doInt(ctx, f, specPEXPIRE)
	return n == 1, err
}

// Special results of [Client.TTL] and [Client.PTTL].
const (
	// TTLMissing means the key does not exist.
	TTLMissing time.Duration = -2
	// TTLPersistent means the key has no expiry.
	TTLPersistent time.Duration = -1
)

// TTL returns key's remaining time to live in whole seconds, or
// [TTLMissing] or [TTLPersistent].
func (c *Client) TTL(ctx context.Context, key string) (time.Duration, error) {
	f := c.newFrame(2, "TTL")
	arg(f, key)
	n, err := c.doInt(ctx, f, specTTL)
	return ttlResult(n, time.Second), err
}

// PTTL returns key's remaining time to live in milliseconds, or
// [TTLMissing] or [TTLPersistent].
func (c *Client) PTTL(ctx context.Context, key string) (time.Duration, error) {
	f := c.newFrame(2, "PTTL")
	arg(f, key)
	n, err := c.doInt(ctx, f, specPTTL)
	return ttlResult(n, time.Millisecond), err
}

func ttlResult(n int64, unit time.Duration) time.Duration {
	if n < 0 {
		return time.Duration(n)
	}
	return time.Duration(n) * unit
}

// Type returns the type of the value at key (TYPE): "string", "list",
// "set", "zset", "hash", "stream" (or a module type's name), or "none"
// when key does not exist. Its retry category is ReadOnly.
func (c *Client) Type(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "TYPE")
	arg(f, key)
	return c.doString(ctx, f, specTYPE)
}

// Rename renames key to newKey (RENAME), overwriting newKey. A missing key
// is a [*ServerError] ("no such key"). Its retry category is
// WriteAccumulating: a resend after a rename that took effect fails.
func (c *Client) Rename(ctx context.Context, key, newKey string) error {
	f := c.newFrame(3, "RENAME")
	arg(f, key)
	arg(f, newKey)
	return c.doStatus(ctx, f, specRENAME)
}

// RenameNX renames key to newKey only when newKey does not exist
// (RENAMENX) and reports whether it did. A missing key is a
// [*ServerError]. Its retry category is WriteAccumulating.
func (c *Client) RenameNX(ctx context.Context, key, newKey string) (bool, error) {
	f := c.newFrame(3, "RENAMENX")
	arg(f, key)
	arg(f, newKey)
	n, err := c.doInt(ctx, f, specRENAMENX)
	return n == 1, err
}

// Persist removes key's expiry (PERSIST) and reports whether it had one
// (false also when key does not exist). Its retry category is
// WriteAccumulating.
func (c *Client) Persist(ctx context.Context, key string) (bool, error) {
	f := c.newFrame(2, "PERSIST")
	arg(f, key)
	n, err := c.doInt(ctx, f, specPERSIST)
	return n == 1, err
}

// ExpireAt makes key expire at tm (EXPIREAT, in Unix seconds) and reports
// whether the key exists. tm is truncated to the second (use
// [Client.PExpireAt] for milliseconds); a time in the past deletes the
// key, as in Redis. The zero time fails with [ErrInvalidArgument]. Its
// retry category is WriteAccumulating.
func (c *Client) ExpireAt(ctx context.Context, key string, tm time.Time) (bool, error) {
	if tm.IsZero() {
		return false, errInvalid("EXPIREAT", "zero time")
	}
	f := c.newFrame(3, "EXPIREAT")
	arg(f, key)
	argInt(f, tm.Unix())
	n, err := c.doInt(ctx, f, specEXPIREAT)
	return n == 1, err
}

// PExpireAt makes key expire at tm (PEXPIREAT, in Unix milliseconds) and
// reports whether the key exists. tm is truncated to the millisecond; a
// time in the past deletes the key, as in Redis. The zero time fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) PExpireAt(ctx context.Context, key string, tm time.Time) (bool, error) {
	if tm.IsZero() {
		return false, errInvalid("PEXPIREAT", "zero time")
	}
	f := c.newFrame(3, "PEXPIREAT")
	arg(f, key)
	argInt(f, tm.UnixMilli())
	n, err := c.doInt(ctx, f, specPEXPIREAT)
	return n == 1, err
}

// Unlink deletes keys like [Client.Del], reclaiming their memory in the
// background (UNLINK), and returns how many existed. No keys fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) Unlink(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, specUNLINK, keys)
}

// Touch updates the last access time of keys (TOUCH) and returns how many
// exist. No keys fails with [ErrInvalidArgument]. Its retry category is
// ReadOnly.
func (c *Client) Touch(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, specTOUCH, keys)
}

// keysInt sends "NAME keys..." and returns its integer reply.
func (c *Client) keysInt(ctx context.Context, s *spec, keys []string) (int64, error) {
	if len(keys) == 0 {
		return 0, errInvalid(s.name, "no keys")
	}
	f := c.newFrame(1+len(keys), s.name)
	for _, k := range keys {
		arg(f, k)
	}
	return c.doInt(ctx, f, s)
}

// Copy copies the value at src to dst (COPY; Redis 6.2 or later), replacing
// an existing dst only when replace is set (REPLACE), and reports whether
// it copied. Its retry category is WriteAccumulating.
func (c *Client) Copy(ctx context.Context, src, dst string, replace bool) (bool, error) {
	n := 3
	if replace {
		n++
	}
	f := c.newFrame(n, "COPY")
	arg(f, src)
	arg(f, dst)
	if replace {
		arg(f, "REPLACE")
	}
	r, err := c.doInt(ctx, f, specCOPY)
	return r == 1, err
}

// ObjectEncoding returns the internal encoding of the value at key (OBJECT
// ENCODING), such as "int", "embstr", "listpack" or "hashtable", or
// [ErrNil] when key does not exist. Its retry category is ReadOnly.
func (c *Client) ObjectEncoding(ctx context.Context, key string) (string, error) {
	f := c.newFrame(3, "OBJECT")
	arg(f, "ENCODING")
	arg(f, key)
	return c.doString(ctx, f, specOBJECTENCODING)
}

// ExpireTime returns the time at which key expires (EXPIRETIME, in whole
// seconds; Redis 7.0 or later). It returns [ErrNil] when key does not
// exist (Redis's -2) and the zero time with no error when key has no
// expiry (Redis's -1): check with [time.Time.IsZero]. Its retry category
// is ReadOnly.
func (c *Client) ExpireTime(ctx context.Context, key string) (time.Time, error) {
	f := c.newFrame(2, "EXPIRETIME")
	arg(f, key)
	n, err := c.doInt(ctx, f, specEXPIRETIME)
	return expireTimeResult(n, err, time.Unix)
}

// PExpireTime is [Client.ExpireTime] in milliseconds (PEXPIRETIME): it
// returns [ErrNil] when key does not exist and the zero time when it has
// no expiry. Its retry category is ReadOnly.
func (c *Client) PExpireTime(ctx context.Context, key string) (time.Time, error) {
	f := c.newFrame(2, "PEXPIRETIME")
	arg(f, key)
	n, err := c.doInt(ctx, f, specPEXPIRETIME)
	return expireTimeResult(n, err, func(ms, _ int64) time.Time { return time.UnixMilli(ms) })
}

// expireTimeResult maps EXPIRETIME's -2 to ErrNil and -1 to the zero time.
func expireTimeResult(n int64, err error, at func(n, nsec int64) time.Time) (time.Time, error) {
	switch {
	case err != nil:
		return time.Time{}, err
	case n == -2:
		return time.Time{}, ErrNil
	case n < 0:
		return time.Time{}, nil
	}
	return at(n, 0), nil
}
