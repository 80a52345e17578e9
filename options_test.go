package respire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest"
)

// TestConnectRejectsInvalidOptions checks that every out-of-range option
// fails Connect with a *ConfigError naming the field, before any dial.
func TestConnectRejectsInvalidOptions(t *testing.T) {
	ok := []string{"127.0.0.1:6379"}
	tests := []struct {
		name      string
		opts      Options
		wantField string
	}{
		{"NoEndpoints", Options{}, "Options.Endpoints"},
		{"EmptyEndpointList", Options{Endpoints: []string{}}, "Options.Endpoints"},
		{"PortZero", Options{Endpoints: []string{"127.0.0.1:0"}}, "Options.Endpoints[0]"},
		{"Port70000", Options{Endpoints: []string{"127.0.0.1:70000"}}, "Options.Endpoints[0]"},
		{"NegativePort", Options{Endpoints: []string{"127.0.0.1:-1"}}, "Options.Endpoints[0]"},
		{"NonNumericPort", Options{Endpoints: []string{"127.0.0.1:redis"}}, "Options.Endpoints[0]"},
		{"MissingPort", Options{Endpoints: []string{"127.0.0.1"}}, "Options.Endpoints[0]"},
		{"EmptyHost", Options{Endpoints: []string{":6379"}}, "Options.Endpoints[0]"},
		{"SignedPort", Options{Endpoints: []string{"127.0.0.1:+6379"}}, "Options.Endpoints[0]"},
		{"SecondEndpointBad", Options{Endpoints: []string{"127.0.0.1:6379", "h:0"}}, "Options.Endpoints[1]"},
		{"NegativeDB", Options{Endpoints: ok, DB: -1}, "Options.DB"},
		{"ClientNameWithSpace", Options{Endpoints: ok, ClientName: "a b"}, "Options.ClientName"},
		{"ClientNameWithNewline", Options{Endpoints: ok, ClientName: "a\nb"}, "Options.ClientName"},
		{"ClientNameWithTab", Options{Endpoints: ok, ClientName: "a\tb"}, "Options.ClientName"},
		{"ClientNameNotASCII", Options{Endpoints: ok, ClientName: "caf\u00e9"}, "Options.ClientName"},
		{"Protocol1", Options{Endpoints: ok, Protocol: 1}, "Options.Protocol"},
		{"Protocol4", Options{Endpoints: ok, Protocol: 4}, "Options.Protocol"},
		{"NegativeProtocol", Options{Endpoints: ok, Protocol: -3}, "Options.Protocol"},
		{"NegativeDialTimeout", Options{Endpoints: ok, DialTimeout: -time.Second}, "Options.DialTimeout"},
		{"NegativeCommandTimeout", Options{Endpoints: ok, CommandTimeout: -1}, "Options.CommandTimeout"},
		{"NegativeMaxBulk", Options{Endpoints: ok, MaxBulk: -1}, "Options.MaxBulk"},
		{"UnknownMetricGroup", Options{Endpoints: ok, Metrics: 1 << 7}, "Options.Metrics"},
		{"RetryMaxAttempts101", Options{Endpoints: ok, RetryPolicy: &RetryPolicy{MaxAttempts: 101}}, "RetryPolicy.MaxAttempts"},
		{"RetryJitterAbove1", Options{Endpoints: ok, RetryPolicy: &RetryPolicy{Jitter: 1.5}}, "RetryPolicy.Jitter"},
		// A provider that panics while the instruments are created, as a
		// failover group's already fails.
		{"MeterProviderPanicsResiliency", Options{Endpoints: ok, Metrics: MetricsResiliency, MeterProvider: creationPanicProvider{}}, "Options.MeterProvider"},
		{"MeterProviderPanicsCommands", Options{Endpoints: ok, Metrics: MetricsCommands, MeterProvider: creationPanicProvider{}}, "Options.MeterProvider"},
		{"MeterProviderPanicsConnections", Options{Endpoints: ok, Metrics: MetricsConnections, MeterProvider: creationPanicProvider{}}, "Options.MeterProvider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			opts := tt.opts
			opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return nil, errors.New("unexpected dial")
			}
			c, err := Connect(context.Background(), opts)
			if c != nil {
				_ = c.Close()
				t.Fatalf("Connect succeeded; want an error naming %s", tt.wantField)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Connect error = %v; want *ConfigError", err)
			}
			if ce.Field != tt.wantField {
				t.Errorf("ConfigError.Field = %q; want %q", ce.Field, tt.wantField)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error %q does not name %s", err, tt.wantField)
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("dialed %d times; want 0", n)
			}
		})
	}
}

