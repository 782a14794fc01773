// What each leader call (rpc/leader-calls.ts) requires of the caller's token, declared once per
// method. A server's HTTP routes check it before they call (http/routes/status.ts, autopilot.ts,
// snapshot.ts); a server's gateway checks it for a call a client agent forwards with its token
// (cluster/client-gateway.ts), since whoever reaches the RPC port can send one. The map is typed by
// LeaderMethods, so a new leader method does not compile until it says what it needs here.
// Calls between servers (a method's own transport name) are not checked: the RPC port trusts its
// servers, as Consul's Raft and server RPC do without verify_incoming.
import type { Authorizer } from '@registry/acl';
import type { Store } from '@registry/store';
import { forbidden } from '../errors';
import type { LeaderArgs, LeaderMethod } from '../rpc/leader-calls';
import { csrServices } from './csr-services';
import { mayRenew } from './session-reads';

/**
 * True when `authz` may make the call with `args`. `store` is the checking server's state, for the
 * rules that read it (Session.Renew); HTTP routes touch no store and pass none (such a rule then
 * refuses: its route checks through a read instead, as renew's `session.renew`).
 */
export type LeaderCallRule<M extends LeaderMethod> = (authz: Authorizer, args: LeaderArgs<M>, store: Store | undefined) => boolean;

export const leaderCallAcl: { readonly [M in LeaderMethod]: LeaderCallRule<M> } = {
  'Operator.RemovePeer': (a) => a.operatorWrite(),
  'Operator.PromotePeer': (a) => a.operatorWrite(),
  'Operator.TransferLeader': (a) => a.operatorWrite(),
  'Operator.AutopilotHealth': (a) => a.operatorRead(),
  'Cluster.AddServer': (a) => a.operatorWrite(),
  'Cluster.LeaveServer': (a) => a.operatorWrite(),
  'Cluster.ForceLeaveServer': (a) => a.operatorWrite(),
  // Registers (or refreshes) a client's node: what writing that node in the catalog needs.
  'Cluster.ClientHeartbeat': (a, facts) => a.nodeWrite(facts.node),
  // force-leave (operator:write) or a client leaving with its agent token, which holds node:write
  // on its own node (the leader deregisters that node, as a catalog deregistration would).
  'Cluster.ClientLeave': (a, { node }) => a.operatorWrite() || a.nodeWrite(node),
  // The client list of members; clients ask for it with client.members, never through here.
  'Cluster.ClientMembers': (a) => a.operatorRead(),
  // The whole state, tokens included: management, as the snapshot route.
  'Snapshot.Save': (a) => a.snapshot(),
  'Session.Renew': (a, { id }, store) => !!store && mayRenew(a, store.sessionInfo(id).value?.[0]),
  // service:write on the service the CSR names (Consul's ConnectCA.Sign).
  'Connect.Sign': (a, { csrPEM }) => {
    const services = typeof csrPEM === 'string' ? csrServices(csrPEM) : [];
    return services !== null && services.every((s) => a.serviceWrite(s));
  },
};

/** Whether `authz` may call `method` with `args`; an unknown method, or args its rule cannot read, may not. */
export function leaderCallAllowed<M extends LeaderMethod>(method: M, authz: Authorizer, args: LeaderArgs<M>, store?: Store): boolean {
  const rule = Object.hasOwn(leaderCallAcl, method) ? (leaderCallAcl[method] as LeaderCallRule<M>) : undefined;
  if (!rule) return false;
  try {
    return rule(authz, args, store);
  } catch {
    // Args from the wire that are not what the method takes (null, wrong types): refused here,
    // rather than a 500 from the rule.
    return false;
  }
}

/** 403 `Permission denied` unless `authz` may call `method` with `args` (as the HTTP edge answers). */
export function authorizeLeaderCall<M extends LeaderMethod>(method: M, authz: Authorizer, args: LeaderArgs<M>, store?: Store): void {
  if (!leaderCallAllowed(method, authz, args, store)) throw forbidden();
}
