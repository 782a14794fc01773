#!/usr/bin/env bash
# The user's docker-compose scenario, for real: the repo's own docker-compose.yml on Debian's
# docker.io and docker-compose, three servers and two client agents as containers.
#
#   sudo bash scripts/compose-test.sh
#
# Needs root and apt (it installs docker.io, docker-compose, debootstrap when missing). Everything
# it starts is its own and is removed on exit, passed or failed: a network namespace, a containerd
# and a dockerd inside it (own data/exec roots, pidfile, socket and cgroup parent), the images,
# containers and volumes. Nothing listens outside that namespace, and the namespace has no route
# out: the containers reach only each other.
#
# No image registry is reachable here, so the base image the Dockerfile names
# (node:20-bookworm-slim) is built locally as CI's stand-in: a `debootstrap --variant=minbase
# bookworm` root, this machine's Node 20 and npm where the official image has them
# (/usr/local/bin/node, /usr/local/lib/node_modules/npm), user `node` uid 1000, and an npm cache
# holding the lockfile's packages with `offline=true` in its global npmrc, so the Dockerfile's
# unchanged `npm ci` installs without a network. The debootstrap root, the npm cache (per
# lockfile) and the assembled base root are kept under $REGISTRY_CI_CACHE (/var/cache/registry-ci)
# so that reruns skip them; with an empty cache the script builds them from nothing.
#
# Scenario (each step prints one line; the first failure prints the containers' logs and stops):
# up -d --build → five healthy → a write through every container, replicated to every server →
# SIGKILL the leader container → a new leader, writes through the survivors and both client
# agents → start it again → caught up → `stop` the leader → handover, writes → start it again →
# replace server2 with an empty volume while writes go on → the new server2 catches up,
# list-peers shows three voters → down -v. From `up` to `down` it is bounded by
# $COMPOSE_TEST_BOUND seconds (600).
set -euo pipefail
umask 022

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${REGISTRY_CI_CACHE:-/var/cache/registry-ci}
BOUND=${COMPOSE_TEST_BOUND:-600}
T0=$SECONDS
exec 7>&1 8>&2 # the script's own output, for cleanup

say() { printf '[compose-test %4ss] %s\n' "$((SECONDS - T0))" "$*"; }
die() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (network namespace, dockerd, apt-get)"

# --- tools -------------------------------------------------------------------------------------
need=()
for t in dockerd:docker.io containerd:containerd docker-compose:docker-compose debootstrap:debootstrap \
         iptables:iptables nsenter:util-linux curl:curl ip:iproute2; do
  command -v "${t%%:*}" >/dev/null 2>&1 || need+=("${t#*:}")
done
[ -x /usr/bin/docker ] || need+=(docker.io)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "missing ${need[*]} and no apt-get to install them"
  say "installing ${need[*]} (apt)"
  # Other apt users may hold the lock for a while: wait for it rather than fail.
  apt-get -o DPkg::Lock::Timeout=600 update >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends \
    $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi
# Debian's client, not another docker that may come first on PATH.
DOCKER=/usr/bin/docker
NODE=$(command -v node) || die "node is not installed"
[ "$("$NODE" -p 'process.versions.node.split(".")[0]')" = 20 ] || die "the base image needs this machine's node to be Node 20, not $("$NODE" -v)"
NPM_DIR=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd) # .../node_modules/npm

