#!/usr/bin/env bash
# Start, stop and inspect the real Redis servers the tests run against.
#
#   scripts/servers.sh start  [standalone|sentinel|cluster ...]   (default: all)
#   scripts/servers.sh stop   [standalone|sentinel|cluster ...]   (default: all)
#   scripts/servers.sh status [standalone|sentinel|cluster ...]   (default: all)
#
# Everything listens on 127.0.0.1 only:
#   standalone  redis-server 16379
#   sentinel    primary 16380, replica 16381, sentinels 26380-26382
#               (master name respire-primary, quorum 2)
#   cluster     3 primaries + 3 replicas on 17000-17005 (bus ports 27000-27005)
#
# Data, configuration, logs and pid files live under $REPO/.servers/<port>/.
# `start` restarts the selected groups from scratch (fresh data and config) and
# returns only when they are fully ready; it then writes $REPO/.servers/env with
# export lines for the groups that run (tests read those variables, see
# internal/testenv). `stop` is safe to call when nothing runs. `status` exits
# non-zero when a selected server does not answer PING.
#
# Ports are machine-wide, so start/stop take an exclusive lock on
# ${RESPIRE_SERVERS_LOCK:-/tmp/respire-go-servers.lock}; scripts/test.sh holds
# that lock for a whole test run and sets RESPIRE_SERVERS_LOCK_HELD=1.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$REPO/.servers"
LOCK_FILE=${RESPIRE_SERVERS_LOCK:-/tmp/respire-go-servers.lock}
WAIT_SECONDS=${RESPIRE_SERVERS_WAIT:-60}

HOST=127.0.0.1
STANDALONE_PORT=16379
SENTINEL_PRIMARY_PORT=16380
SENTINEL_REPLICA_PORT=16381
SENTINEL_PORTS=(26380 26381 26382)
SENTINEL_MASTER=respire-primary
CLUSTER_PORTS=(17000 17001 17002 17003 17004 17005)
ALL_GROUPS=(standalone sentinel cluster)

log() { printf '[servers] %s\n' "$*" >&2; }
die() { printf '[servers] ERROR: %s\n' "$*" >&2; exit 1; }

# now_ms prints a monotonic-enough wall clock in milliseconds.
now_ms() { date +%s%3N; }

# cli PORT ARGS... runs redis-cli against 127.0.0.1:PORT, bounded in time, with
# CRs stripped so the output can be matched line by line.
cli() {
  local port=$1
  shift
  timeout 5 redis-cli -h "$HOST" -p "$port" "$@" 2>/dev/null | tr -d '\r'
}

# ping PORT reports whether the server on PORT answers PONG.
ping() { [ "$(cli "$1" PING)" = PONG ]; }

# listening PORT reports whether anything accepts TCP connections on PORT.
listening() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# wait_for WHAT LOGS CMD... polls CMD every 50 ms until it succeeds. After
# WAIT_SECONDS it fails loudly with the tail of each file in LOGS (a
# space-separated list).
wait_for() {
  local what=$1 logs=$2
  shift 2
  local deadline=$(($(now_ms) + WAIT_SECONDS * 1000))
  until "$@"; do
    if [ "$(now_ms)" -ge "$deadline" ]; then
      printf '[servers] ERROR: timed out after %ss waiting for %s\n' "$WAIT_SECONDS" "$what" >&2
      local f
      for f in $logs; do
        printf '[servers] ---- last lines of %s ----\n' "$f" >&2
        tail -n 25 "$f" >&2 2>/dev/null || true
      done
      exit 1
    fi
    sleep 0.05
  done
}

ensure_installed() {
  if command -v redis-server >/dev/null && command -v redis-sentinel >/dev/null &&
    command -v redis-cli >/dev/null; then
    return
  fi
  log "installing redis-server, redis-sentinel and redis-tools"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-sentinel redis-tools
}

group_ports() {
  case $1 in
  standalone) echo "$STANDALONE_PORT" ;;
  sentinel) echo "${SENTINEL_PORTS[*]} $SENTINEL_REPLICA_PORT $SENTINEL_PRIMARY_PORT" ;;
  cluster) echo "${CLUSTER_PORTS[*]}" ;;
  esac
}

server_dir() { echo "$DIR/$1"; }
server_log() { echo "$DIR/$1/redis.log"; }

# common_config PORT prints the settings every server (and sentinel) shares.
common_config() {
  local d
  d=$(server_dir "$1")
  cat <<EOF
port $1
bind $HOST
daemonize yes
pidfile "$d/redis.pid"
logfile "$d/redis.log"
dir "$d"
EOF
}

# data_config prints the settings of every data server (not sentinels).
data_config() {
  cat <<'EOF'
save ""
appendonly no
enable-debug-command local
repl-diskless-sync-delay 0
EOF
}

