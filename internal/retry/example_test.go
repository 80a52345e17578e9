package retry_test

import (
	"fmt"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/retry"
)

func ExamplePolicy_Decide() {
	p, err := retry.Compile(retry.Settings{}) // defaults: 3 attempts, up to ReadOnly
	if err != nil {
		panic(err)
	}
	// INCR whose frame never reached the server: safe to resend.
	fmt.Println(p.Decide(retry.Input{Category: catalog.WriteAccumulating, Failure: retry.LostConnection, Unwritten: true, Attempts: 1}))
	// INCR whose reply was lost: it may have run, and WriteAccumulating is above ReadOnly.
	fmt.Println(p.Decide(retry.Input{Category: catalog.WriteAccumulating, Failure: retry.LostConnection, Attempts: 1}))
	// GET whose reply was lost, on its third attempt.
	fmt.Println(p.Decide(retry.Input{Category: catalog.ReadOnly, Failure: retry.LostConnection, Attempts: 3}))
	// Output:
	// retry
	// category not permitted after possible execution
	// attempts exhausted
}

func ExamplePolicy_Delay() {
	p, err := retry.Compile(retry.Settings{Jitter: retry.NoJitter})
	if err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	deadline := now.Add(25 * time.Millisecond)
	for n := 1; n <= 3; n++ {
		d := p.Delay(n, 0.5) // u would come from a random source
		fmt.Println(n, d, retry.Fits(now, deadline, d))
	}
	// Output:
	// 1 10ms true
	// 2 20ms true
	// 3 40ms false
}
