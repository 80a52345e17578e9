package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/resp"
)

// DialFunc opens a network connection, like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Config describes how to establish and prepare a connection, and how the
// connection watches its own health and bounds what it holds.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// Dial opens the socket; it must honour its context. nil: a
	// net.Dialer with TCP keepalive probes after 15 s idle, every 15 s,
	// 3 unanswered probes dropping the connection (see [Dial]).
	Dial DialFunc
	// TLS, when not nil, wraps the socket in TLS (the server name defaults
	// to Addr's host). nil: plain TCP.
	TLS *tls.Config
	// DialTimeout bounds dialing and the handshake; 0 adds no bound
	// beyond the caller's context.
	DialTimeout time.Duration
	// Username and Password authenticate (HELLO AUTH or AUTH); no
	// authentication when both are empty. A Username without a Password
	// authenticates with an empty password (an ACL user with nopass
	// accepts it), never silently as the default user.
	Username, Password string
	// DB is selected with SELECT when not 0.
	DB int
	// ClientName is set with CLIENT SETNAME (or HELLO SETNAME) when not
	// empty.
	ClientName string
	// Proto is 2, 3, or 0 for HELLO 3 with a fallback to RESP2 when the
	// server does not know HELLO, or its ACL refuses HELLO (NOPERM).
	Proto int
	// MaxBulk is the largest accepted bulk reply in bytes; 0 means
	// resp.DefaultMaxBulk. Larger replies reset the connection.
	MaxBulk int64
	// ReadOnly sends READONLY after the handshake: a cluster replica then
	// serves reads for the slots of its primary.
	ReadOnly bool
	// Role, when not empty ("master" or "slave"), makes the handshake ask
	// ROLE and fail with a DialFailed error whose cause matches
	// [ErrWrongRole] when the server has another role: a stale address
	// never receives a command meant for a primary. A ROLE the server
	// refuses (an ACL without it) fails the handshake with its reply (a
	// Handshake error, cause *ReplyError), not as a wrong role.
	Role string
	// Follows, with Role "slave", returns the address (host:port) of the
	// primary the replica must follow; the handshake then also fails with
	// [ErrWrongRole] when ROLE names another primary or a link to it that
	// is not up ("connect", "connecting", "sync"): such a replica serves
	// another data set, or a stale one. nil, or an empty address, checks
	// the role only. It is called at every dial.
	Follows func() string
	// WantID makes a RESP2 handshake learn the server's id of the
	// connection (CLIENT ID); a RESP3 handshake learns it from HELLO.
	WantID bool
	// OnPush receives RESP3 push frames, on the reader goroutine; the
	// value is borrowed for the duration of the call.
	OnPush func(resp.Value)
	// Tracking turns on server-assisted client-side caching in the
	// handshake (CLIENT TRACKING ON OPTIN; RESP3 only, a RESP2 connection
	// fails to dial): the keys of a read sent right after CLIENT CACHING
	// YES are tracked, and the server's invalidations arrive as pushes
	// (OnPush).
	Tracking bool
	// OnTrackingLost, with Tracking, is called once when a connection
	// ends, after it refuses new frames: the invalidations it would have
	// carried are lost with it.
	OnTrackingLost func()
	// OnEvent, when set, receives connection lifecycle events (see
	// [Event]) on the goroutine where they happen; it must not block.
	OnEvent func(Event)

	// HealthTimeout retires a connection that owes replies and has
	// received no byte for HealthTimeout: it then probes the server with
	// a PING on a new connection to Addr (Dial and TLS as above, no
	// handshake), bounded by HealthTimeout. Any complete reply (error
	// replies such as NOAUTH, LOADING or BUSY included), or any byte
	// arriving on the connection meanwhile, proves the server alive and
	// restarts the silence; otherwise every frame fails with Reason Lost,
	// its own evidence and the cause [ErrHealthTimeout]. A silent peer is
	// thus retired between HealthTimeout and twice HealthTimeout (plus a
	// quarter of the shortest interval set here, the sampling period); a
	// slow but live server never is. With IdlePing, a connection whose
	// idle PING is still unanswered when the probe is answered is retired
	// too: a live connection answers the PING before anything sent after
	// it. 0 disables it.
	HealthTimeout time.Duration
	// SilenceLimit, with HealthTimeout, retires a connection that owes
	// replies and has received no byte for SilenceLimit even though the
	// server answers the probes: something between the client and the
	// server dropped this connection alone (a NAT or a proxy that lost it
	// without a reset). A command still crossing a slow link, part of it
	// taken by the server within each SilenceLimit, is not silence. Its
	// frames fail as for HealthTimeout. A probe
	// answered with BUSY (a script runs; every connection waits)
	// restarts the limit. Set it only
	// where no command may rightly keep the connection silent that long
	// (never where blocking commands run). 0 disables it.
	SilenceLimit time.Duration
	// Probes, when not nil, is shared by the connections of one client:
	// a probe of an address answered after a connection to it fell
	// silent stands for that connection's own probe (see
	// [NewProbeShare]). nil: each connection probes for itself.
	Probes *ProbeShare
	// IdlePing sends a PING on a connection that owes nothing and has
	// neither read nor written for IdlePing, so that a dead peer is found
	// (by the write, or by HealthTimeout, which covers the PING) before a
	// caller needs the connection. Its reply is dropped by the
	// connection. Use it only where every command gets exactly one reply.
	// 0 disables it.
	IdlePing time.Duration
	// OwnReadWait bounds how long a caller whose context can be cancelled
	// reads its own reply on an idle connection before the reader
	// goroutine takes the reply over ([Conn.Do]): the latest such a
	// caller sees its context end. 0 or less means [DefaultOwnReadWait].
	OwnReadWait time.Duration
	// CloseCheckAfter is how long a connection must have sat unread before
	// a caller of [Conn.Do] that reads its own reply first checks whether
	// the server closed it (one system call; see [Conn.exchange]). 0 means
	// [DefaultCloseCheckAfter]; a negative value checks before every such
	// write.
	CloseCheckAfter time.Duration
	// NoOwnRead keeps the reader goroutine reading while the connection
	// owes nothing, instead of parking it so that the next caller of
	// [Conn.Do] reads its own reply: a server's close of the idle
	// connection is then seen at once ([Conn.Alive] turns false), not at
	// the health monitor's next tick. A pool's connections, used through
	// Submit and idle between loans, set it.
	NoOwnRead bool
	// MaxPendingFrames bounds the frames a connection holds: submitted
	// and not yet completed (queued, awaiting their reply, and abandoned
	// ones until their reply is drained or the connection dies). Submit
	// waits for room beyond it. 0 means unlimited.
	MaxPendingFrames int
	// MaxPendingBytes bounds the sum of len(Frame.Buf) of those frames;
	// a larger frame is admitted when nothing else is pending. 0 means
	// unlimited.
	MaxPendingBytes int
	// BatchLanes is how many connections besides its own an [Endpoint]
	// opens, on first use, for large frames (see [Endpoint.For]); 0 sends
	// every frame on the endpoint's own.
	BatchLanes int
	// SoloLanes is how many connections besides its own an [Endpoint]
	// opens, one at a time as callers need them, for small frames while
	// few callers share its connection (see [Endpoint.For]); 0 sends every
	// small frame on the endpoint's own.
	SoloLanes int
	// Crowd, shared by the endpoints of one client, tells their solo
	// lanes how many callers share the whole client; NewEndpoint gives an
	// endpoint with SoloLanes one of its own when it is nil.
	Crowd *Crowd
	// SoloIdleClose closes a solo lane's connection that no caller took
	// for this long (checked at the health monitor's ticks); the lane is
	// dialed again when a caller needs it. 0: solo lanes stay open until
	// their endpoint closes.
	SoloIdleClose time.Duration
	// soloLane marks a solo lane's own configuration: its connection is
	// dialed only when a caller needs it ([Endpoint.For]), never again
	// at once when it ends, and closes unused after SoloIdleClose.
	soloLane bool
}

