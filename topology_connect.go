package respire

import (
	"context"
	"errors"

	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/internal/wire"
)

// connectTopology starts Sentinel discovery or learns the Cluster map.
func (c *Client) connectTopology(ctx context.Context) error {
	sentinel := c.cfg.sentinel != nil
	role := func(replica bool) string {
		switch {
		case !sentinel:
			return ""
		case replica:
			return "slave"
		}
		return "master"
	}
	nodes := route.Config{
		Shared: func(addr string, replica bool) wire.Config {
			w := c.cfg.wire
			w.Addr, w.Role, w.ReadOnly = addr, role(replica), replica && !sentinel
			if replica {
				// Cached reads go to primaries only: a replica's
				// connection tracks nothing, and its end drops nothing.
				w.Tracking, w.OnPush, w.OnTrackingLost = false, nil, nil
			} else if c.cache != nil && !sentinel {
				// A Cluster primary's lost tracking, or its FLUSHALL,
				// concerns the entries it served only.
				w.OnPush, w.OnTrackingLost = c.cache.nodeHandlers(addr)
			}
			return w
		},
		Dedicated: func(addr string, replica bool) wire.Config {
			w := c.cfg.dedicatedWire()
			w.Addr, w.Role, w.ReadOnly = addr, role(replica), replica && !sentinel
			return w
		},
		PoolMax:  c.cfg.blockingPoolSize,
		PoolIdle: dedicatedIdleTimeout,
	}
	if c.cfg.logger != nil {
		nodes.OnInstall = c.onInstall
	}
	query := c.cfg.wire.DialTimeout
	var onMoved func([]int)
	if c.cache != nil {
		onMoved = c.cache.dropSlots
	}
	if sentinel {
		so := c.cfg.sentinel
		t, err := route.NewSentinel(ctx, route.SentinelConfig{
			Nodes: nodes,
			Name:  so.PrimaryName,
			Addrs: so.Addrs,
			Conn: func(addr string) wire.Config {
				return wire.Config{Addr: addr, Dial: c.cfg.wire.Dial, TLS: so.TLS, DialTimeout: c.cfg.wire.DialTimeout,
					Username: so.Username, Password: so.Password, Proto: c.cfg.wire.Proto, MaxBulk: c.cfg.wire.MaxBulk,
					OnEvent: c.cfg.wire.OnEvent}
			},
			Read:          route.ReadPolicy(c.cfg.readFrom),
			Refresh:       defaultClusterRefresh,
			QueryTimeout:  query,
			IdlePing:      c.cfg.wire.IdlePing,
			HealthTimeout: c.cfg.wire.HealthTimeout,
		})
		if errors.Is(err, route.ErrUnknownPrimary) {
			return &ConfigError{Field: "Options.Sentinel.PrimaryName", Reason: err.Error()}
		}
		if errors.Is(err, route.ErrNotSentinel) {
			// An address answered, but not as a sentinel: a wrong address
			// (such as a data server's), not a lost connection.
			return notTopology("Options.Sentinel.Addrs", err)
		}
		if err != nil {
			return withRejection(err)
		}
		c.topo = t
	} else {
		t, err := route.NewCluster(ctx, route.ClusterConfig{
			Nodes:        nodes,
			Seeds:        c.cfg.seeds,
			Refresh:      c.cfg.refresh,
			Read:         route.ReadPolicy(c.cfg.readFrom),
			TLS:          c.cfg.wire.TLS != nil,
			QueryTimeout: query,
			OnMoved:      onMoved,
		})
		if errors.Is(err, route.ErrNotCluster) {
			return notTopology("Options.Cluster", err)
		}
		if err != nil {
			return withRejection(err)
		}
		c.topo = t
	}
	// Like a standalone Connect, fail now when no primary can be used (a
	// Cluster with one primary down still serves the other slots).
	addr, first := c.dialPrimaries(ctx)
	if first != nil && sentinel {
		// The sentinel that answered may be stale: a second discovery
		// passes over the primary that just failed its dial when
		// another sentinel names a different one.
		if c.topo.Refresh(ctx, true) == nil {
			if _, err := c.dialPrimaries(ctx); err == nil {
				return nil
			}
		}
	}
	if first == nil {
		return nil
	}
	_ = c.topo.Close()
	var we *wire.ConnError
	if errors.As(first, &we) {
		return connectError(addr, we)
	}
	return first
}

