package respire

import (
	"math"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

var (
	specGEOADD         = specOf(catalog.Geo.GEOADD())
	specGEODIST        = specOf(catalog.Geo.GEODIST())
	specGEOHASH        = specOf(catalog.Geo.GEOHASH())
	specGEOPOS         = specOf(catalog.Geo.GEOPOS())
	specGEOSEARCH      = specOf(catalog.Geo.GEOSEARCH())
	specGEOSEARCHSTORE = specOf(catalog.Geo.GEOSEARCHSTORE())
)

// The coordinates Redis accepts (EPSG:3857): a position outside them
// fails with [ErrInvalidArgument] before anything is sent.
const (
	GeoLongitudeMax = 180.0
	GeoLatitudeMax  = 85.05112878
)

// GeoPos is a position: longitude and latitude in degrees. It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type GeoPos struct {
	Longitude, Latitude float64
}

// GeoMember is a member of a geospatial index with its position, for
// [Client.GeoAdd]. A call only reads it and keeps no reference to it, so one
// value may serve concurrent calls while nobody changes it.
type GeoMember struct {
	Member              string
	Longitude, Latitude float64
}

// GeoAddOptions are GEOADD's options. The zero value is a plain GEOADD. A
// call only reads it and keeps no reference to it, so one value may serve
// concurrent calls while nobody changes it.
type GeoAddOptions struct {
	// Condition is NX (add new members only) or XX (update existing
	// members only).
	Condition SetCondition
	// Changed counts members whose position changed too (CH).
	Changed bool
}

// GeoUnit is the unit of a distance. The zero value is meters. Its values
// are plain constants, safe for concurrent use.
type GeoUnit uint8

// Distance units.
const (
	GeoMeters GeoUnit = iota
	GeoKilometers
	GeoMiles
	GeoFeet
)

// word is the unit as Redis spells it, or "" for an undefined unit.
func (u GeoUnit) word() string {
	switch u {
	case GeoMeters:
		return "m"
	case GeoKilometers:
		return "km"
	case GeoMiles:
		return "mi"
	case GeoFeet:
		return "ft"
	}
	return ""
}

// GeoOrder sorts GEOSEARCH results by distance from the center. Its values
// are plain constants, safe for concurrent use.
type GeoOrder uint8

// Result orders.
const (
	// GeoUnsorted leaves the order to the server (the default).
	GeoUnsorted GeoOrder = iota
	// GeoAsc puts the nearest first (ASC).
	GeoAsc
	// GeoDesc puts the farthest first (DESC).
	GeoDesc
)

// validPos reports whether a position is one Redis accepts.
func validPos(lon, lat float64) bool {
	return lon >= -GeoLongitudeMax && lon <= GeoLongitudeMax && lat >= -GeoLatitudeMax && lat <= GeoLatitudeMax
}

// GeoAdd adds members with their positions to the geospatial index (a
// sorted set) at key, or moves existing ones (GEOADD), and returns how
// many were added (or changed, with opt.Changed). No members, a position
// outside [GeoLongitudeMax] and [GeoLatitudeMax] (NaN included) or an
// undefined condition fail with [ErrInvalidArgument] before anything is
// sent. Its retry category is WriteAccumulating, the catalog's: a resend
// moves the members again and counts none of them as added.
func (c *Client) cmdGeoAdd(key string, opt GeoAddOptions, members ...GeoMember) cmd[int64] {
	if len(members) == 0 {
		return invalidCmd[int64](specGEOADD, "no members")
	}
	if opt.Condition > SetIfExists {
		return invalidCmd[int64](specGEOADD, "undefined condition")
	}
	for _, m := range members {
		if !validPos(m.Longitude, m.Latitude) {
			return invalidCmd[int64](specGEOADD, "position out of range: "+m.Member)
		}
	}
	n := 2 + 3*len(members)
	if opt.Condition != SetAlways {
		n++
	}
	if opt.Changed {
		n++
	}
	f := c.newFrame(n, "GEOADD")
	arg(f, key)
	switch opt.Condition {
	case SetIfNotExists:
		arg(f, "NX")
	case SetIfExists:
		arg(f, "XX")
	}
	if opt.Changed {
		arg(f, "CH")
	}
	for _, m := range members {
		argFloat(f, m.Longitude)
		argFloat(f, m.Latitude)
		arg(f, m.Member)
	}
	return typedCmd(f, specGEOADD, wire.WantInt, intOf)
}

