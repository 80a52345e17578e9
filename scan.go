package respire

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/route"
	"github.com/respire-go/respire/resp"
)

// ScanOptions filter a SCAN-family iteration. The zero value matches
// everything with the server's default page size. A call only reads it and
// keeps no reference to it, so one value may serve concurrent calls while
// nobody changes it.
type ScanOptions struct {
	// Match is a glob pattern (MATCH); "" matches every element.
	Match string
	// Count is a hint of how many elements the server examines per page
	// (COUNT); 0 uses the server's default (10). Negative is an
	// [ErrInvalidArgument].
	Count int64
	// Type restricts SCAN to keys of one type ("string", "hash", ...).
	// Only [Client.Scan] accepts it; the others return an
	// [ErrInvalidArgument].
	Type string
}

// ScanPage is one reply of a SCAN-family command: the elements it
// returned and the cursor of the next page ("0" after the last page). It is
// a plain value that the library neither keeps nor changes once returned:
// safe for concurrent reads.
type ScanPage[T any] struct {
	Items  []T
	Cursor string
	// Server is the "host:port" that answered. A Cluster client's SCAN
	// visits every primary in turn, each with a cursor of its own: a page
	// with Cursor "0" ends that primary's pages, and the next page comes
	// from the next primary.
	Server string
}

// FieldValue is one field of a hash and its value, as HSCAN returns them. It
// is a plain value that the library neither keeps nor changes once returned:
// safe for concurrent reads.
type FieldValue struct {
	Field, Value string
}

// The SCAN family iterates with a server-side cursor, so its pages follow
// two rules. The first page (cursor 0) is an ordinary ReadOnly command:
// the retry policy applies to it, and a lost reply may be resent. A
// continuation (a non-zero cursor) is never resent, because the cursor is
// a position on the server that answered the first page: it goes to that
// server only (scanCursor keeps it), and a failure ends the iteration with
// the error (ask [MayHaveExecuted]). Dispatch (dispatchOf) applies the
// same rule to raw SCAN commands sent with [Client.Do]. On a Cluster
// client a continuation whose key's slot moved meanwhile ends the
// iteration with the server's MOVED or ASK reply (a [*ServerError]): the
// redirect is not followed, since the new owner would read the cursor as
// a position in a table it does not have. A first page that followed an
// ASK redirect (its key already moved by a migration in progress) has its
// continuations sent to the importing node with ASKING, where the cursor
// belongs.
//
// What SCAN guarantees, and what it does not, holds here unchanged: every
// element present for the whole iteration is returned at least once; an
// element may be returned more than once (the iterators do not hide
// duplicates: dedupe with a set if you need to); elements added or
// removed during the iteration may or may not appear; a page may be empty
// while the iteration continues. One exception: a Cluster SCAN visits the
// primaries one after the other, so a key whose slot migrates from a
// primary not yet visited, or from the one being visited (before its
// pages reach the key), to one already visited is missed.

// scanCursor is the state of one iteration: the command, its key (none
// for SCAN), the server that answered the first page, and the cursor.
type scanCursor struct {
	cmd    Command
	key    string
	opts   []string
	server *route.Node // continuations go here and nowhere else; nil before the first page on a topology
	asking bool        // an ASK redirect reached server: continuations send ASKING first
	cursor string
}

// Scan iterates over the keys of the database with SCAN. The iteration
// stops at the first error, which it yields (with an empty key) as its
// last pair; breaking out of the loop sends no further command. See
// [ScanOptions] for filters; keys may be returned more than once.
//
// The first page follows the retry policy; a continuation goes only to
// the server that issued its cursor and is never resent, so a failure
// there ends the iteration. A Cluster client visits the primaries one
// after the other: a key whose slot migrates meanwhile from a primary
// not yet visited, or from the one being visited, to one already visited
// is missed. The next primary is taken from the map when its turn comes,
// so one that replaced another (a failover) or joined meanwhile is
// visited too.
//
// Each range over the sequence is an iteration of its own, from the
// first page: it may be ranged over again, or from several goroutines at
// once.
func (c *Client) Scan(ctx context.Context, opts ScanOptions) iter.Seq2[string, error] {
	return items(c.ScanPages(ctx, opts))
}

// ScanPages is [Client.Scan] page by page, for callers that want the
// cursors.
func (c *Client) ScanPages(ctx context.Context, opts ScanOptions) iter.Seq2[ScanPage[string], error] {
	return scanPages(c, ctx, catalog.Generic.SCAN(), "", opts, true, replyStrings)
}

