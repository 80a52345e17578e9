package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// runSubscribe prints the messages of the channels until interrupted (or
// --count messages): "channel: payload", one per line (see [messageLine]). A gap (the
// connection was lost and subscribed again) is reported on standard error.
func runSubscribe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	var count int
	var pattern bool
	channels, code, ok := parse("subscribe", &f, args, stderr, false, func(fs *flag.FlagSet) { subscribeFlags(fs, &count, &pattern) })
	if !ok {
		return code
	}
	if len(channels) == 0 || count < 0 {
		fmt.Fprintln(stderr, "respire subscribe: want one or more channels and a --count of 0 or more")
		return exitUsage
	}
	c, _, code := connect(ctx, &f, getenv, stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	subscribe := c.Subscribe
	if pattern {
		subscribe = c.PSubscribe
	}
	sub, err := subscribe(ctx, channels...)
	if err != nil {
		return failed(stderr, err)
	}
	defer sub.Close()
	for n := 0; count == 0 || n < count; {
		select {
		case <-ctx.Done():
			return exitOK
		case m, ok := <-sub.Channel():
			switch {
			case !ok:
				return exitFail
			case m.Gap:
				fmt.Fprintf(stderr, "(reconnected; messages may have been lost: %v)\n", m.Err)
			default:
				io.WriteString(stdout, messageLine(m.Channel, m.Payload))
				n++
			}
		}
	}
	return exitOK
}

// subscribeFlags adds subscribe's own flags to fs, bound to count and
// pattern.
func subscribeFlags(fs *flag.FlagSet, count *int, pattern *bool) {
	fs.IntVar(count, "count", 0, "exit after `n` messages (default: until interrupted)")
	fs.BoolVar(pattern, "pattern", false, "the arguments are glob patterns (PSUBSCRIBE)")
}

// messageLine returns the line subscribe prints for a message, "channel:
// payload" and a newline. A channel or payload that could be misread (it
// holds a control character or invalid UTF-8, or starts with a quote; a
// channel also when it holds ": ") is quoted like a bulk string, so that
// every message is one line and a publisher cannot forge another.
func messageLine(channel, payload string) string {
	return field(channel, strings.Contains(channel, ": ")) + ": " + field(payload, false) + "\n"
}

// field returns s as is, or quoted when quote is set or s could be misread.
func field(s string, quote bool) string {
	if quote || strings.HasPrefix(s, `"`) || !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return quoteString(s)
	}
	return s
}
