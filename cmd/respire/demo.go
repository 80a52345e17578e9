package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

// maxTries bounds how many times a scenario runs when other clients of a
// real server disturb its INFO commandstats delta.
const maxTries = 3

// keyPrefix prefixes every key the demo touches; each scenario deletes its
// key before and after it runs.
const keyPrefix = "respire:demo:"

// runDemoCommand runs demo with its command line args (the word "demo"
// removed) and returns the exit code.
func runDemoCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	d := newDemoFlags()
	rest, code, ok := parse("demo", &d.conn, args, stderr, false, d.register)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "respire demo: unexpected arguments %q\n", rest)
		return exitUsage
	}
	passed, err := runDemo(ctx, stdout, d, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "respire demo: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitFail
	}
	if !passed {
		fmt.Fprintln(stderr, "respire demo: some scenarios did not behave as specified (see the CHECK column)")
		return exitFail
	}
	return exitOK
}

// usageError is a demo error caused by the command line.
type usageError struct{ error }

// demoEnv is where the scenarios run: fault proxies in front of the
// servers, a client template whose connections go through them, a direct
// client for setup and inspection, and the servers' own execution counts.
type demoEnv struct {
	desc   string
	opts   respire.Options // clients of the scenarios, through the proxies
	direct *respire.Client // bypasses the proxies
	// node returns the node serving key: the Sentinel primary, the
	// Cluster primary owning the key's slot, or the one server.
	node func(ctx context.Context, key string) (*demoNode, error)
	// executed returns how many times node ran command so far.
	executed func(ctx context.Context, node *demoNode, command string) (int64, error)
	// shared reports whether executed counts other clients' commands too
	// (INFO commandstats is server-wide).
	shared bool
	// showNode adds a node line under each row: on a topology each key has
	// a node.
	showNode bool
	close    func()
}

// demoNode is one server as the demo sees it: its address, the fault
// proxy its client connections go through, and a direct client that reads
// its INFO commandstats (nil for the embedded server).
type demoNode struct {
	addr  string
	proxy *respiretest.Proxy
	info  *respire.Client
}

// newEmbeddedEnv starts the kit's embedded server (miniredis behind a fault
// proxy on 127.0.0.1) and counts executions at the proxy's hop to the
// engine.
func newEmbeddedEnv(ctx context.Context, opts respire.Options) (*demoEnv, error) {
	srv, err := respiretest.StartServer()
	if err != nil {
		return nil, err
	}
	// The embedded server has no users or passwords.
	opts.Username, opts.Password = "", ""
	direct := opts
	direct.Endpoints = []string{"miniredis.engine:6379"}
	direct.Dialer = func(context.Context, string, string) (net.Conn, error) { return srv.Engine().Dial() }
	dc, err := respire.Connect(ctx, direct)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("connect to the embedded engine: %w", err)
	}
	opts.Endpoints = []string{srv.Addr()}
	node := &demoNode{addr: srv.Addr(), proxy: srv.Proxy}
	return &demoEnv{
		desc:   "embedded server (miniredis behind the respiretest fault proxy); EXECUTED counts the frames the proxy forwarded to the engine",
		opts:   opts,
		direct: dc,
		node:   func(context.Context, string) (*demoNode, error) { return node, nil },
		executed: func(_ context.Context, _ *demoNode, command string) (int64, error) {
			return int64(srv.Executed(command)), nil
		},
		close: func() {
			dc.Close()
			srv.Close()
		},
	}, nil
}

// errNotLoopback explains why the demo refuses other addresses.
const errNotLoopback = "the demo writes keys and injects faults, so it only runs against a loopback address such as 127.0.0.1"

// checkLoopback reports an error when addr is not host:port with a
// loopback IP address as its host.
// addr is not repeated when it holds a URL or user information, which may
// hold a password.
func checkLoopback(addr string) error {
	switch {
	case strings.Contains(addr, "://"):
		return errors.New("want host:port, not a URL (-u takes a redis:// URL)")
	case strings.ContainsRune(addr, '@'):
		return errors.New("want host:port without user information (use --user and -a, or set " + passwordEnv + ")")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port", addr)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address: %s", addr, errNotLoopback)
	}
	return nil
}

