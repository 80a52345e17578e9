package respire

import (
	"context"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// The helpers below run a prepared frame and convert its reply, releasing
// the frame in every case.

func arg(f *wire.Frame, s string) { f.Buf = resp.AppendBulkString(f.Buf, s) }

func argInt(f *wire.Frame, n int64) { f.Buf = resp.AppendBulkInt(f.Buf, n) }

func argFloat(f *wire.Frame, x float64) { f.Buf = resp.AppendBulkFloat(f.Buf, x) }

// rangeFrame encodes "NAME key start stop" (LRANGE, ZRANGE, GETRANGE ...).
func (c *Client) rangeFrame(s *spec, key string, start, stop int64) *wire.Frame {
	f := c.newFrame(4, s.desc.Name())
	arg(f, key)
	argInt(f, start)
	argInt(f, stop)
	return f
}

// keyArgsInt sends "NAME key args..." and returns its integer reply. An
// empty args fails with ErrInvalidArgument naming what is missing.
func (c *Client) keyArgsInt(ctx context.Context, s *spec, key string, args []string, what string) (int64, error) {
	if len(args) == 0 {
		return 0, errInvalid(s.name, "no "+what)
	}
	f := c.newFrame(2+len(args), s.name)
	arg(f, key)
	for _, a := range args {
		arg(f, a)
	}
	return c.doInt(ctx, f, s)
}

// doInt returns an integer reply; null is ErrNil.
func (c *Client) doInt(ctx context.Context, f *wire.Frame, s *spec) (int64, error) {
	f.Want = wire.WantInt
	if err := c.exec(ctx, f, s); err != nil {
		return 0, err
	}
	n, null, odd := f.Int, f.Null, f.Value
	f.Release()
	switch {
	case odd.Type != 0:
		return 0, unexpected("integer", odd)
	case null:
		return 0, ErrNil
	}
	return n, nil
}

// doString returns a string reply; null is ErrNil. The reader makes the
// string from the reply's bytes, the only allocation.
func (c *Client) doString(ctx context.Context, f *wire.Frame, s *spec) (string, error) {
	f.Want = wire.WantString
	if err := c.exec(ctx, f, s); err != nil {
		return "", err
	}
	return frameString(f)
}

// frameString reads the string reply in f, which it releases; null is
// ErrNil.
func frameString(f *wire.Frame) (string, error) {
	str, null, odd := f.Str, f.Null, f.Value
	f.Release()
	switch {
	case null: // a Cluster fan-out's null may come with its Value
		return "", ErrNil
	case odd.Type != 0:
		return "", unexpected("string", odd)
	}
	return str, nil
}

// doBytes appends a string reply to dst; null is ErrNil with dst unchanged.
func (c *Client) doBytes(ctx context.Context, f *wire.Frame, s *spec, dst []byte) ([]byte, error) {
	f.Want = wire.WantBytes
	f.Bytes = dst
	if err := c.exec(ctx, f, s); err != nil {
		return dst, err
	}
	out, null, odd := f.Bytes, f.Null, f.Value
	f.Release()
	switch {
	case odd.Type != 0:
		return dst, unexpected("string", odd)
	case null:
		return dst, ErrNil
	}
	return out, nil
}

// doStatus expects a status reply such as OK.
func (c *Client) doStatus(ctx context.Context, f *wire.Frame, s *spec) error {
	f.Want = wire.WantNone
	if err := c.exec(ctx, f, s); err != nil {
		return err
	}
	_, err := statusOf(replyView(f))
	f.Release()
	return err
}

// doValue returns the owned reply value.
func (c *Client) doValue(ctx context.Context, f *wire.Frame, s *spec) (resp.Value, error) {
	f.Want = wire.WantValue
	if err := c.exec(ctx, f, s); err != nil {
		return resp.Value{}, err
	}
	v := f.Value
	f.Release()
	return v, nil
}

// doStrings returns an array reply of strings.
func (c *Client) doStrings(ctx context.Context, f *wire.Frame, s *spec) ([]string, error) {
	v, err := c.doValue(ctx, f, s)
	if err != nil {
		return nil, err
	}
	return toStrings(v)
}
