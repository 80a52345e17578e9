package respiretest

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/ascii"
	"github.com/respire-go/respire/resp"
)

// IDMP defaults and bounds of Redis 8.6.
const (
	// DefaultIDMPDuration is how long an idempotent ID is kept unless
	// XCFGSET IDMP-DURATION says otherwise.
	DefaultIDMPDuration = 100 * time.Second
	// DefaultIDMPMaxSize is how many idempotent IDs are kept per producer
	// unless XCFGSET IDMP-MAXSIZE says otherwise.
	DefaultIDMPMaxSize = 100
)

// Replies of the emulation. Where the Redis documentation names an error
// condition without its text, the kit's wording is marked as such.
const (
	errSyntax        = "ERR syntax error"
	errNotInteger    = "ERR value is not an integer or out of range"
	errWrongType     = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNoSuchKey     = "ERR no such key"
	errBadDuration   = "ERR invalid duration"                                                 // documented condition; kit wording
	errBadMaxSize    = "ERR invalid maxsize"                                                  // documented condition; kit wording
	errIDMPExplicit  = "ERR IDMP and IDMPAUTO can be used only with an auto-generated ID (*)" // kit wording
	errIDMPEmptyID   = "ERR IDMP producer and idempotent IDs must not be empty"               // kit wording
	errIDMPInMulti   = "ERR respiretest: IDMP emulation does not support MULTI"               // a kit limit
	errXAddArity     = "ERR wrong number of arguments for 'xadd' command"
	errXCfgSetArity  = "ERR wrong number of arguments for 'xcfgset' command"
	maxIDMPDuration  = 86400
	maxIDMPMaxSize   = 10000
	idmpStreamType   = "stream"
	idmpNoneType     = "none"
	idmpAutoIIDBytes = 16
)

type idmpKey struct {
	db  int
	key string
}

type idmpPair struct{ pid, iid string }

// idmpTable is the emulated IDMP state of every stream seen through one
// proxy.
type idmpTable struct {
	mu      sync.Mutex
	streams map[idmpKey]*idmpStream
	// versions count the IDMP XADDs sent and completed per stream, so that
	// a TYPE probe's "none" is acted on only if nothing changed meanwhile.
	versions map[idmpKey]uint64
}

type idmpStream struct {
	duration  time.Duration
	maxSize   int
	producers map[string]*idmpProducer
	inflight  map[idmpPair]chan struct{}
}

type idmpEntry struct {
	iid, id string
	at      time.Time
}

// idmpProducer keeps one producer's idempotent IDs, oldest first.
type idmpProducer struct {
	order []idmpEntry
	byIID map[string]string
}

func newIDMPTable() *idmpTable {
	return &idmpTable{streams: map[idmpKey]*idmpStream{}, versions: map[idmpKey]uint64{}}
}

func (t *idmpTable) version(k idmpKey) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.versions[k]
}

func newIDMPStream() *idmpStream {
	return &idmpStream{
		duration:  DefaultIDMPDuration,
		maxSize:   DefaultIDMPMaxSize,
		producers: map[string]*idmpProducer{},
		inflight:  map[idmpPair]chan struct{}{},
	}
}

// streamLocked returns the state of a stream, creating it.
func (t *idmpTable) streamLocked(k idmpKey) *idmpStream {
	st := t.streams[k]
	if st == nil {
		st = newIDMPStream()
		t.streams[k] = st
	}
	return st
}

// forgetMissing drops the state of a stream the backend reported missing
// to a probe sent at version v, unless an IDMP XADD to it was sent or
// completed since, or is still on its way: such an XADD (which may be the
// one creating the stream) decides the state.
func (t *idmpTable) forgetMissing(k idmpKey, v uint64) {
	t.mu.Lock()
	if st := t.streams[k]; st != nil && len(st.inflight) == 0 && t.versions[k] == v {
		delete(t.streams, k)
	}
	t.mu.Unlock()
}

// observe forgets the streams that a command seen on the way to the
// backend deletes.
func (t *idmpTable) observe(db int, name string, args [][]byte) {
	switch name {
	case "DEL", "UNLINK":
		t.mu.Lock()
		for _, k := range args[1:] {
			delete(t.streams, idmpKey{db, string(k)})
		}
		t.mu.Unlock()
	case "FLUSHDB":
		t.mu.Lock()
		for k := range t.streams {
			if k.db == db {
				delete(t.streams, k)
			}
		}
		t.mu.Unlock()
	case "FLUSHALL":
		t.mu.Lock()
		clear(t.streams)
		t.mu.Unlock()
	}
}

// lookupLocked returns the entry ID recorded for (pid, iid), first
// dropping the producer's expired IDs.
func (st *idmpStream) lookupLocked(pr idmpPair, now time.Time) (string, bool) {
	p := st.producers[pr.pid]
	if p == nil {
		return "", false
	}
	for len(p.order) > 0 && now.Sub(p.order[0].at) >= st.duration {
		delete(p.byIID, p.order[0].iid)
		p.order = p.order[1:]
	}
	id, ok := p.byIID[pr.iid]
	return id, ok
}