// newRealEnv places a fault proxy in front of the server at opts'
// endpoint, which must be a loopback address, and counts executions with
// INFO commandstats deltas read directly from the server.
func newRealEnv(ctx context.Context, opts respire.Options) (*demoEnv, error) {
	addr := opts.Endpoints[0]
	if err := checkLoopback(addr); err != nil {
		return nil, usageError{fmt.Errorf("--addr %w", err)}
	}
	dc, err := respire.Connect(ctx, opts)
	if err != nil {
		return nil, connectError(err, opts)
	}
	p, err := respiretest.NewProxy(addr)
	if err != nil {
		dc.Close()
		return nil, err
	}
	opts.Endpoints = []string{p.Addr()}
	node := &demoNode{addr: addr, proxy: p, info: dc}
	return &demoEnv{
		desc:     "the server at " + addr + " behind a respiretest fault proxy; EXECUTED is the delta of its INFO commandstats calls",
		opts:     opts,
		direct:   dc,
		node:     func(context.Context, string) (*demoNode, error) { return node, nil },
		executed: nodeCalls,
		shared:   true,
		close: func() {
			p.Close()
			dc.Close()
		},
	}, nil
}

// connectError is the error of a failed connection to the demo's server,
// saying why and where as the other commands do ([describeConnectError]),
// for "respire demo: " to precede.
func connectError(err error, opts respire.Options) error {
	return errors.New(strings.TrimPrefix(describeConnectError(err, opts), "respire: "))
}

// nodeCalls counts command in node's INFO commandstats.
func nodeCalls(ctx context.Context, node *demoNode, command string) (int64, error) {
	return commandCalls(ctx, node.info, command)
}

// loopbackDial dials addr when it is a loopback address: the nodes a
// Sentinel or a Cluster names are checked like --addr.
func loopbackDial(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, fmt.Errorf("respire demo: node %w", err)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// interposer is the scenario clients' Options.Dialer on a topology. The
// sentinels and the cluster report the nodes' real addresses, so the
// client cannot be pointed at a proxy: instead the dialer gives every node
// address a fault proxy of its own, created at its first dial, and dials
// that proxy. Addresses in direct (the sentinels) are dialed as they are.
type interposer struct {
	direct map[string]bool

	mu      sync.Mutex
	closed  bool
	proxies map[string]*respiretest.Proxy
}

// newInterposer returns an interposer that dials the addresses direct
// (the sentinels) without a proxy.
func newInterposer(direct []string) *interposer {
	ip := &interposer{direct: map[string]bool{}, proxies: map[string]*respiretest.Proxy{}}
	for _, a := range direct {
		ip.direct[a] = true
	}
	return ip
}

// proxy returns the proxy in front of addr, starting it if needed.
func (ip *interposer) proxy(addr string) (*respiretest.Proxy, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, fmt.Errorf("respire demo: node %w", err)
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return nil, errors.New("respire demo: the demo is over")
	}
	if p := ip.proxies[addr]; p != nil {
		return p, nil
	}
	p, err := respiretest.NewProxy(addr)
	if err != nil {
		return nil, err
	}
	ip.proxies[addr] = p
	return p, nil
}

// dial is the Options.Dialer of the scenario clients.
func (ip *interposer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if ip.direct[addr] {
		return loopbackDial(ctx, network, addr)
	}
	p, err := ip.proxy(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, p.Addr())
}

// close closes every proxy the interposer started.
func (ip *interposer) close() {
	ip.mu.Lock()
	ip.closed = true
	ps := slices.Collect(maps.Values(ip.proxies))
	ip.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
}

// topologyEnv is the state of a Sentinel or Cluster demo.
type topologyEnv struct {
	kind  string   // topoSentinel or topoCluster
	addrs []string // the sentinels, or the cluster seeds
	name  string   // Sentinel: the primary's name
	opts  respire.Options
	ip    *interposer

	mu    sync.Mutex
	infos map[string]*respire.Client // direct standalone clients by address
}