// idleClose is how long a connection of cfg may go unused before it
// closes: SoloIdleClose on a solo lane, else 0 (never).
func (cfg *Config) idleClose() time.Duration {
	if cfg.soloLane {
		return cfg.SoloIdleClose
	}
	return 0
}

// keepAlive is the TCP keepalive of sockets opened by the default dialer:
// a peer that vanished without a word is dropped by the kernel after
// about a minute of silence (15 s idle, then 3 probes 15 s apart), even
// on a connection that owes nothing and sends no idle PING.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 15 * time.Second, Count: 3}

// defaultDialer opens sockets when Config.Dial is nil.
var defaultDialer = net.Dialer{KeepAliveConfig: keepAlive}

// DefaultDial opens a TCP socket with the default dialer: the Dial a
// Config without one uses.
func DefaultDial(ctx context.Context, network, addr string) (net.Conn, error) {
	return defaultDialer.DialContext(ctx, network, addr)
}

// ErrWrongRole is the cause of a dial whose server did not have the role
// Config.Role asked for.
var ErrWrongRole = errors.New("the server does not have the expected role")

// ErrTrackingNeedsRESP3 fails the dial of a Config.Tracking connection
// that negotiated RESP2: its invalidations would need a connection of
// their own.
var ErrTrackingNeedsRESP3 = errors.New("client-side caching needs RESP3 (HELLO 3), which the server refused")

