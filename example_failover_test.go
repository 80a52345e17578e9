package respire_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respiretest"
)

// failoverExampleServers starts two embedded test servers, so that the
// examples run without a real Redis. Real programs name their own
// deployments, such as "primary.example:6379" and "standby.example:6379".
func failoverExampleServers() (primary, standby string, stop func()) {
	a, err := respiretest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	b, err := respiretest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	return a.Addr(), b.Addr(), func() { a.Close(); b.Close() }
}

func ExampleExecute() {
	primary, standby, stop := failoverExampleServers()
	defer stop()

	ctx := context.Background()
	group, err := respire.NewFailoverGroup(ctx, []respire.FailoverMember{
		{Options: respire.Options{Endpoints: []string{primary}}, Priority: 0},
		{Options: respire.Options{Endpoints: []string{standby}}, Priority: 1},
	}, respire.FailoverGroupOptions{
		// Retry an operation whose member lost its connection, on the
		// member active at the time of the retry. The default maximum
		// category, ReadOnly, never replays a write.
		RetryPolicy: &respire.RetryPolicy{MaxAttempts: 3},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()

	// The category declares the risk of repeating the whole operation.
	_, err = respire.Execute(ctx, group, respire.WriteLastWins, func(ctx context.Context, c *respire.Client) (struct{}, error) {
		return struct{}{}, c.Set(ctx, "greeting", "hello")
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := respire.Execute(ctx, group, respire.ReadOnly, func(ctx context.Context, c *respire.Client) (string, error) {
		return c.Get(ctx, "greeting")
	})
	fmt.Println(v, err)
	for _, m := range group.Members() {
		fmt.Printf("priority %d: healthy %v, active %v\n", m.Priority, m.Healthy, m.Active)
	}
	// Output:
	// hello <nil>
	// priority 0: healthy true, active true
	// priority 1: healthy true, active false
}

// A batch runs whole inside the operation, built afresh on the member of
// each attempt. Its category must permit every member's repeated effect:
// with an INCR inside, WriteAccumulating.
func ExampleExecute_batch() {
	primary, standby, stop := failoverExampleServers()
	defer stop()

	ctx := context.Background()
	group, err := respire.NewFailoverGroup(ctx, []respire.FailoverMember{
		{Options: respire.Options{Endpoints: []string{primary}}},
		{Options: respire.Options{Endpoints: []string{standby}}, Priority: 1},
	}, respire.FailoverGroupOptions{RetryPolicy: &respire.RetryPolicy{}})
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()

	n, err := respire.Execute(ctx, group, respire.WriteAccumulating, func(ctx context.Context, c *respire.Client) (int64, error) {
		b := c.NewBatch()
		hits := b.Incr("hits")
		b.Incr("hits")
		if err := b.Execute(ctx); err != nil {
			return 0, err
		}
		return hits.Result()
	})
	// The policy's maximum is ReadOnly: this operation runs once even if
	// its member fails, because a replay could count twice.
	fmt.Println(n, err)
	// Output: 1 <nil>
}

func ExampleExecute_categoryRequired() {
	primary, standby, stop := failoverExampleServers()
	defer stop()

	ctx := context.Background()
	group, err := respire.NewFailoverGroup(ctx, []respire.FailoverMember{
		{Options: respire.Options{Endpoints: []string{primary}}},
		{Options: respire.Options{Endpoints: []string{standby}}, Priority: 1},
	}, respire.FailoverGroupOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()

	ran := false
	_, err = respire.Execute(ctx, group, 0, func(ctx context.Context, c *respire.Client) (string, error) {
		ran = true
		return c.Get(ctx, "k")
	})
	fmt.Println(errors.Is(err, respire.ErrInvalidArgument), ran)
	// Output: true false
}

func ExampleNewFailoverGroup_duplicateAddress() {
	_, err := respire.NewFailoverGroup(context.Background(), []respire.FailoverMember{
		{Options: respire.Options{Endpoints: []string{"cache.example:6379"}}},
		{Options: respire.Options{Endpoints: []string{"CACHE.example:6379"}}, Priority: 1},
	}, respire.FailoverGroupOptions{})
	fmt.Println(errors.Is(err, respire.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// respire: invalid members[1].Options: address cache.example:6379 is also used by members[0]: the members of a failover group must be distinct servers
}
