// The agent's watches from its config files (`watches`, docs/watches.md): one WatchPlan each, started
// once the HTTP API listens (they query it), replaced as a whole when a reload changes the list (as
// Consul's reloadWatches stops every plan and starts the new set), stopped with the agent. Their
// failures go to the agent's runner reporter: logged by `agent.runners` with the watch and the
// reason, counted in registry_runner_failures_total{runner="watch"}.
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import { fetchFromAgent } from './agent-fetch';
import { runHttpHandler } from './http-handler';
import { runScriptHandler } from './script-handler';
import { watchLabel, type WatchDefinition } from './watch-definition';
import { WatchPlan } from './watch-plan';
import { watchQuery } from './watch-query';

export interface AgentWatchesDeps {
  /** The agent's HTTP listener (`host:port` or `unix:///path`). */
  httpAddress(): string;
  /** `http_config.consul_compat`: CONSUL_INDEX and X-Consul-Index are set too. */
  consulCompat: boolean;
  /** `watch_handler_timeout` in ms (0: none); a reload changes it (`reload`). */
  handlerTimeoutMs: number;
  failures: RunnerFailures;
  logger: Logger;
}

export class AgentWatches {
  private plans: WatchPlan[] = [];
  private definitions: readonly WatchDefinition[] = [];
  private handlerTimeoutMs: number;

  constructor(private readonly deps: AgentWatchesDeps) {
    this.handlerTimeoutMs = deps.handlerTimeoutMs;
  }

  /**
   * A reload (agent/reload.ts): the handler timeout applies to the next runs; a changed list
   * replaces every watch, as Consul's reloadWatches (an unchanged one keeps running). Answers
   * whether the list was replaced.
   */
  reload(next: { watchHandlerTimeoutMs: number; watches: readonly WatchDefinition[] }): boolean {
    this.handlerTimeoutMs = next.watchHandlerTimeoutMs;
    if (JSON.stringify(this.definitions) === JSON.stringify(next.watches)) return false;
    this.replace(next.watches);
    return true;
  }

  /** How many watches run. */
  get count(): number {
    return this.plans.length;
  }

  /** Stop every running watch and start `watches` instead. */
  replace(watches: readonly WatchDefinition[]): void {
    for (const plan of this.plans) plan.stop();
    this.definitions = watches;
    this.plans = watches.map((w, i) => this.start(w, i));
    if (this.plans.length > 0) this.deps.logger.info({ watches: this.plans.map((p) => p.label) }, 'watches running');
  }

  /** Stop every watch and the handlers they run (the agent stops). */
  stop(): void {
    for (const plan of this.plans) plan.stop(true);
    this.plans = [];
  }

  private start(watch: WatchDefinition, position: number): WatchPlan {
    const label = watchLabel(watch, position);
    if (watch.handler.kind === 'shell') {
      this.deps.logger.warn({ watch: label }, "the 'handler' field in watches is deprecated (as in Consul 1.4): use 'args'");
    }
    const query = watchQuery(watch);
    const handler = watch.handler;
    return new WatchPlan(watch, label, {
      fetch: (index, signal) => fetchFromAgent(this.deps.httpAddress(), query, index, watch.token, signal),
      handle: async (value, index, signal) => {
        const body = `${JSON.stringify(value)}\n`;
        const compat = this.deps.consulCompat;
        if (handler.kind === 'http') {
          return runHttpHandler(handler, body, { 'X-Registry-Index': String(index), ...(compat ? { 'X-Consul-Index': String(index) } : {}) });
        }
        const env: Record<string, string> = { REGISTRY_INDEX: String(index), ...(compat ? { CONSUL_INDEX: String(index) } : {}) };
        const run = runScriptHandler(handler, body, env, this.handlerTimeoutMs);
        const kill = () => run.kill();
        signal.addEventListener('abort', kill);
        try {
          return await run.done;
        } finally {
          signal.removeEventListener('abort', kill);
        }
      },
      failures: this.deps.failures,
      logger: this.deps.logger,
    });
  }
}
