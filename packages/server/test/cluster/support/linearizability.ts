/**
 * A linearizability checker for histories of read / write / compare-and-set on
 * independent registers, in the style of Wing & Gong as refined by Lowe and by
 * Porcupine: the history is split by key (a register history is linearizable
 * exactly when each key's is), and each key is searched depth-first for an
 * order of linearization points, memoising (set of linearized ops, register
 * value) so that no configuration is explored twice.
 *
 * The memo alone is not enough once a history carries many indeterminate
 * writes: each one may take effect at any point after its call or never, so
 * a search that has to backtrack across k of them revisits up to 2^k distinct
 * sets. A partitioned cluster answers a burst of writes with 5xx in a few
 * milliseconds, which is exactly that shape (a run once gave up after 2,000,000
 * steps on 779 operations of one key). Two reductions, both exact, keep such
 * histories cheap — see `reduce`:
 * - an indeterminate write whose value nobody ever observed is left out (it
 *   may as well never have happened);
 * - an indeterminate write whose value is unique and was observed must have
 *   taken effect before the first observer returned, which becomes its deadline.
 * After them, a key whose writes all wrote distinct values (no cas) is decided
 * without a search, in O(n log n), by the zone conditions of register-zones.ts;
 * the search remains for the rest (cas, repeated values).
 *
 * Operation results follow Jepsen:
 * - `ok`   — it happened, between `invoke` and `complete`, and `output` is what
 *            the client saw (a read's value; whether a cas swapped);
 * - `fail` — it definitely did not take effect (it is left out of the search);
 * - `info` — unknown (timeout, connection lost): it may take effect at any time
 *            after `invoke`, or never. An `info` read constrains nothing and is
 *            left out.
 */

import { checkByZones } from './register-zones';

export type RegisterValue = string | number | null;

interface OpBase {
  /** Who issued it: a client's operations never overlap one another. */
  process: number | string;
  key: string;
  /** Logical or wall-clock time of the call; only the order of times matters. */
  invoke: number;
  /** Time of the response; required for `ok` and `fail`, ignored for `info`. */
  complete?: number;
  result: 'ok' | 'fail' | 'info';
}

export interface ReadOp extends OpBase {
  op: 'read';
  /** The value read; `null` (or absent) means the register had no value. */
  output?: RegisterValue;
}

export interface WriteOp extends OpBase {
  op: 'write';
  value: RegisterValue;
}

export interface CasOp extends OpBase {
  op: 'cas';
  expected: RegisterValue;
  value: RegisterValue;
  /**
   * For an `ok` cas: `true` (the default) when it swapped, `false` when the
   * comparison failed — an observation that the register did not hold
   * `expected`. Record a cas that was rejected without being applied as
   * `fail` only when the rejection tells nothing about the register.
   */
  output?: boolean;
}

export type Operation = ReadOp | WriteOp | CasOp;

export interface CheckOptions {
  /** The value of every register before the history starts (default `null`). */
  initial?: RegisterValue;
  /** Search steps allowed per key before giving up with `unknown` (default 2,000,000). */
  maxSteps?: number;
  /**
   * Apply the exact reductions of indeterminate writes before searching (default true). Off only to
   * cross-check that they never change a verdict.
   */
  reduce?: boolean;
}

export type CheckResult =
  | { ok: true }
  | { ok: false; kind: 'violation'; key: string; explanation: string }
  /** The search ran out of budget; nothing was proven either way. `ok` stays false so it is never mistaken for a pass. */
  | { ok: false; kind: 'unknown'; key: string; explanation: string };

const DEFAULT_MAX_STEPS = 2_000_000;
/** Steps spent looking for the search's (more detailed) account of a violation the zones already found. */
const EXPLAIN_STEPS = 200_000;

