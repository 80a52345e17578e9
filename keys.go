package respire

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
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
	specDUMP           = specOf(catalog.Generic.DUMP())
	specRESTORE        = specOf(catalog.Generic.RESTORE())
	specKEYS           = specOf(catalog.Generic.KEYS())
	specMOVE           = specOf(catalog.Generic.MOVE())
	specOBJECTFREQ     = specOf(catalog.Generic.OBJECT_FREQ())
	specOBJECTIDLETIME = specOf(catalog.Generic.OBJECT_IDLETIME())
	specOBJECTREFCOUNT = specOf(catalog.Generic.OBJECT_REFCOUNT())
	specRANDOMKEY      = specOf(catalog.Generic.RANDOMKEY())
	specSORTRO         = specOf(catalog.Generic.SORT_RO())

	// Typed SORT without STORE only reads, as SORT_RO does: it refines the
	// catalog's ServerAdmin (SORT's @dangerous class) to ReadOnly. SORT
	// STORE keeps the catalog's category.
	specSORT     = specOf(catalog.Generic.SORT())
	specSORTRead = &spec{name: "SORT", cat: ReadOnly, desc: catalog.Generic.SORT()}
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

// Del deletes keys and returns how many existed. On a Cluster client
// keys in different slots are deleted by one DEL per slot; queued on a
// batch ([Batch.Del]) the keys must share a slot, since a batch member is
// never split.
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

// Del deletes keys; see [Client.Del], written by hand because a Cluster
// client splits it per slot.
//
// respire:client manual
func (c *Client) cmdDel(keys ...string) cmd[int64] { return keysCmd(c, specDEL, keys) }

// Exists returns how many of keys exist (a key named twice counts twice).
// On a Cluster client keys in different slots are counted by one EXISTS
// per slot; queued on a batch ([Batch.Exists]) they must share a slot.
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

// Exists counts keys; see [Client.Exists], written by hand because a
// Cluster client splits it per slot.
//
// respire:client manual
func (c *Client) cmdExists(keys ...string) cmd[int64] { return keysCmd(c, specEXISTS, keys) }

// keysCmd defines "NAME keys..." with at least one key, whose integer
// reply exactIntOf converts, as the Client methods of DEL, EXISTS, UNLINK
// and TOUCH read it.
func keysCmd(c *Client, s *spec, keys []string) cmd[int64] {
	if len(keys) == 0 {
		return invalidCmd[int64](s, "no keys")
	}
	f := c.newFrame(1+len(keys), s.name)
	for _, k := range keys {
		arg(f, k)
	}
	return typedCmd(f, s, wire.WantInt, exactIntOf)
}

// Expire sets key's time to live in whole seconds (EXPIRE) and reports
// whether the key exists. ttl is truncated to seconds; a positive ttl
// below one second fails with [ErrInvalidArgument] (it would be sent as 0,
// which deletes the key: use [Client.PExpire]). A ttl of 0 or less deletes
// the key, as in Redis.
func (c *Client) cmdExpire(key string, ttl time.Duration) cmd[bool] {
	if ttl > 0 && ttl < time.Second {
		return invalidCmd[bool](specEXPIRE, "ttl below 1s would delete the key (use PExpire)")
	}
	f := c.newFrame(3, "EXPIRE")
	arg(f, key)
	argInt(f, int64(ttl/time.Second))
	return typedCmd(f, specEXPIRE, wire.WantInt, flagOf)
}

// PExpire sets key's time to live in milliseconds (PEXPIRE) and reports
// whether the key exists. ttl is truncated to milliseconds; a positive ttl
// below one millisecond fails with [ErrInvalidArgument] (it would delete
// the key). A ttl of 0 or less deletes the key, as in Redis.
func (c *Client) cmdPExpire(key string, ttl time.Duration) cmd[bool] {
	if ttl > 0 && ttl < time.Millisecond {
		return invalidCmd[bool](specPEXPIRE, "ttl below 1ms would delete the key")
	}
	f := c.newFrame(3, "PEXPIRE")
	arg(f, key)
	argInt(f, ttl.Milliseconds())
	return typedCmd(f, specPEXPIRE, wire.WantInt, flagOf)
}