# launch_server PORT [--sentinel] writes a fresh directory with the config read
# from stdin and starts the daemon. It does not wait for readiness.
launch_server() {
  local port=$1 mode=${2:-} d
  d=$(server_dir "$port")
  if listening "$port"; then
    die "port $port is already in use by a process this checkout did not start (another checkout's servers? run its scripts/servers.sh stop)"
  fi
  rm -rf "$d"
  mkdir -p "$d"
  cat >"$d/redis.conf"
  # 9>&-: the daemon must not inherit the lock taken by take_lock.
  if [ "$mode" = --sentinel ]; then
    redis-sentinel "$d/redis.conf" >/dev/null 9>&-
  else
    redis-server "$d/redis.conf" >/dev/null 9>&-
  fi
}

# ---------------------------------------------------------------- standalone

launch_standalone() {
  { common_config "$STANDALONE_PORT"; data_config; } | launch_server "$STANDALONE_PORT"
}

ready_standalone() {
  wait_for "standalone server on $STANDALONE_PORT" "$(server_log "$STANDALONE_PORT")" ping "$STANDALONE_PORT"
}

env_standalone() {
  echo "export RESPIRE_STANDALONE_ADDR=$HOST:$STANDALONE_PORT"
}

# ------------------------------------------------------------------ sentinel

launch_sentinel_data() {
  { common_config "$SENTINEL_PRIMARY_PORT"; data_config; } | launch_server "$SENTINEL_PRIMARY_PORT"
  {
    common_config "$SENTINEL_REPLICA_PORT"
    data_config
    echo "replicaof $HOST $SENTINEL_PRIMARY_PORT"
  } | launch_server "$SENTINEL_REPLICA_PORT"
}

# replica_synced PORT reports whether the replica on PORT finished its sync.
replica_synced() {
  cli "$1" INFO replication | grep -qx 'master_link_status:up'
}

# sentinel_converged PORT reports whether the sentinel on PORT sees the
# primary (not down), the replica (linked) and the two other sentinels.
sentinel_converged() {
  local port=$1 out
  out=$(cli "$port" SENTINEL MASTER "$SENTINEL_MASTER") || return 1
  # Reply is field/value pairs, one per line.
  awk -v port="$SENTINEL_PRIMARY_PORT" '
    NR % 2 == 1 { k = $0; next }
    { v[k] = $0 }
    END {
      exit !(v["port"] == port && v["flags"] == "master" &&
             v["num-slaves"] == 1 && v["num-other-sentinels"] == 2)
    }' <<<"$out" || return 1
  out=$(cli "$port" SENTINEL REPLICAS "$SENTINEL_MASTER") || return 1
  awk -v port="$SENTINEL_REPLICA_PORT" '
    NR % 2 == 1 { k = $0; next }
    { v[k] = $0 }
    k == "master-link-status" && v["port"] == port && v["flags"] == "slave" && $0 == "ok" { found = 1 }
    END { exit !found }' <<<"$out" || return 1
  out=$(cli "$port" SENTINEL SENTINELS "$SENTINEL_MASTER") || return 1
  awk '
    NR % 2 == 1 { k = $0; next }
    k == "flags" { n++; if ($0 != "sentinel") bad = 1 }
    END { exit !(n == 2 && !bad) }' <<<"$out"
}

launch_sentinel() {
  launch_sentinel_data
  # Sentinels learn about replicas from the primary's INFO, which they refresh
  # only every 10 s after the first one: start them once the replica is
  # attached, or they may report no replica for 10 s.
  wait_for "primary on $SENTINEL_PRIMARY_PORT" "$(server_log "$SENTINEL_PRIMARY_PORT")" ping "$SENTINEL_PRIMARY_PORT"
  wait_for "replica on $SENTINEL_REPLICA_PORT to sync with $SENTINEL_PRIMARY_PORT" \
    "$(server_log "$SENTINEL_REPLICA_PORT") $(server_log "$SENTINEL_PRIMARY_PORT")" \
    replica_synced "$SENTINEL_REPLICA_PORT"
  local p
  for p in "${SENTINEL_PORTS[@]}"; do
    {
      common_config "$p"
      echo "sentinel monitor $SENTINEL_MASTER $HOST $SENTINEL_PRIMARY_PORT 2"
      echo "sentinel down-after-milliseconds $SENTINEL_MASTER 1000"
      echo "sentinel failover-timeout $SENTINEL_MASTER 5000"
    } | launch_server "$p" --sentinel
  done
}

ready_sentinel() {
  local p logs=""
  for p in "${SENTINEL_PORTS[@]}"; do logs+="$(server_log "$p") "; done
  for p in "${SENTINEL_PORTS[@]}"; do
    wait_for "sentinel on $p to see primary, replica and 2 other sentinels" "$logs" sentinel_converged "$p"
  done
}