// newTopologyEnv connects to a Sentinel group (addrs are the sentinels)
// or a Cluster (addrs are seeds). The scenario clients are Sentinel or
// Cluster clients whose Dialer interposes a fault proxy on every data node
// they dial; the direct client is the same kind of client without the
// proxies. EXECUTED is the INFO commandstats delta of the node serving
// the scenario's key, read on a standalone connection of its own.
func newTopologyEnv(ctx context.Context, kind string, addrs []string, name string, opts respire.Options) (*demoEnv, error) {
	for _, a := range addrs {
		if err := checkLoopback(a); err != nil {
			return nil, usageError{fmt.Errorf("--addr %w", err)}
		}
	}
	te := &topologyEnv{kind: kind, addrs: addrs, name: name, opts: opts, infos: map[string]*respire.Client{}}
	var desc string
	switch kind {
	case topoSentinel:
		opts.Endpoints = nil
		opts.Sentinel = &respire.SentinelOptions{PrimaryName: name, Addrs: addrs}
		te.ip = newInterposer(addrs)
		desc = fmt.Sprintf("the Sentinel group %q (sentinels %s; Options.Sentinel); the primary's connections go through a respiretest fault proxy (Options.Dialer maps its address to the proxy); EXECUTED is the delta of the primary's INFO commandstats calls",
			name, strings.Join(addrs, ","))
	case topoCluster:
		opts.Endpoints = addrs
		opts.Cluster = &respire.ClusterOptions{}
		te.ip = newInterposer(nil)
		desc = fmt.Sprintf("the Cluster seeded by %s (Options.Cluster); every node's connections go through a respiretest fault proxy of its own (Options.Dialer maps each node's address to its proxy); EXECUTED is the delta of the INFO commandstats calls of the primary owning the key's slot (its node line)",
			strings.Join(addrs, ","))
	}
	direct := opts
	direct.Dialer = loopbackDial
	dc, err := respire.Connect(ctx, direct)
	if err != nil {
		te.ip.close()
		if errors.Is(err, respire.ErrInvalidConfig) {
			return nil, usageError{err} // --db on a cluster, an unknown --primary-name
		}
		return nil, connectError(err, direct)
	}
	opts.Dialer = te.ip.dial
	return &demoEnv{
		desc:     desc,
		opts:     opts,
		direct:   dc,
		node:     te.node,
		executed: nodeCalls,
		shared:   true,
		showNode: true,
		close: func() {
			dc.Close()
			te.mu.Lock()
			for _, c := range te.infos {
				c.Close()
			}
			clear(te.infos)
			te.mu.Unlock()
			te.ip.close()
		},
	}, nil
}

// standalone returns a direct standalone client of the server at addr:
// for a data node with the demo's credentials, for a sentinel without.
func (te *topologyEnv) standalone(ctx context.Context, addr string, sentinel bool) (*respire.Client, error) {
	te.mu.Lock()
	defer te.mu.Unlock()
	key := addr
	if sentinel {
		key = "sentinel " + addr
	}
	if c := te.infos[key]; c != nil {
		return c, nil
	}
	o := respire.Options{
		Endpoints:      []string{addr},
		Protocol:       te.opts.Protocol,
		DialTimeout:    te.opts.DialTimeout,
		CommandTimeout: te.opts.CommandTimeout,
		Dialer:         loopbackDial,
	}
	if !sentinel {
		o.Username, o.Password, o.DB = te.opts.Username, te.opts.Password, te.opts.DB
	}
	c, err := respire.Connect(ctx, o)
	if err != nil {
		return nil, err
	}
	te.infos[key] = c
	return c, nil
}

// node returns the node serving key now: the primary the sentinels name,
// or the cluster primary owning the key's slot.
func (te *topologyEnv) node(ctx context.Context, key string) (*demoNode, error) {
	var addr string
	var err error
	if te.kind == topoSentinel {
		addr, err = te.sentinelPrimary(ctx)
	} else {
		addr, err = te.clusterOwner(ctx, key)
	}
	if err != nil {
		return nil, err
	}
	p, err := te.ip.proxy(addr)
	if err != nil {
		return nil, err
	}
	info, err := te.standalone(ctx, addr, false)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return &demoNode{addr: addr, proxy: p, info: info}, nil
}

