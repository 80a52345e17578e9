package route

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"

	"github.com/respire-go/respire/resp"
)

// ErrBadTopology is the base error of a rejected cluster topology: every
// error returned by [ParseShards], [ParseSlots] and [Owners] wraps it.
var ErrBadTopology = errors.New("route: invalid cluster topology")

// Shard is one slot owner as a cluster reports it.
type Shard struct {
	// Ranges are the inclusive slot ranges [start, end] the shard serves.
	Ranges [][2]int
	// Primary is the "host:port" address of the shard's primary.
	Primary string
	// PrimaryID is the primary's node id; it may be "".
	PrimaryID string
	// Replicas are the "host:port" addresses of the shard's healthy
	// replicas: those of health "online" in CLUSTER SHARDS, every listed
	// replica in CLUSTER SLOTS (which omits failed ones itself).
	Replicas []string
}

// maxRangeEntries bounds the ranges a reply may list: ranges that do not
// overlap each cover at least one slot, so more than Slots of them is
// always invalid, and refusing them early bounds the work on hostile input.
const maxRangeEntries = Slots

// ParseShards converts a CLUSTER SHARDS reply (Redis 7.0 and later), in
// its RESP2 shape (flat key/value arrays) or RESP3 shape (maps).
//
// Each node's host is its "endpoint" field. An empty (or null) endpoint is
// Redis's unknown endpoint (cluster-preferred-endpoint-type
// unknown-endpoint, or a node that does not know its own address): the
// node is reached at fallbackHost, which should be the host of the node
// that was asked, as its redirects (":port") say too; its "ip" may be an
// address only the cluster can reach. An endpoint of "?" (a hostname
// endpoint without a hostname) falls back to the "ip" field, and without a
// known one to fallbackHost; so does a node without an "endpoint" field.
// Its port is the "port" field, or with tls the
// "tls-port" field (the "port" field when a node reports no tls-port). The
// primary is the node of role "master" (the online one when a shard lists
// several); Replicas are the nodes of role "replica" whose health is
// "online". Slots are read from the "slots" array of [start, end, ...]
// pairs, given as integers or decimal strings. A shard that serves no slots
// (such as an empty primary, or a failed one after a failover) is valid but
// left out of the result, and its nodes are not examined.
//
// The addresses of the kept nodes and the slot numbers are checked; the
// whole table is checked by [Owners]. Errors wrap [ErrBadTopology].
func ParseShards(v resp.Value, fallbackHost string, tls bool) ([]Shard, error) {
	list, ok := replyElems(v)
	if !ok {
		return nil, fmt.Errorf("%w: CLUSTER SHARDS reply is %s, not an array", ErrBadTopology, replyKind(v))
	}
	if len(list) > maxRangeEntries {
		return nil, fmt.Errorf("%w: CLUSTER SHARDS reply lists %d shards", ErrBadTopology, len(list))
	}
	var out []Shard
	for i, sv := range list {
		sh, err := parseShard(sv, fallbackHost, tls)
		if err != nil {
			return nil, fmt.Errorf("%w: shard %d: %s", ErrBadTopology, i, err)
		}
		if len(sh.Ranges) > 0 {
			out = append(out, sh)
		}
	}
	return out, nil
}

