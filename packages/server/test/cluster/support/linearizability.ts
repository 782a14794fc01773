/**
 * A linearizability checker for histories of read / write / compare-and-set on
 * independent registers, in the style of Wing & Gong as refined by Lowe and by
 * Porcupine: the history is split by key (a register history is linearizable
 * exactly when each key's is), and each key is searched depth-first for an
 * order of linearization points, memoising (set of linearized ops, register
 * value) so that no configuration is explored twice.
 *
 * Operation results follow Jepsen:
 * - `ok`   — it happened, between `invoke` and `complete`, and `output` is what
 *            the client saw (a read's value; whether a cas swapped);
 * - `fail` — it definitely did not take effect (it is left out of the search);
 * - `info` — unknown (timeout, connection lost): it may take effect at any time
 *            after `invoke`, or never. An `info` read constrains nothing and is
 *            left out.
 */

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
}

export type CheckResult =
  | { ok: true }
  | { ok: false; kind: 'violation'; key: string; explanation: string }
  /** The search ran out of budget; nothing was proven either way. `ok` stays false so it is never mistaken for a pass. */
  | { ok: false; kind: 'unknown'; key: string; explanation: string };

const DEFAULT_MAX_STEPS = 2_000_000;

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

function checkRegister(key: string, all: readonly Operation[], options: CheckOptions): CheckResult {
  const ops = all.filter(matters);
  const initial = options.initial ?? null;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;

  // Events in time order; at equal times calls come first, so that touching
  // operations count as concurrent (the permissive reading: no false alarms).
  const events: Array<{ ev: Event; isCall: boolean }> = [];
  ops.forEach((op, id) => {
    const ret: Event = { id, time: op.result === 'info' ? Infinity : (op.complete as number), prev: undefined, next: undefined };
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
        explanation: `gave up after ${maxSteps} search steps on ${ops.length} operations of key ${JSON.stringify(key)}`,
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
        return { ok: false, kind: 'violation', key, explanation: explain(key, ops, deepest) };
      }
      state = top.state;
      linearized &= ~(1n << BigInt(top.call.id));
      unlift(top.call);
      entry = top.call.next;
    }
  }
  return { ok: true };
}

function explain(key: string, ops: readonly Operation[], deepest: { order: number[]; state: RegisterValue }): string {
  const done = new Set(deepest.order);
  const remaining = ops.map((op, id) => ({ op, id })).filter(({ id }) => !done.has(id));
  const deadline = (op: Operation): number => (op.result === 'info' ? Infinity : (op.complete as number));
  const blocking = remaining.reduce((a, b) => (deadline(b.op) < deadline(a.op) ? b : a));
  const candidates = remaining.filter(({ op }) => op.invoke <= deadline(blocking.op));
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
