// The public API of @registry/raft.
export * from './core/types';
export * from './core/configuration';
export * from './core/raft-core';
export * from './interfaces';
export * from './storage/level-storage';
export * from './storage/memory-storage';
export * from './storage/snapshot-chunks';
export * from './transport/frame-codec';
export * from './transport/rpc-errors';
export * from './transport/tcp-transport';
export * from './transport/sender-address';
export * from './transport/memory-transport';
export * from './node/options';
export * from './node/observer';
export * from './node/raft-node';
export type { CaughtUp } from './node/catch-up';
export * from './storage/wal-storage';
export { parseSegment, CorruptSegmentError } from './storage/wal/segments';
