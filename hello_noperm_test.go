package respire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/respire-go/respire/respiretest"
)

// TestHelloRefusedByACL: a server or proxy whose ACL refuses HELLO
// (NOPERM; Valkey and Redis 7.2+ may check it, Redis 7.0 does not, so a
// proxy in front of the real server answers it) leaves Protocol 0 on
// RESP2: one AUTH with the credentials, and the client works. A wrong
// password is refused by that one AUTH and not tried again; Protocol 3
// fails with the HELLO's NOPERM and sends no AUTH. No error shows the
// password.
func TestHelloRefusedByACL(t *testing.T) {
	addr := standaloneAddr(t)
	user, password := aclUser(t, []string{addr}, "+@all", "~h-small-noperm:*")
	cases := []struct {
		name     string
		protocol int
		password string
		ok       bool
		refusal  string // the code and command of the refusal when !ok
	}{
		{"Auto falls back to RESP2", 0, password, true, ""},
		{"Auto with a wrong password fails once", 0, "wrong-" + password, false, "AUTH: WRONGPASS"},
		{"RESP3 forced fails", 3, password, false, "HELLO: NOPERM"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			px, err := respiretest.NewProxy(addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = px.Close() })
			hello := px.MustAddRule(t, respiretest.Rule{Command: "HELLO", Times: respiretest.Always,
				Action: respiretest.Inject("NOPERM User " + user + " has no permissions to run the 'hello' command")})
			auth := px.MustAddRule(t, respiretest.Rule{Command: "AUTH", Times: respiretest.Always, Action: respiretest.Pass})
			opts := Options{Endpoints: []string{px.Addr()}, Protocol: tc.protocol, Username: user, Password: tc.password}
			wantAuth := 1
			if tc.protocol == 3 {
				wantAuth = 0
			}
			if !tc.ok {
				err := connectRefused(t, opts)
				if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), tc.refusal) {
					t.Errorf("Connect = %v; want a connection error with %s", err, tc.refusal)
				}
				if strings.Contains(err.Error(), password) {
					t.Errorf("error %q shows the password", err)
				}
			} else {
				c, err := Connect(context.Background(), opts)
				if err != nil {
					t.Fatalf("Connect = %v; want RESP2 after the NOPERM HELLO", err)
				}
				defer c.Close()
				ctx := context.Background()
				if err := c.Set(ctx, "h-small-noperm:k", "v"); err != nil {
					t.Fatalf("SET as the ACL user = %v", err)
				}
				if got, err := c.Get(ctx, "h-small-noperm:k"); err != nil || got != "v" {
					t.Errorf("GET = %q, %v; want v", got, err)
				}
				_, _ = c.Del(ctx, "h-small-noperm:k")
			}
			if hello.Matched() < 1 {
				t.Errorf("proxy saw %d HELLO, want at least 1", hello.Matched())
			}
			// Per handshake: one HELLO, then at most one AUTH.
			if got := auth.Matched(); got != wantAuth*hello.Matched() {
				t.Errorf("proxy saw %d AUTH for %d HELLO; want %d per HELLO", got, hello.Matched(), wantAuth)
			}
		})
	}
}