/** Checks a whole history, key by key, and reports the first violation (or the first key it could not decide). */
export function checkLinearizable(history: readonly Operation[], options: CheckOptions = {}): CheckResult {
  const byKey = new Map<string, Operation[]>();
  for (const op of history) {
    validate(op);
    const list = byKey.get(op.key);
    if (list) list.push(op);
    else byKey.set(op.key, [op]);
  }
  let undecided: CheckResult | undefined;
  for (const key of [...byKey.keys()].sort()) {
    const result = checkRegister(key, byKey.get(key) ?? [], options);
    if (!result.ok && result.kind === 'violation') return result;
    if (!result.ok && undecided === undefined) undecided = result;
  }
  return undecided ?? { ok: true };
}

function validate(op: Operation): void {
  if (op.result !== 'info' && op.complete === undefined) {
    throw new Error(`operation of process ${op.process} on ${op.key} is ${op.result} but has no complete time`);
  }
  if (op.complete !== undefined && op.result !== 'info' && op.complete < op.invoke) {
    throw new Error(`operation of process ${op.process} on ${op.key} completes (${op.complete}) before it is invoked (${op.invoke})`);
  }
}

/** True when the operation can have changed or observed the register, i.e. it takes part in the search. */
function matters(op: Operation): boolean {
  if (op.result === 'fail') return false;
  if (op.op === 'read' && op.result === 'info') return false;
  return true;
}

/** Applies `op` to a register holding `state`: whether that agrees with what the client saw, and the value after. */
function step(state: RegisterValue, op: Operation): { legal: boolean; next: RegisterValue } {
  switch (op.op) {
    case 'read':
      return { legal: state === (op.output ?? null), next: state };
    case 'write':
      return { legal: true, next: op.value };
    case 'cas': {
      const matches = state === op.expected;
      if (op.result === 'info') return { legal: true, next: matches ? op.value : state };
      const swapped = op.output ?? true;
      return { legal: swapped === matches, next: swapped ? op.value : state };
    }
  }
}

/** One event of the history as a node of a doubly linked list (so calls can be lifted out and put back cheaply). */
interface Event {
  id: number;
  time: number;
  /** For a call: its return event. Undefined for a return. */
  match?: Event;
  prev: Event | undefined;
  next: Event | undefined;
}

/** What the value `op` leaves in the register when it takes effect, or undefined when it never changes it. */
function written(op: Operation): { value: RegisterValue } | undefined {
  if (op.op === 'write') return { value: op.value };
  if (op.op === 'cas' && (op.result === 'info' || (op.output ?? true))) return { value: op.value };
  return undefined;
}

/**
 * The operations that take part in the search, and for each the latest time
 * it can take effect (its return; Infinity for an indeterminate one unless an
 * observation bounds it). Both reductions are exact — the reduced history is
 * linearizable if and only if the original one is:
 *
 * 1. Drop an `info` write (or `info` cas) whose value no operation observes —
 *    no read returned it and no cas expected it. Take any linearization of the
 *    original in which it took effect: until the next change of the register,
 *    nothing linearized there can have looked at the register positively (that
 *    would be an observation of the value), and an `info` cas there did not
 *    swap, so it can be moved to the end. Removing the write then leaves every
 *    other operation legal. The argument needs every observation to be a
 *    positive one, so this is off when the key has a cas that reported a
 *    failed comparison (which observes "anything but `expected`").
 * 2. An `info` write of a value written by no other operation (and not the
 *    initial value) that some completed operation observed must have taken
 *    effect before that observer did, hence before the observer returned.
 */
