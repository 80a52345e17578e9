// Package ascii folds letter case as Redis folds command names and option
// words: a-z and A-Z only. Unicode folding (strings.ToUpper,
// strings.EqualFold) would take a dotless i for an I, a long s for an S
// or the Kelvin sign for a K, and so read a command differently from the
// server, which answers such a name "unknown command". It trims white
// space as Redis skips it too: the six ASCII white space bytes only.
package ascii

import "strings"

// Upper returns s with a-z in upper case; every other byte stays as it
// is. When s has no lower-case ASCII letter it returns s itself, without
// allocating.
func Upper(s string) string {
	for i := 0; i < len(s); i++ {
		if isLower(s[i]) {
			var b strings.Builder
			b.Grow(len(s))
			b.WriteString(s[:i])
			for _, c := range []byte(s[i:]) {
				if isLower(c) {
					c -= 'a' - 'A'
				}
				b.WriteByte(c)
			}
			return b.String()
		}
	}
	return s
}

// EqualFold reports whether a and b are equal when a-z and A-Z are taken
// as the same letters, and nothing else folds.
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if upper(a[i]) != upper(b[i]) {
			return false
		}
	}
	return true
}

// TrimSpace returns s without the ASCII white space (space, \t, \r, \n,
// \v, \f) around it, the white space Redis and its Lua skip. Unicode
// white space (U+00A0, U+0085) stays: the server reads it as part of a
// name, which it then does not know, or of a script, which does not
// compile.
func TrimSpace(s string) string { return strings.Trim(s, " \t\r\n\v\f") }

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func upper(c byte) byte {
	if isLower(c) {
		return c - ('a' - 'A')
	}
	return c
}
