// The replicated state machine: applies committed commands, answers reads with their watch keys and
// indexes, wakes blocking queries, and snapshots/restores its whole state.
//
// Why ~710 lines: this is the store's whole public surface — one method per read the endpoints make,
// plus apply, snapshot and restore — each a few lines over the tables and reads in catalog/, kv/,
// sessions/, acl/ and the rest, where the work is done.
import { catalogNode, catalogNodes, catalogService, catalogServices, type NodeMetaQuery, type ServiceQuery } from './catalog/catalog-reads';
import { healthChecks, healthChecksWithId, healthNode, healthService, healthState, type HealthServiceQuery } from './catalog/health-reads';
import { CHECKS, COORDINATES, NODES, SERVICES } from './catalog/keys';
import { txnReadOnly, type FullTxnReply, type TxnOpInput } from './catalog-txn/txn-command';
import type { CatalogNodeOut, CheckServiceNodeOut, HealthCheckOut, NodeOut, ServiceNodeOut } from './catalog/outputs';
import { CommandError, Rejection } from './command-error';
import type { Command } from './commands';
import { estimatedRtt, type Coordinate } from './coordinates/vivaldi';
import { handlerFor } from './fsm/handlers';
import { IndexTable } from './index-table';
import { storeInvariants } from './invariants';
import { queryResult, type QueryResult } from './query-result';
import { decodeSnapshotPieceSteps } from './snapshot';
import { feedPieces, MORE, type PieceRequest } from './snapshot-decode';
import { Fields, runSync } from './snapshot-stream';
import { StoreSnapshot } from './snapshot-handle';
import { State } from './state';
import { readIntoArenas, type ArenaOptions, type RestoreSource } from './snapshot-arenas';
import type { ValueArenas } from './kv/value-arenas';
import { invalidateAfterCatalogChange } from './sessions/invalidation';
import type { RequestStamp } from './requests/request-table';
import { Txn } from './txn';
import { aclTokenRows, aclLegacyInfo, aclLegacyList, aclLookup, aclPolicies, aclPolicy, aclToken, aclTokenBySecret, aclTokens } from './acl/acl-reads';
import type { ReplicatedToken } from './acl/commands';
import type { LegacyAclOut, PolicyListEntry, PolicyOut, TokenListEntry, TokenOut } from './acl/records';
import type { TokenLookup } from '@registry/acl';
import { intentionGet, intentionList, intentionMatch, type MatchEntry } from './intentions/intention-reads';
import type { MatchSide } from './intentions/intention-table';
import type { IntentionOut } from './intentions/records';
import { caConfig, caRoots } from './ca/ca-reads';
import type { CaConfigOut, CaConfigRecord, CaRootsOut, StoredRoot } from './ca/records';
import { fireAll, rethrowLater, WatchRegistry } from './watch-registry';
import { sessionInfo, sessionList, sessionsOfNode } from './sessions/session-reads';
import type { SessionRecord } from './sessions/session-records';
import { kvGet, kvKeys, kvList } from './kv/kv-reads';
import { kvRecurse } from './kv/kv-listing';
import type { KvEntry, KvEntryOut } from './kv/kv-records';
import { KVS, kvPrefixWatchKey } from './kv/kv-keys';
import { evaluateTxn, type TxnReply } from './kv/kv-commands';
import { kvEntryOut } from './kv/kv-records';
import type { KvOp } from './kv/kv-ops';
import { queryGet, queryList, resolveQuery, type Resolution } from './queries/query-reads';
import type { QueryRecord } from './queries/query-records';
import { areaGet, areaList, areaServerList } from './areas/area-reads';
import type { AreaOut, AreaServers } from './areas/area-records';
import { eventList } from './events/event-reads';
import type { EventOut } from './events/event-records';
import { autopilotConfig } from './autopilot/autopilot-reads';
import type { AutopilotRecord } from './autopilot/autopilot-records';
import { monotonicMs } from './monotonic-clock';
import { ListingBuilds, type Settled, type StepLane } from './catalog/listing-steps';

