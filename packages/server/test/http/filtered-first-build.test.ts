// Issue #16, fourth round: the first read of a large catalog/service, tag-filtered health/service or
// health/state on an agent that never read it is built in steps (store catalog/node-rows.ts) while
// other requests are answered, and answers exactly what the independent listings answer. The agent
// runs in this process, so small reads answered between sending the big read and its first byte
// show that the build did not hold the loop (first-build.test.ts does the same for nodes, health, KV).
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { bigReadBesideSmallOnes as bigReads, loadThroughTxn } from '../support/large-reads';

jest.setTimeout(300_000);

const NODES = 20_000;
let t: TestAgent;

const nodeName = (n: number) => `ffb-${n % 9 === 0 ? 'X' : 'x'}-${String(n).padStart(6, '0')}`;

beforeAll(async () => {
  t = await startDevAgent();
  await loadThroughTxn(t.url, NODES, 20, (n) => {
    const node = nodeName(n);
    return [
      { Node: { Verb: 'set', Node: { Node: node, Address: `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}`, Meta: { rack: `r${n % 4}` } } } },
      { Service: { Verb: 'set', Node: node, Service: { ID: `web-${n % 3}`, Service: 'web', Port: 8080, Tags: n % 2 ? ['v1'] : ['v2'] } } },
      { Check: { Verb: 'set', Check: { Node: node, CheckID: `alive-${n % 5}`, Name: 'alive', Status: n % 7 ? 'passing' : 'critical', ServiceID: `web-${n % 3}` } } },
    ];
  });
});
afterAll(async () => {
  await t?.stop();
});

const bigReadBesideSmallOnes = (path: string) => bigReads(t.url, path);

interface HealthEntry {
  Node: { Node: string; Meta: Record<string, string> };
  Service: { ID: string; Tags: string[]; Port: number };
  Checks: { CheckID: string; Status: string; Node: string }[];
}

test('the first tag-filtered catalog/service read is built while small reads are answered, and is exact', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/catalog/service/web?tag=v1');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  const shown = big as { Node: string; ServiceID: string; ServiceTags: string[]; NodeMeta: Record<string, string> }[];
  expect(shown).toHaveLength(NODES / 2);
  const all = (await http(t.url, 'GET', '/v1/health/service/web')).json as HealthEntry[];
  const want = all.filter((e) => e.Service.Tags.includes('v1'));
  expect(shown.map((s) => [s.Node, s.ServiceID, s.ServiceTags, s.NodeMeta])).toEqual(want.map((e) => [e.Node.Node, e.Service.ID, e.Service.Tags, e.Node.Meta]));
});

test('the first node-meta-filtered health/service read is built while small reads are answered, and is exact', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/health/service/web?node-meta=rack:r1&tag=v1');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  const all = (await http(t.url, 'GET', '/v1/health/service/web')).json as HealthEntry[];
  expect(JSON.stringify(big)).toBe(JSON.stringify(all.filter((e) => e.Node.Meta.rack === 'r1' && e.Service.Tags.includes('v1'))));
});

test('the first health/state read over every node is built while small reads are answered, and is exact', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/health/state/critical');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  const checks = big as { Node: string; CheckID: string; Status: string; ServiceID: string }[];
  const all = (await http(t.url, 'GET', '/v1/health/service/web')).json as HealthEntry[];
  const want = all.flatMap((e) => e.Checks.filter((c) => c.Status === 'critical').map((c) => [c.Node, c.CheckID]));
  expect(want.length).toBeGreaterThan(NODES / 10);
  expect(checks.map((c) => [c.Node, c.CheckID])).toEqual(want);
  // Read again after a write (the kept listing follows it): exact still.
  const victim = checks[5];
  const r = await http(t.url, 'PUT', '/v1/txn', [
    { Check: { Verb: 'set', Check: { Node: victim.Node, CheckID: victim.CheckID, Name: 'alive', Status: 'passing', ServiceID: victim.ServiceID } } },
  ]);
  expect(r.status).toBe(200);
  const again = (await http(t.url, 'GET', '/v1/health/state/critical')).json as { Node: string; CheckID: string }[];
  expect(again.map((c) => [c.Node, c.CheckID])).toEqual(want.filter(([n, id]) => !(n === victim.Node && id === victim.CheckID)));
});