// recordLocked keeps (pid, iid) -> id, evicting the producer's oldest IDs
// beyond the stream's maximum size.
func (st *idmpStream) recordLocked(pr idmpPair, id string, now time.Time) {
	p := st.producers[pr.pid]
	if p == nil {
		p = &idmpProducer{byIID: map[string]string{}}
		st.producers[pr.pid] = p
	}
	if _, dup := p.byIID[pr.iid]; dup {
		return
	}
	p.order = append(p.order, idmpEntry{iid: pr.iid, id: id, at: now})
	p.byIID[pr.iid] = id
	for len(p.order) > st.maxSize {
		delete(p.byIID, p.order[0].iid)
		p.order[0] = idmpEntry{}
		p.order = p.order[1:]
	}
}

// xaddIDMP is a parsed XADD that carries IDMP or IDMPAUTO.
type xaddIDMP struct {
	key      string
	pair     idmpPair
	stripped []byte // the frame without the IDMP arguments, for a 7.0 backend
}

// parseXAdd parses an XADD frame. It returns nil and "" for an XADD without
// IDMP (to forward unchanged), or an error text for a malformed one.
func parseXAdd(args [][]byte) (*xaddIDMP, string) {
	if len(args) < 5 {
		return nil, "" // let the backend judge the arity
	}
	var (
		x         xaddIDMP
		mode      string // "", "IDMP" or "IDMPAUTO"
		skipFrom  = -1
		skipTo    = -1
		i         = 2
		needValue = func(n int) bool { return i+n < len(args) }
	)
	x.key = string(args[1])
loop:
	for i < len(args) {
		switch ascii.Upper(string(args[i])) {
		case "NOMKSTREAM", "KEEPREF", "DELREF", "ACKED":
			i++
		case "IDMPAUTO":
			if mode != "" || !needValue(1) {
				return nil, errSyntax
			}
			mode, skipFrom, skipTo = "IDMPAUTO", i, i+2
			x.pair.pid = string(args[i+1])
			i += 2
		case "IDMP":
			if mode != "" || !needValue(2) {
				return nil, errSyntax
			}
			mode, skipFrom, skipTo = "IDMP", i, i+3
			x.pair.pid, x.pair.iid = string(args[i+1]), string(args[i+2])
			i += 3
		case "MAXLEN", "MINID":
			i++
			if i < len(args) && (string(args[i]) == "=" || string(args[i]) == "~") {
				i++
			}
			i++ // threshold
		case "LIMIT":
			i += 2
		default:
			break loop
		}
	}
	if mode == "" {
		return nil, ""
	}
	if i >= len(args) {
		return nil, errSyntax
	}
	if string(args[i]) != "*" {
		return nil, errIDMPExplicit
	}
	fields := args[i+1:]
	if len(fields) == 0 || len(fields)%2 != 0 {
		return nil, errXAddArity
	}
	if x.pair.pid == "" || (mode == "IDMP" && x.pair.iid == "") {
		return nil, errIDMPEmptyID
	}
	if mode == "IDMPAUTO" {
		x.pair.iid = autoIID(fields)
	}
	x.stripped = resp.AppendArrayHeader(nil, len(args)-(skipTo-skipFrom))
	for j, a := range args {
		if j < skipFrom || j >= skipTo {
			x.stripped = resp.AppendBulk(x.stripped, a)
		}
	}
	return &x, ""
}

// autoIID derives an idempotent ID from a message's field-value pairs the
// way Redis 8.6 documents it: one 128-bit hash per pair, combined with XOR,
// so the order of the pairs does not matter. (Redis uses XXH128; the kit
// uses SHA-256 truncated to 128 bits. The IDs never leave the kit.)
func autoIID(fields [][]byte) string {
	var sum [idmpAutoIIDBytes]byte
	var n [8]byte
	for j := 0; j+1 < len(fields); j += 2 {
		h := sha256.New()
		binary.BigEndian.PutUint64(n[:], uint64(len(fields[j])))
		h.Write(n[:])
		h.Write(fields[j])
		h.Write(fields[j+1])
		d := h.Sum(nil)
		for k := range sum {
			sum[k] ^= d[k]
		}
	}
	return string(sum[:])
}

