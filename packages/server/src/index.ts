export { Agent, VERSION, type AgentOptions } from './agent/agent';
export { ClientAgent } from './agent/client-agent';
export { createLogger, type Logger } from './agent/logger';
export { buildConfig, defaultConfig, applyConfigFile, validateConfig, type AgentConfig, type AgentFlags } from './config/config';
export { parseDurationMs as parseDuration, formatDurationMs as formatDuration } from '@registry/store';
export { configSourcesOf } from './config/config';
export { ConfigError, readConfigSources, sourceOf, type ConfigSource } from './config/config-sources';
export { LOG_LEVELS, setLogLevel } from './agent/logger';
export { readArchive, inspectArchive, writeArchive, ArchiveError, ARCHIVE_FORMAT, ARCHIVE_VERSION, type ArchiveMeta } from './snapshot/archive';
