package respire_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/respire-go/respire"
	"github.com/respire-go/respire/respiretest"
)

// A watched transaction reruns its callback when another client changed
// a watched key before EXEC. Here the first run changes the key itself,
// through the shared connection, so the first EXEC applies nothing.
func ExampleClient_Watch() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if err := client.Set(ctx, "balance", "10"); err != nil {
		log.Fatal(err)
	}

	runs := 0
	err := client.Watch(ctx, func(tx *respire.Tx) error {
		runs++
		v, err := tx.Get(ctx, "balance")
		if err != nil {
			return err
		}
		if runs == 1 { // another writer gets in between
			if _, err := client.IncrBy(ctx, "balance", 5); err != nil {
				return err
			}
		}
		var n int
		fmt.Sscan(v, &n)
		tx.Queue().Set("balance", fmt.Sprint(n*2))
		return nil
	}, "balance")
	fmt.Println(err, "runs:", runs)
	v, _ := client.Get(ctx, "balance")
	fmt.Println("balance:", v)
	// Output:
	// <nil> runs: 2
	// balance: 30
}

// A blocking pop runs on a dedicated connection, so it never stalls the
// shared one. It returns at once when a list has an element, and ErrNil
// when the timeout passes first.
func ExampleClient_BLPop() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()
	if _, err := client.RPush(ctx, "jobs", "job-1"); err != nil {
		log.Fatal(err)
	}

	key, job, err := client.BLPop(ctx, time.Second, "urgent", "jobs")
	fmt.Println(key, job, err)

	_, _, err = client.BLPop(ctx, 10*time.Millisecond, "urgent", "jobs")
	fmt.Println(errors.Is(err, respire.ErrNil))
	// Output:
	// jobs job-1 <nil>
	// true
}

// A script is sent as EVALSHA, and as EVAL with its source when the
// server does not know it yet. It is never resent until its category is
// declared; this one is a checked write (SET NX), so a resend is harmless.
func ExampleNewScript() {
	client, stop := exampleClient()
	defer stop()
	ctx := context.Background()

	claim := respire.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 1 end
return 0`, respire.ScriptOptions{}).WithRetryCategory(respire.WriteChecked)

	for _, owner := range []string{"ann", "bob"} {
		r, err := claim.Run(ctx, client, []string{"lock"}, owner)
		if err != nil {
			log.Fatal(err)
		}
		won, _ := r.Int64()
		fmt.Println(owner, won)
	}
	v, _ := client.Get(ctx, "lock")
	fmt.Println("lock:", v)
	// Output:
	// ann 1
	// bob 0
	// lock: ann
}

// A function is called with FCALL; when the client knows the library's
// source, a server that lost the library gets it again (FUNCTION LOAD
// REPLACE) and the call is repeated. The embedded test server has no
// functions, so this example is not run.
func ExampleNewFunction() {
	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{"localhost:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	const lib = `#!lua name=counters
redis.register_function('bump', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)`
	bump := respire.NewFunction("counters", "bump", respire.FunctionOptions{Source: lib})
	r, err := bump.Call(ctx, client, []string{"hits"}, "2")
	if err != nil {
		log.Fatal(err)
	}
	n, _ := r.Int64()
	fmt.Println(n)
}

// A Sentinel client asks the sentinels for the current primary and
// follows it through failovers. Options.Sentinel or a redis+sentinel URL
// configures it.
func ExampleSentinelOptions() {
	opts := respire.Options{
		Sentinel: &respire.SentinelOptions{
			PrimaryName: "mymaster",
			Addrs:       []string{"10.0.0.1:26379", "10.0.0.2:26379"},
		},
		ReadFrom: respire.ReadReplicaPreferred,
	}
	// client, err := respire.Connect(ctx, opts)
	fmt.Println(opts.Sentinel.PrimaryName, opts.Sentinel.Addrs)

	u, err := respire.ParseURL("redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster/2?read_from=replica-preferred")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Sentinel.PrimaryName, u.Sentinel.Addrs, u.DB, u.ReadFrom == respire.ReadReplicaPreferred)
	// Output:
	// mymaster [10.0.0.1:26379 10.0.0.2:26379]
	// mymaster [10.0.0.1:26379 10.0.0.2:26379] 2 true
}

// A Cluster client takes seed nodes in Endpoints and Options.Cluster (or a
// redis+cluster URL); it learns the slot map from them and routes each
// command to its slot's owner.
func ExampleClusterOptions() {
	opts := respire.Options{
		Endpoints: []string{"10.0.0.1:7000", "10.0.0.2:7000"},
		Cluster:   &respire.ClusterOptions{MaxRedirects: 5},
	}
	// client, err := respire.Connect(ctx, opts)
	fmt.Println(opts.Endpoints, opts.Cluster.MaxRedirects)

	u, err := respire.ParseURL("redis+cluster://10.0.0.1:7000,10.0.0.2:7000?read_from=replica")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Endpoints, u.Cluster != nil, u.ReadFrom == respire.ReadReplica)
	// Output:
	// [10.0.0.1:7000 10.0.0.2:7000] 5
	// [10.0.0.1:7000 10.0.0.2:7000] true true
}

// After an error, MayHaveExecuted says whether the command may have run.
// Here the fault proxy of the embedded test server lets INCR run and
// loses its reply: the default policy does not resend a write that may
// have run, and the caller learns it must not blindly send it again.
func ExampleMayHaveExecuted() {
	srv := exampleFaultServer(respiretest.Rule{Command: "INCR", Action: respiretest.DropAfterForward})
	defer srv.Close()

	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{Endpoints: []string{srv.Addr()}, RetryPolicy: &respire.RetryPolicy{}})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	_, err = client.Incr(ctx, "visits")
	fmt.Println(errors.Is(err, respire.ErrConnectionLost), respire.MayHaveExecuted(err))
	v, err := client.Get(ctx, "visits")
	fmt.Println(v, err)
	// Output:
	// true true
	// 1 <nil>
}

// Under a RetryPolicy a read that met LOADING (a server still loading its
// data) is sent again after a short backoff; the caller sees only the
// reply. The fault proxy answers the first GET with LOADING itself.
func ExampleRetryPolicy_loading() {
	srv := exampleFaultServer(respiretest.Rule{Command: "GET", Action: respiretest.Inject(respiretest.ErrLoading)})
	defer srv.Close()

	ctx := context.Background()
	client, err := respire.Connect(ctx, respire.Options{
		Endpoints:   []string{srv.Addr()},
		RetryPolicy: &respire.RetryPolicy{}, // 3 attempts, reads
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Incr(ctx, "visits"); err != nil {
		log.Fatal(err)
	}

	v, err := client.Get(ctx, "visits")
	fmt.Println(v, err, "- GET ran", srv.Executed("GET"), "time")
	// Output: 1 <nil> - GET ran 1 time
}

// exampleFaultServer starts the embedded test server with rule on its
// fault proxy.
func exampleFaultServer(rule respiretest.Rule) *respiretest.Server {
	srv, err := respiretest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := srv.AddRule(rule); err != nil {
		log.Fatal(err)
	}
	return srv
}
