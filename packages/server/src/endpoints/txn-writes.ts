// Who may run a /v1/txn with Node, Service and Check ops (Consul 1.4's vetNodeTxnOp, vetServiceTxnOp,
// vetCheckTxnOp): node:write on the node for node ops, service:write on the service for service ops
// and service-level checks, node:write on the node for node-level checks — for every verb, reads
// included, as Consul does. An op that names a service by ID only is checked against the name the
// catalog has for it. KV ops are checked as in a KV transaction.
import type { Authorizer } from '@registry/acl';
import type { KvOp, Store, TxnOpInput } from '@registry/store';
import { forbidden } from '../errors';
import { kvOpAllowed } from './kv-writes';

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const fold = (s: string) => s.toLowerCase();

/** The name the catalog has for service `id` on `node` ('' when unknown). */
function knownServiceName(store: Store, node: string, id: string): string {
  if (node === '' || id === '') return '';
  const services = store.catalogNode(node).value?.Services ?? {};
  return Object.values(services).find((s) => fold(s.ID) === fold(id))?.Service ?? '';
}

function opAllowed(op: TxnOpInput, authz: Authorizer, store: Store): boolean {
  if ('KV' in op) return kvOpAllowed(op.KV as KvOp, authz);
  if ('Node' in op) return authz.nodeWrite(text(op.Node.Node?.Node));
  if ('Service' in op) {
    const s = op.Service.Service ?? {};
    const name = text(s.Service) || knownServiceName(store, text(op.Service.Node), text(s.ID));
    return authz.serviceWrite(name);
  }
  const c = op.Check.Check ?? {};
  const serviceId = text(c.ServiceID);
  if (serviceId === '') return authz.nodeWrite(text(c.Node));
  return authz.serviceWrite(text(c.ServiceName) || knownServiceName(store, text(c.Node), serviceId));
}

export function authorizeTxnOps(ops: readonly TxnOpInput[], authz: Authorizer, store: Store): void {
  if (!Array.isArray(ops)) return; // the state machine refuses the malformed command
  for (const op of ops) {
    if (typeof op !== 'object' || op === null || !opAllowed(op, authz, store)) throw forbidden();
  }
}
