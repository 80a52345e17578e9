package respire

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/respire-go/respire/internal/route"
)

// The geo commands excluded: the GEORADIUS family is deprecated.
var _ = exclude(untypedCommands, map[string]string{
	"GEORADIUS":            "deprecated since 6.2: use GeoSearch (GeoSearchStore for its STORE options)",
	"GEORADIUS_RO":         "deprecated since 6.2: use GeoSearch",
	"GEORADIUSBYMEMBER":    "deprecated since 6.2: use GeoSearch (GeoSearchStore for its STORE options)",
	"GEORADIUSBYMEMBER_RO": "deprecated since 6.2: use GeoSearch",
})

// The examples of the Redis documentation: Palermo and Catania.
var (
	palermo = GeoMember{Member: "Palermo", Longitude: 13.361389, Latitude: 38.115556}
	catania = GeoMember{Member: "Catania", Longitude: 15.087269, Latitude: 37.502669}
)

// seedGeo: g = {Palermo, Catania}, str is a string.
func seedGeo(ctx context.Context, c *Client, k func(string) string) error {
	if _, err := c.GeoAdd(ctx, k("g"), GeoAddOptions{}, palermo, catania); err != nil {
		return err
	}
	return c.Set(ctx, k("str"), "s")
}

// r4 rounds x to 4 decimals, so positions (which Redis stores as a 52-bit
// geohash) compare exactly.
func r4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func roundPos(p *GeoPos) *GeoPos {
	if p == nil {
		return nil
	}
	return &GeoPos{r4(p.Longitude), r4(p.Latitude)}
}

func roundPoses(ps []*GeoPos, err error) ([]*GeoPos, error) {
	for i, p := range ps {
		ps[i] = roundPos(p)
	}
	return ps, err
}

func roundLocations(ls []GeoLocation, err error) ([]GeoLocation, error) {
	for i := range ls {
		ls[i].Dist = r4(ls[i].Dist)
		ls[i].Pos = *roundPos(&ls[i].Pos)
	}
	return ls, err
}

// fromLonLat is a query centered on (15, 37), as in the Redis examples.
func fromLonLat(q GeoSearchQuery) GeoSearchQuery {
	q.FromLonLat, q.Longitude, q.Latitude = true, 15, 37
	return q
}

