// The one way through for every request that touches replicated state (Consul's rpc.go):
// writes go to the leader and through Raft; reads are served by any server — after learning the
// leader's commit index and applying up to it (default), after a ReadIndex barrier confirmed by a
// quorum (consistent), or at once from the local store (stale). Callers use `apply` and `read`;
// nothing else forwards, blocks or checks consistency. Which of that a read gets is its endpoint's
// policy (endpoints/<area>-reads.ts, `read({ forward, blocking, reuse, run })`): this file carries it
// out and names no endpoint.
//
// Why ~600 lines: apply (forward, resend, dedup window) and read (the three consistencies, blocking,
// reuse) are the one way through and share the leader tracking and the forwarding; what is not
// that way through is beside it (leader-calls.ts, settled-read.ts, reused-reads.ts, query-options.ts).
import { CommandError, encodeStamped, type Command, type Store } from '@registry/store';
import { NotLeaderError, RemoteError, RpcConnectionError, StorageFaultError, type RaftNode, type Transport } from '@registry/raft';
import type { Authorizer } from '@registry/acl';
import { blockingQuery, effectiveWait, type QueryResult } from './blocking';
import { settledRead } from './settled-read';
import { NO_LEADER, badRequest, noLeader, notAMember, outcomeUnknown, serverError } from '../errors';
import type { QueryOptions } from './query-options';
import { applyReadPolicy, type ReadEndpoint } from './read-endpoint';
import { allowAllResolver, type AclResolver } from './acl-resolver';
import { errorOf, fromEnvelope, toEnvelope, type Envelope } from './envelope';
import type { WriteGate } from './write-gate';
import { ReusedReads, type SharedValues } from './reused-reads';
import { noRemoteDatacenters, type RemoteDatacenters } from './remote-datacenters';
import { RequestIds } from './request-ids';
import type { ApplyOptions, ReadArgs, ReadMeta, ReadName, ReadReply, ReadValue } from './contract';
import { LeaderCalls } from './leader-calls';
import { LeaderWait } from './leader-wait';
import { noRpcObserver, type RpcObserver } from './observer';
import type { OpenQueries } from './blocking';
import { CommitIndexBatcher } from './commit-index-batcher';
import { AppliedWait } from './applied-wait';
import { receivedBudgetEnd, receivedBudgetLeft, watchLoopStalls } from './write-budget';
import { monotonicMs } from '../time';
import { LogClock } from './log-clock';

/** How long a read waits for a leader to exist before answering `No cluster leader` (Consul: 7 s). */
const LEADER_WAIT_MS = 7_000;
const FORWARD_TIMEOUT_MS = 10_000;
/**
 * A write's whole budget from the moment it enters this server (Consul's RPCHoldTimeout, 7 s): it
 * is re-sent within it and never proposed after it, so once its client has its answer, no copy of
 * it can still start on its way into the log. Counted on the monotonic clock (write-budget.ts).
 */
const WRITE_BUDGET_MS = 7_000;
/** The leader's refusal of a write whose budget was spent when it arrived: surely not in any log. */
const EXPIRED = 'request expired before it reached the leader';
/**
 * One forwarded attempt waits this long for the leader's answer before the write is re-sent (same
 * request id) to whoever leads then: a paused or cut-off leader must not hold a write for its
 * whole budget while a new leader could take it.
 */
const WRITE_ATTEMPT_MS = 2_000;
/** A follower's ask for the leader's commit index (a default read): one round trip, no quorum. */
const COMMIT_INDEX_CALL_MS = 2_000;
/**
 * How long a follower's default read waits to apply up to the leader's commit index before it
 * forwards the whole query to the leader instead (a follower far behind, or one whose log cannot be
 * written, still answers, as before issue #14).
 */
const APPLY_WAIT_MS = 1_000;

export type { ApplyOptions, ReadMeta, ReadReply } from './contract';

