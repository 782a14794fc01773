// /v1/txn (Consul 1.4): up to 64 KV, Node, Service and Check operations applied atomically. A
// transaction of read ops only (KV read verbs, catalog `get`) is served as a read, as Consul's
// Txn.Read (no Raft entry; consistency modes apply); one with only KV ops is the `kv.txn` command;
// any Node, Service or Check write makes it the `txn` command.
// A rolled-back transaction answers 409 with {"Results": null, "Errors": [{OpIndex, What}]}.
// The body is parsed with exact integers: KV Flags are a Go uint64 (see json-text.ts).
import { checkJsonDepth } from '../json-depth';
import { CATALOG_VERBS, KV_READ_VERBS, KV_VERBS, MAX_TXN_OPS, type KvOp, type KvVerb, type TxnOpInput, type TxnReply, type CatalogVerb, type FullTxnReply } from '@registry/store';
import { badRequest, tooLarge } from '../../errors';
import { route, type Method, type Route, type RouteContext } from '../route';
import { compileBody } from '../../schemas/validator';
import { txnSchema, type TxnKvBody, type TxnOpBody } from '../../schemas/kv';
import { parseExactJson } from '../json-text';
import { consistencyOf } from '../query-options';
import { readOptionFields, writeQuery } from '../../schemas/query-options';
import { readInto, type RouteDeps } from './deps';
import { MAX_KV_VALUE_BYTES } from './kv';

const VERBS = new Set<string>(KV_VERBS);
const CATALOG = new Set<string>(CATALOG_VERBS);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MEMBERS = ['KV', 'Node', 'Service', 'Check'] as const;

function kvOp(kv: TxnKvBody, i: number): KvOp {
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
}

function catalogVerb(member: string, verb: string | undefined, i: number): CatalogVerb {
  if (!CATALOG.has(verb ?? '')) throw badRequest(`Invalid ${member} verb ${JSON.stringify(verb ?? '')} in operation ${i}`);
  return verb as CatalogVerb;
}

/** The operations as the store takes them; 400/413 for what no state could make valid. */
export function txnOps(body: TxnOpBody[]): TxnOpInput[] {
  if (body.length > MAX_TXN_OPS) throw tooLarge(`Transaction contains too many operations (${body.length} > ${MAX_TXN_OPS})`);
  return body.map((item, i): TxnOpInput => {
    const present = MEMBERS.filter((m) => item[m] !== undefined && item[m] !== null);
    if (present.length === 0) throw badRequest(`Request decode failed: operation ${i} has no KV, Node, Service or Check member`);
    if (present.length > 1) throw badRequest(`Request decode failed: operation ${i} has more than one of ${present.join(', ')}`);
    if (item.KV) return { KV: kvOp(item.KV, i) };
    if (item.Node) return { Node: { Verb: catalogVerb('Node', item.Node.Verb, i), Node: item.Node.Node ?? {} } };
    if (item.Service) {
      const s = item.Service;
      return { Service: { Verb: catalogVerb('Service', s.Verb, i), Node: s.Node ?? '', Service: s.Service ?? {} } };
    }
    const c = item.Check!;
    return { Check: { Verb: catalogVerb('Check', c.Verb, i), Check: c.Check ?? {} } };
  });
}

/** Whether `op` changes nothing (Consul's txn read ops). */
function readOnly(op: TxnOpInput): boolean {
  if ('KV' in op) return KV_READ_VERBS.has(op.KV.Verb);
  if ('Node' in op) return op.Node.Verb === 'get';
  if ('Service' in op) return op.Service.Verb === 'get';
  return op.Check.Verb === 'get';
}

/**
 * A PUT reads only dc and token (http/app.ts); a txn served as a read also takes the consistency
 * flags, as Consul's txn endpoint calls parseConsistency for it (both flags at once: 400).
 */
const TXN_QUERY = writeQuery({ stale: readOptionFields.stale, consistent: readOptionFields.consistent, max_stale: readOptionFields.max_stale });
type TxnContext = RouteContext<unknown, typeof TXN_QUERY.static>;

function asRead(ctx: TxnContext): TxnContext {
  return { ...ctx, opts: { ...ctx.opts, consistency: consistencyOf(ctx.query) } };
}

function parseBody(raw: Buffer | undefined): unknown {
  const text = raw && raw.length > 0 ? raw.toString('utf8') : '';
  if (text.trim() === '') throw badRequest('Request decode failed: EOF');
  checkJsonDepth(text);
  try {
    return parseExactJson(text);
  } catch (err) {
    throw badRequest(`Request decode failed: ${(err as Error).message}`);
  }
}

export function txnRoutes(deps: RouteDeps): Route<any>[] {
  const validate = compileBody(txnSchema);
  const handle = async (ctx: TxnContext) => {
    const ops = txnOps(validate(parseBody(ctx.rawBody)));
    const target = { datacenter: ctx.opts.datacenter, token: ctx.opts.token, clientGone: ctx.clientGone };
    let reply: TxnReply | FullTxnReply;
    if (ops.every((op) => 'KV' in op)) {
      const kvOps = ops.map((op) => (op as { KV: KvOp }).KV);
      if (kvOps.every((op) => KV_READ_VERBS.has(op.Verb))) reply = await readInto(deps, asRead(ctx), 'kv.txn-read', { ops: kvOps });
      else reply = (await deps.rpc.apply({ type: 'kv.txn', ops: kvOps }, target)) as TxnReply;
    } else if (ops.every(readOnly)) {
      reply = await readInto(deps, asRead(ctx), 'txn.read', { ops });
    } else {
      reply = (await deps.rpc.apply({ type: 'txn', ops }, target)) as TxnReply;
    }
    if (reply.Errors) ctx.meta.status = 409;
    return reply;
  };
  return (['PUT', 'POST'] as Method[]).map((method) => route({ method, path: '/v1/txn', query: TXN_QUERY, handle }));
}
