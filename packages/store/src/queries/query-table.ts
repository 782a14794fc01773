// The prepared-query table (Consul's "prepared-queries"): by ID, by name (case-insensitive, unique
// across queries and templates), the templates for prefix resolution, and by bound session.
import { Fields, sortedStream } from '../snapshot-stream';
import type { Txn } from '../txn';
import { isTemplate, QUERIES, type QueryDefinition, type QueryRecord } from './query-records';
import { withIndexes } from '../indexed-record';

export interface QueryTableDump {
  queries: QueryRecord[];
}

const byIdOrder = (a: QueryRecord, b: QueryRecord) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

export class QueryTable {
  private readonly byId = new Map<string, QueryRecord>();
  /** folded Name → ID, for named queries and templates (the catch-all template is under ''). */
  private readonly byName = new Map<string, string>();

  get(id: string): QueryRecord | undefined {
    return this.byId.get(id.toLowerCase());
  }

  /** The query or template whose Name is `name` (case-insensitively). */
  named(name: string): QueryRecord | undefined {
    const id = this.byName.get(name.toLowerCase());
    return id === undefined ? undefined : this.byId.get(id);
  }

  all(): QueryRecord[] {
    return [...this.byId.values()].sort(byIdOrder);
  }

  templates(): QueryRecord[] {
    return this.all().filter(isTemplate);
  }

  boundTo(session: string): QueryRecord[] {
    const s = session.toLowerCase();
    return this.all().filter((q) => q.Session.toLowerCase() === s);
  }

  put(def: QueryDefinition, txn: Txn): QueryRecord {
    const id = def.ID.toLowerCase();
    const existing = this.byId.get(id);
    if (existing) this.unname(existing);
    const rec: QueryRecord = withIndexes(def, existing?.CreateIndex ?? txn.index, txn.index);
    this.byId.set(id, rec);
    this.name(rec);
    txn.bump(QUERIES);
    return rec;
  }

  delete(id: string, txn: Txn): boolean {
    const rec = this.byId.get(id.toLowerCase());
    if (!rec) return false;
    this.byId.delete(id.toLowerCase());
    this.unname(rec);
    txn.bump(QUERIES);
    return true;
  }

  dump(): QueryTableDump {
    return { queries: this.all() };
  }

  /** dump() as of now, sorted and serialised later (records are replaced, never changed). */
  capture(): Fields {
    return new Fields([['queries', sortedStream([...this.byId.values()], byIdOrder)]]);
  }

  static load(dump: QueryTableDump | undefined): QueryTable {
    const t = new QueryTable();
    for (const q of dump?.queries ?? []) {
      t.byId.set(q.ID.toLowerCase(), q);
      t.name(q);
    }
    return t;
  }

  invariants(): string[] {
    const problems: string[] = [];
    for (const [name, id] of this.byName) {
      const q = this.byId.get(id);
      if (!q || q.Name.toLowerCase() !== name) problems.push(`query name index ${name} points at ${id}, which is not named so`);
    }
    return problems;
  }

  /** Unnamed static queries are found by ID only; templates are named even when the name is ''. */
  private name(q: QueryRecord): void {
    if (q.Name !== '' || isTemplate(q)) this.byName.set(q.Name.toLowerCase(), q.ID.toLowerCase());
  }

  private unname(q: QueryRecord): void {
    const key = q.Name.toLowerCase();
    if (this.byName.get(key) === q.ID.toLowerCase()) this.byName.delete(key);
  }
}