interface ForwardedApply {
  cmd: Command;
  token: string | undefined;
  internal: boolean;
  /** The write's identity, fixed where it entered the cluster and the same on every re-send. */
  id: string;
  /**
   * Whether this id may have been sent before (a re-send, or an id given in another datacenter):
   * only then can the leader find it applied or in flight, so a first send skips both lookups.
   */
  resent: boolean;
  /**
   * The ms of the write's budget left when this copy was sent (write-budget.ts): the leader counts
   * it down from when it reads the message and proposes nothing once it is spent, since the client
   * has been, or is about to be, answered. A duration, so no two servers' clocks are compared.
   */
  budgetMs?: number;
  /**
   * The log's time when this copy was sent, as the sender could tell it (Store.logTimeNow): the
   * leader takes the difference to its own as the time the copy spent on its way (a copy held in a
   * cut link for seconds), which no wall clock may measure.
   */
  sentAtLogMs?: number;
  /**
   * What versions before budgetMs sent: a wall-clock deadline on the entering server's clock. Read
   * only from such senders, during a rolling upgrade.
   */
  deadline?: number;
}

interface ForwardedRead {
  endpoint: string;
  args: unknown;
  token: string | undefined;
  minIndex: number;
  waitMs: number | undefined;
}

/** Where forwarded requests are logged (a pino child logger has this shape). */
export interface ForwardLogger {
  debug(o: object, msg: string): void;
  isLevelEnabled(level: string): boolean;
}

/** What an Rpc is built from (agent/ builds them first; rpc/ imports nothing above it). */
export interface RpcParts {
  raft: RaftNode;
  store: Store;
  transport: Transport;
  datacenter: string;
  /** Every read endpoint by name with its policy (endpoints/index.ts). */
  reads: Readonly<Record<string, ReadEndpoint>>;
  /** The write endpoints' leader-side checks (ACL, lock-delay): endpoints/writes.ts. */
  writes: WriteGate;
  /** Token → Authorizer for every read and write; allow-all when ACLs are off. */
  acl?: AclResolver;
  /** Other datacenters (`?dc=`); none: Consul's `No path to datacenter`. */
  remote?: RemoteDatacenters;
  /** Told about forwarding (metrics); nothing by default. */
  observer?: RpcObserver;
  /** Forwarded requests are logged here at debug level; silent when absent. */
  forwardLog?: ForwardLogger;
  /** Why this server is out of its cluster, or null (cluster/membership.ts). */
  outOfCluster?: () => string | null;
}

export class Rpc {
  private readonly reused = new ReusedReads();
  /** Read results shared until the next apply: the HTTP edge keeps their JSON (http/json-encoder.ts). */
  get sharedValues(): SharedValues {
    return this.reused;
  }
  private readonly requestIds = new RequestIds();
  /** Calls that run on the leader (operator, session renew, CA sign, adding a server). */
  readonly leader: LeaderCalls;
  private readonly leaderWait: LeaderWait;
  /** A follower's default reads: the leader's commit index, asked once for every batch of reads. */
  readonly commitIndexes: CommitIndexBatcher;
  private readonly appliedWait: AppliedWait;

  private readonly raft: RaftNode;
  private readonly store: Store;
  private readonly transport: Transport;
  private readonly datacenter: string;
  private readonly reads: Readonly<Record<string, ReadEndpoint>>;
  private readonly writes: WriteGate;
  private readonly acl: AclResolver;
  /** Other datacenters (network areas): every request for a `dc` other than this one goes there. */
  private readonly remote: RemoteDatacenters;
  /** Told about forwarding (metrics). */
  private readonly observer: RpcObserver;
  /** Where forwarded requests are logged at debug level (-log-level debug). */
  private readonly forwardLog: ForwardLogger | undefined;
  /**
   * Why this server is out of its cluster (removed, or left: cluster/membership.ts), or null. While
   * it is, writes, leader calls and reads that need the leader fail at once saying so: no leader
   * replicates to it, so waiting for one only turned every request into a 7 s hang (issue #35).
   * Stale reads still answer from its own state, with X-Registry-KnownLeader false.
   */
  private readonly outOfCluster: () => string | null;

  /** Blocking queries waiting on this server now (Consul's rpc.queries_blocking). */
  readonly blocking: OpenQueries = { open: 0 };