// sentinelPrimary asks the sentinels, in order, for the primary's address.
func (te *topologyEnv) sentinelPrimary(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range te.addrs {
		c, err := te.standalone(ctx, s, true)
		if err == nil {
			var r respire.Reply
			if r, err = c.Do(ctx, respire.NewCommand("SENTINEL"), "GET-MASTER-ADDR-BY-NAME", te.name); err == nil {
				if e := r.Elements(); len(e) == 2 {
					host, herr := e[0].String()
					port, perr := e[1].String()
					if herr == nil && perr == nil {
						return net.JoinHostPort(host, port), nil
					}
				}
				err = fmt.Errorf("unexpected reply %v", r.Value())
			}
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", s, err))
	}
	return "", fmt.Errorf("no sentinel named the primary %q: %w", te.name, errors.Join(errs...))
}

// clusterOwner finds the primary owning key's slot: a seed that serves the
// key answers EXISTS, any other node answers MOVED with the owner.
func (te *topologyEnv) clusterOwner(ctx context.Context, key string) (string, error) {
	var errs []error
	for _, s := range te.addrs {
		c, err := te.standalone(ctx, s, false)
		if err == nil {
			if _, err = c.Do(ctx, respire.NewCommand("EXISTS"), key); err == nil {
				return s, nil
			}
			var se *respire.ServerError
			if errors.As(err, &se) && se.Code == "MOVED" {
				if f := strings.Fields(se.Message); len(f) == 3 {
					host, port, serr := net.SplitHostPort(f[2])
					if serr == nil {
						if host == "" {
							host, _, _ = net.SplitHostPort(s)
						}
						return net.JoinHostPort(host, port), nil
					}
				}
			}
		}
		errs = append(errs, fmt.Errorf("node %s: %w", s, err))
	}
	return "", fmt.Errorf("no seed named the owner of %q: %w", key, errors.Join(errs...))
}

// commandCalls returns the calls count of command in INFO commandstats.
func commandCalls(ctx context.Context, c *respire.Client, command string) (int64, error) {
	r, err := c.Do(ctx, catalog.Server.INFO(), "commandstats")
	if err != nil {
		return 0, err
	}
	info, err := r.String()
	if err != nil {
		return 0, err
	}
	return parseCommandCalls(info, command)
}

// parseCommandCalls finds "cmdstat_<command>:calls=N,..." in an INFO
// commandstats reply; a command the server never ran counts 0.
func parseCommandCalls(info, command string) (int64, error) {
	prefix := "cmdstat_" + strings.ToLower(command) + ":"
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: bad calls in %q", line)
				}
				return n, nil
			}
		}
		return 0, fmt.Errorf("INFO commandstats: no calls in %q", line)
	}
	return 0, nil
}

// outcome is what a scenario's call returned.
type outcome struct {
	value string // rendered value, when err is nil
	err   error
}

// scenario is one row of the demo.
type scenario struct {
	id       string
	command  string // command name, for the server's counts and the proxy's rules
	display  string // the command as shown, with "key" for the key
	category respire.RetryCategory
	policy   respire.RetryPolicy
	policyS  string
	fault    respiretest.Action
	times    int // frames the fault applies to
	faultS   string
	setup    func(ctx context.Context, c *respire.Client, key string) error
	call     func(ctx context.Context, c *respire.Client, key string) outcome
	// inspect reads the key's state after the call, for the note.
	inspect func(ctx context.Context, c *respire.Client, key string) (string, error)
	// check returns what differs from the specified behaviour, or "".
	check func(o outcome, state string) string
	// sends, executed and retries are the specified counts; retries by
	// outcome (attempted, succeeded, exhausted).
	sends, executed int64
	retries         map[string]int64
	note            func(state string) string
}

// getValue is a scenario call: GET key.
func getValue(ctx context.Context, c *respire.Client, key string) outcome {
	v, err := c.Get(ctx, key)
	return outcome{value: strconv.Quote(v), err: err}
}

// incrValue is a scenario call: INCR key.
func incrValue(ctx context.Context, c *respire.Client, key string) outcome {
	n, err := c.Incr(ctx, key)
	return outcome{value: strconv.FormatInt(n, 10), err: err}
}

// setValue returns a scenario setup that sets the key to value.
func setValue(value string) func(ctx context.Context, c *respire.Client, key string) error {
	return func(ctx context.Context, c *respire.Client, key string) error { return c.Set(ctx, key, value) }
}

// readValue returns the key's value, for a scenario's note.
func readValue(ctx context.Context, c *respire.Client, key string) (string, error) {
	v, err := c.Get(ctx, key)
	if errors.Is(err, respire.ErrNil) {
		return "(nil)", nil
	}
	return strconv.Quote(v), err
}

// wantValue checks a successful call that returned want.
func wantValue(want string) func(outcome, string) string {
	return func(o outcome, _ string) string {
		if o.err != nil {
			return "want " + want + ", got error"
		}
		if o.value != want {
			return "got " + o.value + ", want " + want
		}
		return ""
	}
}

