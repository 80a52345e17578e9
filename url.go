package respire

import (
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

var readPolicies = map[string]ReadPolicy{
	"primary": ReadPrimary, "replica": ReadReplica,
	"primary-preferred": ReadPrimaryPreferred, "replica-preferred": ReadReplicaPreferred,
}

// urlHost returns the host:port of one host of a URL, with the default
// port when it has none.
func urlHost(h, defPort string) (string, error) {
	if h == "" {
		return "", &ConfigError{Field: "URL", Reason: "missing host"}
	}
	for _, r := range h {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`"<>\^{|}`+"`", r) {
			return "", &ConfigError{Field: "URL", Reason: "cannot parse (check its syntax)"}
		}
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address or a bracketed IPv6 address.
		// Anything else with a colon or a bracket is malformed ("[::1",
		// "h:1:2"), or an IPv6 address without the brackets that tell
		// its last group from a port.
		host, port = h, defPort
		if inner, ok := strings.CutPrefix(h, "["); ok {
			host, ok = strings.CutSuffix(inner, "]")
			if !ok {
				return "", &ConfigError{Field: "URL", Reason: "cannot parse the host (an IPv6 address is written [::1] or [::1]:6379)"}
			}
		}
		if strings.ContainsAny(host, "[]") || (!strings.HasPrefix(h, "[") && strings.Contains(host, ":")) {
			return "", &ConfigError{Field: "URL", Reason: "cannot parse the host (an IPv6 address is written [::1] or [::1]:6379)"}
		}
	}
	if host == "" {
		return "", &ConfigError{Field: "URL", Reason: "missing host"}
	}
	if port == "" {
		port = defPort
	}
	return net.JoinHostPort(host, port), nil
}

