// The agent's service-mesh side, wired once: the agent cache, the leader's leaf signer and its
// internal RPC, the CA leader duty, this agent's own services and the managed proxies they start.
// Routes reach it as `deps.mesh`.
import type { Authorizer } from '@registry/acl';
import type { RaftNode, Transport } from '@registry/raft';
import type { CaRootsOut, Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { AgentConfig } from '../config/config';
import { initialCaSettings } from '../config/connect-config';
import { MAX_WAIT_MS } from '../rpc/blocking';
import { serverError, forbidden } from '../errors';
import type { QueryOptions } from '../rpc/query-options';
import type { RpcApi } from '../rpc/rpc-api';
import { AgentCache, type CacheAnswer, type GetOptions } from './agent-cache';
import { CaLeaderDuty } from './ca-leader';
import type { IntentionDefaults } from './intention-decision';
import { leafFetcher, type IssuedCert } from './leaf-fetcher';
import { LeafSigner, type SignedLeaf } from './leaf-signer';
import { ManagedProxies } from './managed-proxies';
import type { RunnerFailures } from '../runtime/runner-failures';
import { agentServiceOut, registerRequestOf, servicesFromDefinition, type LocalService, type ServiceDefinition } from './local-services';
import { SignLimiter } from './sign-limiter';
import { ServiceTokens } from './proxy-tokens';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Connect.Sign': { args: { csrPEM: string }; reply: SignedLeaf };
  }
}

const SIGN_TIMEOUT_MS = 10_000;
export const CONNECT_DISABLED = 'Connect must be enabled in order to use this endpoint';

export interface MeshDeps {
  config: AgentConfig;
  rpc: RpcApi;
  store: Store;
  /** Absent on a client agent (no Raft there; client/client-agent.ts). */
  raft?: RaftNode;
  transport?: Transport;
  logger: Logger;
  /** host:port of this agent's HTTP API (for managed proxies' environment). */
  httpAddress: () => string;
  /** Where managed proxies report failures (runtime/runner-failures.ts); logged only when absent. */
  failures?: RunnerFailures;
  /** When a client agent lost contact with every server (monotonic ms), for cached answers' Age. */
  lostContactSince?: () => number | undefined;
}

export class Mesh {
  readonly cache: AgentCache;
  readonly signer: LeafSigner;
  readonly caDuty: CaLeaderDuty;
  readonly proxies: ManagedProxies;
  /** The tokens services were registered with, for their managed proxies (connect/proxy-tokens.ts). */
  readonly serviceTokens = new ServiceTokens();
  private readonly services = new Map<string, LocalService>();
  private readonly serviceListeners = new Set<() => void>();
  private readonly rpc: RpcApi;
  private readonly config: AgentConfig;

