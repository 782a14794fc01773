// The agent's syncer (Consul's agent/ae StateSyncer over local.State's SyncChanges and SyncFull),
// built the same way by both agent kinds: check results go to the catalog as they change
// (catalog-sync.ts), and an anti-entropy pass (anti-entropy.ts) compares the whole of this agent's
// state with the catalog's rows for its node at a fixed interval and repairs what differs. The
// catalog view is the agent's own store on a server and the node mirror on a client
// (client/node-mirror.ts); writes go with the agent's authority either way.
import type { CheckRequest, Command } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import { AntiEntropy, type NodeView, type SyncResult } from './anti-entropy';
import { CatalogSync } from './catalog-sync';
import type { LocalService } from './local-services';

/** After a failed check-result write, the next try waits this long. */
const RETRY_MS = 1_000;

export interface SyncerDeps {
  node: string;
  /** This node's rows in the catalog, freshly read (the store on a server, the mirror on a client). */
  view(): Promise<NodeView>;
  /** A write with the agent's own authority. */
  apply(cmd: Command): Promise<unknown>;
  /** Output-only check changes reach the catalog at most this often (Consul's check_update_interval). */
  outputIntervalMs: number;
  /** Catalog services of this node that are not the agent's (see AntiEntropyDeps). */
  keepService?: (id: string) => boolean;
  /** The check results' logger. */
  logger: Logger;
  /** The anti-entropy passes' logger. */
  passLogger: Logger;
  failures: RunnerFailures;
}

/** What the syncer keeps in the catalog: the local state (local-state.ts). */
export interface SyncedState {
  services(): LocalService[];
  checks(): CheckRequest[];
}

export class Syncer {
  /** The change half: check results, written when they change (handed to the LocalState). */
  readonly results: CatalogSync;
  private readonly antiEntropy: AntiEntropy;
  private state: SyncedState | undefined;
  private started = false;
  private stopped = false;

  constructor(d: SyncerDeps) {
    this.results = new CatalogSync({ node: d.node, apply: d.apply, outputIntervalMs: d.outputIntervalMs, retryMs: RETRY_MS, logger: d.logger, failures: d.failures });
    this.antiEntropy = new AntiEntropy({
      node: d.node,
      services: () => this.state?.services() ?? [],
      checks: () => this.state?.checks() ?? [],
      view: d.view,
      apply: d.apply,
      keepService: d.keepService,
      logger: d.passLogger,
      failures: d.failures,
    });
  }

  /** The state whose services and checks the passes keep in the catalog. */
  follow(state: SyncedState): void {
    this.state = state;
  }

  /** Start the passes, every `intervalMs` (a second call, or one after stop(), does nothing). */
  start(intervalMs: number): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.antiEntropy.start(intervalMs);
  }

  /** One full pass now (joins one under way). */
  syncFull(): Promise<SyncResult> {
    return this.antiEntropy.sync();
  }

  /** Passes run, writes they made, writes the servers refused for want of ACL rights (stats, tests). */
  get stats(): { passes: number; writes: number; blocked: number } {
    return { passes: this.antiEntropy.passes, writes: this.antiEntropy.writes, blocked: this.antiEntropy.blocked };
  }

  /** Stop the passes only (a client leaving: check results still flow until it is gone). */
  stopPasses(): void {
    this.stopped = true;
    this.antiEntropy.stop();
  }

  /** Stop the passes and the check results' writes. */
  stop(): void {
    this.stopPasses();
    this.results.stop();
  }
}
