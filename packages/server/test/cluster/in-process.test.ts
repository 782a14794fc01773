// Three server agents in one process: Raft over an in-memory network and on memory storage, through
// the Agent's storage and transport factories (issue 13, item 8), driven through HTTP. The fastest
// way to test cluster behaviour that needs no real process (failover by SIGKILL stays in the
// process tests); and it shows the seams: the agent is not tied to TCP or LevelDB for Raft.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNetwork, MemoryStorage } from '@registry/raft';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';

const network = new InMemoryNetwork();
const addresses = ['mem-s1:1', 'mem-s2:1', 'mem-s3:1'];
const agents: Agent[] = [];
const storages: MemoryStorage[] = [];
let dir: string;
const url = (a: Agent) => `http://127.0.0.1:${a.httpPort}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-in-process-'));
  await Promise.all(
    addresses.map(async (address, i) => {
      const config = buildConfig({
        server: true,
        bootstrapExpect: 3,
        node: `s${i + 1}`,
        dataDir: join(dir, `s${i + 1}`),
        httpPort: 0,
        serverPort: 0,
        dnsPort: -1,
        retryJoin: addresses.filter((a) => a !== address),
      });
      const storage = new MemoryStorage();
      storages[i] = storage;
      agents[i] = await Agent.start(config, {
        logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false),
        storage: () => storage,
        transport: async () => network.transport(address),
      });
    }),
  );
  await waitFor(async () => (await Promise.all(agents.map(async (a) => (await http(url(a), 'GET', '/v1/status/leader')).json))).every((l) => typeof l === 'string' && l !== ''), 20_000);
}, 30_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a?.stop().catch(() => undefined)));
  await rm(dir, { recursive: true, force: true });
});

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
