// Three server agents in one process: Raft over an in-memory network and on memory storage, through
// the Agent's storage and transport factories (issue 13, item 8), driven through HTTP. The fastest
// way to test cluster behaviour that needs no real process (failover by SIGKILL stays in the
// process tests); and it shows the seams: the agent is not tied to TCP or LevelDB for Raft.
import { http, waitFor } from '../support/dev-agent';
import { agentUrl as url, InMemoryCluster } from './support/in-memory-cluster';

const cluster = new InMemoryCluster('mem');
const { network, addresses, agents, storages } = cluster;

beforeAll(() => cluster.start('registry-in-process-'), 30_000);
afterAll(() => cluster.stop());

test('the three agents form one cluster on the in-memory network and agree on its leader', async () => {
  const leaders = await Promise.all(agents.map(async (a) => (await http(url(a), 'GET', '/v1/status/leader')).json));
  expect(new Set(leaders).size).toBe(1);
  expect(addresses).toContain(leaders[0]);
  const peers = (await http(url(agents[0]), 'GET', '/v1/status/peers')).json;
  expect([...peers].sort()).toEqual([...addresses].sort());
});

test('a write through every agent is read back from every other, and Raft wrote it to memory storage', async () => {
  for (const [i, a] of agents.entries()) {
    const put = await http(url(a), 'PUT', `/v1/kv/in-process/${i}`, `v${i}`);
    expect(put.json).toBe(true);
  }
  for (const a of agents) {
    for (let i = 0; i < agents.length; i++) {
      const got = await http(url(a), 'GET', `/v1/kv/in-process/${i}?raw&consistent`);
      expect(got.text).toBe(`v${i}`);
    }
  }
  for (const s of storages) expect((await s.load()).entries.length).toBeGreaterThan(3);
});

test('cutting the leader off on the network elects another, and writes go on', async () => {
  const leader = (await http(url(agents[0]), 'GET', '/v1/status/leader')).json as string;
  network.isolate(leader);
  const others = agents.filter((_a, i) => addresses[i] !== leader);
  await waitFor(async () => {
    const l = (await http(url(others[0]), 'GET', '/v1/status/leader')).json;
    return typeof l === 'string' && l !== '' && l !== leader;
  }, 20_000);
  const put = await http(url(others[1]), 'PUT', '/v1/kv/in-process/after', 'yes');
  expect(put.json).toBe(true);
  expect((await http(url(others[0]), 'GET', '/v1/kv/in-process/after?raw&consistent')).text).toBe('yes');
  network.heal();
}, 30_000);