// Special results of [Client.TTL] and [Client.PTTL].
const (
	// TTLMissing means the key does not exist.
	TTLMissing time.Duration = -2
	// TTLPersistent means the key has no expiry.
	TTLPersistent time.Duration = -1
)

// TTL returns key's remaining time to live in whole seconds, or
// [TTLMissing] or [TTLPersistent]. A time to live beyond a
// [time.Duration]'s range (about 292 years) is the largest Duration.
func (c *Client) cmdTTL(key string) cmd[time.Duration] {
	f := c.newFrame(2, "TTL")
	arg(f, key)
	return typedCmd(f, specTTL, wire.WantInt, ttlSeconds)
}

// PTTL returns key's remaining time to live in milliseconds, or
// [TTLMissing] or [TTLPersistent]; beyond a [time.Duration]'s range,
// the largest Duration.
func (c *Client) cmdPTTL(key string) cmd[time.Duration] {
	f := c.newFrame(2, "PTTL")
	arg(f, key)
	return typedCmd(f, specPTTL, wire.WantInt, ttlMillis)
}

// ttlResult is n units, or n itself when negative (TTLMissing,
// TTLPersistent); a time beyond time.Duration's range (about 292 years)
// is the largest Duration.
func ttlResult(n int64, unit time.Duration) time.Duration {
	switch {
	case n < 0:
		return time.Duration(n)
	case n > math.MaxInt64/int64(unit):
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}

// Type returns the type of the value at key (TYPE): "string", "list",
// "set", "zset", "hash", "stream" (or a module type's name), or "none"
// when key does not exist. Its retry category is ReadOnly.
func (c *Client) cmdType(key string) cmd[string] {
	f := c.newFrame(2, "TYPE")
	arg(f, key)
	return stringCmd(f, specTYPE)
}

// Rename renames key to newKey; see [Client.Rename].
//
// respire:client manual
func (c *Client) cmdRename(key, newKey string) cmd[struct{}] {
	f := c.newFrame(3, "RENAME")
	arg(f, key)
	arg(f, newKey)
	return typedCmd(f, specRENAME, wire.WantNone, statusOf)
}

// Rename renames key to newKey (RENAME), overwriting newKey. A missing key
// is a [*ServerError] ("no such key"). Its retry category is
// WriteAccumulating: a resend after a rename that took effect fails.
func (c *Client) Rename(ctx context.Context, key, newKey string) error {
	_, err := call(ctx, c, c.cmdRename(key, newKey))
	return err
}

// RenameNX renames key to newKey only when newKey does not exist
// (RENAMENX) and reports whether it did. A missing key is a
// [*ServerError]. Its retry category is WriteAccumulating.
func (c *Client) cmdRenameNX(key, newKey string) cmd[bool] {
	f := c.newFrame(3, "RENAMENX")
	arg(f, key)
	arg(f, newKey)
	return typedCmd(f, specRENAMENX, wire.WantInt, flagOf)
}

// Persist removes key's expiry (PERSIST) and reports whether it had one
// (false also when key does not exist). Its retry category is
// WriteAccumulating.
func (c *Client) cmdPersist(key string) cmd[bool] {
	f := c.newFrame(2, "PERSIST")
	arg(f, key)
	return typedCmd(f, specPERSIST, wire.WantInt, flagOf)
}

// ExpireAt makes key expire at tm (EXPIREAT, in Unix seconds) and reports
// whether the key exists. tm is truncated to the second (use
// [Client.PExpireAt] for milliseconds); a time in the past deletes the
// key, as in Redis. The zero time fails with [ErrInvalidArgument]. Its
// retry category is WriteAccumulating.
func (c *Client) cmdExpireAt(key string, tm time.Time) cmd[bool] {
	if tm.IsZero() {
		return invalidCmd[bool](specEXPIREAT, "zero time")
	}
	f := c.newFrame(3, "EXPIREAT")
	arg(f, key)
	argInt(f, tm.Unix())
	return typedCmd(f, specEXPIREAT, wire.WantInt, flagOf)
}

// PExpireAt makes key expire at tm (PEXPIREAT, in Unix milliseconds) and
// reports whether the key exists. tm is truncated to the millisecond; a
// time in the past deletes the key, as in Redis. The zero time fails with
// [ErrInvalidArgument]. Its retry category is WriteAccumulating.
func (c *Client) cmdPExpireAt(key string, tm time.Time) cmd[bool] {
	if tm.IsZero() {
		return invalidCmd[bool](specPEXPIREAT, "zero time")
	}
	f := c.newFrame(3, "PEXPIREAT")
	arg(f, key)
	argInt(f, tm.UnixMilli())
	return typedCmd(f, specPEXPIREAT, wire.WantInt, flagOf)
}

// Unlink deletes keys like [Client.Del], reclaiming their memory in the
// background (UNLINK), and returns how many existed. No keys fails with
// [ErrInvalidArgument]. On a Cluster client keys in different slots are
// unlinked by one UNLINK per slot; queued on a batch ([Batch.Unlink]) they
// must share a slot. Its retry category is WriteAccumulating.
func (c *Client) Unlink(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, specUNLINK, keys)
}

