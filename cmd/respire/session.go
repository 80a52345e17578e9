package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/internal/ascii"
)

// session holds, for the interactive mode, a connection lent by
// [respire.Client.Dedicated]: once the shared connection refuses a
// command that a connection of one's own serves (MULTI, WATCH, SELECT,
// CLIENT SETNAME, ...), that command and every later one of the mode run
// there, in order, so that the state they set lasts for the lines that
// follow, as in redis-cli. Nothing sent on it is retried.
type session struct {
	reqs chan sessionReq
	done chan error // the loan's end: Dedicated's result
}

// sessionReq is one command for the session's connection and where its
// result goes.
type sessionReq struct {
	ctx   context.Context
	words []string
	out   chan sessionResult
}

// sessionResult is a command's formatted reply, or its failure.
type sessionResult struct {
	reply string
	err   error
}

// openSession borrows a dedicated connection of c for the commands sent
// with [session.send], until [session.close]. ctx bounds the wait for the
// connection; the loan itself lasts until close.
func openSession(ctx context.Context, c *respire.Client) *session {
	s := &session{reqs: make(chan sessionReq), done: make(chan error, 1)}
	go func() {
		s.done <- c.Dedicated(ctx, func(conn *respire.Conn) error {
			for r := range s.reqs {
				reply, err := conn.Do(r.ctx, respire.NewCommand(r.words[0]), wordArgs(r.words)...)
				if err != nil {
					r.out <- sessionResult{err: err}
					if lost(err) {
						return err
					}
					continue
				}
				r.out <- sessionResult{reply: formatReply(reply.Value())}
			}
			return nil
		})
	}()
	return s
}

// send runs words on the session's connection and returns the formatted
// reply. ended reports that the session is over (its connection could not
// be had, or a failure left its state unknown): the caller closes it.
func (s *session) send(ctx context.Context, words []string) (reply string, ended bool, err error) {
	out := make(chan sessionResult, 1)
	select {
	case s.reqs <- sessionReq{ctx: ctx, words: words, out: out}:
	case err := <-s.done: // the loan never started, or already ended
		s.done <- err
		return "", true, err
	}
	r := <-out
	return r.reply, r.err != nil && lost(r.err), r.err
}

// close ends the loan, which returns the connection to the client (reset
// when its state changed), and waits for it.
func (s *session) close() {
	close(s.reqs)
	<-s.done
}

// lost reports whether err leaves a session's connection unusable: any
// failure but an error reply and a command refused before it was sent.
func lost(err error) bool {
	var se *respire.ServerError
	if errors.As(err, &se) && !errors.Is(err, respire.ErrConnectionLost) {
		return false
	}
	return !errors.Is(err, respire.ErrInvalidArgument)
}

// wordArgs returns the arguments of a command line's words, after the
// command's name.
func wordArgs(words []string) []any {
	args := make([]any, len(words)-1)
	for i, w := range words[1:] {
		args[i] = w
	}
	return args
}

// selectedDB returns the database a successful command words chose, if it
// is a SELECT.
func selectedDB(words []string) (int, bool) {
	if len(words) != 2 || !ascii.EqualFold(words[0], "SELECT") {
		return 0, false
	}
	db, err := strconv.Atoi(words[1])
	return db, err == nil
}

// withDB returns prompt ("host:port> " or "host:port[3]> ") showing the
// database db, in brackets when it is not 0. An empty prompt stays empty.
func withDB(prompt string, db int) string {
	base, ok := strings.CutSuffix(prompt, "> ")
	if !ok {
		return prompt
	}
	if i := strings.LastIndexByte(base, '['); i >= 0 && strings.HasSuffix(base, "]") {
		base = base[:i]
	}
	if db != 0 {
		base += "[" + strconv.Itoa(db) + "]"
	}
	return base + "> "
}
