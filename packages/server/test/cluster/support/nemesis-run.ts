/**
 * One nemesis run (see nemesis.test.ts for what it does and checks): four workloads against a
 * cluster while the Nemesis faults its leader, round after round; then the final state is read and
 * every checker gives its verdict. Throws with the summary and the first problems when anything is
 * wrong (or a workload made too little progress for a pass to mean anything). Shared by the
 * loopback run (nemesis.test.ts) and the run on hosts of their own (multi-host-nemesis.test.ts).
 */
import { checkLinearizable, HistoryRecorder, type CheckResult, type Operation } from './linearizability';
import {
  checkCreates,
  checkSeqRegisters,
  createViolations,
  lockOverlaps,
  seqViolations,
  type CreateRecord,
} from './nemesis-checkers';
import { Nemesis, type FaultKind, type FaultTarget } from './nemesis-faults';
import {
  attemptRead,
  catalogClient,
  createClient,
  createLockSession,
  CREATE_PREFIX,
  EventClock,
  instanceId,
  instanceSeqs,
  lockClient,
  readRegister,
  registerClient,
  SERVICE,
  WorkloadStats,
  type InstanceLog,
  type LockState,
  type WorkloadContext,
} from './nemesis-workloads';

const CREATE_CLIENTS = 6;
const REGISTER_CLIENTS = 6;
const REGISTER_KEYS = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`);
const CATALOG_CLIENTS = 6;
const LOCK_CLIENTS = 4;
/** Client timeout per request: above the servers' write budget (7 s, re-sends included). */
const REQUEST_TIMEOUT_MS = 12_000;

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export interface NemesisRunOptions {
  rounds: number;
  /** Each round runs these faults in order, each aimed at the leader of the moment. */
  faults: readonly FaultKind[];
  /** Where clients send requests (default every server): see WorkloadContext.targets. */
  targets?: readonly number[];
  /** The last log lines of every agent, for a failure's message. */
  diagnostics(): string;
  /** Called with the Nemesis once made, so that a test's cleanup can release its faults. */
  onNemesis?(n: Nemesis): void;
}

/** A consistent read that must succeed eventually (the cluster is healthy again by then). */
async function settledRead(ctx: WorkloadContext, diagnostics: () => string, path: string, notFoundOk: boolean, timeoutMs = 30_000) {
  const read: WorkloadContext = { ...ctx, stopping: () => false, timeoutMs: 10_000 };
  const targets = ctx.targets ?? ctx.cluster.servers.map((s) => s.index);
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    const a = await attemptRead(read, targets[i % targets.length] as number, path, notFoundOk);
    if (a.outcome === 'ok') return a.answer;
    if (Date.now() > deadline) throw new Error(`final read ${path}: ${a.reason}\n${diagnostics()}`);
    await sleep(300);
  }
}

/** Linearizability verdict per key, so that the summary can count the keys that fail. */
function checkPerKey(history: readonly Operation[]): { bad: Array<CheckResult & { ok: false }>; keys: number } {
  const keys = [...new Set(history.map((o) => o.key))].sort();
  const bad: Array<CheckResult & { ok: false }> = [];
  for (const key of keys) {
    const verdict = checkLinearizable(history.filter((o) => o.key === key), { initial: null });
    if (!verdict.ok) bad.push(verdict);
  }
  return { bad, keys: keys.length };
}

/** Runs the workloads and the faults, checks, logs the summary; throws on any problem. */
export async function runNemesis(c: FaultTarget, options: NemesisRunOptions): Promise<void> {
  const startedAt = Date.now();
  const { rounds: ROUNDS, faults: FAULTS, diagnostics } = options;
  // Generous: three servers starting at once take seconds of CPU each on a shared machine.
  await c.waitForLeader(60_000);
  await c.waitAllCaughtUp(60_000);
  const lines: string[] = [];
  const say = (line: string): void => {
    lines.push(line);
  };
  const n = new Nemesis(c, say);
  options.onNemesis?.(n);
  if (!(await n.settle(20_000))) throw new Error(`cluster did not settle\n${diagnostics()}`);

  let stop = false;
  const ctx: WorkloadContext = { cluster: c, targets: options.targets, stopping: () => stop, timeoutMs: REQUEST_TIMEOUT_MS };

  // State for each workload.
  const creates: CreateRecord[] = [];
  const createStats = new WorkloadStats();
  const registerHistory = new HistoryRecorder();
  const registerStats = new WorkloadStats();
  const catalogHistory = new HistoryRecorder();
  const catalogStats = new WorkloadStats();
  const instances = Array.from({ length: CATALOG_CLIENTS }, (): InstanceLog => ({ writes: [], reads: [] }));
  const lockStats = new WorkloadStats();
  const lock: LockState = { holds: [], releaseFalse: [], heldAfterUnknownAcquire: 0, possiblyHeld: 0, unverified: 0 };
  const clock = new EventClock();
  const sessions: string[] = [];
  for (let i = 0; i < LOCK_CLIENTS; i++) sessions.push(await createLockSession(ctx, i));
  let lockDeadline = Number.POSITIVE_INFINITY;

  const clients: Array<Promise<void>> = [
    ...Array.from({ length: CREATE_CLIENTS }, (_, i) => createClient(ctx, i, creates, createStats)),
    ...Array.from({ length: REGISTER_CLIENTS }, (_, i) => registerClient(ctx, i, REGISTER_KEYS, registerHistory, registerStats)),
    ...Array.from({ length: CATALOG_CLIENTS }, (_, i) => catalogClient(ctx, i, instances[i] as InstanceLog, catalogHistory, catalogStats)),
    ...sessions.map((s, i) => lockClient(ctx, i, s, clock, lock, lockStats, () => lockDeadline)),
  ];
  // A client that throws is a bug of the test (or a torn answer); let the run finish first.
  const clientErrors: string[] = [];
  const running = clients.map((p, i) => p.catch((err: unknown) => void clientErrors.push(`client #${i}: ${(err as Error).stack ?? err}`)));

  try {
    await sleep(2_000);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of FAULTS) {
        await n.run(kind);
        if (!(await n.settle(25_000))) say(`nemesis: cluster not settled 25 s after ${kind}`);
        await sleep(1_500);
      }
    }
  } finally {
    n.release();
    stop = true;
    lockDeadline = Date.now() + 30_000;
    await Promise.all(running);
  }
  const faultsOverAt = Date.now();

  // ---- final state, read once the cluster is whole again
  if (!(await n.settle(30_000))) throw new Error(`cluster did not settle after the nemesis\n${diagnostics()}`);
  const keysAnswer = await settledRead(ctx, diagnostics, `/v1/kv/${CREATE_PREFIX}?keys&consistent`, true);
  const existing = new Set<string>(keysAnswer.status === 404 ? [] : keysAnswer.json<string[]>());
  const finalCatalog = instanceSeqs(await settledRead(ctx, diagnostics, `/v1/catalog/service/${SERVICE}?consistent`, false));
  // One last read of every register after everything, part of the history.
  for (const key of REGISTER_KEYS) {
    for (let attempt = 0; attempt < 20; attempt++) {
      if ((await readRegister(ctx, registerHistory, 'final', key, registerStats, attempt % 3)) !== undefined) break;
      await sleep(300);
    }
  }

  // ---- verdicts
  const w1 = checkCreates(creates, existing);
  const w2History = registerHistory.history();
  const w2 = checkPerKey(w2History);
  const w3History = catalogHistory.history();
  const w3Lin = checkPerKey(w3History);
  const w3 = checkSeqRegisters(
    new Map(instances.map((log, i) => [instanceId(i), { ...log, final: finalCatalog.get(instanceId(i)) ?? null }])),
  );
  const overlaps = lockOverlaps(lock.holds);

  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
  const okCounts = (h: HistoryRecorder): string => Object.entries(h.okCounts()).map(([k, v]) => `${k} ${v}`).join(', ');
  const summary = [
    `nemesis summary (${ROUNDS} rounds, ${n.faults.length} faults, faults over after ${seconds(faultsOverAt - startedAt)}, checked after ${seconds(Date.now() - startedAt)})`,
    ...n.faults.map((f) => `  fault ${f.kind} s${f.server} at +${seconds(f.startedAt)} for ${seconds(f.lastedMs)}, new leader ${f.nextLeader === undefined ? 'none seen' : `s${f.nextLeader}`}`),
    ...lines.filter((l) => l.includes('not settled')).map((l) => `  ${l}`),
    `W1 create cas=0: ${createStats.line()}`,
    `   unanswered: ${createStats.reasonLine()}`,
    `   VIOLATIONS ${createViolations(w1)}: applied-but-false ${w1.appliedButFalse.length}, false-and-absent ${w1.falseAndAbsent.length}, lost ${w1.lost.length}, failed-but-present ${w1.failedButPresent.length}, phantom ${w1.phantom.length}` +
      (createViolations(w1) > 0 ? ` e.g. ${[...w1.appliedButFalse, ...w1.falseAndAbsent, ...w1.lost, ...w1.failedButPresent, ...w1.phantom].slice(0, 5).join(' ')}` : ''),
    `W2 kv put/get/cas on ${REGISTER_KEYS.length} keys: ${registerStats.line()}; history ${w2History.length} ops (ok: ${okCounts(registerHistory)})`,
    `   unanswered: ${registerStats.reasonLine()}`,
    `   VIOLATIONS ${w2.bad.length}: keys not linearizable ${w2.bad.filter((b) => b.kind === 'violation').length}, undecided ${w2.bad.filter((b) => b.kind === 'unknown').length} of ${w2.keys}` +
      (w2.bad.length > 0 ? ` (${w2.bad.map((b) => b.key).join(' ')})` : ''),
    `W3 catalog register: ${catalogStats.line()}; history ${w3History.length} ops`,
    `   unanswered: ${catalogStats.reasonLine()}`,
    `   VIOLATIONS ${seqViolations(w3) + w3Lin.bad.length}: final older than acked ${w3.olderThanAcked.length}, final never written ${w3.phantomFinal.length}, reads older than acked ${w3.badReads.length}, instances not linearizable ${w3Lin.bad.length}` +
      ` (final seqs ${instances.map((log, i) => `${finalCatalog.get(instanceId(i)) ?? '-'}/${log.writes.filter((w) => w.outcome === 'ok').at(-1)?.seq ?? '-'}`).join(' ')} final/last-acked)`,
    `W4 lock, ${LOCK_CLIENTS} clients: ${lockStats.line()}; holds ${lock.holds.length} (${lock.heldAfterUnknownAcquire} found by a read after an unknown acquire), releases of unknown outcome ${lock.possiblyHeld}, unverified ${lock.unverified}`,
    `   unanswered: ${lockStats.reasonLine()}`,
    `   VIOLATIONS ${overlaps.length + lock.releaseFalse.length}: overlapping holders ${overlaps.length}, release answered false while held ${lock.releaseFalse.length}`,
  ];
  console.log(summary.join('\n'));

  const problems: string[] = [...clientErrors];
  if (createViolations(w1) > 0) problems.push(`W1: ${JSON.stringify(w1).slice(0, 800)}`);
  for (const b of w2.bad.slice(0, 2)) problems.push(`W2 ${b.kind} on ${b.key}:\n${b.explanation.slice(0, 3000)}`);
  for (const b of w3Lin.bad.slice(0, 2)) problems.push(`W3 ${b.kind} on ${b.key}:\n${b.explanation.slice(0, 3000)}`);
  if (seqViolations(w3) > 0) problems.push(`W3: ${JSON.stringify(w3).slice(0, 800)}`);
  if (overlaps.length > 0) problems.push(`W4 overlaps: ${JSON.stringify(overlaps.slice(0, 5))}`);
  if (lock.releaseFalse.length > 0) problems.push(`W4 releases answered false while held: ${JSON.stringify(lock.releaseFalse.slice(0, 5))}`);
  // The run must have exercised every workload, or a pass means nothing.
  if (createStats.outcomes.get('create:answered-true') < 50) problems.push(`W1 made too little progress: ${createStats.line()}`);
  if (registerHistory.okCounts().write < 50 || registerHistory.okCounts().cas < 20) problems.push(`W2 made too little progress: ${registerStats.line()}`);
  if (catalogHistory.okCounts().write < 30) problems.push(`W3 made too little progress: ${catalogStats.line()}`);
  if (new Set(lock.holds.map((h) => h.client)).size < 2 || lock.holds.length < 10) problems.push(`W4 made too little progress: ${lock.holds.length} holds`);
  if (n.faults.length !== ROUNDS * FAULTS.length) problems.push(`only ${n.faults.length} faults ran`);
  if (problems.length > 0) throw new Error(`${summary.join('\n')}\n\n${problems.join('\n\n')}`);
}
