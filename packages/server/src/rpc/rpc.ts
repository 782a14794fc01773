// The one way through for every request that touches replicated state (Consul's rpc.go):
// writes go to the leader and through Raft; reads are served by the leader (default), by any
// server after a ReadIndex barrier (consistent) or from the local store (stale). Endpoints call
// `apply` and `read`; nothing else forwards, blocks or checks consistency.
import { CommandError, encodeCommand, type Command, type Store } from '@registry/store';
import { LeadershipLostError, NotLeaderError, type RaftNode, type Transport } from '@registry/raft';
import { blockingQuery, effectiveWait, type QueryResult } from '../http/blocking';
import { HttpError, NO_LEADER, badRequest, serverError } from '../http/errors';
import type { QueryOptions } from '../http/query-options';
import type { ReadEndpoint } from '../endpoints';
import { allowAllResolver, authorizeCommand, type AclResolver } from '../acl/authorization';
import { fromEnvelope, toEnvelope, type Envelope } from './envelope';
import { lockDelayVerdict } from '../sessions/lock-delay-gate';
import { REUSABLE_READS, ReusedReads } from './reused-reads';
import { noRemoteDatacenters, type RemoteDatacenters } from '../areas/remote-datacenters';

/** How long a write waits for a leader to exist before answering `No cluster leader` (Consul: 7 s). */
const LEADER_WAIT_MS = 7_000;
const FORWARD_TIMEOUT_MS = 10_000;

export interface ReadMeta {
  knownLeader: boolean;
  lastContactMs: number;
}

export interface ReadReply<T = unknown> {
  result: QueryResult<T>;
  meta: ReadMeta;
}

export interface ApplyOptions {
  /** The caller's token; the leader checks the command against it. */
  token?: string;
  datacenter?: string;
  /** Commands the servers issue themselves (reconcile, session expiry) skip ACL checks. */
  internal?: boolean;
}

interface ForwardedApply {
  cmd: Command;
  token: string | undefined;
  internal: boolean;
  /**
   * Wall-clock ms after which the sender has given up. A forwarded write held up in the network
   * (a partition that heals later) must not be applied after its client was told it failed.
   */
  expiresAt?: number;
}

interface ForwardedRead {
  endpoint: string;
  args: unknown;
  token: string | undefined;
  minIndex: number;
  waitMs: number | undefined;
}

export class Rpc {
  private readonly reused = new ReusedReads();

  constructor(
    private readonly raft: RaftNode,
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly datacenter: string,
    private readonly reads: Record<string, ReadEndpoint>,
    private acl: AclResolver = allowAllResolver,
  ) {
    transport.handle('rpc.apply', (body) => this.applyHere(body as ForwardedApply));
    transport.handle('rpc.read', (body) => this.readHere(body as ForwardedRead));
  }

  /** Other datacenters (network areas): every request for a `dc` other than this one goes there. */
  private remote: RemoteDatacenters = noRemoteDatacenters;

  setRemoteDatacenters(remote: RemoteDatacenters): void {
    this.remote = remote;
  }

  /** Swap the ACL resolver (the agent installs the real one once the store exists). */
  setAclResolver(acl: AclResolver): void {
    this.acl = acl;
  }

  /** The resolver in force; agent-local routes (agent, operator) check their tokens with it. */
  get aclResolver(): AclResolver {
    return this.acl;
  }

  /** Commit `cmd` through Raft (on the leader, wherever this server is) and return the FSM's result. */
  async apply(cmd: Command, options: ApplyOptions = {}): Promise<unknown> {
    const dc = options.datacenter ?? this.datacenter;
    if (dc !== this.datacenter) return this.remote.apply(dc, cmd, options);
    const req: ForwardedApply = { cmd, token: options.token, internal: options.internal ?? false };
    const deadline = Date.now() + LEADER_WAIT_MS;
    for (;;) {
      if (this.raft.isLeader()) {
        const env = await this.applyHere(req);
        if (env.ok || !('retry' in env)) return fromEnvelope(env);
      } else {
        const leader = this.raft.leader();
        if (leader) {
          try {
            const forwarded: ForwardedApply = { ...req, expiresAt: Date.now() + FORWARD_TIMEOUT_MS };
            const env = (await this.transport.call(leader.address, 'rpc.apply', forwarded, FORWARD_TIMEOUT_MS)) as Envelope;
            if (env.ok || !('retry' in env)) return fromEnvelope(env);
          } catch (err) {
            // The leader went away mid-call; the write may or may not have committed, as with any
            // timed-out request. Retry only while the caller's budget lasts.
            if (Date.now() >= deadline) throw serverError(`forwarding to the leader failed: ${(err as Error).message}`);
          }
        }
      }
      if (Date.now() >= deadline) throw serverError(NO_LEADER);
      await this.leaderChange(Math.min(250, deadline - Date.now()));
    }
  }

