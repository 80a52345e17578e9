#!/usr/bin/env bash
# Run every check and test of the project against real servers:
#
#   scripts/test.sh                     # gofmt, go vet, go test -race ./...
#   scripts/test.sh -run TestX          # extra arguments go to `go test`
#   scripts/test.sh ./internal/wire/... # packages given: test only those
#
# It starts the servers (scripts/servers.sh start), exports their addresses
# with RESPIRE_REQUIRE_SERVERS=1 (tests fail instead of skipping when a server
# is missing) and stops them on exit. The server ports are machine-wide, so a
# run holds ${RESPIRE_SERVERS_LOCK:-/tmp/respire-go-servers.lock} from start to
# stop: a second run on the same machine waits instead of stopping the first
# run's servers.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

step() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf '\nFAIL: %s\n' "$*" >&2; exit 1; }

LOCK_FILE=${RESPIRE_SERVERS_LOCK:-/tmp/respire-go-servers.lock}
exec 9>>"$LOCK_FILE"
if ! flock -n 9; then
  step "another test run holds $LOCK_FILE; waiting (up to 30 min)"
  flock -w 1800 9 || fail "could not lock $LOCK_FILE"
fi
export RESPIRE_SERVERS_LOCK_HELD=1

# Start the servers in the background while the static checks run; they
# converge in a few seconds, mostly waiting.
mkdir -p .servers
start_log=.servers/start.log
bash scripts/servers.sh start >"$start_log" 2>&1 9>&- &
start_pid=$!

cleanup() {
  local rc=$?
  # Let a start still under way finish (its waits are bounded) so that stop
  # sees every pid file, then stop everything.
  wait "$start_pid" 2>/dev/null || true
  bash scripts/servers.sh stop 9>&- || rc=1
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "gofmt -l"
# Same directories as ./... (no testdata, vendor, or names starting with . or _),
# and the bench module too.
unformatted=$(find . \( -name testdata -o -name vendor -o -name '.?*' -o -name '_*' \) -prune \
  -o -name '*.go' -type f -print0 | xargs -0 -r gofmt -l)
if [ -n "$unformatted" ]; then
  printf '%s\n' "$unformatted" >&2
  fail "gofmt: the files above need formatting (gofmt -w)"
fi

step "go vet ./..."
go vet ./... 9>&- || fail "go vet"

# Every package, tests included, must compile beyond linux/amd64: one
# non-Unix, 32-bit target covers the build-tagged fallbacks (no flock, no
# raw socket writes) and int being 32 bits. About 40 s with a cold build
# cache, 2 s warm.
step "GOOS=windows GOARCH=386 go vet ./..."
GOOS=windows GOARCH=386 go vet ./... 9>&- || fail "go vet for windows/386"
# Plan 9 has no Unix error numbers (a third variant of the write path);
# the library must build there, while respiretest and cmd/respire need
# miniredis's Lua engine, which does not.
step "GOOS=plan9 go build (the library's packages)"
GOOS=plan9 GOARCH=amd64 go build . ./catalog/... ./internal/... ./resp/... 9>&- || fail "go build for plan9/amd64"

if [ -f bench/go.mod ]; then
  step "(cd bench && go vet ./...)"
  (cd bench && go vet ./... 9>&-) || fail "go vet in bench/"
  # The harness's own tests (they render the committed results).
  step "(cd bench && go test -count=1 ./...)"
  (cd bench && go test -count=1 ./... 9>&-) || fail "go test in bench/"
fi
step "(cd respireotel && go vet ./...)"
(cd respireotel && go vet ./... 9>&-) || fail "go vet in respireotel/"

step "scripts/servers.sh start"
if ! wait "$start_pid"; then
  cat "$start_log" >&2
  fail "scripts/servers.sh start"
fi
cat "$start_log" >&2
# shellcheck source=/dev/null
source .servers/env
export RESPIRE_REQUIRE_SERVERS=1

# Test ./... unless the arguments name packages themselves.
pkgs=(./...)
for arg in "$@"; do
  case $arg in
  . | ./* | ../* | github.com/respire-go/respire*) pkgs=() ;;
  esac
done

step "go test -race -count=1 -timeout 20m ${pkgs[*]} $*"
go test -race -count=1 -timeout 20m "${pkgs[@]}" "$@" 9>&- || fail "go test"
if [ ${#pkgs[@]} -gt 0 ] && [ $# -eq 0 ]; then
  # The race detector allocates, so the allocation tests skip themselves
  # above; they run here without it.
  step "go test -count=1 -run 'Alloc' ./... (allocation tests, no race detector)"
  go test -count=1 -run 'Alloc' ./... 9>&- || fail "go test (allocation tests)"
  step "(cd respireotel && go test -race -count=1 ./...)"
  (cd respireotel && go test -race -count=1 ./... 9>&-) || fail "go test in respireotel/"
fi

step "all checks passed"
