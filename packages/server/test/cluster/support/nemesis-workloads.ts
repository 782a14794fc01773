/**
 * The four client workloads of nemesis.test.ts. Every client is sequential (one request at a
 * time), picks one of the servers at random for each request — so writes that enter a follower
 * are forwarded to the leader — and records what it saw, classifying each outcome as
 * `ok` (answered), `fail` (certainly not applied: a 4xx, or a connection refused before the
 * request was sent) or `info` (unknown: a timeout, a reset connection, a 5xx).
 */
import type { HttpAnswer } from './http-answer';
import type { FaultTarget } from './nemesis-faults';
import type { HistoryRecorder, RegisterValue } from './linearizability';
import { Tally, type CreateRecord, type Hold, type Outcome, type SeqRead, type SeqWrite } from './nemesis-checkers';

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

export interface WorkloadContext {
  cluster: Pick<FaultTarget, 'servers' | 'http'>;
  /**
   * The agents clients send their requests to, by the cluster's index (default: every server).
   * On hosts these include client agents, which forward to a server across the network.
   */
  targets?: readonly number[];
  /** True once the clients should finish their current operation and return. */
  stopping(): boolean;
  /**
   * Longest wait for one request. Above the servers' own budget for a write (re-sends included),
   * so that an answered write cannot still be on its way into the log when its client moves on.
   */
  timeoutMs: number;
}

export type Attempt = { outcome: 'ok'; answer: HttpAnswer } | { outcome: 'fail' | 'info'; reason: string };

/** A write: 200 is `ok`, 4xx `fail`, anything else (5xx, reset, timeout) `info`; a refused connection never reached the server. */
export async function attemptWrite(ctx: WorkloadContext, server: number, path: string, body: unknown): Promise<Attempt> {
  try {
    const answer = await ctx.cluster.http(server, 'PUT', path, body, { timeoutMs: ctx.timeoutMs });
    if (answer.status === 200) return { outcome: 'ok', answer };
    const reason = `${answer.status} ${answer.body.trim().slice(0, 60)}`;
    return { outcome: answer.status >= 400 && answer.status < 500 ? 'fail' : 'info', reason };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED') return { outcome: 'fail', reason: code };
    return { outcome: 'info', reason: code ?? (/timed out/.test((err as Error).message) ? 'timeout' : (err as Error).message.slice(0, 60)) };
  }
}

/** A read: 200 (and 404 where `notFoundOk`) are answers; anything else is no answer (`fail`: a read changes nothing). */
export async function attemptRead(ctx: WorkloadContext, server: number, path: string, notFoundOk: boolean): Promise<Attempt> {
  try {
    const answer = await ctx.cluster.http(server, 'GET', path, undefined, { timeoutMs: ctx.timeoutMs });
    if (answer.status === 200 || (notFoundOk && answer.status === 404)) return { outcome: 'ok', answer };
    return { outcome: 'fail', reason: `${answer.status} ${answer.body.trim().slice(0, 60)}` };
  } catch (err) {
    return { outcome: 'fail', reason: (err as NodeJS.ErrnoException).code ?? 'timeout/error' };
  }
}

function servers(ctx: WorkloadContext): readonly number[] {
  return ctx.targets ?? ctx.cluster.servers.map((s) => s.index);
}

/** Counts of outcomes, and of the reasons behind the unanswered ones. */
export class WorkloadStats {
  readonly outcomes = new Tally();
  readonly reasons = new Tally();

  count(kind: string, a: Attempt): void {
    this.outcomes.add(`${kind}:${a.outcome}`);
    if (a.outcome !== 'ok') this.reasons.add(a.reason);
  }

  total(outcome: Outcome): number {
    let n = 0;
    for (const [k, v] of this.outcomes.counts) if (k.endsWith(`:${outcome}`)) n += v;
    return n;
  }

  line(): string {
    return `ok ${this.total('ok')} / failed ${this.total('fail')} / indeterminate ${this.total('info')} (${this.outcomes.format()})`;
  }

  reasonLine(top = 6): string {
    return [...this.reasons.counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([r, n]) => `${n}× ${r}`)
      .join('; ');
  }
}

// ---------------------------------------------------------------------------------------------
// 1. create-if-absent of fresh keys

export const CREATE_PREFIX = 'nemesis/create/';

