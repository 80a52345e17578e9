package main

// The pipeline scenario: each operation is one batch of -pipeline members,
// all GET or all SET, sent with each client's batching API (respire's
// Batch, go-redis's Pipelined, rueidis's DoMulti) on a standalone server.
// Every goroutine owns one reusable pipe, made before the measured window,
// so that the harness adds no allocation per batch.

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/respire-go/respire"
)

// pipelineClients are the clients of the pipeline scenario by default.
var pipelineClients = []string{nameRespire, nameGoRedis, nameRueidis}

// pipeliner is a driver that can send batches.
type pipeliner interface {
	// newPipe returns one goroutine's reusable batch state for batches
	// of up to size members.
	newPipe(size int) pipe
}

// pipe is one goroutine's batch of one client, reused for every batch.
// A nil reply to a GET is a miss, not a failure (the keys are loaded, so
// the pipeline check finds misses through the bytes read).
type pipe interface {
	// get sends one batch of GET keys[i] and reads every value. It
	// returns the total length of the values, the number of members
	// that failed and the first failure.
	get(ctx context.Context, keys []string) (n, failed int, err error)
	// set sends one batch of SET keys[i] value.
	set(ctx context.Context, keys []string, value string) (failed int, err error)
}

// pipeFuncs is a pipe made of two closures.
type pipeFuncs struct {
	getFn func(ctx context.Context, keys []string) (int, int, error)
	setFn func(ctx context.Context, keys []string, value string) (int, error)
}

func (p pipeFuncs) get(ctx context.Context, keys []string) (int, int, error) {
	return p.getFn(ctx, keys)
}

func (p pipeFuncs) set(ctx context.Context, keys []string, value string) (int, error) {
	return p.setFn(ctx, keys, value)
}

// tally counts a member's error: nil and (for GET) a nil reply are not
// failures.
func tally(err error, failed *int, first *error) {
	if err == nil {
		return
	}
	*failed++
	if *first == nil {
		*first = err
	}
}

// futuresOf and setFuturesOf return an empty slice of whatever type
// Batch.Get and Batch.Set return (Future values today; pointers before),
// so that the code below compiles whatever a Future is and whatever Set's
// Future holds. Method expressions are plain functions: nothing is
// allocated.
func futuresOf[F any](_ func(*respire.Batch, string) F, n int) []F { return make([]F, 0, n) }

func setFuturesOf[F any](_ func(*respire.Batch, string, string) F, n int) []F {
	return make([]F, 0, n)
}

// newPipe: one Batch per goroutine; per batch the members are queued,
// executed, their futures read, and the batch reset for the next one.
func (d respireDriver) newPipe(size int) pipe {
	b := d.c.NewBatch()
	gets := futuresOf((*respire.Batch).Get, size)
	sets := setFuturesOf((*respire.Batch).Set, size)
	return pipeFuncs{
		getFn: func(ctx context.Context, keys []string) (int, int, error) {
			gets = gets[:0]
			for _, k := range keys {
				gets = append(gets, b.Get(k))
			}
			execErr := b.Execute(ctx)
			n, failed := 0, 0
			var first error
			for i := range gets {
				v, err := gets[i].Result()
				if errors.Is(err, respire.ErrNil) {
					err = nil
				}
				tally(err, &failed, &first)
				n += len(v)
			}
			b.Reset()
			if execErr != nil && first == nil {
				failed, first = len(keys), execErr
			}
			return n, failed, first
		},
		setFn: func(ctx context.Context, keys []string, value string) (int, error) {
			sets = sets[:0]
			for _, k := range keys {
				sets = append(sets, b.Set(k, value))
			}
			execErr := b.Execute(ctx)
			failed := 0
			var first error
			for i := range sets {
				tally(sets[i].Err(), &failed, &first)
			}
			b.Reset()
			if execErr != nil && first == nil {
				failed, first = len(keys), execErr
			}
			return failed, first
		},
	}
}

// goRedisPipe fills go-redis pipelines. Its fill method value is bound
// once, so that Pipelined gets the same function every batch instead of a
// new closure.
type goRedisPipe struct {
	c     *redis.Client
	fn    func(redis.Pipeliner) error
	ctx   context.Context
	keys  []string
	value string
	isSet bool
	gets  []*redis.StringCmd
	sets  []*redis.StatusCmd
}