// TestAddressWithCredentialsNeverShowsPassword: a URL or a
// user:password@host given where a host:port belongs (Endpoints,
// Sentinel.Addrs; a URL from the environment is an easy mistake) fails
// Connect with a *ConfigError naming the field and saying what to use
// instead, before any dial, and the error never repeats the password.
func TestAddressWithCredentialsNeverShowsPassword(t *testing.T) {
	const password = "Hunter2-secret"
	for _, addr := range []string{
		"redis://:" + password + "@h:6379",
		"rediss://u:" + password + "@h",
		"u:" + password + "@h:6379",
		password + "@h:6379",
	} {
		for field, opts := range map[string]Options{
			"Options.Endpoints[1]":      {Endpoints: []string{"h:6379", addr}},
			"Options.Sentinel.Addrs[0]": {Sentinel: &SentinelOptions{PrimaryName: "p", Addrs: []string{addr}}},
		} {
			opts.Dialer = func(context.Context, string, string) (net.Conn, error) {
				t.Error("dialed; want the address refused before any dial")
				return nil, errors.New("unexpected dial")
			}
			c, err := Connect(context.Background(), opts)
			if c != nil {
				_ = c.Close()
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != field {
				t.Errorf("Connect with %s = %v; want a *ConfigError naming %s", field, err, field)
				continue
			}
			if strings.Contains(err.Error(), "Hunter2") {
				t.Errorf("Connect with %s: error %q shows the password", field, err)
			}
			if !strings.Contains(err.Error(), "Username") && !strings.Contains(err.Error(), "ParseURL") {
				t.Errorf("Connect with %s: error %q does not say where credentials or URLs go", field, err)
			}
		}
	}
}

func TestOptionDefaults(t *testing.T) {
	cfg, err := (&Options{Endpoints: []string{"h:1"}}).validate()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.wire.DialTimeout, 5*time.Second; got != want {
		t.Errorf("default DialTimeout = %v; want %v", got, want)
	}
	if got, want := cfg.commandTimeout, 5*time.Second; got != want {
		t.Errorf("default CommandTimeout = %v; want %v", got, want)
	}
	if cfg.policy.Enabled() {
		t.Errorf("default RetryPolicy is enabled; want no retries")
	}
	if cfg.wire.Proto != 0 || cfg.wire.DB != 0 || cfg.wire.TLS != nil {
		t.Errorf("default Proto, DB, TLS = %d, %d, %v; want 0, 0, nil", cfg.wire.Proto, cfg.wire.DB, cfg.wire.TLS)
	}
	cfg, err = (&Options{Endpoints: []string{"h:1"}, CommandTimeout: NoTimeout}).validate()
	if err != nil || cfg.commandTimeout != 0 {
		t.Errorf("NoTimeout gives commandTimeout %v, %v; want 0 (none)", cfg.commandTimeout, err)
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		url  string
		want Options
		tls  bool
	}{
		{url: "redis://localhost", want: Options{Endpoints: []string{"localhost:6379"}}},
		{url: "redis://127.0.0.1:6380/", want: Options{Endpoints: []string{"127.0.0.1:6380"}}},
		{url: "redis://h:1/15", want: Options{Endpoints: []string{"h:1"}, DB: 15}},
		{url: "redis://:pw@h", want: Options{Endpoints: []string{"h:6379"}, Password: "pw"}},
		{url: "redis://user:p%40ss@h:7000/2", want: Options{Endpoints: []string{"h:7000"}, Username: "user", Password: "p@ss", DB: 2}},
		{url: "redis://[::1]:6390", want: Options{Endpoints: []string{"[::1]:6390"}}},
		{url: "redis://[::1]", want: Options{Endpoints: []string{"[::1]:6379"}}},
		{url: "redis://h?protocol=2&client_name=app&dial_timeout=1500ms&command_timeout=2s", want: Options{Endpoints: []string{"h:6379"}, Protocol: 2, ClientName: "app", DialTimeout: 1500 * time.Millisecond, CommandTimeout: 2 * time.Second}},
		{url: "rediss://secure.example:6380", want: Options{Endpoints: []string{"secure.example:6380"}}, tls: true},
		// A URL's scheme is case-insensitive (RFC 3986, section 3.1).
		{url: "REDIS://h", want: Options{Endpoints: []string{"h:6379"}}},
		{url: "Rediss://h", want: Options{Endpoints: []string{"h:6379"}}, tls: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := ParseURL(tt.url)
			if err != nil {
				t.Fatalf("ParseURL: %v", err)
			}
			if (got.TLS != nil) != tt.tls {
				t.Errorf("TLS set = %v; want %v", got.TLS != nil, tt.tls)
			}
			got.TLS = nil
			if !optionsEqual(got, tt.want) {
				t.Errorf("ParseURL = %+v; want %+v", got, tt.want)
			}
		})
	}
}