// parseShard converts one entry of a CLUSTER SHARDS reply. Its errors are
// wrapped by the caller.
func parseShard(v resp.Value, fallbackHost string, tls bool) (Shard, error) {
	var sh Shard
	fields, ok := replyFields(v)
	if !ok {
		return sh, fmt.Errorf("entry is %s, not a map", replyKind(v))
	}
	var slots, nodes resp.Value
	var haveSlots, haveNodes bool
	for k := 0; k < len(fields); k += 2 {
		key, ok := replyText(fields[k])
		if !ok {
			continue
		}
		switch string(key) {
		case "slots":
			slots, haveSlots = fields[k+1], true
		case "nodes":
			nodes, haveNodes = fields[k+1], true
		}
	}
	if !haveSlots {
		return sh, errors.New(`no "slots" field`)
	}
	bounds, ok := replyElems(slots)
	if !ok {
		return sh, fmt.Errorf(`"slots" is %s, not an array`, replyKind(slots))
	}
	if len(bounds)%2 != 0 {
		return sh, fmt.Errorf(`"slots" has an odd length %d`, len(bounds))
	}
	if len(bounds)/2 > maxRangeEntries {
		return sh, fmt.Errorf(`"slots" lists %d ranges`, len(bounds)/2)
	}
	for k := 0; k < len(bounds); k += 2 {
		r, err := slotRange(bounds[k], bounds[k+1])
		if err != nil {
			return sh, err
		}
		sh.Ranges = append(sh.Ranges, r)
	}
	if len(sh.Ranges) == 0 {
		return Shard{}, nil
	}
	if !haveNodes {
		return sh, errors.New(`no "nodes" field`)
	}
	list, ok := replyElems(nodes)
	if !ok {
		return sh, fmt.Errorf(`"nodes" is %s, not an array`, replyKind(nodes))
	}
	var primaries, online int
	var primary, onlinePrimary shardNode
	for i, nv := range list {
		n, err := parseShardNode(nv, fallbackHost, tls)
		if err != nil {
			return sh, fmt.Errorf("node %d: %s", i, err)
		}
		switch {
		case n.primary:
			primaries++
			primary = n
			if n.online {
				online++
				onlinePrimary = n
			}
		case n.online:
			if err := checkHostPort(n.addr); err != nil {
				return sh, fmt.Errorf("replica %d: %s", i, err)
			}
			sh.Replicas = append(sh.Replicas, n.addr)
		}
	}
	switch {
	case primaries == 0:
		return sh, errors.New("no node has role master")
	case primaries > 1 && online != 1:
		return sh, fmt.Errorf("%d nodes have role master", primaries)
	case primaries > 1:
		primary = onlinePrimary
	}
	if err := checkHostPort(primary.addr); err != nil {
		return sh, fmt.Errorf("primary: %s", err)
	}
	sh.Primary, sh.PrimaryID = primary.addr, primary.id
	return sh, nil
}

// shardNode is one node of a CLUSTER SHARDS entry.
type shardNode struct {
	addr    string
	id      string
	primary bool
	online  bool
}

// parseShardNode converts one node of a CLUSTER SHARDS entry. The address
// is built but not checked.
func parseShardNode(v resp.Value, fallbackHost string, tls bool) (shardNode, error) {
	var n shardNode
	fields, ok := replyFields(v)
	if !ok {
		return n, fmt.Errorf("node is %s, not a map", replyKind(v))
	}
	var endpoint, ip, role []byte
	var port, tlsPort int64
	var havePort, haveTLSPort, haveRole, haveEndpoint bool
	for k := 0; k < len(fields); k += 2 {
		key, ok := replyText(fields[k])
		if !ok {
			continue
		}
		val := fields[k+1]
		var err error
		switch string(key) {
		case "id":
			var id []byte
			id, err = replyOptText(val)
			n.id = string(id)
		case "endpoint":
			endpoint, err = replyOptText(val)
			haveEndpoint = true
		case "ip":
			ip, err = replyOptText(val)
		case "port":
			port, havePort, err = replyPort(val)
		case "tls-port":
			tlsPort, haveTLSPort, err = replyPort(val)
		case "role":
			role, err = replyOptText(val)
			haveRole = true
		case "health":
			var health []byte
			health, err = replyOptText(val)
			n.online = string(health) == "online"
		}
		if err != nil {
			return n, fmt.Errorf("field %q: %s", key, err)
		}
	}
	switch string(role) {
	case "master":
		n.primary = true
	case "replica", "slave":
	default:
		if !haveRole {
			return n, errors.New(`no "role" field`)
		}
		return n, fmt.Errorf("unknown role %q", clipText(role))
	}
	if tls && haveTLSPort {
		port, havePort = tlsPort, true
	}
	if !havePort {
		if tls {
			return n, errors.New(`no "tls-port" or "port" field`)
		}
		return n, errors.New(`no "port" field`)
	}
	hs := fallbackHost
	switch {
	case knownHost(endpoint):
		hs = string(endpoint)
	case (!haveEndpoint || len(endpoint) > 0) && knownHost(ip):
		hs = string(ip) // "?", or no endpoint field: the ip names the node
	}
	n.addr = net.JoinHostPort(hs, strconv.FormatInt(port, 10))
	return n, nil
}

