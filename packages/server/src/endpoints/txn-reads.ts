// A /v1/txn whose ops only read — KV get/get-tree/check-index/check-session/check-not-exists and
// Node/Service/Check `get` — is served as a read, as Consul's Txn.Read: no Raft entry, and the
// request's consistency mode (?stale, ?consistent) applies. Every op is authorised as the write
// path does (endpoints/txn-writes.ts), before anything is evaluated.
import { CommandError, type FullTxnReply, type TxnOpInput } from '@registry/store';
import { authorizeTxnOps } from './txn-writes';
import { badRequest } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const txnReads = {
  'txn.read': read({
    blocking: false, // Consul's Txn.Read answers at once
    run: ({ store, authz }, a: { ops: TxnOpInput[] }) => {
      authorizeTxnOps(a.ops, authz, store);
      const r = store.txnRead(a.ops);
      if (r instanceof CommandError) throw badRequest(r.message);
      return r as typeof r & { value: FullTxnReply };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
