package respire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/respire-go/respire/internal/retry"
	"github.com/respire-go/respire/internal/wire"
)

// Options configures a [Client]. The zero value of every field means its
// documented default; [Connect] rejects out-of-range values with a
// [*ConfigError] naming the field. It is copied when the client or group is
// made, so changing it afterwards has no effect, and one value may serve
// concurrent calls while nobody changes it.
type Options struct {
	// Endpoints are "host:port" addresses. A standalone client uses the
	// first one; a Cluster client uses them all as seeds, asking each in
	// turn for the slot map. Required, except with Sentinel, which takes
	// the sentinels' addresses instead and needs no Endpoints.
	Endpoints []string
	// Sentinel makes the client follow the primary a group of Redis
	// Sentinels monitors. Defaults to nil: no Sentinel. It cannot be set
	// together with Cluster.
	Sentinel *SentinelOptions
	// Cluster makes the client a Redis Cluster client: commands go to the
	// node owning their keys' slot. Defaults to nil: not a cluster. A
	// zero ClusterOptions has every default.
	Cluster *ClusterOptions
	// ReadFrom selects where read-only commands go on Sentinel and
	// Cluster clients. Defaults to [ReadPrimary]. A read sent to a replica
	// is never retried; see [ReadPolicy].
	ReadFrom ReadPolicy
	// Username for AUTH; empty uses the server's "default" user. A
	// Username without a Password authenticates with an empty password,
	// which an ACL user with nopass accepts and any other refuses.
	Username string
	// Password for AUTH; empty (with no Username) sends no AUTH. It never
	// appears in errors.
	Password string
	// DB is the database index selected on every connection. Must not be
	// negative, and must be 0 on a Cluster client. Defaults to 0.
	DB int
	// ClientName is sent with CLIENT SETNAME (or HELLO SETNAME). Defaults
	// to none. Like Redis, it accepts printable ASCII ('!' through '~')
	// only: no spaces, control characters or other letters.
	ClientName string
	// Protocol is 2 or 3 to force RESP2 or RESP3. Defaults to 0: HELLO 3,
	// falling back to RESP2 when the server does not know HELLO.
	Protocol int
	// TLS enables TLS with this configuration. Defaults to nil: plain TCP.
	// When ServerName is empty it is taken from the endpoint's host.
	TLS *tls.Config
	// DialTimeout bounds establishing and preparing one connection. Must
	// not be negative. Defaults to 5 seconds.
	DialTimeout time.Duration
	// CommandTimeout is the deadline of a command whose context has none;
	// it spans connection selection, every send and every retry delay.
	// Must not be negative. Defaults to 5 seconds; [NoTimeout] disables it.
	CommandTimeout time.Duration
	// Dialer opens network connections; tests use it to hold or fail
	// dials. It runs on the client's goroutines: a panic in it (or in a
	// dial hook) fails that dial with an error. It must return once ctx
	// ends: DialTimeout, a caller's deadline and Close all end a dial
	// through ctx, and wait for it. Defaults to a net.Dialer.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxBulk is the largest bulk reply accepted, in bytes; larger replies
	// reset the connection with [ErrProtocol]. Must not be negative.
	// Defaults to 512 MiB.
	MaxBulk int64
	// RetryPolicy enables command retries. Defaults to nil: no command is
	// ever resent.
	RetryPolicy *RetryPolicy
	// Metrics selects the metric groups to record. Defaults to none.
	Metrics MetricGroups
	// MeterProvider provides the meter "github.com/respire-go/respire"
	// when Metrics selects any group. Defaults to none (nothing is
	// recorded): pass otel.GetMeterProvider() for the global provider. The
	// client depends only on the OpenTelemetry metric API.
	MeterProvider metric.MeterProvider
	// Hooks observe and wrap dials, commands and batches (see [Hook]);
	// the first is the outermost. Defaults to none, which costs nothing.
	Hooks []Hook
	// Logger receives connection lifecycle events: dial failures,
	// connections lost or retired, topology rediscovery. Defaults to nil:
	// nothing is logged. Passwords are never logged.
	Logger *slog.Logger

	// HealthTimeout retires a connection that owes replies and has
	// received no byte for this long, once a probe (a PING on a new
	// connection, bounded by HealthTimeout too) got no answer either: a
	// slow but live server answers the probe, or the original connection
	// starts receiving, and is left alone. A retired connection's commands
	// fail as connection loss with their own write evidence and a new
	// connection is dialed. At least 100 ms; [NoTimeout] disables the
	// check. Defaults to 3 seconds, so a silent peer is retired after 3
	// to 6 seconds while a server busy for 2 seconds (DEBUG SLEEP 2, a
	// slow script) is never mistaken for a dead one.
	//
	// A connection that died alone (a NAT or a proxy dropped it without
	// a reset) while the server answers the probes is retired too: at
	// once when an answered probe finds the connection's idle PING (see
	// IdlePingInterval) still unanswered, and otherwise once its silence
	// lasts ten HealthTimeouts, or CommandTimeout if that is longer (30
	// seconds by default). That limit applies to the shared and batch
	// connections, where no command may rightly keep a connection silent
	// so long (a write that CLIENT PAUSE WRITE holds longer fails as
	// connection loss that may have run). Dedicated connections (blocking
	// commands, [Client.Dedicated]) have none, since BLPOP with a timeout
	// of 0 is rightly silent for ever (while connections block, their
	// silence makes the client probe the server about once per
	// HealthTimeout, and a probe without an answer fails them): one lent
	// to a caller that dies alone while the server answers probes is
	// found only by TCP keepalive (the default dialer's; not through a
	// proxy that keeps the socket open) or by the caller's context. A
	// finite block time, called in a loop, bounds that wait.
	HealthTimeout time.Duration
	// IdlePingInterval sends a PING on a connection that owes nothing and
	// has been idle this long, so that a dead peer is found (through
	// HealthTimeout) before a caller needs the connection. At least
	// 100 ms; [NoTimeout] disables it. Defaults to 15 seconds.
	IdlePingInterval time.Duration
	// BlockingPoolSize is the most dedicated connections the client opens
	// for blocking commands (BLPOP, XREAD BLOCK, WAIT, ...) and
	// [Client.Dedicated] loans together, one caller per connection at a
	// time. They are dialed on demand and closed after 30 seconds unused;
	// a call that finds every one busy waits within its context (a
	// blocking call made inside a Dedicated callback waits for one other
	// than the callback's: see [Client.Dedicated]). Must not be negative. Defaults to 32 (0 means the default, as for every
	// option).
	BlockingPoolSize int
	// MaxPendingCommands bounds the commands the shared connection holds
	// (queued for writing or awaiting their reply, including those whose
	// callers gave up); a caller that finds it full waits within its
	// context. Must not be negative. Defaults to 16384.
	MaxPendingCommands int
	// MaxPendingBytes bounds the encoded size of those commands, in
	// bytes; a single larger command is sent when nothing else is
	// pending. Must not be negative. Defaults to 64 MiB.
	MaxPendingBytes int
	// BatchConnections is how many connections per server, besides the
	// shared one, carry large batches and transactions: those of 8 KiB or
	// more. Each such unit is still one frame on one connection,
	// interleaved with no other caller's commands; the units take these
	// connections in turn, while smaller units and single commands stay
	// on the shared connection. They are dialed on first use and closed
	// with the client. At most 16; [NoBatchConnections] sends every unit
	// on the shared connection. Defaults to 4: batches of 100 SETs from 64
	// goroutines then run faster than on one connection (see
	// docs/performance.md).
	BatchConnections int
	// StreamProducerID is the IDMP producer ID of the automatic stream
	// idempotency of [Client.XAdd] (used only when RetryPolicy selects
	// connection loss and accepts WriteChecked). Clients may share one,
	// since every call's message ID is random, but Redis counts
	// IDMP-MAXSIZE per producer, so clients sharing it share that window
	// of remembered identities. At most 256 bytes of UTF-8, not blank,
	// without spaces or control characters. Defaults to "respire-" and a
	// random version 4 UUID, new for each [Connect].
	StreamProducerID string
	// ClientCache, when not nil, turns on server-assisted client-side
	// caching for [Client.DoCached] and [Client.GetCached]: every shared
	// connection enables CLIENT TRACKING (OPTIN mode, so only cached reads
	// are tracked), which needs RESP3, and the server's invalidations drop
	// entries as keys change. Protocol must then be 0 or 3. Defaults to
	// nil: no cache, and no tracking.
	ClientCache *CacheOptions
}

