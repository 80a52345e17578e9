package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
)

var (
	specPFADD   = specOf(catalog.HyperLogLog.PFADD())
	specPFCOUNT = specOf(catalog.HyperLogLog.PFCOUNT())
	specPFMERGE = specOf(catalog.HyperLogLog.PFMERGE())
)

// PFAdd adds elements to the HyperLogLog at key (PFADD), creating it when
// missing (also with no elements), and reports whether its estimate may
// have changed. Its retry category is WriteChecked: a resend changes
// nothing and reports false.
func (c *Client) cmdPFAdd(key string, elements ...string) cmd[bool] {
	f := c.newFrame(2+len(elements), "PFADD")
	arg(f, key)
	for _, e := range elements {
		arg(f, e)
	}
	return typedCmd(f, specPFADD, wire.WantInt, flagOf)
}

// PFCount returns the estimated number of distinct elements added to the
// HyperLogLogs at keys (PFCOUNT; of their union when there are several);
// a missing key counts as empty. No keys fails with [ErrInvalidArgument].
// On a Cluster client the keys must share a slot. Its retry category is
// ReadOnly.
func (c *Client) cmdPFCount(keys ...string) cmd[int64] { return keysCmd(c, specPFCOUNT, keys) }

// PFMerge merges the HyperLogLogs at sources into dest; see
// [Client.PFMerge].
//
// respire:client manual
func (c *Client) cmdPFMerge(dest string, sources ...string) cmd[struct{}] {
	f := c.newFrame(2+len(sources), "PFMERGE")
	arg(f, dest)
	for _, s := range sources {
		arg(f, s)
	}
	return typedCmd(f, specPFMERGE, wire.WantNone, statusOf)
}

// PFMerge stores at dest the union of dest and the HyperLogLogs at sources
// (PFMERGE), creating dest when missing. On a Cluster client dest and
// sources must share a slot. Its retry category is WriteAccumulating, the
// catalog's.
func (c *Client) PFMerge(ctx context.Context, dest string, sources ...string) error {
	_, err := call(ctx, c, c.cmdPFMerge(dest, sources...))
	return err
}
