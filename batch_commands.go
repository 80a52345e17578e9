package respire

import (
	"strconv"
	"time"

	"github.com/respire-go/respire/resp"
)

// Typed commands queued on a Batch or a transaction. Each carries the
// category its Client method has; its Future converts the member's reply
// as that method does.

// typed queues the command of s (with s's category) with args.
func (b *Batch) typed(s *spec, args ...string) *member {
	return b.queue(s.desc.WithRetryCategory(s.cat), args)
}

// invalid queues a member that failed validation: Execute then sends
// nothing and returns err.
func (b *Batch) invalid(err error) *member {
	m := &member{err: err, done: true}
	if b.err == nil {
		b.err = err
	}
	b.members = append(b.members, m)
	return m
}

func strOf(v resp.Value) (string, error) { return Reply{v: v}.String() }

func intOf(v resp.Value) (int64, error) {
	if v.IsNull() {
		return 0, ErrNil
	}
	return toInt64(v)
}

func boolOf(v resp.Value) (bool, error) {
	n, err := intOf(v)
	return n == 1, err
}

func strsOf(v resp.Value) ([]string, error) { return toStrings(v) }

func mapOf(v resp.Value) (map[string]string, error) { return toStringMap(v) }

func ttlOf(unit time.Duration) func(resp.Value) (time.Duration, error) {
	return func(v resp.Value) (time.Duration, error) {
		n, err := intOf(v)
		return ttlResult(n, unit), err
	}
}

// Get queues GET; see [Client.Get].
func (b *Batch) Get(key string) *Future[string] {
	return &Future[string]{m: b.typed(specGET, key), conv: strOf}
}

// Set queues SET key value; see [Client.Set]. Its Future holds "OK".
func (b *Batch) Set(key, value string) *Future[string] {
	return &Future[string]{m: b.typed(specSETLastWins, key, value), conv: strOf}
}

// Incr queues INCR; see [Client.Incr].
func (b *Batch) Incr(key string) *Future[int64] {
	return &Future[int64]{m: b.typed(specINCR, key), conv: intOf}
}

// IncrBy queues INCRBY; see [Client.IncrBy].
func (b *Batch) IncrBy(key string, delta int64) *Future[int64] {
	return &Future[int64]{m: b.typed(specINCRBY, key, strconv.FormatInt(delta, 10)), conv: intOf}
}

// Decr queues DECR; see [Client.Decr].
func (b *Batch) Decr(key string) *Future[int64] {
	return &Future[int64]{m: b.typed(specDECR, key), conv: intOf}
}

// Append queues APPEND; see [Client.Append].
func (b *Batch) Append(key, value string) *Future[int64] {
	return &Future[int64]{m: b.typed(specAPPEND, key, value), conv: intOf}
}

// StrLen queues STRLEN; see [Client.StrLen].
func (b *Batch) StrLen(key string) *Future[int64] {
	return &Future[int64]{m: b.typed(specSTRLEN, key), conv: intOf}
}

// Del queues DEL; see [Client.Del]. On a Cluster client its keys must
// share a slot (a batch member is never split).
func (b *Batch) Del(keys ...string) *Future[int64] {
	if len(keys) == 0 {
		return &Future[int64]{m: b.invalid(errInvalid("DEL", "no keys")), conv: intOf}
	}
	return &Future[int64]{m: b.typed(specDEL, keys...), conv: intOf}
}

// Exists queues EXISTS; see [Client.Exists].
func (b *Batch) Exists(keys ...string) *Future[int64] {
	if len(keys) == 0 {
		return &Future[int64]{m: b.invalid(errInvalid("EXISTS", "no keys")), conv: intOf}
	}
	return &Future[int64]{m: b.typed(specEXISTS, keys...), conv: intOf}
}

// Expire queues EXPIRE; see [Client.Expire].
func (b *Batch) Expire(key string, ttl time.Duration) *Future[bool] {
	if ttl > 0 && ttl < time.Second {
		return &Future[bool]{m: b.invalid(errInvalid("EXPIRE", "ttl below 1s would delete the key (use PExpire)")), conv: boolOf}
	}
	return &Future[bool]{m: b.typed(specEXPIRE, key, strconv.FormatInt(int64(ttl/time.Second), 10)), conv: boolOf}
}