// idmpFrame handles XADD and XCFGSET with the emulation on. sl carries the
// frame's rule effects (hold, delay, drop after). It reports false when the
// session has closed.
func (s *session) idmpFrame(name string, args [][]byte, raw []byte, sl *slot) bool {
	if name == "XCFGSET" {
		return s.xcfgset(args, sl)
	}
	x, bad := parseXAdd(args)
	switch {
	case bad != "":
		return s.answer(sl, resp.AppendError(nil, bad))
	case x == nil:
		return s.send(sl, raw, true)
	case s.inMulti:
		return s.answer(sl, resp.AppendError(nil, errIDMPInMulti))
	}
	t := s.p.idmp
	k := idmpKey{s.db, x.key}
	for {
		v := t.version(k)
		typ, ok := s.probe(x.key)
		if !ok {
			return false
		}
		switch typ {
		case idmpStreamType:
		case idmpNoneType:
			t.forgetMissing(k, v) // a new stream starts with no IDMP state
		default:
			return s.send(sl, x.stripped, true) // the backend answers WRONGTYPE
		}
		now := time.Now()
		t.mu.Lock()
		st := t.streamLocked(k)
		if id, hit := st.lookupLocked(x.pair, now); hit {
			t.mu.Unlock()
			return s.answer(sl, resp.AppendBulkString(nil, id))
		}
		if wait := st.inflight[x.pair]; wait != nil {
			t.mu.Unlock()
			// The same (pid, iid) is on its way to the backend: wait for
			// its outcome, then decide again.
			select {
			case <-wait:
				continue
			case <-s.done:
				return false
			}
		}
		ch := make(chan struct{})
		st.inflight[x.pair] = ch
		t.versions[k]++
		t.mu.Unlock()
		pair := x.pair
		sl.onReply = func(v resp.Value, ok bool) {
			t.mu.Lock()
			t.versions[k]++
			delete(st.inflight, pair)
			if ok && v.Type == resp.BulkString {
				st.recordLocked(pair, string(v.Str), time.Now())
			}
			t.mu.Unlock()
			close(ch)
		}
		return s.send(sl, x.stripped, true)
	}
}

// xcfgset answers XCFGSET key [IDMP-DURATION s] [IDMP-MAXSIZE n].
func (s *session) xcfgset(args [][]byte, sl *slot) bool {
	if len(args) < 2 {
		return s.answer(sl, resp.AppendError(nil, errXCfgSetArity))
	}
	duration, maxSize := -1, -1
	if len(args) == 2 {
		return s.answer(sl, resp.AppendError(nil, errSyntax))
	}
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return s.answer(sl, resp.AppendError(nil, errSyntax))
		}
		n, err := strconv.ParseInt(string(args[i+1]), 10, 64)
		opt := ascii.Upper(string(args[i]))
		if opt != "IDMP-DURATION" && opt != "IDMP-MAXSIZE" {
			return s.answer(sl, resp.AppendError(nil, errSyntax))
		}
		if err != nil {
			return s.answer(sl, resp.AppendError(nil, errNotInteger))
		}
		if opt == "IDMP-DURATION" {
			if n < 1 || n > maxIDMPDuration {
				return s.answer(sl, resp.AppendError(nil, errBadDuration))
			}
			duration = int(n)
		} else {
			if n < 1 || n > maxIDMPMaxSize {
				return s.answer(sl, resp.AppendError(nil, errBadMaxSize))
			}
			maxSize = int(n)
		}
	}
	if s.inMulti {
		return s.answer(sl, resp.AppendError(nil, errIDMPInMulti))
	}
	key := string(args[1])
	typ, ok := s.probe(key)
	if !ok {
		return false
	}
	switch typ {
	case idmpStreamType:
	case idmpNoneType:
		return s.answer(sl, resp.AppendError(nil, errNoSuchKey))
	default:
		return s.answer(sl, resp.AppendError(nil, errWrongType))
	}
	t := s.p.idmp
	t.mu.Lock()
	st := t.streamLocked(idmpKey{s.db, key})
	if duration > 0 {
		st.duration = time.Duration(duration) * time.Second
	}
	if maxSize > 0 {
		st.maxSize = maxSize
	}
	clear(st.producers)
	t.mu.Unlock()
	return s.answer(sl, resp.AppendSimpleString(nil, "OK"))
}

// answer gives sl a reply of the proxy's own, keeping its rule effects.
// The frame is not forwarded.
func (s *session) answer(sl *slot, reply []byte) bool {
	sl.kind = slotReply
	sl.reply = reply
	sl.replyAt = time.Now()
	sl.ready = closedChan
	return s.enqueue(sl)
}

// probe asks the backend, on this session's connection and so after every
// earlier frame of the session, for the type of key.
func (s *session) probe(key string) (string, bool) {
	var typ string
	sl := &slot{kind: slotInternal, ready: make(chan struct{})}
	sl.onReply = func(v resp.Value, ok bool) {
		if ok && !v.IsError() {
			typ = string(v.Str)
		}
	}
	frame := resp.AppendArrayHeader(nil, 2)
	frame = resp.AppendBulkString(frame, "TYPE")
	frame = resp.AppendBulkString(frame, key)
	if !s.send(sl, frame, true) || !s.flush() {
		return "", false
	}
	select {
	case <-sl.ready:
		return typ, true
	case <-s.done:
	case <-s.backendGone:
	}
	return "", false
}
