package main

// The Redis Cluster scenario: every client connects with its cluster
// client to a cluster scripts/bench.sh starts (3 primaries, no replicas);
// the keys are loaded through go-redis's cluster client, checked from
// every client on every primary, and the workers pick keys at random.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/respire-go/respire"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// clusterInfo is what the harness knows about the cluster under test:
// its slot map as CLUSTER SLOTS reported it when the run began, and the
// go-redis cluster client that loads the keys (never a client under test).
type clusterInfo struct {
	seeds     []string
	cc        *redis.ClusterClient
	owner     [clusterSlots]string // slot -> primary address
	primaries []string             // sorted
	nodes     []string             // primaries and replicas, sorted

	// Filled by layout, for one keyspace.
	sample        map[string]string // primary -> one of the keys it owns
	keysPerNode   map[string]int    // primary -> number of keys it owns
	distinctSlots int               // slots holding at least one key
}

// newClusterProbe connects to the cluster through seeds, reads its slot
// map, and opens a probe connection to every node so that the server
// side's CPU time and system calls are summed over all of them.
func newClusterProbe(ctx context.Context, seeds []string) (*serverProbe, error) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
	info, err := readSlotMap(ctx, seeds)
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	info.seeds, info.cc = seeds, cc
	p := &serverProbe{cluster: info}
	for _, addr := range info.nodes {
		n, err := newNodeProbe(ctx, addr)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("node %s: %v", addr, err)
		}
		p.nodes = append(p.nodes, n)
	}
	if err := cc.Ping(ctx).Err(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// readSlotMap asks the seeds in turn for CLUSTER SLOTS and requires every
// slot to be served.
func readSlotMap(ctx context.Context, seeds []string) (*clusterInfo, error) {
	var lastErr error
	for _, seed := range seeds {
		rc := redis.NewClient(&redis.Options{Addr: seed, PoolSize: 1})
		slots, err := rc.ClusterSlots(ctx).Result()
		_ = rc.Close()
		if err != nil {
			lastErr = fmt.Errorf("CLUSTER SLOTS on %s: %v", seed, err)
			continue
		}
		info := &clusterInfo{}
		for _, s := range slots {
			if len(s.Nodes) == 0 || s.Start < 0 || s.End >= clusterSlots || s.Start > s.End {
				return nil, fmt.Errorf("CLUSTER SLOTS on %s: bad range %d-%d", seed, s.Start, s.End)
			}
			primary := s.Nodes[0].Addr
			for slot := s.Start; slot <= s.End; slot++ {
				info.owner[slot] = primary
			}
			if !contains(info.primaries, primary) {
				info.primaries = append(info.primaries, primary)
			}
			for _, n := range s.Nodes {
				if !contains(info.nodes, n.Addr) {
					info.nodes = append(info.nodes, n.Addr)
				}
			}
		}
		for slot, addr := range info.owner {
			if addr == "" {
				return nil, fmt.Errorf("CLUSTER SLOTS on %s: slot %d is not served (is the cluster created and cluster_state:ok?)", seed, slot)
			}
		}
		slices.Sort(info.primaries)
		slices.Sort(info.nodes)
		return info, nil
	}
	return nil, lastErr
}

// layout computes where the keys live: how many each primary owns, how
// many distinct slots they occupy, and one sample key per primary for
// the correctness check. It fails when a primary owns none, since the
// scenario is meant to spread the load over every primary. It also
// checks the harness's slot function against the server's CLUSTER
// KEYSLOT on the sample keys.
func (ci *clusterInfo) layout(ctx context.Context, keys keyspace) error {
	ci.sample = map[string]string{}
	ci.keysPerNode = map[string]int{}
	used := make([]bool, clusterSlots)
	for _, k := range keys {
		slot := keySlot(k)
		if !used[slot] {
			used[slot] = true
			ci.distinctSlots++
		}
		owner := ci.owner[slot]
		ci.keysPerNode[owner]++
		if _, ok := ci.sample[owner]; !ok {
			ci.sample[owner] = k
		}
	}
	for _, p := range ci.primaries {
		k, ok := ci.sample[p]
		if !ok {
			return fmt.Errorf("no key of the %d falls on primary %s; use more keys (-keys)", len(keys), p)
		}
		got, err := ci.cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER KEYSLOT %s: %v", k, err)
		}
		if int(got) != keySlot(k) {
			return fmt.Errorf("slot of %s: harness computes %d, server says %d", k, keySlot(k), got)
		}
	}
	return nil
}

