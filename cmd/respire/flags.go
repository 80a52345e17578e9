package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire"
)

// connFlags are the connection flags every subcommand takes.
type connFlags struct {
	addr          string
	url           string
	host          string
	port          int
	user          string
	password      string
	db            int
	resp          int
	timeout       time.Duration
	tls           bool
	noAuthWarning bool
	// given holds the names of the flags on the command line.
	given map[string]bool
}

// defaultHost and defaultPort are what -h and -p default to.
const (
	defaultHost = "127.0.0.1"
	defaultPort = 6379
)

// flagSet returns a flag set named name with the connection flags bound to
// f. addr is the --addr default.
func (f *connFlags) flagSet(name, addr, synopsis string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	addrHelp := "server address `host:port`"
	if addr == "" {
		addrHelp = "run against the real server at `host:port` (127.0.0.1 only) through a fault proxy; with --topology sentinel or cluster, a comma-separated list of sentinels or seed nodes; default: an embedded server"
	}
	fs.StringVar(&f.addr, "addr", addr, addrHelp)
	fs.StringVar(&f.url, "u", "", "server `URL` redis://[[user]:password@]host[:port][/db] (rediss:// for TLS); not with -h, -p, --addr, --tls, --user, -a or -n")
	fs.StringVar(&f.host, "h", defaultHost, "server `host` (with -p instead of --addr)")
	fs.IntVar(&f.port, "p", defaultPort, "server `port` (with -h instead of --addr)")
	fs.StringVar(&f.user, "user", "", "ACL user `name` (default: the server's default user)")
	// The defaults stay empty so that usage never shows a password taken
	// from the environment.
	fs.StringVar(&f.password, "password", "", "`password` for AUTH; or set "+passwordEnv+" (never printed; on a command line other users may see it)")
	fs.StringVar(&f.password, "a", "", "the `password`, same as --password")
	fs.IntVar(&f.db, "db", 0, "database `index`")
	fs.IntVar(&f.db, "n", 0, "database `index`, same as --db")
	fs.IntVar(&f.resp, "resp", 0, "protocol `version` 2 or 3 (default: RESP3, falling back to RESP2)")
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "dial and command `timeout`")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS (the server's certificate is verified against the system's roots)")
	fs.BoolVar(&f.noAuthWarning, "no-auth-warning", false, "do not warn about a password on the command line")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags (before or after the command; -- ends them):\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// errHelp is what parseArgs returns for --help or -help.
var errHelp = flag.ErrHelp

// parseArgs parses args with fs and returns the positional arguments.
// Flags may come before and after positional arguments; "--" ends the
// flags, and every argument after it is positional. A flag is -name or
// --name, with its value in the next argument or after "=" (a boolean
// flag takes a value only after "="). When lenient is set, a word after
// the first positional argument that starts with "-" but names no flag of
// fs is positional too, so "LRANGE k 0 -1" passes -1 on; otherwise it is
// an error. --help and -help return [errHelp].
func parseArgs(fs *flag.FlagSet, args []string, lenient bool) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "help" && fs.Lookup("help") == nil {
			return nil, errHelp
		}
		fl := fs.Lookup(name)
		if fl == nil {
			if lenient && len(pos) > 0 {
				pos = append(pos, a)
				continue
			}
			if name == "" || name[0] == '-' {
				return nil, fmt.Errorf("bad flag syntax: %s", a)
			}
			if gluedPassword(name) {
				return nil, errGluedPassword
			}
			return nil, fmt.Errorf("flag provided but not defined: -%s", name)
		}
		if bf, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("invalid value %q for flag -%s: %v", value, name, err)
		}
	}
	return pos, nil
}

// errGluedPassword reports an unknown flag that may be a password glued
// to -a or --password (-aPASSWORD), without repeating it.
var errGluedPassword = errors.New("flag provided but not defined (not repeated: it may hold a password); write -a PASSWORD with a space, or set " + passwordEnv)

// gluedPassword reports whether the unknown flag name may be -a or
// --password with its value glued on.
func gluedPassword(name string) bool {
	return strings.HasPrefix(name, "password") || (strings.HasPrefix(name, "a") && !strings.HasPrefix(name, "addr"))
}