// TestParseURLSchemeCaseSetsTopology checks that an upper-case topology
// scheme still makes a Cluster or Sentinel client.
func TestParseURLSchemeCaseSetsTopology(t *testing.T) {
	if o, err := ParseURL("REDIS+CLUSTER://h"); err != nil || o.Cluster == nil {
		t.Errorf("ParseURL(REDIS+CLUSTER://h) = Cluster %v, %v; want a Cluster client", o.Cluster, err)
	}
	if o, err := ParseURL("Rediss+Sentinel://h/m"); err != nil || o.Sentinel == nil || o.Sentinel.PrimaryName != "m" || o.TLS == nil {
		t.Errorf("ParseURL(Rediss+Sentinel://h/m) = Sentinel %+v, TLS %v, %v; want a TLS Sentinel client for m", o.Sentinel, o.TLS != nil, err)
	}
}

func optionsEqual(a, b Options) bool {
	return strings.Join(a.Endpoints, ",") == strings.Join(b.Endpoints, ",") &&
		a.Username == b.Username && a.Password == b.Password && a.DB == b.DB &&
		a.ClientName == b.ClientName && a.Protocol == b.Protocol &&
		a.DialTimeout == b.DialTimeout && a.CommandTimeout == b.CommandTimeout
}

func TestParseURLRejectsInvalidURLs(t *testing.T) {
	const password = "Hunter2-secret"
	tests := []struct {
		name      string
		url       string
		wantField string
	}{
		{"HTTPScheme", "http://u:" + password + "@h", "URL"},
		{"NoScheme", "localhost:6379", "URL"},
		{"MissingHost", "redis://u:" + password + "@/0", "URL"},
		{"NonNumericDB", "redis://u:" + password + "@h/abc", "URL"},
		{"NegativeDB", "redis://u:" + password + "@h/-1", "URL"},
		{"PortZero", "redis://u:" + password + "@h:0", "URL"},
		{"Port70000", "redis://u:" + password + "@h:70000", "URL"},
		{"BadProtocol", "redis://u:" + password + "@h?protocol=x", "URL protocol"},
		{"Protocol4", "redis://u:" + password + "@h?protocol=4", "Options.Protocol"},
		{"BadDialTimeout", "redis://u:" + password + "@h?dial_timeout=soon", "URL dial_timeout"},
		{"NegativeCommandTimeout", "redis://u:" + password + "@h?command_timeout=-1s", "Options.CommandTimeout"},
		{"UnknownParameter", "redis://u:" + password + "@h?colour=blue", "URL colour"},
		{"Unparsable", "redis://u:" + password + "@h:port%zz", "URL"},
		{"ControlCharacter", "redis://u:" + password + "@h\x7f", "URL"},
		// A '?', '#' or '/' in a password ends the authority early: the
		// password's tail must not be named as a parameter, ignored as a
		// fragment, or read as a path while its head becomes a port.
		{"QuestionMarkInPassword", "redis://u:Hunter2?-secret@h", "URL"},
		{"HashInPassword", "redis://u:1234#" + password + "@h", "URL"},
		{"SlashInPassword", "redis+sentinel://u:1234/" + password + "@h", "URL"},
		{"Fragment", "redis://u:" + password + "@h/0#top", "URL"},
		{"UnclosedIPv6Bracket", "redis://u:" + password + "@[::1", "URL"},
		{"StrayBracket", "redis://u:" + password + "@h]", "URL"},
		{"UnbracketedIPv6", "redis://u:" + password + "@::1", "URL"},
		{"TwoPorts", "redis://u:" + password + "@h:6379:1", "URL"},
		{"SignedPort", "redis://u:" + password + "@h:+80", "URL"},
		// A sentinel_password travels in the query: an '&' in it must not
		// make its tail a parameter named in the error, and a ';' or a
		// stray '%' must not make the whole parameter vanish unnoticed.
		{"AmpersandInSentinelPassword", "redis+sentinel://h/m?sentinel_password=Hunter2&-secret", "URL"},
		{"AmpersandInSentinelPasswordAsKey", "redis+sentinel://h/m?sentinel_password=Hunter2&secret=1", "URL"},
		{"SemicolonInSentinelPassword", "redis+sentinel://h/m?sentinel_password=Hunter2;-secret", "URL"},
		{"PercentInSentinelPassword", "redis+sentinel://h/m?sentinel_password=Hunter2%-secret", "URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseURL(tt.url)
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("ParseURL(%q) error = %v; want *ConfigError", tt.url, err)
			}
			if ce.Field != tt.wantField {
				t.Errorf("ConfigError.Field = %q; want %q", ce.Field, tt.wantField)
			}
			if strings.Contains(err.Error(), "Hunter2") || strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q contains the password", err)
			}
		})
	}
	// An '@' in a parameter's value is no password's tail.
	if o, err := ParseURL("redis+sentinel://h/m?sentinel_password=p@ss"); err != nil || o.Sentinel == nil || o.Sentinel.Password != "p@ss" {
		t.Errorf("ParseURL with sentinel_password=p@ss = %v; want the password p@ss", err)
	}
}

