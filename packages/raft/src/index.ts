export * from './core/types';
export * from './interfaces';
export * from './storage/level-storage';
export * from './storage/memory-storage';
