#!/usr/bin/env bash
# bench/powercut/run.sh (issue 35): the power-cut test (packages/server/test/powercut/power-cut.test.ts)
# with more rounds and larger values than CI runs: each round kills and cuts a follower, the leader
# and all three servers under a KV write load, then cuts all three right after a snapshot, and reads
# every acknowledged write back from every server. Needs root, /dev/fuse and Debian's
# python3-fusepy (apt-get install -y python3-fusepy fuse3).
#
#   npm run build && bench/powercut/run.sh [rounds=5] [snapshot-rounds=10] [value-bytes=4096]
#
# Larger values make every snapshot several MiB, so LevelDB (which holds the snapshots) rolls its
# own log during snapshots and a cut lands while its new log's name is not yet synced.
set -euo pipefail
cd "$(dirname "$0")/../.."
POWERCUT_ROUNDS="${1:-5}" POWERCUT_SNAPSHOT_ROUNDS="${2:-10}" POWERCUT_VALUE_BYTES="${3:-4096}" \
  npx jest --ci -i packages/server/test/powercut/power-cut.test.ts 2>&1 \
  | grep -v '^\s*20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T.*\[\(INFO\|DEBUG\|WARN\)\]'
