// Package respiretest is the test kit of respire: a RESP-aware fault proxy
// that sits in front of any RESP server, an embedded server for tests and
// demos, client-side write faults, and an emulation of Redis 8.6 stream
// idempotency for servers that lack it.
//
// # Proxy
//
// [NewProxy] starts a [Proxy] in front of a server address (a real
// redis-server, or anything reachable through [WithBackendDialer]). Each
// client connection gets its own backend connection. The proxy reads whole
// frames, matches them against its rules in the order they were added
// ([Proxy.AddRule]) and keeps the replies in frame order: a backend reply
// is paired with its frame by FIFO position, and replies the proxy makes
// itself (injected errors, IDMP hits) or holds back (Hold, Delay) take
// their frame's place, so the client sees replies in the order of its
// frames. RESP3 push frames from the backend keep their place after the
// replies the server sent before them (an invalidation never overtakes the
// reply it follows), but never wait behind a reply held back by Hold or
// Delay: while one is, they reach the client at once. After SUBSCRIBE, PSUBSCRIBE,
// SSUBSCRIBE, their UNSUBSCRIBE counterparts (which get a reply per channel,
// or only push frames), MONITOR, CLIENT REPLY OFF or CLIENT REPLY SKIP
// (after which the server leaves frames unanswered) the connection passes
// bytes through in both directions and rules no longer apply to it (on those frames themselves
// only the actions that do not forward, Inject, Reply and
// DropBeforeForward, take effect). When the server closes a connection
// (QUIT, CLIENT KILL), the replies that arrived first are still delivered
// in order, then the client connection closes. Likewise when a client
// shuts its writing half (or closes) after its frames, the replies to those
// frames are still delivered (a held one once released), then the
// connection closes (on a connection passing through, the proxy shuts the
// writing half of its backend connection in turn, if that connection can,
// as TCP can, and the server's replies flow until the server closes; if it
// cannot, the connection closes at once); so does malformed input, after an "ERR Protocol
// error: ..." reply (in the kit's words), as a server answers it. Frames
// are forwarded no later than the moment the proxy waits for more input,
// so pipelines reach the server as pipelines.
//
// Rules act on frames: [DropBeforeForward], [DropAfterForward], [LoseReply], [Inject]
// (with the exact Redis texts [ErrLoading], [ErrReadOnly], [ErrMasterDown],
// [ErrTryAgain], [ErrBusy], [ErrClusterDown], [Moved] and [Ask], or any
// text), [Reply], [Hold] (until [RuleHandle.Release]), [Delay], and [Pass]
// to only count and signal. [RuleHandle.Received] and [Rule.OnReceive]
// tell a test that a frame arrived, so tests synchronise on events instead
// of sleeping. Counts per rule ([RuleHandle.Matched], [RuleHandle.Applied],
// [RuleHandle.Forwarded]) and per command ([Proxy.Stats]) say what reached
// the backend. Dial control holds ([Proxy.HoldDials]) or refuses
// ([Proxy.RefuseDials]) new client connections. [Proxy.Partition] makes
// the link silently dead, in both directions and for new connections,
// until [Partition.Heal]. [Proxy.Close] never
// blocks on held replies or dials: it closes every connection.
//
// A proxy made with [InMemory] has no listener; clients reach it with
// [Proxy.Dial] (net.Pipe) or [Proxy.ServeConn].
//
// # Embedded server
//
// [NewServer] starts a miniredis engine behind a proxy and cleans both up
// when the test ends; [StartServer] starts one that the caller closes (for
// examples and programs such as the demo). Inside a testing/synctest bubble it uses net.Pipe for
// both hops, so timeouts, delays and backoff run on the bubble's virtual
// clock. [Server.Executed] counts what reached the engine per command, the
// stand-in for INFO commandstats. Unlike Redis, the engine cannot match a
// glob pattern that is not UTF-8 or has an invalid [...] class (such as
// [b-a]): KEYS, a SCAN-family MATCH, PSUBSCRIBE and PUBSUB CHANNELS get an
// error reply for one.
//
// # Client-side faults
//
// [FailWrites] and [FailWritesDialer] make the n-th Write of a connection
// write only a chosen number of bytes and fail, which produces definitely
// unwritten and partially written frames deterministically.
//
// # Stream idempotency (IDMP)
//
// With [WithIDMP] (on by default for [NewServer]) the proxy emulates the
// XADD options IDMP pid iid and IDMPAUTO pid and the XCFGSET command of
// Redis 8.6, from their published documentation, in front of a server that
// lacks them (Redis 7.0 only ever sees plain XADD):
//
//   - A repeated (pid, iid) on a stream, within the stream's IDMP-DURATION
//     (default 100 s, 1..86400) and among the producer's IDMP-MAXSIZE most
//     recent IDs (default 100, 1..10000; the oldest is evicted first),
//     returns the original entry ID and appends nothing. An expired or
//     evicted ID appends again.
//   - IDMPAUTO derives the iid from the message's field-value pairs,
//     independent of their order; IDMP and IDMPAUTO need the ID "*".
//   - XCFGSET key [IDMP-DURATION s] [IDMP-MAXSIZE n] needs an existing
//     stream, applies at once and clears the stream's producer maps.
//   - A stream that no longer exists (the proxy asks the backend with TYPE
//     on the same connection, so earlier frames count) or that the proxy saw
//     deleted (DEL, UNLINK, FLUSHDB, FLUSHALL) starts again with no IDMP
//     state and default settings.
//   - Time is time.Now, which follows a synctest bubble's virtual clock.
//
// Limits of the emulation: streams are keyed by database number and name,
// with SELECT tracked per connection; RENAME, MOVE, SWAPDB, expiry and
// changes made without the proxy are not followed (beyond the existence
// check); IDMP inside MULTI is refused with an error; the TYPE probes show
// up in a real backend's INFO commandstats; Redis documents some error
// conditions of XCFGSET and IDMP without their texts, so those texts are
// the kit's own. Without the emulation a Redis 7.0 server, and the kit's
// server, answer IDMP with "ERR Invalid stream ID specified as stream
// command argument" and XCFGSET with "ERR unknown command 'XCFGSET', ...".
package respiretest
