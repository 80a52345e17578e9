package respire

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/wire"
)

const (
	defaultDialTimeout        = 5 * time.Second
	defaultCommandTimeout     = 5 * time.Second
	defaultHealthTimeout      = 3 * time.Second
	defaultIdlePingInterval   = 15 * time.Second
	defaultBlockingPoolSize   = 32
	defaultMaxPendingCommands = 16384
	defaultMaxPendingBytes    = 64 << 20
	defaultBatchConnections   = 4
	defaultSoloConnections    = 8
	maxLaneConnections        = 16 // BatchConnections and SoloConnections
	minHealthInterval         = 100 * time.Millisecond
	// silenceLimitFactor times HealthTimeout (or CommandTimeout, if
	// longer) is the silence after which a shared connection is retired
	// although the server answers the probes.
	silenceLimitFactor = 10
	// dedicatedIdleTimeout closes a dedicated connection unused this long.
	dedicatedIdleTimeout = 30 * time.Second
	// soloIdleTimeout closes a solo connection unused this long.
	soloIdleTimeout = 30 * time.Second
)

// config is the validated, defaulted form of Options.
type config struct {
	wire           wire.Config
	commandTimeout time.Duration // 0: none
	policy         retry.Policy
	metrics        MetricGroups
	meterProvider  metric.MeterProvider
	hooks          []Hook
	logger         *slog.Logger // nil: none

	blockingPoolSize int

	sentinel     *SentinelOptions // a copy; nil: not Sentinel
	cluster      *ClusterOptions  // a copy with defaults; nil: not Cluster
	readFrom     ReadPolicy
	seeds        []string      // Cluster seeds
	refresh      time.Duration // Cluster periodic refresh; 0: none
	maxRedirects int

	streamProducerID string // validated; Connect fills in the default

	cache *CacheOptions // a copy with defaults; nil: no client-side cache
}

const (
	defaultClusterRefresh = 30 * time.Second
	defaultMaxRedirects   = 16
)

// validateTopology checks the Sentinel, Cluster and ReadFrom options.
func (o *Options) validateTopology(c *config) error {
	if o.Sentinel != nil && o.Cluster != nil {
		return &ConfigError{Field: "Options.Sentinel", Reason: "cannot be set together with Options.Cluster"}
	}
	if o.ReadFrom > ReadReplicaPreferred {
		return &ConfigError{Field: "Options.ReadFrom", Reason: "unknown read policy"}
	}
	if o.ReadFrom != ReadPrimary && o.Sentinel == nil && o.Cluster == nil {
		return &ConfigError{Field: "Options.ReadFrom", Reason: "needs Options.Sentinel or Options.Cluster (a standalone server has no replicas to read from)"}
	}
	c.readFrom = o.ReadFrom
	if s := o.Sentinel; s != nil {
		if s.PrimaryName == "" {
			return &ConfigError{Field: "Options.Sentinel.PrimaryName", Reason: "required"}
		}
		if len(s.Addrs) == 0 {
			return &ConfigError{Field: "Options.Sentinel.Addrs", Reason: "at least one sentinel address is required"}
		}
		for i, a := range s.Addrs {
			if err := validateAddr(a); err != nil {
				return &ConfigError{Field: "Options.Sentinel.Addrs[" + strconv.Itoa(i) + "]", Reason: err.Error()}
			}
		}
		if len(o.Endpoints) != 0 {
			return &ConfigError{Field: "Options.Endpoints", Reason: "must be empty with Options.Sentinel (the sentinels name the servers)"}
		}
		cp := *s
		cp.Addrs = append([]string(nil), s.Addrs...)
		c.sentinel = &cp
	}
	if cl := o.Cluster; cl != nil {
		cp := *cl
		switch cl.RefreshInterval {
		case 0:
			c.refresh = defaultClusterRefresh
		case NoTimeout:
		default:
			if cl.RefreshInterval < time.Second {
				return &ConfigError{Field: "Options.Cluster.RefreshInterval", Reason: "must be at least 1s (or NoTimeout to disable)"}
			}
			c.refresh = cl.RefreshInterval
		}
		switch {
		case cl.MaxRedirects == 0:
			c.maxRedirects = defaultMaxRedirects
		case cl.MaxRedirects < 1 || cl.MaxRedirects > 100:
			return &ConfigError{Field: "Options.Cluster.MaxRedirects", Reason: "must be from 1 through 100"}
		default:
			c.maxRedirects = cl.MaxRedirects
		}
		if o.DB != 0 {
			return &ConfigError{Field: "Options.DB", Reason: "a cluster has only database 0"}
		}
		c.cluster = &cp
		c.seeds = append([]string(nil), o.Endpoints...)
	}
	return nil
}

