// Three ACL-enabled servers (default deny, `masterSecret` as the initial management token), started
// and waited on until that token works, and a client agent joined to them: what the client-agent ACL
// tests start from.
import { rmSync, writeFileSync } from 'node:fs';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { ClientAgents } from '../cluster/support/client-agents';

/** `proxied`: a proxy on every server link; `raft`: the servers' raft config section. */
export interface AclClusterOptions {
  proxied?: boolean;
  raft?: Record<string, unknown>;
}

export async function startAclCluster(configPath: string, masterSecret: string, options: AclClusterOptions = {}): Promise<{ cluster: ClusterHarness; leader: number }> {
  writeFileSync(configPath, JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: masterSecret } }, ...(options.raft ? { raft: options.raft } : {}) }));
  const cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-config-file', configPath, '-dns-port', '-1'], proxied: options.proxied });
  await cluster.waitForLeader(20_000);
  const leader = (await cluster.leader()) ?? 0;
  // The master token is created by the leader duty shortly after the election.
  const ready = await eventually(
    async () => (await cluster.http(leader, 'GET', '/v1/acl/token/self', undefined, { headers: { 'X-Registry-Token': masterSecret }, timeoutMs: 10_000 })).status === 200,
    20_000,
    200,
  );
  if (!ready) {
    const diagnostics = cluster.diagnostics();
    await cluster.stop();
    throw new Error(`the master token never worked\n${diagnostics}`);
  }
  return { cluster, leader };
}

/** Client agent c0 with `config`, joining through `servers`, once the catalog (read on `leader`) lists it. */
export async function startJoinedClient(cluster: ClusterHarness, leader: number, masterSecret: string, servers: string[], config: Record<string, unknown>): Promise<ClientAgents> {
  const clients = new ClientAgents(cluster.dir, servers, config);
  await clients.start(1);
  const joined = await eventually(async () => {
    const r = await cluster.http(leader, 'GET', '/v1/catalog/node/c0', undefined, { headers: { 'X-Registry-Token': masterSecret }, timeoutMs: 10_000 });
    return r.status === 200 && r.json<unknown>() !== null;
  }, 30_000, 250);
  if (!joined) throw new Error(`the client did not join\n${clients.diagnostics()}\n${cluster.diagnostics()}`);
  return clients;
}

/** Stops what startAclCluster and startJoinedClient started (either may be missing) and removes the config. */
export async function stopAclCluster(clients: ClientAgents | undefined, cluster: ClusterHarness | undefined, configPath: string): Promise<void> {
  await clients?.stop();
  await cluster?.stop();
  rmSync(configPath, { force: true });
}
