package wire

import (
	"net"
	"strconv"
	"strings"

	"github.com/respire-go/respire/resp"
)

// checkRole checks v, the server's reply to ROLE, against cfg.Role and,
// for a replica, cfg.Follows. A replica answers
// ["slave", primary host, primary port, link state, offset].
func checkRole(cfg Config, v resp.Value) error {
	if !v.Type.Aggregate() || len(v.Elems) == 0 {
		return &roleError{addr: cfg.Addr, want: cfg.Role, got: "unknown"}
	}
	role := v.Elems[0].Text()
	if role != cfg.Role {
		return &roleError{addr: cfg.Addr, want: cfg.Role, got: bounded(strconv.Quote(role))}
	}
	if cfg.Role != "slave" || cfg.Follows == nil {
		return nil
	}
	want := cfg.Follows()
	if want == "" {
		return nil
	}
	if len(v.Elems) < 4 {
		return &roleError{addr: cfg.Addr, want: "a replica of " + want, got: "a replica of an unknown primary"}
	}
	host, port, state := v.Elems[1].Text(), v.Elems[2].Text(), v.Elems[3].Text()
	if !sameAddr(net.JoinHostPort(host, port), want) || state != "connected" {
		return &roleError{addr: cfg.Addr, want: "a replica of " + want + " with its link up",
			got: bounded("a replica of " + net.JoinHostPort(host, port) + " with its link " + strconv.Quote(state))}
	}
	return nil
}

// sameAddr reports whether two host:port addresses may name the same
// server: the ports are equal and so are the hosts, compared as IP
// addresses when both are, else case-insensitively. A host name and an IP
// address are taken to match (telling would need a DNS lookup during the
// handshake): a replica configured with its primary's name is not refused.
func sameAddr(a, b string) bool {
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil {
		return strings.EqualFold(a, b)
	}
	an, aerr := strconv.Atoi(ap)
	bn, berr := strconv.Atoi(bp)
	if aerr != nil || berr != nil || an != bn {
		return false
	}
	aip, bip := net.ParseIP(ah), net.ParseIP(bh)
	switch {
	case aip != nil && bip != nil:
		return aip.Equal(bip)
	case aip == nil && bip == nil:
		return strings.EqualFold(ah, bh)
	}
	return true
}

// roleError reports a server whose ROLE was not the expected one; addr
// names it (a Sentinel client dials the address a sentinel gave).
type roleError struct{ addr, want, got string }

func (e *roleError) Error() string {
	return "ROLE of " + e.addr + " is " + e.got + ", want " + e.want + ": " + ErrWrongRole.Error()
}

func (e *roleError) Unwrap() error { return ErrWrongRole }

// maxRoleText bounds the server's text repeated in a roleError.
const maxRoleText = 64

// bounded cuts s, which repeats the server's text, to maxRoleText bytes.
func bounded(s string) string {
	if len(s) > maxRoleText {
		return s[:maxRoleText] + "..."
	}
	return s
}