var geoCases = []hlsCase{
	{name: "GeoAdd", want: []any{int64(2), int64(2)},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.GeoAdd(ctx, k("g"), GeoAddOptions{}, palermo, catania)
			return after(n, err, func() (any, error) { return c.ZCard(ctx, k("g")) })
		}},
	{name: "GeoAddExistingCountsNone", setup: seedGeo, want: int64(0),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{}, GeoMember{"Palermo", 13, 38})
		}},
	{name: "GeoAddChanged", setup: seedGeo, want: int64(2),
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{Changed: true}, GeoMember{"Palermo", 13, 38}, GeoMember{"Rome", 12.5, 41.9})
		}},
	{name: "GeoAddNX", setup: seedGeo, want: []any{int64(1), []*GeoPos{{13.3614, 38.1156}, {12.5, 41.9}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.GeoAdd(ctx, k("g"), GeoAddOptions{Condition: SetIfNotExists}, GeoMember{"Palermo", 13, 38}, GeoMember{"Rome", 12.5, 41.9})
			return after(n, err, func() (any, error) { return roundPoses(c.GeoPos(ctx, k("g"), "Palermo", "Rome")) })
		}},
	{name: "GeoAddXXChanged", setup: seedGeo, want: []any{int64(1), []*GeoPos{{13, 38}, nil}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.GeoAdd(ctx, k("g"), GeoAddOptions{Condition: SetIfExists, Changed: true}, GeoMember{"Palermo", 13, 38}, GeoMember{"Rome", 12.5, 41.9})
			return after(n, err, func() (any, error) { return roundPoses(c.GeoPos(ctx, k("g"), "Palermo", "Rome")) })
		}},
	{name: "GeoAddNoMembers", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{})
		}},
	{name: "GeoAddLatitudeOutOfRange", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{}, GeoMember{"pole", 0, 89})
		}},
	{name: "GeoAddNaN", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{}, GeoMember{"nan", math.NaN(), 0})
		}},
	{name: "GeoAddUndefinedCondition", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("g"), GeoAddOptions{Condition: 7}, palermo)
		}},
	{name: "GeoAddWrongType", setup: seedGeo, wantErr: &ServerError{Code: "WRONGTYPE"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoAdd(ctx, k("str"), GeoAddOptions{}, palermo)
		}},
	{name: "GeoDistMeters", setup: seedGeo, want: 166274.1516,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Catania", GeoMeters)
		}},
	{name: "GeoDistKilometers", setup: seedGeo, want: 166.2742,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Catania", GeoKilometers)
		}},
	{name: "GeoDistMiles", setup: seedGeo, want: 103.3182,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Catania", GeoMiles)
		}},
	{name: "GeoDistMissingMember", setup: seedGeo, wantErr: ErrNil,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Rome", GeoFeet)
		}},
	{name: "GeoDistUndefinedUnit", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoDist(ctx, k("g"), "Palermo", "Catania", 9)
		}},
	{name: "GeoHash", setup: seedGeo, want: []string{"sqc8b49rny0", "", "sqdtr74hyu0"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoHash(ctx, k("g"), "Palermo", "Rome", "Catania")
		}},
	{name: "GeoHashMissingKey", want: []string{""},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoHash(ctx, k("missing"), "Palermo")
		}},
	{name: "GeoPos", setup: seedGeo, want: []*GeoPos{{13.3614, 38.1156}, nil, {15.0873, 37.5027}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return roundPoses(c.GeoPos(ctx, k("g"), "Palermo", "Rome", "Catania"))
		}},
	{name: "GeoPosMissingKey", want: []*GeoPos{nil, nil},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoPos(ctx, k("missing"), "a", "b")
		}},
	{name: "GeoSearchFromLonLatByRadiusAsc", setup: seedGeo, want: []string{"Catania", "Palermo"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoAsc}))
		}},
	{name: "GeoSearchDescCount", setup: seedGeo, want: []string{"Palermo"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoDesc, Count: 1}))
		}},
	{name: "GeoSearchRadiusExcludes", setup: seedGeo, want: []string{"Catania"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 100, Unit: GeoKilometers}))
		}},
	{name: "GeoSearchFromMemberByBox", setup: seedGeo, want: []string{"Palermo", "Catania"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Width: 400, Height: 400, Unit: GeoKilometers, Order: GeoAsc})
		}},
	{name: "GeoSearchCountAny", setup: seedGeo, want: 1,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			ms, err := c.GeoSearch(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 500, Unit: GeoKilometers, Count: 1, Any: true}))
			return len(ms), err
		}},
	{name: "GeoSearchMissingKey", want: []string{},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("missing"), fromLonLat(GeoSearchQuery{Radius: 1}))
		}},
	{name: "GeoSearchMissingCenter", setup: seedGeo, wantErr: &ServerError{Code: "ERR"},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Rome", Radius: 1})
		}},
	{name: "GeoSearchNoShape", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo"})
		}},
	{name: "GeoSearchTwoShapes", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Width: 1, Height: 1})
		}},
	{name: "GeoSearchBoxWithoutHeight", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Width: 1})
		}},
	{name: "GeoSearchRadiusWithHalfABox", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Width: 1})
		}},
	{name: "GeoSearchAnyWithoutCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Any: true})
		}},
	{name: "GeoSearchNegativeCount", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Count: -1})
		}},
	{name: "GeoSearchCenterOutOfRange", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{FromLonLat: true, Longitude: 181, Radius: 1})
		}},
	{name: "GeoSearchInfiniteRadius", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: math.Inf(1)})
		}},
	{name: "GeoSearchRadiusWithNaNBox", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Width: math.NaN(), Height: math.NaN()})
		}},
	{name: "GeoSearchUndefinedOrder", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearch(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Radius: 1, Order: 5})
		}},
	{name: "GeoSearchLocationsAll", setup: seedGeo,
		want: []GeoLocation{
			{Member: "Catania", Dist: 56.4413, Hash: 3479447370796909, Pos: GeoPos{15.0873, 37.5027}},
			{Member: "Palermo", Dist: 190.4424, Hash: 3479099956230698, Pos: GeoPos{13.3614, 38.1156}},
		},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return roundLocations(c.GeoSearchLocations(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoAsc}),
				GeoWith{Coord: true, Dist: true, Hash: true}))
		}},
	{name: "GeoSearchLocationsDist", setup: seedGeo,
		want: []GeoLocation{{Member: "Palermo", Dist: 190.4424}, {Member: "Catania", Dist: 56.4413}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return roundLocations(c.GeoSearchLocations(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoDesc}),
				GeoWith{Dist: true}))
		}},
	{name: "GeoSearchLocationsCoordHash", setup: seedGeo,
		want: []GeoLocation{{Member: "Catania", Hash: 3479447370796909, Pos: GeoPos{15.0873, 37.5027}}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return roundLocations(c.GeoSearchLocations(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 100, Unit: GeoKilometers}),
				GeoWith{Coord: true, Hash: true}))
		}},
	{name: "GeoSearchLocationsNothing", setup: seedGeo,
		want: []GeoLocation{{Member: "Catania"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearchLocations(ctx, k("g"), fromLonLat(GeoSearchQuery{Radius: 100, Unit: GeoKilometers}), GeoWith{})
		}},
	{name: "GeoSearchLocationsInvalid", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearchLocations(ctx, k("g"), GeoSearchQuery{Member: "Palermo", Unit: 4, Radius: 1}, GeoWith{Dist: true})
		}},
	{name: "GeoSearchStore", setup: seedGeo, want: []any{int64(2), []string{"Catania", "Palermo"}},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.GeoSearchStore(ctx, k("dst"), k("g"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers}), false)
			return after(n, err, func() (any, error) {
				return c.GeoSearch(ctx, k("dst"), fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers, Order: GeoAsc}))
			})
		}},
	{name: "GeoSearchStoreDist", setup: seedGeo, want: []any{int64(1), 56.4413},
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			n, err := c.GeoSearchStore(ctx, k("dst"), k("g"), fromLonLat(GeoSearchQuery{Radius: 100, Unit: GeoKilometers}), true)
			return after(n, err, func() (any, error) {
				d, err := c.ZScore(ctx, k("dst"), "Catania")
				return r4(d), err
			})
		}},
	{name: "GeoSearchStoreInvalid", wantErr: ErrInvalidArgument,
		do: func(ctx context.Context, c *Client, k func(string) string) (any, error) {
			return c.GeoSearchStore(ctx, k("dst"), k("g"), GeoSearchQuery{Member: "Palermo"}, true)
		}},
}

