// A RaftNode's settings, their documented defaults, and the checks that reject nonsense early.
import type { CoreConfig } from '../core/raft-core';
import type { NodeId } from '../core/types';
import type { RaftStorage, StateMachine, Transport } from '../interfaces';
import type { RaftObserver } from './observer';
import { SNAPSHOT_CHUNK_BYTES } from '../storage/snapshot-chunks';

export interface RaftLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
  debug(o: object, msg?: string): void;
  /** Storage faults are logged here when present (else at warn). */
  error?(o: object, msg?: string): void;
}

export interface RaftNodeOptions {
  id: NodeId;
  storage: RaftStorage;
  transport: Transport;
  fsm: StateMachine;
  /** Milliseconds per core tick (default 50). */
  tickMs?: number;
  /** Election timeout in ticks, randomised in [n, 2n) by the core (default 10 → 500–1000 ms). */
  electionTicks?: number;
  /** Heartbeat interval in ticks (default 1). */
  heartbeatTicks?: number;
  /** Entries applied since the last snapshot before another is taken (default 8192). */
  snapshotThreshold?: number;
  /**
   * 0 (default): a snapshot is considered after every Ready batch once snapshotThreshold entries
   * were applied (spaced under load, see snapshots.ts due()). > 0: as hashicorp/raft (Consul's
   * raft_snapshot_interval): only every interval..2×interval ms, randomised per check so servers
   * do not all serialise at once; the log bound (8 × snapshotThreshold, plus up to one threshold
   * more, to each voter's own phase, spread evenly by rank) still forces one between checks.
   */
  snapshotIntervalMs?: number;
  /** Entries kept in the log behind a snapshot, for slow followers (default 10240). */
  trailingLogs?: number;
  /** Unacknowledged appends in flight per follower (default 64). */
  maxInflight?: number;
  /**
   * Entry payload bytes in those appends (default 16 MiB): a follower replaying a long log tail
   * costs the leader at most about this much in encoded appends, whatever the entries' size.
   */
  maxInflightBytes?: number;
  /** Entries per append message (default 512). */
  maxEntriesPerAppend?: number;
  /** Entry payload bytes per append message (default 1 MiB; a larger entry goes alone). */
  maxAppendBytes?: number;
  /** Pre-vote (default true): a rejoining server cannot depose a healthy leader. */
  preVote?: boolean;
  /** Check-quorum (default true): a leader that cannot reach a majority steps down. */
  checkQuorum?: boolean;
  /** Random source for election timeouts (default Math.random). */
  random?: () => number;
  logger?: RaftLogger;
  /** Hooks told about commits, applies and snapshots (metrics); none by default. */
  observer?: RaftObserver;
  /** Largest piece of a snapshot sent to a follower, in bytes (default 1 MiB; tests use tiny ones). */
  snapshotChunkBytes?: number;
}

export type ResolvedOptions = Required<Omit<RaftNodeOptions, 'logger' | 'observer'>> & { logger: RaftLogger; observer: RaftObserver };

const silent: RaftLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };

export function resolveOptions(opts: RaftNodeOptions): ResolvedOptions {
  const resolved: ResolvedOptions = {
    tickMs: 50,
    electionTicks: 10,
    heartbeatTicks: 1,
    snapshotThreshold: 8192,
    snapshotIntervalMs: 0,
    trailingLogs: 10240,
    maxInflight: 64,
    maxInflightBytes: 16 * 1024 * 1024,
    maxEntriesPerAppend: 512,
    maxAppendBytes: 1024 * 1024,
    preVote: true,
    checkQuorum: true,
    random: Math.random,
    snapshotChunkBytes: SNAPSHOT_CHUNK_BYTES,
    ...stripUndefined(opts),
    id: opts.id,
    storage: opts.storage,
    transport: opts.transport,
    fsm: opts.fsm,
    logger: opts.logger ?? silent,
    observer: opts.observer ?? {},
  };
  const positive: (keyof ResolvedOptions)[] = [
    'tickMs',
    'electionTicks',
    'heartbeatTicks',
    'snapshotThreshold',
    'maxInflight',
    'maxInflightBytes',
    'maxEntriesPerAppend',
    'maxAppendBytes',
    'snapshotChunkBytes',
  ];
  for (const key of positive) {
    const v = resolved[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new Error(`RaftNode option ${key} must be a positive integer (got ${String(v)})`);
    }
  }
  if (!Number.isInteger(resolved.snapshotIntervalMs) || resolved.snapshotIntervalMs < 0) {
    throw new Error(`RaftNode option snapshotIntervalMs must be a non-negative integer`);
  }
  if (!Number.isInteger(resolved.trailingLogs) || resolved.trailingLogs < 0) {
    throw new Error(`RaftNode option trailingLogs must be a non-negative integer`);
  }
  if (resolved.heartbeatTicks >= resolved.electionTicks) {
    throw new Error('RaftNode option heartbeatTicks must be less than electionTicks');
  }
  if (!resolved.id) throw new Error('RaftNode option id is required');
  return resolved;
}

/** The settings the core takes (the rest are the driver's). */
export function coreConfig(opts: ResolvedOptions): CoreConfig {
  return {
    id: opts.id,
    electionTicks: opts.electionTicks,
    heartbeatTicks: opts.heartbeatTicks,
    preVote: opts.preVote,
    checkQuorum: opts.checkQuorum,
    maxInflight: opts.maxInflight,
    maxInflightBytes: opts.maxInflightBytes,
    maxEntriesPerAppend: opts.maxEntriesPerAppend,
    maxAppendBytes: opts.maxAppendBytes,
    random: opts.random,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
