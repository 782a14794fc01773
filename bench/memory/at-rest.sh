#!/usr/bin/env bash
# Memory at rest (issue #30): empty -dev server, 1,000 services, 3-server cluster. See at-rest.js.
# Needs `npm run build` (or `npx tsc -b packages/cli`) first.
set -euo pipefail
exec node "$(dirname "$0")/at-rest.js" "$@"
