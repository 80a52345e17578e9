package respire

import (
	"context"

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
)

// SAdd adds members to the set at key and returns how many were new.
func (c *Client) SAdd(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSADD, key, members, "members")
}

// SMembers returns every member of the set at key.
func (c *Client) SMembers(ctx context.Context, key string) ([]string, error) {
	f := c.newFrame(2, "SMEMBERS")
	arg(f, key)
	return c.doStrings(ctx, f, specSMEM)
}

// SRem removes members from the set at key and returns how many were
// members, as an int64. No members fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) SRem(ctx context.Context, key string, members ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSREM, key, members, "members")
}

// SCard returns the number of members of the set at key as an int64 (0
// when the key does not exist). Its retry category is [ReadOnly].
func (c *Client) SCard(ctx context.Context, key string) (int64, error) {
	f := c.newFrame(2, "SCARD")
	arg(f, key)
	return c.doInt(ctx, f, specSCARD)
}

// SIsMember reports whether member belongs to the set at key. Its retry
// category is [ReadOnly].
func (c *Client) SIsMember(ctx context.Context, key, member string) (bool, error) {
	f := c.newFrame(3, "SISMEMBER")
	arg(f, key)
	arg(f, member)
	return c.doBool(ctx, f, specSISMEMBER)
}

// SMIsMember reports, for each of members in order, whether it belongs to
// the set at key, as a []bool. No members fails with [ErrInvalidArgument]
// before anything is sent. Its retry category is [ReadOnly].
func (c *Client) SMIsMember(ctx context.Context, key string, members ...string) ([]bool, error) {
	if len(members) == 0 {
		return nil, errInvalid("SMISMEMBER", "no members")
	}
	f := c.newFrame(2+len(members), "SMISMEMBER")
	arg(f, key)
	for _, m := range members {
		arg(f, m)
	}
	v, err := c.doValue(ctx, f, specSMISMEMBER)
	if err != nil {
		return nil, err
	}
	if !v.Type.Aggregate() || len(v.Elems) != len(members) {
		return nil, unexpected("array of one flag per member", v)
	}
	out := make([]bool, len(members))
	for i, e := range v.Elems {
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
func (c *Client) SInter(ctx context.Context, keys ...string) ([]string, error) {
	return c.keysStrings(ctx, specSINTER, keys)
}

// SUnion returns the members of the union of the sets at keys as a
// []string, in no particular order. No keys fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [ReadOnly].
func (c *Client) SUnion(ctx context.Context, keys ...string) ([]string, error) {
	return c.keysStrings(ctx, specSUNION, keys)
}

// SDiff returns the members of the set at keys[0] that are in none of
// the sets at the other keys, as a []string in no particular order. No
// keys fails with [ErrInvalidArgument] before anything is sent. Its retry
// category is [ReadOnly].
func (c *Client) SDiff(ctx context.Context, keys ...string) ([]string, error) {
	return c.keysStrings(ctx, specSDIFF, keys)
}

// SPop removes and returns a random member of the set at key, or [ErrNil]
// when the set is empty or missing. Its retry category is
// [WriteAccumulating]: a resend pops another member.
func (c *Client) SPop(ctx context.Context, key string) (string, error) {
	f := c.newFrame(2, "SPOP")
	arg(f, key)
	return c.doString(ctx, f, specSPOP)
}

// SRandMember returns random members of the set at key as a []string
// (SRANDMEMBER key count): with a positive count, up to count distinct
// members; with a negative count, exactly -count members that may repeat.
// It is empty when the key does not exist or count is 0. Its retry
// category is [ReadOnly].
func (c *Client) SRandMember(ctx context.Context, key string, count int64) ([]string, error) {
	f := c.newFrame(3, "SRANDMEMBER")
	arg(f, key)
	argInt(f, count)
	return c.doStrings(ctx, f, specSRANDMEMBER)
}

// SMove moves member from the set at src to the set at dst and reports
// whether it was a member of src (false: nothing was done). Its retry
// category is [WriteAccumulating].
func (c *Client) SMove(ctx context.Context, src, dst, member string) (bool, error) {
	f := c.newFrame(4, "SMOVE")
	arg(f, src)
	arg(f, dst)
	arg(f, member)
	return c.doBool(ctx, f, specSMOVE)
}

// SInterStore stores the intersection of the sets at keys in dst,
// replacing it (an empty result deletes dst), and returns the size of the
// result as an int64. No keys fails with [ErrInvalidArgument] before
// anything is sent. Its retry category is [WriteAccumulating].
func (c *Client) SInterStore(ctx context.Context, dst string, keys ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSINTERSTORE, dst, keys, "keys")
}

// SUnionStore stores the union of the sets at keys in dst, replacing it
// (an empty result deletes dst), and returns the size of the result as an
// int64. No keys fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is [WriteAccumulating].
func (c *Client) SUnionStore(ctx context.Context, dst string, keys ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSUNIONSTORE, dst, keys, "keys")
}

// SDiffStore stores the difference of the sets at keys (as [Client.SDiff]
// computes it) in dst, replacing it (an empty result deletes dst), and
// returns the size of the result as an int64. No keys fails with
// [ErrInvalidArgument] before anything is sent. Its retry category is
// [WriteAccumulating].
func (c *Client) SDiffStore(ctx context.Context, dst string, keys ...string) (int64, error) {
	return c.keyArgsInt(ctx, specSDIFFSTORE, dst, keys, "keys")
}

// keysStrings sends "NAME keys..." and returns its array reply of
// strings. An empty keys fails with ErrInvalidArgument.
func (c *Client) keysStrings(ctx context.Context, s *spec, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, errInvalid(s.name, "no keys")
	}
	f := c.newFrame(1+len(keys), s.name)
	for _, k := range keys {
		arg(f, k)
	}
	return c.doStrings(ctx, f, s)
}

// doBool returns an integer reply 0 or 1 (as both protocols send
// SISMEMBER, HEXISTS, HSETNX and SMOVE) as a bool; any other integer is
// an unexpected reply.
func (c *Client) doBool(ctx context.Context, f *wire.Frame, s *spec) (bool, error) {
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return false, err
	}
	return flagOf(v)
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
