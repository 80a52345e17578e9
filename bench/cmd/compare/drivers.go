package main

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/respire-go/respire"
)

// driver is one client under test. Each method runs one command and
// returns its error; replies are converted to the type the client's
// recommended API returns (a string for GET) and dropped.
type driver interface {
	get(ctx context.Context, key string) (int, error) // returns the value's length
	set(ctx context.Context, key, value string) error
	close()
}

// Client names as they appear in the results.
const (
	nameRespire         = "respire"
	nameRespireDisabled = "respire-retry-disabled"
	nameRespireEnabled  = "respire-retry-enabled"
	nameRespireObserved = "respire-observed"
	nameGoRedis         = "go-redis"
	nameRueidis         = "rueidis"
	nameCeiling         = "redis-benchmark"
)

// allClients is the order of clients within a round (before rotation).
var allClients = []string{nameRespire, nameRespireDisabled, nameRespireEnabled, nameRespireObserved, nameGoRedis, nameRueidis}

// newDriver connects the named client in its recommended high-throughput
// configuration: the library's defaults.
func newDriver(ctx context.Context, name, addr string) (driver, error) {
	switch name {
	case nameRespire, nameRespireDisabled, nameRespireEnabled, nameRespireObserved:
		return newRespireDriver(ctx, name, respire.Options{Endpoints: []string{addr}})
	case nameGoRedis:
		c := redis.NewClient(&redis.Options{Addr: addr})
		if err := c.Ping(ctx).Err(); err != nil {
			_ = c.Close()
			return nil, err
		}
		return goRedisDriver{c}, nil
	case nameRueidis:
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			return nil, err
		}
		return rueidisDriver{c}, nil
	}
	return nil, fmt.Errorf("unknown client %q", name)
}

// newRespireDriver connects one of the respire variants with opts: the
// retry policy nil, disabled (MaxAttempts 1) or at its defaults, or at its
// defaults with every metric group recorded by the OpenTelemetry SDK
// (a manual reader, as an exporter that collects now and then).
func newRespireDriver(ctx context.Context, name string, opts respire.Options) (driver, error) {
	switch name {
	case nameRespireDisabled:
		opts.RetryPolicy = &respire.RetryPolicy{MaxAttempts: 1}
	case nameRespireEnabled:
		opts.RetryPolicy = &respire.RetryPolicy{} // every field at its default
	case nameRespireObserved:
		opts.RetryPolicy = &respire.RetryPolicy{}
		opts.Metrics = respire.MetricsResiliency | respire.MetricsCommands | respire.MetricsConnections
		opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	}
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	return respireDriver{c}, nil
}

type respireDriver struct{ c *respire.Client }

func (d respireDriver) get(ctx context.Context, key string) (int, error) {
	v, err := d.c.Get(ctx, key)
	return len(v), err
}

func (d respireDriver) set(ctx context.Context, key, value string) error {
	return d.c.Set(ctx, key, value)
}

func (d respireDriver) close() { _ = d.c.Close() }

type goRedisDriver struct{ c *redis.Client }

func (d goRedisDriver) get(ctx context.Context, key string) (int, error) {
	v, err := d.c.Get(ctx, key).Result()
	return len(v), err
}

func (d goRedisDriver) set(ctx context.Context, key, value string) error {
	return d.c.Set(ctx, key, value, 0).Err()
}

func (d goRedisDriver) close() { _ = d.c.Close() }

type rueidisDriver struct{ c rueidis.Client }

func (d rueidisDriver) get(ctx context.Context, key string) (int, error) {
	v, err := d.c.Do(ctx, d.c.B().Get().Key(key).Build()).ToString()
	return len(v), err
}

func (d rueidisDriver) set(ctx context.Context, key, value string) error {
	return d.c.Do(ctx, d.c.B().Set().Key(key).Value(value).Build()).Error()
}

func (d rueidisDriver) close() { d.c.Close() }

// checkDriver verifies that d reads back what was loaded, so that a
// misconfigured client cannot post a fast but wrong result.
func checkDriver(ctx context.Context, d driver, key string, valueBytes int) error {
	n, err := d.get(ctx, key)
	if err != nil {
		return err
	}
	if n != valueBytes {
		return fmt.Errorf("GET %s returned %d bytes, want %d", key, n, valueBytes)
	}
	return nil
}
