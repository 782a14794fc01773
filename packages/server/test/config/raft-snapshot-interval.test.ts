// raft.snapshot_interval_ms (issue #14): servers snapshot on Consul's 30 s interval by default; a
// config file may change it (0: every snapshot_threshold entries), and nonsense is refused. And
// raft.wal_segment_bytes: the size each write-ahead-log segment is allocated at (1 MiB by default).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, ConfigError } from '@registry/server';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const withFile = (raft: unknown) => {
  const path = join(dir, 'raft.json');
  writeFileSync(path, JSON.stringify({ server: true, data_dir: dir, bootstrap_expect: 1, raft }));
  return buildConfig({ configFile: [path] });
};

test('30 s by default, as a config file sets it otherwise', () => {
  expect(buildConfig({ server: true, dataDir: dir, bootstrapExpect: 1 }).raft.snapshotIntervalMs).toBe(30_000);
  expect(withFile({ snapshot_interval_ms: 0 }).raft.snapshotIntervalMs).toBe(0);
  const cfg = withFile({ snapshot_interval_ms: 5_000, snapshot_threshold: 100 }).raft;
  expect(cfg.snapshotIntervalMs).toBe(5_000);
  expect(cfg.snapshotThreshold).toBe(100);
});

test.each(['30s', -1, 1.5])('%p, not a whole number of milliseconds ≥ 0, is refused', (bad) => {
  let caught: unknown;
  try {
    withFile({ snapshot_interval_ms: bad });
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).errors.join()).toContain('snapshot_interval_ms');
});

test('WAL segments of 1 MiB by default, as a config file sets them otherwise; below 4 KiB or not whole is refused', () => {
  expect(buildConfig({ server: true, dataDir: dir, bootstrapExpect: 1 }).raft.walSegmentBytes).toBe(1 << 20);
  expect(withFile({ wal_segment_bytes: 65536 }).raft.walSegmentBytes).toBe(65536);
  for (const bad of ['4MB', 100, 8192.5]) {
    expect(() => withFile({ wal_segment_bytes: bad })).toThrow(ConfigError);
    expect(() => withFile({ wal_segment_bytes: bad })).toThrow(/wal_segment_bytes/);
  }
});

test('the Raft log in the write-ahead log by default; raft.log_store = "leveldb" keeps it in LevelDB; anything else is refused', () => {
  expect(buildConfig({ server: true, dataDir: dir, bootstrapExpect: 1 }).raft.logStore).toBe('wal');
  expect(withFile({ log_store: 'leveldb' }).raft.logStore).toBe('leveldb');
  expect(withFile({ log_store: 'wal' }).raft.logStore).toBe('wal');
  expect(() => withFile({ log_store: 'boltdb' })).toThrow(/log_store/);
});