// ParseURL parses a URL into Options. Standalone:
//
//	redis://[[user]:password@]host[:port][/db][?protocol=2|3&client_name=x&dial_timeout=1s&command_timeout=2s]
//
// rediss:// enables TLS. The port defaults to 6379 and the database to 0.
// A Cluster, from one or more seeds (port default 6379):
//
//	redis+cluster://[[user]:password@]host[:port][,host[:port]...][?read_from=replica&...]
//
// A Sentinel group, from its sentinels (port default 26379), the primary's
// name as the path, then the database; user and password authenticate the
// data servers, sentinel_username and sentinel_password the sentinels:
//
//	redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/primary_name[/db][?sentinel_password=x&read_from=replica&...]
//
// A '/' in the primary's name is written %2F (an unencoded one starts the
// database).
// rediss+cluster:// and rediss+sentinel:// enable TLS (for the sentinels
// too). read_from is primary, replica, primary-preferred or
// replica-preferred. The scheme is case-insensitive. Unknown query
// parameters are errors, and so are a parameter that cannot be parsed
// and a fragment. An IPv6 address is written in brackets ([::1]:6379); a
// '/', '?', '#' or '@' in a user name or password is percent-encoded
// (%2F, %3F, %23, %40), an '&', ';' or '%' in a parameter's value too
// (%26, %3B, %25), and an error never repeats a password.
func ParseURL(raw string) (Options, error) {
	var o Options
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return o, &ConfigError{Field: "URL", Reason: "cannot parse (check its syntax)"}
	}
	// A scheme is case-insensitive (RFC 3986, section 3.1).
	scheme = strings.ToLower(scheme)
	topology, tlsOn := "", false
	switch scheme {
	case "redis", "redis+cluster", "redis+sentinel":
	case "rediss", "rediss+cluster", "rediss+sentinel":
		tlsOn = true
	default:
		return o, &ConfigError{Field: "URL", Reason: "scheme must be redis, rediss, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel"}
	}
	if _, t, ok := strings.Cut(scheme, "+"); ok {
		topology = t
	}
	// The authority may list several hosts, which net/url does not parse:
	// take it apart here and let net/url read the rest.
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	hosts := authority
	userinfo := ""
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	// A '/', '?' or '#' in a password ends the authority early, and the
	// rest of the password would be read as a path, a parameter or a
	// fragment (and named in an error, or ignored while the password's
	// head is taken for a port). Redis URLs have no fragment, and no '@'
	// in their path; a parameter's name is not repeated in an error when
	// an '@' follows the host.
	after, query, _ := strings.Cut(rest[end:], "?")
	if strings.ContainsRune(rest[end:], '#') {
		return o, &ConfigError{Field: "URL", Reason: "cannot parse: a fragment (#) is not allowed (write '#' in a password as %23)"}
	}
	if strings.ContainsRune(after, '@') {
		return o, &ConfigError{Field: "URL", Reason: "cannot parse: '@' after the host (write '/', '?' and '#' in a user name or password as %2F, %3F and %23)"}
	}
	// An '&' in a sentinel_password ends it early too: what follows
	// would be named as an unknown parameter.
	echoParam := !strings.ContainsRune(query, '@') && !strings.Contains(query, "sentinel_password")
	u, err := url.Parse("redis://" + userinfo + "placeholder" + rest[end:])
	if err != nil {
		return o, &ConfigError{Field: "URL", Reason: "cannot parse (check its syntax)"}
	}
	if tlsOn {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	defPort := "6379"
	if topology == "sentinel" {
		defPort = "26379"
	}
	var addrs []string
	for _, h := range strings.Split(hosts, ",") {
		addr, err := urlHost(h, defPort)
		if err != nil {
			return o, err
		}
		addrs = append(addrs, addr)
	}
	if len(addrs) > 1 && topology == "" {
		return o, &ConfigError{Field: "URL", Reason: "several hosts need redis+cluster:// or redis+sentinel://"}
	}
	// The path is split as written (url.Parse has checked its escapes),
	// so that a '/' written %2F stays in the primary's name; each part
	// is decoded after. u.EscapedPath is not that text when the path
	// has a character it would escape, such as a space.
	path := strings.Trim(after, "/")
	switch topology {
	case "sentinel":
		name, db, _ := strings.Cut(path, "/")
		if name == "" {
			return o, &ConfigError{Field: "URL", Reason: "a redis+sentinel URL needs the primary name as its path"}
		}
		if name, err = url.PathUnescape(name); err != nil {
			return o, &ConfigError{Field: "URL", Reason: "cannot parse the primary name (write '%' in it as %25)"}
		}
		o.Sentinel = &SentinelOptions{PrimaryName: name, Addrs: addrs, TLS: o.TLS}
		path = db
	case "cluster":
		o.Cluster = &ClusterOptions{}
		o.Endpoints = addrs
	default:
		o.Endpoints = addrs
	}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if p, perr := url.PathUnescape(path); p != "" || perr != nil {
		db, err := strconv.Atoi(p)
		if err != nil || db < 0 {
			return o, &ConfigError{Field: "URL", Reason: "database must be a non-negative number"}
		}
		o.DB = db
	}
	params, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		// Never dropped unnoticed (a password with a ';' or a stray '%'
		// would vanish), nor repeated: the part at fault may be one.
		return o, &ConfigError{Field: "URL", Reason: "cannot parse its parameters (write '&', ';' and '%' in a value as %26, %3B and %25)"}
	}
	for k, vs := range params {
		v := vs[len(vs)-1]
		switch k {
		case "protocol":
			n, err := strconv.Atoi(v)
			if err != nil {
				return o, &ConfigError{Field: "URL protocol", Reason: "must be 2 or 3"}
			}
			o.Protocol = n
		case "client_name":
			o.ClientName = v
		case "read_from":
			p, ok := readPolicies[v]
			if !ok {
				return o, &ConfigError{Field: "URL read_from", Reason: "must be primary, replica, primary-preferred or replica-preferred"}
			}
			o.ReadFrom = p
		case "sentinel_username", "sentinel_password":
			if o.Sentinel == nil {
				return o, &ConfigError{Field: "URL " + k, Reason: "needs redis+sentinel://"}
			}
			if k == "sentinel_username" {
				o.Sentinel.Username = v
			} else {
				o.Sentinel.Password = v
			}
		case "dial_timeout", "command_timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return o, &ConfigError{Field: "URL " + k, Reason: "must be a duration such as 2s"}
			}
			if k == "dial_timeout" {
				o.DialTimeout = d
			} else {
				o.CommandTimeout = d
			}
		default:
			if !echoParam {
				return o, &ConfigError{Field: "URL", Reason: "unknown parameter (write '/', '?' and '#' in a user name or password as %2F, %3F and %23, and '&' in a sentinel_password as %26)"}
			}
			return o, &ConfigError{Field: "URL " + k, Reason: "unknown parameter"}
		}
	}
	if _, err := o.validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && (strings.HasPrefix(ce.Field, "Options.Endpoints") || strings.HasPrefix(ce.Field, "Options.Sentinel.Addrs")) {
			ce.Field = "URL" // the address came from the URL's host and port
		}
		return o, err
	}
	return o, nil
}
