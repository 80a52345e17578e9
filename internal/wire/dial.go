package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/resp"
)

// DialFunc opens a network connection, like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Config describes how to establish and prepare a connection.
type Config struct {
	Addr        string
	Dial        DialFunc    // nil: a net.Dialer
	TLS         *tls.Config // nil: plain TCP
	DialTimeout time.Duration
	Username    string
	Password    string
	DB          int
	ClientName  string
	// Proto is 2, 3, or 0 for HELLO 3 with a fallback to RESP2 when the
	// server does not know HELLO.
	Proto   int
	MaxBulk int64
	// OnPush receives RESP3 push frames, on the reader goroutine; the
	// value is borrowed for the duration of the call.
	OnPush func(resp.Value)
}

// ReplyError is an error reply the server sent during the handshake.
type ReplyError struct {
	Command string // "HELLO", "AUTH", "SELECT" or "CLIENT SETNAME"
	Text    string // the reply, such as "WRONGPASS invalid username-password pair"
}

func (e *ReplyError) Error() string { return e.Command + ": " + e.Text }

// Dial connects to cfg.Addr, performs the handshake and starts the
// connection's loops. onDead, if not nil, runs once after it dies, when
// every frame has failed and just before Dead is closed: it must not call
// Close or wait on Dead.
func Dial(ctx context.Context, cfg Config, onDead func(*Conn)) (*Conn, error) {
	if cfg.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.DialTimeout)
		defer cancel()
	}
	dial := cfg.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: err}
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, tlsConfig(cfg))
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: err}
		}
		nc = tc
	}
	// The handshake obeys ctx through the socket deadline.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	rd := resp.NewReader(nc)
	rd.MaxBulk = cfg.MaxBulk
	proto, err := handshake(nc, rd, cfg)
	if !stop() || err != nil {
		_ = nc.Close()
		if err == nil || ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		var re *ReplyError
		if errors.As(err, &re) {
			return nil, &ConnError{Reason: Handshake, Evidence: Unwritten, Cause: err}
		}
		return nil, &ConnError{Reason: DialFailed, Evidence: Unwritten, Cause: err}
	}
	_ = nc.SetDeadline(time.Time{})
	return start(nc, rd, proto, cfg.OnPush, onDead), nil
}

func tlsConfig(cfg Config) *tls.Config {
	if cfg.TLS.ServerName != "" || cfg.TLS.InsecureSkipVerify {
		return cfg.TLS
	}
	c := cfg.TLS.Clone()
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		c.ServerName = host
	}
	return c
}

// handshake prepares the connection and returns the protocol in use.
func handshake(nc net.Conn, rd *resp.Reader, cfg Config) (int, error) {
	proto := 2
	authed := false
	if cfg.Proto != 2 {
		args := []string{"HELLO", "3"}
		if cfg.Password != "" {
			user := cfg.Username
			if user == "" {
				user = "default"
			}
			args = append(args, "AUTH", user, cfg.Password)
		}
		if cfg.ClientName != "" {
			args = append(args, "SETNAME", cfg.ClientName)
		}
		v, err := roundTrip(nc, rd, args)
		switch {
		case err != nil:
			return 0, err
		case v.IsError():
			text := redact(v.Str, cfg.Password)
			if cfg.Proto == 0 && (bytes.HasPrefix(v.Str, []byte("NOPROTO")) || bytes.HasPrefix(v.Str, []byte("ERR unknown command"))) {
				break // fall back to RESP2
			}
			return 0, &ReplyError{Command: "HELLO", Text: text}
		default:
			proto, authed = 3, true
		}
	}
	if proto == 2 {
		if cfg.Password != "" && !authed {
			args := []string{"AUTH", cfg.Password}
			if cfg.Username != "" {
				args = []string{"AUTH", cfg.Username, cfg.Password}
			}
			if err := expectOK(nc, rd, args, "AUTH", cfg.Password); err != nil {
				return 0, err
			}
		}
		if cfg.ClientName != "" {
			if err := expectOK(nc, rd, []string{"CLIENT", "SETNAME", cfg.ClientName}, "CLIENT SETNAME", cfg.Password); err != nil {
				return 0, err
			}
		}
	}
	if cfg.DB != 0 {
		if err := expectOK(nc, rd, []string{"SELECT", strconv.Itoa(cfg.DB)}, "SELECT", cfg.Password); err != nil {
			return 0, err
		}
	}
	return proto, nil
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

// redact returns an error reply's text with every occurrence of the
// password replaced: servers that do not know a command (Redis before 6
// for HELLO) echo its arguments in the error.
func redact(text []byte, password string) string {
	if password == "" {
		return string(text)
	}
	return strings.ReplaceAll(string(text), password, "(redacted)")
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
