#!/usr/bin/env bash
# Issue #36's "Done when": the exactly-once test with a +10 min leader finds no duplicate in ten
# rounds. Runs packages/server/test/time/exactly-once-skewed-leader.test.ts with ROUNDS rounds
# (default 10; CI runs fewer) and prints one line per round. Needs libfaketime (Debian package
# libfaketime) and a build (npx tsc -b packages/cli). Record the output in docs/benchmarks/history.md
# (the current figure: docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  commit: $(git rev-parse --short HEAD)$(git diff --quiet -- packages/*/src || echo ' (+ local changes to packages/*/src)')  rounds: ${ROUNDS:-10}"
REGISTRY_SKEWED_ROUNDS="${ROUNDS:-10}" npx jest --ci -i packages/server/test/time/exactly-once-skewed-leader.test.ts 2>&1 \
  | grep -E '^\s+round [0-9]+|✓|✕|Tests:|Time:|duplicates|lost|reapplied'