// ParseSlots converts a CLUSTER SLOTS reply, in its RESP2 or RESP3 shape:
// an array of entries [start, end, primary, replica...], each node an
// array [host, port, id, metadata, ...]. A null or empty host is Redis's
// unknown endpoint: the node is reached at fallbackHost, which should be
// the host of the node that was asked. A "?" host (a hostname endpoint
// without a hostname) falls back to the "ip" of the node's metadata map
// (Redis 7.0 and later), and without one to fallbackHost. The id and the
// metadata are optional and further node elements are ignored. Entries whose
// primary has the same address are merged into one [Shard], since CLUSTER
// SLOTS lists each contiguous range separately. Every listed replica is
// kept: Redis leaves failed replicas out of CLUSTER SLOTS.
//
// Addresses and slot numbers are checked; the whole table is checked by
// [Owners]. Errors wrap [ErrBadTopology].
func ParseSlots(v resp.Value, fallbackHost string) ([]Shard, error) {
	list, ok := replyElems(v)
	if !ok {
		return nil, fmt.Errorf("%w: CLUSTER SLOTS reply is %s, not an array", ErrBadTopology, replyKind(v))
	}
	if len(list) > maxRangeEntries {
		return nil, fmt.Errorf("%w: CLUSTER SLOTS reply lists %d ranges", ErrBadTopology, len(list))
	}
	var out []Shard
	var byPrimary map[string]int
	for i, ev := range list {
		r, primary, id, replicas, err := parseSlotsEntry(ev, fallbackHost)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %s", ErrBadTopology, i, err)
		}
		j, seen := byPrimary[primary]
		if !seen {
			if byPrimary == nil {
				byPrimary = make(map[string]int)
			}
			j = len(out)
			byPrimary[primary] = j
			out = append(out, Shard{Primary: primary, PrimaryID: id})
		}
		sh := &out[j]
		sh.Ranges = append(sh.Ranges, r)
		if sh.PrimaryID == "" {
			sh.PrimaryID = id
		}
		for _, rep := range replicas {
			if !slices.Contains(sh.Replicas, rep) {
				sh.Replicas = append(sh.Replicas, rep)
			}
		}
	}
	return out, nil
}

// parseSlotsEntry converts one entry of a CLUSTER SLOTS reply. Its errors
// are wrapped by the caller.
func parseSlotsEntry(v resp.Value, fallbackHost string) (r [2]int, primary, id string, replicas []string, err error) {
	elems, ok := replyElems(v)
	if !ok {
		return r, "", "", nil, fmt.Errorf("entry is %s, not an array", replyKind(v))
	}
	if len(elems) < 3 {
		return r, "", "", nil, fmt.Errorf("entry has %d elements, want at least 3", len(elems))
	}
	if r, err = slotRange(elems[0], elems[1]); err != nil {
		return r, "", "", nil, err
	}
	if primary, id, err = parseSlotsNode(elems[2], fallbackHost); err != nil {
		return r, "", "", nil, fmt.Errorf("primary: %s", err)
	}
	for i, nv := range elems[3:] {
		addr, _, err := parseSlotsNode(nv, fallbackHost)
		if err != nil {
			return r, "", "", nil, fmt.Errorf("replica %d: %s", i, err)
		}
		replicas = append(replicas, addr)
	}
	return r, primary, id, replicas, nil
}

