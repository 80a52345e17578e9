package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

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
