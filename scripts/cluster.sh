#!/usr/bin/env bash
# Three registry servers as local processes on 127.0.0.1, for trying failover by hand.
#
#   scripts/cluster.sh start        start s1..s3 (those not running) and wait up to 30 s for a leader
#   scripts/cluster.sh stop         SIGTERM the servers this script started, SIGKILL any left after 10 s
#   scripts/cluster.sh status       per server: pid alive or not, and who it says the leader is
#   scripts/cluster.sh leader       "N <http address> <server address>" of the leader a majority names
#   scripts/cluster.sh kill N       SIGKILL server N (1..3) — that pid only
#   scripts/cluster.sh term N       SIGTERM server N and wait for it to exit (a leader hands off first)
#   scripts/cluster.sh restart N    start server N again on its data dir (after kill/term)
#   scripts/cluster.sh logs N [-f]  the last 200 lines of server N's log (-f: follow)
#   scripts/cluster.sh clean        stop, then delete the cluster folder (data, logs, pids)
#
# Server N listens on HTTP $REGISTRY_HTTP_BASE+N-1 (default 8500..8502) and server RPC/Raft
# $REGISTRY_SERVER_BASE+N-1 (default 8300..8302), node name sN, joined to the other two with
# -bootstrap-expect 3 -retry-join. Data dirs, logs and pid files live under
# ${REGISTRY_CLUSTER_DIR:-$PWD/.data/cluster}/sN/. Data survives stop/start; `clean` removes it.
# REGISTRY_CLUSTER_BIN runs another JS entry point instead of packages/cli/bin/registry.js,
# REGISTRY_NODE_FLAGS adds Node/V8 flags after the entry point's own (an A/B of V8 settings; V8's
# flags are refused in NODE_OPTIONS),
# REGISTRY_LOG_LEVEL sets -log-level (default info), REGISTRY_CONFIG_FILE adds -config-file FILE to
# every server (e.g. raft settings for a benchmark). REGISTRY_NON_VOTERS=K (default 0) adds servers
# s4..s(3+K) started with -non-voter (Raft learners, issue #14): they join the three voters and
# serve reads but never vote; server numbers then go up to 3+K. Needs `npm run build` first.
set -euo pipefail
# Node cannot raise its own descriptor limit; the servers size their HTTP connection cap from it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

