// Package multierr holds errors that happened together, or an error and
// its detail, said on one line: a log line stays one line, and "respire:"
// is said once however many of the library's errors are inside. Each
// wrapped error stays reachable with errors.Is and errors.As, as with
// errors.Join, whose text breaks lines.
package multierr
