// A server that joins comes in as a non-voter and is made a voter only once it has caught up
// (cluster/join.ts, as Consul's autopilot does with raft protocol 3). A joiner that never follows —
// here a probe on the network that asks to join and answers no Raft message — must not count
// against the quorum: beside one stopped voter, a fourth voter that does not answer left two live
// of four, and the cluster had no leader for good (dead-server-cleanup in CI). Three agents in one
// process on an in-memory network.
import type { Transport } from '@registry/raft';
import { http } from '../support/dev-agent';
import { agentUrl as url, InMemoryCluster } from './support/in-memory-cluster';

const cluster = new InMemoryCluster('joinnv');
const { addresses, agents } = cluster;
let probe: Transport;

beforeAll(async () => {
  await cluster.start('registry-join-non-voter-');
  probe = cluster.network.transport('joinnv-probe:1');
}, 30_000);

afterAll(async () => {
  await cluster.stop();
  await probe?.close();
});

type Servers = { Servers: { Address: string; Voter: boolean }[] };

test('a joiner that never catches up stays a non-voter, and the cluster keeps its leader beside a stopped voter', async () => {
  const leaderAddress = (await http(url(agents[0]!), 'GET', '/v1/status/leader')).json as string;
  const leader = agents[addresses.indexOf(leaderAddress)]!;
  const stopped = addresses.findIndex((a) => a !== leaderAddress);
  await agents[stopped]!.stop();

  const facts = { id: '7f3c2a10-0000-4000-8000-00000000abcd', address: 'joinnv-probe:1', node: 'probe', datacenter: 'dc1', bootstrapExpect: 0 };
  // The leader adds it and waits for it to catch up; it never does, so the join is not complete.
  await expect(probe.call(leaderAddress, 'cluster.join', facts, 10_000)).rejects.toThrow(/not caught up/);

  const conf = (await http(url(leader), 'GET', '/v1/operator/raft/configuration')).json as Servers;
  expect(conf.Servers.find((s) => s.Address === 'joinnv-probe:1')).toMatchObject({ Voter: false });
  expect(conf.Servers.filter((s) => s.Voter)).toHaveLength(3);

  // Well past an election timeout: still the same leader, and writes commit with two of three voters.
  for (let i = 0; i < 10; i++) {
    const put = await http(url(leader), 'PUT', `/v1/kv/after-join/${i}`, 'yes');
    expect(put.json).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
  }
  expect((await http(url(leader), 'GET', '/v1/status/leader')).json).toBe(leaderAddress);
}, 30_000);
