/**
 * A decision procedure for one register whose writes all carry distinct values (what the cluster
 * tests produce: every write writes a fresh counter), in O(n log n) instead of a search.
 *
 * With distinct values every read names the one write it saw (the "read-mapping" is known), and
 * Gibbons & Korach ("Testing shared memories", SIAM J. Comput. 1997) showed that checking such a
 * history is easy; Golab, Li & Shah ("Analyzing consistency properties for fun and profit",
 * PODC 2011) give the form used here. Group each write with the reads of its value — a *cluster*.
 * Let f be the earliest return and s the latest call among its operations:
 * - f < s: the value must be held throughout (f, s) — a *forward zone*;
 * - otherwise all of the cluster can take effect at one instant in [s, f] — a *backward zone*.
 * The history is linearizable exactly when (1) no read returns before its write is called,
 * (2) no two forward zones overlap, and (3) no backward zone lies inside a forward zone (that
 * value would have to come and go while another is held).
 *
 * Operations that touch at one instant count as concurrent, as in the search, so the zones are
 * compared as open intervals. The register's initial value is a cluster whose write is at −∞.
 */
import type { Operation, RegisterValue } from './linearizability';

export type ZoneVerdict = { applicable: false } | { applicable: true; ok: true } | { applicable: true; ok: false; explanation: string };

interface Cluster {
  /** The value, and which write wrote it (undefined for the initial value). */
  value: RegisterValue;
  write: number | undefined;
  reads: number[];
  f: number;
  s: number;
}

/**
 * `ops` are the operations of one key that take part (no failed ones), `deadlines[i]` the latest
 * time op i can take effect. Not applicable (the caller searches instead) with a cas, two writes
 * of one value, a write of the initial value, or an operation that may take effect at any time.
 */
export function checkByZones(ops: readonly Operation[], deadlines: readonly number[], initial: RegisterValue): ZoneVerdict {
  const byValue = new Map<RegisterValue, Cluster>();
  byValue.set(initial, { value: initial, write: undefined, reads: [], f: -Infinity, s: -Infinity });
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as Operation;
    if (op.op === 'cas' || !Number.isFinite(deadlines[i])) return { applicable: false };
    if (op.op === 'write') {
      if (byValue.has(op.value)) return { applicable: false };
      byValue.set(op.value, { value: op.value, write: i, reads: [], f: deadlines[i] as number, s: op.invoke });
    }
  }
  const describe = (i: number): string => {
    const op = ops[i] as Operation;
    const what = op.op === 'read' ? `read → ${JSON.stringify(op.output ?? null)}` : op.op === 'write' ? `write ${JSON.stringify(op.value)}` : 'cas';
    return `#${i} process ${op.process} ${what} [${op.invoke}, ${deadlines[i]}]`;
  };
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as Operation;
    if (op.op !== 'read') continue;
    const cluster = byValue.get(op.output ?? null);
    if (!cluster) return { applicable: true, ok: false, explanation: `${describe(i)} saw a value that no operation wrote` };
    const end = deadlines[i] as number;
    if (cluster.write !== undefined && end < (ops[cluster.write] as Operation).invoke) {
      return { applicable: true, ok: false, explanation: `${describe(i)} returned before ${describe(cluster.write)} was called` };
    }
    cluster.reads.push(i);
    cluster.f = Math.min(cluster.f, end);
    cluster.s = Math.max(cluster.s, op.invoke);
  }

  const clusters = [...byValue.values()];
  const name = (c: Cluster): string => (c.write === undefined ? `the initial value ${JSON.stringify(c.value)}` : `${JSON.stringify(c.value)}`);
  const forward = clusters.filter((c) => c.f < c.s).sort((a, b) => a.f - b.f);
  // (2) Sorted by start, forward zones are disjoint exactly when each starts no earlier than every
  // earlier one ended.
  let widest: Cluster | undefined;
  for (const c of forward) {
    if (widest && c.f < widest.s) {
      return {
        applicable: true,
        ok: false,
        explanation:
          `${name(widest)} must be held from ${widest.f} to ${widest.s} and ${name(c)} from ${c.f} to ${c.s}: ` +
          `both at once between ${c.f} and ${Math.min(c.s, widest.s)}.\n${explainCluster(widest, describe)}\n${explainCluster(c, describe)}`,
      };
    }
    if (!widest || c.s > widest.s) widest = c;
  }
  // (3) Disjoint forward zones sorted by start: a backward zone [s, f] lies inside one exactly when
  // the last forward zone starting before s also ends after f.
  const starts = forward.map((c) => c.f);
  for (const c of clusters) {
    if (c.f < c.s) continue;
    const k = lastBefore(starts, c.s);
    const around = k >= 0 ? forward[k] : undefined;
    if (around && c.f < around.s) {
      return {
        applicable: true,
        ok: false,
        explanation:
          `${name(c)} can only have been written and read between ${c.s} and ${c.f}, while ${name(around)} ` +
          `must be held from ${around.f} to ${around.s}.\n${explainCluster(c, describe)}\n${explainCluster(around, describe)}`,
      };
    }
  }
  return { applicable: true, ok: true };
}

/** Index of the last element of ascending `xs` strictly below `x`, or -1. */
function lastBefore(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

function explainCluster(c: Cluster, describe: (i: number) => string): string {
  const members = [...(c.write === undefined ? [] : [c.write]), ...c.reads];
  const shown = members.slice(0, 6).map((i) => `  ${describe(i)}`);
  if (members.length > 6) shown.push(`  … and ${members.length - 6} more reads`);
  return shown.join('\n');
}
