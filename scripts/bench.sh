#!/usr/bin/env bash
# Compare respire with go-redis and rueidis against a private redis-server.
#
#   scripts/bench.sh           full run (about 16 minutes on 2 cores): writes
#                              bench/results/latest.{json,md,svg}, then CPU,
#                              allocation and mutex profiles of respire and
#                              rueidis (GET at 64 and 512 goroutines) into
#                              bench/results/*.prof (git-ignored), then the
#                              pipeline scenario (about 3 minutes more):
#                              bench/results/pipeline.{json,md,svg}, then the
#                              Redis Cluster scenario (about 3 minutes more):
#                              bench/results/cluster.{json,md,svg}
#   scripts/bench.sh --quick   smoke run (about 2 minutes): bench/results/quick.*,
#                              then a smoke run of the pipeline scenario:
#                              bench/results/pipeline-quick.*
#   scripts/bench.sh --profile-only   only the profiles
#   scripts/bench.sh --pipeline only the pipeline scenario (respire Batch,
#                              go-redis Pipelined, rueidis DoMulti; batches of
#                              10 and 100 GETs or SETs at 1 and 64 goroutines;
#                              throughput in batches/s and members/s, costs
#                              per batch): bench/results/pipeline.*; with
#                              --quick a smoke run of it (about 40 s):
#                              pipeline-quick.*
#   scripts/bench.sh --cluster only the Redis Cluster scenario (3 primaries,
#                              GET/SET at 64 and 512 goroutines, random keys):
#                              bench/results/cluster.*; with --quick a smoke
#                              run of it (under a minute): cluster-quick.*
#                              (--pipeline --cluster runs both scenarios)
#   scripts/bench.sh -- ARGS   extra arguments for bench/cmd/compare (see -h),
#                              given to every compare run
#
# The script starts its own redis-server on 127.0.0.1:${RESPIRE_BENCH_PORT:-16390}
# (no persistence, data under a temporary directory) for the standalone and
# pipeline scenarios and stops it on exit.
# For the cluster scenario it starts its own 3-primary cluster on
# 127.0.0.1:${RESPIRE_BENCH_CLUSTER_PORT:-16391} and the two ports after it
# (cluster bus on those +10000), no replicas, and stops it on exit.
# See docs/performance.md for the method.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PORT=${RESPIRE_BENCH_PORT:-16390}
HOST=127.0.0.1
CLUSTER_PORT=${RESPIRE_BENCH_CLUSTER_PORT:-16391}
MODE=full
CLUSTER_ONLY=0
PIPELINE_ONLY=0
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick ;;
    --profile-only) MODE=profile ;;
    --cluster) CLUSTER_ONLY=1 ;;
    --pipeline) PIPELINE_ONLY=1 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[bench] %s\n' "$*" >&2; }

# What runs: the standalone comparison (and its profiles) unless
# --cluster or --pipeline; the pipeline scenario with --pipeline, in the
# full run and in the quick run; the cluster scenario with --cluster and
# in the full run.
RUN_STANDALONE=1
RUN_PIPELINE=0
RUN_CLUSTER=0
case $MODE in
  full) RUN_PIPELINE=1; RUN_CLUSTER=1 ;;
  quick) RUN_PIPELINE=1 ;;
esac
if [ "$CLUSTER_ONLY" = 1 ] || [ "$PIPELINE_ONLY" = 1 ]; then
  if [ "$MODE" = profile ]; then
    echo "bench.sh: --profile-only profiles the standalone server; it does not combine with --cluster or --pipeline" >&2
    exit 2
  fi
  RUN_STANDALONE=0
  RUN_PIPELINE=$PIPELINE_ONLY
  RUN_CLUSTER=$CLUSTER_ONLY
fi
# The standalone and pipeline scenarios share one redis-server.
NEED_SERVER=0
if [ "$RUN_STANDALONE" = 1 ] || [ "$RUN_PIPELINE" = 1 ]; then
  NEED_SERVER=1
fi

for tool in redis-server redis-cli redis-benchmark go; do
  command -v "$tool" >/dev/null || { log "missing $tool"; exit 1; }
done
if [ "$NEED_SERVER" = 1 ] && redis-cli -h "$HOST" -p "$PORT" PING >/dev/null 2>&1; then
  log "something already answers on $HOST:$PORT; set RESPIRE_BENCH_PORT"
  exit 1
fi

CLUSTER_PORTS=()
if [ "$RUN_CLUSTER" = 1 ]; then
  case $CLUSTER_PORT in
    ''|*[!0-9]*) log "RESPIRE_BENCH_CLUSTER_PORT must be a port number"; exit 1 ;;
  esac
  CLUSTER_PORTS=("$CLUSTER_PORT" $((CLUSTER_PORT + 1)) $((CLUSTER_PORT + 2)))
  # The test servers' ports (16379-16381, 17000-17005, 26380-26382) are
  # never touched, not even probed.
  for p in "${CLUSTER_PORTS[@]}"; do
    for q in "$p" $((p + 10000)); do
      if [ "$q" -gt 55535 ] || { [ "$q" -ge 16379 ] && [ "$q" -le 16381 ]; } ||
         { [ "$q" -ge 17000 ] && [ "$q" -le 17005 ]; } || { [ "$q" -ge 26380 ] && [ "$q" -le 26382 ]; } ||
         { [ "$NEED_SERVER" = 1 ] && [ "$q" = "$PORT" ]; }; then
        log "cluster port $q (data ports $CLUSTER_PORT-$((CLUSTER_PORT + 2)), bus ports +10000) is reserved or taken; set RESPIRE_BENCH_CLUSTER_PORT"
        exit 1
      fi
    done
  done
  for p in "${CLUSTER_PORTS[@]}"; do
    for q in "$p" $((p + 10000)); do
      if (exec 3<>"/dev/tcp/$HOST/$q") 2>/dev/null; then
        log "something already listens on $HOST:$q; set RESPIRE_BENCH_CLUSTER_PORT"
        exit 1
      fi
    done
  done
