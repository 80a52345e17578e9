package respire_test

import (
	"context"
	"fmt"
	"log"

	"github.com/respire-go/respire"
)

// Index places by position and measure the distance between two of them.
func ExampleClient_GeoDist() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.GeoAdd(ctx, "sicily", respire.GeoAddOptions{},
		respire.GeoMember{Member: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
		respire.GeoMember{Member: "Catania", Longitude: 15.087269, Latitude: 37.502669}); err != nil {
		log.Fatal(err)
	}
	km, err := client.GeoDist(ctx, "sicily", "Palermo", "Catania", respire.GeoKilometers)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f km\n", km)
	// Output: 166.27 km
}

// Find the members within a radius of a position, nearest first, with
// their distances.
func ExampleClient_GeoSearchLocations() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.GeoAdd(ctx, "sicily", respire.GeoAddOptions{},
		respire.GeoMember{Member: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
		respire.GeoMember{Member: "Catania", Longitude: 15.087269, Latitude: 37.502669},
		respire.GeoMember{Member: "Rome", Longitude: 12.496366, Latitude: 41.902782}); err != nil {
		log.Fatal(err)
	}
	q := respire.GeoSearchQuery{FromLonLat: true, Longitude: 15, Latitude: 37, Radius: 200, Unit: respire.GeoKilometers, Order: respire.GeoAsc}
	locs, err := client.GeoSearchLocations(ctx, "sicily", q, respire.GeoWith{Dist: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range locs {
		fmt.Printf("%s %.2f\n", l.Member, l.Dist)
	}
	names, err := client.GeoSearch(ctx, "sicily", respire.GeoSearchQuery{Member: "Rome", Radius: 100, Unit: respire.GeoKilometers})
	fmt.Println(names, err)
	// Output:
	// Catania 56.44
	// Palermo 190.44
	// [Rome] <nil>
}