// scenarios returns the demo's scenarios, each with its specified outcome.
func scenarios() []scenario {
	return []scenario{
		{
			id: "a", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(string) string {
				return "GET ran but its reply was lost; read_only is within the default maximum: resent"
			},
		},
		{
			id: "b", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				var ce *respire.ConnError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want a connection error, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &ce) || !errors.Is(o.err, respire.ErrConnectionLost):
					return "want *respire.ConnError"
				case !respire.MayHaveExecuted(o.err):
					return "MayHaveExecuted says the INCR cannot have run"
				case !strings.Contains(o.err.Error(), "may have been executed"):
					return "error does not say the INCR may have run"
				case state != `"11"`:
					return "value " + state + ", want \"11\""
				}
				return ""
			},
			sends: 1, executed: 1, retries: map[string]int64{},
			note: func(state string) string {
				return "not resent: write_accumulating is above the default maximum read_only; the INCR did run: 10 -> " + state
			},
		},
		{
			id: "c", command: "INCR", display: "INCR key", category: respire.WriteAccumulating,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteAccumulating},
			policyS: "max write_accumulating",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			setup:   setValue("10"),
			call:    incrValue,
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("12")(o, state); s != "" {
					return s
				}
				if state != `"12"` {
					return "value " + state + ", want \"12\""
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the caller accepted duplicates: resent, the INCR ran twice: 10 -> " + state
			},
		},
		{
			id: "d", command: "SET", display: "SET key first NX", category: respire.WriteChecked,
			policy:  respire.RetryPolicy{MaxCommandRetryCategory: respire.WriteChecked},
			policyS: "max write_checked",
			fault:   respiretest.DropAfterForward, faultS: "reply lost",
			call: func(ctx context.Context, c *respire.Client, key string) outcome {
				r, err := c.SetWithOptions(ctx, key, "first", respire.SetOptions{Condition: respire.SetIfNotExists})
				if r.Written {
					return outcome{value: "set", err: err}
				}
				return outcome{value: "not set", err: err}
			},
			inspect: readValue,
			check: func(o outcome, state string) string {
				if s := wantValue("not set")(o, state); s != "" {
					return s
				}
				if state != `"first"` {
					return "value " + state + `, want "first"`
				}
				return ""
			},
			sends: 2, executed: 2, retries: map[string]int64{"attempted": 1, "succeeded": 1},
			note: func(state string) string {
				return "the first SET NX wrote the key (now " + state + ") but its reply was lost; the resend re-checked NX and reported \"not set\""
			},
		},
		{
			id: "e", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{MaxAttempts: 5}, policyS: "default, MaxAttempts 5",
			fault: respiretest.Inject(respiretest.ErrLoading), times: 3, faultS: "LOADING x3",
			setup: setValue("hello"),
			call:  getValue,
			check: wantValue(`"hello"`),
			sends: 4, executed: 1, retries: map[string]int64{"attempted": 3, "succeeded": 1},
			note: func(string) string {
				return "the proxy answered LOADING 3 times, backoff (ceilings 10, 20, 40 ms) absorbed the burst; GET ran once"
			},
		},
		{
			id: "f", command: "GET", display: "GET key", category: respire.ReadOnly,
			policy: respire.RetryPolicy{}, policyS: "default",
			fault: respiretest.Inject(respiretest.ErrBusy), faultS: "BUSY",
			setup: setValue("hello"),
			call:  getValue,
			check: func(o outcome, _ string) string {
				var se *respire.ServerError
				var re *respire.RetryError
				switch {
				case o.err == nil:
					return "want BUSY, got " + o.value
				case errors.As(o.err, &re):
					return "resent: " + strconv.Itoa(re.Attempts) + " attempts"
				case !errors.As(o.err, &se) || se.Code != "BUSY":
					return "want a BUSY *respire.ServerError"
				}
				return ""
			},
			sends: 1, executed: 0, retries: map[string]int64{},
			note: func(string) string {
				return "BUSY is not a selectable failure: never resent"
			},
		},
	}
}

// row is a scenario's result as printed.
type row struct {
	sc       *scenario
	result   string
	sends    int64
	executed int64
	retries  map[string]int64
	category string // the category attribute of the recorded retries
	elapsed  time.Duration
	// disturbed reports that the server ran more of the command than the
	// proxy forwarded for the scenario's key: other clients ran it too.
	disturbed bool
	state     string
	node      string // the address of the key's server
	problems  []string
}

// Topologies of --topology.
const (
	topoStandalone = "standalone"
	topoSentinel   = "sentinel"
	topoCluster    = "cluster"
)

// defaultPrimaryName is the --primary-name default: the name the test
// script's sentinels monitor.
const defaultPrimaryName = "respire-primary"

