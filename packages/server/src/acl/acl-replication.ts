// ACL replication in a secondary datacenter (Consul 1.4's acl_replication.go and leader.go
// startACLReplication): while this server leads a datacenter that is not the primary, it pulls the
// primary's policies — and, with `acl.enable_token_replication`, its global tokens — over the area
// links, and commits the differences through its own Raft log (`acl.replicate`), so they survive
// restarts and snapshots here. Each round is a blocking list read at the primary from the index the
// last round reached (no copy when nothing changed), a diff by ID and Hash against the local tables,
// batched reads of the changed rows, and batched commits; rows the primary no longer has are deleted.
// The list and the batch reads are stale reads, each served by the nearest live primary server, and
// the nearest can change between them: a row the batch read did not return (its server had not
// applied it yet) leaves the round short of the list's index, so the next round asks again at once
// rather than blocking past a change it has not copied.
// Local tokens are never touched. The replication token (`acl.tokens.replication`) authorises the
// reads at the primary: acl:read for policies, acl:write for tokens (their secrets).
import type { Command, ReplicatedPolicy, ReplicatedToken, Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import { NO_PATH_TO_DC } from '../errors';
import { defaultQueryOptions, type QueryOptions } from '../rpc/query-options';
import type { Rpc } from '../rpc/rpc';
import { publishReplicationStatus, type AclReplicationStatus } from './replication-status';

const ZERO_TIME = '0001-01-01T00:00:00Z';
/** A blocking list read at the primary returns at the latest after this (so a deposed leader's loop ends soon). */
const LIST_WAIT_MS = 30_000;
/** Rows per batch read and per commit (Consul sizes its upsert batches by bytes; rows are small). */
const BATCH = 128;
/** Consul's aclReplicationMaxRetryBackoff: 1 s doubling up to 64 s after failed rounds. */
const MAX_BACKOFF_S = 64;
/**
 * After a round whose batch read missed rows the list named, ask again after this, doubling while
 * rounds keep coming up short (a primary server cut off from its leader yet reachable from here
 * would otherwise be asked ten times a second), up to the error backoff's ceiling.
 */
const SHORT_ROUND_RETRY_MS = 100;
/** While no replication token is set, look again this often. */
const NO_TOKEN_POLL_MS = 1_000;
/**
 * While no area reaches the primary yet ("No path to datacenter": nothing was sent), look again this
 * often, without growing the backoff: a secondary started a while before it is joined to the primary
 * would otherwise wait out up to 64 s of backoff after the join before its first round.
 */
const NO_PATH_POLL_MS = 1_000;

export interface AclReplicationOptions {
  store: Store;
  rpc: Rpc;
  datacenter: string;
  primary: string;
  /** Read live: `PUT /v1/agent/token/replication` may set it later. */
  replicationToken: () => string | undefined;
  replicateTokens: boolean;
  logger: Logger;
  /** Backoff base (tests may shorten it); Consul's 1 s. */
  backoffUnitMs?: number;
}

type Kind = 'policies' | 'tokens';

/** A row as the diff compares it. */
interface Keyed {
  id: string;
  hash: string;
}

/** What a round needs to know of one kind: where the primary lists and serves it, the local rows, the command that commits it. */
interface KindOps<Row> {
  label: string;
  list(opts: QueryOptions, signal: AbortSignal): Promise<{ rows: (Keyed & { modifyIndex: number })[]; index: number }>;
  local(): Keyed[];
  fetch(ids: string[], opts: QueryOptions, signal: AbortSignal): Promise<Row[]>;
  command(upsert: Row[], del: string[]): Command;
}

/** Where a round got to: the primary's index it copied up to, and whether it copied everything the list named. */
interface Round {
  index: number;
  complete: boolean;
}

export class AclReplication implements LeaderDuty {
  readonly name = 'acl-replication';
  private active = false;
  /** Whether this server leads its datacenter (the duty runs): only then has it a status to show. */
  private leading = false;
  private abort: AbortController | null = null;
  private readonly status: AclReplicationStatus;
  private readonly kinds: { policies: KindOps<ReplicatedPolicy>; tokens: KindOps<ReplicatedToken> };

  constructor(private readonly o: AclReplicationOptions) {
    this.status = {
      Enabled: o.datacenter !== o.primary,
      Running: false,
      SourceDatacenter: o.datacenter !== o.primary ? o.primary : '',
      // Consul's zero status where nothing replicates: an empty type.
      ReplicationType: o.datacenter === o.primary ? '' : o.replicateTokens ? 'tokens' : 'policies',
      ReplicatedIndex: 0,
      ReplicatedTokenIndex: 0,
      LastSuccess: ZERO_TIME,
      LastError: ZERO_TIME,
    };
    const { rpc, store } = o;
    this.kinds = {
      policies: {
        label: 'policy',
        list: async (opts, signal) => {
          const { result } = await rpc.read('acl.policies', {}, opts, signal);
          return { rows: result.value.map((p) => ({ id: p.ID, hash: p.Hash, modifyIndex: p.ModifyIndex })), index: result.index };
        },
        local: () => store.aclPolicies().value.map((p) => ({ id: p.ID, hash: p.Hash })),
        fetch: async (ids, opts, signal) => {
          const { result } = await rpc.read('acl.policy-batch', { ids }, opts, signal);
          return result.value.map((p) => ({ ID: p.ID, Name: p.Name, Description: p.Description, Rules: p.Rules, Datacenters: p.Datacenters ?? [] }));
        },
        command: (upsert, del) => ({ type: 'acl.replicate', policies: { upsert, delete: del } }),
      },
      // Global tokens only: Local ones on either side are not compared.
      tokens: {
        label: 'token',
        list: async (opts, signal) => {
          const { result } = await rpc.read('acl.tokens', {}, opts, signal);
          return { rows: result.value.filter((t) => !t.Local).map((t) => ({ id: t.AccessorID, hash: t.Hash, modifyIndex: t.ModifyIndex })), index: result.index };
        },
        local: () => store.aclTokens().value.filter((t) => !t.Local).map((t) => ({ id: t.AccessorID, hash: t.Hash })),
        fetch: async (accessors, opts, signal) => (await rpc.read('acl.token-batch', { accessors }, opts, signal)).result.value,
        command: (upsert, del) => ({ type: 'acl.replicate', tokens: { upsert, delete: del } }),
      },
    };
    // Shown by the leader whatever the datacenter (the primary answers Enabled: false).
    publishReplicationStatus(o.store, () => (this.leading ? { ...this.status } : null));
  }

  start(): void {
    this.leading = true;
    if (!this.status.Enabled) return;
    this.active = true;
    this.abort = new AbortController();
    this.status.Running = true;
    void this.loop('policies', this.abort.signal);
    if (this.o.replicateTokens) void this.loop('tokens', this.abort.signal);
    this.o.logger.info({ primary: this.o.primary, tokens: this.o.replicateTokens }, 'started ACL replication');
  }

  stop(): void {
    this.leading = false;
    this.active = false;
    this.status.Running = false;
    this.abort?.abort();
    this.abort = null;
  }

  private async loop(kind: Kind, signal: AbortSignal): Promise<void> {
    let lastRemoteIndex = 0;
    let failures = 0;
    let shortRounds = 0;
    let noPathSaid = false;
    while (this.active && !signal.aborted) {
      const token = this.o.replicationToken();
      if (!token) {
        await sleep(NO_TOKEN_POLL_MS, signal);
        continue;
      }
      try {
        const round = await this.round(this.kinds[kind], token, lastRemoteIndex, signal);
        if (signal.aborted) return;
        failures = 0;
        noPathSaid = false;
        if (!round.complete) {
          // Not an error (a primary server a few entries behind), but not the list's index either.
          const waitMs = Math.min(SHORT_ROUND_RETRY_MS * 2 ** shortRounds, MAX_BACKOFF_S * 1_000);
          shortRounds++;
          this.o.logger.debug({ kind, index: round.index, waitMs }, 'ACL replication: a batch read missed rows the list named; asking again');
          await sleep(waitMs, signal);
          continue;
        }
        shortRounds = 0;
        lastRemoteIndex = round.index;
        if (kind === 'policies') this.status.ReplicatedIndex = round.index;
        else this.status.ReplicatedTokenIndex = round.index;
        this.status.LastSuccess = new Date().toISOString();
      } catch (err) {
        if (signal.aborted) return;
        // A failed round starts the next from scratch (Consul resets lastRemoteIndex to 0).
        lastRemoteIndex = 0;
        this.status.LastError = new Date().toISOString();
        if ((err as Error).message === NO_PATH_TO_DC) {
          if (!noPathSaid) this.o.logger.warn({ kind, primary: this.o.primary }, 'ACL replication: no area reaches the primary datacenter yet; trying again every second');
          noPathSaid = true;
          await sleep(NO_PATH_POLL_MS, signal);
          continue;
        }
        if (2 ** failures < MAX_BACKOFF_S) failures++;
        this.o.logger.warn({ err: (err as Error).message, kind }, 'ACL replication error (will retry if still leader)');
        await sleep(2 ** failures * (this.o.backoffUnitMs ?? 1_000), signal);
      }
    }
  }

  private opts(token: string, minIndex: number): QueryOptions {
    return defaultQueryOptions(this.o.primary, token, { consistency: 'stale', minIndex, waitMs: minIndex > 0 ? LIST_WAIT_MS : undefined });
  }

  /**
   * One round for a kind: list at the primary, diff, delete what it no longer has, batch-read and
   * upsert what changed. Complete when every row the list named came back from a batch read.
   * (KindOps<unknown>: each kind's row type stays between its own fetch and command.)
   */
  private async round(kind: KindOps<unknown>, token: string, lastRemoteIndex: number, signal: AbortSignal): Promise<Round> {
    const listed = await kind.list(this.opts(token, lastRemoteIndex), signal);
    const index = listed.index;
    // The primary's index went back (restored or rebuilt): compare everything again.
    const since = index < lastRemoteIndex ? 0 : lastRemoteIndex;
    const { deletes, upserts } = diff(kind.local(), listed.rows, since);
    for (let i = 0; i < deletes.length; i += BATCH) await this.commit(kind.command([], deletes.slice(i, i + BATCH)), signal);
    let upserted = 0;
    for (let i = 0; i < upserts.length; i += BATCH) {
      const rows = await kind.fetch(upserts.slice(i, i + BATCH), this.opts(token, 0), signal);
      if (rows.length > 0) await this.commit(kind.command(rows, []), signal);
      upserted += rows.length;
    }
    if (deletes.length + upserted > 0) this.o.logger.debug({ deleted: deletes.length, upserted, index }, `ACL ${kind.label} replication round`);
    return { index, complete: upserted === upserts.length };
  }

  private async commit(cmd: Command, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new Error('replication stopped');
    await this.o.rpc.apply(cmd, { internal: true });
  }
}

/**
 * Consul's diffACLPolicies / diffACLTokens: IDs only here → delete; IDs only there, or changed there
 * since the last round with another Hash → fetch and upsert.
 */
export function diff(
  local: Keyed[],
  remote: (Keyed & { modifyIndex: number })[],
  lastRemoteIndex: number,
): { deletes: string[]; upserts: string[] } {
  const mine = new Map(local.map((l) => [l.id.toLowerCase(), l]));
  const theirs = new Set(remote.map((r) => r.id.toLowerCase()));
  const deletes = local.filter((l) => !theirs.has(l.id.toLowerCase())).map((l) => l.id);
  const upserts = remote
    .filter((r) => {
      const l = mine.get(r.id.toLowerCase());
      return l === undefined || (r.modifyIndex > lastRemoteIndex && r.hash !== l.hash);
    })
    .map((r) => r.id);
  return { deletes, upserts };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