env_sentinel() {
  local addrs=() p
  for p in "${SENTINEL_PORTS[@]}"; do addrs+=("$HOST:$p"); done
  local IFS=,
  echo "export RESPIRE_SENTINEL_ADDRS=${addrs[*]}"
  echo "export RESPIRE_SENTINEL_MASTER=$SENTINEL_MASTER"
  echo "export RESPIRE_SENTINEL_PRIMARY_ADDR=$HOST:$SENTINEL_PRIMARY_PORT"
  echo "export RESPIRE_SENTINEL_REPLICA_ADDR=$HOST:$SENTINEL_REPLICA_PORT"
}

# ------------------------------------------------------------------- cluster

launch_cluster() {
  local p
  for p in "${CLUSTER_PORTS[@]}"; do
    if listening $((p + 10000)); then
      die "cluster bus port $((p + 10000)) is already in use"
    fi
    {
      common_config "$p"
      data_config
      echo "cluster-enabled yes"
      echo "cluster-config-file nodes.conf"
      echo "cluster-node-timeout 5000"
    } | launch_server "$p"
  done
  for p in "${CLUSTER_PORTS[@]}"; do
    wait_for "cluster node on $p" "$(server_log "$p")" ping "$p"
  done
  local addrs=()
  for p in "${CLUSTER_PORTS[@]}"; do addrs+=("$HOST:$p"); done
  local out
  if ! out=$(timeout "$WAIT_SECONDS" redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes 2>&1); then
    printf '%s\n' "$out" >&2
    die "redis-cli --cluster create failed"
  fi
}

# cluster_node_ready PORT reports whether the node on PORT sees a healthy
# cluster: state ok, all slots served, 3 primaries each with one replica and no
# node flagged as failing or still in handshake; a replica must also have
# finished syncing with its primary, and CLUSTER SHARDS must report every
# node online.
cluster_node_ready() {
  local port=$1 info nodes
  info=$(cli "$port" CLUSTER INFO) || return 1
  grep -qx 'cluster_state:ok' <<<"$info" || return 1
  grep -qx 'cluster_slots_assigned:16384' <<<"$info" || return 1
  grep -qx 'cluster_slots_ok:16384' <<<"$info" || return 1
  grep -qx 'cluster_known_nodes:6' <<<"$info" || return 1
  nodes=$(cli "$port" CLUSTER NODES) || return 1
  # Fields: id addr flags master-id ping pong epoch link-state [slots...]
  awk '
    $3 ~ /fail|handshake|noaddr/ || $8 != "connected" { bad = 1 }
    $3 ~ /master/ { if (NF > 8) primaries[$1] = 1 }
    $3 ~ /slave/ { replicas++; of[$4]++ }
    $3 ~ /myself/ && $3 ~ /slave/ { me_replica = 1 }
    END {
      if (bad || length(primaries) != 3 || replicas != 3) exit 1
      for (id in primaries) if (of[id] != 1) exit 1
      exit 0
    }' <<<"$nodes" || return 1
  if grep -q 'myself,slave' <<<"$nodes"; then
    replica_synced "$port" || return 1
  fi
  # CLUSTER SHARDS (what the client reads) reports a replica "loading"
  # until this node has heard of its replication offset: clients would
  # not route reads to it yet.
  local shards
  shards=$(cli "$port" CLUSTER SHARDS) || return 1
  ! grep -qx -e loading -e fail <<<"$shards"
}

ready_cluster() {
  local p
  for p in "${CLUSTER_PORTS[@]}"; do
    wait_for "cluster node on $p to report cluster_state:ok with all slots and replicas" \
      "$(server_log "$p")" cluster_node_ready "$p"
  done
}

env_cluster() {
  local addrs=() p
  for p in "${CLUSTER_PORTS[@]}"; do addrs+=("$HOST:$p"); done
  local IFS=,
  echo "export RESPIRE_CLUSTER_ADDRS=${addrs[*]}"
}

# ---------------------------------------------------------------- stop/status

# our_pid PORT prints the pid of the server this checkout started on PORT, if
# it still runs (the process title names the port, which guards against a
# recycled pid).
our_pid() {
  local pidfile pid
  pidfile="$(server_dir "$1")/redis.pid"
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ":$1\b" || return 1
  echo "$pid"
}

# pids_gone PID... reports whether none of the processes runs any more. A
# zombie counts as gone: the daemons are orphans, and some init processes
# (this machine's among them) reap orphans only every second or two.
pids_gone() {
  local pid state
  for pid in "$@"; do
    state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || continue
    [ -z "$state" ] || [ "$state" = Z ] || return 1
  done
}

