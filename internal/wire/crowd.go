package wire

import "sync/atomic"

// soloCrowdMax is the most frames a client's connections may owe, summed
// over them (each connection's slow peak of frames owed at its
// admissions, see Conn.crowdPeak), while small frames still take solo
// lanes ([Endpoint.For]). A connection adds at most soloCrowdMax+1, so
// that the sum, once above, is not written again while callers stay many.
const soloCrowdMax = 16

// Crowd sums how many frames the connections of one client owe (each
// connection's recent peak, capped): it tells an endpoint whether few
// callers share the whole client, on every node of a cluster together,
// rather than only its own connection. It is written when a connection's
// share changes, rarely once callers are many, and read by every small
// frame's [Endpoint.For]; the padding keeps it off other data's cache
// lines. The zero value is ready.
type Crowd struct {
	_ [64]byte
	n atomic.Int64
	_ [56]byte
}

// few reports whether the client's connections owe at most soloCrowdMax
// frames.
func (cr *Crowd) few() bool { return cr.n.Load() <= soloCrowdMax }

// shareLocked updates c's share of its crowd after an admission moved
// crowdPeak, or removes it (gone: the connection died or idles); the
// caller holds c.mu.
func (c *Conn) shareLocked(gone bool) {
	if c.crowd == nil {
		return
	}
	s := int64(0)
	if !gone {
		s = min(c.crowdPeak>>6, soloCrowdMax+1)
	}
	if s != c.crowdShare {
		c.crowd.n.Add(s - c.crowdShare)
		c.crowdShare = s
	}
}

// forgetPeaks clears the peaks of frames owed of a connection that idled
// a whole health tick (owed nothing, neither read nor wrote), which decay
// only at admissions: peakOwed, so that the first caller after a quiet
// spell writes its own frame and reads its own reply again (see Submit),
// and crowdPeak with its share of the crowd, which would otherwise keep
// a client whose callers moved to other nodes from its solo lanes.
func (c *Conn) forgetPeaks() {
	c.mu.Lock()
	if c.owed.Load() == 0 {
		c.peakOwed = 0
		c.crowdPeak = 0
		c.shareLocked(false)
	}
	c.mu.Unlock()
}