func TestParseURLConnects(t *testing.T) {
	opts, err := ParseURL("redis://" + standaloneAddr(t) + "/4?protocol=2&client_name=from-url")
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, opts)
	info := clientInfo(t, c)
	for field, want := range map[string]string{"db": "4", "resp": "2", "name": "from-url"} {
		if got := infoField(info, field); got != want {
			t.Errorf("server sees %s=%s; want %s", field, got, want)
		}
	}
}

// TestFormattingNeverShowsPassword: printing Options, SentinelOptions or a
// connected Client with any of fmt's verbs (as a log line would) never
// shows a password; fmt's default formatting prints every field, the
// Client's unexported configuration included.
func TestFormattingNeverShowsPassword(t *testing.T) {
	const password, sentinelPassword = "Hunter2-data-secret", "Hunter2-sentinel-secret"
	srv := respiretest.NewServer(t)
	srv.Engine().RequireAuth(password)
	opts := Options{Endpoints: []string{srv.Addr()}, Password: password}
	c := newClient(t, opts)
	sentinel := SentinelOptions{PrimaryName: "p", Addrs: []string{"h:26379"}, Password: sentinelPassword}
	values := map[string]any{
		"Options":          opts,
		"*Options":         &opts,
		"SentinelOptions":  sentinel,
		"*SentinelOptions": &sentinel,
		"FailoverMember":   FailoverMember{Options: opts},
		"*Client":          c,
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			got := fmt.Sprintf(verb, v)
			if strings.Contains(got, password) || strings.Contains(got, sentinelPassword) {
				t.Errorf("Sprintf(%q, %s) = %s; shows a password", verb, name, got)
			}
		}
	}
	if got := fmt.Sprint(opts); !strings.Contains(got, "Endpoints:["+srv.Addr()+"]") || !strings.Contains(got, "Password:[REDACTED]") {
		t.Errorf("Sprint(Options) = %s; want its fields, the password redacted", got)
	}
	if got, want := c.String(), "respire.Client("+srv.Addr()+")"; got != want {
		t.Errorf("Client.String() = %q; want %q", got, want)
	}
}

