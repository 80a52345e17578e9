// Package wire runs one multiplexed, auto-pipelined RESP connection per
// endpoint, shared by all callers.
//
// Callers submit [Frame]s. A writer coalesces every queued frame into one
// socket write; a reader matches replies to frames by FIFO position only and
// routes RESP3 push frames aside. No lock is held across I/O.
//
// The writer's and the reader's roles pass between goroutines rather than
// belonging to them, so that a connection used by one caller at a time
// costs no goroutine handoff (see trywrite.go and sync.go):
//
//   - A caller that finds nobody writing writes its own frame with a
//     non-blocking write, when nothing is owed or when few callers share
//     the connection (its recent peak of frames owed is at most
//     ownWriteMaxPeak); the writer goroutine writes whatever the socket did
//     not accept, and every frame submitted while many others are owed,
//     gathered into one write.
//   - When a reply leaves nothing owed, the reader goroutine parks. The
//     next caller through [Conn.Do] then reads its own reply, with its
//     deadline as the socket's read deadline (for a context that can be
//     cancelled, at most [Config.OwnReadWait] ahead, since a blocked read
//     cannot watch the context); when it has its reply, the role goes
//     back to the parked reader goroutine, or to the running one if
//     others are owed. A deadline that passes mid-reply hands the partly
//     read reply to the reader goroutine, which drains it, and the caller
//     waits as [Frame.Wait] does. Any other admission wakes the
//     parked reader, and so does the health monitor's tick, so an idle
//     connection is read again (and a server's close seen) within a tick.
//
// Two facts are recorded here because nothing above can add them later:
//
//   - Write evidence. Every frame that fails reports exactly one
//     [Evidence]: [Unwritten] when the frame's last byte never reached the
//     socket of a connection that is now dead (never admitted, still queued,
//     or cut by a failed write), [PossiblyExecuted] otherwise. It is decided
//     from the writer's own record of how many bytes each write accepted,
//     once the connection is dead, and never changes afterwards.
//     A write that fails because the server closed the connection (reset,
//     broken pipe) leaves the socket to the reader until it fails too:
//     what the server sent before closing, such as its error reply to a
//     bulk over proto-max-bulk-len, still answers the frames written.
//   - FIFO ownership. A caller that gives up (cancellation, deadline)
//     abandons its wait, never its FIFO slot: the late reply is read and
//     dropped, and only then does the frame return to the pool.
//
// Deadlines cost no timer per call and no channel besides the frame's
// own: a caller waiting with a deadline registers it with the
// connection's alarm (alarm.go), one timer armed for the earliest deadline
// registered. When it fires, the connection expires the frames it holds
// whose deadlines have passed, sending each caller its token, and arms
// the timer for the next deadline.
//
// A connection also guards itself, without a clock reading or an
// allocation per command:
//
//   - Health. With [Config].HealthTimeout, a connection that owes replies
//     and reads nothing for that long probes the server with a PING on a
//     new connection; if neither the probe nor the connection hears back
//     within HealthTimeout, the connection is retired: its frames fail as
//     [Lost] with their own evidence and the cause [ErrHealthTimeout], and
//     the [Endpoint] dials a replacement. With [Config].IdlePing, an idle
//     connection sends a PING of its own (never delivered to a caller),
//     and is retired when the probe is answered but that PING is not.
//     [Config].SilenceLimit retires a connection silent that long even
//     though the probes are answered (BUSY, the answer of a server that
//     runs a script, restarts it).
//   - Backpressure. [Config].MaxPendingFrames and [Config].MaxPendingBytes
//     bound the frames a connection holds; [Conn.Submit] waits for room
//     within the caller's context and deadline, oldest first.
//   - Attribution. A malformed reply fails only the frame it answered with
//     [Protocol]; the connection's other frames fail as [Lost].
//
// [Endpoint] owns the current connection of one address and replaces it
// after it dies, dialing on demand with bounded backoff.
package wire