export interface StoreOptions {
  /** Stamped on every node registered here. Default "dc1". */
  datacenter?: string;
  /** Where an error thrown by a watch callback goes; by default it is rethrown on a microtask. */
  onWatcherError?: (err: unknown) => void;
  /** Monotonic clock in ms (KV lock-delays); tests pass a fake one. Default monotonicMs. */
  now?: () => number;
  /**
   * Where the steps of a large listing's first build take turns (catalog/listing-steps.ts): the
   * agent passes the lane of its large answers (server http/slice-lane.ts), so that both share one
   * part of the event loop. Default: one event-loop turn between steps.
   */
  listingLane?: StepLane;
  /** Event-loop time one build step may take, ms. Default 2 (one slice of a large answer). */
  listingStepMs?: number;
}

/** The array of a snapshot whose binary values may stay views into a restore's arenas: KV values. */
const KV_VALUES_PATH = 'state.kv.entries';
/** How much of a restore arena's values evacuateArenas() copies per turn: a couple of ms. */
const EVACUATE_BYTES_PER_TURN = 4 << 20;

/** A restore's state, decoded and loaded, waiting to be swapped in. */
interface PreparedRestore {
  state: State;
  indexes: IndexTable;
  lastIndex: number;
}

export interface NodeCoordinate {
  Node: string;
  Segment: string;
  Coord: Coordinate;
}

export class Store {
  readonly datacenter: string;
  private state: State;
  private indexes: IndexTable;
  private last = 0;
  /** Size of the last snapshot serialised: the next one is written into a buffer about that big. */
  private snapshotSize = 0;
  private readonly watches = new WatchRegistry();
  /** Restores prepared ahead of their Raft entry, and those being prepared (prepareRestore). */
  private readonly prepared = new Map<string, PreparedRestore>();
  private readonly preparing = new Map<string, Promise<void>>();
  /** Whether evacuateArenas() has a step scheduled. */
  private evacuating = false;
  private readonly onWatcherError: (err: unknown) => void;
  private readonly now: () => number;
  /** Large listings' first builds in steps, and which reads wait for them (tryRead). */
  private readonly builds: ListingBuilds;

  constructor(opts: StoreOptions = {}) {
    this.datacenter = opts.datacenter ?? 'dc1';
    this.onWatcherError = opts.onWatcherError ?? rethrowLater;
    this.now = opts.now ?? monotonicMs;
    this.builds = new ListingBuilds(opts.listingLane, opts.listingStepMs);
    this.state = new State(this.datacenter);
    this.indexes = this.newIndexTable([]);
    this.tendArenas();
  }

  /**
   * `read` (which reads this store) as a read that can wait: its value, or { pending } when a large
   * listing it needs is being built in steps — then read again once `pending` resolves; what it
   * made meanwhile is dropped (catalog/listing-steps.ts). Reads made outside tryRead finish such a
   * build at once. The server's read policy reads through here (rpc/settled-read.ts).
   */
  tryRead<T>(read: () => T): Settled<T> {
    return this.builds.tryRead(read);
  }

  /** Highest Raft index applied (0 for a new store). */
  get lastIndex(): number {
    return this.last;
  }

  /**
   * Apply one committed command at Raft index `index` (which must exceed lastIndex). Deterministic and
   * never throws for bad input: a refused command returns a CommandError and changes nothing; an
   * accepted one returns its result (true for catalog writes). Watchers of the keys it changed are
   * fired after the state is fully updated.
   */
  apply(index: number, cmd: Command, request?: RequestStamp): unknown {
    if (!Number.isSafeInteger(index) || index < 1) return new CommandError(`invalid Raft index ${String(index)}`);
    if (index <= this.last) return new CommandError(`Raft index ${index} is not after the last applied index ${this.last}`);
    this.last = index;
    if (!request) return this.applyCommand(index, cmd);
    // A request already in the window was committed twice (re-sent across a leader change):
    // answer what its first copy answered and change nothing.
    if (request.resent) {
      const seen = this.state.requests.get(request.id);
      if (seen) return seen.result;
    }
    const result = this.applyCommand(index, cmd);
    this.state.requests.record(request, index, result);
    return result;
  }

  /**
   * The latest stamp of a request this state machine has applied (0 when none): the log's time,
   * which the next leader's stamps continue (server rpc/log-clock.ts).
   */
  latestRequestStamp(): number {
    return this.state.requests.latestStamp;
  }

