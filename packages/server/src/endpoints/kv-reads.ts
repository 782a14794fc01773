// KV reads (consul-behaviour Appendix A, §2.9–2.10): a single key the token may not read is 403;
// prefix reads leave such keys out. A null value means "answer 404 with an empty body".
import { kvEntryOut, type KvEntryOut, type KvOp, type TxnReply } from '@registry/store';
import { Authorizer } from '@registry/acl';
import { forbidden } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export type KvReadMode = 'get' | 'recurse' | 'keys';

export const kvReads = {
  'kv.get': read({
    run: ({ store, authz }, a: { key: string; mode: KvReadMode; separator?: string }) => {
      if (a.mode === 'get') {
        // Refused whether or not the key exists, as Consul's KVS.Get: a 404 for a missing key and a
        // 403 for an existing one would tell an anonymous caller which keys exist (issue #29).
        if (!authz.keyRead(a.key)) throw forbidden();
        const r = store.kvGet(a.key);
        return { ...r, value: r.value ? [kvEntryOut(r.value)] : null };
      }
      if (a.mode === 'recurse') {
        // Outputs made once per entry, large prefixes kept between reads (store kv/kv-listing.ts, issue #16).
        const r = store.kvRecurse(a.key);
        // ACLs off (the allow-all authorizer) hides nothing: skip the walk of 100,000 keys.
        const out: KvEntryOut[] = authz === Authorizer.allowAll() ? r.value : r.value.filter((e) => authz.keyRead(e.Key));
        return { ...r, value: out.length > 0 ? out : null };
      }
      const r = store.kvKeys(a.key, a.separator ?? '');
      const keys = r.value.filter((k) => authz.keyRead(k));
      return { ...r, value: keys.length === 0 && a.key !== '' ? null : keys };
    },
  }),
  /** A transaction of read verbs only (served with the request's consistency mode, no Raft write). */
  'kv.txn-read': read({
    blocking: false, // a transaction answers at once (Consul's Txn.Read)
    run: ({ store, authz }, a: { ops: KvOp[] }) => {
      for (const op of a.ops) if (!authz.keyRead(op.Key)) throw forbidden();
      const r = store.kvTxnRead(a.ops);
      return r as ReturnType<typeof store.kvTxnRead> & { value: TxnReply };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