func (d goRedisDriver) newPipe(size int) pipe {
	p := &goRedisPipe{c: d.c, gets: make([]*redis.StringCmd, 0, size), sets: make([]*redis.StatusCmd, 0, size)}
	p.fn = p.fill
	return p
}

func (p *goRedisPipe) fill(pl redis.Pipeliner) error {
	for _, k := range p.keys {
		if p.isSet {
			p.sets = append(p.sets, pl.Set(p.ctx, k, p.value, 0))
		} else {
			p.gets = append(p.gets, pl.Get(p.ctx, k))
		}
	}
	return nil
}

// run sends one batch; Pipelined's error is the first failed command's,
// which the caller finds again in the commands themselves.
func (p *goRedisPipe) run(ctx context.Context, keys []string, value string, isSet bool) error {
	p.ctx, p.keys, p.value, p.isSet = ctx, keys, value, isSet
	p.gets, p.sets = p.gets[:0], p.sets[:0]
	_, err := p.c.Pipelined(ctx, p.fn)
	p.ctx, p.keys = nil, nil
	return err
}

func (p *goRedisPipe) get(ctx context.Context, keys []string) (int, int, error) {
	execErr := p.run(ctx, keys, "", false)
	n, failed := 0, 0
	var first error
	for _, cmd := range p.gets {
		v, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		tally(err, &failed, &first)
		n += len(v)
	}
	if execErr != nil && !errors.Is(execErr, redis.Nil) && first == nil {
		failed, first = len(keys), execErr
	}
	return n, failed, first
}

func (p *goRedisPipe) set(ctx context.Context, keys []string, value string) (int, error) {
	execErr := p.run(ctx, keys, value, true)
	failed := 0
	var first error
	for _, cmd := range p.sets {
		tally(cmd.Err(), &failed, &first)
	}
	if execErr != nil && first == nil {
		failed, first = len(keys), execErr
	}
	return failed, first
}

// rueidisPipe builds the batch's commands with the client's builder every
// batch (a built command is consumed by the call) into a reused slice,
// and sends them with DoMulti.
type rueidisPipe struct {
	c    rueidis.Client
	cmds rueidis.Commands
}

func (d rueidisDriver) newPipe(size int) pipe {
	return &rueidisPipe{c: d.c, cmds: make(rueidis.Commands, 0, size)}
}

func (p *rueidisPipe) get(ctx context.Context, keys []string) (int, int, error) {
	p.cmds = p.cmds[:0]
	for _, k := range keys {
		p.cmds = append(p.cmds, p.c.B().Get().Key(k).Build())
	}
	n, failed := 0, 0
	var first error
	for _, r := range p.c.DoMulti(ctx, p.cmds...) {
		v, err := r.ToString()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		tally(err, &failed, &first)
		n += len(v)
	}
	clear(p.cmds) // the commands were consumed; keep no reference
	return n, failed, first
}

func (p *rueidisPipe) set(ctx context.Context, keys []string, value string) (int, error) {
	p.cmds = p.cmds[:0]
	for _, k := range keys {
		p.cmds = append(p.cmds, p.c.B().Set().Key(k).Value(value).Build())
	}
	failed := 0
	var first error
	for _, r := range p.c.DoMulti(ctx, p.cmds...) {
		tally(r.Error(), &failed, &first)
	}
	clear(p.cmds)
	return failed, first
}

// checkPipe verifies that d's pipe reads back, in one batch of size
// members, every value that was loaded: a pipe that drops or misreads
// members cannot post a result.
func checkPipe(ctx context.Context, d driver, keys keyspace, size, valueBytes int) error {
	pl, ok := d.(pipeliner)
	if !ok {
		return fmt.Errorf("this client has no pipeline driver")
	}
	batch := keys[:min(size, len(keys))]
	n, failed, err := pl.newPipe(size).get(ctx, batch)
	if err != nil {
		return fmt.Errorf("pipeline check: %d of %d GETs failed, first: %v", failed, len(batch), err)
	}
	if want := len(batch) * valueBytes; n != want {
		return fmt.Errorf("pipeline check: a batch of %d GETs read %d bytes, want %d", len(batch), n, want)
	}
	return nil
}