// PExpire queues PEXPIRE; see [Client.PExpire].
func (b *Batch) PExpire(key string, ttl time.Duration) *Future[bool] {
	if ttl > 0 && ttl < time.Millisecond {
		return &Future[bool]{m: b.invalid(errInvalid("PEXPIRE", "ttl below 1ms would delete the key")), conv: boolOf}
	}
	return &Future[bool]{m: b.typed(specPEXPIRE, key, strconv.FormatInt(ttl.Milliseconds(), 10)), conv: boolOf}
}

// TTL queues TTL; see [Client.TTL].
func (b *Batch) TTL(key string) *Future[time.Duration] {
	return &Future[time.Duration]{m: b.typed(specTTL, key), conv: ttlOf(time.Second)}
}

// PTTL queues PTTL; see [Client.PTTL].
func (b *Batch) PTTL(key string) *Future[time.Duration] {
	return &Future[time.Duration]{m: b.typed(specPTTL, key), conv: ttlOf(time.Millisecond)}
}

// HSet queues HSET key field value...; see [Client.HSet].
func (b *Batch) HSet(key string, pairs ...string) *Future[int64] {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return &Future[int64]{m: b.invalid(errInvalid("HSET", "want field-value pairs")), conv: intOf}
	}
	return &Future[int64]{m: b.typed(specHSET, append([]string{key}, pairs...)...), conv: intOf}
}

// HGet queues HGET; see [Client.HGet].
func (b *Batch) HGet(key, field string) *Future[string] {
	return &Future[string]{m: b.typed(specHGET, key, field), conv: strOf}
}

// HGetAll queues HGETALL; see [Client.HGetAll].
func (b *Batch) HGetAll(key string) *Future[map[string]string] {
	return &Future[map[string]string]{m: b.typed(specHGETALL, key), conv: mapOf}
}

// HDel queues HDEL; see [Client.HDel].
func (b *Batch) HDel(key string, fields ...string) *Future[int64] {
	if len(fields) == 0 {
		return &Future[int64]{m: b.invalid(errInvalid("HDEL", "no fields")), conv: intOf}
	}
	return &Future[int64]{m: b.typed(specHDEL, append([]string{key}, fields...)...), conv: intOf}
}

// LPush queues LPUSH; see [Client.LPush].
func (b *Batch) LPush(key string, values ...string) *Future[int64] {
	return b.keyValues(specLPUSH, key, values, "values")
}

// RPush queues RPUSH; see [Client.RPush].
func (b *Batch) RPush(key string, values ...string) *Future[int64] {
	return b.keyValues(specRPUSH, key, values, "values")
}

// SAdd queues SADD; see [Client.SAdd].
func (b *Batch) SAdd(key string, members ...string) *Future[int64] {
	return b.keyValues(specSADD, key, members, "members")
}

func (b *Batch) keyValues(s *spec, key string, values []string, what string) *Future[int64] {
	if len(values) == 0 {
		return &Future[int64]{m: b.invalid(errInvalid(s.name, "no "+what)), conv: intOf}
	}
	return &Future[int64]{m: b.typed(s, append([]string{key}, values...)...), conv: intOf}
}

// LPop queues LPOP; see [Client.LPop].
func (b *Batch) LPop(key string) *Future[string] {
	return &Future[string]{m: b.typed(specLPOP, key), conv: strOf}
}

// LRange queues LRANGE; see [Client.LRange].
func (b *Batch) LRange(key string, start, stop int64) *Future[[]string] {
	return &Future[[]string]{m: b.typed(specLRANGE, key, strconv.FormatInt(start, 10), strconv.FormatInt(stop, 10)), conv: strsOf}
}

// SMembers queues SMEMBERS; see [Client.SMembers].
func (b *Batch) SMembers(key string) *Future[[]string] {
	return &Future[[]string]{m: b.typed(specSMEM, key), conv: strsOf}
}
