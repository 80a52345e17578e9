package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/respire-go/respire"
)

// runInteractive connects with the flags of a's command line and runs
// [interact] on a's stdin; it prompts when stdin is a terminal. The exit
// status is 1 when stdin is not a terminal and a command failed.
func runInteractive(ctx context.Context, a invocation) int {
	var f connFlags
	rest, code, ok := parse("", &f, a.line, a.stderr, false)
	if !ok {
		return code
	}
	if len(rest) > 0 { // findCommand saw no command word, so only flags are left
		fmt.Fprintf(a.stderr, "respire: unexpected arguments %q\n", rest)
		return exitUsage
	}
	c, opts, code := connect(ctx, &f, a.getenv, a.stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	prompt := ""
	if a.terminal {
		prompt = promptFor(opts)
	}
	if ok := interact(ctx, c, a.stdin, a.stdout, prompt); !ok && !a.terminal {
		return exitFail
	}
	return exitOK
}

// promptFor returns the interactive prompt: the server's address, the
// database in brackets when it is not 0, and "> ".
func promptFor(opts respire.Options) string {
	addr := strings.Join(opts.Endpoints, ",")
	if opts.Sentinel != nil {
		addr = opts.Sentinel.PrimaryName
	}
	if opts.DB != 0 {
		addr += "[" + strconv.Itoa(opts.DB) + "]"
	}
	return addr + "> "
}

// interact reads commands from in, one a line, and writes their replies to
// out like redis-cli: the reply as [formatReply] renders it, an error
// reply as "(error) ...", other failures as the client's error text. A
// line is split by [splitLine]; an empty line is skipped; "quit" or "exit"
// (any case), the end of in or ctx's end stops. prompt, when not empty, is
// written before each line is read. A command refused on the shared
// connection moves the rest of the lines to a [session], if its
// connection serves it. interact reports whether every command succeeded.
func interact(ctx context.Context, c *respire.Client, in io.Reader, out io.Writer, prompt string) bool {
	lines := make(chan string)
	done := make(chan struct{})
	defer close(done)
	// Read in a goroutine so that an interrupt (ctx) ends the loop while
	// it waits for a line. It ends at the end of in, or when interact
	// returns and it has read one more line.
	go func() {
		defer close(lines)
		br := bufio.NewReader(in)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				select {
				case lines <- line:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var sess *session // once a command needs a connection of its own
	defer func() {
		if sess != nil {
			sess.close()
		}
	}()
	startPrompt := prompt
	okAll := true
	for {
		io.WriteString(out, prompt)
		var line string
		var more bool
		select {
		case <-ctx.Done():
			if prompt != "" {
				io.WriteString(out, "\n")
			}
			return okAll
		case line, more = <-lines:
		}
		if !more {
			if prompt != "" {
				io.WriteString(out, "\n") // the terminal's cursor sits after the prompt
			}
			return okAll
		}
		words, err := splitLine(strings.TrimRight(line, "\r\n"))
		if err != nil {
			fmt.Fprintf(out, "(error) %v\n", err)
			okAll = false
			continue
		}
		if len(words) == 0 {
			continue
		}
		if strings.EqualFold(words[0], "quit") || strings.EqualFold(words[0], "exit") {
			return okAll
		}
		if words[0] == "" {
			fmt.Fprintln(out, "(error) empty command name")
			okAll = false
			continue
		}
		var reply string
		if sess == nil {
			reply, err = send(ctx, c, words)
			if errors.Is(err, respire.ErrInvalidArgument) {
				// Refused on the shared connection: a connection of the
				// session's own may serve it (MULTI, SELECT, ...).
				sess = openSession(ctx, c)
				var ended bool
				reply, ended, err = sess.send(ctx, words)
				if ended || errors.Is(err, respire.ErrInvalidArgument) {
					sess.close() // refused there too: the shared connection serves the rest
					sess = nil
				}
			}
		} else {
			var ended bool
			reply, ended, err = sess.send(ctx, words)
			if ended {
				sess.close()
				sess = nil
				prompt = startPrompt
				printFailure(out, words[0], err)
				fmt.Fprintln(out, "respire: the session's own connection is gone, and with it its state (MULTI, WATCH, SELECT, ...); the next commands go to the shared connection")
				okAll = false
				continue
			}
		}
		if err != nil {
			printFailure(out, words[0], err)
			okAll = false
			continue
		}
		if n, ok := selectedDB(words); ok && sess != nil {
			prompt = withDB(prompt, n)
		}
		io.WriteString(out, reply)
	}
}

// splitLine splits an interactive line into words. Words are separated by
// spaces or tabs. A double-quoted part of a word keeps its spaces and reads
// the escapes \n \r \t \b \a \\ \" and \xHH (two hex digits; any other
// backslashed character stands for itself); a single-quoted part keeps
// everything as is except \' for a quote. A quoted part may follow
// unquoted characters (a"b c" is the word "ab c"), but its closing quote
// must end the word: be followed by a space, a tab or the end of the
// line. A pair of quotes with nothing between them is an empty word.
func splitLine(line string) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return words, nil
		}
		var w strings.Builder
		for i < len(line) && !isSpace(line[i]) {
			switch line[i] {
			case '"':
				j, err := readDoubleQuoted(line, i+1, &w)
				if err != nil {
					return nil, err
				}
				i = j
			case '\'':
				j, err := readSingleQuoted(line, i+1, &w)
				if err != nil {
					return nil, err
				}
				i = j
			default:
				w.WriteByte(line[i])
				i++
				continue
			}
			if i < len(line) && !isSpace(line[i]) {
				return nil, fmt.Errorf("the closing quote at column %d must be followed by a space", i)
			}
		}
		words = append(words, w.String())
	}
}

// errUnbalanced reports a quote without its closing quote.
var errUnbalanced = errors.New("unbalanced quotes")

// readDoubleQuoted reads a double-quoted part from line[i:], just after its
// opening quote, into w, and returns the index after the closing quote.
func readDoubleQuoted(line string, i int, w *strings.Builder) (int, error) {
	for i < len(line) {
		c := line[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(line):
			e := line[i+1]
			if e == 'x' && i+3 < len(line) {
				if v, err := strconv.ParseUint(line[i+2:i+4], 16, 8); err == nil {
					w.WriteByte(byte(v))
					i += 4
					continue
				}
			}
			switch e {
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case 'a':
				e = '\a'
			}
			w.WriteByte(e)
			i += 2
		default:
			w.WriteByte(c)
			i++
		}
	}
	return 0, errUnbalanced
}

// readSingleQuoted is [readDoubleQuoted] for a single-quoted part: only \'
// is an escape.
func readSingleQuoted(line string, i int, w *strings.Builder) (int, error) {
	for i < len(line) {
		c := line[i]
		switch {
		case c == '\'':
			return i + 1, nil
		case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			w.WriteByte('\'')
			i += 2
		default:
			w.WriteByte(c)
			i++
		}
	}
	return 0, errUnbalanced
}

// isSpace reports whether c separates words.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