// describe summarises the layout for the results.
func (ci *clusterInfo) describe() map[string]any {
	return map[string]any{
		"seeds":          ci.seeds,
		"primaries":      ci.primaries,
		"nodes":          ci.nodes,
		"keys_per_node":  ci.keysPerNode,
		"distinct_slots": ci.distinctSlots,
		"key_choice":     "each goroutine draws keys uniformly at random (xorshift64*, its own state) from the keyspace",
		"load":           "go-redis ClusterClient pipeline (split by slot) before each value size's scenarios",
		"check":          "before each value size's scenarios, every client GETs one key owned by each primary and must read back the loaded value",
		"server_costs":   "server CPU and system calls are summed over every node",
	}
}

// checkClusterDriver verifies that d reads back, on every primary, what
// was loaded. A client that does not route by slot gets MOVED (or reads
// the wrong node) for the keys of the other primaries and fails here,
// before it can post a result.
func checkClusterDriver(ctx context.Context, ci *clusterInfo, d driver, valueBytes int) error {
	var failed []string
	for _, p := range ci.primaries {
		k := ci.sample[p]
		n, err := d.get(ctx, k)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("GET %s (slot %d, on %s): %v", k, keySlot(k), p, err))
		case n != valueBytes:
			failed = append(failed, fmt.Sprintf("GET %s (slot %d, on %s) returned %d bytes, want %d", k, keySlot(k), p, n, valueBytes))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("CLUSTER CHECK FAILED: the client cannot read back its keys on %d of %d primaries; it does not route by slot (or is not in cluster mode), so it is not measured:\n    %s",
			len(failed), len(ci.primaries), strings.Join(failed, "\n    "))
	}
	return nil
}

// newClusterDriver connects the named client with its cluster client in
// its default configuration, seeded with seeds.
func newClusterDriver(ctx context.Context, name string, seeds []string) (driver, error) {
	switch name {
	case nameRespire, nameRespireDisabled, nameRespireEnabled, nameRespireObserved:
		return newRespireDriver(ctx, name, respire.Options{Endpoints: seeds, Cluster: &respire.ClusterOptions{}})
	case nameGoRedis:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
		if err := c.Ping(ctx).Err(); err != nil {
			_ = c.Close()
			return nil, err
		}
		return goRedisClusterDriver{c}, nil
	case nameRueidis:
		// rueidis detects a cluster by itself (CLUSTER SLOTS on the seeds).
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: seeds})
		if err != nil {
			return nil, err
		}
		return rueidisDriver{c}, nil
	}
	return nil, fmt.Errorf("unknown client %q", name)
}

type goRedisClusterDriver struct{ c *redis.ClusterClient }

func (d goRedisClusterDriver) get(ctx context.Context, key string) (int, error) {
	v, err := d.c.Get(ctx, key).Result()
	return len(v), err
}

func (d goRedisClusterDriver) set(ctx context.Context, key, value string) error {
	return d.c.Set(ctx, key, value, 0).Err()
}

func (d goRedisClusterDriver) close() { _ = d.c.Close() }

// connect opens the named client for this run: its cluster client with
// -cluster, else its standalone client on -addr.
func (c config) connect(ctx context.Context, name string) (driver, error) {
	if len(c.cluster) > 0 {
		return newClusterDriver(ctx, name, c.cluster)
	}
	return newDriver(ctx, name, c.addr)
}

// check runs the correctness check that fits the run: one key on a
// standalone server, one key per primary on a cluster.
func check(ctx context.Context, p *serverProbe, d driver, keys keyspace, valueBytes int) error {
	if p.cluster != nil {
		return checkClusterDriver(ctx, p.cluster, d, valueBytes)
	}
	return checkDriver(ctx, d, keys[1], valueBytes)
}

// keySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its hash tag (the bytes between the first "{" and the next
// "}", when not empty), modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % clusterSlots)
}

// crc16 is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no
// reflection, as the Redis Cluster specification defines it.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// xorshift is a per-worker pseudo-random generator (xorshift64*): no
// locks, no allocations, so the workers stay out of the measurement.
type xorshift uint64

func newXorshift(seed uint64) xorshift {
	// splitmix64 of the seed, so that neighbouring seeds start far apart.
	z := seed + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return xorshift(z)
}

func (x *xorshift) next() uint64 {
	v := uint64(*x)
	v ^= v >> 12
	v ^= v << 25
	v ^= v >> 27
	*x = xorshift(v)
	return v * 0x2545f4914f6cdd1d
}
