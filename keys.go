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
