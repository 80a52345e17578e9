package respiretest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/respire-go/respire/internal/ascii"
)

// Server is an embedded RESP server for tests and demos: a miniredis engine
// behind a [Proxy], whose methods it has. Clients reach it at its Addr
// ([Proxy.Addr], TCP on 127.0.0.1) or through its Dial ([Proxy.Dial]);
// with [InMemory] nothing listens on TCP and both hops are net.Pipe, so it
// runs inside a testing/synctest bubble with virtual time. Unlike the
// proxy alone, IDMP emulation is on by default (turn it off with
// WithIDMP(false)); without it the engine answers IDMP and XCFGSET exactly
// as Redis 7.0 does. Command names fold a-z only, as Redis folds them: a
// name with a byte outside ASCII is an unknown command (except inside a
// Lua script, whose redis.call names the engine upper-cases with Unicode
// rules), and such a subcommand word (CLIENT, XINFO...) an unknown
// subcommand. A Server is safe for concurrent use. Make one with
// [NewServer] or [StartServer]: the zero Server is not usable.
type Server struct {
	*Proxy
	engine *miniredis.Miniredis
}

// NewServer starts a [Server] and closes it when tb's test ends. It fails tb
// if the server cannot start.
//
// Inside a testing/synctest bubble (detected by the bubble's clock, which
// starts at 2000-01-01 UTC) NewServer uses [InMemory] by itself; pass
// InMemory explicitly if your test moves a bubble's clock past 2001.
func NewServer(tb TB, opts ...Option) *Server {
	tb.Helper()
	s, err := StartServer(opts...)
	if err != nil {
		tb.Fatalf("respiretest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// inBubble reports whether the clock is a synctest bubble's: bubbles start
// at midnight UTC 2000-01-01, a time no real clock shows today.
func inBubble() bool { return time.Now().Before(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)) }

// StartServer starts a [Server] that the caller closes with [Server.Close];
// see [NewServer] for the options and the bubble detection.
func StartServer(opts ...Option) (*Server, error) {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if inBubble() {
		cfg.inMemory = true
	}
	if cfg.idmp == nil {
		on := true
		cfg.idmp = &on
	}
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // keys expire with the clock, like a real server's (virtual in a bubble)
	// Start the engine without a listener and install the Redis 7.0
	// fidelity hook before any client can reach it.
	c, err := m.Dial()
	if err != nil {
		return nil, fmt.Errorf("respiretest: start engine: %w", err)
	}
	c.Close()
	srv := m.Server()
	srv.SetPreHook(redis70Hook(srv))
	cfg.backendDial = func(context.Context, string, string) (net.Conn, error) { return m.Dial() }
	cfg.engine = true
	p, err := newProxy("", cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	return &Server{Proxy: p, engine: m}, nil
}

// Engine returns the embedded miniredis, for reading or seeding data
// directly (bypassing the proxy and its counts). Do not call its SetError:
// it replaces the hook that keeps the engine's replies like Redis 7.0's;
// inject errors with proxy rules instead.
func (s *Server) Engine() *miniredis.Miniredis { return s.engine }

// Executed returns how many frames of command reached the engine, the
// in-process stand-in for INFO commandstats' calls (counted at the proxy's
// hop to the engine, so frames the proxy dropped or answered itself do not
// count; the IDMP emulation's own TYPE probes are not counted).
func (s *Server) Executed(command string) int { return s.Proxy.Forwarded(command) }

// Close stops the proxy and the engine and returns the proxy's error, as
// [Proxy.Close] does (a Server is an io.Closer). Closing again does
// nothing more and returns nil (a concurrent Close waits, as Proxy.Close
// does).
func (s *Server) Close() error {
	err := s.Proxy.Close()
	s.engine.Close()
	return err
}

// redis70Hook makes the engine answer like Redis 7.0.15 where miniredis
// differs in ways the kit's users rely on: XADD with IDMP or IDMPAUTO gets
// "ERR Invalid stream ID ..." and creates no stream, and an unknown
// command gets Redis's error text (with the command name in upper case).
// It also answers arguments on which the engine would crash the process
// (engineCrash, beyondStringLimit, unmatchablePattern) with an error.
func redis70Hook(srv *server.Server) server.Hook {
	return func(c *server.Peer, cmd string, args ...string) bool {
		if cmd == "XADD" && xaddHasIDMP(args) {
			c.WriteError("ERR Invalid stream ID specified as stream command argument")
			return true
		}
		if msg := beyondStringLimit(cmd, args); msg != "" {
			// The engine would allocate the whole string (a terabyte
			// for SETRANGE k 1099511627776 v) and crash the process.
			c.WriteError(msg)
			return true
		}
		if msg := foreignSubcommand(cmd, args); msg != "" {
			c.WriteError(msg)
			return true
		}
		if msg := engineCrash(cmd, args); msg != "" {
			c.WriteError(msg)
			return true
		}
		if msg := scriptBlocks(cmd, args); msg != "" && nestedCall(c) {
			// The engine would wait inside the script, holding itself.
			c.WriteError(msg)
			return true
		}
		if cmd == "SSCAN" || cmd == "ZSCAN" {
			if fixed := scanCursor(args); fixed != nil {
				srv.Dispatch(c, append([]string{cmd}, fixed...))
				return true
			}
		}
		if cmd == "LPOS" {
			if fixed := lposCount(args); fixed != nil {
				srv.Dispatch(c, append([]string{cmd}, fixed...))
				return true
			}
		}
		if emptyStores[cmd] && len(args) > 0 {
			if !nestedCall(c) {
				// Run it in a script that deletes an empty destination,
				// atomically, as Redis does (queued, inside MULTI).
				srv.Dispatch(c, append([]string{"EVAL", storeScript, "1", args[0], cmd}, args[1:]...))
				return true
			}
			if _, again := storing.LoadAndDelete(c); !again {
				// A script's call, which holds the engine already: run
				// it, then delete an empty destination.
				storing.Store(c, true)
				srv.Dispatch(c, append([]string{cmd}, args...))
				dropEmpty(srv, c.Ctx, cmd, args[0])
				return true
			}
		}
		if unmatchablePattern(cmd, args) {
			// The engine would panic compiling it, taking the process down.
			c.WriteError(errPattern)
			return true
		}
		if !srv.IsRegisteredCommand(cmd) {
			c.WriteError(unknownCommand(cmd, args))
			return true
		}
		return false
	}
}

// maxStringLen is Redis's proto-max-bulk-len default, the longest string.
const maxStringLen = 512 << 20

// beyondStringLimit returns Redis 7.0's error for a SETRANGE or SETBIT
// (arguments after the command name) that would grow a string past
// maxStringLen, or "".
func beyondStringLimit(cmd string, args []string) string {
	switch {
	case cmd == "SETRANGE" && len(args) == 3 && args[2] != "":
		off, err := strconv.ParseInt(args[1], 10, 64)
		if err == nil && off >= 0 && off > maxStringLen-int64(len(args[2])) {
			return "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
		}
	case cmd == "SETBIT" && len(args) == 3:
		off, err := strconv.ParseInt(args[1], 10, 64)
		if err == nil && off >= maxStringLen*8 {
			return "ERR bit offset is not an integer or out of range"
		}
	}
	return ""
}

// xaddHasIDMP reports whether Redis 7.0 would take for the entry ID a
// token of an XADD (arguments after the command name) that the engine
// reads as an option: IDMP or IDMPAUTO, or an option word with a
// non-ASCII letter that the engine's Unicode upper-casing turns into one
// ("ıDMP", "MıNID"), which Redis, folding a-z only, does not know.
func xaddHasIDMP(args []string) bool {
	i := 1
	for i < len(args) {
		switch ascii.Upper(args[i]) {
		case "NOMKSTREAM":
			i++
		case "MAXLEN", "MINID":
			i++
			if i < len(args) && (args[i] == "=" || args[i] == "~") {
				i++
			}
			i++
		case "LIMIT":
			i += 2
		case "IDMP", "IDMPAUTO":
			return true
		default:
			return engineFolds(args[i], "NOMKSTREAM", "MAXLEN", "MINID", "LIMIT", "IDMP", "IDMPAUTO")
		}
	}
	return false
}

// emptyStores are the commands after which the engine keeps an empty
// destination set or sorted set where Redis deletes it; the engine's
// SRANDMEMBER and SPOP crash the process on an empty set.
var emptyStores = map[string]bool{
	"SDIFFSTORE": true, "SINTERSTORE": true, "SUNIONSTORE": true, "ZINTERSTORE": true, "ZUNIONSTORE": true,
}

// storeScript runs a store command (ARGV[1], destination KEYS[1], the
// other arguments ARGV[2:]) and deletes an empty destination; an error
// reply is returned as it is.
const storeScript = `local n = redis.pcall(ARGV[1], KEYS[1], unpack(ARGV, 2))
if n == 0 then redis.call('DEL', KEYS[1]) end
return n`

// storing holds the script peers whose store command the hook runs
// itself, so that the hook lets that call through.
var storing sync.Map

// dropEmpty deletes dest, the destination a store command of a script
// left, when it is an empty set or sorted set (ctx: the script's context).
func dropEmpty(srv *server.Server, ctx any, cmd, dest string) {
	card := "SCARD"
	if cmd[0] == 'Z' {
		card = "ZCARD"
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	p := server.NewPeer(w)
	p.Ctx = ctx
	srv.Dispatch(p, []string{card, dest})
	_ = w.Flush()
	if out.String() == ":0\r\n" {
		srv.Dispatch(p, []string{"DEL", dest})
	}
}

// nestedCall reports whether c is the engine's peer for a call from a
// script (its connection context says so), where a script cannot be run.
func nestedCall(c *server.Peer) bool {
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("nested")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// errPattern answers a glob pattern the engine cannot translate, which
// Redis would match byte by byte.
const errPattern = "ERR respiretest: the embedded engine cannot match this pattern (it must be UTF-8, with valid [...] classes)"

// unmatchablePattern reports whether a command (arguments after its name)
// carries a glob pattern the engine cannot translate: KEYS, the SCAN
// family's MATCH, PSUBSCRIBE and PUBSUB CHANNELS.
func unmatchablePattern(cmd string, args []string) bool {
	opts := -1 // where the SCAN family's options start
	switch cmd {
	case "KEYS":
		return len(args) > 0 && !engineGlob(args[0])
	case "PSUBSCRIBE":
		return slices.ContainsFunc(args, func(p string) bool { return !engineGlob(p) })
	case "PUBSUB":
		return len(args) > 1 && ascii.EqualFold(args[0], "CHANNELS") && !engineGlob(args[1])
	case "SCAN":
		opts = 1
	case "HSCAN", "SSCAN", "ZSCAN":
		opts = 2
	default:
		return false
	}
	for i := opts; i+1 < len(args); i += 2 {
		if ascii.EqualFold(args[i], "MATCH") && !engineGlob(args[i+1]) {
			return true
		}
	}
	return false
}

// engineGlob reports whether the engine can translate the glob p: it turns
// a glob into a regular expression, quoting the literal runs and copying a
// [...] class and an escaped byte as they are, and panics when that
// expression does not compile (bytes that are not UTF-8, a class such as
// [b-a] or [^], an escaped backslash before an E that ends the quoting).
// The engine matches nothing, without compiling, for an empty class and a
// trailing backslash.
func engineGlob(p string) bool {
	var re strings.Builder
	re.WriteString(`(?s)^\Q`)
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			re.WriteString(`\E.*\Q`)
		case '?':
			re.WriteString(`\E.\Q`)
		case '\\':
			if i++; i == len(p) {
				return true
			}
			re.WriteByte(p[i])
		case '[':
			var class strings.Builder
			for i++; i < len(p) && p[i] != ']'; i++ {
				if p[i] == '\\' {
					if i == len(p)-1 {
						return true
					}
					class.WriteByte(p[i])
					i++
				}
				class.WriteByte(p[i])
			}
			if class.Len() == 0 {
				return true
			}
			re.WriteString(`\E[` + class.String() + `]\Q`)
		default:
			re.WriteByte(p[i])
		}
	}
	re.WriteString(`\E$`)
	_, err := regexp.Compile(re.String())
	return err == nil
}

// unknownCommand is Redis 7.0's reply text for an unknown command.
func unknownCommand(cmd string, args []string) string {
	var b strings.Builder
	for _, a := range args {
		if b.Len() >= 128 {
			break
		}
		if rest := 128 - b.Len(); len(a) > rest {
			a = a[:rest]
		}
		b.WriteString("'" + a + "' ")
	}
	if len(cmd) > 128 {
		cmd = cmd[:128]
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", cmd, b.String())
}
