// This agent's own services and checks (Consul's agent/local/state.go): the one writer of them.
// Services come through /v1/agent/service/register (with their sidecars and managed proxies:
// local-services.ts), the config files or the data dir; checks through /v1/agent/check/register or
// inside a service definition, and run here (TTL, HTTP, TCP, script, Docker, gRPC, alias: the
// runners are checks/). A registration is written to the catalog before it answers (the caller
// reads its own write); check results follow through the check sync (catalog-sync.ts) only when
// they change; anti-entropy (anti-entropy.ts) repairs the catalog from services() and checks().
// Both are kept on disk (local-state-files.ts) so a restart brings them back. Whoever follows this
// state — managed proxies, hash-blocking reads — subscribes with onChange().
//
// Why ~660 lines: it is the one writer (issue #26 item 2), so every way a service or check changes
// — add, remove, TTL update, maintenance, a config reload's set, a restart's reload from disk — is
// a method here, each a few lines over local-services.ts, the runners and the files; split, the
// "only writer" rule would be spread over files again.
import { Authorizer } from '@registry/acl';
import type { CheckRequest, Command, Store } from '@registry/store';
import type { Logger } from '../runtime/logger';
import type { RunnerFailures } from '../runtime/runner-failures';
import { agentServiceOut, CONNECT_PROXY, registerRequestOf, servicesFromDefinition, type LocalService, type RegisterPolicy, type ServiceDefinition } from './local-services';
import { badRequest, forbidden, isClientError } from '../errors';
import type { AgentCheckDefinition } from '../schemas/agent-check';
import { startRemoteAlias, type AliasInput, type NodeChecksRead } from '../checks/alias-check';
import { LocalAliases } from './local-aliases';
import { ServiceTokens } from './service-tokens';
import { agentChecksOut } from './agent-checks-out';
import type { CatalogSync, CheckState } from './catalog-sync';
import { capOutput } from '../checks/check-output';
import { startTtlTimer, type Runner, type TtlTimer } from '../checks/check-runner';
import { startProbeRunner } from '../checks/probe-runner';
import { restoredStates, withStatuses, type StartState } from './restored-states';
import { catalogCheckOf, isCheckStatus, standaloneCheckSpec, type CheckSpec, type CheckStatus } from '../checks/check-spec';
import { ConcurrencyLimit } from '../checks/concurrency-limit';
import { validCheckDefinition, validServiceDefinition } from './config-definitions';
import { setLongTimeout, type LongTimer } from '../checks/long-timer';
import type { LocalStateFiles, Persisted } from './local-state-files';
import { scriptChecksRefusal, type ScriptCheckSettings } from '../checks/script-gate';
import { isMaintenanceCheckId, serviceMaintenanceId } from './maintenance';

export const TTL_EXPIRED = 'TTL expired';

export interface CheckFloors {
  /** Shortest interval an HTTP/TCP check runs on (Consul: 1 s). */
  intervalMinMs: number;
  /** Shortest DeregisterCriticalServiceAfter honoured (Consul: 1 min). */
  deregisterMinMs: number;
}

export interface LocalStateDeps {
  node: string;
  /**
   * The catalog as this agent sees it (its own node's rows): the replicated store on a server, the
   * node mirror on a client (client/node-mirror.ts). Read for the rows' indexes and maintenance checks.
   */
  store: Store;
  /** Sidecar and managed-proxy ports, and whether managed proxies may be registered by API (read per registration: reload may change them). */
  registerPolicy: () => RegisterPolicy;
  /** Another node's checks, blocking past `minIndex` (alias checks with an AliasNode; through the agent cache). */
  nodeChecks: NodeChecksRead;
  /** Writes with the agent's own authority (the caller's token has been checked here). */
  apply: (cmd: Command) => Promise<unknown>;
  /** The check results' sync (catalog-sync.ts), the change half of the agent's syncer (syncer.ts). */
  results: CatalogSync;
  aclsEnabled: boolean;
  /** Where definitions are kept across restarts (undefined: nowhere). */
  files: LocalStateFiles | undefined;
  floors: CheckFloors;
  /** Probes in flight at once. */
  maxConcurrentProbes: number;
  logger: Logger;
  /** Where a runner reports a failure of its own (logged and counted; the check turns critical). */
  failures: RunnerFailures;
  /** Whether script and Docker checks may be registered (enable_script_checks, enable_local_script_checks). */
  scripts: ScriptCheckSettings;
}

