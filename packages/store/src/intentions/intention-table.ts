// The intentions table: rows by ID, one watch key for the whole table (Consul's "intentions" index;
// every intention read depends on all rows, because wildcards make any row relevant to any name).
import { Fields, keyedStream } from '../snapshot-stream';
import type { Txn } from '../txn';
import { compareEvaluationOrder, WILDCARD } from './precedence';
import type { IntentionRecord } from './records';

export const INTENTIONS = 'intentions';

export interface IntentionTableDump {
  intentions: IntentionRecord[];
}

export type MatchSide = 'source' | 'destination';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Does the `side` of `r` cover namespace/name: `*`/`*`, `<ns>`/`*`, or exactly (case-insensitively) them? */
export function sideMatches(r: IntentionRecord, side: MatchSide, ns: string, name: string): boolean {
  const rNs = side === 'source' ? r.SourceNS : r.DestinationNS;
  const rName = side === 'source' ? r.SourceName : r.DestinationName;
  if (rNs === WILDCARD) return true;
  return same(rNs, ns) && (rName === WILDCARD || same(rName, name));
}

export class IntentionTable {
  private readonly byId = new Map<string, IntentionRecord>();

  get(id: string): IntentionRecord | undefined {
    return this.byId.get(id);
  }

  /** Every row in evaluation order. */
  all(): IntentionRecord[] {
    return [...this.byId.values()].sort(compareEvaluationOrder);
  }

  /** Rows whose `side` covers ns/name, in evaluation order. */
  match(side: MatchSide, ns: string, name: string): IntentionRecord[] {
    const out: IntentionRecord[] = [];
    for (const r of this.byId.values()) if (sideMatches(r, side, ns, name)) out.push(r);
    return out.sort(compareEvaluationOrder);
  }

  /** The row with the same four names (case-insensitive), other than `exceptId`. */
  duplicateOf(names: Pick<IntentionRecord, 'SourceNS' | 'SourceName' | 'DestinationNS' | 'DestinationName'>, exceptId: string): IntentionRecord | undefined {
    for (const r of this.byId.values()) {
      if (r.ID === exceptId) continue;
      if (same(r.SourceNS, names.SourceNS) && same(r.SourceName, names.SourceName) && same(r.DestinationNS, names.DestinationNS) && same(r.DestinationName, names.DestinationName)) {
        return r;
      }
    }
    return undefined;
  }

  set(r: IntentionRecord, txn: Txn): void {
    this.byId.set(r.ID, r);
    txn.bump(INTENTIONS);
  }

  delete(id: string, txn: Txn): boolean {
    if (!this.byId.delete(id)) return false;
    txn.bump(INTENTIONS);
    return true;
  }

  get size(): number {
    return this.byId.size;
  }

  dump(): IntentionTableDump {
    return { intentions: [...this.byId.values()].map((r) => ({ ...r, Meta: { ...r.Meta } })) };
  }

  /** dump() as of now, serialised later (rows are replaced, never changed). */
  capture(): Fields {
    return new Fields([
      [
        'intentions',
        keyedStream(this.byId.size, [...this.byId.values()], (out, r) => {
          out.item({ ...r, Meta: { ...r.Meta } });
          return true;
        }),
      ],
    ]);
  }

  static load(dump: IntentionTableDump | undefined): IntentionTable {
    const t = new IntentionTable();
    for (const r of dump?.intentions ?? []) t.byId.set(r.ID, { ...r, Meta: { ...r.Meta } });
    return t;
  }
}
