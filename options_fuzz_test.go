package respire

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseURL: ParseURL never panics on any URL; what it accepts passes
// Options validation again, and what it refuses is a *ConfigError that
// names neither the password nor its decoded form.
func FuzzParseURL(f *testing.F) {
	seeds := [][4]string{
		{"redis", "u", "p", "h:6379/0?protocol=3&client_name=x"},
		{"rediss+cluster", "", "p", "a:1,b:2,[::1]:3?read_from=replica&dial_timeout=1s"},
		{"redis+sentinel", "u", "p", "s1,s2:26380/mymaster/2?sentinel_password=x&sentinel_username=y"},
		{"REDIS", "u", "p?x", "h"},
		{"redis", "u", "1234#", "h/0"},
		{"redis+sentinel", "u", "12/34", "h"},
		{"redis+sentinel", "u", "p", "h/my%2Fmaster/2"},
		{"redis+sentinel", "u", "p", "h/%2F%2F/%2F"},
		{"redis", "u", "p%zz", "h"},
		{"redis", "u", "p%40q", "h:port"},
		{"redis", "", "p", "[::1"},
		{"redis", "u", "p", "h:99999"},
		{"redis", "u", "p", "h?command_timeout=-1s&protocol=9"},
		{"redis", "u", "p", "h?colour@=1"},
		{"redis+cluster", "u", "p", ",,"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, scheme, user, pw, rest string) {
		secret := "Pw" + pw + "Wq"
		raw := scheme + "://" + user + ":" + secret + "@" + rest
		o, err := ParseURL(raw)
		if err == nil {
			if _, err := o.validate(); err != nil {
				t.Fatalf("ParseURL(%q) accepted Options that fail validation: %v", raw, err)
			}
			return
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("ParseURL(%q) error %v is not a *ConfigError", raw, err)
		}
		msg := err.Error()
		leaks := func(s string) bool {
			return len(s) >= 4 && strings.Contains(msg, s) &&
				!strings.Contains(scheme, s) && !strings.Contains(user, s) && !strings.Contains(rest, s)
		}
		if leaks(secret) {
			t.Fatalf("ParseURL(%q) error %q names the password", raw, msg)
		}
		if dec, err := url.PathUnescape(secret); err == nil && dec != secret && len(dec) >= 6 && leaks(dec) {
			t.Fatalf("ParseURL(%q) error %q names the decoded password %q", raw, msg, dec)
		}
	})
}
