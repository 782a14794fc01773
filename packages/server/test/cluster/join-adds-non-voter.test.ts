// `registry join <new server>` run on a member goes through the leader's `Cluster.AddServer`, which
// added the new server as a voter at once: a server that never answered then counted against the
// quorum, and beside one stopped voter of three that was two live of four — no write committed.
// It now comes in as a non-voter, like a server that asks to join (join-as-non-voter.test.ts), and
// the leader's autopilot pass makes it a voter once it answers and has caught up. Three agents in
// one process on an in-memory network, and a new one whose link is silent but for the greeting.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { http } from '../support/dev-agent';
import { CLI } from '../support/processes';
import { eventually, sleep } from '../support/wait';
import { agentUrl as url, InMemoryCluster } from './support/in-memory-cluster';
import { startExtraServer, type ExtraServer } from './support/extra-server';
import { SilencedTransport } from './support/silenced-transport';

// Bounds allow for a loaded two-core machine.
jest.setTimeout(120_000);

const run = promisify(execFile);
const cluster = new InMemoryCluster('joinadd');
const NEW_ADDRESS = '127.0.0.1:4';
let extra: ExtraServer | undefined;
let link: SilencedTransport | undefined;

beforeAll(async () => {
  await cluster.start('registry-join-adds-non-voter-');
}, 60_000);

afterAll(async () => {
  await extra?.stop();
  await cluster.stop();
});

interface Servers {
  Servers: { ID: string; Address: string; Voter: boolean }[];
}

test('registry join on a member adds a silent new server as a non-voter; the cluster commits beside a stopped voter; once it answers it is made a voter', async () => {
  const { agents, addresses } = cluster;
  const leaderAddress = (await http(url(agents[0]!), 'GET', '/v1/status/leader')).json as string;
  const l = addresses.indexOf(leaderAddress);
  const leader = agents[l]!;
  const member = (l + 1) % 3;
  const other = (l + 2) % 3;
  const newRole = async () => ((await http(url(leader), 'GET', '/v1/operator/raft/configuration')).json as Servers).Servers.find((s) => s.Address === NEW_ADDRESS)?.Voter;

  extra = await startExtraServer(cluster.network, {
    node: 'newcomer',
    address: NEW_ADDRESS,
    wrap: (t) => (link = new SilencedTransport(t)),
  });
  expect(link?.silent).toBe(true);

  // On a follower: it greets the new server (which answers that), then asks the leader to add it.
  const joined = await run(process.execPath, [CLI, 'join', '-http-addr', `127.0.0.1:${agents[member]!.httpPort}`, NEW_ADDRESS]);
  expect(joined.stdout).toContain('Successfully joined cluster by contacting 1 nodes.');
  expect(await newRole()).toBe(false);
  expect(((await http(url(leader), 'GET', '/v1/operator/raft/configuration')).json as Servers).Servers.filter((s) => s.Voter)).toHaveLength(3);

  // One voter stopped: with the silent server a voter that would be two live of four. Well past an
  // election timeout and several autopilot passes: the same leader, every write commits, and the
  // silent server is still a non-voter.
  await agents[other]!.stop();
  for (let i = 0; i < 10; i++) {
    const put = await http(url(leader), 'PUT', `/v1/kv/after-join/${i}`, 'yes');
    expect(put.json).toBe(true);
    await sleep(300);
  }
  expect((await http(url(leader), 'GET', '/v1/status/leader')).json).toBe(leaderAddress);
  expect(await newRole()).toBe(false);

  // It answers now: it catches up, and the leader makes it a voter without being asked.
  link!.silent = false;
  expect(await eventually(async () => (await newRole()) === true, 30_000, 200)).toBe(true);
  expect(await eventually(async () => (await http(url(extra!.agent), 'GET', '/v1/kv/after-join/9?raw&stale')).text === 'yes', 20_000, 200)).toBe(true);
  // Three of four voters live: still committing.
  expect((await http(url(leader), 'PUT', '/v1/kv/after-promotion', 'yes')).json).toBe(true);
});