// dedicatedWire is the configuration of a dedicated connection: a caller
// holds it alone, and a blocking command may rightly keep it silent for
// as long as it blocks, so it has no silence limit and no pending bounds.
// Its health timeout still retires it when the server answers no probe
// either (a partition, a dead host), which is what ends a BLPOP key 0 on
// a dead peer. Idle pings find a dead peer while it waits in the pool;
// while it is lent (Dedicated) they are held (wire.Conn.HoldIdlePing).
func (c *config) dedicatedWire() wire.Config {
	w := c.wire
	w.SilenceLimit = 0
	w.MaxPendingFrames, w.MaxPendingBytes = 0, 0
	w.BatchLanes, w.SoloLanes, w.Crowd = 0, 0, nil
	w.WantID = true // a stopped blocking call is unblocked by id
	// Cached reads travel on the shared connections only.
	w.Tracking, w.OnPush, w.OnTrackingLost = false, nil, nil
	return w
}

// interval validates a health interval option: 0 is def, NoTimeout is
// off (0), anything else at least minHealthInterval.
func interval(field string, v, def time.Duration) (time.Duration, error) {
	switch {
	case v == 0:
		return def, nil
	case v == NoTimeout:
		return 0, nil
	case v < minHealthInterval:
		return 0, &ConfigError{Field: field, Reason: "must be at least 100ms (or NoTimeout to disable)"}
	}
	return v, nil
}

// count validates a bound that must not be negative: 0 is def.
func count(field string, v, def int) (int, error) {
	switch {
	case v < 0:
		return 0, &ConfigError{Field: field, Reason: "must not be negative"}
	case v == 0:
		return def, nil
	}
	return v, nil
}