  /**
   * The log's time now as this server can tell it: the latest stamp it has applied, advanced by its
   * own monotonic clock since it applied it (0 while no stamp exists). Servers compare these to
   * measure how long a forwarded write was on its way without comparing wall clocks.
   */
  logTimeNow(): number {
    return this.state.requests.logTimeNow();
  }

  /**
   * The result `request` was applied with while it is in the dedup window (requests/request-table.ts),
   * else undefined. A leader answers a re-sent write from here without proposing it again.
   */
  appliedRequest(id: string): { result: unknown } | undefined {
    const seen = this.state.requests.get(id);
    return seen && { result: seen.result };
  }

  private applyCommand(index: number, cmd: Command): unknown {
    const type = (cmd as { type?: unknown } | null | undefined)?.type;
    if (type === 'snapshot.restore') return this.applyRestore(index, cmd as Extract<Command, { type: 'snapshot.restore' }>);
    const handler = handlerFor(type);
    if (!handler) return new CommandError(`unknown command type ${JSON.stringify(type) ?? 'undefined'}`);
    let verdict: ReturnType<typeof handler>;
    try {
      verdict = handler(this.state, cmd);
    } catch (err) {
      return new CommandError(err instanceof Rejection ? err.message : `invalid command: ${String(err)}`);
    }
    if (verdict instanceof CommandError) return verdict;
    const txn = new Txn(index, this.now());
    const result = verdict(txn);
    // Rules that follow any write, inside the same apply: sessions whose node or checks went away or
    // turned critical are invalidated (consul-behaviour §3.3).
    invalidateAfterCatalogChange(this.state, txn);
    for (const key of txn.bumped) {
      if (this.state.keepsIndexEntry(key)) this.indexes.set(key, index);
      else this.indexes.delete(key);
    }
    fireAll(this.watches.take(txn.bumped), this.onWatcherError);
    return result;
  }

  /**
   * A point-in-time handle on the whole state (hashicorp/raft's FSMSnapshot), cheap to take on the
   * apply path: `persist()` serialises the state as of now — index table and lastIndex included — in
   * slices of a few ms while later commands are applied (snapshot-handle.ts says how). `release()` it
   * when done with it: until it has persisted or been released, the store keeps pre-images for it.
   */
  openSnapshot(): StoreSnapshot {
    const state = this.state.capture();
    const tree = new Fields([
      ['version', 1],
      ['lastIndex', this.last],
      ['indexes', this.indexes.capture()],
      ['state', state.value],
    ]);
    return new StoreSnapshot(this.last, tree, state.release, this.snapshotSize, (bytes) => (this.snapshotSize = bytes));
  }

  /** The whole state, including the index table and lastIndex, serialised now (blocking meanwhile). */
  snapshot(): Uint8Array {
    const handle = this.openSnapshot();
    try {
      return handle.bytes();
    } finally {
      handle.release();
    }
  }

  /**
   * Replace the whole state by a snapshot's and wake every watcher (indexes may move backwards).
   * Throws, leaving the store as it was, when the bytes are not a snapshot.
   */
  restore(data: Uint8Array): void {
    const ready = runSync(this.restoreSteps(data));
    this.state = ready.state;
    this.indexes = ready.indexes;
    this.last = ready.lastIndex;
    this.tendArenas();
    fireAll(this.watches.takeAll(), this.onWatcherError);
  }

  /** Runs `load` once per key and keeps what it makes under `key` until an entry takes it or it is discarded. */
  private prepareUnder(key: string, load: (stop: () => Error | null) => Promise<PreparedRestore>): Promise<void> {
    if (this.prepared.has(key)) return Promise.resolve();
    const running = this.preparing.get(key);
    if (running) return running;
    // Stops at its next slice once discarded (or taken by its entry meanwhile): no work for nothing.
    const stop = () => (this.preparing.get(key) === work ? null : new Error('restore preparation discarded'));
    const work: Promise<void> = load(stop).then(
      (value) => {
        // Taken or discarded meanwhile: the entry was applied without it, or nobody wants it.
        if (this.preparing.get(key) !== work) return;
        this.prepared.set(key, value);
        this.preparing.delete(key);
      },
      (err: unknown) => {
        if (this.preparing.get(key) === work) this.preparing.delete(key);
        throw err;
      },
    );
    this.preparing.set(key, work);
    return work;
  }

