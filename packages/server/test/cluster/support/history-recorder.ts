import type { CasOp, Operation, ReadOp, RegisterValue } from './linearizability';

/** What a client is about to do; the recorder adds process, times and result. */
export type Call =
  | { op: 'read'; key: string }
  | { op: 'write'; key: string; value: RegisterValue }
  | { op: 'cas'; key: string; expected: RegisterValue; value: RegisterValue };

/** What `ok` takes for each kind of call: the value a read saw, whether a cas swapped, nothing for a write. */
type OkArgs<C extends Call> = C extends { op: 'read' } ? [output: RegisterValue] : C extends { op: 'cas' } ? [swapped: boolean] : [];

export interface Pending<C extends Call> {
  /** The operation took effect (and, for reads and cas, this is what the client saw). */
  ok(...output: OkArgs<C>): void;
  /** The operation certainly did not take effect (e.g. a 4xx, or refused before it was sent). */
  fail(): void;
  /** Unknown whether it took effect (timeout, connection reset, 5xx after forwarding). */
  info(): void;
}

/**
 * Records a history for `checkLinearizable` from concurrent clients in this
 * process. Time is a counter bumped at every event, so the order of events is
 * exactly the order this process observed them in — no clock ties or skew.
 * Operations never completed by the end count as `info`.
 */
export class HistoryRecorder {
  private clock = 0;
  private readonly ops: Operation[] = [];

  invoke<C extends Call>(process: number | string, call: C): Pending<C> {
    const op = { ...call, process, invoke: ++this.clock, result: 'info' } as Operation;
    this.ops.push(op);
    let settled = false;
    const settle = (result: Operation['result'], output?: RegisterValue | boolean): void => {
      if (settled) throw new Error(`operation ${call.op} ${call.key} of process ${process} completed twice`);
      settled = true;
      op.result = result;
      if (result !== 'info') op.complete = ++this.clock;
      if (output !== undefined) (op as ReadOp | CasOp).output = output as never;
    };
    return {
      ok: (...output: OkArgs<C>) => settle('ok', output[0]),
      fail: () => settle('fail'),
      info: () => settle('info'),
    };
  }

  /** A copy of the history so far; pending operations appear as `info`. */
  history(): Operation[] {
    return this.ops.map((op) => ({ ...op }));
  }

  /** How many operations completed `ok`, per kind — to check a run actually exercised the system. */
  okCounts(): Record<Operation['op'], number> {
    const counts = { read: 0, write: 0, cas: 0 };
    for (const op of this.ops) if (op.result === 'ok') counts[op.op]++;
    return counts;
  }
}
