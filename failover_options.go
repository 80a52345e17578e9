package respire

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/respire-go/respire/internal/retry"
)

// Defaults and bounds of [FailoverGroupOptions].
const (
	defaultProbeInterval    = time.Second
	minProbeInterval        = 10 * time.Millisecond
	maxGroupDuration        = time.Hour
	defaultFailureThreshold = 3
	maxFailureThreshold     = 100
	defaultCircuitOpen      = 5 * time.Second
	defaultFailbackGrace    = 10 * time.Second
)

// FailoverGroupOptions configures a [FailoverGroup]. The zero value of
// every field means its documented default; [NewFailoverGroup] rejects
// out-of-range values with a [*ConfigError] naming the field. It is copied
// when the client or group is made, so changing it afterwards has no effect,
// and one value may serve concurrent calls while nobody changes it.
type FailoverGroupOptions struct {
	// RetryPolicy retries an [Execute] operation whose attempt failed with
	// a connection failure (see [Execute]). Defaults to nil: every
	// operation runs once. Members keep their own Options.RetryPolicy,
	// which acts first, inside an attempt.
	RetryPolicy *RetryPolicy
	// ProbeInterval is how often each member is probed with PING, from
	// 10 ms through 1 hour. Defaults to 1 second.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe (and the first connection of a
	// member that could not connect at start). It must be positive and at
	// most ProbeInterval. Defaults to half of ProbeInterval.
	ProbeTimeout time.Duration
	// FailureThreshold is the number of consecutive failed probes that
	// opens a member's circuit, from 1 through 100. Defaults to 3. A
	// member's circuit therefore opens at most
	// FailureThreshold*ProbeInterval + ProbeTimeout after its server stops
	// answering.
	FailureThreshold int
	// CircuitOpenDuration is how long an open circuit stays open before
	// a probe may close it: a member is not probed while its circuit is
	// open; after this duration one probe decides (success closes the
	// circuit, failure keeps it open for another CircuitOpenDuration).
	// At most 1 hour; must not be negative. Defaults to 5 seconds.
	CircuitOpenDuration time.Duration
	// FailbackGrace is how long a member preferred to the active one must
	// stay healthy (its circuit closed) before it becomes active again.
	// It applies only to preempting a healthy active member: when the
	// active member fails, the best healthy member takes over at once.
	// At most 1 hour; [NoFailbackGrace] fails back at once; other negative
	// values are invalid. Defaults to 10 seconds.
	FailbackGrace time.Duration
	// OnSwitch, when set, is called each time the active member changes
	// after NewFailoverGroup returned, with the indexes (into the members
	// given to NewFailoverGroup) of the previous and the new active
	// member; -1 means none. Calls are made one at a time, in the order of
	// the changes, on the group's probe goroutines: OnSwitch must not
	// block and must not call [FailoverGroup.Close]; a panic in OnSwitch
	// is recovered and changes nothing. Defaults to nil.
	OnSwitch func(from, to int)
	// Metrics selects the metric groups the group records (its own retries
	// on respire.command.retries, respire.failover.probes and
	// respire.failover.switches, all in [MetricsResiliency]). Members record
	// their own metrics only as their Options select. Defaults to none.
	Metrics MetricGroups
	// MeterProvider provides the meter "github.com/respire-go/respire"
	// when Metrics selects any group. Defaults to none (nothing is
	// recorded): pass otel.GetMeterProvider() for the global provider.
	MeterProvider metric.MeterProvider
}

// groupConfig is the validated, defaulted form of FailoverGroupOptions.
type groupConfig struct {
	policy    retry.Policy // zero: disabled
	interval  time.Duration
	timeout   time.Duration
	threshold int
	openFor   time.Duration
	grace     time.Duration
	onSwitch  func(from, to int)
	metrics   MetricGroups
	mp        metric.MeterProvider
}

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
		cfg, err := o.validate()
		if err == nil {
			// Connect checks what the hooks return and creates the
			// metric instruments only after validate, while the other
			// members are being dialed: check both here, before any
			// member is dialed, so the error names the member's field
			// (a provider asked twice for an instrument returns it
			// again).
			_, err = newHooks(o.Hooks)
		}
		if err == nil {
			err = (&Client{cfg: cfg}).newMetrics()
		}
		if err != nil {
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