fi

WORK=$(mktemp -d)
SERVER_PID=
CLUSTER_PIDS=()
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}
stop_cluster() {
  local pid
  for pid in "${CLUSTER_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${CLUSTER_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  CLUSTER_PIDS=()
}
cleanup() {
  stop_server
  stop_cluster
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# start_cluster starts three empty cluster nodes, joins them into a
# cluster of three primaries and waits until every node reports
# cluster_state:ok.
start_cluster() {
  local p dir ok
  log "starting a 3-primary Redis Cluster on $HOST:${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[2]} (bus +10000)"
  for p in "${CLUSTER_PORTS[@]}"; do
    dir="$WORK/cluster/$p"
    mkdir -p "$dir"
    redis-server --bind "$HOST" --port "$p" --cluster-enabled yes \
      --cluster-port $((p + 10000)) --cluster-config-file nodes.conf \
      --cluster-node-timeout 5000 --save "" --appendonly no \
      --dir "$dir" --logfile "$dir/redis.log" --protected-mode yes &
    CLUSTER_PIDS+=($!)
  done
  for p in "${CLUSTER_PORTS[@]}"; do
    for _ in $(seq 100); do
      redis-cli -h "$HOST" -p "$p" PING 2>/dev/null | grep -q PONG && break
      sleep 0.1
    done
    redis-cli -h "$HOST" -p "$p" PING | grep -q PONG || { log "cluster node $p did not start"; cat "$WORK/cluster/$p/redis.log" >&2; exit 1; }
  done
  if ! redis-cli --cluster create "$HOST:${CLUSTER_PORTS[0]}" "$HOST:${CLUSTER_PORTS[1]}" "$HOST:${CLUSTER_PORTS[2]}" \
      --cluster-replicas 0 --cluster-yes >"$WORK/cluster/create.log" 2>&1; then
    log "redis-cli --cluster create failed"; cat "$WORK/cluster/create.log" >&2; exit 1
  fi
  for _ in $(seq 300); do
    ok=1
    for p in "${CLUSTER_PORTS[@]}"; do
      redis-cli -h "$HOST" -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || { ok=0; break; }
    done
    [ "$ok" = 1 ] && break
    sleep 0.1
  done
  if [ "$ok" != 1 ]; then
    log "the cluster did not reach cluster_state:ok within 30 s"
    for p in "${CLUSTER_PORTS[@]}"; do redis-cli -h "$HOST" -p "$p" cluster info >&2 || true; done
    exit 1
  fi
  log "cluster_state:ok on all three nodes"
}

log "building bench/cmd/compare"
(cd "$REPO/bench" && go build -o "$WORK/compare" ./cmd/compare)

if [ "$NEED_SERVER" = 1 ]; then
log "starting redis-server on $HOST:$PORT"
redis-server --bind "$HOST" --port "$PORT" --save "" --appendonly no \
  --dir "$WORK" --logfile "$WORK/redis.log" --protected-mode yes &
SERVER_PID=$!
for _ in $(seq 100); do
  redis-cli -h "$HOST" -p "$PORT" PING 2>/dev/null | grep -q PONG && break
  sleep 0.1
done
redis-cli -h "$HOST" -p "$PORT" PING | grep -q PONG || { log "redis-server did not start"; cat "$WORK/redis.log" >&2; exit 1; }
fi

COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$REPO" status --porcelain -- . ':!bench' ':!docs' ':!scripts' 2>/dev/null)" ]; then
  COMMIT="$COMMIT+dirty"
fi

cd "$REPO/bench"
mkdir -p results
START=$(date +%s)
if [ "$RUN_STANDALONE" = 1 ]; then
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
fi
if [ "$RUN_PIPELINE" = 1 ]; then
  log "running the pipeline scenario (batches of 10 and 100) against $HOST:$PORT"
  case $MODE in
    quick)
      "$WORK/compare" -addr "$HOST:$PORT" -pipeline 10,100 -quick -commit "$COMMIT" "${EXTRA[@]}"
      ;;
    full)
      "$WORK/compare" -addr "$HOST:$PORT" -pipeline 10,100 -commit "$COMMIT" "${EXTRA[@]}"
      ;;
  esac
fi
if [ "$RUN_CLUSTER" = 1 ]; then
  stop_server # the standalone server stays out of the cluster's measurements
  start_cluster
  SEEDS="$HOST:${CLUSTER_PORTS[0]},$HOST:${CLUSTER_PORTS[1]},$HOST:${CLUSTER_PORTS[2]}"
  log "running the cluster scenario against $SEEDS"
  case $MODE in
    quick)
      "$WORK/compare" -cluster "$SEEDS" -quick -commit "$COMMIT" "${EXTRA[@]}"
      ;;
    full)
      "$WORK/compare" -cluster "$SEEDS" -commit "$COMMIT" "${EXTRA[@]}"
      ;;
  esac
  stop_cluster
fi
log "done in $(( $(date +%s) - START )) s"