# --- everything this run makes lives under $W, in $NS and under cgroup $CG --------------------
W=$(mktemp -d /tmp/rci.XXXXXX) # short: unix socket paths under it must stay < 108 bytes
NS=registry-ci-${W##*.}
CG=registry-ci-${W##*.}
PROJECT=registryci
dockerd_pid='' containerd_pid='' key_json_was_there=''
[ -e /etc/docker/key.json ] && key_json_was_there=1
[ -d /run/containerd ] && run_containerd_was_there=1 || run_containerd_was_there=''
[ -d /run/docker ] && run_docker_was_there=1 || run_docker_was_there=''

compose() { DOCKER_HOST=unix://$W/docker.sock docker-compose -p "$PROJECT" -f "$ROOT/docker-compose.yml" --project-directory "$ROOT" --ansi never "$@"; }
dk() { DOCKER_HOST=unix://$W/docker.sock "$DOCKER" "$@"; }
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }
# A service's current container (compose 1.29 labels); the docker CLI answers faster than compose.
cid() { dk ps -aq --filter "label=com.docker.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1" 2>/dev/null | head -n 1; }
SERVICES=(server1 server2 server3 client1 client2)

# Long commands run in the background and are waited for: bash runs a trap only between
# commands, and `wait` is one it interrupts, so a SIGTERM (the jest wrapper's bound) is acted on
# at once instead of after a 5-minute build.
bg_pid=''
bg() { "$@" & bg_pid=$!; wait "$bg_pid"; local rc=$?; bg_pid=''; return "$rc"; }

stop_pid() { # pid, seconds: SIGTERM, then SIGKILL after the grace period
  local pid=$1 i
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$? pid m d s c
  set +e
  trap - EXIT INT TERM
  exec 1>&7 2>&8 # a trap that ran inside `bg … >log` would otherwise write into that log
  stop_pid "$bg_pid" 10
  if [ -S "$W/docker.sock" ] && [ -n "$dockerd_pid" ]; then
    if [ "$rc" != 0 ]; then
      say "containers at the failure:"; dk ps -a --filter "label=com.docker.compose.project=$PROJECT" 2>&1
      for s in "${SERVICES[@]}"; do
        c=$(cid "$s"); [ -n "$c" ] || continue
        say "last log lines of $s:"; dk logs --tail 40 "$c" 2>&1 | cut -c1-400
        say "last health check of $s: $(dk inspect -f '{{json .State.Health}}' "$c" 2>/dev/null | "$NODE" -e '
          let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
            const h = JSON.parse(s || "null"); const l = h && h.Log && h.Log[h.Log.length - 1];
            console.log(l ? `exit ${l.ExitCode}: ${String(l.Output).trim().slice(0, 400)}` : "none");
          });' 2>/dev/null)"
      done
    fi
    # The images and volumes go with the data root below; the containers must stop first.
    dk ps -aq | xargs -r timeout 60 "$DOCKER" -H "unix://$W/docker.sock" rm -f >/dev/null 2>&1
  fi
  stop_pid "$dockerd_pid" 30
  stop_pid "$containerd_pid" 15
  # Shims and proxies started for this daemon name its directory on their command line.
  for pid in $(grep -lsF "$W" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    [ "$pid" != $$ ] && kill -KILL "$pid" 2>/dev/null
  done
  for m in $(awk -v w="$W" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r); do umount -l "$m"; done
  rm -rf "$W"
  ip netns del "$NS" 2>/dev/null
  for d in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/"$CG" /sys/fs/cgroup/unified/"$CG"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  [ -z "$key_json_was_there" ] && rm -f /etc/docker/key.json
  [ -z "$run_containerd_was_there" ] && [ -d /run/containerd ] && find /run/containerd -depth -type d -empty -delete 2>/dev/null
  [ -z "$run_docker_was_there" ] && [ -d /run/docker ] && find /run/docker -depth -type d -empty -delete 2>/dev/null
  if [ "$rc" = 0 ]; then say "PASSED; removed the daemon, namespace, images, containers and volumes"
  else say "FAILED (exit $rc); removed the daemon, namespace, images, containers and volumes"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the base image's root, cached -------------------------------------------------------------
mkdir -p "$CACHE"
MINBASE=$CACHE/bookworm-minbase.tar
if [ ! -s "$MINBASE" ]; then
  say "debootstrap --variant=minbase bookworm (once; cached in $MINBASE)"
  bg debootstrap --variant=minbase bookworm "$W/minbase" >"$W/debootstrap.log" 2>&1 \
    || { tail -n 30 "$W/debootstrap.log"; die "debootstrap failed"; }
  # As the official slim image: no package lists or downloaded packages kept.
  rm -rf "$W/minbase"/var/lib/apt/lists/* "$W/minbase"/var/cache/apt/archives/*.deb
  tar -C "$W/minbase" --numeric-owner -cf "$MINBASE.tmp" . && mv "$MINBASE.tmp" "$MINBASE"
  rm -rf "$W/minbase"
fi

# npm's cache holding every package of the lockfile, filled once per lockfile on this machine:
# seeded from this machine's npm cache, completed by an ordinary `npm ci` (--prefer-offline).
LOCK_SUM=$(cat "$ROOT/package-lock.json" "$ROOT"/package.json "$ROOT"/packages/*/package.json | sha256sum | cut -c1-16)
NPM_CACHE=$CACHE/npm-$LOCK_SUM
if [ ! -d "$NPM_CACHE" ]; then
  say "filling an npm cache for this lockfile (once per lockfile; $NPM_CACHE)"
  rm -rf "$NPM_CACHE.tmp" && mkdir -p "$W/npmfill" "$NPM_CACHE.tmp"
  host_cache=$(npm config get cache)
  [ -d "$host_cache/_cacache" ] && cp -a "$host_cache/_cacache" "$NPM_CACHE.tmp/"
  (cd "$ROOT" && cp --parents package.json package-lock.json packages/*/package.json "$W/npmfill/")
  bg env -C "$W/npmfill" npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --cache "$NPM_CACHE.tmp" >"$W/npmfill.log" 2>&1 \
    || { tail -n 30 "$W/npmfill.log"; die "npm ci to fill the cache failed"; }
  rm -rf "$W/npmfill" "$NPM_CACHE.tmp/_logs"
  find "$CACHE" -maxdepth 1 -name 'npm-*' ! -name "npm-$LOCK_SUM*" -exec rm -rf {} + # older lockfiles
  mv "$NPM_CACHE.tmp" "$NPM_CACHE"
fi

NODE_V=$("$NODE" -v) NPM_V=$(npm -v)
BASE=$CACHE/node-20-bookworm-slim.$NODE_V.npm$NPM_V.$LOCK_SUM.tar
if [ ! -s "$BASE" ]; then
  say "assembling the base root: minbase + node $NODE_V + npm $NPM_V + user node + npm cache ($BASE)"
  S=$W/base
  mkdir -p "$S" && tar -C "$S" -xf "$MINBASE"
  install -D -m 0755 "$NODE" "$S/usr/local/bin/node"
  mkdir -p "$S/usr/local/lib/node_modules" && cp -a "$NPM_DIR" "$S/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$S/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$S/usr/local/bin/npx"
  chroot "$S" groupadd --gid 1000 node
  chroot "$S" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # Only in this stand-in: npm answers from the cache and never tries the network. The registry
  # is this machine's, because the cache is keyed by its URLs.
  mkdir -p "$S/usr/local/share/registry-ci" && cp -a "$NPM_CACHE" "$S/usr/local/share/registry-ci/npm-cache"
  mkdir -p "$S/usr/local/etc"
  printf 'cache=/usr/local/share/registry-ci/npm-cache\noffline=true\nregistry=%s\nupdate-notifier=false\n' \
    "$(npm config get registry)" >"$S/usr/local/etc/npmrc"
  tar -C "$S" --numeric-owner -cf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"
  rm -rf "$S"
  find "$CACHE" -maxdepth 1 -name 'node-20-bookworm-slim.*.tar' ! -path "$BASE" -delete # older ones
fi

# --- a namespace, a containerd and a dockerd of our own ---------------------------------------
say "network namespace $NS, containerd and dockerd in it ($W)"
ip netns add "$NS"
ip -n "$NS" link set lo up
mkdir -p "$W/c"
cat >"$W/c/config.toml" <<EOF
version = 2
root = "$W/c/root"
state = "$W/c/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$W/c/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$W/c/opt"
EOF
in_ns containerd --config "$W/c/config.toml" >"$W/containerd.log" 2>&1 &
containerd_pid=$!
echo '{}' >"$W/daemon.json"
# With cgroup v1 a cgroup weighs as one process against every process of its parent: all the
# containers under one parent of default weight got 1/25 of the CPU on a machine running 25 other
# processes (builds of 7 minutes, health checks timing out). Weighted as the five node processes
# they hold, they get what the same processes would get on the host.
if [ -d /sys/fs/cgroup/cpu ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
  mkdir -p "/sys/fs/cgroup/cpu/$CG" && echo 5120 >"/sys/fs/cgroup/cpu/$CG/cpu.shares"
fi
# cgroupfs with a parent of our own: our containers' cgroups are ours to remove.
in_ns dockerd --config-file "$W/daemon.json" --data-root "$W/d" --exec-root "$W/x" --pidfile "$W/dockerd.pid" \
  -H "unix://$W/docker.sock" --containerd "$W/c/containerd.sock" --cgroup-parent "/$CG" \
  --exec-opt native.cgroupdriver=cgroupfs --storage-driver overlay2 >"$W/dockerd.log" 2>&1 &
dockerd_pid=$!
for ((i = 0; i < 300; i++)); do dk version >/dev/null 2>&1 && break; kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
dk version >/dev/null 2>&1 || { tail -n 30 "$W/dockerd.log"; die "dockerd did not start"; }

say "importing the base root as node:20-bookworm-slim"
bg env DOCKER_HOST="unix://$W/docker.sock" "$DOCKER" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "$BASE" node:20-bookworm-slim >/dev/null

# --- the scenario ------------------------------------------------------------------------------
START=$SECONDS
left() { echo $((BOUND - (SECONDS - START))); }
bounded() { # seconds: the smaller of that and what is left of the bound (at least 1)
  local l; l=$(left); [ "$l" -ge 1 ] || l=1
  [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
step() { [ "$(left)" -gt 0 ] || die "the scenario took longer than ${BOUND}s"; say "$@"; }

# HTTP from inside the namespace to a service's published port: prints the body, then the status
# on a last line of its own.
declare -A PORT
http() { # method service path [body]
  local args=(-s -m 5 -X "$1" -w '\n%{http_code}')
  [ $# -ge 4 ] && args+=(--data-binary "$4")
  in_ns curl "${args[@]}" "http://127.0.0.1:${PORT[$2]}$3" || true # -w prints 000 when no answer came
}
status_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }
jsonq() { "$NODE" -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{let v;try{v=JSON.parse(s)}catch{process.exit(1)};const r=($1)(v);if(r!==undefined&&r!==null)console.log(r)})"; }

# A write through a service: PUT compose/<key>, answered `true` within 10 s (retried on errors).
put() { # service key value
  local r until=$((SECONDS + 10))
  while :; do
    r=$(http PUT "$1" "/v1/kv/compose/$2" "$3")
    [ "$(status_of "$r")" = 200 ] && [ "$(body_of "$r")" = true ] && return 0
    [ "$SECONDS" -ge "$until" ] && break
    sleep 0.5
  done
  say "write through $1 failed: $(status_of "$r") $(body_of "$r" | head -c 200)"
  return 1
}
# Whether a server has applied every write so far: one ?stale read of the compose/ prefix on it
# (its own state, no forwarding) must hold each key with its value.
: >"$W/written"
lacks() { # server: prints the first key it lacks, or nothing
  local r; r=$(http GET "$1" "/v1/kv/compose/?recurse&stale")
  case "$(status_of "$r")" in 200 | 404) ;; *) echo "(HTTP $(status_of "$r"))"; return ;; esac
  body_of "$r" | W="$W" "$NODE" -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const have = new Map((s.trim() ? JSON.parse(s) : []).map((e) => [e.Key, Buffer.from(e.Value || "", "base64").toString()]));
      for (const line of require("fs").readFileSync(process.env.W + "/written", "utf8").split("\n")) {
        if (!line) continue;
        const [k, v] = line.split("\t");
        if (have.get(k) !== v) { console.log(k); return; }
      }
    });'
}
caught_up() { # seconds server...: until every named server has applied every write so far
  local until=$((SECONDS + $(bounded "$1"))) s missing
  shift
  while :; do
    missing=''
    for s in "$@"; do
      missing=$(lacks "$s")
      [ -n "$missing" ] && { missing="$s lacks $missing"; break; }
    done
    [ -z "$missing" ] && return 0
    [ "$SECONDS" -ge "$until" ] && { say "$missing"; return 1; }
    sleep 0.5
  done
}
write_all() { # label service...
  local s label=$1; shift
  for s in "$@"; do
    put "$s" "$label-$s" "$label via $s" || return 1
    printf 'compose/%s\t%s\n' "$label-$s" "$label via $s" >>"$W/written"
  done
}
# The leader's node name as the live servers see it (all that answer must agree).
leader() { # server...
  local s r l seen=''
  for s in "$@"; do
    r=$(http GET "$s" /v1/operator/raft/configuration)
    [ "$(status_of "$r")" = 200 ] || continue
    l=$(body_of "$r" | jsonq 'v => (v.Servers.find((x) => x.Leader) || {}).Node') || continue
    [ -n "$l" ] || continue
    [ -z "$seen" ] || [ "$seen" = "$l" ] || return 1
    seen=$l
  done
  [ -n "$seen" ] && echo "$seen"
}
wait_leader() { # seconds not-this-node server...: prints the leader once one other than not-this-node is named
  local until=$((SECONDS + $(bounded "$1"))) not=$2 l
  shift 2
  while [ "$SECONDS" -lt "$until" ]; do
    l=$(leader "$@") && [ "$l" != "$not" ] && { echo "$l"; return 0; }
    sleep 0.2
  done
  return 1
}
health() { dk inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$(cid "$1")" 2>/dev/null; }
wait_healthy() { # seconds service...
  local until=$((SECONDS + $(bounded "$1"))) s bad h
  shift
  while :; do
    bad=''
    for s in "$@"; do h=$(health "$s"); [ "$h" = healthy ] || bad+=" $s:${h:-gone}"; done
    [ -z "$bad" ] && return 0
    [ "$SECONDS" -ge "$until" ] && { say "not healthy:$bad"; return 1; }
    sleep 1
  done
}
# `operator raft list-peers` through the CLI inside a server's container shows exactly
# server1..3, each a voter (the Voter column, 5th).
three_voters() { # seconds server
  local until=$((SECONDS + $(bounded "$1"))) peers
  while :; do
    peers=$(compose exec -T "$2" node packages/cli/bin/registry.js operator raft list-peers 2>&1) \
      && [ "$(awk 'NR > 1 { print $1 "/" $5 }' <<<"$peers" | sort | tr '\n' ' ')" = "server1/true server2/true server3/true " ] \
      && { printf '%s\n' "$peers"; return 0; }
    [ "$SECONDS" -ge "$until" ] && { printf '%s\n' "$peers"; return 1; }
    sleep 1
  done
}

SERVERS=(server1 server2 server3)
CLIENTS=(client1 client2)
ALL=("${SERVICES[@]}")
others() { local s; for s in "${SERVERS[@]}"; do [ "$s" = "$1" ] || echo "$s"; done; }

# The image is built first under a bound of its own: on a loaded machine the build alone can take
# minutes, and the scenario's bound is for the cluster. `up -d --build` below then reuses it.
say "docker-compose build (the repo's Dockerfile on the local base image)"
t=$SECONDS
bg timeout 1200 bash -c "$(declare -f compose); W='$W' PROJECT='$PROJECT' ROOT='$ROOT'; compose build" >"$W/build.log" 2>&1 \
  || { tail -n 40 "$W/build.log"; die "docker-compose build failed"; }
say "built in $((SECONDS - t))s"

START=$SECONDS
step "docker-compose up -d --build (the repo's docker-compose.yml)"
bg timeout "$(bounded 300)" bash -c "$(declare -f compose); W='$W' PROJECT='$PROJECT' ROOT='$ROOT'; compose up -d --build" >"$W/up.log" 2>&1 \
  || { tail -n 40 "$W/up.log"; die "docker-compose up -d --build failed"; }
step "started in $((SECONDS - START))s"
t=$SECONDS
for s in "${ALL[@]}"; do
  p=$(dk port "$(cid "$s")" 8500/tcp | head -n 1) && [ -n "$p" ] || die "no published port for $s"
  PORT[$s]=${p##*:}
done
wait_healthy 120 "${ALL[@]}" || die "not all five containers became healthy"
step "all five containers healthy ($((SECONDS - t))s)"

write_all up "${ALL[@]}" || die "a write through a container failed"
caught_up 20 "${SERVERS[@]}" || die "a server did not apply the writes"
step "a write through each of the five containers, applied on all three servers"

L=$(wait_leader 10 '' "${SERVERS[@]}") || die "the servers do not agree on a leader"
step "leader: $L; docker-compose kill -s SIGKILL $L"
compose kill -s SIGKILL "$L" >/dev/null 2>&1
t=$SECONDS
mapfile -t SURV < <(others "$L")
L2=$(wait_leader 30 "$L" "${SURV[@]}") || die "no new leader among ${SURV[*]} within 30s of SIGKILL of $L"
step "new leader $L2 ($((SECONDS - t))s after SIGKILL)"
write_all killed "${SURV[@]}" "${CLIENTS[@]}" || die "a write through a survivor or client agent failed with $L killed"
step "writes through ${SURV[*]} and both client agents"

compose start "$L" >/dev/null 2>&1
t=$SECONDS
wait_healthy 60 "$L" || die "$L did not become healthy after start"
caught_up 30 "${SERVERS[@]}" || die "$L did not catch up after start"
step "$L started again and caught up ($((SECONDS - t))s)"

L=$(wait_leader 10 '' "${SERVERS[@]}") || die "the servers do not agree on a leader"
step "leader: $L; docker-compose stop $L"
t=$SECONDS
compose stop "$L" >/dev/null 2>&1
stopped_in=$((SECONDS - t))
mapfile -t SURV < <(others "$L")
L2=$(wait_leader 15 "$L" "${SURV[@]}") || die "no leader among ${SURV[*]} after stop of $L"
write_all stopped "${SURV[@]}" "${CLIENTS[@]}" || die "a write failed with $L stopped"
step "handover to $L2 (stop took ${stopped_in}s); writes through ${SURV[*]} and both client agents"
compose start "$L" >/dev/null 2>&1
wait_healthy 60 "$L" || die "$L did not become healthy after start"
caught_up 30 "${SERVERS[@]}" || die "$L did not catch up after start"
step "$L started again and caught up"

# A dead disk: server2 dies (SIGKILL) and comes back under the same name with an empty volume.
step "replacing server2 with an empty volume (kill -s SIGKILL, rm, volume rm, up -d server2)"
compose kill -s SIGKILL server2 >/dev/null 2>&1
compose rm -f server2 >/dev/null 2>&1
dk volume rm "${PROJECT}_server2-data" >/dev/null || die "could not remove server2's volume"
compose up -d --no-deps server2 >/dev/null 2>&1 || die "could not start the new server2"
# The cluster stays available: a write through server1, server3 and the clients every second
# for 30 s while the new server2 joins; each must succeed (put retries for up to 10 s).
t=$SECONDS n=0
while [ $((SECONDS - t)) -lt 30 ]; do
  n=$((n + 1))
  write_all "replace$n" server1 server3 "${CLIENTS[@]}" || die "the cluster stopped taking writes $((SECONDS - t))s into the replacement"
  sleep 1
done
step "$n rounds of writes through server1, server3 and both clients during the replacement, all answered"
wait_healthy 60 server2 || die "the new server2 did not become healthy"
caught_up 30 "${SERVERS[@]}" || die "the new server2 did not catch up"
three_voters 30 server1 || die "list-peers does not show server1, server2 and server3 as the three voters"
step "new server2 caught up; list-peers shows three voters"

bg timeout "$(bounded 120)" bash -c "$(declare -f compose); W='$W' PROJECT='$PROJECT' ROOT='$ROOT'; compose down -v" >/dev/null 2>&1 || die "docker-compose down -v failed"
step "docker-compose down -v; scenario took $((SECONDS - START))s"