// demoFlags are demo's flags: the connection flags, --topology and
// --primary-name.
type demoFlags struct {
	conn        connFlags
	topology    string
	primaryName nameFlag
}

// nameFlag is a string flag that knows whether it was given.
type nameFlag struct {
	value string
	set   bool
}

// String returns the value, for the flag package.
func (n *nameFlag) String() string {
	if n == nil {
		return ""
	}
	return n.value
}

// Set records the value and that it was given.
func (n *nameFlag) Set(s string) error {
	n.value, n.set = s, true
	return nil
}

// newDemoFlags returns demo's flags with their defaults.
func newDemoFlags() *demoFlags {
	return &demoFlags{topology: topoStandalone, primaryName: nameFlag{value: defaultPrimaryName}}
}

// register adds --topology and --primary-name to fs.
func (d *demoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.topology, "topology", topoStandalone,
		"`kind` of deployment at --addr: standalone, sentinel (--addr is a comma-separated list of sentinels) or cluster (--addr is a comma-separated list of seed nodes)")
	fs.Var(&d.primaryName, "primary-name", "with --topology sentinel: the `name` the sentinels monitor the primary under")
}

// runDemo runs the scenarios against the embedded server (no --addr), or
// through fault proxies in front of the standalone server, the Sentinel
// group or the Cluster at --addr, and writes the table to w. It reports
// whether every scenario behaved as specified; an error means the demo
// could not run.
func runDemo(ctx context.Context, w io.Writer, d *demoFlags, getenv func(string) string) (bool, error) {
	env, err := newEnv(ctx, d, getenv)
	if err != nil {
		return false, err
	}
	defer env.close()
	return runScenarios(ctx, w, env, scenarios())
}

// newEnv returns the environment the flags describe: the embedded server
// when --addr is empty, else the standalone server, Sentinel group or
// Cluster at --addr.
func newEnv(ctx context.Context, d *demoFlags, getenv func(string) string) (*demoEnv, error) {
	opts, err := d.conn.options(getenv)
	if err != nil {
		return nil, usageError{err}
	}
	if opts.TLS != nil {
		return nil, usageError{errors.New("the demo does not run over TLS: its fault proxies read the frames")}
	}
	if opts.Sentinel != nil || opts.Cluster != nil {
		return nil, usageError{errors.New("-u: the demo takes a redis:// URL; for a Sentinel group or a Cluster use --topology and --addr")}
	}
	topology := d.topology
	if topology == "" {
		topology = topoStandalone
	}
	if d.primaryName.set && topology != topoSentinel {
		return nil, usageError{errors.New("--primary-name needs --topology sentinel")}
	}
	switch topology {
	case topoStandalone:
		if d.conn.addr == "" {
			return newEmbeddedEnv(ctx, opts)
		}
		return newRealEnv(ctx, opts)
	case topoSentinel, topoCluster:
		if d.conn.addr == "" {
			return nil, usageError{fmt.Errorf("--topology %s needs --addr (the embedded server is a standalone server)", topology)}
		}
		var addrs []string
		for a := range strings.SplitSeq(d.conn.addr, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			return nil, usageError{fmt.Errorf("--addr %q: want host:port[,host:port...]", d.conn.addr)}
		}
		if topology == topoSentinel && d.primaryName.value == "" {
			return nil, usageError{errors.New("--primary-name must not be empty")}
		}
		return newTopologyEnv(ctx, topology, addrs, d.primaryName.value, opts)
	}
	return nil, usageError{fmt.Errorf("--topology must be standalone, sentinel or cluster, not %q", d.topology)}
}

// maxWidth is the widest line the demo writes: the table and its details
// fit in a 120-column terminal.
const maxWidth = 120

// detailIndent and detailLabel lay out the lines under a table row:
// the indent, then a label padded to detailLabel columns, then the text,
// wrapped with continuation lines indented past the label.
const (
	detailIndent = "    "
	detailLabel  = 9
)

