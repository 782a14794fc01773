// The agent's Connect side, wired once on both agent kinds: the agent cache (roots, leaves, cached
// reads), the leaf signer and the CA leader duty (which run on the leader only), and the
// intention defaults. Routes reach it as `deps.connect`. This agent's own services — proxies
// included — are the local state's (local/local-state.ts); managed proxies follow it
// (managed-proxy-follower.ts).
import type { Authorizer } from '@registry/acl';
import type { CaRootsOut, CaSettings, Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import { MAX_WAIT_MS } from '../rpc/blocking';
import { serverError } from '../errors';
import { defaultQueryOptions, type QueryOptions } from '../rpc/query-options';
import type { RpcApi } from '../rpc/rpc-api';
import { AgentCache, type GetOptions } from '../cache/agent-cache';
import type { IndexedCacheAnswer } from '../cache/cache-answer';
import { CaLeaderDuty } from './ca-leader';
import type { IntentionDefaults } from './intention-decision';
import { leafFetcher, type IssuedCert } from './leaf-fetcher';
import { LeafSigner, type SignedLeaf } from './leaf-signer';
import { SignLimiter } from './sign-limiter';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Connect.Sign': { args: { csrPEM: string }; reply: SignedLeaf };
  }
}

const SIGN_TIMEOUT_MS = 10_000;
export const CONNECT_DISABLED = 'Connect must be enabled in order to use this endpoint';

/**
 * What of the agent's configuration this reads (AgentConfig has it; named here so that connect/
 * does not import config/, which imports connect/'s CA settings). Read on use: a reload changes
 * the object in place.
 */
export interface ConnectAgentConfig {
  datacenter: string;
  bind: string;
  acl: { enabled: boolean; defaultPolicy: string };
  connect: { enabled: boolean; csrMaxPerSecond: number; csrMaxConcurrent: number };
}

export interface AgentConnectDeps {
  config: ConnectAgentConfig;
  /** The CA settings a first leader starts with (config/connect-config.ts initialCaSettings of `connect.ca_config`). */
  initialCa: { settings: CaSettings; clusterId?: string };
  rpc: RpcApi;
  /** This server's replica of the state; a client's node mirror (the CA configuration is read from a server's). */
  store: Store;
  logger: Logger;
  /**
   * The token of this agent's own leader calls (Connect.Sign of its services' leaves, refreshed in
   * the background, not per request): a client's agent token, which the servers check. Absent on
   * a server, whose calls are its own.
   */
  agentToken?: () => string | undefined;
  /** When a client agent lost contact with every server (monotonic ms), for cached answers' Age. */
  lostContactSince?: () => number | undefined;
}

export class AgentConnect {
  readonly cache: AgentCache;
  readonly signer: LeafSigner;
  readonly caDuty: CaLeaderDuty;
  private readonly rpc: RpcApi;
  private readonly config: ConnectAgentConfig;

  constructor(private readonly deps: AgentConnectDeps) {
    this.rpc = deps.rpc;
    this.config = deps.config;
    this.cache = new AgentCache({ lostContactSince: deps.lostContactSince });
    const applyInternal = (cmd: Command) => deps.rpc.apply(cmd, { internal: true });
    const connect = deps.config.connect;
    this.signer = new LeafSigner(
      deps.store,
      applyInternal,
      new SignLimiter({ perSecond: connect.csrMaxPerSecond, maxConcurrent: connect.csrMaxConcurrent }),
      deps.config.datacenter,
    );
    this.caDuty = new CaLeaderDuty(deps.store, applyInternal, deps.logger, connect.enabled, deps.initialCa);
    deps.rpc.leader.handle('Connect.Sign', ({ csrPEM }) => this.signer.sign(csrPEM));
  }

  /** This server's replica of the state (the CA configuration is read from it before a rotation). */
  get store(): Store {
    return this.deps.store;
  }

  /** The address proxies bind to by default (the agent's bind address). */
  get bindAddress(): string {
    return this.config.bind;
  }

  get enabled(): boolean {
    return this.config.connect.enabled;
  }

  requireEnabled(): void {
    if (!this.enabled) throw serverError(CONNECT_DISABLED);
  }

  authorizer(token: string | undefined): Authorizer {
    return this.rpc.aclResolver.resolve(token);
  }

  intentionDefaults(): IntentionDefaults {
    return { aclsEnabled: this.config.acl.enabled, defaultAllow: this.config.acl.defaultPolicy === 'allow' };
  }

  /** A read through the agent cache: keyed by everything that changes its answer, token included. */
  cachedRead<T>(endpoint: string, args: unknown, opts: Pick<QueryOptions, 'datacenter' | 'token'>, get: GetOptions = {}): Promise<IndexedCacheAnswer<T>> {
    const key = `${endpoint}|${opts.datacenter}|${opts.token ?? ''}|${JSON.stringify(args)}`;
    return this.cache.get<T>(
      key,
      async (minIndex, signal) => {
        const reply = await this.rpc.readByName<T>(endpoint, args, blockingOptions(opts, minIndex), signal);
        // Consul's rule: an index is never below 1, so a refresh with it blocks instead of spinning.
        return { index: Math.max(1, reply.result.index), value: reply.result.value, meta: reply.meta };
      },
      get,
    );
  }

  roots(get: GetOptions = {}): Promise<IndexedCacheAnswer<CaRootsOut>> {
    return this.cachedRead<CaRootsOut>('connect.roots', {}, { datacenter: this.config.datacenter, token: undefined }, get);
  }

  /** A node's checks from the catalog through the agent cache, blocking past `minIndex` (alias checks of another node). */
  async nodeChecks(node: string, minIndex: number, signal: AbortSignal): Promise<{ index: number; value: { CheckID: string; Node: string; Name: string; ServiceID: string; Status: string; Output: string }[] }> {
    const a = await this.cachedRead<{ CheckID: string; Node: string; Name: string; ServiceID: string; Status: string; Output: string }[]>(
      'health.node',
      { node },
      { datacenter: this.config.datacenter, token: undefined },
      { minIndex, waitMs: MAX_WAIT_MS, signal },
    );
    return { index: a.index, value: a.value };
  }

  /** The agent's leaf for `service` (the caller has been authorised already). */
  leaf(service: string, get: GetOptions = {}): Promise<IndexedCacheAnswer<IssuedCert>> {
    return this.cache.get<IssuedCert>(
      `leaf|${service}`,
      leafFetcher(service, {
        datacenter: this.config.datacenter,
        roots: (minIndex, waitMs, signal) => this.roots({ minIndex, waitMs, signal }),
        sign: (csrPEM) => this.sign(csrPEM),
      }),
      get,
    );
  }

  /** Have the leader sign a CSR (here when this server leads). */
  async sign(csrPEM: string): Promise<SignedLeaf> {
    return this.rpc.leader.call('Connect.Sign', { csrPEM }, SIGN_TIMEOUT_MS, this.deps.agentToken?.());
  }

  stop(): void {
    this.cache.stop();
  }
}

function blockingOptions(opts: Pick<QueryOptions, 'datacenter' | 'token'>, minIndex: number): QueryOptions {
  return defaultQueryOptions(opts.datacenter, opts.token, { minIndex, waitMs: MAX_WAIT_MS });
}