function reduce(all: readonly Operation[], initial: RegisterValue): { ops: Operation[]; deadlines: number[]; dropped: number } {
  const candidates = all.filter(matters);
  const observed = new Set<RegisterValue>();
  let negativeObservation = false;
  // Earliest return of a completed operation that saw each value.
  const firstSeen = new Map<RegisterValue, number>();
  const seenBy = (value: RegisterValue, op: Operation): void => {
    observed.add(value);
    if (op.result !== 'ok') return;
    const at = op.complete as number;
    const before = firstSeen.get(value);
    if (before === undefined || at < before) firstSeen.set(value, at);
  };
  const writers = new Map<RegisterValue, number>();
  for (const op of candidates) {
    if (op.op === 'read') seenBy(op.output ?? null, op);
    if (op.op === 'cas') {
      if (op.result === 'ok' && op.output === false) negativeObservation = true;
      else seenBy(op.expected, op);
    }
    const w = written(op);
    if (w) writers.set(w.value, (writers.get(w.value) ?? 0) + 1);
  }
  const ops: Operation[] = [];
  const deadlines: number[] = [];
  for (const op of candidates) {
    const w = written(op);
    if (op.result !== 'info') {
      ops.push(op);
      deadlines.push(op.complete as number);
      continue;
    }
    if (w && !negativeObservation && !observed.has(w.value)) continue;
    let deadline = Infinity;
    if (w && w.value !== initial && writers.get(w.value) === 1) deadline = firstSeen.get(w.value) ?? Infinity;
    ops.push(op);
    deadlines.push(deadline);
  }
  return { ops, deadlines, dropped: candidates.length - ops.length };
}

/** The search's input without reductions: every operation that matters, bounded only by its own return. */
function unreduced(all: readonly Operation[]): { ops: Operation[]; deadlines: number[]; dropped: number } {
  const ops = all.filter(matters);
  return { ops, deadlines: ops.map((op) => (op.result === 'info' ? Infinity : (op.complete as number))), dropped: 0 };
}

function checkRegister(key: string, all: readonly Operation[], options: CheckOptions): CheckResult {
  const initial = options.initial ?? null;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  if (options.reduce === false) return search(key, unreduced(all), initial, maxSteps);
  const reduced = reduce(all, initial);
  const zones = checkByZones(reduced.ops, reduced.deadlines, initial);
  if (!zones.applicable) return search(key, reduced, initial, maxSteps);
  if (zones.ok) return { ok: true };
  // Decided: not linearizable. The search, when it finishes, explains it better (the longest
  // valid prefix); the two are exact procedures, so should they ever disagree the checker is wrong.
  const searched = search(key, reduced, initial, Math.min(maxSteps, EXPLAIN_STEPS));
  if (searched.ok) throw new Error(`linearizability checker bug on key ${JSON.stringify(key)}: the zones say ${zones.explanation}\nbut the search found an order`);
  if (searched.kind === 'violation') return searched;
  return { ok: false, kind: 'violation', key, explanation: `key ${JSON.stringify(key)}: ${zones.explanation}` };
}