// Unlink deletes keys; see [Client.Unlink], written by hand because a
// Cluster client splits it per slot.
//
// respire:client manual
func (c *Client) cmdUnlink(keys ...string) cmd[int64] { return keysCmd(c, specUNLINK, keys) }

// Touch updates the last access time of keys (TOUCH) and returns how many
// exist. No keys fails with [ErrInvalidArgument]. On a Cluster client keys
// in different slots are touched by one TOUCH per slot; queued on a batch
// ([Batch.Touch]) they must share a slot. Its retry category is ReadOnly.
func (c *Client) Touch(ctx context.Context, keys ...string) (int64, error) {
	return c.keysInt(ctx, specTOUCH, keys)
}

// Touch touches keys; see [Client.Touch], written by hand because a
// Cluster client splits it per slot.
//
// respire:client manual
func (c *Client) cmdTouch(keys ...string) cmd[int64] { return keysCmd(c, specTOUCH, keys) }

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
func (c *Client) cmdCopy(src, dst string, replace bool) cmd[bool] {
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
	return typedCmd(f, specCOPY, wire.WantInt, flagOf)
}

// ObjectEncoding returns the internal encoding of the value at key (OBJECT
// ENCODING), such as "int", "embstr", "listpack" or "hashtable", or
// [ErrNil] when key does not exist. Its retry category is ReadOnly.
func (c *Client) cmdObjectEncoding(key string) cmd[string] {
	return subCmd(c, specOBJECTENCODING, wire.WantBytes, strOf, key)
}

// ExpireTime returns the time at which key expires (EXPIRETIME, in whole
// seconds; Redis 7.0 or later). It returns [ErrNil] when key does not
// exist (Redis's -2) and the zero time with no error when key has no
// expiry (Redis's -1): check with [time.Time.IsZero]. Its retry category
// is ReadOnly.
func (c *Client) cmdExpireTime(key string) cmd[time.Time] {
	f := c.newFrame(2, "EXPIRETIME")
	arg(f, key)
	return typedCmd(f, specEXPIRETIME, wire.WantInt, expireTimeSeconds)
}

// PExpireTime is [Client.ExpireTime] in milliseconds (PEXPIRETIME): it
// returns [ErrNil] when key does not exist and the zero time when it has
// no expiry. Its retry category is ReadOnly.
func (c *Client) cmdPExpireTime(key string) cmd[time.Time] {
	f := c.newFrame(2, "PEXPIRETIME")
	arg(f, key)
	return typedCmd(f, specPEXPIRETIME, wire.WantInt, expireTimeMillis)
}