func (o *Options) validate() (config, error) {
	var c config
	if err := o.validateTopology(&c); err != nil {
		return c, err
	}
	if len(o.Endpoints) == 0 && o.Sentinel == nil {
		reason := "at least one endpoint is required"
		if o.Cluster != nil {
			reason = "at least one cluster seed is required"
		}
		return c, &ConfigError{Field: "Options.Endpoints", Reason: reason}
	}
	for i, ep := range o.Endpoints {
		if err := validateAddr(ep); err != nil {
			return c, &ConfigError{Field: "Options.Endpoints[" + strconv.Itoa(i) + "]", Reason: err.Error()}
		}
	}
	if o.DB < 0 {
		return c, &ConfigError{Field: "Options.DB", Reason: "must not be negative"}
	}
	if strings.ContainsFunc(o.ClientName, func(r rune) bool { return r < '!' || r > '~' }) {
		// Redis refuses the name at every handshake otherwise.
		return c, &ConfigError{Field: "Options.ClientName", Reason: "must be printable ASCII without spaces or newlines, as Redis requires"}
	}
	if o.Protocol != 0 && o.Protocol != 2 && o.Protocol != 3 {
		return c, &ConfigError{Field: "Options.Protocol", Reason: "must be 0 (auto), 2 or 3"}
	}
	if o.DialTimeout < 0 {
		return c, &ConfigError{Field: "Options.DialTimeout", Reason: "must not be negative"}
	}
	if o.CommandTimeout < 0 {
		return c, &ConfigError{Field: "Options.CommandTimeout", Reason: "must not be negative (use NoTimeout)"}
	}
	if o.MaxBulk < 0 {
		return c, &ConfigError{Field: "Options.MaxBulk", Reason: "must not be negative"}
	}
	if err := validateStreamProducerID(o.StreamProducerID); err != nil {
		return c, err
	}
	c.streamProducerID = o.StreamProducerID
	cache, err := validateCache(o.ClientCache, o.Protocol)
	if err != nil {
		return c, err
	}
	c.cache = cache
	if o.Metrics&^allMetricGroups != 0 {
		return c, &ConfigError{Field: "Options.Metrics", Reason: "unknown metric group"}
	}
	addr := ""
	if len(o.Endpoints) > 0 {
		addr = o.Endpoints[0]
	}
	for i, h := range o.Hooks {
		if h == nil {
			return c, &ConfigError{Field: fmt.Sprintf("Options.Hooks[%d]", i), Reason: "nil hook"}
		}
	}
	dial, err := dialHooks(o.Hooks, o.Dialer)
	if err != nil {
		return c, err
	}
	c.wire = wire.Config{
		Addr:        addr,
		Dial:        dial,
		TLS:         o.TLS,
		DialTimeout: o.DialTimeout,
		Username:    o.Username,
		Password:    o.Password,
		DB:          o.DB,
		ClientName:  o.ClientName,
		Proto:       o.Protocol,
		MaxBulk:     o.MaxBulk,
	}
	if c.cache != nil {
		// Invalidations arrive as RESP3 pushes on the tracked connection.
		c.wire.Proto, c.wire.Tracking = 3, true
	}
	if c.wire.DialTimeout == 0 {
		c.wire.DialTimeout = defaultDialTimeout
	}
	switch o.CommandTimeout {
	case 0:
		c.commandTimeout = defaultCommandTimeout
	case NoTimeout:
	default:
		c.commandTimeout = o.CommandTimeout
	}
	if o.RetryPolicy != nil {
		p, err := retry.Compile(retry.Settings(*o.RetryPolicy))
		if err != nil {
			var fe *retry.FieldError
			if errors.As(err, &fe) {
				return c, &ConfigError{Field: fe.Field, Reason: fe.Reason}
			}
			return c, err
		}
		c.policy = p
	}
	c.metrics = o.Metrics
	c.meterProvider = o.MeterProvider
	c.hooks = slices.Clone(o.Hooks)
	c.logger = o.Logger
	if c.wire.HealthTimeout, err = interval("Options.HealthTimeout", o.HealthTimeout, defaultHealthTimeout); err != nil {
		return c, err
	}
	if c.wire.IdlePing, err = interval("Options.IdlePingInterval", o.IdlePingInterval, defaultIdlePingInterval); err != nil {
		return c, err
	}
	if ht := c.wire.HealthTimeout; ht > 0 {
		// Every connection of the client shares the answered probes:
		// dedicated connections blocked at once probe a server together.
		c.wire.Probes = wire.NewProbeShare()
		c.wire.SilenceLimit = NoTimeout // ten times a huge HealthTimeout
		if ht <= NoTimeout/silenceLimitFactor {
			c.wire.SilenceLimit = max(silenceLimitFactor*ht, c.commandTimeout)
		}
	}
	if c.blockingPoolSize, err = count("Options.BlockingPoolSize", o.BlockingPoolSize, defaultBlockingPoolSize); err != nil {
		return c, err
	}
	if c.wire.MaxPendingFrames, err = count("Options.MaxPendingCommands", o.MaxPendingCommands, defaultMaxPendingCommands); err != nil {
		return c, err
	}
	if c.wire.MaxPendingBytes, err = count("Options.MaxPendingBytes", o.MaxPendingBytes, defaultMaxPendingBytes); err != nil {
		return c, err
	}
	if c.wire.BatchLanes, err = lanes("Options.BatchConnections", o.BatchConnections, NoBatchConnections, "NoBatchConnections", defaultBatchConnections); err != nil {
		return c, err
	}
	if c.wire.SoloLanes, err = lanes("Options.SoloConnections", o.SoloConnections, NoSoloConnections, "NoSoloConnections", defaultSoloConnections); err != nil {
		return c, err
	}
	if c.wire.SoloLanes > 0 {
		c.wire.Crowd = new(wire.Crowd) // every node's connections: how few callers share the client
		c.wire.SoloIdleClose = soloIdleTimeout
	}
	return c, nil
}

// lanes validates a count of extra connections per server (field): none
// for the sentinel value, def for 0, else 1 to maxLaneConnections.
func lanes(field string, n, none int, noneName string, def int) (int, error) {
	switch {
	case n == none:
		return 0, nil
	case n == 0:
		return def, nil
	case n < 0 || n > maxLaneConnections:
		return 0, &ConfigError{Field: field, Reason: "must be between 1 and " + strconv.Itoa(maxLaneConnections) + ", or " + noneName}
	}
	return n, nil
}

// validateAddr checks a "host:port" address. Its errors never repeat the
// address: a URL or user:password@host given by mistake holds a password.
func validateAddr(addr string) error {
	switch {
	case strings.Contains(addr, "://"):
		return errors.New("want host:port, not a URL (ParseURL reads a URL into Options)")
	case strings.ContainsRune(addr, '@'):
		return errors.New("want host:port without user information (set Username and Password instead)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New("want host:port: " + ae.Err)
		}
		return errors.New("want host:port")
	}
	if host == "" {
		return errors.New("empty host")
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || strings.Trim(port, "0123456789") != "" {
		return errors.New("port must be from 1 through 65535")
	}
	return nil
}