# stop_ports PORT... shuts the servers down (SHUTDOWN NOSAVE NOW first,
# SIGTERM then SIGKILL by pid file as fallback) and waits until they are gone.
stop_ports() {
  local port pid pids=() ports=()
  for port in "$@"; do
    if pid=$(our_pid "$port"); then
      pids+=("$pid")
      ports+=("$port")
      cli "$port" SHUTDOWN NOSAVE NOW >/dev/null || true
    fi
    rm -f "$(server_dir "$port")/redis.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  local deadline=$(($(now_ms) + 10000)) signal=TERM
  until pids_gone "${pids[@]}"; do
    if [ "$(now_ms)" -ge "$deadline" ]; then
      [ "$signal" = KILL ] && die "servers on ports ${ports[*]} (pids ${pids[*]}) do not exit"
      log "servers on ports ${ports[*]} ignored SHUTDOWN, sending SIG$signal"
      kill -s "$signal" "${pids[@]}" 2>/dev/null || true
      [ "$signal" = TERM ] && signal=KILL
      deadline=$(($(now_ms) + 5000))
    fi
    sleep 0.05
  done
}

# stop_groups GROUP... stops the groups' servers, all at once, and drops them
# from the env file.
stop_groups() {
  local g ports=()
  for g in "$@"; do
    rm -f "$DIR/env.d/$g"
    # shellcheck disable=SC2207
    ports+=($(group_ports "$g"))
  done
  write_env
  stop_ports "${ports[@]}"
}

write_env() {
  local g tmp="$DIR/env.tmp"
  : >"$tmp"
  for g in "${ALL_GROUPS[@]}"; do
    [ -f "$DIR/env.d/$g" ] && cat "$DIR/env.d/$g" >>"$tmp"
  done
  # The servers' directories (config, pid), for tests that kill and
  # restart a server from another working directory (a git worktree).
  [ -s "$tmp" ] && echo "export RESPIRE_SERVERS_DIR=$DIR" >>"$tmp"
  if [ -s "$tmp" ]; then mv "$tmp" "$DIR/env"; else rm -f "$tmp" "$DIR/env"; fi
}

status_group() {
  local g=$1 port rc=0 role pid
  for port in $(group_ports "$g"); do
    pid=$(our_pid "$port") || pid="? (not started by this checkout)"
    if ping "$port"; then
      if [ "$g" = sentinel ] && [[ " ${SENTINEL_PORTS[*]} " == *" $port "* ]]; then
        role=sentinel
      else
        role=$(cli "$port" ROLE | head -n 1)
      fi
      printf '%-10s %s:%-5s up    %-8s pid %s\n' "$g" "$HOST" "$port" "$role" "$pid"
    else
      printf '%-10s %s:%-5s down\n' "$g" "$HOST" "$port"
      rc=1
    fi
  done
  return $rc
}

# ---------------------------------------------------------------------- main

usage() {
  echo "usage: $0 start|stop|status [standalone|sentinel|cluster ...]" >&2
  exit 2
}

take_lock() {
  [ "${RESPIRE_SERVERS_LOCK_HELD:-}" = 1 ] && return 0
  exec 9>>"$LOCK_FILE"
  if ! flock -n 9; then
    log "waiting for another start/stop/test run to release $LOCK_FILE"
    flock -w 1800 9 || die "could not lock $LOCK_FILE"
  fi
}

main() {
  [ $# -ge 1 ] || usage
  local cmd=$1 g
  shift
  local groups=("$@")
  [ ${#groups[@]} -gt 0 ] || groups=("${ALL_GROUPS[@]}")
  for g in "${groups[@]}"; do
    case $g in standalone | sentinel | cluster) ;; *) usage ;; esac
  done

  case $cmd in
  start)
    ensure_installed
    mkdir -p "$DIR/env.d"
    take_lock
    local t0
    t0=$(now_ms)
    stop_groups "${groups[@]}"
    # Launch everything first, then wait: the groups converge in parallel.
    for g in "${groups[@]}"; do
      "launch_$g"
      log "$g launched (+$(($(now_ms) - t0))ms)"
    done
    for g in "${groups[@]}"; do
      "ready_$g"
      "env_$g" >"$DIR/env.d/$g"
      log "$g ready (+$(($(now_ms) - t0))ms)"
    done
    write_env
    log "started ${groups[*]} in $(($(now_ms) - t0))ms; env in $DIR/env"
    ;;
  stop)
    [ -d "$DIR" ] || return 0
    take_lock
    mkdir -p "$DIR/env.d"
    stop_groups "${groups[@]}"
    ;;
  status)
    local rc=0
    for g in "${groups[@]}"; do status_group "$g" || rc=1; done
    return $rc
    ;;
  *) usage ;;
  esac
}

main "$@"