// SentinelOptions configures discovery of the primary through Redis
// Sentinel. The data connections use the Options' Username, Password and
// TLS; these fields are for the sentinels themselves. It is copied when the
// client or group is made, so changing it afterwards has no effect, and one
// value may serve concurrent calls while nobody changes it.
type SentinelOptions struct {
	// PrimaryName is the name the sentinels monitor the group under
	// ("mymaster"). Required.
	PrimaryName string
	// Addrs are the sentinels' "host:port" addresses, tried in order.
	// Required. Sentinels the group reports are added as they are learnt.
	Addrs []string
	// Username for AUTH on the sentinels; empty uses "default". Without
	// a Password it authenticates with an empty one, as Options.Username.
	Username string
	// Password for AUTH on the sentinels; empty (with no Username) sends
	// no AUTH.
	Password string
	// TLS for the sentinel connections. Defaults to nil: plain TCP.
	TLS *tls.Config
}

// ClusterOptions configures a Redis Cluster client. It is copied when the
// client or group is made, so changing it afterwards has no effect, and one
// value may serve concurrent calls while nobody changes it.
type ClusterOptions struct {
	// RefreshInterval is how often the slot map is refreshed when nothing
	// (a MOVED reply, a lost node) asked for it sooner; each wait is
	// jittered by up to a fifth. At least 1 second. Defaults to 30
	// seconds; [NoTimeout] disables periodic refreshes.
	RefreshInterval time.Duration
	// MaxRedirects bounds the MOVED and ASK redirects one attempt
	// follows, from 1 through 100. Redirects are not retry attempts; the
	// command's deadline bounds them too. Defaults to 16.
	MaxRedirects int
}

