package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/internal/multierr"
	"github.com/respire-go/respire/respiretest"
)

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
	return "", fmt.Errorf("no sentinel named the primary %q: %w", te.name, multierr.Join(errs...))
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
	return "", fmt.Errorf("no seed named the owner of %q: %w", key, multierr.Join(errs...))
}