  /** Everything it uses is given here, once: the composition root (agent/) builds it in order. */
  constructor(parts: RpcParts) {
    this.raft = parts.raft;
    this.store = parts.store;
    this.transport = parts.transport;
    this.datacenter = parts.datacenter;
    this.reads = parts.reads;
    this.writes = parts.writes;
    this.acl = parts.acl ?? allowAllResolver;
    this.remote = parts.remote ?? noRemoteDatacenters;
    this.observer = parts.observer ?? noRpcObserver;
    this.forwardLog = parts.forwardLog;
    this.outOfCluster = parts.outOfCluster ?? (() => null);
    const { raft, transport } = parts;
    this.leaderWait = new LeaderWait(raft);
    this.leader = new LeaderCalls(raft, transport, this.leaderWait, this.observer, this.outOfCluster);
    transport.handle('rpc.apply', (body) => {
      const req = body as ForwardedApply;
      const fetching = this.tokenFetch(req.token, req.internal);
      return fetching ? fetching.then(() => this.applyHere(req)) : this.applyHere(req);
    });
    transport.handle('rpc.read', (body) => {
      const req = body as ForwardedRead;
      const fetching = this.tokenFetch(req.token);
      return fetching ? fetching.then(() => this.readHere(req)) : this.readHere(req);
    });
    transport.handle('rpc.commitIndex', () => this.commitIndexHere());
    this.commitIndexes = new CommitIndexBatcher(() => this.askCommitIndex());
    this.appliedWait = new AppliedWait(raft);
    // From the start, so that a write read right after this process was paused is judged by it.
    watchLoopStalls();
  }

  /**
   * A secondary datacenter asks the primary about a token it does not hold before a request uses
   * it; undefined — nothing to wait for, and no extra turn of the loop — everywhere else and for
   * the server's own (internal) writes.
   */
  private tokenFetch(token: string | undefined, internal?: boolean): Promise<void> | undefined {
    return internal ? undefined : this.acl.prepareForwarded?.(token);
  }

  private refuseIfOut(): void {
    if (this.raft.isLeader()) return;
    const out = this.outOfCluster();
    if (out) throw notAMember(out);
  }

  /** The resolver in force; agent-local routes (agent, operator) check their tokens with it. */
  get aclResolver(): AclResolver {
    return this.acl;
  }

  /**
   * Commit `cmd` through Raft (on the leader, wherever this server is) and return the FSM's result.
   * The write gets its identity here, once: every re-send carries it, and the state machine applies
   * a request id at most once, so re-sending after an ambiguous failure is safe. An answer from the
   * leader, success or error, is returned as it is; only "not the leader (any more)" is retried.
   */
  async apply(cmd: Command, options: ApplyOptions = {}): Promise<unknown> {
    const dc = options.datacenter ?? this.datacenter;
    if (dc !== this.datacenter) return this.remote.apply(dc, cmd, options);
    const fetching = this.tokenFetch(options.token, options.internal);
    if (fetching) await fetching;
    const req: ForwardedApply = {
      cmd,
      token: options.token,
      internal: options.internal ?? false,
      id: options.requestId ?? this.requestIds.next(),
      resent: options.requestId !== undefined,
    };
    this.refuseIfOut();
    const budget = options.budgetMs ?? WRITE_BUDGET_MS;
    // A write that entered a client agent brings what is left of the client's budget, less any time
    // this process was not reading (write-budget.ts); it gets no more than a write entering here.
    // The copy's time on its way counts too: the kernel re-sends a copy held in a cut link and
    // delivers it when the link heals, long after its client was told the outcome is unknown.
    const end =
      options.receivedBudgetMs === undefined
        ? monotonicMs() + budget
        : Math.min(receivedBudgetEnd(options.receivedBudgetMs) - inTransit(options.receivedSentAtLogMs, this.logTimeHere()), monotonicMs() + budget);
    const attemptMs = options.budgetMs === undefined ? WRITE_ATTEMPT_MS : Math.max(WRITE_ATTEMPT_MS, options.budgetMs);
    let maybeApplied = false;
    let last = EXPIRED;
    for (;;) {
      // Checked before every send, the first included: a write whose client has gone, or whose
      // budget is spent, is not sent (again) by this server.
      const left = end - monotonicMs();
      if (left <= 0 || options.clientGone?.()) {
        if (maybeApplied) throw outcomeUnknown(last);
        throw last === NO_LEADER ? noLeader() : serverError(last);
      }
      req.budgetMs = left;
      req.sentAtLogMs = this.store.logTimeNow();
      const env = await this.sendApply(req, attemptMs);
      if (env.ok) return env.value;
      if (!('retry' in env)) throw errorOf(env);
      maybeApplied ||= env.maybeApplied === true;
      last = env.message;
      const wait = end - monotonicMs();
      if (wait > 0 && !options.clientGone?.()) await this.leaderWait.wait(Math.min(250, wait));
      req.resent = true;
    }
  }