func expireTimeSeconds(v resp.Value) (time.Time, error) {
	n, err := convInt64(v)
	return expireTimeResult(n, err, time.Unix)
}

func expireTimeMillis(v resp.Value) (time.Time, error) {
	n, err := convInt64(v)
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

// Dump returns the value at key serialized in Redis's format (DUMP), for
// [Client.Restore], or [ErrNil] when key does not exist. The result holds
// binary data. Its retry category is ReadOnly.
func (c *Client) cmdDump(key string) cmd[string] {
	f := c.newFrame(2, "DUMP")
	arg(f, key)
	return stringCmd(f, specDUMP)
}

// RestoreOptions are RESTORE's options. The zero value creates a key
// without expiry, and fails when key exists. A call only reads it and keeps
// no reference to it, so one value may serve concurrent calls while nobody
// changes it.
type RestoreOptions struct {
	// TTL sets a relative expiry, truncated to milliseconds. Must be at
	// least 1ms when set. Defaults to none.
	TTL time.Duration
	// ExpireAt sets an absolute expiry, truncated to milliseconds
	// (ABSTTL). Must be after the Unix epoch when set; not with TTL.
	// Defaults to none.
	ExpireAt time.Time
	// Replace overwrites an existing key (REPLACE). Defaults to false.
	Replace bool
	// IdleTime sets the key's idle time, truncated to seconds (IDLETIME;
	// for an LRU maxmemory policy). Must not be negative; 0 sends none.
	IdleTime time.Duration
	// Freq, when HasFreq, sets the key's LFU access counter, 0 to 255
	// (FREQ; for an LFU maxmemory policy). Not with IdleTime.
	Freq    int
	HasFreq bool
}

// Restore creates key from data, a value serialized by [Client.Dump];
// see [Client.Restore].
//
// respire:client manual
func (c *Client) cmdRestore(key, data string, opt RestoreOptions) cmd[struct{}] {
	switch {
	case opt.TTL != 0 && opt.TTL < time.Millisecond:
		return invalidCmd[struct{}](specRESTORE, "TTL must be at least 1ms")
	case !opt.ExpireAt.IsZero() && opt.ExpireAt.UnixMilli() <= 0:
		return invalidCmd[struct{}](specRESTORE, "ExpireAt must be after the Unix epoch")
	case opt.TTL != 0 && !opt.ExpireAt.IsZero():
		return invalidCmd[struct{}](specRESTORE, "TTL and ExpireAt are mutually exclusive")
	case opt.IdleTime < 0:
		return invalidCmd[struct{}](specRESTORE, "IdleTime is negative")
	case opt.HasFreq && (opt.Freq < 0 || opt.Freq > 255):
		return invalidCmd[struct{}](specRESTORE, "Freq must be 0 to 255")
	case opt.HasFreq && opt.IdleTime != 0:
		return invalidCmd[struct{}](specRESTORE, "IdleTime and Freq are mutually exclusive")
	}
	idle := opt.IdleTime >= time.Second
	n := 4
	if !opt.ExpireAt.IsZero() {
		n++
	}
	if opt.Replace {
		n++
	}
	if idle {
		n += 2
	}
	if opt.HasFreq {
		n += 2
	}
	f := c.newFrame(n, "RESTORE")
	arg(f, key)
	switch {
	case !opt.ExpireAt.IsZero():
		argInt(f, opt.ExpireAt.UnixMilli())
	default:
		argInt(f, opt.TTL.Milliseconds())
	}
	arg(f, data)
	if opt.Replace {
		arg(f, "REPLACE")
	}
	if !opt.ExpireAt.IsZero() {
		arg(f, "ABSTTL")
	}
	if idle {
		arg(f, "IDLETIME")
		argInt(f, int64(opt.IdleTime/time.Second))
	}
	if opt.HasFreq {
		arg(f, "FREQ")
		argInt(f, int64(opt.Freq))
	}
	return typedCmd(f, specRESTORE, wire.WantNone, statusOf)
}

// Restore creates key from data, a value serialized by [Client.Dump]
// (RESTORE), with the expiry, idle time or frequency opt gives. An
// existing key is a [*ServerError] (BUSYKEY) unless opt.Replace is set.
// Contradictory options (TTL with ExpireAt, IdleTime with Freq, a TTL
// below 1ms, an ExpireAt not after the epoch, a negative IdleTime, a Freq
// out of range) fail with [ErrInvalidArgument] naming the field before
// anything is sent. Its retry category is ServerAdmin, the catalog's
// (RESTORE is @dangerous: it writes any payload it is given).
func (c *Client) Restore(ctx context.Context, key, data string, opt RestoreOptions) error {
	_, err := call(ctx, c, c.cmdRestore(key, data, opt))
	return err
}

// Keys returns the keys matching the glob-style pattern (KEYS), in no
// particular order. It scans the whole keyspace at once and blocks the
// server meanwhile: prefer [Client.Scan] outside of tests and tools. On a
// Cluster client it runs on every primary and concatenates their keys,
// which is why it has no Batch member (a batch member runs on one node).
// Its retry category is ReadOnly.
func (c *Client) Keys(ctx context.Context, pattern string) ([]string, error) {
	f := c.newFrame(2, "KEYS")
	arg(f, pattern)
	return call(ctx, c, typedCmd(f, specKEYS, wire.WantValue, strsOf))
}

// Move moves key to database db of the same server (MOVE) and reports
// whether it moved it (false when key does not exist, or db already holds
// it). A negative db fails with [ErrInvalidArgument]; a Cluster server has
// only database 0 and refuses MOVE. Its retry category is
// WriteAccumulating.
func (c *Client) cmdMove(key string, db int) cmd[bool] {
	if db < 0 {
		return invalidCmd[bool](specMOVE, "db is negative")
	}
	f := c.newFrame(3, "MOVE")
	arg(f, key)
	argInt(f, int64(db))
	return typedCmd(f, specMOVE, wire.WantInt, flagOf)
}

// ObjectFreq returns the logarithmic access frequency counter of the value
// at key (OBJECT FREQ), or [ErrNil] when key does not exist. The server
// answers only under an LFU maxmemory policy (else a [*ServerError]). Its
// retry category is ReadOnly.
func (c *Client) cmdObjectFreq(key string) cmd[int64] {
	return subCmd(c, specOBJECTFREQ, wire.WantInt, intOf, key)
}

// ObjectIdleTime returns how long the value at key has not been read or
// written (OBJECT IDLETIME), in whole seconds, or [ErrNil] when key does
// not exist. The server refuses it under an LFU maxmemory policy (a
// [*ServerError]). Its retry category is ReadOnly.
func (c *Client) cmdObjectIdleTime(key string) cmd[time.Duration] {
	return subCmd(c, specOBJECTIDLETIME, wire.WantInt, ttlSeconds, key)
}

// ObjectRefCount returns the reference count of the value at key (OBJECT
// REFCOUNT), or [ErrNil] when key does not exist. Its retry category is
// ReadOnly.
func (c *Client) cmdObjectRefCount(key string) cmd[int64] {
	return subCmd(c, specOBJECTREFCOUNT, wire.WantInt, intOf, key)
}

// RandomKey returns a random key of the database (RANDOMKEY), or [ErrNil]
// when it is empty. On a Cluster client, where each node answers from the
// keys of its own slots, it asks the primaries one at a time, in a random
// order, until one returns a key: [ErrNil] means that every primary
// answered it holds none; when none had a key and one failed, that
// failure is returned. Each shard that holds keys is equally likely to
// answer, whatever its number of keys, and the key is random within it. A Batch
// member, like every keyless member, runs on one node and returns a key
// of that node's only. Its retry category is ReadOnly.
func (c *Client) cmdRandomKey() cmd[string] {
	return stringCmd(c.newFrame(1, "RANDOMKEY"), specRANDOMKEY)
}

// SortOptions are the options of [Client.Sort], [Client.SortRO] and
// [Client.SortStore]. The zero value sorts the elements as numbers,
// ascending. A call only reads it and keeps no reference to it, so one value
// may serve concurrent calls while nobody changes it.
type SortOptions struct {
	// By sorts by the values of the keys this pattern names, its first
	// "*" replaced by each element (BY); "nosort" (any pattern without
	// "*") skips sorting. A Cluster server refuses a pattern with "*"
	// before Redis 7.4, which accepts one whose hash tag puts its keys
	// in the key's slot. Defaults to none: the elements themselves.
	By string
	// Offset skips that many sorted elements (LIMIT). Must not be
	// negative. Defaults to 0.
	Offset int64
	// Count returns at most that many elements (LIMIT); 0 or -1 means no
	// limit. Other negative values are invalid. Defaults to 0.
	Count int64
	// Get returns, for each element, the values the patterns name
	// instead of the element ("#" is the element itself), one per
	// pattern in order (GET); a missing value is "". A Cluster server
	// refuses GET before Redis 7.4, "#" included; 7.4 accepts patterns
	// whose hash tag puts their keys in the key's slot. Defaults to none.
	Get []string
	// Desc sorts in descending order (DESC). Defaults to ascending.
	Desc bool
	// Alpha sorts the elements as strings (ALPHA) instead of numbers.
	Alpha bool
}

// sortFrame validates opt and encodes name key with its options, and STORE
// dest when dest is not empty.
func (c *Client) sortFrame(s *spec, key string, opt SortOptions, dest string) (*wire.Frame, error) {
	switch {
	case opt.Offset < 0:
		return nil, errInvalid(s.name, "Offset is negative")
	case opt.Count < -1:
		return nil, errInvalid(s.name, "Count is negative (only -1 means no limit)")
	}
	limit := opt.Offset != 0 || opt.Count > 0
	n := 2 + 2*len(opt.Get)
	if opt.By != "" {
		n += 2
	}
	if limit {
		n += 3
	}
	if opt.Desc {
		n++
	}
	if opt.Alpha {
		n++
	}
	if dest != "" {
		n += 2
	}
	f := c.newFrame(n, s.desc.Name())
	arg(f, key)
	if opt.By != "" {
		arg(f, "BY")
		arg(f, opt.By)
	}
	if limit {
		count := opt.Count
		if count == 0 {
			count = -1
		}
		arg(f, "LIMIT")
		argInt(f, opt.Offset)
		argInt(f, count)
	}
	for _, g := range opt.Get {
		arg(f, "GET")
		arg(f, g)
	}
	if opt.Desc {
		arg(f, "DESC")
	}
	if opt.Alpha {
		arg(f, "ALPHA")
	}
	if dest != "" {
		arg(f, "STORE")
		arg(f, dest)
	}
	return f, nil
}

// Sort returns the elements of the list, set or sorted set at key sorted
// as opt says (SORT); empty when key does not exist. Invalid options (a
// negative Offset, a negative Count other than -1) fail with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// ReadOnly: without STORE, SORT only reads (the catalog's ServerAdmin
// covers SORT ... STORE, see [Client.SortStore]).
func (c *Client) cmdSort(key string, opt SortOptions) cmd[[]string] {
	f, err := c.sortFrame(specSORTRead, key, opt, "")
	if err != nil {
		return cmd[[]string]{s: specSORTRead, err: err}
	}
	return typedCmd(f, specSORTRead, wire.WantValue, strsOf)
}

// SortRO is [Client.Sort] as SORT_RO (Redis 7.0 or later), which a
// replica serves and which a read-only ACL user may run. Its retry
// category is ReadOnly.
func (c *Client) cmdSortRO(key string, opt SortOptions) cmd[[]string] {
	f, err := c.sortFrame(specSORTRO, key, opt, "")
	if err != nil {
		return cmd[[]string]{s: specSORTRO, err: err}
	}
	return typedCmd(f, specSORTRO, wire.WantValue, strsOf)
}

// SortStore sorts as [Client.Sort] does and stores the result as a list
// at dest, replacing it (SORT ... STORE), and returns the list's length.
// An empty dest fails with [ErrInvalidArgument]. Its retry category is
// ServerAdmin, the catalog's SORT.
func (c *Client) cmdSortStore(key, dest string, opt SortOptions) cmd[int64] {
	if dest == "" {
		return invalidCmd[int64](specSORT, "empty dest")
	}
	f, err := c.sortFrame(specSORT, key, opt, dest)
	if err != nil {
		return cmd[int64]{s: specSORT, err: err}
	}
	return typedCmd(f, specSORT, wire.WantInt, intOf)
}

// waitTimeout formats a WAIT or WAITAOF timeout in milliseconds: 0 waits
// until the count is reached; a negative timeout, or a positive one under
// a millisecond (which the server would read as 0, forever), is an
// [ErrInvalidArgument].
func waitTimeout(name string, timeout time.Duration) (string, error) {
	switch {
	case timeout < 0:
		return "", errInvalid(name, "negative timeout "+timeout.String())
	case timeout > 0 && timeout < time.Millisecond:
		return "", errInvalid(name, "timeout "+timeout.String()+" is under a millisecond (the server would wait forever)")
	}
	return strconv.FormatInt(timeout.Milliseconds(), 10), nil
}

// Wait blocks until numReplicas replicas have acknowledged every write
// sent earlier on this connection, or timeout passes (WAIT; 0 waits until
// they have), and returns how many replicas acknowledged them, which is
// less than numReplicas when timeout passed. WAIT counts the writes of the
// connection it runs on, which is why it is a method of a dedicated
// connection: write on conn, then Wait on conn. A negative numReplicas or
// timeout, or a positive timeout under a millisecond, fails with
// [ErrInvalidArgument] before anything is sent. Like every command on a
// Conn it is never resent.
func (conn *Conn) Wait(ctx context.Context, numReplicas int, timeout time.Duration) (int64, error) {
	if numReplicas < 0 {
		return 0, errInvalid("WAIT", "numReplicas is negative")
	}
	ms, err := waitTimeout("WAIT", timeout)
	if err != nil {
		return 0, err
	}
	r, err := conn.doRaw(ctx, catalog.Generic.WAIT(), []string{strconv.Itoa(numReplicas), ms})
	if err != nil {
		return 0, err
	}
	return r.Int64()
}

// WaitAOF blocks until every write sent earlier on this connection is in
// the append-only file of the primary (when numLocal is 1) and of
// numReplicas replicas, or timeout passes (WAITAOF; Redis 7.2 or later; 0
// waits until they are), and returns how many of each acknowledged them:
// local is 1 or 0, replicas a count. As with [Conn.Wait], it counts the
// writes of this connection. numLocal other than 0 or 1, a negative
// numReplicas or timeout, or a positive timeout under a millisecond fails
// with [ErrInvalidArgument] before anything is sent. It is never resent.
func (conn *Conn) WaitAOF(ctx context.Context, numLocal, numReplicas int, timeout time.Duration) (local, replicas int64, err error) {
	if numLocal != 0 && numLocal != 1 {
		return 0, 0, errInvalid("WAITAOF", "numLocal must be 0 or 1")
	}
	if numReplicas < 0 {
		return 0, 0, errInvalid("WAITAOF", "numReplicas is negative")
	}
	ms, err := waitTimeout("WAITAOF", timeout)
	if err != nil {
		return 0, 0, err
	}
	r, err := conn.doRaw(ctx, catalog.Generic.WAITAOF(), []string{strconv.Itoa(numLocal), strconv.Itoa(numReplicas), ms})
	if err != nil {
		return 0, 0, err
	}
	n, err := r.Int64s()
	if err != nil {
		return 0, 0, err
	}
	if len(n) != 2 {
		return 0, 0, unexpected("array of two counts", r.v)
	}
	return n[0], n[1], nil
}