// parseSlotsNode converts one node [host, port, id, ...] of a CLUSTER
// SLOTS entry and checks its address.
func parseSlotsNode(v resp.Value, fallbackHost string) (addr, id string, err error) {
	elems, ok := replyElems(v)
	if !ok {
		return "", "", fmt.Errorf("node is %s, not an array", replyKind(v))
	}
	if len(elems) < 2 {
		return "", "", fmt.Errorf("node has %d elements, want at least 2", len(elems))
	}
	host, err := replyOptText(elems[0])
	if err != nil {
		return "", "", fmt.Errorf("host: %s", err)
	}
	port, _, err := replyPort(elems[1])
	if err != nil {
		return "", "", fmt.Errorf("port: %s", err)
	}
	if len(elems) > 2 {
		b, err := replyOptText(elems[2])
		if err != nil {
			return "", "", fmt.Errorf("id: %s", err)
		}
		id = string(b)
	}
	hs := string(host)
	if string(host) == "?" && len(elems) > 3 {
		hs = metadataIP(elems[3])
	}
	if !knownHost([]byte(hs)) {
		hs = fallbackHost
	}
	addr = net.JoinHostPort(hs, strconv.FormatInt(port, 10))
	if err := checkHostPort(addr); err != nil {
		return "", "", err
	}
	return addr, id, nil
}

// metadataIP returns the "ip" of a CLUSTER SLOTS node's metadata map (a
// flat array in RESP2), or "" when it has none.
func metadataIP(v resp.Value) string {
	fields, ok := replyFields(v)
	if !ok {
		return ""
	}
	for k := 0; k < len(fields); k += 2 {
		if key, ok := replyText(fields[k]); ok && string(key) == "ip" {
			ip, _ := replyText(fields[k+1])
			return string(ip)
		}
	}
	return ""
}

// Owners validates shards and returns the owner of every slot as an index
// into shards, -1 for a slot no shard serves. It rejects a range with
// start > end or a slot outside 0..Slots-1, two ranges that cover the same
// slot (within one shard or across shards), and a primary or replica
// address that is not host:port with a non-empty host and a port from 1
// through 65535. A shard without ranges owns nothing and is not examined.
// Errors wrap [ErrBadTopology].
func Owners(shards []Shard) (*[Slots]int16, error) {
	owners := new([Slots]int16)
	for i := range owners {
		owners[i] = -1
	}
	for i, sh := range shards {
		if len(sh.Ranges) == 0 {
			continue
		}
		if i > math.MaxInt16 {
			return nil, fmt.Errorf("%w: more than %d shards", ErrBadTopology, math.MaxInt16+1)
		}
		if err := checkHostPort(sh.Primary); err != nil {
			return nil, fmt.Errorf("%w: shard %d: primary: %s", ErrBadTopology, i, err)
		}
		for j, rep := range sh.Replicas {
			if err := checkHostPort(rep); err != nil {
				return nil, fmt.Errorf("%w: shard %d (%s): replica %d: %s", ErrBadTopology, i, sh.Primary, j, err)
			}
		}
		for _, r := range sh.Ranges {
			start, end := r[0], r[1]
			switch {
			case start > end:
				return nil, fmt.Errorf("%w: shard %d (%s): range %d-%d starts after its end", ErrBadTopology, i, sh.Primary, start, end)
			case start < 0 || end >= Slots:
				return nil, fmt.Errorf("%w: shard %d (%s): range %d-%d is outside 0-%d", ErrBadTopology, i, sh.Primary, start, end, Slots-1)
			}
			for s := start; s <= end; s++ {
				if o := owners[s]; o >= 0 {
					return nil, fmt.Errorf("%w: slot %d is served by shard %d (%s) and shard %d (%s)", ErrBadTopology, s, o, shards[o].Primary, i, sh.Primary)
				}
				owners[s] = int16(i)
			}
		}
	}
	return owners, nil
}

// checkHostPort reports whether addr is host:port with a non-empty host
// and a decimal port from 1 through 65535.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q is not host:port", clipText([]byte(addr)))
	}
	if host == "" {
		return fmt.Errorf("address %q has no host", clipText([]byte(addr)))
	}
	if _, ok := parsePortText([]byte(port)); !ok {
		return fmt.Errorf("address %q has a port outside 1-65535", clipText([]byte(addr)))
	}
	return nil
}

