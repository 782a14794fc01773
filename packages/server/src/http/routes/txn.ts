// /v1/txn (Consul 1.4's KV transactions): up to 64 KV ops applied atomically. A transaction of only
// read verbs is served as a read (consistency modes apply); anything else goes through Raft.
// A rolled-back transaction answers 409 with {"Results": null, "Errors": [{OpIndex, What}]}.
import { KV_READ_VERBS, KV_VERBS, MAX_TXN_OPS, type KvOp, type KvVerb, type TxnReply } from '@registry/store';
import { badRequest, tooLarge } from '../../errors';
import { route, type Method, type Route, type RouteContext } from '../route';
import { compileBody } from '../../schemas/validator';
import { txnSchema, type TxnOpBody } from '../../schemas/kv';
import { readInto, type RouteDeps } from './deps';
import { MAX_KV_VALUE_BYTES } from './kv';

const VERBS = new Set<string>(KV_VERBS);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function txnOps(body: TxnOpBody[]): KvOp[] {
  if (body.length > MAX_TXN_OPS) throw tooLarge(`Transaction contains too many operations (${body.length} > ${MAX_TXN_OPS})`);
  return body.map((item, i) => {
    const kv = item.KV;
    if (!kv) throw badRequest(`Request decode failed: operation ${i} has no KV member`);
    const verb = kv.Verb ?? '';
    if (!VERBS.has(verb)) throw badRequest(`Invalid KV verb ${JSON.stringify(verb)} in operation ${i}`);
    let value: Uint8Array | null = null;
    if (kv.Value) {
      if (!BASE64.test(kv.Value) || kv.Value.length % 4 === 1) throw badRequest(`Request decode failed: operation ${i}: Value is not base64`);
      value = new Uint8Array(Buffer.from(kv.Value, 'base64'));
      if (value.length > MAX_KV_VALUE_BYTES) {
        throw tooLarge(`Value for key ${JSON.stringify(kv.Key ?? '')} is too large (${value.length} > ${MAX_KV_VALUE_BYTES} bytes)`);
      }
    }
    return { Verb: verb as KvVerb, Key: kv.Key ?? '', Value: value, Flags: kv.Flags ?? 0, Index: kv.Index ?? 0, Session: kv.Session ?? '' };
  });
}

export function txnRoutes(deps: RouteDeps): Route<any>[] {
  const body = compileBody<TxnOpBody[]>(txnSchema);
  const handle = async (ctx: RouteContext<TxnOpBody[]>) => {
    const ops = txnOps(ctx.body);
    let reply: TxnReply;
    if (ops.every((op) => KV_READ_VERBS.has(op.Verb))) {
      reply = await readInto<TxnReply>(deps, ctx, 'kv.txn-read', { ops });
    } else {
      reply = (await deps.rpc.apply({ type: 'kv.txn', ops }, { datacenter: ctx.opts.datacenter, token: ctx.opts.token, clientGone: ctx.clientGone })) as TxnReply;
    }
    if (reply.Errors) ctx.meta.status = 409;
    return reply;
  };
  return (['PUT', 'POST'] as Method[]).map((method) => route<TxnOpBody[]>({ method, path: '/v1/txn', body, handle }));
}