  /** Forget a prepared restore (or one being prepared) no entry took. */
  discardPrepared(key: string): void {
    this.prepared.delete(key);
    this.preparing.delete(key);
  }

  /** Whether a restore is prepared under `key` (ready to be swapped in). */
  hasPrepared(key: string): boolean {
    return this.prepared.has(key);
  }

  /**
   * restore() from the snapshot's pieces in order (their concatenation is the snapshot's bytes),
   * read one at a time through `source` — Raft's stored snapshot on a restart, or the pieces of an
   * installed one. Each piece is decoded into the new tables and let go before the next is read, so
   * the bytes are never whole in memory, nor kept alive by the values decoded from them (issue #34).
   * The work runs in slices of about `sliceMs` that yield to the event loop; the current state stays
   * readable until the new one is swapped in at the end. `afterStep` runs after every step (a few
   * hundred items), before a yield and before the read of the next piece: the agent keeps V8's young
   * generation small there (young-generation.ts). A step's allocation is bounded where a slice's is
   * not: a slice is time, and a 4 ms slice allocated 1.5–3.6 MB on a slow VM.
   * Rejects, leaving the store as it was, when the bytes are not a snapshot.
   */
  async restoreFrom(source: RestoreSource, opts: { sliceMs?: number; afterStep?: () => void } & ArenaOptions = {}): Promise<void> {
    const ready = await this.loadFrom(source, opts);
    this.state = ready.state;
    this.indexes = ready.indexes;
    this.last = ready.lastIndex;
    this.tendArenas();
    fireAll(this.watches.takeAll(), this.onWatcherError);
  }

  /**
   * Decode and load the state of a staged `snapshot.restore` ahead of its Raft entry from the staged
   * file's pieces (restoreFrom's way: read into arenas, decoded a piece at a time in slices of a few
   * ms between other work), and keep it under `key` (the command's `staged`): applying the entry then
   * only swaps it in, instead of rebuilding the whole state in one stall, and neither the file's
   * bytes nor a copy of them are ever whole in memory beside the state they replace. The caller
   * vouches that `key` names exactly these bytes (their SHA-256): every server must end with the same
   * state. Rejects, keeping nothing, when the bytes are not a snapshot. Nothing visible changes until
   * the entry is applied; a prepared state no entry takes stays until discardPrepared(key).
   */
  prepareRestoreFrom(key: string, source: RestoreSource, opts: { sliceMs?: number; afterStep?: () => void } & ArenaOptions = {}): Promise<void> {
    return this.prepareUnder(key, (stop) => this.loadFrom(source, { ...opts, stop }));
  }

  /** restoreFrom()'s decoding, up to the state ready to swap in; `stop` ends it early (with its error). */
  private async loadFrom(source: RestoreSource, opts: { sliceMs?: number; afterStep?: () => void; stop?: () => Error | null } & ArenaOptions): Promise<PreparedRestore> {
    const sliceMs = opts.sliceMs ?? 4;
    // A large stored snapshot is read into arenas its KV values stay in (kv/value-arenas.ts).
    const inArenas = readIntoArenas(source, opts);
    const steps = this.restorePieceSteps(inArenas?.arenas);
    let next = 0;
    const nextPiece = inArenas ? inArenas.next : async () => (next < source.chunks ? source.read(next++) : undefined);
    let sliceStart = performance.now();
    let r = steps.next();
    while (!r.done) {
      opts.afterStep?.();
      if (r.value === MORE) {
        // Reading the next piece yields to the event loop: a slice ends here too.
        r = steps.next(await nextPiece());
        sliceStart = performance.now();
        continue;
      }
      if (performance.now() - sliceStart >= sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const stopped = opts.stop?.();
        if (stopped) throw stopped;
        sliceStart = performance.now();
      }
      r = steps.next();
    }
    return r.value;
  }

  /** The arenas the KV table (new, or swapped in) holds values in: copied out of once they hold too little. */
  private tendArenas(): void {
    this.state.kv.tendArenas(() => this.evacuateArenas());
    this.evacuateArenas();
  }

