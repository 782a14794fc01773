// A server's door for client agents: the RPC-port methods a client calls on any server. Each one
// takes the ordinary server path from here (Rpc.apply / Rpc.read / leader calls), so a client's
// request is forwarded, checked and answered exactly as one that entered this server over HTTP.
// Answers are envelopes (rpc/envelope.ts): errors cross with their kind intact.
import type { Transport } from '@registry/raft';
import type { LeaderMethod } from '../rpc/leader-calls';
import { toEnvelope, type Envelope } from '../rpc/envelope';
import type { RpcApi } from '../rpc/rpc-api';
import type { ClientApply, ClientFacts, ClientLeaderCall, ClientRead, HeartbeatReply } from './client-facts';

export interface ClientGatewayDeps {
  transport: Transport;
  rpc: RpcApi;
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
    return enveloped(() => rpc.apply(req.cmd, { token: req.token, internal, requestId: req.requestId }));
  });
  transport.handle('client.read', (body) => {
    const req = body as ClientRead;
    return enveloped(() => rpc.readByName(req.endpoint, req.args, req.opts));
  });
  transport.handle('client.call', (body) => {
    const req = body as ClientLeaderCall;
    return enveloped(() => rpc.leader.call(req.method as LeaderMethod, req.args as never));
  });
  transport.handle('client.heartbeat', (body) =>
    enveloped(async (): Promise<HeartbeatReply> => {
      await rpc.leader.call('Cluster.ClientHeartbeat', body as ClientFacts);
      return { servers: d.servers(), leader: d.leader(), intervalMs: d.heartbeatIntervalMs() };
    }),
  );
  transport.handle('client.members', () => enveloped(() => d.members()));
  transport.handle('client.raft-configuration', () => enveloped(() => d.raftConfiguration()));
}
