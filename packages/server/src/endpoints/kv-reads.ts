// KV reads (consul-behaviour Appendix A, §2.9–2.10): a single key the token may not read is 403;
// prefix reads leave such keys out. A null value means "answer 404 with an empty body".
import { kvEntryOut, type KvEntryOut, type KvOp, type TxnReply } from '@registry/store';
import { forbidden } from '../errors';
import type { ReadEndpoint } from './read-context';

export type KvReadMode = 'get' | 'recurse' | 'keys';

export const kvReads: Record<string, ReadEndpoint> = {
  'kv.get': ({ store, authz }, a: { key: string; mode: KvReadMode; separator?: string }) => {
    if (a.mode === 'get') {
      const r = store.kvGet(a.key);
      if (r.value && !authz.keyRead(a.key)) throw forbidden();
      return { ...r, value: r.value ? [kvEntryOut(r.value)] : null };
    }
    if (a.mode === 'recurse') {
      const r = store.kvList(a.key);
      const out: KvEntryOut[] = r.value.filter((e) => authz.keyRead(e.Key)).map((e) => kvEntryOut(e));
      return { ...r, value: out.length > 0 ? out : null };
    }
    const r = store.kvKeys(a.key, a.separator ?? '');
    const keys = r.value.filter((k) => authz.keyRead(k));
    return { ...r, value: keys.length === 0 && a.key !== '' ? null : keys };
  },
  /** A transaction of read verbs only (served with the request's consistency mode, no Raft write). */
  'kv.txn-read': ({ store, authz }, a: { ops: KvOp[] }) => {
    for (const op of a.ops) if (!authz.keyRead(op.Key)) throw forbidden();
    const r = store.kvTxnRead(a.ops);
    return r as ReturnType<typeof store.kvTxnRead> & { value: TxnReply };
  },
};
