// Health of a service with thousands of instances (issue #16): each instance's entry is kept and
// the service's entries follow the table's journal of changed nodes instead of being rebuilt per
// read. Whatever changes between two reads — a check, a node, an instance added, renamed or
// removed, a node deleted — the answer is exactly what a fresh build gives. The fresh build here
// is the node-meta–filtered read: every node carries env=prod, so it selects every instance, but
// it sorts and shapes them anew rather than reading the kept listing.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

jest.setTimeout(120_000);

const NODES = 1500;
let t: TestAgent;

const nodeName = (n: number) => `web-node-${String(n).padStart(5, '0')}`;

async function txn(ops: unknown[]): Promise<void> {
  const r = await http(t.url, 'PUT', '/v1/txn', ops);
  if (r.status !== 200) throw new Error(`txn failed: ${r.status} ${r.text}`);
}

function instanceOps(n: number, status = 'passing'): unknown[] {
  const node = nodeName(n);
  return [
    { Node: { Verb: 'set', Node: { Node: node, Address: `10.20.${n >> 8}.${n & 255}`, Meta: { env: 'prod' } } } },
    { Service: { Verb: 'set', Node: node, Service: { ID: 'web-1', Service: 'web', Port: 8080, Tags: n % 2 ? ['odd'] : ['even'] } } },
    { Check: { Verb: 'set', Check: { Node: node, CheckID: 'web-alive', Name: 'web alive', Status: status, ServiceID: 'web-1' } } },
  ];
}

beforeAll(async () => {
  t = await startDevAgent();
  for (let first = 0; first < NODES; first += 21) {
    const ops: unknown[] = [];
    for (let n = first; n < Math.min(first + 21, NODES); n++) ops.push(...instanceOps(n));
    await txn(ops);
  }
});
afterAll(async () => {
  await t?.stop();
});

async function expectFreshAnswer(): Promise<unknown[]> {
  const kept = await http(t.url, 'GET', '/v1/health/service/web');
  const fresh = await http(t.url, 'GET', '/v1/health/service/web?node-meta=env:prod');
  expect(kept.status).toBe(200);
  expect(kept.json).toEqual(fresh.json);
  const keys = (kept.json as { Node: { Node: string }; Service: { ID: string } }[]).map((e) => `${e.Node.Node.toLowerCase()}\u0000${e.Service.ID.toLowerCase()}`);
  expect(keys).toEqual([...keys].sort());
  return kept.json as unknown[];
}

test('the whole service, in (node, service ID) order, as a fresh build gives it', async () => {
  const entries = await expectFreshAnswer();
  expect(entries).toHaveLength(NODES);
});

test('between reads: a check, a node, an instance added, renamed, removed, a node deleted — exactly shown', async () => {
  await expectFreshAnswer();
  // A check turns critical; a node's address changes; a second instance on a node; a new node in
  // the middle; an instance renamed to another service; an instance deregistered; a node deleted.
  await txn([{ Check: { Verb: 'set', Check: { Node: nodeName(10), CheckID: 'web-alive', Name: 'web alive', Status: 'critical', ServiceID: 'web-1' } } }]);
  await txn([{ Node: { Verb: 'set', Node: { Node: nodeName(20), Address: '192.168.9.9', Meta: { env: 'prod' } } } }]);
  await txn([{ Service: { Verb: 'set', Node: nodeName(30), Service: { ID: 'web-0', Service: 'web', Port: 9090 } } }]);
  await txn(instanceOps(100_000).map((op) => JSON.parse(JSON.stringify(op).replaceAll(nodeName(100_000), 'web-node-00040x'))));
  await txn([{ Service: { Verb: 'set', Node: nodeName(50), Service: { ID: 'web-1', Service: 'api', Port: 8080 } } }]);
  await txn([{ Service: { Verb: 'delete', Node: nodeName(60), Service: { ID: 'web-1' } } }]);
  await txn([{ Node: { Verb: 'delete', Node: { Node: nodeName(70) } } }]);
  const entries = (await expectFreshAnswer()) as { Node: { Node: string; Address: string }; Service: { ID: string }; Checks: { Status: string }[] }[];
  expect(entries).toHaveLength(NODES + 1 + 1 - 1 - 1 - 1);
  expect(entries.find((e) => e.Node.Node === nodeName(10))?.Checks.map((c) => c.Status)).toEqual(['critical']);
  expect(entries.find((e) => e.Node.Node === nodeName(20))?.Node.Address).toBe('192.168.9.9');
  expect(entries.filter((e) => e.Node.Node === nodeName(30)).map((e) => e.Service.ID)).toEqual(['web-0', 'web-1']);
  expect(entries.some((e) => e.Node.Node === 'web-node-00040x')).toBe(true);
  for (const gone of [50, 60, 70]) expect(entries.some((e) => e.Node.Node === nodeName(gone))).toBe(false);
  // ?passing drops the critical one; a tag filter still applies.
  const passing = await http(t.url, 'GET', '/v1/health/service/web?passing');
  expect((passing.json as unknown[]).length).toBe(entries.length - 1);
  const odd = await http(t.url, 'GET', '/v1/health/service/web?tag=odd');
  expect((odd.json as { Service: { Tags: string[] } }[]).every((e) => e.Service.Tags.includes('odd'))).toBe(true);
});

test('hundreds of nodes changed between two reads (the listing is built again) still show exactly', async () => {
  await expectFreshAnswer();
  for (let first = 200; first < 200 + 30 * 21; first += 21) {
    const ops: unknown[] = [];
    for (let n = first; n < first + 21; n++) ops.push(...instanceOps(n, 'warning'));
    await txn(ops);
  }
  const entries = (await expectFreshAnswer()) as { Checks: { Status: string }[] }[];
  expect(entries.filter((e) => e.Checks.some((c) => c.Status === 'warning'))).toHaveLength(30 * 21);
});