// GeoDist returns the distance between member1 and member2 of the
// geospatial index at key in unit (GEODIST), or [ErrNil] when either is
// missing. An undefined unit fails with [ErrInvalidArgument]. Its retry
// category is ReadOnly.
func (c *Client) cmdGeoDist(key, member1, member2 string, unit GeoUnit) cmd[float64] {
	w := unit.word()
	if w == "" {
		return invalidCmd[float64](specGEODIST, "undefined unit")
	}
	f := c.newFrame(5, "GEODIST")
	arg(f, key)
	arg(f, member1)
	arg(f, member2)
	arg(f, w)
	return typedCmd(f, specGEODIST, wire.WantBytes, floatOf)
}

// GeoHash returns the 11-character geohash of each member of the
// geospatial index at key, in order (GEOHASH); a missing member's is "".
// Its retry category is ReadOnly.
func (c *Client) cmdGeoHash(key string, members ...string) cmd[[]string] {
	return keyArgsCmd(c, specGEOHASH, key, members, countedOf(len(members), "array of one geohash per member", strsOf))
}

// GeoPos returns the position of each member of the geospatial index at
// key, in order (GEOPOS); a missing member's is nil. Its retry category
// is ReadOnly.
func (c *Client) cmdGeoPos(key string, members ...string) cmd[[]*GeoPos] {
	return keyArgsCmd(c, specGEOPOS, key, members, countedOf(len(members), "array of one position per member", geoPosesOf))
}

// geoPosesOf converts GEOPOS's reply: per member a [longitude, latitude]
// pair (strings in RESP2, doubles in RESP3) or a null.
func geoPosesOf(v resp.Value) ([]*GeoPos, error) {
	if v.IsNull() {
		return nil, nil
	}
	if err := convList(v, "array of positions"); err != nil {
		return nil, err
	}
	out := make([]*GeoPos, len(v.Elems))
	var ps []GeoPos // one allocation for every position
	for i, e := range v.Elems {
		if e.IsNull() {
			continue
		}
		if ps == nil {
			ps = make([]GeoPos, len(v.Elems))
		}
		p, err := geoPosOf(e)
		if err != nil {
			return nil, atElement(i, err)
		}
		ps[i] = p
		out[i] = &ps[i]
	}
	return out, nil
}

func geoPosOf(v resp.Value) (GeoPos, error) {
	if !v.Type.Aggregate() || len(v.Elems) != 2 {
		return GeoPos{}, unexpected("[longitude, latitude] pair", v)
	}
	lon, err := convFloat64(v.Elems[0])
	if err != nil {
		return GeoPos{}, err
	}
	lat, err := convFloat64(v.Elems[1])
	if err != nil {
		return GeoPos{}, err
	}
	return GeoPos{Longitude: lon, Latitude: lat}, nil
}

// GeoSearchQuery is the area of a GEOSEARCH or GEOSEARCHSTORE: a center
// (a member, or a position with FromLonLat) and a shape (a circle of
// Radius, or a box of Width and Height), with how to order and limit the
// results. A call only reads it and keeps no reference to it, so one value
// may serve concurrent calls while nobody changes it.
type GeoSearchQuery struct {
	// Member is the center (FROMMEMBER), unless FromLonLat is set.
	Member string
	// FromLonLat centers the search on Longitude and Latitude
	// (FROMLONLAT) instead of Member.
	FromLonLat          bool
	Longitude, Latitude float64
	// Radius, when positive, searches a circle (BYRADIUS).
	Radius float64
	// Width and Height, when positive, search a box (BYBOX); one without
	// the other is invalid. Exactly one shape must be set.
	Width, Height float64
	// Unit is the unit of Radius, Width and Height, and of the distances
	// returned. Defaults to meters.
	Unit GeoUnit
	// Order sorts the results by distance. Defaults to none.
	Order GeoOrder
	// Count, when positive, returns at most Count results (COUNT).
	Count int64
	// Any returns the first Count matches found rather than the Count
	// nearest (ANY); it needs Count.
	Any bool
}

