// The first read of a large listing on an agent that never built it (issue #16): the listing is
// built in steps (store catalog/listing-steps.ts) while other requests are answered, and then
// answers exactly what a fresh build answers. The agent runs in this process, so while its event
// loop is held the test cannot even send a request: small reads answered between sending the big
// read and its first byte show that the build did not hold the loop.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';
import { bigReadBesideSmallOnes as bigReads, loadThroughTxn } from '../support/large-reads';

// Loading 50,000 rows through /v1/txn takes ~1 min on a loaded machine.
jest.setTimeout(300_000);

const NODES = 30_000;
const KEYS = 20_000;
let t: TestAgent;

const nodeName = (n: number) => `fb-node-${String(n).padStart(6, '0')}`;

beforeAll(async () => {
  t = await startDevAgent();
  await loadThroughTxn(t.url, NODES, 32, (n) => {
    const node = nodeName(n);
    return [
      { Node: { Verb: 'set', Node: { Node: node, Address: `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}`, Meta: { env: 'prod' } } } },
      { Service: { Verb: 'set', Node: node, Service: { ID: `web-${n % 3}`, Service: 'web', Port: 8080, Tags: ['v1'] } } },
    ];
  });
  await loadThroughTxn(t.url, KEYS, 64, (k) => [
    { KV: { Verb: 'set', Key: `big/${String(k).padStart(6, '0')}`, Value: Buffer.from(`value ${k}`).toString('base64') } },
  ]);
});
afterAll(async () => {
  await t?.stop();
});

const bigReadBesideSmallOnes = (path: string) => bigReads(t.url, path);

test('the first health read of 30,000 instances is built while small reads are answered, and is exact', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/health/service/web');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  expect(big).toHaveLength(NODES);
  // The node-meta–filtered read selects every instance too, but sorts and shapes them anew.
  const fresh = await http(t.url, 'GET', '/v1/health/service/web?node-meta=env:prod');
  expect(JSON.stringify(big)).toBe(JSON.stringify(fresh.json));
});

test('the first catalog node listing is built while small reads are answered, and is in name order', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/catalog/nodes');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  const names = (big as { Node: string }[]).map((n) => n.Node);
  expect(names).toHaveLength(NODES + 1);
  expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0)));
  const fresh = await http(t.url, 'GET', '/v1/catalog/nodes?node-meta=env:prod');
  expect((fresh.json as { Node: string }[]).map((n) => n.Node)).toEqual(names.filter((n) => n !== 'test-agent'));
});

test('the first recurse read of a 20,000-key prefix is walked while small reads are answered, and is exact', async () => {
  const { big, smallAnswered } = await bigReadBesideSmallOnes('/v1/kv/big/?recurse');
  expect(smallAnswered).toBeGreaterThanOrEqual(3);
  const entries = big as { Key: string; Value: string }[];
  expect(entries.map((e) => e.Key)).toEqual(Array.from({ length: KEYS }, (_, k) => `big/${String(k).padStart(6, '0')}`));
  expect(Buffer.from(entries[KEYS - 1].Value, 'base64').toString()).toBe(`value ${KEYS - 1}`);
  // Read again (kept listing): byte for byte the same answer.
  const again = await http(t.url, 'GET', '/v1/kv/big/?recurse');
  expect(again.text).toBe(JSON.stringify(big));
});
