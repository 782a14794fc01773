// The sessions table (Consul's "sessions" and "session_checks"): sessions by ID, by node and by the
// checks they are tied to, so a node or check change finds the sessions it invalidates directly.
import { fold } from '../catalog/keys';
import { Fields, sortedStream } from '../snapshot-stream';
import type { Txn } from '../txn';
import { SESSIONS, type SessionData, type SessionRecord } from './session-records';
import { withIndexes } from '../indexed-record';

export interface SessionTableDump {
  sessions: SessionRecord[];
}

function checkKey(nodeKey: string, checkId: string): string {
  return `${nodeKey}\u0000${fold(checkId)}`;
}

const byId = (a: SessionRecord, b: SessionRecord) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

export class SessionTable {
  private readonly byId = new Map<string, SessionRecord>();
  /** folded node name → session IDs */
  private readonly byNode = new Map<string, Set<string>>();

  get(id: string): SessionRecord | undefined {
    return this.byId.get(id.toLowerCase());
  }

  /** Every session, ordered by ID. */
  all(): SessionRecord[] {
    return [...this.byId.values()].sort(byId);
  }

  ofNode(nodeName: string): SessionRecord[] {
    const ids = this.byNode.get(fold(nodeName));
    if (!ids) return [];
    return [...ids].map((id) => this.byId.get(id) as SessionRecord).sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  }

  get size(): number {
    return this.byId.size;
  }

  put(data: SessionData, txn: Txn): SessionRecord {
    const rec: SessionRecord = withIndexes(data, txn.index, txn.index);
    const id = rec.ID.toLowerCase();
    this.byId.set(id, rec);
    let ids = this.byNode.get(fold(rec.Node));
    if (!ids) this.byNode.set(fold(rec.Node), (ids = new Set()));
    ids.add(id);
    txn.bump(SESSIONS);
    return rec;
  }

  delete(id: string, txn: Txn): SessionRecord | undefined {
    const key = id.toLowerCase();
    const rec = this.byId.get(key);
    if (!rec) return undefined;
    this.byId.delete(key);
    const ids = this.byNode.get(fold(rec.Node));
    ids?.delete(key);
    if (ids && ids.size === 0) this.byNode.delete(fold(rec.Node));
    txn.bump(SESSIONS);
    return rec;
  }

  /** Whether session `rec` names check `checkId` (case-insensitively, as check IDs compare). */
  static linksCheck(rec: SessionData, checkId: string): boolean {
    const want = checkKey(fold(rec.Node), checkId);
    return (rec.Checks ?? []).some((c) => checkKey(fold(rec.Node), c) === want);
  }

  dump(): SessionTableDump {
    return { sessions: this.all() };
  }

  /** dump() as of now, sorted and serialised later (records are replaced, never changed). */
  capture(): Fields {
    return new Fields([['sessions', sortedStream([...this.byId.values()], byId)]]);
  }

  static load(dump: SessionTableDump | undefined): SessionTable {
    const t = new SessionTable();
    for (const rec of dump?.sessions ?? []) {
      const id = rec.ID.toLowerCase();
      t.byId.set(id, rec);
      let ids = t.byNode.get(fold(rec.Node));
      if (!ids) t.byNode.set(fold(rec.Node), (ids = new Set()));
      ids.add(id);
    }
    return t;
  }

  invariants(): string[] {
    const problems: string[] = [];
    let indexed = 0;
    for (const [node, ids] of this.byNode) {
      for (const id of ids) {
        indexed++;
        const rec = this.byId.get(id);
        if (!rec || fold(rec.Node) !== node) problems.push(`session node index ${node} holds ${id}, which is not on it`);
      }
    }
    if (indexed !== this.byId.size) problems.push(`session node index holds ${indexed} sessions, table ${this.byId.size}`);
    return problems;
  }
}
