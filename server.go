package respire

import (
	"strings"
	"time"

	"github.com/respire-go/respire/catalog"
	"github.com/respire-go/respire/internal/wire"
	"github.com/respire-go/respire/resp"
)

// Server introspection. The catalog's categories fit what these commands
// do: INFO and TIME read server metadata (Connection: a resend reads it
// again, perhaps from another server after a failover), DBSIZE and
// MEMORY USAGE read the data set (ReadOnly), PING and ECHO have no effect
// at all (Always). So the default retry policy, which accepts ReadOnly,
// resends every one of them.

var (
	specINFO        = specOf(catalog.Server.INFO())
	specTIME        = specOf(catalog.Server.TIME())
	specDBSIZE      = specOf(catalog.Server.DBSIZE())
	specMEMORYUSAGE = specOf(catalog.Server.MEMORY_USAGE())
)

// Info is the reply of INFO: the text the server sent, and its fields by
// section. It is a plain value that the library neither keeps nor changes
// once returned: safe for concurrent reads.
type Info struct {
	// Sections maps a section's name, lower-cased as INFO's arguments
	// are ("server", "clients", "keyspace", "commandstats"), to its
	// fields: each "name:value" line of the section. A keyspace line such
	// as "db0:keys=1,expires=0,avg_ttl=0" is field "db0" with the value
	// after the colon. A field repeated in a section keeps its last
	// value (INFO modules writes one "module" line per module): read
	// every line in [Info.Raw].
	Sections map[string]map[string]string
	raw      string
}

// Raw returns the text of the reply as the server sent it.
func (i Info) Raw() string { return i.raw }

// Value returns the value of field in section (lower-case) and whether
// the reply has it.
func (i Info) Value(section, field string) (string, bool) {
	v, ok := i.Sections[section][field]
	return v, ok
}

// parseInfo splits INFO's text into sections: a "# Name" line starts
// one, every "field:value" line after it belongs to it, and other lines
// (blank ones) are skipped. Fields before any header go to section "".
func parseInfo(text string) Info {
	info := Info{Sections: map[string]map[string]string{}, raw: text}
	var cur map[string]string
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if name, ok := strings.CutPrefix(line, "#"); ok {
			name = strings.ToLower(strings.TrimSpace(name))
			if cur = info.Sections[name]; cur == nil {
				cur = map[string]string{}
				info.Sections[name] = cur
			}
			continue
		}
		field, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if cur == nil {
			cur = map[string]string{}
			info.Sections[""] = cur
		}
		cur[field] = value
	}
	return info
}

func infoOf(v resp.Value) (Info, error) {
	switch v.Type {
	case resp.BulkString, resp.Verbatim, resp.SimpleString:
		return parseInfo(string(v.TextBytes())), nil
	case resp.Null, 0:
		return Info{}, ErrNil
	}
	return Info{}, unexpected("string", v)
}

// Info returns the server's information and statistics (INFO), parsed
// into sections. With no sections the server picks its default ones;
// sections name others ("all", "everything", "commandstats", or several
// at once on Redis 7.0 or later). An empty section name fails with
// [ErrInvalidArgument] before anything is sent. On a Cluster client it
// answers for one node. Its retry category is Connection: a resend reads
// the statistics again, so they may have moved on.
func (c *Client) cmdInfo(sections ...string) cmd[Info] {
	for _, s := range sections {
		if s == "" {
			return invalidCmd[Info](specINFO, "empty section name")
		}
	}
	f := c.newFrame(1+len(sections), "INFO")
	for _, s := range sections {
		arg(f, s)
	}
	return typedCmd(f, specINFO, wire.WantValue, infoOf)
}

// Time returns the server's clock (TIME), to the microsecond, in the
// local time zone. On a Cluster client it answers for one node. Its
// retry category is Connection: a resend reads the clock again, later.
func (c *Client) cmdTime() cmd[time.Time] {
	return typedCmd(c.newFrame(1, "TIME"), specTIME, wire.WantValue, timeOf)
}

// timeOf converts TIME's [seconds, microseconds] (strings in both
// protocols).
func timeOf(v resp.Value) (time.Time, error) {
	if !v.Type.Aggregate() || len(v.Elems) != 2 {
		return time.Time{}, unexpected("[seconds, microseconds] pair", v)
	}
	sec, err := convInt64(v.Elems[0])
	if err != nil {
		return time.Time{}, atElement(0, err)
	}
	usec, err := convInt64(v.Elems[1])
	if err != nil {
		return time.Time{}, atElement(1, err)
	}
	return time.Unix(sec, usec*int64(time.Microsecond)), nil
}

// DBSize returns the number of keys in the selected database (DBSIZE).
// On a Cluster client it sums the counts of every primary; a Batch
// member, like every keyless member, runs on one node and counts only
// that node's keys. Its retry category is ReadOnly.
func (c *Client) cmdDBSize() cmd[int64] {
	return typedCmd(c.newFrame(1, "DBSIZE"), specDBSIZE, wire.WantInt, intOf)
}

// MemoryUsageOptions are MEMORY USAGE's options. The zero value samples
// as the server does by default (5 elements of a collection). A call only
// reads it and keeps no reference to it, so one value may serve concurrent
// calls while nobody changes it.
type MemoryUsageOptions struct {
	// Samples, when positive, is how many elements of a collection to
	// sample (SAMPLES count).
	Samples int64
	// SampleAll measures every element (SAMPLES 0), exact but slow for
	// large values. It excludes Samples.
	SampleAll bool
}

// MemoryUsage returns how many bytes the key and its value take in
// memory, estimated from samples of a collection (MEMORY USAGE), or
// [ErrNil] when key does not exist. A negative Samples, or Samples with
// SampleAll, fails with [ErrInvalidArgument] before anything is sent.
// Its retry category is ReadOnly.
func (c *Client) cmdMemoryUsage(key string, opt MemoryUsageOptions) cmd[int64] {
	switch {
	case opt.Samples < 0:
		return invalidCmd[int64](specMEMORYUSAGE, "negative Samples")
	case opt.Samples > 0 && opt.SampleAll:
		return invalidCmd[int64](specMEMORYUSAGE, "Samples and SampleAll are mutually exclusive")
	}
	sample := opt.Samples > 0 || opt.SampleAll
	n := 3
	if sample {
		n += 2
	}
	f := c.newFrame(n, "MEMORY")
	arg(f, "USAGE")
	arg(f, key)
	if sample {
		arg(f, "SAMPLES")
		argInt(f, opt.Samples)
	}
	return typedCmd(f, specMEMORYUSAGE, wire.WantValue, intOf)
}

// Ping is defined here for its Batch member (PING, whose Future holds no
// value: only whether the server answered); the Client method is in
// keys.go. Its retry category is Always.
//
// respire:client manual
func (c *Client) cmdPing() cmd[struct{}] {
	return typedCmd(c.newFrame(1, "PING"), specPING, wire.WantNone, statusOf)
}

// Echo is defined here for its Batch member (ECHO); the Client method is
// in keys.go. Its retry category is Always.
//
// respire:client manual
func (c *Client) cmdEcho(message string) cmd[string] {
	f := c.newFrame(2, "ECHO")
	arg(f, message)
	return stringCmd(f, specECHO)
}
