export { Agent, VERSION, type AgentOptions } from './agent/agent';
export { createLogger, type Logger } from './agent/logger';
export { buildConfig, defaultConfig, applyConfigFile, validateConfig, type AgentConfig, type AgentFlags } from './config/config';
export { parseDurationMs as parseDuration, formatDurationMs as formatDuration } from '@registry/store';