// TestStructuredLoggingNeverShowsPassword: logging Options or
// SentinelOptions as an attribute of a log/slog record never shows a
// password, with the JSON handler (which would marshal every field,
// ignoring String) as with the text handler, and the record still names
// the endpoints.
func TestStructuredLoggingNeverShowsPassword(t *testing.T) {
	const password, sentinelPassword = "Hunter2-data-secret", "Hunter2-sentinel-secret"
	sentinel := SentinelOptions{PrimaryName: "p", Addrs: []string{"h:26379"}, Password: sentinelPassword}
	opts := Options{Endpoints: []string{"h:6379"}, Password: password}
	withSentinel := Options{Sentinel: &sentinel, Password: password}
	values := map[string]struct {
		v    any
		want string
	}{
		"Options":          {opts, "h:6379"},
		"*Options":         {&opts, "h:6379"},
		"Options.Sentinel": {withSentinel, "h:26379"},
		"SentinelOptions":  {sentinel, "h:26379"},
		"*SentinelOptions": {&sentinel, "h:26379"},
		"FailoverMember":   {FailoverMember{Options: opts}, ""},
	}
	for name, tc := range values {
		for _, handler := range []string{"json", "text"} {
			var buf strings.Builder
			var h slog.Handler = slog.NewJSONHandler(&buf, nil)
			if handler == "text" {
				h = slog.NewTextHandler(&buf, nil)
			}
			slog.New(h).Info("config", "opts", tc.v)
			got := buf.String()
			if strings.Contains(got, password) || strings.Contains(got, sentinelPassword) {
				t.Errorf("%s handler logging %s = %s; shows a password", handler, name, got)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s handler logging %s = %s; want it to show %s", handler, name, got, tc.want)
			}
		}
	}
}

// TestHandshakeErrorNeverShowsPasswordEvenCut: a server that does not
// know HELLO (Redis before 6, some proxies) echoes its first 128 bytes of
// arguments in the error, a long password cut short, and its newlines as
// spaces: neither the password nor a piece of it reaches the error.
func TestHandshakeErrorNeverShowsPasswordEvenCut(t *testing.T) {
	long := "Hunter2-" + strings.Repeat("0123456789", 15) // the echo keeps only its head
	for name, password := range map[string]string{"Long": long, "Newline": "Hunter2-first\nHunter2-second"} {
		t.Run(name, func(t *testing.T) {
			srv := respiretest.NewServer(t)
			echo := "'3' 'AUTH' 'default' '" + strings.ReplaceAll(password, "\n", " ") + "' "
			if len(echo) > 128 {
				echo = echo[:128]
			}
			srv.MustAddRule(t, respiretest.Rule{Command: "HELLO",
				Action: respiretest.Inject("ERR unknown command 'HELLO', with args beginning with: " + echo)})
			c, err := Connect(context.Background(), Options{Endpoints: []string{srv.Addr()}, Protocol: 3, Password: password})
			if c != nil {
				_ = c.Close()
				t.Fatal("connected although HELLO failed")
			}
			if err == nil || !strings.Contains(err.Error(), "unknown command") {
				t.Fatalf("Connect = %v; want the server's unknown-command error", err)
			}
			for _, piece := range []string{"Hunter2-", password[:20]} {
				if strings.Contains(err.Error(), piece) {
					t.Errorf("error %q shows %q, a piece of the password", err, piece)
				}
			}
		})
	}
}

// TestDialerReturningNothing: a Dialer that returns neither a connection
// nor an error fails the dial with a connection error instead of crashing
// the process on the nil connection.
func TestDialerReturningNothing(t *testing.T) {
	opts := Options{
		Endpoints: []string{"127.0.0.1:6379"},
		Dialer:    func(context.Context, string, string) (net.Conn, error) { return nil, nil },
	}
	c, err := Connect(context.Background(), opts)
	if c != nil {
		_ = c.Close()
	}
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "no connection and no error") {
		t.Errorf("Connect with a dialer returning (nil, nil) = %v; want a connection error saying so", err)
	}
}