  /**
   * One attempt of a write: proposed here when leading, else sent to the leader. Never rejects.
   * Not async itself: a leader's own writes (the common case) go straight to applyHere's promise.
   */
  private sendApply(req: ForwardedApply, attemptMs = WRITE_ATTEMPT_MS): Promise<Envelope> {
    return this.raft.isLeader() ? this.applyHere(req, true) : this.forwardApply(req, attemptMs);
  }

  private async forwardApply(req: ForwardedApply, attemptMs: number): Promise<Envelope> {
    const leader = this.raft.leader();
    if (!leader) return { ok: false, retry: true, message: NO_LEADER };
    const timeoutMs = Math.max(1, Math.min(attemptMs, req.budgetMs ?? attemptMs));
    this.observer.forwarded('write');
    if (this.forwardLog?.isLevelEnabled('debug')) this.forwardLog.debug({ rpc: 'rpc.apply', command: req.cmd.type, leader: leader.address }, 'forwarding write to the leader');
    try {
      // The last attempt of a budget must not reach the leader after it: unanswered, its
      // connection is reset so that no copy re-sent into a black-holed link arrives when it heals.
      const discardOnTimeout = req.budgetMs !== undefined && timeoutMs >= req.budgetMs;
      return (await this.transport.call(leader.address, 'rpc.apply', req, timeoutMs, { discardOnTimeout })) as Envelope;
    } catch (err) {
      this.observer.forwardFailed('write');
      return { ok: false, retry: true, message: `forwarding to the leader failed: ${(err as Error).message}`, maybeApplied: !surelyNotDelivered(err) };
    }
  }