// TestGeoCommands runs the geo rows against the real server.
func TestGeoCommands(t *testing.T) {
	runCases(t, newRecorder(t, ""), geoCases)
}

// TestGeoSearchEncoding pins the words of each query shape.
func TestGeoSearchEncoding(t *testing.T) {
	rec := newRecorder(t, "")
	c := newClient(t, Options{Endpoints: []string{rec.proxy.Addr()}})
	ctx := testCtx(t)
	k := key(t, "g")
	for _, tt := range []struct {
		name string
		do   func() error
		want []string
	}{
		{"MemberRadius", func() error {
			_, err := c.GeoSearch(ctx, k, GeoSearchQuery{Member: "m", Radius: 1.5})
			return err
		}, []string{"GEOSEARCH", k, "FROMMEMBER", "m", "BYRADIUS", "1.5", "m"}},
		{"LonLatBoxEverything", func() error {
			_, err := c.GeoSearchLocations(ctx, k, GeoSearchQuery{FromLonLat: true, Longitude: -1.25, Latitude: 2, Width: 3, Height: 4, Unit: GeoFeet, Order: GeoDesc, Count: 5, Any: true},
				GeoWith{Coord: true, Dist: true, Hash: true})
			return err
		}, []string{"GEOSEARCH", k, "FROMLONLAT", "-1.25", "2", "BYBOX", "3", "4", "ft", "DESC", "COUNT", "5", "ANY", "WITHCOORD", "WITHDIST", "WITHHASH"}},
		{"StoreDist", func() error {
			_, err := c.GeoSearchStore(ctx, k+"d", k, GeoSearchQuery{Member: "m", Radius: 2, Unit: GeoMiles, Order: GeoAsc, Count: 3}, true)
			return err
		}, []string{"GEOSEARCHSTORE", k + "d", k, "FROMMEMBER", "m", "BYRADIUS", "2", "mi", "ASC", "COUNT", "3", "STOREDIST"}},
		{"AddOptions", func() error {
			_, err := c.GeoAdd(ctx, k, GeoAddOptions{Condition: SetIfExists, Changed: true}, GeoMember{"m", 1, 2})
			return err
		}, []string{"GEOADD", k, "XX", "CH", "1", "2", "m"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_ = tt.do() // the server's answer (a missing member) does not matter
			if got := rec.last(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sent %q; want %q", got, tt.want)
			}
		})
	}
}

// TestGeoOnCluster: GEOSEARCHSTORE's two keys must share a slot (the
// Client method and the Batch member refuse others before any I/O), and
// MEMORY USAGE routes by its key, the third word.
func TestGeoOnCluster(t *testing.T) {
	c := clusterClient(t, Options{})
	ctx := testCtx(t)
	src, dst, other := keyPrefix(t)+"{g}src", keyPrefix(t)+"{g}dst", keyPrefix(t)+"{other}dst"
	if route.Slot(other) == route.Slot(src) {
		t.Fatal("test keys share a slot")
	}
	if _, err := c.GeoAdd(ctx, src, GeoAddOptions{}, palermo, catania); err != nil {
		t.Fatal(err)
	}
	q := fromLonLat(GeoSearchQuery{Radius: 200, Unit: GeoKilometers})
	if n, err := c.GeoSearchStore(ctx, dst, src, q, false); err != nil || n != 2 {
		t.Errorf("GeoSearchStore in one slot = %d, %v; want 2", n, err)
	}
	if _, err := c.GeoSearchStore(ctx, other, src, q, false); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("GeoSearchStore across slots = %v; want ErrCrossSlot", err)
	}
	b := c.NewBatch()
	b.GeoSearchStore(other, src, q, true)
	if err := b.Execute(ctx); !errors.Is(err, ErrCrossSlot) {
		t.Errorf("batch GeoSearchStore across slots = %v; want ErrCrossSlot", err)
	}
	for _, k := range []string{src, other + "x"} {
		n, err := c.MemoryUsage(ctx, k, MemoryUsageOptions{})
		if k == src && (err != nil || n <= 0) {
			t.Errorf("MemoryUsage(%s) = %d, %v; want bytes", k, n, err)
		}
		if k != src && !errors.Is(err, ErrNil) {
			t.Errorf("MemoryUsage(missing) = %d, %v; want ErrNil", n, err)
		}
	}
}
