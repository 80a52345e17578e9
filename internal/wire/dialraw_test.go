package wire

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/resp"
)

// TestDialRawSharesTheHandshake proves that DialRaw prepares a connection
// exactly as Dial does (same commands, same protocol, same errors) and
// hands the socket over with nothing reading it.
func TestDialRawSharesTheHandshake(t *testing.T) {
	cfg := Config{Addr: "fake:6379", Password: secret, ClientName: "app", DB: 2}
	s := newFakeServer(t, nil)
	cfg.Dial = s.dial
	nc, rd, proto, _, err := DialRaw(context.Background(), cfg)
	if err != nil {
		t.Fatalf("DialRaw: %v", err)
	}
	defer nc.Close()
	if want := []string{"HELLO 3 AUTH default " + secret + " SETNAME app", "SELECT 2"}; !slices.Equal(s.received(), want) || proto != 3 {
		t.Fatalf("server received %q, proto %d; want %q, 3", s.received(), proto, want)
	}
	// The caller owns the socket: its own command's reply is the next value.
	if _, err := nc.Write(cmd("ECHO", "mine")); err != nil {
		t.Fatal(err)
	}
	if v, err := rd.ReadValue(); err != nil || string(v.Str) != "mine" {
		t.Fatalf("reply %q, %v; want the ECHO", v.Str, err)
	}

	refused := errors.New("connection refused")
	_, _, _, _, err = DialRaw(context.Background(), Config{Addr: "fake:1", Dial: func(context.Context, string, string) (net.Conn, error) { return nil, refused }})
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Reason != DialFailed || ce.Evidence != Unwritten || !errors.Is(err, refused) {
		t.Fatalf("failed dial: %v, want *ConnError DialFailed wrapping the cause", err)
	}
	s2 := newFakeServer(t, func(args []string) []byte { return resp.AppendError(nil, "WRONGPASS no") })
	_, _, _, _, err = DialRaw(context.Background(), Config{Addr: "fake:2", Password: secret, Dial: s2.dial})
	var re *ReplyError
	if !errors.As(err, &ce) || ce.Reason != Handshake || !errors.As(err, &re) || re.Command != "HELLO" {
		t.Fatalf("refused handshake: %v, want *ConnError Handshake with the HELLO reply", err)
	}
}

// TestDialRawReal learns the connection's id under both protocols and
// leaves a socket that can enter subscribed mode.
func TestDialRawReal(t *testing.T) {
	addr := standaloneAddr(t)
	for _, p := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(p), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			nc, rd, proto, id, err := DialRaw(ctx, Config{Addr: addr, Proto: p, WantID: true, DialTimeout: 5 * time.Second})
			if err != nil {
				t.Fatalf("DialRaw: %v", err)
			}
			defer nc.Close()
			if proto != p || id <= 0 {
				t.Fatalf("proto %d, id %d; want %d and the server's id", proto, id, p)
			}
			if _, err := nc.Write(append(cmd("CLIENT", "ID"), cmd("SUBSCRIBE", "respire:wire:dialraw")...)); err != nil {
				t.Fatal(err)
			}
			if v, err := rd.ReadValue(); err != nil || v.Type != resp.Integer || v.Int != id {
				t.Fatalf("CLIENT ID = %v, %v; want %d", v.Int, err, id)
			}
			want := map[int]resp.Type{2: resp.Array, 3: resp.Push}[p]
			if v, err := rd.ReadValue(); err != nil || v.Type != want || len(v.Elems) != 3 || string(v.Elems[0].Str) != "subscribe" {
				t.Fatalf("SUBSCRIBE confirmation %v, %v; want a %v", v.Type, err, want)
			}
		})
	}
}
