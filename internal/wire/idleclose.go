package wire

import "errors"

// ErrIdleClosed is the cause of a solo lane's connection closed because
// no caller took it for Config.SoloIdleClose.
var ErrIdleClosed = errors.New("closed after going unused")

// closeIdle closes a solo lane's connection that owes nothing and that no
// caller took since the health monitor's last tick, and reports whether
// it did. It stores idling before it loads used, and [Endpoint.For]
// stores used before it loads idling: either For sees idling and gives
// the lane to nobody, or closeIdle sees used and leaves the connection
// open. The connection closes as its owner's (Reason Closed, no frame
// to fail), and its endpoint dials again only on demand (connDied).
func (c *Conn) closeIdle() bool {
	c.idling.Store(true)
	if c.used.Load() || c.owed.Load() != 0 {
		c.idling.Store(false)
		return false
	}
	c.shutdown(Closed, ErrIdleClosed)
	return true
}
