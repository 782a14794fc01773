// Issue #36: no wall clock decides what the log or a monotonic clock should. Every duration,
// timeout, deadline, backoff and ordering reads the monotonic clock (packages/server/src/time.ts);
// the wall clock is read only where a wall-clock time is the point. This test lists those places,
// each with why, and fails on any other `Date.now()` / `new Date(` in a package's source — or when
// a listed place no longer reads it (a stale entry hides the next one).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../../..');

/** file (from the repo root) → [how many reads, why a wall-clock time is right there]. */
const WALL_CLOCK_USES: Record<string, [number, string]> = {
  'packages/ca/src/agent-tls.ts': [3, 'the TLS CA and certificates `registry tls` makes are valid from now for N days'],
  'packages/ca/src/validity.ts': [3, 'certificate NotBefore/NotAfter are wall-clock times by definition'],
  'packages/ca/src/leaf.ts': [1, 'a leaf is valid from the signing leader’s now, as in Consul'],
  'packages/ca/src/root.ts': [1, 'a root is valid from now'],
  'packages/ca/src/rotation.ts': [1, 'a cross-signed root is valid from now'],
  'packages/cli/src/commands/intention.ts': [1, 'prints CreatedAt as a date'],
  'packages/server/src/acl/acl-leader-duty.ts': [1, 'CreateTime of the built-in tokens, a timestamp people read'],
  'packages/server/src/acl/acl-replication.ts': [2, 'LastSuccess/LastError of /v1/acl/replication are timestamps people read'],
  'packages/server/src/agent/host-facts.ts': [2, 'CollectionTime and bootTime of /v1/agent/host are timestamps'],
  'packages/server/src/runtime/logger.ts': [2, 'log line timestamps'],
  'packages/server/src/checks/grpc-probe.ts': [2, 'grpc-js takes a call deadline only as a wall-clock Date (the check’s timeout from now)'],
  'packages/server/src/local/local-state.ts': [1, 'a TTL check’s persisted Expires (Consul’s format)'],
  'packages/server/src/local/restored-states.ts': [1, 'a TTL check’s persisted Expires, clamped to the TTL on restore'],
  'packages/server/src/cluster/autopilot-health.ts': [1, 'StableSince, a timestamp in autopilot health'],
  'packages/server/src/cluster/left-marker.ts': [1, 'when the server left, written for people'],
  'packages/server/src/cluster/server-health.ts': [3, 'the clock-offset report compares wall clocks on purpose'],
  'packages/server/src/connect/ca-config.ts': [1, 'a new root’s validity starts now'],
  'packages/server/src/connect/ca-leader.ts': [1, 'the prune time goes into the log once, so every server reads the same time'],
  'packages/server/src/connect/leaf-fetcher.ts': [1, 'renewal follows the leaf’s wall-clock validity'],
  'packages/server/src/dns/answers.ts': [1, 'the SOA serial is a time stamp'],
  'packages/server/src/http/routes/acl.ts': [1, 'CreateTime of a token, put into the log once'],
  'packages/server/src/http/routes/acl-legacy.ts': [2, 'CreateTime of a legacy token (create, clone), put into the log once'],
  'packages/server/src/http/routes/intentions.ts': [2, 'CreatedAt/UpdatedAt of an intention, put into the log once'],
  'packages/server/src/metrics/consul-json.ts': [1, 'the JSON metrics’ Timestamp'],
  'packages/server/src/metrics/interval-aggregate.ts': [4, 'go-metrics’ 10 s intervals are aligned to the wall clock'],
  'packages/server/src/rpc/log-clock.ts': [1, 'the log clock starts from the wall clock once, on an empty log'],
  'packages/server/src/rpc/rpc.ts': [1, 'a write from a server of an older version carries a wall-clock deadline (rolling upgrade)'],
  'packages/server/src/snapshot/archive.ts': [1, 'the archive’s creation time in meta.json'],
  'packages/server/src/snapshot/restore-staging.ts': [1, 'a staged restore file’s age, against its mtime (a step only removes a file early, which is fetched again)'],
  'packages/server/src/snapshot/scratch-dirs.ts': [1, 'a unique name for a restore’s upload or a save’s spooled state'],
  'packages/store/src/ca/ca-commands.ts': [1, 'date arithmetic on a time taken from the log'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function wallClockReads(text: string): number {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .map((line) => line.replace(/\/\/.*$/, ''))
    .reduce((n, line) => n + (line.match(/Date\.now\b|new Date\(/g)?.length ?? 0), 0);
}

test('the wall clock is read only where a wall-clock time is the point', () => {
  const found: Record<string, number> = {};
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    const src = join(ROOT, 'packages', pkg, 'src');
    try {
      statSync(src);
    } catch {
      continue;
    }
    for (const file of sources(src)) {
      const n = wallClockReads(readFileSync(file, 'utf8'));
      if (n > 0) found[relative(ROOT, file)] = n;
    }
  }
  const expected = Object.fromEntries(Object.entries(WALL_CLOCK_USES).map(([f, [n]]) => [f, n]));
  expect(found).toEqual(expected);
});