  /**
   * Run read endpoint `name` with the request's consistency mode and blocking options.
   * `signal` aborts a blocked query when the client goes away.
   */
  read<K extends ReadName>(name: K, args: ReadArgs<K>, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<ReadValue<K>>> {
    return this.readByName(name, args, opts, signal) as Promise<ReadReply<ReadValue<K>>>;
  }

  /**
   * A read named at run time (forwarded requests): what read() runs. The endpoint's policy first
   * shapes the options (a `leader` read ignores ?stale, a non-blocking one ?index, a `local` one is
   * never sent to another datacenter), then they decide where and how it runs.
   */
  async readByName<T = unknown>(name: string, args: unknown, asked: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>> {
    const endpoint = this.endpoint(name);
    const opts = applyReadPolicy(endpoint, name, asked, this.datacenter);
    if (opts.datacenter !== this.datacenter) return this.remote.read<T>(opts.datacenter, name, args, opts, signal);
    const fetching = this.tokenFetch(opts.token);
    if (fetching) await fetching;
    const run = this.runner(endpoint, args, opts.token);
    switch (opts.consistency) {
      case 'stale': {
        // A server that has never heard from a leader holds nothing trustworthy (Consul #4554).
        if (!this.raft.hasEverHadLeader()) throw noLeader();
        const result = await this.runRead(endpoint, name, args, opts.token, run, opts.minIndex, opts.waitMs, signal);
        return { result: result as QueryResult<T>, meta: this.localMeta() };
      }
      case 'consistent': {
        this.refuseIfOut();
        try {
          await this.raft.readBarrier(FORWARD_TIMEOUT_MS);
        } catch (err) {
          if (err instanceof NotLeaderError) throw noLeader();
          throw serverError(err instanceof StorageFaultError ? err.message : `Not ready to serve consistent reads`);
        }
        const result = await blockingQuery(this.store, run, opts.minIndex, opts.waitMs, signal, this.blocking);
        return { result: result as QueryResult<T>, meta: { knownLeader: true, lastContactMs: this.lastContact() } };
      }
      default: {
        this.refuseIfOut();
        const req: ForwardedRead = { endpoint: name, args, token: opts.token, minIndex: opts.minIndex, waitMs: opts.waitMs };
        // A server whose log cannot be written applies nothing: it forwards rather than wait in vain.
        if (this.raft.isLeader() || !this.raft.leader() || this.raft.storageFault()?.kind === 'log') return this.readOnLeader<T>(req, signal);
        return this.readOnFollower<T>(req, endpoint, run, signal);
      }
    }
  }

  /**
   * A default read on a follower or non-voter (issue #14): ask the leader for its commit index (no
   * quorum round: the guarantee of a read the leader serves from its own state, which is what
   * default mode always was), wait until this server has applied that far, and answer from the
   * local store. Every write acknowledged before the read arrived is then visible. When the leader
   * cannot be asked, or this server does not catch up within APPLY_WAIT_MS, the read is forwarded
   * whole, as before.
   */
  private async readOnFollower<T>(req: ForwardedRead, endpoint: ReadEndpoint, run: () => QueryResult, signal?: AbortSignal): Promise<ReadReply<T>> {
    if (!(await this.caughtUpWithLeader())) return this.readOnLeader<T>(req, signal);
    let result: QueryResult;
    try {
      result = await this.runRead(endpoint, req.endpoint, req.args, req.token, run, req.minIndex, req.waitMs, signal);
    } catch (err) {
      // A closure that reads the leader's own memory, not the replicated state (the ACL replication
      // status), says so off the leader: the read goes there instead.
      if (err instanceof NotLeaderError) return this.readOnLeader<T>(req, signal);
      throw err;
    }
    return { result: result as QueryResult<T>, meta: { knownLeader: true, lastContactMs: this.lastContact() } };
  }

  /**
   * Whether this server has applied everything the leader had committed when asked (on the leader:
   * once it is ready, leaderReady()). False when the leader cannot be asked or this server does not
   * catch up within APPLY_WAIT_MS. For what must not be answered from local state that may be
   * behind: a default read on a follower, a token unknown here.
   */
  async caughtUpWithLeader(): Promise<boolean> {
    if (this.raft.isLeader()) {
      if (this.raft.leaderReady()) return true;
      // A new leader that has not yet applied what it learned was committed from its no-op.
      return this.raft.readBarrier(FORWARD_TIMEOUT_MS).then(
        () => true,
        () => false,
      );
    }
    try {
      return await this.appliedWait.until(await this.commitIndexes.fetch(), APPLY_WAIT_MS);
    } catch {
      return false;
    }
  }

  /** One 'rpc.commitIndex' call to the leader as this server knows it; throws when it cannot answer. */
  private async askCommitIndex(): Promise<number> {
    const leader = this.raft.leader();
    if (!leader || leader.id === this.raft.id) throw new Error(NO_LEADER);
    this.observer.forwarded('commit-index');
    let env: Envelope<number>;
    try {
      env = (await this.transport.call(leader.address, 'rpc.commitIndex', {}, COMMIT_INDEX_CALL_MS)) as Envelope<number>;
    } catch (err) {
      this.observer.forwardFailed('commit-index');
      throw err;
    }
    return fromEnvelope(env);
  }

  /**
   * The leader's side of a follower's default read: its commit index. A new leader first commits its
   * own no-op, so that the index covers everything its predecessors committed (Raft §8).
   */
  private async commitIndexHere(): Promise<Envelope<number>> {
    if (!this.raft.isLeader()) return { ok: false, retry: true, message: NO_LEADER };
    try {
      if (!this.raft.leaderReady()) await this.raft.readBarrier(FORWARD_TIMEOUT_MS);
      return { ok: true, value: this.raft.commitIndex() };
    } catch (err) {
      if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
      return toEnvelope(err);
    }
  }

  private async readOnLeader<T>(req: ForwardedRead, signal?: AbortSignal): Promise<ReadReply<T>> {
    const deadline = monotonicMs() + LEADER_WAIT_MS;
    for (;;) {
      if (this.raft.isLeader()) {
        const env = await this.readHere(req, signal);
        if (env.ok || !('retry' in env)) return fromEnvelope(env) as ReadReply<T>;
      } else {
        const leader = this.raft.leader();
        if (leader) {
          const timeout = (req.minIndex > 0 ? effectiveWait(req.waitMs) : 0) + FORWARD_TIMEOUT_MS;
          let env: Envelope<ReadReply<T>> | undefined;
          this.observer.forwarded('read');
          if (this.forwardLog?.isLevelEnabled('debug')) this.forwardLog.debug({ rpc: 'rpc.read', endpoint: req.endpoint, leader: leader.address }, 'forwarding read to the leader');
          try {
            env = (await this.transport.call(leader.address, 'rpc.read', req, timeout)) as Envelope<ReadReply<T>>;
          } catch (err) {
            this.observer.forwardFailed('read');
            // Reads change nothing: another try is always safe while the budget lasts.
            if (monotonicMs() >= deadline) throw serverError(`forwarding to the leader failed: ${(err as Error).message}`);
          }
          // The leader's answer, success or error, is final.
          if (env && (env.ok || !('retry' in env))) {
            const reply = fromEnvelope(env);
            return { result: reply.result, meta: { knownLeader: true, lastContactMs: this.lastContact() } };
          }
        }
      }
      if (monotonicMs() >= deadline) throw noLeader();
      await this.leaderWait.wait(Math.min(250, deadline - monotonicMs()));
    }
  }

  /** Writes this leader is proposing, by request id: a re-send that arrives meanwhile waits for the first. */
  private readonly proposing = new Map<string, Promise<Envelope>>();

  /** The stamps this leader puts on its entries, which age the dedup window (log-clock.ts). */
  private readonly logClock = new LogClock(() => this.store.latestRequestStamp(), () => this.store.logTimeNow());

  /**
   * The log's time here, to measure a copy's time on its way against: a leader's own stamping
   * clock, else the latest stamp applied plus the time since. Not the leader's latest stamp applied:
   * that runs behind by the time between stamping its latest entry and applying it (a slow fsync,
   * a follower slow to answer), and a held copy then looked younger by that much — under a loaded
   * disk, a write refused to its client was applied when the cut link healed (partition.test.ts).
   */
  private logTimeHere(): number {
    return this.raft.isLeader() ? this.logClock.peek(this.raft.term()) : this.store.logTimeNow();
  }

  /**
   * A write on this leader: answered from the window or the proposal in flight when re-sent, else
   * checked (ACL, lock-delay) and proposed. Not async itself, and the checks run before the
   * proposal's promise exists: every write passes here, and a chain of async frames per write
   * cost the leader more than the checks do.
   */
  private applyHere(req: ForwardedApply, local = false): Promise<Envelope> {
    if (!this.raft.isLeader()) return Promise.resolve({ ok: false, retry: true, message: NO_LEADER });
    if (req.resent) {
      const applied = this.store.appliedRequest(req.id);
      if (applied) return Promise.resolve(answerOf(applied.result));
      const pending = this.proposing.get(req.id);
      if (pending) return pending;
    }
    // Refused before the log, so surely not applied; the sender's own budget is spent too (or is
    // about to be: it counts down the same duration), and it answers its client.
    // A write that entered here was checked by apply() a moment ago, and waited through no stall.
    if (!local && budgetLeft(req) - inTransit(req.sentAtLogMs, this.logClock.peek(this.raft.term())) <= 0) return Promise.resolve({ ok: false, retry: true, message: EXPIRED });
    let entry: Uint8Array;
    try {
      const answer = this.writes.admit(req.cmd, req.internal ? null : this.acl.resolve(req.token), this.store, this.acl.enabled);
      if (answer !== undefined) return Promise.resolve({ ok: true, value: answer });
      entry = encodeStamped(req.cmd, req.id, this.logClock.stamp(this.raft.term()), req.resent);
    } catch (err) {
      return Promise.resolve(toEnvelope(err));
    }
    let proposed: Promise<unknown>;
    try {
      proposed = this.raft.propose(entry);
    } catch (err) {
      proposed = Promise.reject(err);
    }
    const attempt = this.proposeHere(req.id, proposed);
    this.proposing.set(req.id, attempt);
    return attempt;
  }

  /**
   * The envelope of a proposal; leaves `proposing` once settled — always after applyHere put it
   * there, since awaiting `proposed` suspends even when it is already settled.
   */
  private async proposeHere(id: string, proposed: Promise<unknown>): Promise<Envelope> {
    try {
      return answerOf(await proposed);
    } catch (err) {
      // Refused before it reached the log: surely not applied.
      if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
      if (err instanceof StorageFaultError && !err.outcomeUnknown) return { ok: false, retry: true, message: err.message };
      // Leadership lost, node stopped, storage failed: the entry may be in some log and commit later.
      return { ok: false, retry: true, message: (err as Error).message, maybeApplied: true };
    } finally {
      this.proposing.delete(id);
    }
  }

  private async readHere(req: ForwardedRead, signal?: AbortSignal): Promise<Envelope<ReadReply>> {
    if (!this.raft.isLeader()) return { ok: false, retry: true, message: NO_LEADER };
    try {
      // A new leader serves nothing until its own no-op has committed (the stale-read-after-election bug).
      if (!this.raft.leaderReady()) await this.raft.readBarrier(FORWARD_TIMEOUT_MS);
      const endpoint = this.endpoint(req.endpoint);
      const run = this.runner(endpoint, req.args, req.token);
      // The sender applied the endpoint's policy; a non-blocking read stays one whoever sent it.
      const minIndex = endpoint.blocking ? req.minIndex : 0;
      const result = await this.runRead(endpoint, req.endpoint, req.args, req.token, run, minIndex, req.waitMs, signal);
      return { ok: true, value: { result, meta: { knownLeader: true, lastContactMs: 0 } } };
    } catch (err) {
      if (err instanceof NotLeaderError) return { ok: false, retry: true, message: NO_LEADER };
      return toEnvelope(err);
    }
  }

  /** blockingQuery, except that a non-blocking read of an endpoint marked `reuse` may be shared (reused-reads.ts). */
  private runRead(
    endpoint: ReadEndpoint,
    name: string,
    args: unknown,
    token: string | undefined,
    run: () => QueryResult,
    minIndex: number,
    waitMs: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<QueryResult> | QueryResult {
    if (minIndex > 0 || !endpoint.reuse) return blockingQuery(this.store, run, minIndex, waitMs, signal, this.blocking);
    // A large listing read first after a start or a restore is built in steps (settled-read.ts);
    // only a settled answer is shared.
    return this.reused.get(this.store.lastIndex, name, token, args, () => settledRead(this.store, run));
  }

  private endpoint(name: string): ReadEndpoint {
    // An own property only: a name from the wire must not reach Object.prototype.
    const endpoint = Object.hasOwn(this.reads, name) ? this.reads[name] : undefined;
    if (!endpoint) throw serverError(`unknown read endpoint ${name}`);
    return endpoint;
  }

  /**
   * The blocking closure: the endpoint's run with this store and the token's Authorizer, resolved
   * once — at the first run, not before: a default or consistent read first waits until this server
   * has applied what the leader had committed, and a token made just before the read is among that.
   * Resolved before the wait, a follower refused a token the leader already held ("ACL not found").
   */
  private runner(endpoint: ReadEndpoint, args: unknown, token: string | undefined): () => QueryResult {
    let authz: Authorizer | undefined;
    return () => {
      const result = endpoint.run({ store: this.store, token, authz: (authz ??= this.acl.resolve(token)) }, args);
      // After a snapshot restore no read answers an index below the restore's (Store.readFloor):
      // the restored tables carry older indexes, and a client holding a newer one would wait on them.
      const floor = this.store.readFloor;
      return result.index >= floor ? result : { ...result, index: floor };
    };
  }

  private localMeta(): ReadMeta {
    // A server that cannot write its log is not following anyone: its state is frozen. One that
    // started without Raft state and has not caught up yet knows its state is behind (issue #16).
    const following = this.raft.leader() !== null && this.raft.storageFault()?.kind !== 'log' && !this.raft.catchingUp();
    return { knownLeader: following, lastContactMs: this.lastContact() };
  }

  private lastContact(): number {
    const ms = this.raft.lastContactMs();
    return Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) : 0;
  }
}

/** The FSM's result as an answer: a refused command is the client's mistake (400). */
function answerOf(result: unknown): Envelope {
  return result instanceof CommandError ? toEnvelope(badRequest(result.message)) : { ok: true, value: result };
}

/**
 * The ms a write that just arrived may still be proposed in: what the sender had left, less the
 * time this process was not reading; from a sender of a version before budgets, its wall-clock
 * deadline against this clock (as those versions did); from neither, the usual budget.
 */
function budgetLeft(req: ForwardedApply): number {
  if (typeof req.budgetMs === 'number') return receivedBudgetLeft(req.budgetMs);
  if (typeof req.deadline === 'number') return req.deadline - Date.now();
  return WRITE_BUDGET_MS;
}

/** How long a copy was on its way, by the log's time at both ends (0 when unknown or negative). */
function inTransit(sentAtLogMs: number | undefined, here: number): number {
  if (typeof sentAtLogMs !== 'number' || !Number.isFinite(sentAtLogMs) || sentAtLogMs <= 0) return 0;
  return here > 0 ? Math.max(0, here - sentAtLogMs) : 0;
}

/** Whether a failed call surely never reached the remote handler (so the write cannot be in a log). */
function surelyNotDelivered(err: unknown): boolean {
  if (err instanceof RemoteError) return true;
  const code = err instanceof RpcConnectionError ? (err.cause as NodeJS.ErrnoException | undefined)?.code : undefined;
  return code === 'ECONNREFUSED';
}