/** Depth-first search for an order of linearization points (Wing & Gong, Lowe), memoised on (linearized set, value). */
function search(
  key: string,
  { ops, deadlines, dropped }: { ops: Operation[]; deadlines: number[]; dropped: number },
  initial: RegisterValue,
  maxSteps: number,
): CheckResult {

  // Events in time order; at equal times calls come first, so that touching
  // operations count as concurrent (the permissive reading: no false alarms).
  const events: Array<{ ev: Event; isCall: boolean }> = [];
  ops.forEach((op, id) => {
    const ret: Event = { id, time: deadlines[id] as number, prev: undefined, next: undefined };
    const call: Event = { id, time: op.invoke, match: ret, prev: undefined, next: undefined };
    events.push({ ev: call, isCall: true }, { ev: ret, isCall: false });
  });
  events.sort((a, b) => a.ev.time - b.ev.time || Number(b.isCall) - Number(a.isCall) || a.ev.id - b.ev.id);
  const head: Event = { id: -1, time: -Infinity, prev: undefined, next: undefined };
  let last = head;
  for (const { ev } of events) {
    last.next = ev;
    ev.prev = last;
    last = ev;
  }

  const lift = (call: Event): void => {
    const ret = call.match as Event;
    (call.prev as Event).next = call.next;
    if (call.next) call.next.prev = call.prev;
    (ret.prev as Event).next = ret.next;
    if (ret.next) ret.next.prev = ret.prev;
  };
  const unlift = (call: Event): void => {
    const ret = call.match as Event;
    (ret.prev as Event).next = ret;
    if (ret.next) ret.next.prev = ret;
    (call.prev as Event).next = call;
    if (call.next) call.next.prev = call;
  };

  const seen = new Set<string>();
  const stack: Array<{ call: Event; state: RegisterValue }> = [];
  let linearized = 0n;
  let state = initial;
  let deepest: { order: number[]; state: RegisterValue } = { order: [], state: initial };
  let steps = 0;
  let entry = head.next;

  while (head.next !== undefined) {
    if (++steps > maxSteps) {
      return {
        ok: false,
        kind: 'unknown',
        key,
        explanation:
          `gave up after ${maxSteps} search steps on ${ops.length} operations of key ${JSON.stringify(key)}` +
          ` (${dropped} unobserved indeterminate writes left out)`,
      };
    }
    const current = entry as Event;
    if (current.match !== undefined) {
      const { legal, next } = step(state, ops[current.id] as Operation);
      const withThis = linearized | (1n << BigInt(current.id));
      const memo = `${withThis.toString(36)}|${JSON.stringify(next)}`;
      if (legal && !seen.has(memo)) {
        seen.add(memo);
        stack.push({ call: current, state });
        state = next;
        linearized = withThis;
        lift(current);
        if (stack.length > deepest.order.length) deepest = { order: stack.map((s) => s.call.id), state };
        entry = head.next;
      } else {
        entry = current.next;
      }
    } else {
      // A return of an operation not yet linearized: every choice so far is
      // wrong, so undo the latest one and try the next candidate after it.
      const top = stack.pop();
      if (top === undefined) {
        return { ok: false, kind: 'violation', key, explanation: explain(key, ops, deadlines, deepest) };
      }
      state = top.state;
      linearized &= ~(1n << BigInt(top.call.id));
      unlift(top.call);
      entry = top.call.next;
    }
  }
  return { ok: true };
}

function explain(
  key: string, ops: readonly Operation[], deadlines: readonly number[], deepest: { order: number[]; state: RegisterValue },
): string {
  const done = new Set(deepest.order);
  const remaining = ops.map((op, id) => ({ op, id })).filter(({ id }) => !done.has(id));
  const deadline = (id: number): number => deadlines[id] as number;
  const blocking = remaining.reduce((a, b) => (deadline(b.id) < deadline(a.id) ? b : a));
  const candidates = remaining.filter(({ op }) => op.invoke <= deadline(blocking.id));
  const lines = [
    `key ${JSON.stringify(key)}: no linearization of ${ops.length} operations exists.`,
    `The longest valid prefix places ${deepest.order.length} of them, leaving the register at ${JSON.stringify(deepest.state)}:`,
    ...deepest.order.map((id) => `  ${describe(id, ops[id] as Operation)}`),
    `Then ${describe(blocking.id, blocking.op)} must take effect, but none of the operations that may go next fits:`,
    ...candidates.map(({ id, op }) => `  ${describe(id, op)}`),
  ];
  return lines.join('\n');
}

function describe(id: number, op: Operation): string {
  const when = `[${op.invoke}, ${op.result === 'info' ? '∞' : op.complete}]`;
  const who = `#${id} process ${op.process}`;
  switch (op.op) {
    case 'read':
      return `${who} read → ${JSON.stringify(op.output ?? null)} ${when}`;
    case 'write':
      return `${who} write ${JSON.stringify(op.value)} (${op.result}) ${when}`;
    case 'cas': {
      const outcome = op.result === 'info' ? 'unknown' : (op.output ?? true) ? 'swapped' : 'did not swap';
      return `${who} cas ${JSON.stringify(op.expected)} → ${JSON.stringify(op.value)} (${outcome}) ${when}`;
    }
  }
}

export { HistoryRecorder } from './history-recorder';
export type { Call, Pending } from './history-recorder';
