export * from './core/types';
export * from './interfaces';
export * from './storage/level-storage';
export * from './storage/memory-storage';
export * from './transport/frame-codec';
export * from './transport/rpc-errors';
export * from './transport/tcp-transport';
export * from './transport/memory-transport';