// redactedPassword replaces a password when options are formatted.
const redactedPassword = "[REDACTED]"

// String formats o as fmt's %+v does, with its password replaced by
// "[REDACTED]", so that logging Options never reveals it. (Sentinel
// prints through its own String, which redacts its password too.)
func (o Options) String() string {
	type fields Options // the same fields without the methods
	if o.Password != "" {
		o.Password = redactedPassword
	}
	return fmt.Sprintf("%+v", fields(o))
}

// GoString formats o as fmt's %#v does, with its password replaced by
// "[REDACTED]".
func (o Options) GoString() string {
	type fields Options
	if o.Password != "" {
		o.Password = redactedPassword
	}
	return "respire.Options" + strings.TrimPrefix(fmt.Sprintf("%#v", fields(o)), "respire.fields")
}

// LogValue makes log/slog record o as [Options.String], its password
// redacted, with every handler: the JSON handler would otherwise marshal
// the fields themselves.
func (o Options) LogValue() slog.Value { return slog.StringValue(o.String()) }

// LogValue makes log/slog record s as [SentinelOptions.String], its
// password redacted, with every handler.
func (s SentinelOptions) LogValue() slog.Value { return slog.StringValue(s.String()) }

// String formats s as fmt's %+v does, with its password replaced by
// "[REDACTED]".
func (s SentinelOptions) String() string {
	type fields SentinelOptions
	if s.Password != "" {
		s.Password = redactedPassword
	}
	return fmt.Sprintf("%+v", fields(s))
}

// GoString formats s as fmt's %#v does, with its password replaced by
// "[REDACTED]".
func (s SentinelOptions) GoString() string {
	type fields SentinelOptions
	if s.Password != "" {
		s.Password = redactedPassword
	}
	return "respire.SentinelOptions" + strings.TrimPrefix(fmt.Sprintf("%#v", fields(s)), "respire.fields")
}

// ReadPolicy selects the nodes that serve read-only commands (those the
// catalog marks read-only) on Sentinel and Cluster clients. Writes always
// go to the primary, and so does a Sentinel batch or transaction, reads
// included (a Cluster batch group made only of reads follows the policy). A read a replica serves is never retried: a replica
// may lag, and a resend could observe time going backwards. Its values are
// plain constants, safe for concurrent use.
type ReadPolicy uint8