HOST=127.0.0.1 # loopback only
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${REGISTRY_CLUSTER_DIR:-$PWD/.data/cluster}
HTTP_BASE=${REGISTRY_HTTP_BASE:-8500}
SERVER_BASE=${REGISTRY_SERVER_BASE:-8300}
BIN=$(realpath -m "${REGISTRY_CLUSTER_BIN:-$ROOT/packages/cli/bin/registry.js}")
# How registry runs: the environment and Node flags on its entry point's
# `#!/usr/bin/env -S [NAME=value …] node …` line.
ENTRY=" $(sed -n '1s/^#!.*env -S //p' "$BIN" 2>/dev/null || true) "
ENTRY_ENV=${ENTRY%% node *}
NODE_FLAGS=${ENTRY#* node }
[[ "$ENTRY" == *" node "* ]] || { ENTRY_ENV=; NODE_FLAGS=; }
NODE_FLAGS="$NODE_FLAGS ${REGISTRY_NODE_FLAGS:-}"
LOG_LEVEL=${REGISTRY_LOG_LEVEL:-info}
N_VOTERS=3
N_NON_VOTERS=${REGISTRY_NON_VOTERS:-0}
[[ "$N_NON_VOTERS" =~ ^[0-9]$ ]] || { echo "REGISTRY_NON_VOTERS must be 0..9 (got '$N_NON_VOTERS')" >&2; exit 2; }
N_SERVERS=$((N_VOTERS + N_NON_VOTERS))
START_TIMEOUT_S=30

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

http_port() { echo $((HTTP_BASE + $1 - 1)); }
server_port() { echo $((SERVER_BASE + $1 - 1)); }
pid_file() { echo "$DIR/s$1/pid"; }
log_file() { echo "$DIR/s$1/server.log"; }

check_n() {
  [[ "${1:-}" =~ ^[1-9]$ ]] && [ "$1" -le "$N_SERVERS" ] || { echo "server number must be 1..$N_SERVERS (got '${1:-}')" >&2; exit 2; }
}

# The pid recorded for server N, if that process is alive and still one we started
# (its command line names our entry point and node), so a recycled pid is never signalled.
live_pid() {
  local f pid
  f=$(pid_file "$1")
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$BIN agent -server -node s$1 " || return 1
  echo "$pid"
}

start_server() {
  local n=$1 i joins=() config=() role=(-bootstrap-expect $N_VOTERS)
  if live_pid "$n" >/dev/null; then echo "s$n already running (pid $(live_pid "$n"))"; return 0; fi
  for i in $(seq 1 $N_SERVERS); do
    [ "$i" -ne "$n" ] && joins+=(-retry-join "$HOST:$(server_port "$i")")
  done
  # Non-voters never bootstrap: they join the voters' cluster through its leader.
  [ "$n" -gt $N_VOTERS ] && role=(-bootstrap-expect 0 -non-voter)
  [ -n "${REGISTRY_CONFIG_FILE:-}" ] && config=(-config-file "$(realpath "$REGISTRY_CONFIG_FILE")")
  mkdir -p "$DIR/s$n/data"
  echo "--- $(date -u +%FT%TZ) cluster.sh: starting s$n" >>"$(log_file "$n")"
  (cd "$ROOT" && exec env $ENTRY_ENV node $NODE_FLAGS "$BIN" agent -server -node "s$n" -datacenter dc1 -data-dir "$DIR/s$n/data" \
    -bind "$HOST" -client "$HOST" -http-port "$(http_port "$n")" -server-port "$(server_port "$n")" \
    "${role[@]}" "${config[@]}" "${joins[@]}" -log-level "$LOG_LEVEL" \
    >>"$(log_file "$n")" 2>&1 </dev/null) &
  echo $! >"$(pid_file "$n")"
  echo "s$n started (pid $!): http://$HOST:$(http_port "$n"), server $HOST:$(server_port "$n")"
}

# GET a path from server N; prints the body, fails on no answer within a second.
http_get() {
  node -e '
    fetch(process.argv[1], { signal: AbortSignal.timeout(1000) })
      .then(async (r) => { process.stdout.write(await r.text()); process.exit(r.ok ? 0 : 1); })
      .catch(() => process.exit(1));
  ' "http://$HOST:$(http_port "$1")$2"
}

# What server N says the leader is: a server address, "" for none, or "?" for no answer.
leader_of() {
  local body
  if body=$(http_get "$1" /v1/status/leader 2>/dev/null); then
    node -e 'try { process.stdout.write(String(JSON.parse(process.argv[1]))) } catch { process.stdout.write("?") }' "$body"
  else
    echo -n "?"
  fi
}

# "N <http> <server address>" of the leader named by a majority of the servers, or nothing.
leader() {
  local i a answers=() votes
  for i in $(seq 1 $N_SERVERS); do answers+=("$(leader_of "$i")"); done
  for a in "${answers[@]}"; do
    [ -n "$a" ] && [ "$a" != "?" ] || continue
    votes=$(printf '%s\n' "${answers[@]}" | grep -cxF -- "$a")
    if [ "$votes" -gt $((N_SERVERS / 2)) ]; then
      for i in $(seq 1 $N_SERVERS); do
        if [ "$a" = "$HOST:$(server_port "$i")" ]; then echo "$i http://$HOST:$(http_port "$i") $a"; return 0; fi
      done
      echo "? ? $a"
      return 0
    fi
  done
  return 1
}

wait_for_leader() {
  local deadline=$((SECONDS + START_TIMEOUT_S)) l i
  until l=$(leader); do
    # A server that exited by itself (its pid file is still there) will not come back: say why now
    # rather than after the timeout (e.g. a port another process took between choosing and binding).
    for i in $(seq 1 $N_SERVERS); do
      if [ -f "$(pid_file "$i")" ] && ! live_pid "$i" >/dev/null; then
        echo "s$i exited while starting: $(grep -v '^---' "$(log_file "$i")" | tail -n 1)" >&2
        return 1
      fi
    done
    if [ $SECONDS -ge $deadline ]; then
      echo "no leader after ${START_TIMEOUT_S}s; see: $0 status, $0 logs N" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "leader: s${l%% *} (${l#* })"
}

signal_and_wait() { # $1 = N, $2 = signal, $3 = seconds to wait for exit
  local pid t
  pid=$(live_pid "$1") || { echo "s$1 is not running"; rm -f "$(pid_file "$1")"; return 0; }
  echo "--- $(date -u +%FT%TZ) cluster.sh: SIG$2 to pid $pid" >>"$(log_file "$1")"
  kill -s "$2" "$pid" 2>/dev/null || true
  for ((t = 0; t < $3 * 10; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then return 1; fi
  rm -f "$(pid_file "$1")"
  echo "s$1 (pid $pid) exited after SIG$2"
}

stop_all() {
  local i pid pids=()
  for i in $(seq 1 $N_SERVERS); do
    if pid=$(live_pid "$i"); then
      echo "--- $(date -u +%FT%TZ) cluster.sh: SIGTERM to pid $pid (stop)" >>"$(log_file "$i")"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$i:$pid")
    fi
  done
  for ((t = 0; t < 100; t++)); do
    local alive=0
    for e in "${pids[@]}"; do kill -0 "${e#*:}" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for e in "${pids[@]}"; do
    i=${e%%:*} pid=${e#*:}
    if kill -0 "$pid" 2>/dev/null && live_pid "$i" >/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      echo "s$i (pid $pid) did not stop within 10 s: SIGKILLed"
    else
      echo "s$i (pid $pid) stopped"
    fi
    rm -f "$(pid_file "$i")"
  done
  [ ${#pids[@]} -gt 0 ] || echo "no server running"
}

status() {
  local i pid
  printf '%-4s %-8s %-24s %s\n' node pid http leader
  for i in $(seq 1 $N_SERVERS); do
    if pid=$(live_pid "$i"); then
      printf '%-4s %-8s %-24s %s\n' "s$i" "$pid" "http://$HOST:$(http_port "$i")" "\"$(leader_of "$i")\""
    else
      printf '%-4s %-8s %-24s %s\n' "s$i" down "http://$HOST:$(http_port "$i")" -
    fi
  done
}

cmd=${1:-}
case "$cmd" in
  start)
    [ -f "$BIN" ] || { echo "$BIN not found" >&2; exit 1; }
    if [ -z "${REGISTRY_CLUSTER_BIN:-}" ] && [ ! -f "$ROOT/packages/cli/dist/main.js" ]; then
      echo "packages/cli is not built: run 'npm run build' first" >&2; exit 1
    fi
    mkdir -p "$DIR"
    echo "cluster folder: $DIR"
    for i in $(seq 1 $N_SERVERS); do start_server "$i"; done
    wait_for_leader ;;
  stop) stop_all ;;
  status) status ;;
  leader) leader || { echo "no leader known to a majority" >&2; exit 1; } ;;
  kill)
    check_n "${2:-}"
    signal_and_wait "$2" KILL 5 ;;
  term)
    check_n "${2:-}"
    signal_and_wait "$2" TERM 10 || { echo "s$2 still running 10 s after SIGTERM" >&2; exit 1; } ;;
  restart)
    check_n "${2:-}"
    start_server "$2" ;;
  logs)
    check_n "${2:-}"
    if [ "${3:-}" = "-f" ]; then exec tail -n 200 -f "$(log_file "$2")"; else tail -n 200 "$(log_file "$2")"; fi ;;
  clean)
    stop_all
    rm -rf "$DIR"
    echo "removed $DIR" ;;
  *) usage ;;
esac
