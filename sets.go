package respire

import (
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specSADD        = specOf(catalog.Set.SADD())
	specSMEM        = specOf(catalog.Set.SMEMBERS())
	specSREM        = specOf(catalog.Set.SREM())
	specSCARD       = specOf(catalog.Set.SCARD())
	specSISMEMBER   = specOf(catalog.Set.SISMEMBER())
	specSMISMEMBER  = specOf(catalog.Set.SMISMEMBER())
	specSINTER      = specOf(catalog.Set.SINTER())
	specSUNION      = specOf(catalog.Set.SUNION())
	specSDIFF       = specOf(catalog.Set.SDIFF())
	specSPOP        = specOf(catalog.Set.SPOP())
	specSRANDMEMBER = specOf(catalog.Set.SRANDMEMBER())
	specSMOVE       = specOf(catalog.Set.SMOVE())
	specSINTERSTORE = specOf(catalog.Set.SINTERSTORE())
	specSUNIONSTORE = specOf(catalog.Set.SUNIONSTORE())
	specSDIFFSTORE  = specOf(catalog.Set.SDIFFSTORE())
	specSINTERCARD  = specOf(catalog.Set.SINTERCARD())
)

// SAdd adds members to the set at key and returns how many were new. No
// members fails with [ErrInvalidArgument] before anything is sent. Its
// retry category is [WriteChecked]: a resend finds the members present,
// so it may count 0 new for members the first attempt added.
func (c *Client) cmdSAdd(key string, members ...string) cmd[int64] {
	return keyValuesCmd(c, specSADD, key, members, "members")
}

// SMembers returns every member of the set at key, in no particular order
// (empty when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdSMembers(key string) cmd[[]string] {
	return keyArgsCmd(c, specSMEM, key, nil, strsOf)
}

// SRem removes members from the set at key and returns how many were
// members, as an int64. No members fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdSRem(key string, members ...string) cmd[int64] {
	return keyValuesCmd(c, specSREM, key, members, "members")
}

// SCard returns the number of members of the set at key as an int64 (0
// when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) cmdSCard(key string) cmd[int64] {
	return keyIntCmd(c, specSCARD, key)
}

// SIsMember reports whether member belongs to the set at key. Its retry
// category is [ReadOnly].
func (c *Client) cmdSIsMember(key, member string) cmd[bool] {
	f := c.newFrame(3, "SISMEMBER")
	arg(f, key)
	arg(f, member)
	return typedCmd(f, specSISMEMBER, wire.WantInt, flagOf)
}

// SMIsMember reports, for each of members in order, whether it belongs to
// the set at key, as a []bool. No members fails with [ErrInvalidArgument]
// before anything is sent. Its retry category is [ReadOnly].
func (c *Client) cmdSMIsMember(key string, members ...string) cmd[[]bool] {
	if len(members) == 0 {
		return invalidCmd[[]bool](specSMISMEMBER, "no members")
	}
	f := c.newFrame(2+len(members), "SMISMEMBER")
	arg(f, key)
	for _, m := range members {
		arg(f, m)
	}
	// The converter knows how many flags to expect: a reply of another
	// length is unexpected, not silently short.
	n := len(members)
	return typedCmd(f, specSMISMEMBER, wire.WantValue, func(v resp.Value) ([]bool, error) { return flagsOf(v, n) })
}

// flagsOf converts an array of n flags (SMISMEMBER's reply) to a []bool.
func flagsOf(v resp.Value, n int) ([]bool, error) {
	if !v.Type.Aggregate() || len(v.Elems) != n {
		return nil, unexpected("array of one flag per member", v)
	}
	out := make([]bool, n)
	for i, e := range v.Elems {
		var err error
		if out[i], err = flagOf(e); err != nil {
			return nil, atElement(i, err)
		}
	}
	return out, nil
}

// SInter returns the members of the intersection of the sets at keys as
// a []string, in no particular order. No keys fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly].
func (c *Client) cmdSInter(keys ...string) cmd[[]string] {
	return keysStringsCmd(c, specSINTER, keys)
}

// SUnion returns the members of the union of the sets at keys as a
// []string, in no particular order. No keys fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly].
func (c *Client) cmdSUnion(keys ...string) cmd[[]string] {
	return keysStringsCmd(c, specSUNION, keys)
}

// SDiff returns the members of the set at keys[0] that are in none of
// the sets at the other keys, as a []string in no particular order. No
// keys fails with [ErrInvalidArgument] before anything is sent. Its retry
// category is [ReadOnly].
func (c *Client) cmdSDiff(keys ...string) cmd[[]string] {
	return keysStringsCmd(c, specSDIFF, keys)
}