// ReplyError is an error reply the server sent during the handshake.
type ReplyError struct {
	Command string // "HELLO", "AUTH", "CLIENT SETNAME", "SELECT", "READONLY", "CLIENT TRACKING" or "ROLE"
	Text    string // the reply, such as "WRONGPASS invalid username-password pair"
}

// Error returns the command and the server's reply.
func (e *ReplyError) Error() string { return e.Command + ": " + e.Text }

// Dial connects to cfg.Addr, performs the handshake and starts the
// connection's loops. Without cfg.Dial it uses a net.Dialer with TCP
// keepalive enabled explicitly: first probe after 15 s idle, then every
// 15 s, the connection dropped after 3 unanswered probes. onDead, if not
// nil, runs once after the connection dies, when every frame has failed
// and just before Dead is closed: it must not call Close or wait on Dead.
func Dial(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error) {
	var began time.Time
	if cfg.OnEvent != nil {
		began = time.Now()
	}
	nc, rd, proto, id, err := dialPrepared(ctx, cfg)
	if err != nil {
		cfg.emit(Event{Kind: EventDialFailed, Err: err})
		return nil, err
	}
	cfg.emit(Event{Kind: EventOpened, Duration: time.Since(began)})
	c := start(nc, rd, proto, cfg, onDead)
	c.id = id
	return c, nil
}

// DialRaw connects to cfg.Addr like [Dial] and performs the handshake, but
// starts nothing: the caller owns the socket and its reader, for a
// connection that is not one reply per command (a subscription). It
// returns the protocol in use and the server's id of the connection (0
// when unknown).
func DialRaw(ctx context.Context, cfg Config) (nc net.Conn, rd *resp.Reader, proto int, id int64, err error) {
	mc, rd, proto, id, err := dialPrepared(ctx, cfg)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	return mc, rd, proto, id, nil
}

// dialPrepared opens the socket and runs the handshake within ctx and
// cfg.DialTimeout.
func dialPrepared(ctx context.Context, cfg Config) (*meteredConn, *resp.Reader, int, int64, error) {
	if cfg.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.DialTimeout)
		defer cancel()
	}
	raw, err := dialSocket(ctx, cfg)
	if err != nil {
		return nil, nil, 0, 0, &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: err, Addr: cfg.Addr}
	}
	nc := newMeteredConn(raw)
	// The handshake obeys ctx through the socket deadline.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	rd := resp.NewReader(nc)
	rd.MaxBulk = cfg.MaxBulk
	proto, id, err := handshake(nc, rd, cfg)
	if !stop() || err != nil {
		_ = nc.Close()
		if err == nil || ctx.Err() != nil {
			err = multierr.With(ctx.Err(), err)
		}
		var re *ReplyError
		if errors.As(err, &re) || errors.Is(err, ErrTrackingNeedsRESP3) {
			return nil, nil, 0, 0, &ConnError{Reason: Handshake, Evidence: Unwritten, Cause: err, Addr: cfg.Addr}
		}
		return nil, nil, 0, 0, &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: err, Addr: cfg.Addr}
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, rd, proto, id, nil
}