// connectError is the error of a Connect whose connection to the server
// at addr failed with e: a *ConnError that names addr.
func connectError(addr string, e *wire.ConnError) error {
	err := connError("connect", e)
	if ce, ok := err.(*ConnError); ok {
		ce.addr = addr
	}
	return err
}

// notTopology is the error of a Connect whose servers answered but are
// not the topology configured in field (a data server given as a
// sentinel, a standalone server as a Cluster seed): a *ConfigError that
// wraps the server's reply as a *ServerError.
func notTopology(field string, err error) error {
	ce := &ConfigError{Field: field, Reason: err.Error()}
	var re *wire.ReplyError
	if errors.As(err, &re) {
		ce.cause = newServerError(re.Command, []byte(re.Text))
	}
	return ce
}

// dialPrimaries connects the shared connection of the primaries of the
// topology until one succeeds: nil then, else the first failure and the
// address of the primary that failed so (ErrNoRoute and "" without a
// primary).
func (c *Client) dialPrimaries(ctx context.Context) (addr string, first error) {
	for _, n := range c.topo.Primaries() {
		_, err := n.EP.Conn(ctx)
		if err == nil {
			return "", nil
		}
		if first == nil {
			addr, first = n.Addr, err
		}
	}
	if first == nil {
		first = ErrNoRoute
	}
	return addr, first
}

// withRejection is the *ConnError of a Connect whose discovery failed
// with err, the joined failures of the servers asked. When a server
// rejected the handshake (such as WRONGPASS or NOAUTH), or refused a
// discovery query to the user's ACL (NOPERM), its *ServerError
// is joined in front, so that errors.As finds it as it does after a
// standalone Connect, and when that server is a Cluster node the error
// names it and its rejection only, as a standalone Connect's does.
func withRejection(err error) error {
	se, addr := handshakeRejection(err, "")
	if se == nil {
		return &ConnError{Command: "connect", Unwritten: true, Err: err}
	}
	return &ConnError{Command: "connect", Unwritten: true, Err: &rejection{se: se, all: err}, addr: addr}
}

// rejection is the cause of a Connect whose discovery failed (all) with
// a server's rejection of the handshake (se) among its failures; its
// text is all's, which already names se.
type rejection struct {
	se  *ServerError
	all error
}

func (r *rejection) Error() string { return r.all.Error() }

func (r *rejection) Unwrap() []error { return []error{r.se, r.all} }

// handshakeRejection finds, depth first, a handshake that a server
// answered with an error reply, or a discovery query it refused with an
// authentication or permission error, among err's causes, and the address of
// that server when a Cluster node's failure names it (addr: the one
// named by an enclosing failure).
func handshakeRejection(err error, addr string) (*ServerError, string) {
	for err != nil {
		if a, ok := err.(interface{ NodeAddr() string }); ok {
			addr = a.NodeAddr()
		}
		if we, ok := err.(*wire.ConnError); ok && we.Reason == wire.Handshake {
			var re *wire.ReplyError
			if errors.As(we.Cause, &re) {
				return newServerError(re.Command, []byte(re.Text)), addr
			}
		}
		if re, ok := err.(*wire.ReplyError); ok {
			// A discovery query (CLUSTER SLOTS, SENTINEL ...) that the
			// user's ACL refused: as much a rejection as a refused
			// handshake. Other replies (LOADING...) are the server's
			// state, which the next discovery may find changed.
			if se := newServerError(re.Command, []byte(re.Text)); se.IsAuth() {
				return se, addr
			}
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if se, a := handshakeRejection(e, addr); se != nil {
					return se, a
				}
			}
			return nil, ""
		}
		err = errors.Unwrap(err)
	}
	return nil, ""
}
