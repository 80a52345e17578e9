package wire

import "time"

// EventKind is what happened to a connection, for [Config.OnEvent].
type EventKind uint8

// Connection events.
const (
	// EventOpened: a connection completed its handshake (Duration: the
	// dial and the handshake).
	EventOpened EventKind = iota + 1
	// EventDialFailed: a dial or its handshake failed (Err).
	EventDialFailed
	// EventClosed: a connection ended (Reason, and Err its cause): Closed
	// when its owner closed it, otherwise it was lost.
	EventClosed
	// EventRetired: an endpoint was retired because the topology no
	// longer routes to it (Err: the cause).
	EventRetired
	// EventPoolWait: a caller waited Duration for a pooled dedicated
	// connection because every one was lent.
	EventPoolWait
)

// Event is one connection lifecycle event.
type Event struct {
	Kind     EventKind
	Addr     string
	Reason   Reason
	Err      error
	Duration time.Duration
}

// emit calls cfg.OnEvent when it is set.
func (cfg *Config) emit(e Event) {
	if cfg.OnEvent != nil {
		e.Addr = cfg.Addr
		cfg.OnEvent(e)
	}
}

// Emit reports e (its Addr set to cfg.Addr) to cfg.OnEvent, if any: for
// the pools built on this package.
func (cfg *Config) Emit(e Event) { cfg.emit(e) }