  /**
   * Copies KV values out of arenas that hold too little (kv/value-arenas.ts), a few MiB per
   * turn of the event loop, until none is due. Not replicated and changes no data: only where
   * the bytes live.
   */
  private evacuateArenas(): void {
    if (this.evacuating) return;
    this.evacuating = true;
    const step = (): void => {
      if (this.state.kv.evacuateArenas(EVACUATE_BYTES_PER_TURN)) {
        setTimeout(step, 1).unref();
      } else {
        this.evacuating = false;
      }
    };
    setTimeout(step, 1).unref();
  }

  /** What of the restore arenas the KV table still holds (kv/value-arenas.ts). */
  kvArenasHeld(): { arenas: number; bytes: number; liveBytes: number } {
    return this.state.kv.arenasHeld();
  }

  /** What of the arenas written values were copied into the KV table still holds (kv/value-arenas.ts). */
  kvWriteArenasHeld(): { arenas: number; bytes: number; liveBytes: number } {
    return this.state.kv.arenasHeld('written');
  }

  /** The bytes of a snapshot turned into a state and its index table, a step at a time. */
  private restoreSteps(data: Uint8Array): Generator<void, PreparedRestore, void> {
    return feedPieces(this.restorePieceSteps(), [data]);
  }

  /** restoreSteps() over bytes handed in a piece at a time (MORE asks for the next: snapshot-decode.ts). */
  private *restorePieceSteps(arenas?: ValueArenas): Generator<PieceRequest, PreparedRestore, Uint8Array | undefined> {
    const snap = yield* decodeSnapshotPieceSteps(arenas ? { viewsAt: KV_VALUES_PATH } : {});
    yield;
    const state = yield* asPieceSteps(State.loadSteps(this.datacenter, snap.state, arenas));
    yield;
    const indexes = this.newIndexTable([]);
    let done = 0;
    for (const [key, index] of snap.indexes) {
      indexes.load(key, index);
      if (++done % 8192 === 0) yield;
    }
    return { state, indexes, lastIndex: snap.lastIndex };
  }