// Read policies.
const (
	// ReadPrimary sends every command to the primary (the default).
	ReadPrimary ReadPolicy = iota
	// ReadReplica sends reads to a replica, failing when none is known.
	ReadReplica
	// ReadPrimaryPreferred sends reads to the primary, and to a replica
	// only while the primary cannot be reached.
	ReadPrimaryPreferred
	// ReadReplicaPreferred sends reads to a replica when one is known
	// and not down (no live connection and its last dial failed), else to
	// the primary.
	ReadReplicaPreferred
)

// String returns the policy's name.
func (p ReadPolicy) String() string {
	switch p {
	case ReadPrimary:
		return "primary"
	case ReadReplica:
		return "replica"
	case ReadPrimaryPreferred:
		return "primary-preferred"
	case ReadReplicaPreferred:
		return "replica-preferred"
	}
	return "ReadPolicy(" + strconv.Itoa(int(p)) + ")"
}

// NoBatchConnections as [Options.BatchConnections] sends large batches
// and transactions on the shared connection like every other command.
const NoBatchConnections = -1

// NoTimeout as [Options.CommandTimeout] leaves commands without a deadline
// unless their context has one. It also turns off [Options.HealthTimeout],
// [Options.IdlePingInterval] and [ClusterOptions.RefreshInterval], and
// keeps [CacheOptions.TTL] entries until the server invalidates them.
const NoTimeout time.Duration = math.MaxInt64

const (
	defaultDialTimeout        = 5 * time.Second
	defaultCommandTimeout     = 5 * time.Second
	defaultHealthTimeout      = 3 * time.Second
	defaultIdlePingInterval   = 15 * time.Second
	defaultBlockingPoolSize   = 32
	defaultMaxPendingCommands = 16384
	defaultMaxPendingBytes    = 64 << 20
	defaultBatchConnections   = 4
	maxBatchConnections       = 16
	minHealthInterval         = 100 * time.Millisecond
	// silenceLimitFactor times HealthTimeout (or CommandTimeout, if
	// longer) is the silence after which a shared connection is retired
	// although the server answers the probes.
	silenceLimitFactor = 10
	// dedicatedIdleTimeout closes a dedicated connection unused this long.
	dedicatedIdleTimeout = 30 * time.Second
)

// MetricGroups selects groups of metrics. Its values are plain constants,
// safe for concurrent use.
type MetricGroups uint32

// Metric groups.
const (
	// MetricsResiliency records respire.command.retries.
	MetricsResiliency MetricGroups = 1 << iota
	// MetricsCommands records db.client.operation.duration, the duration
	// of each operation by command and outcome (OpenTelemetry database
	// semantic conventions). Unlike the other groups it records on every
	// command: one histogram Record per operation, which with the
	// OpenTelemetry SDK costs about 0.2-0.4 µs of CPU per command under
	// load (docs/performance.md), though it allocates nothing of ours.
	MetricsCommands
	// MetricsConnections records respire.connection.opens,
	// respire.connection.closes, respire.connection.retirements and
	// db.client.connection.wait_time (waits for a pooled dedicated
	// connection).
	MetricsConnections

	allMetricGroups = MetricsResiliency | MetricsCommands | MetricsConnections
)

