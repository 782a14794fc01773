// Where a server keeps its Raft log (`raft.log_store`): the write-ahead log under
// `<data-dir>/raft/wal` (the default), or LevelDB itself; either way its snapshots are files in
// `<data-dir>/raft/snapshots` (issue #34; data format 2). A data dir
// goes from LevelDB to the WAL on its first start with "wal"; the way back is refused, since the
// LevelDB it would reopen holds snapshots only (docs/operations.md).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Level } from 'level';
import { LevelStorage, WalStorage, type RaftStorage } from '@registry/raft';
import type { AgentConfig } from '../config/config';
import { NODE_ID_KEY } from './node-id';

/** The folder of a server's Raft snapshot files. */
export function raftSnapshotDir(dataDir: string): string {
  return join(dataDir, 'raft', 'snapshots');
}

export function raftStorage(config: AgentConfig, dataDir: string, db: Level<string, unknown>): RaftStorage {
  const snapshots = new LevelStorage({ db, prefix: 'raft', snapshotDir: raftSnapshotDir(dataDir) });
  const walDir = join(dataDir, 'raft', 'wal');
  // The snapshot files' folder is synced when one is installed (file-snapshots.ts): LevelDB's need not be.
  if (config.raft.logStore === 'wal') return new WalStorage({ dir: walDir, snapshots, segmentBytes: config.raft.walSegmentBytes });
  if (WalStorage.holdsLog(walDir)) {
    throw new Error(`${walDir} holds this server's Raft log: start it with raft.log_store = "wal" (a log moved into the write-ahead log does not go back to LevelDB)`);
  }
  return snapshots;
}

/**
 * Whether `dataDir` holds Raft state of either store: WAL segments, or anything in the LevelDB
 * besides the id the agent records there (agent/node-id.ts) — a log, hard state or snapshot.
 */
export async function holdsRaftState(dataDir: string, db: Level<string, unknown>): Promise<boolean> {
  if (WalStorage.holdsLog(join(dataDir, 'raft', 'wal'))) return true;
  if (existsSync(raftSnapshotDir(dataDir)) && readdirSync(raftSnapshotDir(dataDir)).some((name) => name.endsWith('.snap'))) return true;
  for await (const key of db.keys({ limit: 2 })) if (key !== NODE_ID_KEY) return true;
  return false;
}