// ErrNilConn reports a dial function (Options.Dialer or a dial hook) that
// returned neither a connection nor an error.
var ErrNilConn = errors.New("respire: the dialer returned no connection and no error")

// dialSocket opens the socket to cfg.Addr with cfg.Dial (or the default
// dialer) and completes TLS when cfg.TLS is set.
func dialSocket(ctx context.Context, cfg Config) (net.Conn, error) {
	dial := cfg.Dial
	if dial == nil {
		dial = DefaultDial
	}
	nc, err := dial(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	if nc == nil {
		return nil, ErrNilConn
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, tlsConfig(cfg))
		if err := tlsHandshake(ctx, tc); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	return nc, nil
}

// tlsHandshake completes tc's TLS handshake. The caller's callbacks of its
// tls.Config (VerifyConnection, GetClientCertificate, ...) run in it, on
// the client's dial goroutines, out of the caller's reach: a panic in
// one fails the dial with an error instead of ending the process. The
// half-made connection is the dial's own, and is closed.
func tlsHandshake(ctx context.Context, tc *tls.Conn) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("respire: a TLS callback panicked: %v", p)
		}
	}()
	return tc.HandshakeContext(ctx)
}

// tlsConfig returns cfg.TLS with its ServerName defaulted to cfg.Addr's
// host, also with InsecureSkipVerify: the name is still sent (SNI), and
// a server or proxy that routes by it needs it either way.
func tlsConfig(cfg Config) *tls.Config {
	if cfg.TLS.ServerName != "" {
		return cfg.TLS
	}
	c := cfg.TLS.Clone()
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		c.ServerName = host
	}
	return c
}

// handshake prepares the connection and returns the protocol in use.
func handshake(nc net.Conn, rd *resp.Reader, cfg Config) (proto int, id int64, err error) {
	proto = 2
	authed := false
	if cfg.Proto != 2 {
		v, err := roundTrip(nc, rd, helloArgs(cfg))
		switch {
		case err != nil:
			return 0, 0, err
		case v.IsError():
			text := redact(v.Str, cfg.Password)
			if cfg.Proto == 0 && helloFallsBack(v.Str) {
				break // fall back to RESP2
			}
			return 0, 0, &ReplyError{Command: "HELLO", Text: text}
		default:
			proto, authed = 3, true
			for i := 0; i+1 < len(v.Elems); i += 2 {
				if string(v.Elems[i].TextBytes()) == "id" && v.Elems[i+1].Type == resp.Integer {
					id = v.Elems[i+1].Int
				}
			}
		}
	}
	if proto == 2 {
		if args := authArgs(cfg); args != nil && !authed {
			if err := expectOK(nc, rd, args, "AUTH", cfg.Password); err != nil {
				return 0, 0, err
			}
		}
		if cfg.ClientName != "" {
			if err := expectOK(nc, rd, []string{"CLIENT", "SETNAME", cfg.ClientName}, "CLIENT SETNAME", cfg.Password); err != nil {
				return 0, 0, err
			}
		}
		if cfg.WantID {
			// Best effort: a server without CLIENT ID leaves the id 0.
			v, err := roundTrip(nc, rd, []string{"CLIENT", "ID"})
			if err != nil {
				return 0, 0, err
			}
			if v.Type == resp.Integer {
				id = v.Int
			}
		}
	}
	if cfg.DB != 0 {
		if err := expectOK(nc, rd, []string{"SELECT", strconv.Itoa(cfg.DB)}, "SELECT", cfg.Password); err != nil {
			return 0, 0, err
		}
	}
	if cfg.ReadOnly {
		if err := expectOK(nc, rd, []string{"READONLY"}, "READONLY", cfg.Password); err != nil {
			return 0, 0, err
		}
	}
	if cfg.Tracking {
		if proto != 3 {
			return 0, 0, ErrTrackingNeedsRESP3
		}
		if err := expectOK(nc, rd, []string{"CLIENT", "TRACKING", "ON", "OPTIN"}, "CLIENT TRACKING", cfg.Password); err != nil {
			return 0, 0, err
		}
	}
	if cfg.Role != "" {
		v, err := roundTrip(nc, rd, []string{"ROLE"})
		if err != nil {
			return 0, 0, err
		}
		if v.IsError() {
			// Refused (NOPERM under an ACL without ROLE): the role is
			// unknown, not wrong, and another address would not help.
			return 0, 0, &ReplyError{Command: "ROLE", Text: redact(v.Str, cfg.Password)}
		}
		if err := checkRole(cfg, v); err != nil {
			return 0, 0, err
		}
	}
	return proto, id, nil
}

