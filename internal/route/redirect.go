package route

import (
	"errors"
	"fmt"
	"net"
)

// ErrBadRedirect is the base error of a MOVED or ASK reply that cannot be
// used; every error returned by [ParseRedirect] wraps it.
var ErrBadRedirect = errors.New("route: malformed redirect")

// Redirect is a MOVED or ASK reply.
type Redirect struct {
	// Ask is true for ASK (a one-off redirect during a slot migration),
	// false for MOVED (the slot has a new owner).
	Ask bool
	// Slot is the hash slot the redirect is about, 0..Slots-1.
	Slot int
	// Addr is the "host:port" of the node to go to. Its host is empty,
	// as in ":6380", when the server did not know it; the caller then
	// fills in the host of the node that sent the redirect.
	Addr string
}

// ParseRedirect parses the text of an error reply, such as
// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (without the
// leading '-').
//
// ok is false, and ParseRedirect does not allocate, when text is not a
// MOVED or ASK reply. err, wrapping [ErrBadRedirect], is non-nil when it
// is one but malformed: a missing or extra field, a slot outside
// 0..Slots-1, or an address that is not host:port with a port from 1
// through 65535.
//
// An IPv6 host, which Redis sends without brackets ("::1:6380"), is
// returned bracketed ("[::1]:6380"). An empty host (":6380", which Redis
// sends when the node does not know its own address) or the unknown
// endpoint "?" is returned as an empty host, ":6380": the caller must fill
// in the host of the node that sent the redirect.
func ParseRedirect(text []byte) (r Redirect, ok bool, err error) {
	var rest []byte
	switch {
	case hasWord(text, "MOVED"):
		rest = text[len("MOVED"):]
	case hasWord(text, "ASK"):
		rest = text[len("ASK"):]
		r.Ask = true
	default:
		return Redirect{}, false, nil
	}
	slotText, rest := nextField(rest)
	addrText, rest := nextField(rest)
	if extra, _ := nextField(rest); len(extra) > 0 || len(addrText) == 0 {
		return Redirect{}, true, badRedirect(text, "want a slot and an address")
	}
	slot, okSlot := parseSlotText(slotText)
	if !okSlot {
		return Redirect{}, true, badRedirect(text, "bad slot")
	}
	addr, okAddr := redirectAddr(addrText)
	if !okAddr {
		return Redirect{}, true, badRedirect(text, "bad address")
	}
	r.Slot, r.Addr = slot, addr
	return r, true, nil
}

// hasWord reports whether text starts with word followed by a space or the
// end of text.
func hasWord(text []byte, word string) bool {
	return len(text) >= len(word) && string(text[:len(word)]) == word &&
		(len(text) == len(word) || text[len(word)] == ' ')
}

// nextField splits off the first space-separated field of b.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' {
		j++
	}
	return b[i:j], b[j:]
}

// parseSlotText parses a decimal slot number from 0 through Slots-1.
func parseSlotText(b []byte) (int, bool) {
	n, ok := parseSmall(b)
	return n, ok && n < Slots
}

// parseSmall parses 1 to 5 decimal digits, without sign.
func parseSmall(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// redirectAddr normalizes the address of a redirect: host:port split at
// the last colon, the host optionally bracketed, an empty or "?" host
// kept empty.
func redirectAddr(b []byte) (string, bool) {
	i := len(b) - 1
	for i >= 0 && b[i] != ':' {
		i--
	}
	if i < 0 {
		return "", false
	}
	host, port := b[:i], b[i+1:]
	if _, ok := parsePortText(port); !ok {
		return "", false
	}
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
		if len(host) == 0 {
			return "", false
		}
	}
	for _, c := range host {
		if c == '[' || c == ']' || c < ' ' || c == 0x7f {
			return "", false
		}
	}
	if string(host) == "?" {
		host = nil
	}
	return net.JoinHostPort(string(host), string(port)), true
}

// badRedirect builds the error of a malformed redirect.
func badRedirect(text []byte, why string) error {
	return fmt.Errorf("%w: %s: %q", ErrBadRedirect, why, clipText(text))
}
