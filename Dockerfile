# registry server image. Build:  docker build -t registry:local .
# Run one dev server:            docker run --rm -p 127.0.0.1:8500:8500 registry:local agent -dev -client 0.0.0.0
# Three servers: see docker-compose.yml and docs/cluster.md.
# The base image is the official node:20-bookworm-slim. CI, which reaches no image registry, builds
# a local stand-in under that name (scripts/compose-test.sh: debootstrap, this machine's node and
# npm, npm offline from a cache) and builds this file unchanged on it.

# --- build: install every dependency, compile the workspaces, then drop dev dependencies
FROM node:20-bookworm-slim AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/raft/package.json packages/raft/
COPY packages/store/package.json packages/store/
COPY packages/acl/package.json packages/acl/
COPY packages/ca/package.json packages/ca/
COPY packages/server/package.json packages/server/
COPY packages/cli/package.json packages/cli/
COPY packages/ui/package.json packages/ui/
# --ignore-scripts: the root `prepare` would compile before the sources are copied, and no
# dependency needs its install script (classic-level and msgpackr load prebuilt binaries).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY packages/ packages/
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime: compiled packages and production node_modules only
FROM node:20-bookworm-slim
ENV NODE_ENV=production
# glibc's malloc: two arenas and fixed trim/mmap thresholds, so what a write burst frees is given
# back instead of staying in per-thread arenas (~20–30 MiB less RSS per server after a burst at
# 10,000 nodes, write throughput unchanged: docs/benchmarks.md, "RSS under a write burst").
# glibc reads these at process start; node cannot set them for itself.
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
# Workspace packages: node_modules/@registry/* are symlinks into these.
COPY --from=build /app/packages/ packages/
# The data dir is owned by the unprivileged `node` user the server runs as; a named
# volume mounted there starts with this ownership.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# 8500 HTTP API, 8300 server RPC + Raft.
EXPOSE 8500 8300
# Run as an executable, so that its `#!/usr/bin/env -S … node …` line gives it the environment and Node flags registry runs with.
ENTRYPOINT ["packages/cli/bin/registry.js"]
CMD ["agent", "-dev", "-client", "0.0.0.0"]
