package respire

import (
	"context"

	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

//go:generate go run ./internal/gen/commands -out commands_gen.go

// cmd is one typed command, encoded and ready to send ([call]) or to
// queue on a batch ([enqueue]): the single definition behind a Client
// method and its Batch member. A builder method named cmdX on *Client
// defines command X; internal/gen/commands writes the Client method X
// (unless the builder's doc says "respire:client manual") and the Batch
// member X from it.
type cmd[T any] struct {
	f    *wire.Frame
	s    *spec
	err  error     // invalid arguments: nothing is sent and f is nil
	want wire.Want // how the reader keeps the reply for conv
	conv func(resp.Value) (T, error)
	// fromStr, set with want wire.WantString, makes a Client call's
	// result from the string the reader made (a null or a reply of
	// another shape fails as conv would); a batch member's reply still
	// goes through conv.
	fromStr func(string) T
}

// typedCmd makes a cmd whose reply is read as want and converted by conv.
// conv sees a value that may borrow the frame's memory (WantBytes): it
// must copy what it keeps.
func typedCmd[T any](f *wire.Frame, s *spec, want wire.Want, conv func(resp.Value) (T, error)) cmd[T] {
	return cmd[T]{f: f, s: s, want: want, conv: conv}
}

// stringCmd makes a cmd whose reply is a string, the reader making it
// as Get's ([wire.WantString]); null is [ErrNil].
func stringCmd(f *wire.Frame, s *spec) cmd[string] {
	return cmd[string]{f: f, s: s, want: wire.WantString, conv: strOf, fromStr: sameString}
}

func sameString(s string) string { return s }

// invalidCmd is command s refused before any I/O for reason.
func invalidCmd[T any](s *spec, reason string) cmd[T] {
	return cmd[T]{s: s, err: errInvalid(s.name, reason)}
}

// call sends x and converts its reply.
func call[T any](ctx context.Context, c *Client, x cmd[T]) (T, error) {
	var zero T
	if x.err != nil {
		return zero, x.err
	}
	f := x.f
	f.Want = x.want
	if x.want == wire.WantBytes {
		f.Bytes = f.Scratch[:0]
	}
	if err := c.exec(ctx, f, x.s); err != nil {
		return zero, err
	}
	if x.fromStr != nil {
		str, err := frameString(f) // releases f
		if err != nil {
			return zero, err
		}
		return x.fromStr(str), nil
	}
	out, err := x.conv(replyView(f))
	if x.want == wire.WantBytes {
		f.Scratch = f.Bytes[:0]
	}
	f.Release()
	return out, err
}

// replyView is f's reply as a value, whatever f.Want kept of it: for
// WantBytes it borrows f's memory until f is released.
func replyView(f *wire.Frame) resp.Value {
	switch {
	case f.Value.Type != 0: // WantValue, or a reply of another type than wanted
		return f.Value
	case f.Null:
		return resp.Value{Type: resp.Null}
	}
	switch f.Want {
	case wire.WantBytes:
		return resp.Value{Type: resp.BulkString, Str: f.Bytes}
	case wire.WantString:
		return resp.Value{Type: resp.BulkString, Str: []byte(f.Str)} // a copy: no hot path views it
	case wire.WantInt:
		return resp.Value{Type: resp.Integer, Int: f.Int}
	}
	return resp.Value{Type: resp.SimpleString}
}

// frameCmd is a cmd for a frame that a builder returned with err: the
// error, when set, refuses the command before any I/O.
func frameCmd[T any](f *wire.Frame, s *spec, err error, want wire.Want, conv func(resp.Value) (T, error)) cmd[T] {
	if err != nil {
		return cmd[T]{s: s, err: err}
	}
	return typedCmd(f, s, want, conv)
}

// enqueue queues x on b; its Future converts the member's reply as the
// Client method does. On a Batch no Client made it rejects x, whose
// frame b.client built.
func enqueue[T any](b *Batch, x cmd[T]) Future[T] {
	if b.c == nil {
		if x.f != nil {
			x.f.Release()
		}
		return future(b, b.reject(x.s.name, errOrphan(x.s.name)), x.conv)
	}
	return future(b, b.addFrame(x.s.name, x.f, x.s, x.err), x.conv)
}

// orphanBuilder builds the members of a Batch no Client made (a zero
// Batch), which enqueue then rejects: a Client of no connection, of which
// a command builder uses the frame pool only.
var orphanBuilder Client

// client returns the Client that builds b's generated members: b's, or
// orphanBuilder for a zero Batch, so that queueing on it fails the member
// (and Execute) with ErrInvalidArgument instead of panicking.
func (b *Batch) client() *Client {
	if b.c == nil {
		return &orphanBuilder
	}
	return b.c
}

// subCmd defines "NAME SUB args..." for the subcommand s (OBJECT
// ENCODING, XINFO STREAM, ...), whose reply want keeps and conv converts.
func subCmd[T any](c *Client, s *spec, want wire.Want, conv func(resp.Value) (T, error), args ...string) cmd[T] {
	f := c.newFrame(2+len(args), s.desc.Name())
	arg(f, s.desc.Subcommand())
	for _, a := range args {
		arg(f, a)
	}
	return typedCmd(f, s, want, conv)
}

// keyArgsCmd defines "NAME key args..." whose whole reply conv converts.
func keyArgsCmd[T any](c *Client, s *spec, key string, args []string, conv func(resp.Value) (T, error)) cmd[T] {
	f := c.newFrame(2+len(args), s.name)
	arg(f, key)
	for _, a := range args {
		arg(f, a)
	}
	return typedCmd(f, s, wire.WantValue, conv)
}