// helloFallsBack reports whether a HELLO refused with text leaves RESP2
// to try (under Proto 0): a server that does not know HELLO, does not
// speak RESP3 (NOPROTO), or whose ACL refuses HELLO itself (NOPERM, from
// Valkey, Redis 7.2+ or a proxy). HELLO did not run in any of these, so
// its credentials were not tried and the RESP2 AUTH is their first try.
// A refusal of the credentials (WRONGPASS) is final.
func helloFallsBack(text []byte) bool {
	return bytes.HasPrefix(text, []byte("NOPROTO")) || bytes.HasPrefix(text, []byte("NOPERM")) ||
		bytes.HasPrefix(text, []byte("ERR unknown command"))
}

// helloArgs is the HELLO 3 of cfg, with its AUTH and SETNAME. A Username
// without a Password authenticates with an empty password.
func helloArgs(cfg Config) []string {
	args := []string{"HELLO", "3"}
	if cfg.Password != "" || cfg.Username != "" {
		user := cfg.Username
		if user == "" {
			user = "default"
		}
		args = append(args, "AUTH", user, cfg.Password)
	}
	if cfg.ClientName != "" {
		args = append(args, "SETNAME", cfg.ClientName)
	}
	return args
}

// authArgs is the RESP2 AUTH of cfg, or nil when cfg authenticates
// nobody.
func authArgs(cfg Config) []string {
	switch {
	case cfg.Username != "":
		return []string{"AUTH", cfg.Username, cfg.Password}
	case cfg.Password != "":
		return []string{"AUTH", cfg.Password}
	}
	return nil
}

func expectOK(nc net.Conn, rd *resp.Reader, args []string, name, password string) error {
	v, err := roundTrip(nc, rd, args)
	if err != nil {
		return err
	}
	if v.IsError() {
		return &ReplyError{Command: name, Text: redact(v.Str, password)}
	}
	return nil
}

// echoMarker precedes the arguments a server that does not know a command
// (Redis before 6 for HELLO) echoes in its error.
const echoMarker = "with args beginning with:"

// redact returns an error reply's text without the password: an echo of
// the arguments is dropped whole, since the server cuts it after 128
// bytes (a long password's head would remain) and turns newlines into
// spaces; any other occurrence of the password is replaced.
func redact(text []byte, password string) string {
	s := string(text)
	if password == "" {
		return s
	}
	if i := strings.Index(s, echoMarker); i >= 0 {
		s = s[:i+len(echoMarker)] + " (redacted)"
	}
	s = strings.ReplaceAll(s, password, "(redacted)")
	return strings.ReplaceAll(s, strings.NewReplacer("\r", " ", "\n", " ").Replace(password), "(redacted)")
}

// roundTrip sends one command and reads its reply, skipping pushes. The
// arguments never appear in errors: they may hold a password.
func roundTrip(nc net.Conn, rd *resp.Reader, args []string) (resp.Value, error) {
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	if _, err := nc.Write(b); err != nil {
		return resp.Value{}, err
	}
	for {
		v, err := rd.ReadValue()
		if err != nil {
			return resp.Value{}, err
		}
		if v.Type != resp.Push {
			return v.Clone(), nil
		}
	}
}
