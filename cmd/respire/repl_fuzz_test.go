package main

import (
	"slices"
	"strings"
	"testing"
)

// FuzzSplitLine: splitting any line (quotes unclosed or followed by a
// word, escapes cut short, \x without two hex digits) never panics, and
// the words it returns, each quoted as a reply is shown, split back into
// themselves.
func FuzzSplitLine(f *testing.F) {
	for _, s := range []string{
		`SET k "a\nb\r\t\\\"\a\b"`, `SET k "\x41\x7a\xff\x00"`, `"\x4`, `"\x`, `"\`, `'\`,
		`SET k 'it\'s "raw" \n'`, `a"b c"d`, `"unclosed`, `'unclosed`, "\"\t\"", `""''`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := splitLine(line)
		if err != nil {
			if words != nil {
				t.Fatalf("splitLine(%q) = %q with error %v", line, words, err)
			}
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quoteString(w)
		}
		again, err := splitLine(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("splitLine(%q) = %q; quoted back, %q, %v", line, words, again, err)
		}
	})
}