// args returns the number of words of q (after the keys) and encodes them into f when f
// is not nil; an invalid query returns the reason.
func (q *GeoSearchQuery) args(f *wire.Frame) (int, string) {
	unit := q.Unit.word()
	circle := q.Radius > 0
	box := q.Width > 0 && q.Height > 0
	switch {
	case unit == "":
		return 0, "undefined unit"
	case q.FromLonLat && !validPos(q.Longitude, q.Latitude):
		return 0, "center out of range"
	case circle == box || !validSize(q.Radius) || !validSize(q.Width) || !validSize(q.Height) ||
		(q.Width > 0) != (q.Height > 0):
		return 0, "want either a positive Radius or a positive Width and Height"
	case q.Order > GeoDesc:
		return 0, "undefined order"
	case q.Count < 0:
		return 0, "negative count"
	case q.Any && q.Count == 0:
		return 0, "Any needs a Count"
	}
	n := 2 + 3 // FROMMEMBER member, BYRADIUS radius unit
	if q.FromLonLat {
		n++
	}
	if box {
		n++
	}
	if q.Order != GeoUnsorted {
		n++
	}
	if q.Count > 0 {
		n += 2
	}
	if q.Any {
		n++
	}
	if f == nil {
		return n, ""
	}
	if q.FromLonLat {
		arg(f, "FROMLONLAT")
		argFloat(f, q.Longitude)
		argFloat(f, q.Latitude)
	} else {
		arg(f, "FROMMEMBER")
		arg(f, q.Member)
	}
	if circle {
		arg(f, "BYRADIUS")
		argFloat(f, q.Radius)
	} else {
		arg(f, "BYBOX")
		argFloat(f, q.Width)
		argFloat(f, q.Height)
	}
	arg(f, unit)
	switch q.Order {
	case GeoAsc:
		arg(f, "ASC")
	case GeoDesc:
		arg(f, "DESC")
	}
	if q.Count > 0 {
		arg(f, "COUNT")
		argInt(f, q.Count)
		if q.Any {
			arg(f, "ANY")
		}
	}
	return n, ""
}