  /**
   * Run read endpoint `name` with the request's consistency mode and blocking options.
   * `signal` aborts a blocked query when the client goes away.
   */
  async read<T = unknown>(name: string, args: unknown, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>> {
    if (opts.datacenter !== this.datacenter) return this.remote.read<T>(opts.datacenter, name, args, opts, signal);
    const run = this.runner(name, args, opts.token);
    switch (opts.consistency) {
      case 'stale': {
        // A server that has never heard from a leader holds nothing trustworthy (Consul #4554).
        if (!this.raft.hasEverHadLeader()) throw serverError(NO_LEADER);
        const result = await this.runRead(name, args, opts.token, run, opts.minIndex, opts.waitMs, signal);
        return { result: result as QueryResult<T>, meta: this.localMeta() };
      }
      case 'consistent': {
        try {
          await this.raft.readBarrier(FORWARD_TIMEOUT_MS);
        } catch (err) {
          throw serverError(err instanceof NotLeaderError ? NO_LEADER : `Not ready to serve consistent reads`);
        }
        const result = await blockingQuery(this.store, run, opts.minIndex, opts.waitMs, signal);
        return { result: result as QueryResult<T>, meta: { knownLeader: true, lastContactMs: this.lastContact() } };
      }
      default:
        return this.readOnLeader<T>({ endpoint: name, args, token: opts.token, minIndex: opts.minIndex, waitMs: opts.waitMs }, signal);
    }
  }

  private async readOnLeader<T>(req: ForwardedRead, signal?: AbortSignal): Promise<ReadReply<T>> {
    const deadline = Date.now() + LEADER_WAIT_MS;
    for (;;) {
      if (this.raft.isLeader()) {
        const env = await this.readHere(req, signal);
        if (env.ok || !('retry' in env)) return fromEnvelope(env) as ReadReply<T>;
      } else {
        const leader = this.raft.leader();
        if (leader) {
          const timeout = (req.minIndex > 0 ? effectiveWait(req.waitMs) : 0) + FORWARD_TIMEOUT_MS;
          try {
            const env = (await this.transport.call(leader.address, 'rpc.read', req, timeout)) as Envelope<ReadReply<T>>;
            if (env.ok || !('retry' in env)) {
              const reply = fromEnvelope(env);
              return { result: reply.result, meta: { knownLeader: true, lastContactMs: this.lastContact() } };
            }
          } catch (err) {
            if (Date.now() >= deadline) throw serverError(`forwarding to the leader failed: ${(err as Error).message}`);
          }
        }
      }
      if (Date.now() >= deadline) throw serverError(NO_LEADER);
      await this.leaderChange(Math.min(250, deadline - Date.now()));
    }
  }

  private async applyHere(req: ForwardedApply): Promise<Envelope> {
    if (!this.raft.isLeader()) return { ok: false, retry: true, message: NO_LEADER };
    if (req.expiresAt !== undefined && Date.now() > req.expiresAt) {
      return toEnvelope(serverError('request expired before it reached the leader'));
    }
    const { cmd } = req;
    try {
      if (!req.internal) authorizeCommand(cmd, this.acl.resolve(req.token), this.store, this.acl.enabled);
      // A lock on a key in its lock-delay answers false without a write (Consul's KVS.Apply).
      const delayed = lockDelayVerdict(cmd, this.store);
      if (delayed !== undefined) return { ok: true, value: delayed };
      const result = await this.raft.propose(encodeCommand(cmd));
      if (result instanceof CommandError) return toEnvelope(badRequest(result.message));
      return { ok: true, value: result };
    } catch (err) {
      if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
      if (err instanceof LeadershipLostError) return toEnvelope(serverError(err.message));
      return toEnvelope(err);
    }
  }

  private async readHere(req: ForwardedRead, signal?: AbortSignal): Promise<Envelope<ReadReply>> {
    if (!this.raft.isLeader()) return { ok: false, retry: true, message: NO_LEADER };
    try {
      // A new leader serves nothing until its own no-op has committed (the stale-read-after-election bug).
      if (!this.raft.leaderReady()) await this.raft.readBarrier(FORWARD_TIMEOUT_MS);
      const run = this.runner(req.endpoint, req.args, req.token);
      const result = await this.runRead(req.endpoint, req.args, req.token, run, req.minIndex, req.waitMs, signal);
      return { ok: true, value: { result, meta: { knownLeader: true, lastContactMs: 0 } } };
    } catch (err) {
      if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
      return toEnvelope(err);
    }
  }

  /** blockingQuery, except that a non-blocking read of a reusable endpoint may be shared (reused-reads.ts). */
  private runRead(
    name: string,
    args: unknown,
    token: string | undefined,
    run: () => QueryResult,
    minIndex: number,
    waitMs: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<QueryResult> | QueryResult {
    if (minIndex > 0 || !REUSABLE_READS.has(name)) return blockingQuery(this.store, run, minIndex, waitMs, signal);
    return this.reused.get(this.store.lastIndex, name, token, args, run);
  }

  private runner(name: string, args: unknown, token: string | undefined): () => QueryResult {
    const endpoint = this.reads[name];
    if (!endpoint) throw new HttpError(500, `unknown read endpoint ${name}`);
    const authz = this.acl.resolve(token);
    return () => endpoint({ store: this.store, token, authz }, args);
  }

  private localMeta(): ReadMeta {
    return { knownLeader: this.raft.leader() !== null, lastContactMs: this.lastContact() };
  }

  private lastContact(): number {
    const ms = this.raft.lastContactMs();
    return Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) : 0;
  }

  /** One listener for every request waiting out a leaderless moment, however many there are. */
  private nextLeader: Promise<void> | null = null;

  private leaderChange(maxMs: number): Promise<void> {
    if (!this.nextLeader) {
      this.nextLeader = new Promise((resolve) => {
        this.raft.once('leader', () => {
          this.nextLeader = null;
          resolve();
        });
      });
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(10, maxMs));
      void this.nextLeader!.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
