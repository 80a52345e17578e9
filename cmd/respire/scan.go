package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/respire-go/respire"
)

// runScan prints the keys SCAN returns, one per line. SCAN may return a
// key more than once; scan prints what the server returns. A key that
// could be misread (see field) is quoted, so that each key is one line.
func runScan(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var f connFlags
	var opts respire.ScanOptions
	rest, code, ok := parse("scan", &f, args, stderr, false, func(fs *flag.FlagSet) { scanFlags(fs, &opts) })
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "respire scan: unexpected arguments %q\n", rest)
		return exitUsage
	}
	c, _, code := connect(ctx, &f, getenv, stderr)
	if c == nil {
		return code
	}
	defer c.Close()
	for key, err := range c.Scan(ctx, opts) {
		if err != nil {
			return failed(stderr, err)
		}
		fmt.Fprintln(stdout, field(key, false))
	}
	return exitOK
}

// scanFlags adds scan's own flags to fs, bound to opts.
func scanFlags(fs *flag.FlagSet, opts *respire.ScanOptions) {
	fs.StringVar(&opts.Match, "match", "", "only keys matching the glob `pattern`")
	fs.Int64Var(&opts.Count, "count", 0, "keys the server examines per page, a `hint` (default: the server's)")
	fs.StringVar(&opts.Type, "type", "", "only keys of this `type` (string, list, hash, ...)")
}
