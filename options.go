package respire

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
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
	//
	// Besides the commands it calls, the user's ACL must allow those the
	// client sends for the options chosen: SELECT for DB, CLIENT SETNAME
	// for ClientName on RESP2 (HELLO's SETNAME needs nothing more),
	// CLIENT TRACKING for ClientCache, READONLY for replica reads on a
	// Cluster, ROLE on a Sentinel group's data servers, and CLUSTER
	// SHARDS or CLUSTER SLOTS on a Cluster. None of them is skipped when
	// refused: the connection is not made, and the call (or Connect)
	// fails with a [*ConnError] naming the server and the refused
	// command, whose server reply (NOPERM) errors.As finds as a
	// [*ServerError]; it is never retried. A refusal of any other command
	// fails that call alone and leaves its connection in use.
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
	// falling back to RESP2 (AUTH, then the RESP2 handshake) when the
	// server does not know HELLO or its ACL refuses HELLO (NOPERM). A
	// refused password (WRONGPASS) is not tried again.
	Protocol int
	// TLS enables TLS with this configuration. Defaults to nil: plain TCP.
	// When ServerName is empty it is taken from the endpoint's host. Its
	// callbacks (VerifyConnection, GetClientCertificate, ...) run on the
	// client's dial goroutines, like Dialer: a panic in one fails that
	// dial with an error. They must return promptly (a blocked one holds
	// the dial, and Close, which waits for it) and must not call the
	// client's Close.
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
	// client depends only on the OpenTelemetry metric API. Its instruments
	// record on callers' goroutines and on the client's own (dials, a
	// connection's end), so they must not block; a panic in one is
	// recovered and changes no reply.
	MeterProvider metric.MeterProvider
	// Hooks observe and wrap dials, commands and batches (see [Hook]);
	// the first is the outermost. Defaults to none, which costs nothing.
	Hooks []Hook
	// Logger receives connection lifecycle events: dial failures,
	// connections lost or retired, topology rediscovery. Defaults to nil:
	// nothing is logged. Passwords are never logged. Its handler runs on
	// callers' goroutines and on the client's own (dials, a connection's
	// end, discoveries), which [Client.Close] waits for: it must not block (a blocked handler
	// holds a dial or a connection's replacement) nor call Close (it would
	// wait for itself); a panic in it is recovered and changes nothing.
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
	// slow script) is never mistaken for a dead one. A server that
	// answers nobody for longer (CLIENT PAUSE ALL, a command that blocks
	// it) cannot be told from a dead one: raise HealthTimeout above such
	// pauses.
	//
	// A connection that died alone (a NAT or a proxy dropped it without
	// a reset) while the server answers the probes is retired too: at
	// once when an answered probe finds the connection's idle PING (see
	// IdlePingInterval) still unanswered, and otherwise once its silence
	// lasts ten HealthTimeouts, or CommandTimeout if that is longer (30
	// seconds by default). That limit applies to the shared and batch
	// connections, where no command may rightly keep a connection silent
	// so long (a write that CLIENT PAUSE WRITE holds longer fails as
	// connection loss that may have run). A large command still being
	// sent is not silence while the server keeps taking its bytes (at
	// least 256 KiB per limit). A probe answered with BUSY (a script or
	// function running past busy-reply-threshold) restarts the limit:
	// every connection waits for the script. A server with a password
	// answers a probe's PING with NOAUTH before BUSY, so there a script
	// that runs longer than the limit fails as connection loss that may
	// have run; raise CommandTimeout above its run time.
	//
	// Dedicated connections (blocking commands, [Client.Dedicated]) have
	// no such limit, since BLPOP with a timeout of 0 is rightly silent
	// for ever (while connections block, their silence makes the client
	// probe the server about once per HealthTimeout, and a probe without
	// an answer fails them): one lent to a caller that dies alone while
	// the server answers probes is found only by TCP keepalive (the
	// default dialer's; not through a proxy that keeps the socket open)
	// or by the caller's context. A finite block time, called in a loop,
	// bounds that wait.
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
	// MaxPendingCommands bounds the commands each shared (or batch, or
	// solo) connection holds
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
	// on the shared connection (or take a solo one: SoloConnections).
	// They are dialed on first use and closed
	// with the client. At most 16; [NoBatchConnections] sends every unit
	// on the shared connection. Defaults to 4: batches of 100 SETs from 64
	// goroutines then run faster than on one connection (see
	// docs/performance.md).
	BatchConnections int
	// SoloConnections is how many connections per server, besides the
	// shared one, carry single commands and small units while few callers
	// share the client: a caller whose command would wait behind others'
	// replies on the shared connection takes one of these that is idle,
	// writes its command and reads its own reply there, as a client with
	// a connection per caller does, without a goroutine handing the reply
	// over. Once more than a few callers' commands are in flight in the
	// client (more than 16 at a time over its shared connections, every
	// server's together, in the last few hundred commands sent on each),
	// every command stays on a shared connection, where one write carries
	// many commands. They are dialed one at a time, in the background, as
	// callers find every one dialed so far busy; one that no caller took
	// for 30 seconds is closed, and one that ends (a server's idle
	// timeout) is not redialed at once: either is dialed again when
	// callers need it. All are closed with the client. A command whose
	// solo (or batch) connection ended or could not be dialed before it
	// was written goes on the shared connection. A client whose callers
	// cannot read their own replies (over TLS, or with a
	// [Options.ClientCache], whose shared connection reads the server's
	// invalidations) does not use them. Commands of different callers are
	// never ordered by the server in any case; a command abandoned by its
	// context on one connection may run after the same caller's next
	// command on another. At most 16; [NoSoloConnections] keeps every
	// small command on the shared connection. Defaults to 8 (see
	// docs/performance.md).
	SoloConnections int
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
	// connection but a replica's enables CLIENT TRACKING (OPTIN mode, so
	// only cached reads are tracked), which needs RESP3, and the server's invalidations drop
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
// may lag, and a resend could observe time going backwards. A Sentinel
// replica is used only through connections whose handshake found, with
// ROLE, that it follows the current primary with its link up: one that
// follows another primary, or whose link is down or still synchronising,
// fails that dial (its read fails as a lost connection, unsent). The
// replica's primary is compared with the sentinels' as written: ports
// and IP addresses in their canonical forms, host names case aside (a
// replica that names its primary otherwise, such as by a shorter name,
// is refused), and a host name is not compared with an IP address. The
// check runs when a connection to the replica is made; when the
// sentinels name another primary the replicas' connections are closed
// (reads in flight on them fail as lost) and new ones check again. Its
// values are plain constants, safe for concurrent use.
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
	// the primary. A read whose replica refuses a new connection's
	// handshake (an ACL without READONLY, a user the replica lacks) was
	// never sent: that replica is down, and the read goes to another one
	// or to the primary within the same call.
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

// NoSoloConnections as [Options.SoloConnections] keeps every single
// command and small unit on the shared connection, however few callers
// share it.
const NoSoloConnections = -1

// NoTimeout as [Options.CommandTimeout] leaves commands without a deadline
// unless their context has one. It also turns off [Options.HealthTimeout],
// [Options.IdlePingInterval] and [ClusterOptions.RefreshInterval], and
// keeps [CacheOptions.TTL] entries until the server invalidates them.
const NoTimeout time.Duration = math.MaxInt64

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
