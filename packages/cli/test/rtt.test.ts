// `registry rtt` (Consul 1.4's command/rtt): the round trip serf's Vivaldi model predicts from the
// nodes' coordinates (vector distance + heights + adjustments), Consul's output line, the agent's
// own node as the default second node, -wan with <node>.<dc> names, and Consul's errors.
import { startDevAgent, waitFor, type TestAgent } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

jest.setTimeout(60_000);

let t: TestAgent;
let addr: string;

const vec = (...head: number[]) => [...head, ...Array(8 - head.length).fill(0)];
const COORDS = {
  // |(0.001, 0) - (0, 0.002)| = 2.2360679 ms; + heights 0.3 ms; - adjustment 0.1 ms = 2.436 ms.
  n1: { Vec: vec(0.001), Error: 0.2, Height: 0.0001, Adjustment: 0 },
  n2: { Vec: vec(0, 0.002), Error: 0.2, Height: 0.0002, Adjustment: -0.0001 },
  // Adjustments that would make the distance negative are left out: 0.5 ms + 0 heights.
  n3: { Vec: vec(0.0015, 0.002), Error: 0.2, Height: 0, Adjustment: -0.01 },
};

async function put(path: string, body: unknown): Promise<void> {
  const r = await fetch(`${t.url}${path}`, { method: 'PUT', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
}

beforeAll(async () => {
  t = await startDevAgent();
  addr = `-http-addr=127.0.0.1:${t.agent.httpPort}`;
  for (const [node, coord] of Object.entries(COORDS)) {
    await put('/v1/catalog/register', { Node: node, Address: '10.0.0.1' });
    await put('/v1/coordinate/update', { Node: node, Coord: coord });
  }
  // The three above and the agent's own, which it publishes once the leader has registered it.
  await waitFor(async () => ((await (await fetch(`${t.url}/v1/coordinate/nodes`)).json()) as unknown[]).length === 4, 20_000);
}, 60_000);

afterAll(() => t?.stop());

test('LAN: Consul\'s line with the Vivaldi distance; adjustments apply only while the sum stays positive', async () => {
  expect(await cli(['rtt', addr, 'n1', 'n2'])).toEqual({ code: 0, stdout: 'Estimated n1 <-> n2 rtt: 2.436 ms (using LAN coordinates)\n', stderr: '' });
  expect(await cli(['rtt', addr, 'n2', 'n3'])).toEqual({ code: 0, stdout: 'Estimated n2 <-> n3 rtt: 1.700 ms (using LAN coordinates)\n', stderr: '' });
});

test('the second node defaults to the agent\'s own; unknown nodes and wrong arity are Consul\'s errors, exit 1', async () => {
  expect(await cli(['rtt', addr, 'n1'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Estimated n1 <-> test-agent rtt: \d+\.\d{3} ms \(using LAN coordinates\)\n$/) });
  expect(await cli(['rtt', addr, 'nope', 'n1'])).toEqual({ code: 1, stdout: '', stderr: 'Could not find a coordinate for node "nope"\n' });
  expect(await cli(['rtt', addr, 'n1', 'nope'])).toEqual({ code: 1, stdout: '', stderr: 'Could not find a coordinate for node "nope"\n' });
  const arity = await cli(['rtt', addr]);
  expect(arity).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^One or two node names must be specified\n\nUsage: registry rtt/) });
  expect((await cli(['rtt', addr, 'a', 'b', 'c'])).code).toBe(1);
});

test('-wan: names must be <node>.<dc>; the servers\' WAN coordinates are used', async () => {
  expect(await cli(['rtt', addr, '-wan', 'n1'])).toEqual({ code: 1, stdout: '', stderr: 'Node names must be specified as <node name>.<datacenter> with -wan\n' });
  expect(await cli(['rtt', addr, '-wan', 'n1.dc1'])).toEqual({ code: 1, stdout: '', stderr: 'Could not find a coordinate for node "n1.dc1"\n' });
  // The server's own WAN coordinate, by its name and datacenter, and as the default second node.
  expect(await cli(['rtt', addr, '-wan', 'test-agent.dc1'])).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(/^Estimated test-agent\.dc1 <-> test-agent\.dc1 rtt: \d+\.\d{3} ms \(using WAN coordinates\)\n$/),
  });
  expect(await cli(['rtt', addr, '-wan', 'test-agent.dc2'])).toEqual({ code: 1, stdout: '', stderr: 'Could not find a coordinate for node "test-agent.dc2"\n' });
});

test('an agent that cannot be reached: Consul\'s error, exit 1', async () => {
  const r = await cli(['rtt', '-http-addr=127.0.0.1:1', 'n1', 'n2']);
  expect(r).toEqual({ code: 1, stdout: '', stderr: 'Error getting coordinates: connection refused 127.0.0.1:1\n' });
});
