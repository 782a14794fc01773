// The leader-side half of every write endpoint (Consul's <Area>.Apply before raftApply): the ACL
// check of each command type against the leader's state, and the answers some writes get without a
// Raft entry (a lock in its lock-delay). Each area's checks live in its endpoint file beside its reads
// (catalog-writes.ts, kv-writes.ts, session-writes.ts, txn-writes.ts, query-writes.ts,
// connect-writes.ts); the one-line checks of the ACL, operator, coordinate and event commands are
// their cases here. This file is the switch that sends each command type to its check. rpc/ runs it
// as its WriteGate just before proposing, without depending on any area. Every write goes to the
// leader (or the `?dc` datacenter's), so a write has no forwarding policy to declare.
import type { Authorizer } from '@registry/acl';
import type { Command, Store } from '@registry/store';
import { forbidden } from '../errors';
import type { WriteGate } from '../rpc/write-gate';
import { authorizeConnectCommand } from './connect-writes';
import { authorizeDeregister, authorizeRegister } from './catalog-writes';
import { authorizeQueryDelete, authorizeQuerySet } from './query-writes';
import { authorizeKvOps, lockDelayVerdict } from './kv-writes';
import { authorizeSessionCreate, authorizeSessionDestroy } from './session-writes';
import { authorizeTxnOps } from './txn-writes';

/** The endpoints' checks, as rpc/ runs them on the leader. */
export const endpointWrites: WriteGate = {
  admit(cmd, authz, store, aclEnabled) {
    if (authz) authorizeCommand(cmd, authz, store, aclEnabled);
    // A lock on a key in its lock-delay answers false without a write (Consul's KVS.Apply).
    return lockDelayVerdict(cmd, store);
  },
};

/**
 * Refuse `cmd` unless `authz` allows it (consul-behaviour §2.9). Runs on the leader just before
 * the command is proposed. One case per command type; a command type without a case is refused,
 * so a new write cannot silently skip its ACL check.
 */
export function authorizeCommand(cmd: Command, authz: Authorizer, store: Store, aclEnabled = true): void {
  switch (cmd.type) {
    // ACLs off: catalog writes skip the checks entirely (and so the "Unknown service" answers).
    case 'catalog.register':
      if (aclEnabled) authorizeRegister(cmd.req, authz, store);
      return;
    case 'catalog.deregister':
      if (aclEnabled) authorizeDeregister(cmd.req, authz, store);
      return;
    // Issued by the leader itself (internal); never on a client's behalf.
    case 'acl.builtins':
    case 'acl.replicate':
      throw forbidden();
    // Anyone may bootstrap (once); creating the initial management token regardless is the leader's.
    case 'acl.bootstrap':
      if (cmd.orCreate) throw forbidden();
      return;
    case 'acl.token-create':
    case 'acl.token-update':
    case 'acl.token-clone':
    case 'acl.token-delete':
    case 'acl.legacy-set':
    case 'acl.legacy-delete':
    case 'acl.policy-create':
    case 'acl.policy-update':
    case 'acl.policy-delete':
      if (!authz.aclWrite()) throw forbidden();
      return;
    // Clients' updates (PUT /v1/coordinate/update) need node:write; servers' own are internal.
    case 'coordinate.update':
      for (const u of cmd.updates ?? []) if (!authz.nodeWrite(u.Node)) throw forbidden();
      return;
    // Replacing the whole state is management's alone (Consul: acl = "write", its Snapshot() rule).
    // (ACLs off: anyone, as in Consul, where no authorizer means no check.)
    case 'snapshot.restore':
      if (aclEnabled && !authz.snapshot()) throw forbidden();
      return;
    case 'area.create':
    case 'area.update':
    case 'area.delete':
    case 'area.servers':
      if (!authz.operatorWrite()) throw forbidden();
      return;
    case 'autopilot.set-config':
      if (!authz.operatorWrite()) throw forbidden();
      return;
    case 'event.fire':
      if (!authz.eventWrite(cmd.event?.Name ?? '')) throw forbidden();
      return;
    case 'session.create':
      authorizeSessionCreate(cmd.session.Node, authz);
      return;
    case 'session.destroy':
      authorizeSessionDestroy(cmd.id, authz, store);
      return;
    case 'kv.apply':
      authorizeKvOps([cmd.op], authz);
      return;
    case 'kv.txn':
      authorizeKvOps(cmd.ops, authz);
      return;
    case 'txn':
      authorizeTxnOps(cmd.ops, authz, store);
      return;
    case 'query.set':
      authorizeQuerySet(cmd.query, authz, store);
      return;
    case 'query.delete':
      authorizeQueryDelete(cmd.id, authz, store);
      return;
    case 'intention.upsert':
    case 'intention.delete':
    case 'ca.initialize':
    case 'ca.rotate':
    case 'ca.set-config':
    case 'ca.serials':
    case 'ca.prune':
      authorizeConnectCommand(cmd, authz, store);
      return;
    default: {
      // Every command type has its case: a new one fails to compile here until it is given one.
      const unhandled: never = cmd;
      // Bytes from the wire may still name no known type: refused, never allowed by default.
      void unhandled;
      throw forbidden();
    }
  }
}