// runScenarios runs scs in env and writes the table to w; see [runDemo].
// Each row holds the short columns; the longer facts (the key's node, the
// call's result, the retries counted, the note and why a check failed or
// measured again) follow on indented lines under it, wrapped to fit
// [maxWidth].
func runScenarios(ctx context.Context, w io.Writer, env *demoEnv, scs []scenario) (bool, error) {
	var b strings.Builder
	writeWrapped(&b, "respire demo: "+env.desc, "", "")
	writeWrapped(&b, "each scenario's key is "+keyPrefix+"<ID>, seeded before the call and deleted after it", "", "")
	b.WriteString("\n")
	table := [][]string{{"ID", "COMMAND", "CATEGORY", "POLICY", "FAULT", "SENDS", "EXECUTED", "TIME", "CHECK"}}
	var details [][][2]string
	passed := true
	for i := range scs {
		sc := &scs[i]
		// A server-wide count disturbed by other clients says nothing
		// about the scenario: measure again, a few times at most.
		var r row
		tries := 0
		for tries < maxTries && (tries == 0 || r.disturbed) {
			tries++
			var err error
			if r, err = env.run(ctx, sc); err != nil {
				io.WriteString(w, b.String())
				return false, fmt.Errorf("scenario %s: %w", sc.id, err)
			}
		}
		check, why := "ok", ""
		if r.disturbed {
			r.problems = append(r.problems, fmt.Sprintf("other clients ran %s during each of %d tries; EXECUTED includes theirs", sc.command, tries))
		} else if tries > 1 {
			why = fmt.Sprintf("try %d passed; other clients ran %s during the earlier ones", tries, sc.command)
		}
		if len(r.problems) > 0 {
			passed = false
			check, why = "FAIL", strings.Join(r.problems, "; ")
		}
		table = append(table, []string{sc.id, sc.display, sc.category.String(), sc.policyS, sc.faultS,
			strconv.FormatInt(r.sends, 10), strconv.FormatInt(r.executed, 10), formatElapsed(r.elapsed), check})
		var d [][2]string
		if env.showNode {
			d = append(d, [2]string{"node", r.node})
		}
		d = append(d, [2]string{"result", r.result}, [2]string{"retries", formatRetries(r.retries)}, [2]string{"note", sc.note(r.state)})
		if why != "" {
			d = append(d, [2]string{"why", why})
		}
		details = append(details, d)
	}
	widths := make([]int, len(table[0]))
	for _, cells := range table {
		for c, s := range cells {
			widths[c] = max(widths[c], len(s))
		}
	}
	for i, cells := range table {
		var line strings.Builder
		for c, s := range cells {
			line.WriteString(s)
			if c+1 < len(cells) {
				line.WriteString(strings.Repeat(" ", widths[c]-len(s)+2))
			}
		}
		b.WriteString(line.String())
		b.WriteString("\n")
		if i == 0 {
			continue
		}
		for _, d := range details[i-1] {
			label := detailIndent + d[0] + strings.Repeat(" ", max(detailLabel-len(d[0]), 1))
			writeWrapped(&b, d[1], label, strings.Repeat(" ", len(label)))
		}
	}
	b.WriteString("\n")
	if env.showNode {
		writeWrapped(&b, "node: the server of the scenario's key, whose proxy injected the fault.", "", "")
	}
	writeWrapped(&b, "SENDS: frames of the command the proxy received; EXECUTED: times the server ran it; retries: respire.command.retries by outcome (OpenTelemetry ManualReader); default policy: RetryPolicy{} = 3 attempts, max category read_only.", "", "")
	if passed {
		fmt.Fprintf(&b, "all %d scenarios behaved as specified\n", len(scs))
	} else {
		b.WriteString("SOME SCENARIOS DID NOT BEHAVE AS SPECIFIED\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return false, err
	}
	return passed, nil
}

// writeWrapped writes text to b in lines of at most [maxWidth] columns,
// breaking at spaces: the first line starts with first, the others with
// rest. A word longer than a line stays whole on a line of its own.
func writeWrapped(b *strings.Builder, text, first, rest string) {
	line := first
	empty := true // line holds no word yet
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > maxWidth {
			b.WriteString(line)
			b.WriteString("\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line)
	b.WriteString("\n")
}

// run runs one scenario: it seeds the key, adds a counting rule and the
// fault rule at the proxy of the key's server, makes the call with a fresh client (its own
// policy and metric reader) and compares what happened with the scenario's
// specification.
func (e *demoEnv) run(ctx context.Context, sc *scenario) (row, error) {
	key := keyPrefix + sc.id
	if _, err := e.direct.Del(ctx, key); err != nil {
		return row{}, fmt.Errorf("setup: %w", err)
	}
	defer e.direct.Del(context.WithoutCancel(ctx), key)
	if sc.setup != nil {
		if err := sc.setup(ctx, e.direct, key); err != nil {
			return row{}, fmt.Errorf("setup: %w", err)
		}
	}

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.WithoutCancel(ctx))
	opts := e.opts
	policy := sc.policy
	opts.RetryPolicy = &policy
	opts.Metrics = respire.MetricsResiliency
	opts.MeterProvider = mp
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		return row{}, fmt.Errorf("connect through the proxies: %w", err)
	}
	defer c.Close()

	node, err := e.node(ctx, key)
	if err != nil {
		return row{}, fmt.Errorf("find the key's server: %w", err)
	}
	sends, err := node.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: respiretest.Always, Action: respiretest.Pass})
	if err != nil {
		return row{}, err
	}
	defer sends.Remove()
	fault, err := node.proxy.AddRule(respiretest.Rule{Command: sc.command, Arg: key, Times: max(sc.times, 1), Action: sc.fault})
	if err != nil {
		return row{}, err
	}
	defer fault.Remove()

	before, err := e.executed(ctx, node, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	start := time.Now()
	o := sc.call(ctx, c, key)
	elapsed := time.Since(start)
	after, err := e.executed(ctx, node, sc.command)
	if err != nil {
		return row{}, fmt.Errorf("count executions: %w", err)
	}
	r := row{sc: sc, sends: int64(sends.Applied()), executed: after - before, elapsed: elapsed, node: node.addr}
	// Every frame the proxy forwarded for the key ran on the server (a lost
	// reply is dropped only after it arrived), so a larger server count
	// means other clients ran the command meanwhile.
	r.disturbed = e.shared && r.executed > int64(sends.Forwarded())
	if o.err != nil {
		r.result = o.err.Error()
	} else {
		r.result = o.value
	}
	if sc.inspect != nil {
		if r.state, err = sc.inspect(ctx, e.direct, key); err != nil {
			return row{}, fmt.Errorf("inspect: %w", err)
		}
	}
	if r.retries, r.category, err = collectRetries(ctx, reader); err != nil {
		return row{}, fmt.Errorf("collect metrics: %w", err)
	}

	if p := sc.check(o, r.state); p != "" {
		r.problems = append(r.problems, p)
	}
	if r.sends != sc.sends {
		r.problems = append(r.problems, fmt.Sprintf("sends %d, want %d", r.sends, sc.sends))
	}
	if r.executed != sc.executed {
		r.problems = append(r.problems, fmt.Sprintf("executed %d, want %d", r.executed, sc.executed))
	}
	if got, want := formatRetries(r.retries), formatRetries(sc.retries); got != want {
		r.problems = append(r.problems, fmt.Sprintf("retries %s, want %s", got, want))
	}
	if len(r.retries) > 0 && r.category != sc.category.String() {
		r.problems = append(r.problems, fmt.Sprintf("retries recorded with category %s, want %s", r.category, sc.category))
	}
	return r, nil
}

