package respire

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/respire-go/respire/internal/retry"
)

// validate checks the options and applies their defaults.
func (o *FailoverGroupOptions) validate() (groupConfig, error) {
	c := groupConfig{onSwitch: o.OnSwitch, metrics: o.Metrics, mp: o.MeterProvider}
	bad := func(field, reason string) (groupConfig, error) {
		return groupConfig{}, &ConfigError{Field: "FailoverGroupOptions." + field, Reason: reason}
	}
	if o.RetryPolicy != nil {
		p, err := retry.Compile(retry.Settings(*o.RetryPolicy))
		if err != nil {
			var fe *retry.FieldError
			if errors.As(err, &fe) {
				return groupConfig{}, &ConfigError{Field: "FailoverGroupOptions." + fe.Field, Reason: fe.Reason}
			}
			return groupConfig{}, err
		}
		c.policy = p
	}
	switch {
	case o.ProbeInterval == 0:
		c.interval = defaultProbeInterval
	case o.ProbeInterval < minProbeInterval || o.ProbeInterval > maxGroupDuration:
		return bad("ProbeInterval", "must be from 10ms through 1h (0 means the default, 1s)")
	default:
		c.interval = o.ProbeInterval
	}
	switch {
	case o.ProbeTimeout == 0:
		c.timeout = c.interval / 2
	case o.ProbeTimeout < 0 || o.ProbeTimeout > c.interval:
		return bad("ProbeTimeout", "must be positive and at most ProbeInterval (0 means half of ProbeInterval)")
	default:
		c.timeout = o.ProbeTimeout
	}
	switch {
	case o.FailureThreshold == 0:
		c.threshold = defaultFailureThreshold
	case o.FailureThreshold < 1 || o.FailureThreshold > maxFailureThreshold:
		return bad("FailureThreshold", "must be from 1 through 100 (0 means the default, 3)")
	default:
		c.threshold = o.FailureThreshold
	}
	switch {
	case o.CircuitOpenDuration == 0:
		c.openFor = defaultCircuitOpen
	case o.CircuitOpenDuration < 0 || o.CircuitOpenDuration > maxGroupDuration:
		return bad("CircuitOpenDuration", "must be positive and at most 1h (0 means the default, 5s)")
	default:
		c.openFor = o.CircuitOpenDuration
	}
	switch {
	case o.FailbackGrace == 0:
		c.grace = defaultFailbackGrace
	case o.FailbackGrace == NoFailbackGrace:
		c.grace = 0
	case o.FailbackGrace < 0 || o.FailbackGrace > maxGroupDuration:
		return bad("FailbackGrace", "must be positive and at most 1h, or NoFailbackGrace (0 means the default, 10s)")
	default:
		c.grace = o.FailbackGrace
	}
	switch {
	case o.Metrics&^allMetricGroups != 0:
		return bad("Metrics", "unknown metric group")
	case o.Metrics&^MetricsResiliency != 0:
		return bad("Metrics", "a group records MetricsResiliency only (its members record their own metrics as their Options select)")
	}
	return c, nil
}

// validateMembers validates every member's Options (the errors name the
// member: "members[1].Options.DialTimeout"), rejects two members sharing an
// address, and returns private copies.
func validateMembers(members []FailoverMember) ([]*groupMember, error) {
	if len(members) == 0 {
		return nil, &ConfigError{Field: "members", Reason: "at least one member is required"}
	}
	seen := map[string]int{}
	out := make([]*groupMember, len(members))
	for i, fm := range members {
		field := "members[" + strconv.Itoa(i) + "]"
		o := copyOptions(fm.Options)
		if _, err := o.validate(); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				return nil, &ConfigError{Field: field + ".Options." + strings.TrimPrefix(ce.Field, "Options."), Reason: ce.Reason}
			}
			return nil, err
		}
		for _, k := range memberKeys(&o) {
			if j, dup := seen[k]; dup && j != i {
				return nil, &ConfigError{Field: field + ".Options",
					Reason: "address " + k + " is also used by members[" + strconv.Itoa(j) + "]: the members of a failover group must be distinct servers"}
			}
			seen[k] = i
		}
		out[i] = &groupMember{index: i, label: memberLabel(&o), priority: fm.Priority, opts: o}
	}
	return out, nil
}

// copyOptions copies o deeply enough that the caller changing its slices
// or pointed-to settings cannot change the member's later connections.
func copyOptions(o Options) Options {
	o.Endpoints = append([]string(nil), o.Endpoints...)
	if o.Sentinel != nil {
		s := *o.Sentinel
		s.Addrs = append([]string(nil), s.Addrs...)
		s.TLS = s.TLS.Clone()
		o.Sentinel = &s
	}
	if o.Cluster != nil {
		cl := *o.Cluster
		o.Cluster = &cl
	}
	if o.RetryPolicy != nil {
		p := *o.RetryPolicy
		o.RetryPolicy = &p
	}
	if o.ClientCache != nil {
		cc := *o.ClientCache
		o.ClientCache = &cc
	}
	o.Hooks = slices.Clone(o.Hooks)
	o.TLS = o.TLS.Clone()
	return o
}

// memberKeys returns the addresses that identify o's servers, normalized
// (host lowercased, an IP address and the port in their canonical forms):
// every endpoint, or every sentinel with the primary's name. Names that
// resolve to the same address ("localhost" and "127.0.0.1") are not
// recognized as the same.
func memberKeys(o *Options) []string {
	norm := func(addr string) string {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return strings.ToLower(addr)
		}
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String()
		}
		if n, err := strconv.Atoi(port); err == nil {
			port = strconv.Itoa(n)
		}
		return net.JoinHostPort(strings.ToLower(host), port)
	}
	var keys []string
	if s := o.Sentinel; s != nil {
		for _, a := range s.Addrs {
			keys = append(keys, s.PrimaryName+"@"+norm(a))
		}
		return keys
	}
	for _, a := range o.Endpoints {
		keys = append(keys, norm(a))
	}
	return keys
}

// memberLabel names a member in errors, statuses and metrics.
func memberLabel(o *Options) string {
	if s := o.Sentinel; s != nil {
		return s.PrimaryName + "@" + s.Addrs[0]
	}
	return o.Endpoints[0]
}