/** How a check came to be: part of a service definition, or registered on its own. */
type Origin = 'service' | 'check';

interface Tracked {
  spec: CheckSpec;
  origin: Origin;
  status: CheckStatus;
  output: string;
  runner: Runner | TtlTimer;
  criticalTimer: LongTimer | undefined;
  /** Loaded at start, before the node was in the catalog (load()); publish() writes its row. */
  restored: boolean;
  /** Whether its runner has produced a result since it was tracked. */
  reported: boolean;
}


/** How a service is added (LocalState.addService). */
export interface AddServiceOptions {
  /** Saved under the data dir (the HTTP API); false: from the config files or the data dir. Default true. */
  persist?: boolean;
  /** The token it was registered with ('' for none); undefined: keep what it had. */
  token?: string;
  /** Restored check states by check id (a restart). */
  start?: Map<string, StartState>;
  /** Loaded at start: the catalog row is written by the sync once the node is there. */
  local?: boolean;
}

const RETRY_MS = 1_000;
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class LocalState {
  /** The tokens services were registered with, for their managed proxies (connect/proxy-tokens.ts). */
  private readonly serviceTokens = new ServiceTokens();
  private readonly services_ = new Map<string, LocalService>();
  /**
   * Managed proxies by their token: the HTTP edge asks on every request that carries a token
   * (connect/proxy-tokens.ts), so it is an index kept with the map, not a walk of every service.
   */
  private readonly byProxyToken = new Map<string, LocalService>();
  private readonly checks_ = new Map<string, Tracked>();
  private readonly listeners = new Set<() => void>();
  private readonly sync: CatalogSync;
  private readonly limiter: ConcurrencyLimit;
  /** Alias checks that follow this agent's own checks: re-judged when a local check changes. */
  private readonly localAliases: LocalAliases<Tracked>;
  private stopped = false;
  /**
   * Settles once what load() restored is in the catalog (at once when it restored nothing);
   * maintenance checks are restored, and the server's anti-entropy starts, after it.
   */
  restored: Promise<void> = Promise.resolve();

  constructor(private readonly deps: LocalStateDeps) {
    this.sync = deps.results;
    this.limiter = new ConcurrencyLimit(deps.maxConcurrentProbes);
    this.localAliases = new LocalAliases<Tracked>({
      inputs: () => {
        const rows: AliasInput[] = [...this.checks_.values()]
          .filter((c) => c.spec.kind.type !== 'alias')
          .map((c) => ({ CheckID: c.spec.CheckID, Name: c.spec.Name, ServiceID: c.spec.ServiceID, Status: c.status, Output: c.output }));
        // Maintenance checks are local checks too (Consul's local state holds them); the catalog has them.
        for (const row of this.deps.store.healthNode(this.deps.node).value) if (isMaintenanceCheckId(row.CheckID)) rows.push(row);
        return rows;
      },
      target: (t) => ({ serviceId: t.spec.kind.type === 'alias' ? t.spec.kind.serviceId : '', selfId: t.spec.CheckID, status: t.status, output: t.output }),
      judged: (t, r) => this.runnerResult(t, r.status, r.output),
    });
  }

  /** Catalog writes made for check results since start (a steady check makes none). */
  get resultWrites(): number {
    return this.sync.writes;
  }

  /** Whether ACLs are on (an unknown service or check is then a 400, as in Consul). */
  get aclsEnabled(): boolean {
    return this.deps.aclsEnabled;
  }

  // ---- reading ----

  /** This agent's service `id`. */
  service(id: string): LocalService | undefined {
    return this.services_.get(id);
  }

  /** Every service this agent owns (anti-entropy compares them with the catalog: anti-entropy.ts). */
  services(): LocalService[] {
    return [...this.services_.values()];
  }

  /**
   * The catalog rows this agent's checks should have, with their latest results (anti-entropy
   * compares them with the catalog).
   */
  checks(): CheckRequest[] {
    return [...this.checks_.values()].map((t) => catalogCheckOf(t.spec, this.deps.node, t.status, t.output));
  }

  /** The managed proxy whose token this is, if any. */
  proxyByToken(token: string | undefined): LocalService | undefined {
    return token ? this.byProxyToken.get(token) : undefined;
  }

  /** `GET /v1/agent/services`: AgentService objects by ID, filtered by `service:read`. */
  listServices(authz: Authorizer): Record<string, unknown> {
    // Keyed by the IDs users chose, and looked up by request paths: no prototype (issue 33 finding 8).
    const out: Record<string, unknown> = Object.create(null);
    const node = this.deps.store.catalogNode(this.deps.node).value;
    for (const [id, s] of [...this.services_].sort(([a], [b]) => byId(a, b))) {
      if (!authz.serviceRead(s.service.Service)) continue;
      out[id] = agentServiceOut(s, node?.Services[id]);
    }
    return out;
  }

  /**
   * Call `fn` after each change to this agent's services or to the set of its checks (not their
   * results); returns cancel(). Consul's local.Notify: managed proxies and hash-blocking reads follow it.
   */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  // ---- services ----

  /**
   * Consul's `AddService(service, chkTypes, persist, token, source)`. `persist` is true for a
   * registration through the HTTP API (Consul's remote source) and false for one from the config
   * files or the data dir (its local source); script checks are judged so. `token` is the one it
   * was registered with ('' for none), which its managed proxy acts with (`serviceToken`); not
   * given, the service keeps what it had (the config files and the data dir carry none).
   */
  async addService(def: ServiceDefinition, authz: Authorizer, options: AddServiceOptions = {}): Promise<void> {
    const { persist = true, token, start = new Map<string, StartState>(), local = false } = options;
    const mainId = def.ID || def.Name || '';
    const refusal = scriptChecksRefusal(this.serviceCheckDefinitions(def), persist ? 'remote' : 'local', this.deps.scripts);
    if (refusal) throw badRequest(refusal);
    const before = this.family(mainId);
    const paused = await this.pause((t) => t.origin === 'service' && before.has(t.spec.ServiceID));
    let ok = false;
    try {
      await this.putServices(def, authz, { catalog: !local });
      ok = true;
    } finally {
      for (const id of this.family(mainId)) {
        const s = this.services_.get(id)!;
        for (const spec of s.checks) {
          const initial: StartState = { status: spec.Status, output: '' };
          if (ok) {
            const from = start.get(spec.CheckID);
            // putServices wrote the definition's status; a restored output still has to follow.
            // (Loaded locally, the row is written by publish(), which tells the sync what it wrote.)
            this.track(spec, 'service', from ?? initial, from && from.output !== '' ? undefined : initial, local);
          } else {
            const was = paused.get(spec.CheckID);
            this.track(spec, 'service', was ?? initial, undefined);
          }
        }
      }
      await this.dropOrphans();
      // A check the new definition no longer has leaves no saved TTL state behind.
      for (const checkId of paused.keys()) if (!this.checks_.has(checkId)) await this.deps.files?.removeCheckState(checkId);
    }
    if (token !== undefined) this.serviceTokens.remember(mainId, token);
    if (persist && this.deps.files) await this.deps.files.saveService(mainId, def);
  }

  /** The token service `id` was registered with through the HTTP API (Consul's State.ServiceToken); undefined: none known. */
  serviceToken(id: string): string | undefined {
    return this.serviceTokens.get(id);
  }

  /** false when the agent has no such service. */
  async removeService(id: string, authz: Authorizer): Promise<boolean> {
    const s = this.services_.get(id);
    if (!s) return false;
    if (!authz.serviceWrite(s.service.Service)) throw forbidden();
    const family = this.family(id);
    const gone = await this.pause((t) => family.has(t.spec.ServiceID));
    for (const child of [...this.services_.values()]) if (child.parentId === id) await this.dropService(child.service.ID);
    await this.dropService(id);
    this.serviceTokens.forget(id);
    this.changed();
    await this.dropOrphans();
    await this.deps.files?.removeService(id);
    // The catalog dropped the service's checks with it: so do the files (definitions, TTL states).
    for (const checkId of gone.keys()) await this.deps.files?.removeCheck(checkId);
    // Its maintenance check went from the catalog with it; a restart must not bring it back.
    for (const sid of family) await this.deps.files?.removeMaintenance(serviceMaintenanceId(sid));
    return true;
  }

  // ---- checks ----

  /** `persist`: as for addService (true: the HTTP API, false: config files and the data dir). */
  async addCheck(def: AgentCheckDefinition, authz: Authorizer, persist = true, start?: StartState, local = false): Promise<void> {
    const spec = this.checkOf(def);
    const refusal = scriptChecksRefusal([def], persist ? 'remote' : 'local', this.deps.scripts);
    const service = spec.ServiceID ? this.services_.get(spec.ServiceID) : undefined;
    // As Consul: a check on an unknown service needs node:write, then fails on the missing service.
    this.authorize(authz, service?.service.Service ?? '');
    const existing = this.checks_.get(spec.CheckID);
    if (existing) this.authorize(authz, this.serviceNameOf(existing.spec));
    if (spec.ServiceID && !service) throw badRequest(`ServiceID ${JSON.stringify(spec.ServiceID)} does not exist`);
    // After the ACL and service checks, as Consul (its addCheck judges scripts last).
    if (refusal) throw badRequest(refusal);
    await this.pause((t) => t.spec.CheckID === spec.CheckID);
    const state: StartState = start ?? { status: spec.Status, output: '' };
    if (local) {
      // The check sync writes its row once the node is in the catalog (publish()).
      this.track(spec, 'check', state, undefined, true);
    } else {
      await this.deps.apply({
        type: 'catalog.register',
        req: { Node: this.deps.node, SkipNodeUpdate: true, Check: catalogCheckOf(spec, this.deps.node, state.status, state.output) },
      });
      this.track(spec, 'check', state, state);
    }
    this.changed();
    if (persist && this.deps.files) await this.deps.files.saveCheck(spec.CheckID, def);
  }

  async removeCheck(id: string, authz: Authorizer): Promise<void> {
    const t = this.known(id);
    if (!t) return;
    this.authorize(authz, this.serviceNameOf(t.spec));
    await this.pause((c) => c.spec.CheckID === id);
    await this.deps.apply({ type: 'catalog.deregister', req: { Node: this.deps.node, CheckID: id } });
    this.changed();
    await this.deps.files?.removeCheck(id);
  }

  /** pass/warn/fail/update: set a TTL check's status and output, and restart its countdown. */
  async updateTtl(id: string, status: CheckStatus, output: string, authz: Authorizer): Promise<void> {
    const t = this.known(id);
    if (t) this.authorize(authz, this.serviceNameOf(t.spec));
    if (!t || t.spec.kind.type !== 'ttl') throw badRequest(`CheckID ${JSON.stringify(id)} does not have associated TTL`);
    const capped = capOutput(output);
    (t.runner as TtlTimer).refresh();
    // The caller reads its own write: answer once a status change is in the catalog.
    await Promise.all([
      this.setResult(t, status, capped),
      this.deps.files?.saveCheckState({ CheckID: id, Status: status, Output: capped, Expires: Date.now() + t.spec.kind.ttlMs }),
    ]);
  }

  /**
   * `GET /v1/agent/checks`: CheckID → HealthCheck, only what the token may read. Maintenance checks
   * (maintenance.ts) are part of the agent's local state in Consul, so they are listed too,
   * as the catalog holds them.
   */
  listChecks(authz: Authorizer): Record<string, unknown> {
    return agentChecksOut({
      node: this.deps.node,
      tracked: this.checks_,
      rows: this.deps.store.healthNode(this.deps.node).value,
      service: (id) => this.services_.get(id),
      authz,
    });
  }


  // ---- start and stop ----

  /**
   * Bring back what this agent had: services and checks from its config, then those persisted in
   * the data dir (a persisted one with the same ID as a config one is skipped). They enter the
   * agent's own state here, before its HTTP API listens, as Consul loads them before it serves: the
   * first /v1/agent/services after a restart lists them. Nothing is written to the catalog yet (the
   * node may not be there, or no leader known); `restored` settles once publish() has.
   */
  async load(config: { services: ServiceDefinition[]; checks: AgentCheckDefinition[] }): Promise<void> {
    const files = this.deps.files;
    const persistedServices = files ? await files.loadServices() : [];
    const persistedChecks = files ? await files.loadChecks() : [];
    if (config.services.length + config.checks.length + persistedServices.length + persistedChecks.length === 0) return;
    // Results of the loaded checks wait for publish().
    this.sync.hold();
    const all = Authorizer.allowAll();
    const serviceId = (d: ServiceDefinition) => d.ID || d.Name || '';
    const checkId = (d: AgentCheckDefinition) => d.CheckID || d.ID || d.Name || '';
    // What this agent wrote itself may no longer load (an older version's rules, a hand edit): each
    // such file is skipped and set aside with the reason, and the start goes on (issue 31).
    const setAside = (p: Persisted<unknown>, what: string, err: unknown) => files?.setAside(p.file, `${what}: ${err instanceof Error ? err.message : String(err)}`);
    const loadable = async <T>(kind: string, persisted: Persisted<T>[], idOf: (d: T) => string, valid: (d: T) => T): Promise<Persisted<T>[]> => {
      const out: Persisted<T>[] = [];
      for (const p of persisted) {
        try {
          out.push({ file: p.file, def: valid(p.def) });
        } catch (err) {
          await setAside(p, `${kind} ${JSON.stringify(idOf(p.def))}`, err);
        }
      }
      return out;
    };
    const configServiceIds = new Set(config.services.map(serviceId));
    const ownServices = await loadable('service', persistedServices.filter((p) => !configServiceIds.has(serviceId(p.def))), serviceId, validServiceDefinition);
    for (const { def, file } of [...config.services.map((def) => ({ def, file: undefined })), ...ownServices]) {
      await this.loading(`service ${serviceId(def)}`, async () => {
        const start = await restoredStates(this.restoreSources, this.serviceCheckSpecs(def));
        await this.addService(withStatuses(def, start), all, { persist: false, start, local: true });
      }, file === undefined ? undefined : (err) => setAside({ file, def }, `service ${JSON.stringify(serviceId(def))}`, err));
    }
    const configCheckIds = new Set(config.checks.map(checkId));
    const ownChecks = await loadable('check', persistedChecks.filter((p) => !configCheckIds.has(checkId(p.def))), checkId, validCheckDefinition);
    for (const { def, file } of [...config.checks.map((def) => ({ def, file: undefined })), ...ownChecks]) {
      await this.loading(`check ${checkId(def)}`, async () => {
        const start = (await restoredStates(this.restoreSources, [this.checkOf(def)])).values().next().value;
        await this.addCheck(def, all, false, start, true);
      }, file === undefined ? undefined : (err) => setAside({ file, def }, `check ${JSON.stringify(checkId(def))}`, err));
    }
    this.restored = this.publish().catch((err: Error) => this.deps.logger.error({ err: err.message }, 'restoring agent services and checks failed'));
  }

  /**
   * The catalog side of load(), in the background: once the agent's node is in the catalog, each
   * loaded service is written with its checks' current states, then the check sync writes the
   * rest (node checks, results since). A write that fails for want of a leader is retried.
   */
  private async publish(): Promise<void> {
    try {
      await this.publishLoaded();
    } finally {
      // Whatever happened to the services' writes, check results flow again.
      this.sync.release();
    }
  }

  private async publishLoaded(): Promise<void> {
    while (!this.stopped && !this.deps.store.catalogNode(this.deps.node).value) await sleep(100);
    if (this.stopped) return;
    // An HTTP/TCP check resumes with the catalog's last result until its first probe answers
    // (a client's view of the catalog only now has the rows).
    const rows = new Map(this.deps.store.healthNode(this.deps.node).value.map((c) => [c.CheckID, c]));
    for (const t of this.checks_.values()) {
      if (!t.restored || t.reported || t.spec.kind.type === 'ttl') continue;
      const row = rows.get(t.spec.CheckID);
      if (row && isCheckStatus(row.Status)) this.setResult(t, row.Status, row.Output).catch(() => undefined);
    }
    const node = this.deps.node;
    for (const s of this.services()) {
      const id = s.service.ID;
      await this.retrying(`service ${id}`, async () => {
        const now = this.services_.get(id);
        if (!now) return; // deregistered meanwhile
        const checks = now.checks.map((spec) => {
          const t = this.checks_.get(spec.CheckID);
          return { spec, state: t ? { status: t.status, output: t.output } : { status: spec.Status, output: '' } };
        });
        await this.deps.apply({ type: 'catalog.register', req: { ...registerRequestOf(now, node), Checks: checks.map((c) => catalogCheckOf(c.spec, node, c.state.status, c.state.output)) } });
        for (const c of checks) this.sync.markSynced(c.spec.CheckID, c.state);
      });
    }
  }

  stop(): void {
    this.stopped = true;
    this.localAliases.stop();
    for (const t of this.checks_.values()) this.halt(t);
    this.checks_.clear();
    this.sync.stop();
  }

  // ---- inside ----

  /**
   * The services one registration makes (the service, its sidecar or managed proxy), checked
   * against the caller's rights, written to the catalog (unless `catalog` is false: a restart's
   * restore, before the node is in the catalog; publish() writes them later), and then held here;
   * a sidecar or managed proxy the new definition no longer has goes.
   */
  private async putServices(def: ServiceDefinition, authz: Authorizer, opts: { catalog: boolean }): Promise<void> {
    const made = servicesFromDefinition(def, this.services_, this.deps.registerPolicy());
    for (const s of made) {
      if (!authz.serviceWrite(s.service.Service)) throw forbidden();
      const dest = s.service.Proxy?.DestinationServiceName;
      if (s.service.Kind === CONNECT_PROXY && dest && !authz.serviceWrite(dest)) throw forbidden();
    }
    const mainId = made[0]!.service.ID;
    // The agent syncs with its own authority (Consul's agent token), once the caller's rights are checked.
    if (opts.catalog) for (const s of made) await this.deps.apply({ type: 'catalog.register', req: registerRequestOf(s, this.deps.node) });
    const keep = new Set(made.map((s) => s.service.ID));
    for (const old of [...this.services_.values()]) {
      if (old.parentId === mainId && !keep.has(old.service.ID)) await this.dropService(old.service.ID);
    }
    for (const s of made) this.putService(s);
    this.changed();
  }

  private async dropService(id: string): Promise<void> {
    await this.deps.apply({ type: 'catalog.deregister', req: { Node: this.deps.node, ServiceID: id } });
    this.forgetProxyToken(id);
    this.services_.delete(id);
  }

  /** The one write of the service map besides dropService: keeps the proxy-token index beside it. */
  private putService(s: LocalService): void {
    this.forgetProxyToken(s.service.ID);
    this.services_.set(s.service.ID, s);
    if (s.managed) this.byProxyToken.set(s.managed.token, s);
  }

  private forgetProxyToken(id: string): void {
    const token = this.services_.get(id)?.managed?.token;
    if (token !== undefined) this.byProxyToken.delete(token);
  }

  /** Tell the followers (onChange); one that throws is logged and does not stop the others. */
  private changed(): void {
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch (err) {
        this.deps.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'a follower of the local state failed on a change');
      }
    }
  }

  /** Where a restarted check's state comes from (restored-states.ts). */
  private get restoreSources() {
    return { files: this.deps.files, rows: () => this.deps.store.healthNode(this.deps.node).value };
  }

  private checkOf(def: AgentCheckDefinition): CheckSpec {
    return standaloneCheckSpec(def);
  }

  /** The check definitions inside a service definition, its sidecar's included. */
  private serviceCheckDefinitions(def: ServiceDefinition): AgentCheckDefinition[] {
    const sidecar = def.Connect?.SidecarService;
    return [def.Check, ...(def.Checks ?? []), sidecar?.Check, ...(sidecar?.Checks ?? [])].filter((c): c is AgentCheckDefinition => Boolean(c));
  }

  /** The checks a service definition makes (main service only), without registering anything. */
  private serviceCheckSpecs(def: ServiceDefinition): CheckSpec[] {
    try {
      return servicesFromDefinition(def, new Map(), { allowManagedApiRegistration: true })[0]?.checks ?? [];
    } catch {
      return []; // registration will report the problem
    }
  }

  /** One definition of load(): a refused one is logged and handed to `refused`; the start goes on. */
  private async loading(what: string, attempt: () => Promise<void>, refused?: (err: unknown) => Promise<void> | undefined): Promise<void> {
    try {
      await attempt();
    } catch (err) {
      if (isClientError(err)) {
        this.deps.logger.error({ what, err: (err as Error).message }, 'could not restore agent state: the definition is refused');
        await refused?.(err);
        return;
      }
      this.deps.failures.failed('restore', what, err);
    }
  }

  /** `refused` is told when the definition itself is refused (a client error), not when the cluster is away. */
  private async retrying(what: string, attempt: () => Promise<void>, refused?: (err: unknown) => Promise<void> | undefined): Promise<void> {
    for (let tries = 1; !this.stopped; tries++) {
      try {
        await attempt();
        return;
      } catch (err) {
        if (isClientError(err)) {
          this.deps.logger.error({ what, err: (err as Error).message }, 'could not restore agent state: the definition is refused');
          await refused?.(err);
          return;
        }
        if (tries >= 30) {
          this.deps.failures.failed('restore', what, err);
          return;
        }
        await sleep(RETRY_MS);
      }
    }
  }

  private authorize(authz: Authorizer, serviceName: string): void {
    const ok = serviceName ? authz.serviceWrite(serviceName) : authz.nodeWrite(this.deps.node);
    if (!ok) throw forbidden();
  }

  private serviceNameOf(spec: CheckSpec): string {
    return spec.ServiceID ? (this.services_.get(spec.ServiceID)?.service.Service ?? '') : '';
  }

  /** A check this agent runs; unknown → undefined, or 400 `Unknown check` with ACLs on (Consul). */
  private known(id: string): Tracked | undefined {
    const t = this.checks_.get(id);
    if (!t && this.deps.aclsEnabled) throw badRequest(`Unknown check ${JSON.stringify(id)}`);
    return t;
  }

  /** The local service `id` and those derived from it (sidecar, managed proxy). */
  private family(id: string): Set<string> {
    const out = new Set<string>();
    for (const [sid, s] of [...this.services_].sort(([a], [b]) => byId(a, b))) {
      if (sid === id || s.parentId === id) out.add(sid);
    }
    return out;
  }

  private track(spec: CheckSpec, origin: Origin, state: StartState, synced: CheckState | undefined, restored = false): void {
    const old = this.checks_.get(spec.CheckID);
    if (old) this.halt(old);
    const t: Tracked = { spec, origin, status: state.status, output: state.output, runner: { stop() {} }, criticalTimer: undefined, restored, reported: false };
    this.checks_.set(spec.CheckID, t);
    this.sync.track(spec, { status: state.status, output: state.output }, synced);
    const kind = spec.kind;
    const failed = (err: unknown) => this.deps.failures.failed('check', spec.CheckID, err);
    if (kind.type === 'alias') {
      const alias = { node: kind.node, serviceId: kind.serviceId, selfId: spec.CheckID };
      if (kind.node === '') {
        t.runner = this.localAliases.add(spec.CheckID, t);
      } else {
        t.runner = startRemoteAlias(alias, this.deps.nodeChecks, (r) => this.runnerResult(t, r.status, r.output));
        this.localAliases.changed(null);
      }
    } else if (kind.type === 'ttl') {
      t.runner = startTtlTimer(kind.ttlMs, () => this.runnerResult(t, 'critical', TTL_EXPIRED), failed, state.ttlLeftMs ?? kind.ttlMs);
    } else {
      t.runner = startProbeRunner(kind, { intervalMinMs: this.deps.floors.intervalMinMs, limiter: this.limiter, failed }, (r) => this.runnerResult(t, r.status, r.output));
    }
    this.watchCritical(t);
  }

  /** Record a result; resolves when the catalog has it (see CatalogSync.set). */
  private setResult(t: Tracked, status: CheckStatus, output: string): Promise<void> {
    if (this.checks_.get(t.spec.CheckID) !== t) return Promise.resolve(); // replaced or removed meanwhile
    if (t.status !== status || t.output !== output) this.localAliases.changed(t.spec.ServiceID);
    t.status = status;
    t.output = output;
    const written = this.sync.set(t.spec.CheckID, { status, output });
    this.watchCritical(t);
    return written;
  }

  /** A runner's result: nobody waits for it, and a failed write is retried by the sync anyway. */
  private runnerResult(t: Tracked, status: CheckStatus, output: string): void {
    t.reported = true;
    this.setResult(t, status, output).catch(() => undefined);
  }

  /** DeregisterCriticalServiceAfter: a service check critical for that long takes its service away. */
  private watchCritical(t: Tracked): void {
    const after = t.spec.deregisterAfterMs;
    if (!after || !t.spec.ServiceID) return;
    if (t.status !== 'critical') {
      t.criticalTimer?.clear();
      t.criticalTimer = undefined;
      return;
    }
    if (t.criticalTimer) return;
    // A long timer: a DeregisterCriticalServiceAfter of "1000h" must not fire after 1 ms.
    t.criticalTimer = setLongTimeout(() => {
      if (this.checks_.get(t.spec.CheckID) !== t || t.status !== 'critical') return;
      this.deps.logger.info({ check: t.spec.CheckID, service: t.spec.ServiceID }, 'check critical too long; deregistering its service');
      this.removeService(t.spec.ServiceID, Authorizer.allowAll()).catch((err: Error) => {
        this.deps.logger.warn({ service: t.spec.ServiceID, err: err.message }, 'deregistering a critical service failed');
        t.criticalTimer = undefined;
        this.watchCritical(t);
      });
    }, Math.max(after, this.deps.floors.deregisterMinMs));
  }

  private halt(t: Tracked): void {
    t.runner.stop();
    t.criticalTimer?.clear();
    this.localAliases.changed(t.spec.ServiceID);
  }

  /** Stop and forget the checks matching `which`, once none of their writes is in flight; returns their last states. */
  private async pause(which: (t: Tracked) => boolean): Promise<Map<string, StartState>> {
    const out = new Map<string, StartState>();
    for (const [id, t] of [...this.checks_]) {
      if (!which(t)) continue;
      this.halt(t);
      this.checks_.delete(id);
      out.set(id, { status: t.status, output: t.output });
      await this.sync.untrack(id);
    }
    return out;
  }

  /** Checks whose service is gone (the catalog dropped them with it) are forgotten here too. */
  private async dropOrphans(): Promise<void> {
    const orphans = await this.pause((t) => t.spec.ServiceID !== '' && !this.services_.has(t.spec.ServiceID));
    for (const id of orphans.keys()) await this.deps.files?.removeCheck(id);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
