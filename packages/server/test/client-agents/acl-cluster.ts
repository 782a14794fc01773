// Three ACL-enabled servers (default deny, `masterSecret` as the initial management token), started
// and waited on until that token works: what the client-agent ACL tests start from.
import { writeFileSync } from 'node:fs';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';

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