// The retries counter the demo reads, and its attributes.
const (
	retriesMetric = "respire.command.retries"
	outcomeAttr   = "respire.command.retry.outcome"
	categoryAttr  = "respire.command.retry.category"
)

// collectRetries reads respire.command.retries from reader: the counts by
// outcome and the category attribute (categories joined with "," if more
// than one was recorded).
func collectRetries(ctx context.Context, reader *sdkmetric.ManualReader) (map[string]int64, string, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return nil, "", err
	}
	counts := map[string]int64{}
	var cats []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != retriesMetric {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				return nil, "", fmt.Errorf("%s: unexpected data %T", retriesMetric, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Value == 0 {
					continue
				}
				o, _ := dp.Attributes.Value(outcomeAttr)
				counts[o.AsString()] += dp.Value
				c, _ := dp.Attributes.Value(categoryAttr)
				if cat := c.AsString(); !slices.Contains(cats, cat) {
					cats = append(cats, cat)
				}
			}
		}
	}
	return counts, strings.Join(cats, ","), nil
}

// formatRetries renders counts by outcome in a fixed order, "-" for none.
func formatRetries(counts map[string]int64) string {
	var parts []string
	for _, o := range []string{"attempted", "succeeded", "exhausted"} {
		if n := counts[o]; n != 0 {
			parts = append(parts, o+"="+strconv.FormatInt(n, 10))
		}
	}
	for _, o := range slices.Sorted(maps.Keys(counts)) { // outcomes the demo does not know, if any
		if n := counts[o]; n != 0 && o != "attempted" && o != "succeeded" && o != "exhausted" {
			parts = append(parts, o+"="+strconv.FormatInt(n, 10))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// formatElapsed renders d in milliseconds with one decimal.
func formatElapsed(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}