// validSize reports whether x may be a query's Radius, Width or Height:
// finite and not negative (0 is unset).
func validSize(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// GeoWith selects what [Client.GeoSearchLocations] returns besides each
// member. A call only reads it and keeps no reference to it, so one value
// may serve concurrent calls while nobody changes it.
type GeoWith struct {
	// Coord returns each member's position (WITHCOORD).
	Coord bool
	// Dist returns each member's distance from the center, in the
	// query's unit (WITHDIST).
	Dist bool
	// Hash returns each member's raw geohash, its sorted-set score
	// (WITHHASH).
	Hash bool
}

// GeoLocation is one result of [Client.GeoSearchLocations]: a member and
// what its GeoWith asked for (the other fields are zero). It is a plain
// value that the library neither keeps nor changes once returned: safe for
// concurrent reads.
type GeoLocation struct {
	Member string
	// Dist is the distance from the center, in the query's unit.
	Dist float64
	// Hash is the 52-bit geohash integer.
	Hash int64
	// Pos is the position.
	Pos GeoPos
}

// geoSearchFrame encodes GEOSEARCH key query [WITHCOORD] [WITHDIST]
// [WITHHASH].
func (c *Client) geoSearchFrame(key string, q *GeoSearchQuery, with GeoWith) (*wire.Frame, string) {
	n, bad := q.args(nil)
	if bad != "" {
		return nil, bad
	}
	n += 2 // GEOSEARCH key
	for _, w := range []bool{with.Coord, with.Dist, with.Hash} {
		if w {
			n++
		}
	}
	f := c.newFrame(n, "GEOSEARCH")
	arg(f, key)
	q.args(f)
	if with.Coord {
		arg(f, "WITHCOORD")
	}
	if with.Dist {
		arg(f, "WITHDIST")
	}
	if with.Hash {
		arg(f, "WITHHASH")
	}
	return f, ""
}

// GeoSearch returns the members of the geospatial index at key inside
// the area of q (GEOSEARCH; Redis 6.2 or later). An invalid query (no
// shape or two, a negative, NaN or infinite Radius, Width or Height, a
// negative Count, Any without Count, a center out of
// range, an undefined unit or order) fails with [ErrInvalidArgument]
// before anything is sent; a missing center member is the server's
// error. Its retry category is ReadOnly.
func (c *Client) cmdGeoSearch(key string, q GeoSearchQuery) cmd[[]string] {
	f, bad := c.geoSearchFrame(key, &q, GeoWith{})
	if bad != "" {
		return invalidCmd[[]string](specGEOSEARCH, bad)
	}
	return typedCmd(f, specGEOSEARCH, wire.WantValue, strsOf)
}

// GeoSearchLocations is [Client.GeoSearch] returning, for each member,
// what with asks for: its position, distance from the center and
// geohash (GEOSEARCH ... WITHCOORD WITHDIST WITHHASH). Its retry
// category is ReadOnly.
func (c *Client) cmdGeoSearchLocations(key string, q GeoSearchQuery, with GeoWith) cmd[[]GeoLocation] {
	f, bad := c.geoSearchFrame(key, &q, with)
	if bad != "" {
		return invalidCmd[[]GeoLocation](specGEOSEARCH, bad)
	}
	return typedCmd(f, specGEOSEARCH, wire.WantValue, geoLocationsOf)
}

// geoLocationsOf converts a GEOSEARCH reply: member names, or per member
// an array of its name then, in this order, the distance (a string), the
// hash (an integer) and the position (a pair) that were asked for. Each
// has its own type, so the reply converts without the query's flags.
func geoLocationsOf(v resp.Value) ([]GeoLocation, error) {
	if v.IsNull() {
		return nil, nil
	}
	if err := convList(v, "array of locations"); err != nil {
		return nil, err
	}
	out := make([]GeoLocation, len(v.Elems))
	for i, e := range v.Elems {
		if err := geoLocationOf(e, &out[i]); err != nil {
			return nil, atElement(i, err)
		}
	}
	return out, nil
}

func geoLocationOf(e resp.Value, l *GeoLocation) error {
	if !e.Type.Aggregate() {
		name, err := convKey(e)
		l.Member = string(name)
		return err
	}
	if len(e.Elems) == 0 {
		return unexpected("location with a member", e)
	}
	name, err := convKey(e.Elems[0])
	if err != nil {
		return err
	}
	l.Member = string(name)
	var seen [3]bool // position, hash, distance: each at most once
	for _, x := range e.Elems[1:] {
		field := 2
		switch {
		case x.Type.Aggregate():
			field = 0
		case x.Type == resp.Integer:
			field = 1
		case x.Type == resp.Boolean: // no field of a location (its RESP2 form would read as a hash)
			return unexpected("distance, hash or position", x)
		}
		if seen[field] {
			return unexpected("location with each of distance, hash and position at most once", e)
		}
		seen[field] = true
		switch field {
		case 0:
			if l.Pos, err = geoPosOf(x); err != nil {
				return err
			}
		case 1:
			l.Hash = x.Int
		default:
			if l.Dist, err = convFloat64(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// GeoSearchStore stores the members of the geospatial index at source
// inside the area of q in the sorted set destination, replacing it, and
// returns how many it stored (GEOSEARCHSTORE; Redis 6.2 or later). With
// storeDist the scores are the distances from the center in q's unit
// (STOREDIST) rather than the geohashes, so destination is no longer a
// geospatial index. On a Cluster client both keys must share a slot. An
// invalid query fails as in [Client.GeoSearch]. Its retry category is
// WriteAccumulating, the catalog's.
func (c *Client) cmdGeoSearchStore(destination, source string, q GeoSearchQuery, storeDist bool) cmd[int64] {
	n, bad := q.args(nil)
	if bad != "" {
		return invalidCmd[int64](specGEOSEARCHSTORE, bad)
	}
	n += 3 // GEOSEARCHSTORE destination source
	if storeDist {
		n++
	}
	f := c.newFrame(n, "GEOSEARCHSTORE")
	arg(f, destination)
	arg(f, source)
	q.args(f)
	if storeDist {
		arg(f, "STOREDIST")
	}
	return typedCmd(f, specGEOSEARCHSTORE, wire.WantInt, intOf)
}
