package respire

import (
	"strings"
	"testing"
)

// FuzzParseInfo: INFO's text parses without a panic whatever its lines
// (no header, empty ones, CR without LF, colons in values); every field
// and value is a part of one line of the text.
func FuzzParseInfo(f *testing.F) {
	for _, s := range []string{
		"# Server\r\nredis_version:7.2.4\r\n\r\n# Clients\r\nconnected_clients:1\r\n",
		"loose:field\n#\n:empty\nno colon\nk:v:w\r",
		"#  Keyspace \r\ndb0:keys=1,expires=0\r\n# keyspace\r\n",
		"\r\r\n:\n#\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		info := parseInfo(text)
		if info.Raw() != text {
			t.Fatalf("Raw() = %q; want %q", info.Raw(), text)
		}
		for section, fields := range info.Sections {
			for field, value := range fields {
				line := field + ":" + value
				if strings.ContainsAny(line, "\n") || !strings.Contains(text, line) {
					t.Fatalf("%q: section %q field %q value %q is no line of the text", text, section, field, value)
				}
				if v, ok := info.Value(section, field); !ok || v != value {
					t.Fatalf("Value(%q, %q) = %q, %v; want %q", section, field, v, ok, value)
				}
			}
		}
	})
}