// SInterCard returns the number of members of the intersection of the
// sets at keys as an int64, without sending the members. With limit > 0
// the server stops counting at limit (and returns limit); limit 0 counts
// them all. No keys or a negative limit fails with [ErrInvalidArgument]
// before anything is sent. On a Cluster client the keys must share a
// slot. Its retry category is [ReadOnly].
func (c *Client) cmdSInterCard(limit int64, keys ...string) cmd[int64] {
	return interCardCmd(c, specSINTERCARD, limit, keys)
}

// SPop removes and returns a random member of the set at key, or [ErrNil]
// when the set is empty or missing. Its retry category is
// [WriteAccumulating]: a resend pops another member.
func (c *Client) cmdSPop(key string) cmd[string] {
	return keyStringCmd(c, specSPOP, key)
}

// SRandMember returns random members of the set at key as a []string
// (SRANDMEMBER key count): with a positive count, up to count distinct
// members; with a negative count, exactly -count members that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is [ReadOnly].
func (c *Client) cmdSRandMember(key string, count int64) cmd[[]string] {
	f := c.newFrame(3, "SRANDMEMBER")
	arg(f, key)
	argInt(f, count)
	return typedCmd(f, specSRANDMEMBER, wire.WantValue, strsOf)
}

// SMove moves member from the set at src to the set at dst and reports
// whether it was a member of src (false: nothing was done). Its retry
// category is [WriteAccumulating].
func (c *Client) cmdSMove(src, dst, member string) cmd[bool] {
	f := c.newFrame(4, "SMOVE")
	arg(f, src)
	arg(f, dst)
	arg(f, member)
	return typedCmd(f, specSMOVE, wire.WantInt, flagOf)
}

// SInterStore stores the intersection of the sets at keys in dst,
// replacing it (an empty result deletes dst), and returns the size of the
// result as an int64. No keys fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) cmdSInterStore(dst string, keys ...string) cmd[int64] {
	return keyValuesCmd(c, specSINTERSTORE, dst, keys, "keys")
}

// SUnionStore stores the union of the sets at keys in dst, replacing it
// (an empty result deletes dst), and returns the size of the result as an
// int64. No keys fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating].
func (c *Client) cmdSUnionStore(dst string, keys ...string) cmd[int64] {
	return keyValuesCmd(c, specSUNIONSTORE, dst, keys, "keys")
}

// SDiffStore stores the difference of the sets at keys (as [Client.SDiff]
// computes it) in dst, replacing it (an empty result deletes dst), and
// returns the size of the result as an int64. No keys fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating].
func (c *Client) cmdSDiffStore(dst string, keys ...string) cmd[int64] {
	return keyValuesCmd(c, specSDIFFSTORE, dst, keys, "keys")
}

// keysStringsCmd defines "NAME keys..." with an array reply of strings.
// No keys is refused.
func keysStringsCmd(c *Client, s *spec, keys []string) cmd[[]string] {
	if len(keys) == 0 {
		return invalidCmd[[]string](s, "no keys")
	}
	f := c.newFrame(1+len(keys), s.name)
	for _, k := range keys {
		arg(f, k)
	}
	return typedCmd(f, s, wire.WantValue, strsOf)
}

// flagOf converts an integer 0 or 1, or a RESP3 boolean, to a bool.
func flagOf(v resp.Value) (bool, error) {
	switch {
	case v.Type == resp.Boolean:
		return v.Int != 0, nil
	case v.Type == resp.Integer && (v.Int == 0 || v.Int == 1):
		return v.Int == 1, nil
	case v.Type == resp.Integer:
		return false, badValue("boolean", v, "not 0 or 1")
	case v.Type == resp.Null || v.Type == 0:
		return false, ErrNil
	}
	return false, unexpected("integer 0 or 1", v)
}

// interCardCmd defines SINTERCARD and ZINTERCARD: "NAME numkeys keys...
// [LIMIT limit]", limit 0 meaning none.
func interCardCmd(c *Client, s *spec, limit int64, keys []string) cmd[int64] {
	switch {
	case len(keys) == 0:
		return invalidCmd[int64](s, "no keys")
	case limit < 0:
		return invalidCmd[int64](s, "negative limit")
	}
	n := 2 + len(keys)
	if limit > 0 {
		n += 2
	}
	f := c.newFrame(n, s.name)
	argInt(f, int64(len(keys)))
	for _, k := range keys {
		arg(f, k)
	}
	if limit > 0 {
		arg(f, "LIMIT")
		argInt(f, limit)
	}
	return typedCmd(f, s, wire.WantInt, intOf)
}