// HScan iterates over the fields of the hash at key with HSCAN, like
// [Client.Scan]. On a Cluster client, a continuation that finds the key's
// slot moved ends the iteration with the MOVED or ASK [*ServerError],
// and one whose first page followed an ASK to the importing node goes
// there with ASKING; the same holds for SScan and ZScan.
func (c *Client) HScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[FieldValue, error] {
	return items(c.HScanPages(ctx, key, opts))
}

// HScanPages is [Client.HScan] page by page.
func (c *Client) HScanPages(ctx context.Context, key string, opts ScanOptions) iter.Seq2[ScanPage[FieldValue], error] {
	return scanPages(c, ctx, catalog.Hash.HSCAN(), key, opts, false, func(r Reply) ([]FieldValue, error) {
		return pairsOf(r, "field-value pairs", func(field, value string) (FieldValue, error) {
			return FieldValue{Field: field, Value: value}, nil
		})
	})
}

// SScan iterates over the members of the set at key with SSCAN, like
// [Client.Scan].
func (c *Client) SScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[string, error] {
	return items(c.SScanPages(ctx, key, opts))
}

// SScanPages is [Client.SScan] page by page.
func (c *Client) SScanPages(ctx context.Context, key string, opts ScanOptions) iter.Seq2[ScanPage[string], error] {
	return scanPages(c, ctx, catalog.Set.SSCAN(), key, opts, false, replyStrings)
}

// ZScan iterates over the members of the sorted set at key with their
// scores, with ZSCAN, like [Client.Scan].
func (c *Client) ZScan(ctx context.Context, key string, opts ScanOptions) iter.Seq2[Z, error] {
	return items(c.ZScanPages(ctx, key, opts))
}

// ZScanPages is [Client.ZScan] page by page.
func (c *Client) ZScanPages(ctx context.Context, key string, opts ScanOptions) iter.Seq2[ScanPage[Z], error] {
	return scanPages(c, ctx, catalog.SortedSet.ZSCAN(), key, opts, false, func(r Reply) ([]Z, error) {
		return pairsOf(r, "member-score pairs", func(member, score string) (Z, error) {
			x, err := convFloat64(resp.Value{Type: resp.BulkString, Str: []byte(score)})
			return Z{Member: member, Score: x}, err
		})
	})
}