// RetryPolicy decides which failed commands are resent. Every field's zero
// value means its documented default; the values whose meaning collides
// with Go's zero value have named sentinels ([NoBackoff], [NoJitter],
// [RetryOnNone], and [Never] as the maximum category).
//
// A command is resent only when its failure is selected by RetryableErrors
// and either the transport proved that the frame was never written, or the
// command's category is at most MaxCommandRetryCategory. A watched
// transaction is never resent: [Client.Watch] reruns its whole callback
// instead, only after a run that applied nothing. A RetryPolicy is
// copied by [Connect] and [NewFailoverGroup]; changing it afterwards has
// no effect, and one value may serve concurrent calls while nobody changes
// it.
type RetryPolicy struct {
	// MaxAttempts is the number of sends allowed, including the first one,
	// from 1 through 100. 1 allows no retry. Defaults to 3.
	MaxAttempts int
	// MaxCommandRetryCategory is the riskiest category that may be resent
	// after the command may have run. [Never] disables retries entirely.
	// Defaults to [ReadOnly].
	MaxCommandRetryCategory RetryCategory
	// RetryableErrors selects the failures that are retried; only the five
	// RetryOn flags exist. [RetryOnNone] alone selects nothing. Defaults to
	// all five: connection loss, LOADING, TRYAGAIN, MASTERDOWN, READONLY.
	RetryableErrors RetryableErrors
	// InitialBackoff is the first retry's delay ceiling, at most 1 minute.
	// 0 means the default, 10 ms; no delay at all is said with [NoBackoff]
	// (any negative value).
	InitialBackoff time.Duration
	// MaxBackoff caps the ceiling, which doubles after each attempt. It
	// must be at least InitialBackoff and at most 1 minute. Defaults to 1 s.
	MaxBackoff time.Duration
	// Jitter is the randomized fraction of each delay, finite, above 0
	// through 1: the delay is uniform in [ceiling*(1-Jitter), ceiling].
	// 0 means the default, 1 (from zero to the ceiling); a fraction of 0,
	// always the full ceiling, is said with [NoJitter].
	Jitter float64
}

// RetryableErrors is a set of failures a [RetryPolicy] may retry. Its values
// are plain bit sets, safe for concurrent use.
type RetryableErrors = retry.Errors

// The retryable failures.
const (
	// RetryOnConnectionLoss selects a lost connection or a failed dial.
	RetryOnConnectionLoss = retry.ConnectionLoss
	// RetryOnLoading selects the LOADING reply.
	RetryOnLoading = retry.Loading
	// RetryOnTryAgain selects the TRYAGAIN reply.
	RetryOnTryAgain = retry.TryAgain
	// RetryOnMasterDown selects the MASTERDOWN reply.
	RetryOnMasterDown = retry.MasterDown
	// RetryOnReadOnly selects the READONLY reply.
	RetryOnReadOnly = retry.ReadOnly
	// RetryOnNone selects no failure (the zero value means the default set).
	RetryOnNone = retry.None
	// DefaultRetryableErrors is the default set: all five failures.
	DefaultRetryableErrors = retry.DefaultErrors
)

// Sentinels for retry settings whose meaningful zero is Go's zero value.
const (
	// NoBackoff as [RetryPolicy.InitialBackoff] resends without delay.
	NoBackoff = retry.NoBackoff
	// NoJitter as [RetryPolicy.Jitter] always waits the full ceiling.
	NoJitter = retry.NoJitter
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
	w.BatchLanes = 0
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
	switch n := o.BatchConnections; {
	case n == NoBatchConnections:
	case n < 0 || n > maxBatchConnections:
		return c, &ConfigError{Field: "Options.BatchConnections", Reason: "must be between 1 and 16, or NoBatchConnections"}
	case n == 0:
		c.wire.BatchLanes = defaultBatchConnections
	default:
		c.wire.BatchLanes = n
	}
	return c, nil
}

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
// rediss+cluster:// and rediss+sentinel:// enable TLS (for the sentinels
// too). read_from is primary, replica, primary-preferred or
// replica-preferred. The scheme is case-insensitive. Unknown query
// parameters are errors, and so is a fragment. An IPv6 address is written in brackets ([::1]:6379); a '/',
// '?', '#' or '@' in a user name or password is percent-encoded (%2F,
// %3F, %23, %40), and an error never repeats a password.
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
	echoParam := !strings.ContainsRune(query, '@')
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
	path := strings.Trim(u.Path, "/")
	switch topology {
	case "sentinel":
		name, db, _ := strings.Cut(path, "/")
		if name == "" {
			return o, &ConfigError{Field: "URL", Reason: "a redis+sentinel URL needs the primary name as its path"}
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
	if p := path; p != "" {
		db, err := strconv.Atoi(p)
		if err != nil || db < 0 {
			return o, &ConfigError{Field: "URL", Reason: "database must be a non-negative number"}
		}
		o.DB = db
	}
	for k, vs := range u.Query() {
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
				return o, &ConfigError{Field: "URL", Reason: "unknown parameter (write '/', '?' and '#' in a user name or password as %2F, %3F and %23)"}
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