  /**
   * A restore committed through Raft (PUT /v1/snapshot): the saved state and its modify indexes
   * replace the current ones on every server alike, while lastIndex stays this entry's Raft index
   * (the log goes on from here; only the data goes back). Bytes that do not decode refuse the
   * command and change nothing. Every watcher wakes, as Consul's restore abandons its watches.
   */
  private applyRestore(index: number, cmd: Extract<Command, { type: 'snapshot.restore' }>): unknown {
    let ready: PreparedRestore | undefined;
    if ('staged' in cmd) {
      // A staged restore is prepared before its entry is applied (the agent's state machine waits
      // for it: server/snapshot/restore-staging.ts); the bytes were decoded by the server that
      // proposed it, so every server decodes them alike.
      ready = this.prepared.get(cmd.staged);
      this.discardPrepared(cmd.staged);
      if (!ready) return new CommandError(`snapshot restore refused: the staged state ${cmd.staged} is not loaded here`);
    } else {
      const key = typeof cmd.prepared === 'string' ? cmd.prepared : undefined;
      ready = key === undefined ? undefined : this.prepared.get(key);
      if (key !== undefined) this.discardPrepared(key);
      // Not prepared here (yet): the same steps, run now. Both ways give the state of these bytes.
      if (!ready) {
        try {
          if (!(cmd.state instanceof Uint8Array)) throw new Error('no state bytes');
          ready = runSync(this.restoreSteps(cmd.state));
        } catch (err) {
          return new CommandError(`snapshot restore refused: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    this.state = ready.state;
    this.indexes = ready.indexes;
    this.tendArenas();
    // Reads answer at least this entry's index from now on (Store.readFloor), so the woken watchers
    // (and any client still holding an index from before) return instead of waiting on the older
    // restored indexes.
    this.indexes.raiseFloor(index);
    fireAll(this.watches.takeAll(), this.onWatcherError);
    return true;
  }

  /**
   * Park a one-shot callback until an apply or restore changes any of `keys` (the `keys` of a
   * QueryResult). Returns cancel(). The callback runs after the change is fully applied.
   */
  watch(keys: readonly string[], fire: () => void): () => void {
    return this.watches.add(keys, fire);
  }

  /** Number of parked watchers. */
  get watcherCount(): number {
    return this.watches.size;
  }

  /** The lowest index a read may answer: the Raft index of the last restore, 0 for none (index-table.ts). */
  get readFloor(): number {
    return this.indexes.readFloor;
  }

  /** The index of one watch key (falling back to its table key when the entity is gone or unknown). */
  keyIndex(key: string): number {
    return this.indexes.get(key);
  }

  // ---- catalog reads ----

  catalogNodes(q: NodeMetaQuery = {}): QueryResult<NodeOut[]> {
    return catalogNodes(this.state.catalog, this.indexes, this.builds, q);
  }

  catalogServices(q: NodeMetaQuery = {}): QueryResult<Record<string, string[]>> {
    return catalogServices(this.state.catalog, this.indexes, q);
  }

  catalogService(name: string, q: ServiceQuery = {}): QueryResult<ServiceNodeOut[]> {
    return catalogService(this.state.catalog, this.indexes, this.builds, name, q);
  }

  /** The node (by name, else by node ID) with its services; value null when unknown. */
  catalogNode(name: string): QueryResult<CatalogNodeOut | null> {
    return catalogNode(this.state.catalog, this.indexes, name);
  }

  // ---- health reads ----

  /** Checks of a node given by name or node ID, ordered by check ID. */
  healthNode(name: string): QueryResult<HealthCheckOut[]> {
    return healthNode(this.state.catalog, this.indexes, name);
  }

  healthChecks(service: string, q: NodeMetaQuery = {}): QueryResult<HealthCheckOut[]> {
    return healthChecks(this.state.catalog, this.indexes, service, q);
  }

  healthService(name: string, q: HealthServiceQuery = {}): QueryResult<CheckServiceNodeOut[]> {
    return healthService(this.state.catalog, this.indexes, this.builds, name, q);
  }

  /** Checks with exactly this status ("any" for all); unknown statuses give []. */
  healthState(state: string, q: NodeMetaQuery = {}): QueryResult<HealthCheckOut[]> {
    return healthState(this.state.catalog, this.indexes, this.builds, state, q);
  }

  /**
   * Every node's check with this ID (case-insensitive), ordered by node; costs what the matches do,
   * not the catalog's size (the leader finds its client agents by their serfHealth checks).
   */
  healthChecksWithId(checkId: string): QueryResult<HealthCheckOut[]> {
    return healthChecksWithId(this.state.catalog, this.indexes, checkId);
  }

  // ---- coordinates ----

  coordinate(node: string): Coordinate | undefined {
    return this.state.coordinates.get(node);
  }

  /** Every node's coordinate, ordered by node name (for /v1/coordinate/nodes). */
  coordinateNodes(): QueryResult<NodeCoordinate[]> {
    const value: NodeCoordinate[] = [];
    for (const [key, coord] of this.state.coordinates.all()) {
      const node = this.state.catalog.node(key);
      if (node) value.push({ Node: node.Node, Segment: '', Coord: coord });
    }
    value.sort((a, b) => (a.Node.toLowerCase() < b.Node.toLowerCase() ? -1 : a.Node.toLowerCase() > b.Node.toLowerCase() ? 1 : 0));
    return queryResult(this.indexes, [COORDINATES], value);
  }

  /**
   * Stable sort by estimated RTT from node `from`; items whose node has no (comparable) coordinate go
   * last in their original order. Without a coordinate for `from`, the order is unchanged.
   */
  sortByDistance<T>(from: string, items: readonly T[], nodeOf: (t: T) => string): T[] {
    const origin = this.state.coordinates.get(from);
    if (!origin) return [...items];
    const rttCache = new Map<string, number>();
    const rtt = (node: string): number => {
      let d = rttCache.get(node);
      if (d === undefined) {
        const c = this.state.coordinates.get(node);
        d = (c && estimatedRtt(origin, c)) ?? Number.POSITIVE_INFINITY;
        rttCache.set(node, d);
      }
      return d;
    };
    return items
      .map((item, i) => ({ item, i, d: rtt(nodeOf(item)) }))
      .sort((a, b) => (a.d === b.d ? a.i - b.i : a.d < b.d ? -1 : 1))
      .map((x) => x.item);
  }

  // ---- intentions ----

  /** Every intention in evaluation order (precedence descending, then names). */
  intentionList(): QueryResult<IntentionOut[]> {
    return intentionList(this.state.intentions, this.indexes);
  }

  intentionGet(id: string): QueryResult<IntentionOut | null> {
    return intentionGet(this.state.intentions, this.indexes, id);
  }

  /** For each entry, the intentions whose `side` covers it, in evaluation order. */
  intentionMatch(side: MatchSide, entries: MatchEntry[]): QueryResult<IntentionOut[][]> {
    return intentionMatch(this.state.intentions, this.indexes, side, entries);
  }

  // ---- CA ----

  caRoots(): QueryResult<CaRootsOut> {
    return caRoots(this.state.ca, this.indexes);
  }

  caConfig(): QueryResult<CaConfigOut | null> {
    return caConfig(this.state.ca, this.indexes);
  }

  /** Server-side only: the configuration with the cluster id (null before initialisation). */
  caConfigRecord(): CaConfigRecord | null {
    return this.state.ca.config;
  }

  /** Server-side only: the active root with its private key, for signing on the leader. */
  caSigningRoot(): StoredRoot | undefined {
    return this.state.ca.activeRoot;
  }

  // ---- ACL ----

  aclToken(accessorID: string): QueryResult<TokenOut | null> {
    return aclToken(this.state.acl, this.indexes, accessorID);
  }

  aclTokenBySecret(secret: string): QueryResult<TokenOut | null> {
    return aclTokenBySecret(this.state.acl, this.indexes, secret);
  }

  /** Tokens without secrets; `policy` keeps those linking that policy ID. */
  aclTokens(q: { policy?: string } = {}): QueryResult<TokenListEntry[]> {
    return aclTokens(this.state.acl, this.indexes, q);
  }

  /** Whole token rows for replication (secrets included). */
  aclTokenRows(accessors: readonly string[]): QueryResult<ReplicatedToken[]> {
    return aclTokenRows(this.state.acl, this.indexes, accessors);
  }

  /** Legacy API: the token with that SecretID in the legacy shape, as a list of at most one. */
  aclLegacyInfo(secret: string): QueryResult<LegacyAclOut[]> {
    return aclLegacyInfo(this.state.acl, this.indexes, secret);
  }

  /** Legacy API: every token with a Type. */
  aclLegacyList(): QueryResult<LegacyAclOut[]> {
    return aclLegacyList(this.state.acl, this.indexes);
  }

  aclPolicy(id: string): QueryResult<PolicyOut | null> {
    return aclPolicy(this.state.acl, this.indexes, id);
  }

  aclPolicies(): QueryResult<PolicyListEntry[]> {
    return aclPolicies(this.state.acl, this.indexes);
  }

  /** Raft index of the ACL bootstrap (0 while `PUT /v1/acl/bootstrap` is still allowed). */
  aclBootstrapIndex(): number {
    return this.state.acl.bootstrapIndex;
  }

  /** Live lookups for a TokenResolver (stored rows, not copies: the resolver only reads them). */
  aclLookup(): TokenLookup {
    return aclLookup(() => this.state.acl);
  }

  // ---- sessions ----

  /** The session as a one-element array, or null when unknown. */
  sessionInfo(id: string): QueryResult<SessionRecord[] | null> {
    return sessionInfo(this.state.sessions, this.indexes, id);
  }

  sessionList(): QueryResult<SessionRecord[]> {
    return sessionList(this.state.sessions, this.indexes);
  }

  sessionsOfNode(node: string): QueryResult<SessionRecord[]> {
    return sessionsOfNode(this.state.sessions, this.indexes, node);
  }

  // ---- KV ----

  kvGet(key: string): QueryResult<KvEntry | null> {
    return kvGet(this.state.kv, key);
  }

  kvList(prefix: string): QueryResult<KvEntry[]> {
    return kvList(this.state.kv, prefix);
  }

  /** kvList's entries as outputs (shared and frozen: do not modify), large prefixes kept between reads (kv/kv-listing.ts). */
  kvRecurse(prefix: string): QueryResult<KvEntryOut[]> {
    const { outs, index } = kvRecurse(this.state.kv, this.builds, prefix);
    return { index, value: outs, keys: [kvPrefixWatchKey(prefix)] };
  }

  kvKeys(prefix: string, separator = ''): QueryResult<string[]> {
    return kvKeys(this.state.kv, prefix, separator);
  }

  /** Whether a lock on `key` may not be acquired now (its holder was invalidated within its lock-delay). */
  kvLockDelayed(key: string): boolean {
    const now = this.now();
    this.state.kv.expireLockDelays(now);
    return this.state.kv.lockDelayUntil(key) > now;
  }

  /** A transaction of read verbs only, answered from this store without a write. */
  kvTxnRead(ops: readonly KvOp[]): QueryResult<TxnReply> {
    const { results, errors } = evaluateTxn(this.state, ops);
    const value: TxnReply =
      errors.length > 0 ? { Results: null, Errors: errors } : { Results: results.map((r) => ({ KV: kvEntryOut(r.entry, r.withValue) })), Errors: null };
    return { index: this.state.kv.tableIndex, value, keys: [KVS] };
  }

  /**
   * A /v1/txn of read ops only — KV read verbs and Node/Service/Check `get` — answered from this
   * store without a write (Consul's Txn.Read). Its index is the newest of the tables it reads.
   */
  txnRead(ops: readonly TxnOpInput[]): QueryResult<FullTxnReply> | CommandError {
    let value: FullTxnReply;
    try {
      value = txnReadOnly(this.state, ops);
    } catch (err) {
      // A malformed op: the same verdict the command would give (400).
      if (err instanceof Rejection) return new CommandError(err.message);
      throw err;
    }
    const index = Math.max(this.state.kv.tableIndex, this.indexes.get(NODES), this.indexes.get(SERVICES), this.indexes.get(CHECKS));
    return { index, value, keys: [KVS, NODES, SERVICES, CHECKS] };
  }

  // ---- prepared queries ----

  queryGet(id: string): QueryResult<QueryRecord | null> {
    return queryGet(this.state.queries, this.indexes, id);
  }

  queryList(): QueryResult<QueryRecord[]> {
    return queryList(this.state.queries, this.indexes);
  }

  /** What execute/explain of `idOrName` runs (by ID, exact name, then longest template prefix). */
  queryResolve(idOrName: string): QueryResult<Resolution> {
    return resolveQuery(this.state.queries, this.indexes, idOrName);
  }

  // ---- network areas ----

  areaList(): QueryResult<AreaOut[]> {
    return areaList(this.state.areas, this.indexes);
  }

  /** One area, or null when unknown. */
  areaGet(id: string): QueryResult<AreaOut | null> {
    return areaGet(this.state.areas, this.indexes, id);
  }

  /** Every area with the peer servers learned through it (server-side: forwarding, pings, members). */
  areaServers(): QueryResult<AreaServers[]> {
    return areaServerList(this.state.areas, this.indexes);
  }

  /** Rows per table, for the agent's metrics (registry.state.*), read at scrape time. */
  tableSizes(): { nodes: number; services: number; checks: number; kvEntries: number; sessions: number } {
    return { ...this.state.catalog.counts(), kvEntries: this.state.kv.size, sessions: this.state.sessions.size };
  }

  /** Broken invariants, [] when the store is consistent (for tests and fuzzing). */
  checkInvariants(): string[] {
    return storeInvariants(this.state, this.indexes, this.last);
  }

  private newIndexTable(entries: Iterable<readonly [string, number]>): IndexTable {
    // Resolve through `this.state` at call time: restore() swaps the state.
    return new IndexTable((key) => this.state.fallbackKey(key), entries);
  }

  // ---- user events and autopilot ----

  /** The kept user events, oldest first; only those named `name` when given. */
  eventList(name?: string): QueryResult<EventOut[]> {
    return eventList(this.state.events, this.indexes, name);
  }

  /** The autopilot configuration, or the defaults (indexes 0) before it is first set. */
  autopilotConfig(): QueryResult<AutopilotRecord> {
    return autopilotConfig(this.state.autopilot, this.indexes);
  }

}

/** Plain steps as steps of a piece-fed generator (they never ask for a piece). */
function* asPieceSteps<T>(steps: Generator<void, T, void>): Generator<PieceRequest, T, Uint8Array | undefined> {
  let r = steps.next();
  while (!r.done) {
    yield;
    r = steps.next();
  }
  return r.value;
}