// pairsOf converts a flat array of string pairs with mk.
func pairsOf[T any](r Reply, what string, mk func(a, b string) (T, error)) ([]T, error) {
	s, err := scanItems(r)
	if err != nil || len(s)%2 != 0 {
		return nil, errOr(err, unexpected(what, r.v))
	}
	out := make([]T, len(s)/2)
	for i := range out {
		if out[i], err = mk(s[2*i], s[2*i+1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func replyStrings(r Reply) ([]string, error) { return scanItems(r) }

// scanItems converts the elements of a SCAN-family page. A null page or
// element is an [ErrUnexpectedReply]: no key, field, value or member is
// null, and "", which [Reply.Strings] would make of it, is a real one.
func scanItems(r Reply) ([]string, error) {
	if r.IsNull() {
		return nil, unexpected("array of elements", r.v)
	}
	for _, e := range r.v.Elems {
		if e.Type == resp.Null {
			return nil, unexpected("string element", e)
		}
	}
	return r.Strings()
}

func errOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// items flattens pages into their elements.
func items[T any](pages iter.Seq2[ScanPage[T], error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page, err := range pages {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
}

// scanArgs validates opts for cmd and returns its option arguments.
func scanArgs(name, key string, opts ScanOptions, keyless bool) ([]string, error) {
	switch {
	case !keyless && key == "":
		return nil, errInvalid(name, "empty key")
	case opts.Count < 0:
		return nil, errInvalid(name, "negative COUNT "+strconv.FormatInt(opts.Count, 10))
	case opts.Type != "" && !keyless:
		return nil, errInvalid(name, "TYPE applies to SCAN only")
	}
	var args []string
	if opts.Match != "" {
		args = append(args, "MATCH", opts.Match)
	}
	if opts.Count > 0 {
		args = append(args, "COUNT", strconv.FormatInt(opts.Count, 10))
	}
	if opts.Type != "" {
		args = append(args, "TYPE", opts.Type)
	}
	return args, nil
}

// scanPages runs the cursor loop of cmd. Bad options are yielded as the
// only error, before anything is sent.
func scanPages[T any](c *Client, ctx context.Context, cmd Command, key string, opts ScanOptions, keyless bool,
	convert func(Reply) ([]T, error)) iter.Seq2[ScanPage[T], error] {
	return func(yield func(ScanPage[T], error) bool) {
		args, err := scanArgs(cmd.Name(), key, opts, keyless)
		if err != nil {
			yield(ScanPage[T]{}, err)
			return
		}
		// A standalone client has one server; a Sentinel client, and a
		// Cluster client iterating a key's elements, start where the
		// topology routes the first page; a Cluster SCAN visits every
		// primary, each first page pinned there. The next primary is
		// taken from the map when its turn comes, not from the map of
		// the first page: a primary that replaced another meanwhile (a
		// failover) or joined is visited, one that left is not.
		everyPrimary := c.topo != nil && keyless && c.isCluster()
		var visited map[string]bool
		for turn := 0; ; turn++ {
			var server *route.Node
			switch {
			case everyPrimary:
				if server = unvisited(c.topo.Primaries(), &visited); server == nil {
					return
				}
			case turn > 0:
				return
			case c.topo == nil:
				server = c.node
			}
			cur := scanCursor{cmd: cmd, key: key, opts: args, server: server, cursor: "0"}
			for {
				raw, err := cur.fetch(ctx, c)
				if err != nil && everyPrimary && cur.cursor == "0" && errors.Is(err, route.ErrRetired) &&
					!slices.Contains(c.topo.Primaries(), server) {
					// The primary left the map after its turn came,
					// before its first page: no page of it was
					// yielded and no cursor holds a position on it,
					// so the primaries of the new map (its successor
					// among them, or a new node at its address) take
					// its place.
					delete(visited, server.Addr)
					break
				}
				if err != nil {
					yield(ScanPage[T]{}, err)
					return
				}
				items, err := convert(raw)
				if err != nil {
					yield(ScanPage[T]{}, err)
					return
				}
				if !yield(ScanPage[T]{Items: items, Cursor: cur.cursor, Server: cur.server.Addr}, nil) {
					return
				}
				if cur.cursor == "0" {
					break
				}
			}
		}
	}
}

// unvisited returns the first of primaries whose address is not in
// *visited, and adds it there; nil when every one was visited.
func unvisited(primaries []*route.Node, visited *map[string]bool) *route.Node {
	for _, n := range primaries {
		if !(*visited)[n.Addr] {
			if *visited == nil {
				*visited = map[string]bool{}
			}
			(*visited)[n.Addr] = true
			return n
		}
	}
	return nil
}

// fetch sends the page at the cursor, advances the cursor and returns the
// page's elements. The first page follows the retry policy;
// continuations are never resent (dispatchOf sees their non-zero cursor)
// and go to the server that answered the first page, pinned there.
func (cur *scanCursor) fetch(ctx context.Context, c *Client) (Reply, error) {
	if cur.cursor != "0" && cur.server == nil {
		return Reply{}, errInvalid(cur.cmd.Name(), "the cursor has no server")
	}
	args := make([]string, 0, 2+len(cur.opts))
	if cur.key != "" {
		args = append(args, cur.key)
	}
	args = append(args, cur.cursor)
	args = append(args, cur.opts...)
	var r Reply
	var err error
	if c.topo == nil {
		r, err = c.doRaw(ctx, cur.cmd, args)
	} else {
		t := target{pinned: cur.server, cursor: cur.cursor != "0", asking: cur.asking}
		r, err = c.doTarget(ctx, cur.cmd, args, &t)
		cur.server, cur.asking = t.served, t.asking
	}
	if err != nil {
		return Reply{}, err
	}
	next, items, err := splitScan(r)
	if err != nil {
		return Reply{}, err
	}
	cur.cursor = next
	return items, nil
}

// splitScan splits a SCAN-family reply into the next cursor and the page's
// elements. A cursor that is not an unsigned 64-bit decimal in its
// shortest form is an [ErrUnexpectedReply]: sent back, "00" would restart
// the iteration and "" would read as a first page.
func splitScan(r Reply) (next string, items Reply, err error) {
	parts := r.Elements()
	if len(parts) != 2 {
		return "", Reply{}, unexpected("[cursor, elements]", r.v)
	}
	if next, err = parts[0].String(); err != nil || !isCursor(next) {
		return "", Reply{}, unexpected("cursor (an unsigned 64-bit decimal)", parts[0].v)
	}
	return next, parts[1], nil
}

// isCursor reports whether s is a SCAN cursor as Redis writes one.
func isCursor(s string) bool {
	if s == "0" {
		return true
	}
	if s == "" || s[0] == '0' {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
