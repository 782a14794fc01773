// What every agent is built on, server or client (Consul's BaseDeps): the logger and its tap, the
// data dir (checked for its format before anything in it is opened), TLS, metrics, the runner
// failure counter and the agent's own ACL tokens. Built once, first, by agent/agent.ts and
// agent/client-agent.ts; everything after is given what it uses from here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../config/config';
import { AgentTokens } from '../acl/agent-tokens';
import { Metrics } from '../metrics/metrics';
import { makeDirDurably } from '../runtime/durable-file';
import { LogTap } from '../runtime/log-tap';
import { addLogSecret, createLogger, type Logger } from '../runtime/logger';
import { runnerFailures, type RunnerFailures } from '../runtime/runner-failures';
import { loadAgentTls, type AgentTls } from '../tls/tls-files';
import { checkDataFormat, DATA_FORMAT } from './data-format';
import { freezeConfig } from './config-snapshot';

export interface BaseDeps {
  /** The configuration the agent started with, frozen (agent/config-snapshot.ts); a reload makes new ones (agent/common-agent.ts `config`). */
  readonly config: Readonly<AgentConfig>;
  readonly logger: Logger;
  /** The logger writes through it, so /v1/agent/monitor can follow its lines. */
  readonly logTap: LogTap;
  readonly dataDir: string;
  /** `-dev` without a data dir: a temporary one, removed on stop. */
  readonly tempDataDir: boolean;
  /** TLS options read from cert_file/key_file/ca_file (tls/tls-files.ts). */
  readonly tls: AgentTls;
  /** Started here; stopped by the agent's shutdown (or `closeBaseDeps` when the start fails before). */
  readonly metrics: Metrics;
  readonly failures: RunnerFailures;
  /** acl.tokens.*, changeable by PUT /v1/agent/token and persisted with enable_token_persistence. */
  readonly tokens: AgentTokens;
}

export interface BaseOptions {
  logger?: Logger;
  /** The version this binary writes as the data dir's format marker (agent/data-format.ts). */
  version: string;
  /** The temporary data dir's name prefix under the OS's temp dir (`-dev`). */
  tempPrefix: string;
}

/** `made.tempDir` is set as soon as a temporary data dir exists, so that a failed start removes it. */
export async function buildBaseDeps(config: AgentConfig, options: BaseOptions, made: { tempDir?: string }): Promise<BaseDeps> {
  // From here on nothing changes it: a reload makes a new snapshot (agent/reload.ts).
  freezeConfig(config);
  const logTap = new LogTap();
  const logger = options.logger ?? createLogger(config.logLevel, config.logJson, logTap.destination);
  for (const token of Object.values(config.acl.tokens)) addLogSecret(token);
  const tempDataDir = !config.dataDir;
  const dataDir = config.dataDir ?? (made.tempDir = await mkdtemp(join(tmpdir(), options.tempPrefix)));
  // Durably: a data dir whose own name a power cut takes is a first start again (issue 35).
  await makeDirDurably(dataDir);
  // Before anything in the data dir is opened: a newer format is refused untouched (agent/data-format.ts).
  const marker = await checkDataFormat(dataDir, options.version);
  logger.info({ dataDir, format: DATA_FORMAT, marker }, 'data dir format');
  const tls = await loadAgentTls(config.tls, config.datacenter);
  // Tokens set through /v1/agent/token and persisted win over the config files (as Consul).
  const tokens = new AgentTokens(config.acl.tokens, config.acl.enableTokenPersistence ? dataDir : undefined);
  await tokens.load();
  const metrics = new Metrics(config.telemetry);
  metrics.start();
  const failures = runnerFailures(logger.child({ module: 'agent.runners' }), (runner) => metrics.runnerFailed(runner));
  return { config, logger, logTap, dataDir, tempDataDir, tls, metrics, failures, tokens };
}

/** Undoes a base whose agent was never made (a start that failed before it). */
export async function closeBaseDeps(base: BaseDeps | undefined, made: { tempDir?: string }): Promise<void> {
  base?.metrics.stop();
  if (made.tempDir) await rm(made.tempDir, { recursive: true, force: true });
}
