package respire

import (
	"context"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/resp"
)

var (
	specPUBLISH        = specOf(catalog.PubSub.PUBLISH())
	specSPUBLISH       = specOf(catalog.PubSub.SPUBLISH())
	specPUBSUBCHANNELS = specOf(catalog.PubSub.PUBSUB_CHANNELS())
	specPUBSUBNUMSUB   = specOf(catalog.PubSub.PUBSUB_NUMSUB())
)

// Publish posts message to channel and returns how many subscribers
// received it (on a cluster: of the node that received it). Its retry
// category is the catalog's, WriteAccumulating: a resend may deliver the
// message twice.
func (c *Client) Publish(ctx context.Context, channel, message string) (int64, error) {
	return c.keyArgsInt(ctx, specPUBLISH, channel, []string{message}, "message")
}

// SPublish posts message to the shard channel (Redis 7) and returns how
// many subscribers received it. Its retry category is WriteAccumulating,
// like Publish.
func (c *Client) SPublish(ctx context.Context, shardChannel, message string) (int64, error) {
	return c.keyArgsInt(ctx, specSPUBLISH, shardChannel, []string{message}, "message")
}

// PubSubChannels returns the channels with at least one subscriber whose
// names match the glob pattern ("" for all). Redis counts subscribers per
// node: on a Cluster client the answer is that of one node, the owner of
// slot 0, which is where this client's Subscribe and PSubscribe connect;
// subscribers connected to other nodes are not seen.
func (c *Client) PubSubChannels(ctx context.Context, pattern string) ([]string, error) {
	n := 2
	if pattern != "" {
		n++
	}
	f := c.newFrame(n, "PUBSUB")
	arg(f, "CHANNELS")
	if pattern != "" {
		arg(f, pattern)
	}
	return c.doStrings(ctx, f, specPUBSUBCHANNELS)
}

// PubSubNumSub returns the number of subscribers of each channel
// (pattern subscribers not counted); on a Cluster client, of one node, as
// for [Client.PubSubChannels]. No channel is an [ErrInvalidArgument] and
// nothing is sent.
func (c *Client) PubSubNumSub(ctx context.Context, channels ...string) (map[string]int64, error) {
	if len(channels) == 0 {
		return nil, errInvalid("PUBSUB NUMSUB", "no channels")
	}
	f := c.newFrame(2+len(channels), "PUBSUB")
	arg(f, "NUMSUB")
	for _, ch := range channels {
		arg(f, ch)
	}
	v, err := c.doValue(ctx, f, specPUBSUBNUMSUB)
	if err != nil {
		return nil, err
	}
	if (v.Type != resp.Array && v.Type != resp.Map) || len(v.Elems)%2 != 0 {
		return nil, unexpected("array of channel-count pairs", v)
	}
	out := make(map[string]int64, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		name := v.Elems[i]
		if name.Type.Aggregate() {
			return nil, unexpected("channel name", name)
		}
		n, err := convInt64(v.Elems[i+1])
		if err != nil {
			return nil, err
		}
		out[string(name.TextBytes())] = n
	}
	return out, nil
}