// parsePortText parses a decimal port from 1 through 65535 without sign.
func parsePortText(b []byte) (int, bool) {
	n, ok := parseSmall(b)
	return n, ok && n >= 1 && n <= 65535
}

// slotRange converts the two bounds of a slot range, checking that each is
// a slot number and that start <= end.
func slotRange(a, b resp.Value) ([2]int, error) {
	start, ok1 := replyInt(a)
	end, ok2 := replyInt(b)
	switch {
	case !ok1:
		return [2]int{}, fmt.Errorf("slot range start is %s, not an integer", replyKind(a))
	case !ok2:
		return [2]int{}, fmt.Errorf("slot range end is %s, not an integer", replyKind(b))
	case start < 0 || start >= Slots || end < 0 || end >= Slots:
		return [2]int{}, fmt.Errorf("slot range %d-%d is outside 0-%d", start, end, Slots-1)
	case start > end:
		return [2]int{}, fmt.Errorf("slot range %d-%d starts after its end", start, end)
	}
	return [2]int{int(start), int(end)}, nil
}

// replyPort converts a port value, an integer or decimal string, checking
// only that it is within 0..65535 (0 reports a node without that port and
// is rejected by checkHostPort when the node is used). A null value counts
// as absent.
func replyPort(v resp.Value) (port int64, present bool, err error) {
	if v.Type == resp.Null {
		return 0, false, nil
	}
	p, ok := replyInt(v)
	if !ok {
		return 0, false, fmt.Errorf("%s is not an integer", replyKind(v))
	}
	if p < 0 || p > 65535 {
		return 0, false, fmt.Errorf("port %d is outside 0-65535", p)
	}
	return p, true, nil
}

// replyInt returns the value of an integer, or of a string holding a decimal
// integer with an optional '-' sign.
func replyInt(v resp.Value) (int64, bool) {
	if v.Type == resp.Integer {
		return v.Int, true
	}
	b, ok := replyText(v)
	if !ok {
		return 0, false
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// replyText returns the payload of a simple, bulk or verbatim string.
func replyText(v resp.Value) ([]byte, bool) {
	switch v.Type {
	case resp.SimpleString, resp.BulkString, resp.Verbatim:
		return v.TextBytes(), true
	}
	return nil, false
}

// replyOptText is replyText that also accepts a null, as empty text.
func replyOptText(v resp.Value) ([]byte, error) {
	if v.Type == resp.Null {
		return nil, nil
	}
	b, ok := replyText(v)
	if !ok {
		return nil, fmt.Errorf("%s is not a string", replyKind(v))
	}
	return b, nil
}

// replyElems returns the elements of an array or set.
func replyElems(v resp.Value) ([]resp.Value, bool) {
	switch v.Type {
	case resp.Array, resp.Set:
		return v.Elems, true
	}
	return nil, false
}

// replyFields returns the alternating keys and values of a map, or of an
// array of even length (the RESP2 shape of a map).
func replyFields(v resp.Value) ([]resp.Value, bool) {
	switch v.Type {
	case resp.Map, resp.Array:
		if len(v.Elems)%2 == 0 {
			return v.Elems, true
		}
	}
	return nil, false
}

// knownHost reports whether a reported host names a host: not empty and
// not "?", Redis's spelling of an unknown endpoint.
func knownHost(h []byte) bool { return len(h) > 0 && string(h) != "?" }

// replyKind names the type of v for an error message, with the text of an
// error reply.
func replyKind(v resp.Value) string {
	if v.IsError() {
		return "an error reply " + strconv.Quote(string(clipText(v.Str)))
	}
	return "a " + v.Type.String()
}

// clipText shortens text quoted into an error message.
func clipText(b []byte) []byte {
	const limit = 64
	if len(b) > limit {
		return b[:limit]
	}
	return b
}
