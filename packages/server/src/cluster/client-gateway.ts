// A server's door for client agents: the RPC-port methods a client calls on any server. Each one
// takes the ordinary server path from here (Rpc.apply / Rpc.read / leader calls), so a client's
// request is forwarded, checked and answered exactly as one that entered this server over HTTP.
// Answers are envelopes (rpc/envelope.ts): errors cross with their kind intact.
import { reachableHost, type Transport } from '@registry/raft';
import type { Store } from '@registry/store';
import { resolveToken } from '../rpc/acl-resolver';
import { authorizeLeaderCall } from '../endpoints/leader-call-acl';
import type { LeaderArgs, LeaderMethod } from '../rpc/leader-calls';
import { toEnvelope, type Envelope } from '../rpc/envelope';
import type { RpcApi } from '../rpc/rpc-api';
import type { ClientApply, ClientFacts, ClientLeaderCall, ClientRead, HeartbeatReply } from './client-facts';

export interface ClientGatewayDeps {
  transport: Transport;
  rpc: RpcApi;
  /** This server's state: what a leader call's rule reads (a session's node). */
  store: Store;
  /** Server RPC addresses of the Raft configuration, and the leader's ('' when unknown). */
  servers(): string[];
  leader(): string;
  heartbeatIntervalMs(): number;
  /** What /v1/agent/members answers on this server (servers and clients). */
  members(): Promise<unknown[]>;
  /** What /v1/operator/raft/configuration answers on this server. */
  raftConfiguration(): Promise<unknown>;
}

async function enveloped<T>(run: () => Promise<T>): Promise<Envelope<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    return toEnvelope(err);
  }
}

export function installClientGateway(d: ClientGatewayDeps): void {
  const { transport, rpc } = d;
  transport.handle('client.apply', (body) => {
    const req = body as ClientApply;
    // `internal` skips the ACL checks, and anyone who reaches this port can claim it: with ACLs on,
    // a client's own writes are checked against the token it sends (its agent token) like any other.
    const internal = req.internal === true && !rpc.aclResolver.enabled;
    const receivedBudgetMs = typeof req.budgetMs === 'number' && Number.isFinite(req.budgetMs) ? req.budgetMs : undefined;
    const receivedSentAtLogMs = typeof req.sentAtLogMs === 'number' ? req.sentAtLogMs : undefined;
    return enveloped(() => rpc.apply(req.cmd, { token: req.token, internal, requestId: req.requestId, receivedBudgetMs, receivedSentAtLogMs }));
  });
  transport.handle('client.read', (body) => {
    const req = body as ClientRead;
    return enveloped(() => rpc.readByName(req.endpoint, req.args, req.opts));
  });
  transport.handle('client.call', (body) => {
    const req = body as ClientLeaderCall;
    const method = req.method as LeaderMethod;
    const args = req.args as LeaderArgs<LeaderMethod>;
    return enveloped(async () => {
      // The client checked its route, but anyone can send this: with ACLs on, the call's token must
      // hold what the method needs (an unknown token is 403 `ACL not found`, as at the HTTP edge).
      if (rpc.aclResolver.enabled) authorizeLeaderCall(method, await resolveToken(rpc.aclResolver, req.token), args, d.store);
      return rpc.leader.call(method, args as never);
    });
  });
  transport.handle('client.heartbeat', (body, caller) =>
    enveloped(async (): Promise<HeartbeatReply> => {
      // The client's node is recorded by an address others can reach: a wildcard or loopback claim
      // from another host becomes the connection's source address (raft transport/sender-address.ts).
      const facts = body as ClientFacts;
      const address = reachableHost(facts.address, caller.remoteHost);
      await rpc.leader.call('Cluster.ClientHeartbeat', address === facts.address ? facts : { ...facts, address });
      return { servers: d.servers(), leader: d.leader(), intervalMs: d.heartbeatIntervalMs(), logTimeMs: d.store.logTimeNow() };
    }),
  );
  transport.handle('client.members', () => enveloped(() => d.members()));
  transport.handle('client.raft-configuration', () => enveloped(() => d.raftConfiguration()));
}
