package respire

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// selected reports whether an error reply is one a retry policy can
// select (LOADING, TRYAGAIN, MASTERDOWN, READONLY).
func selected(text []byte) retry.Failure {
	code := text
	if i := bytes.IndexByte(text, ' '); i >= 0 {
		code = text[:i]
	}
	return retry.ClassifyCode(string(code))
}

// unitFailure classifies a batch frame that completed: the first member
// reply that a policy could select fails the whole unit (a *unitError
// keeping every member's reply, for when the unit is not resent); other
// member errors are the members' own.
func unitFailure(f *wire.Frame) (retry.Failure, error) {
	var one [1]resp.Value
	replies := repliesOf(f, &one)
	for _, v := range replies {
		if v.IsError() {
			if fl := selected(v.Str); fl != retry.Unselectable && fl != retry.Fatal {
				return fl, newUnitError("batch", v.Str, replies)
			}
		}
	}
	return 0, nil
}

// unitError fails a unit every member of which got its reply, one of
// them an error a retry policy can select (LOADING, READONLY ...). The
// unit is resent when the policy permits it; when it is not, that
// attempt was the final one, and each member gets its own reply: the
// replies are owned copies, since the frame is released.
type unitError struct {
	*ServerError
	replies []resp.Value
}

func newUnitError(command string, text []byte, replies []resp.Value) *unitError {
	owned := make([]resp.Value, len(replies))
	for i, v := range replies {
		owned[i] = v.Clone()
	}
	return &unitError{ServerError: newServerError(command, text), replies: owned}
}

// Unwrap returns the selected reply's *ServerError.
func (e *unitError) Unwrap() error { return e.ServerError }

// finalReplies returns the members' replies when err, the final error of
// a unit, is the failure of its last attempt by a selected member reply
// (not resent after it); false when that attempt did not get every reply,
// or when a cancellation or Close during a backoff ended the unit, which
// fault every member.
func finalReplies(err error) ([]resp.Value, bool) {
	if re, ok := err.(*RetryError); ok {
		err = re.Err
	}
	if ue, ok := err.(*unitError); ok {
		return ue.replies, true
	}
	return nil, false
}

// txFailure classifies a transaction frame that completed: an error for
// MULTI, a queueing error (EXEC then answers EXECABORT) or EXEC's own
// error fail the unit, classified by the queueing error, so that a
// selected one (LOADING) can retry it; a selected error inside EXEC's
// array retries the unit before any result is published.
func txFailure(f *wire.Frame) (retry.Failure, error) {
	vs := f.Values
	if len(vs) < 2 {
		return retry.Fatal, errors.New("respire: MULTI: missing replies")
	}
	last := vs[len(vs)-1]
	if vs[0].IsError() {
		err := multiRefused(vs)
		if _, ran := err.(*causedError); ran {
			return retry.Fatal, err // members ran: never resent
		}
		return selected(vs[0].Str), err
	}
	for i, v := range vs[1 : len(vs)-1] {
		if v.IsError() {
			name := queuedName(f.Buf, i+1) + " (transaction member " + strconv.Itoa(i+1) + ")"
			return selected(v.Str), newServerError(name, v.Str)
		}
	}
	switch {
	case last.IsError():
		return selected(last.Str), newServerError("EXEC", last.Str)
	case last.IsNull():
		return retry.Fatal, newServerError("EXEC", []byte("EXECABORT the transaction was aborted"))
	case !last.Type.Aggregate():
		return retry.Fatal, unexpected("EXEC array", last)
	}
	for _, v := range last.Elems {
		if v.IsError() {
			if fl := selected(v.Str); fl != retry.Unselectable && fl != retry.Fatal {
				return fl, newUnitError("EXEC", v.Str, last.Elems) // EXEC ran: its array is the members'
			}
		}
	}
	f.Value = last
	return 0, nil
}

// multiRefused is the failure of a transaction whose MULTI the server
// refused (vs: its replies; NOPERM under an ACL without MULTI): the
// server, not in a transaction, ran each member it accepted as it came,
// which the error says when a member's reply shows one ran (neither an
// error nor QUEUED).
func multiRefused(vs []resp.Value) error {
	se := newServerError("MULTI", vs[0].Str)
	for _, v := range vs[1 : len(vs)-1] {
		if !v.IsError() && (v.Type != resp.SimpleString || string(v.Str) != "QUEUED") {
			return &causedError{command: "MULTI", err: se,
				text: "refused, so the server ran the members it accepted one by one, outside a transaction"}
		}
	}
	return se
}

// queuedName returns the full name of the i-th command of a transaction
// frame buf (0: MULTI), for the error of a command the server refused
// to queue.
func queuedName(buf []byte, i int) string {
	off := 0
	for ; i > 0; i-- {
		_, n := nextCommand(buf[off:], nil)
		if n == 0 {
			return "?"
		}
		off += n
	}
	var small [16][]byte
	words := frameArgs(buf[off:], small[:0])
	if len(words) == 0 {
		return "?"
	}
	return dispatchOf(NewCommand(string(words[0])), words[1:]).name
}