// findCommand returns the index in args of the command word: the first
// argument that is not a connection flag or a flag's value, or -1 when
// there is none. afterDashes reports that "--" came before it (the word is
// then never a subcommand name). Only connection flags may precede the
// command word; a subcommand's own flags follow it.
func findCommand(args []string) (index int, afterDashes bool, err error) {
	var f connFlags
	fs := f.flagSet("respire", defaultAddr, "respire", io.Discard)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return i + 1, true, nil
			}
			return -1, true, nil
		}
		if len(a) < 2 || a[0] != '-' {
			return i, false, nil
		}
		// Parse this flag alone: parseArgs consumes its value, if any.
		n := 1
		if name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "="); !hasValue {
			if fl := fs.Lookup(name); fl != nil {
				if bf, ok := fl.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
					n = 2
				}
			}
		}
		if _, err := parseArgs(fs, args[i:min(i+n, len(args))], false); err != nil {
			return -1, false, err
		}
		i += n - 1
	}
	return -1, false, nil
}

// options validates the flags and returns the client options. It sets
// f.addr to the address -h and -p or -u give, when they do.
func (f *connFlags) options(getenv func(string) string) (respire.Options, error) {
	if f.resp != 0 && f.resp != 2 && f.resp != 3 {
		return respire.Options{}, fmt.Errorf("--resp must be 2 or 3, not %d", f.resp)
	}
	if f.timeout <= 0 {
		return respire.Options{}, fmt.Errorf("--timeout must be positive, not %v", f.timeout)
	}
	if f.db < 0 {
		return respire.Options{}, fmt.Errorf("-n/--db must not be negative, not %d", f.db)
	}
	if f.given["u"] {
		return f.urlOptions(getenv)
	}
	if f.given["h"] || f.given["p"] {
		if f.given["addr"] {
			return respire.Options{}, errors.New("--addr and -h/-p both give the server's address: use one or the other")
		}
		if f.port < 1 || f.port > 65535 {
			return respire.Options{}, fmt.Errorf("-p must be a port from 1 through 65535, not %d", f.port)
		}
		if f.host == "" {
			return respire.Options{}, errors.New("-h must not be empty")
		}
		f.addr = net.JoinHostPort(f.host, strconv.Itoa(f.port))
	}
	pw := f.password
	if pw == "" && getenv != nil {
		pw = getenv(passwordEnv)
	}
	o := respire.Options{
		Endpoints:      []string{f.addr},
		Username:       f.user,
		Password:       pw,
		DB:             f.db,
		Protocol:       f.resp,
		DialTimeout:    f.timeout,
		CommandTimeout: f.timeout,
	}
	if f.tls {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return o, nil
}

// urlConflicts are the flags that say what -u's URL says.
var urlConflicts = []string{"addr", "h", "p", "tls", "user", "password", "a", "db", "n"}

// urlOptions returns the options of -u's URL, with --resp and --timeout
// applied over it.
func (f *connFlags) urlOptions(getenv func(string) string) (respire.Options, error) {
	var both []string
	for _, name := range urlConflicts {
		if f.given[name] {
			both = append(both, flagName(name))
		}
	}
	if len(both) > 0 {
		return respire.Options{}, fmt.Errorf("-u gives the address, user, password, database and TLS in its URL: do not combine it with %s", strings.Join(both, ", "))
	}
	o, err := respire.ParseURL(f.url)
	if err != nil {
		return o, fmt.Errorf("-u: %w", err)
	}
	if f.given["resp"] || o.Protocol == 0 {
		o.Protocol = f.resp
	}
	if f.given["timeout"] || o.DialTimeout == 0 {
		o.DialTimeout = f.timeout
	}
	if f.given["timeout"] || o.CommandTimeout == 0 {
		o.CommandTimeout = f.timeout
	}
	if o.Password == "" && getenv != nil {
		o.Password = getenv(passwordEnv)
	}
	f.addr = strings.Join(o.Endpoints, ",")
	return o, nil
}

// flagName returns how the usage text spells the flag name.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// passwordOnCommandLine reports whether a password was given with -a,
// --password or in -u's URL.
func (f *connFlags) passwordOnCommandLine() bool {
	if f.given["a"] || f.given["password"] {
		return true
	}
	if !f.given["u"] {
		return false
	}
	_, rest, _ := strings.Cut(f.url, "://")
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndexByte(rest, '@')
	return at >= 0 && strings.Contains(rest[:at], ":")
}

// passwordWarning is printed when a password is on the command line.
const passwordWarning = "respire: warning: a password on the command line may be seen by other users of this machine " +
	"(process list, shell history); set " + passwordEnv + " instead, or pass --no-auth-warning"