export async function createClient(ctx: WorkloadContext, client: number, records: CreateRecord[], stats: WorkloadStats): Promise<void> {
  for (let n = 0; !ctx.stopping(); n++) {
    const key = `${CREATE_PREFIX}c${client}-${n}`;
    const a = await attemptWrite(ctx, pick(servers(ctx)), `/v1/kv/${key}?cas=0`, `created by c${client}`);
    stats.count('create', a);
    if (a.outcome === 'ok') {
      const answer = a.answer.body.trim();
      if (answer !== 'true' && answer !== 'false') throw new Error(`create ${key}: unexpected answer ${a.answer.body}`);
      records.push({ key, outcome: 'ok', answer: answer === 'true' });
      stats.outcomes.add(`create:answered-${answer}`);
    } else {
      records.push({ key, outcome: a.outcome });
      await sleep(20);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 2. puts, consistent gets and CAS on a set of keys, for the linearizability checker

export const REGISTER_PREFIX = 'nemesis/register/';

interface KvEntry {
  Value: string | null;
  ModifyIndex: number;
  Session?: string;
}

function kvValue(a: HttpAnswer): { value: RegisterValue; index: number; session?: string } {
  if (a.status === 404) return { value: null, index: 0 };
  const entry = a.json<KvEntry[]>()[0];
  if (!entry) return { value: null, index: 0 };
  return { value: entry.Value === null ? '' : Buffer.from(entry.Value, 'base64').toString('utf8'), index: entry.ModifyIndex, session: entry.Session };
}

/** One consistent read of register `key`, recorded; the value and index seen, or undefined when unanswered. */
export async function readRegister(
  ctx: WorkloadContext,
  recorder: HistoryRecorder,
  process: number | string,
  key: string,
  stats: WorkloadStats,
  server = pick(servers(ctx)),
): Promise<{ value: RegisterValue; index: number } | undefined> {
  const op = recorder.invoke(process, { op: 'read', key });
  const a = await attemptRead(ctx, server, `/v1/kv/${REGISTER_PREFIX}${key}?consistent`, true);
  stats.count('read', a);
  if (a.outcome !== 'ok') {
    op.fail();
    return undefined;
  }
  const seen = kvValue(a.answer);
  op.ok(seen.value);
  return seen;
}

export async function registerClient(
  ctx: WorkloadContext,
  client: number,
  keys: readonly string[],
  recorder: HistoryRecorder,
  stats: WorkloadStats,
): Promise<void> {
  for (let n = 0; !ctx.stopping(); n++) {
    const key = pick(keys);
    const r = Math.random();
    if (r < 0.3) {
      await readRegister(ctx, recorder, client, key, stats);
    } else if (r < 0.6) {
      // Every value is written once in the whole run, so "the key still holds v" and "its
      // ModifyIndex has not moved since v was read" are the same thing — unless a write is applied twice.
      const value = `c${client}-${n}`;
      const op = recorder.invoke(client, { op: 'write', key, value });
      const a = await attemptWrite(ctx, pick(servers(ctx)), `/v1/kv/${REGISTER_PREFIX}${key}`, value);
      stats.count('write', a);
      if (a.outcome === 'ok' && a.answer.body.trim() === 'true') op.ok();
      else if (a.outcome === 'fail') op.fail();
      else op.info();
    } else {
      const seen = await readRegister(ctx, recorder, client, key, stats);
      if (seen === undefined || ctx.stopping()) continue;
      const value = `c${client}-${n}`;
      const op = recorder.invoke(client, { op: 'cas', key, expected: seen.value, value });
      const a = await attemptWrite(ctx, pick(servers(ctx)), `/v1/kv/${REGISTER_PREFIX}${key}?cas=${seen.index}`, value);
      stats.count('cas', a);
      if (a.outcome === 'ok') {
        const swapped = a.answer.body.trim() === 'true';
        stats.outcomes.add(swapped ? 'cas:swapped' : 'cas:not-swapped');
        op.ok(swapped);
      } else if (a.outcome === 'fail') op.fail();
      else op.info();
    }
    if (Math.random() < 0.5) await sleep(Math.random() * 10);
  }
}

// ---------------------------------------------------------------------------------------------
// 3. catalog registers: each client its own instance, with increasing seq in Port and Meta

export const SERVICE = 'nemesis-svc';

export interface InstanceLog {
  writes: SeqWrite[];
  reads: SeqRead[];
}

export const instanceId = (client: number): string => `nemesis-inst-${client}`;

interface CatalogEntry {
  ServiceID: string;
  ServicePort: number;
  ServiceMeta: Record<string, string> | null;
}

/** The seq each instance of the service shows, from a `/v1/catalog/service` answer. */
export function instanceSeqs(a: HttpAnswer): Map<string, number> {
  const seqs = new Map<string, number>();
  for (const e of a.json<CatalogEntry[]>()) {
    const meta = Number(e.ServiceMeta?.seq);
    if (meta !== e.ServicePort) throw new Error(`instance ${e.ServiceID}: Port ${e.ServicePort} and Meta.seq ${e.ServiceMeta?.seq} disagree`);
    seqs.set(e.ServiceID, e.ServicePort);
  }
  return seqs;
}

export async function catalogClient(
  ctx: WorkloadContext,
  client: number,
  log: InstanceLog,
  recorder: HistoryRecorder,
  stats: WorkloadStats,
): Promise<void> {
  const id = instanceId(client);
  let acked = 0;
  for (let seq = 1; !ctx.stopping(); seq++) {
    const body = {
      Node: `nemesis-node-${client}`,
      Address: `10.77.0.${client + 1}`,
      Service: { ID: id, Service: SERVICE, Port: seq, Meta: { seq: String(seq), client: String(client) } },
    };
    const op = recorder.invoke(client, { op: 'write', key: id, value: seq });
    const a = await attemptWrite(ctx, pick(servers(ctx)), '/v1/catalog/register', body);
    stats.count('register', a);
    const outcome: Outcome = a.outcome === 'ok' ? (a.answer.body.trim() === 'true' ? 'ok' : 'info') : a.outcome;
    log.writes.push({ seq, outcome });
    if (outcome === 'ok') op.ok();
    else if (outcome === 'fail') op.fail();
    else op.info();
    if (outcome === 'ok') acked = seq;
    else {
      await sleep(20);
      continue;
    }
    // Read back, through any server: never older than what was just acknowledged.
    const readOp = recorder.invoke(client, { op: 'read', key: id });
    const r = await attemptRead(ctx, pick(servers(ctx)), `/v1/catalog/service/${SERVICE}?consistent`, false);
    stats.count('read', r);
    if (r.outcome !== 'ok') {
      readOp.fail();
      continue;
    }
    const observed = instanceSeqs(r.answer).get(id) ?? null;
    readOp.ok(observed);
    log.reads.push({ ackedBefore: acked, attemptedBefore: seq, observed });
  }
}

// ---------------------------------------------------------------------------------------------
// 4. a lock without fencing: acquire / release with sessions tied to no check

export const LOCK_KEY = 'nemesis/lock';

export interface LockState {
  holds: Hold[];
  /** A first release of a held lock answered `false`: the lock was no longer ours. */
  releaseFalse: Array<{ client: number; at: number }>;
  /** Holds that started from a read after an acquire of unknown outcome. */
  heldAfterUnknownAcquire: number;
  /** Releases of unknown outcome, after which the client treated the lock as possibly held until a read cleared it. */
  possiblyHeld: number;
  /** Clients that gave up re-verifying (ran out of time), so could not vouch for their last release. */
  unverified: number;
}

/** One clock for every client's lock events: the order in which this process saw them. */
export class EventClock {
  private t = 0;
  tick(): number {
    return ++this.t;
  }
}

/** Creates a session with no health checks (so killing a server cannot invalidate it) and no lock-delay, no TTL. */
export async function createLockSession(ctx: WorkloadContext, client: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const server = client % ctx.cluster.servers.length;
    const a = await attemptWrite(ctx, server, '/v1/session/create', { Name: `nemesis-lock-${client}`, Checks: [], LockDelay: '0s', Behavior: 'release' });
    if (a.outcome === 'ok') return a.answer.json<{ ID: string }>().ID;
    if (Date.now() > deadline) throw new Error(`session for lock client ${client}: ${a.reason}`);
    await sleep(200);
  }
}

export async function lockClient(
  ctx: WorkloadContext,
  client: number,
  session: string,
  clock: EventClock,
  state: LockState,
  stats: WorkloadStats,
  hardDeadline: () => number,
): Promise<void> {
  /** Who holds the lock, by a consistent read; undefined when no server answered in time. */
  const holder = async (): Promise<string | null | undefined> => {
    while (Date.now() < hardDeadline()) {
      const a = await attemptRead(ctx, pick(servers(ctx)), `/v1/kv/${LOCK_KEY}?consistent`, true);
      stats.count('verify', a);
      if (a.outcome === 'ok') return kvValue(a.answer).session ?? null;
      await sleep(100);
    }
    return undefined;
  };
  /** Releases until the lock is surely not ours; false when that could not be established in time. */
  const release = async (): Promise<boolean> => {
    let first = true;
    while (Date.now() < hardDeadline()) {
      const a = await attemptWrite(ctx, pick(servers(ctx)), `/v1/kv/${LOCK_KEY}?release=${session}`, '');
      stats.count('release', a);
      if (a.outcome === 'ok') {
        const released = a.answer.body.trim() === 'true';
        // After an unknown attempt a `false` just means that attempt did release it.
        if (!released && first) state.releaseFalse.push({ client, at: clock.tick() });
        return true;
      }
      if (a.outcome === 'info') {
        // Possibly still held: the lock is ours until a read says otherwise.
        first = false;
        state.possiblyHeld++;
        const h = await holder();
        if (h === undefined) return false;
        if (h !== session) return true;
      }
      await sleep(50);
    }
    return false;
  };

  while (!ctx.stopping()) {
    const a = await attemptWrite(ctx, pick(servers(ctx)), `/v1/kv/${LOCK_KEY}?acquire=${session}`, `held by c${client}`);
    stats.count('acquire', a);
    let from: number | undefined;
    if (a.outcome === 'ok') {
      const got = a.answer.body.trim() === 'true';
      stats.outcomes.add(got ? 'acquire:true' : 'acquire:false');
      if (got) from = clock.tick();
    } else if (a.outcome === 'info') {
      // Maybe acquired without knowing: find out before anything else.
      const h = await holder();
      if (h === undefined) {
        state.unverified++;
        return;
      }
      if (h === session) {
        from = clock.tick();
        state.heldAfterUnknownAcquire++;
      }
    }
    if (from === undefined) {
      await sleep(10 + Math.random() * 30);
      continue;
    }
    await sleep(20 + Math.random() * 40); // the critical section
    state.holds.push({ client, from, to: clock.tick() });
    if (!(await release())) {
      state.unverified++;
      return;
    }
    await sleep(Math.random() * 20);
  }
}