  constructor(private readonly deps: MeshDeps) {
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
    this.caDuty = new CaLeaderDuty(deps.store, applyInternal, deps.logger, connect.enabled, {
      settings: initialCaSettings(connect.caConfig),
      clusterId: connect.caConfig?.clusterId,
    });
    this.proxies = new ManagedProxies(deps.httpAddress, deps.logger, deps.failures);
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
  cachedRead<T>(endpoint: string, args: unknown, opts: Pick<QueryOptions, 'datacenter' | 'token'>, get: GetOptions = {}): Promise<CacheAnswer<T>> {
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

  roots(get: GetOptions = {}): Promise<CacheAnswer<CaRootsOut>> {
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
  leaf(service: string, get: GetOptions = {}): Promise<CacheAnswer<IssuedCert>> {
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
    return this.rpc.leader.call('Connect.Sign', { csrPEM }, SIGN_TIMEOUT_MS);
  }

  // ---- this agent's services ----

  localService(id: string): LocalService | undefined {
    return this.services.get(id);
  }

  /** Every service this agent owns (anti-entropy compares them with the catalog: client/anti-entropy.ts). */
  localServices(): LocalService[] {
    return [...this.services.values()];
  }

  /** The managed proxy whose token this is, if any. */
  proxyByToken(token: string | undefined): LocalService | undefined {
    if (!token) return undefined;
    for (const s of this.services.values()) if (s.managed?.token === token) return s;
    return undefined;
  }

  /** AgentService objects by ID, filtered by `service:read`. */
  listServices(authz: Authorizer): Record<string, unknown> {
    // Keyed by the IDs users chose, and looked up by request paths: no prototype (issue 33 finding 8).
    const out: Record<string, unknown> = Object.create(null);
    const node = this.deps.store.catalogNode(this.config.nodeName).value;
    for (const [id, s] of [...this.services].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!authz.serviceRead(s.service.Service)) continue;
      out[id] = agentServiceOut(s, node?.Services[id]);
    }
    return out;
  }

  /**
   * `catalog: false` adds the service to this agent's state only (a restart's restore, before the
   * node is in the catalog): the caller writes its catalog row later (checks/agent-checks.ts publish).
   */
  async registerService(def: ServiceDefinition, authz: Authorizer, opts: { catalog: boolean } = { catalog: true }): Promise<void> {
    const made = servicesFromDefinition(def, this.services, {
      allowManagedApiRegistration: this.config.connect.proxy.allowManagedApiRegistration,
      managedPorts: this.config.connect.proxyPorts,
      sidecarPorts: this.config.connect.sidecarPorts,
    });
    for (const s of made) {
      if (!authz.serviceWrite(s.service.Service)) throw forbidden();
      const dest = s.service.Proxy?.DestinationServiceName;
      if (s.service.Kind === 'connect-proxy' && dest && !authz.serviceWrite(dest)) throw forbidden();
    }
    const mainId = made[0]!.service.ID;
    // The agent syncs with its own authority (Consul's agent token), once the caller's rights are checked.
    if (opts.catalog) for (const s of made) await this.apply({ type: 'catalog.register', req: registerRequestOf(s, this.config.nodeName) });
    const keep = new Set(made.map((s) => s.service.ID));
    for (const old of [...this.services.values()]) {
      if (old.parentId === mainId && !keep.has(old.service.ID)) await this.dropLocal(old.service.ID);
    }
    for (const s of made) this.services.set(s.service.ID, s);
    for (const s of made) {
      if (s.managed) this.proxies.ensure({ proxyServiceId: s.service.ID, execMode: s.managed.execMode === 'script' ? 'script' : 'daemon', command: s.managed.command, token: s.managed.token });
    }
    this.changed();
  }

  /** false when the agent has no such service. */
  async deregisterService(id: string, authz: Authorizer): Promise<boolean> {
    const s = this.services.get(id);
    if (!s) return false;
    if (!authz.serviceWrite(s.service.Service)) throw forbidden();
    for (const child of [...this.services.values()]) if (child.parentId === id) await this.dropLocal(child.service.ID);
    await this.dropLocal(id);
    this.changed();
    return true;
  }

  /** Call `fn` on the next change to this agent's services; returns cancel(). */
  onServicesChange(fn: () => void): () => void {
    this.serviceListeners.add(fn);
    return () => this.serviceListeners.delete(fn);
  }

  stop(): void {
    this.proxies.stopAll();
    this.cache.stop();
  }

  private async dropLocal(id: string): Promise<void> {
    this.proxies.remove(id);
    await this.apply({ type: 'catalog.deregister', req: { Node: this.config.nodeName, ServiceID: id } });
    this.services.delete(id);
  }

  private apply(cmd: Command): Promise<unknown> {
    return this.rpc.apply(cmd, { internal: true });
  }

  private changed(): void {
    const listeners = [...this.serviceListeners];
    this.serviceListeners.clear();
    for (const l of listeners) l();
  }
}

function blockingOptions(opts: Pick<QueryOptions, 'datacenter' | 'token'>, minIndex: number): QueryOptions {
  return {
    datacenter: opts.datacenter,
    token: opts.token,
    consistency: 'default',
    cached: false,
    minIndex,
    waitMs: MAX_WAIT_MS,
    cacheControl: { mustRevalidate: false },
  };
}
