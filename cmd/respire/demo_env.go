package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/respiretest"
)

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
