#!/usr/bin/env bash
# Compare respire with go-redis and rueidis against a private redis-server.
#
#   scripts/bench.sh           full run (about 10 minutes on 2 cores): writes
#                              bench/results/latest.{json,md,svg}, then CPU,
#                              allocation and mutex profiles of respire and
#                              rueidis (GET at 64 and 512 goroutines) into
#                              bench/results/*.prof (git-ignored)
#   scripts/bench.sh --quick   smoke run (about 1.5 minutes): bench/results/quick.*
#   scripts/bench.sh --profile-only   only the profiles
#   scripts/bench.sh -- ARGS   extra arguments for bench/cmd/compare (see -h)
#
# The script starts its own redis-server on 127.0.0.1:${RESPIRE_BENCH_PORT:-16390}
# (no persistence, data under a temporary directory) and stops it on exit.
# See docs/performance.md for the method.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=${RESPIRE_BENCH_PORT:-16390}
HOST=127.0.0.1
MODE=full
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick ;;
    --profile-only) MODE=profile ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[bench] %s\n' "$*" >&2; }

for tool in redis-server redis-cli redis-benchmark go; do
  command -v "$tool" >/dev/null || { log "missing $tool"; exit 1; }
done
if redis-cli -h "$HOST" -p "$PORT" PING >/dev/null 2>&1; then
  log "something already answers on $HOST:$PORT; set RESPIRE_BENCH_PORT"
  exit 1
fi

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

log "building bench/cmd/compare"
(cd "$REPO/bench" && go build -o "$WORK/compare" ./cmd/compare)

log "starting redis-server on $HOST:$PORT"
redis-server --bind "$HOST" --port "$PORT" --save "" --appendonly no \
  --dir "$WORK" --logfile "$WORK/redis.log" --protected-mode yes &
SERVER_PID=$!
for _ in $(seq 100); do
  redis-cli -h "$HOST" -p "$PORT" PING 2>/dev/null | grep -q PONG && break
  sleep 0.1
done
redis-cli -h "$HOST" -p "$PORT" PING | grep -q PONG || { log "redis-server did not start"; cat "$WORK/redis.log" >&2; exit 1; }

COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$REPO" status --porcelain -- . ':!bench' ':!docs' ':!scripts' 2>/dev/null)" ]; then
  COMMIT="$COMMIT+dirty"
fi

cd "$REPO/bench"
mkdir -p results
START=$(date +%s)
case $MODE in
  quick)
    "$WORK/compare" -addr "$HOST:$PORT" -quick -commit "$COMMIT" "${EXTRA[@]}"
    ;;
  full)
    "$WORK/compare" -addr "$HOST:$PORT" -commit "$COMMIT" "${EXTRA[@]}"
    ;;
esac
if [ "$MODE" != quick ]; then
  log "profiling respire and rueidis (GET at 64 and 512 goroutines)"
  "$WORK/compare" -addr "$HOST:$PORT" -profile get:64,get:512 \
    -profile-clients respire,rueidis -profile-dir results | tee results/profiles.txt
  log "inspect with e.g.: go tool pprof -top bench/results/respire-get-c512-v64.cpu.prof"
  log "                   go tool pprof -sample_index=alloc_objects -base bench/results/respire-get-c512-v64.allocs.base.prof -top bench/results/respire-get-c512-v64.allocs.prof"
fi
log "done in $(( $(date +%s) - START )) s"
