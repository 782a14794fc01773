// Identical non-blocking reads share one result until the store applies another entry; what a
// client sees must never lag a write it could have observed.
import { ReusedReads } from '../../src/rpc/reused-reads';
import { JsonEncoder } from '../../src/http/json-encoder';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

describe('ReusedReads', () => {
  test('an identical read at the same store index is answered without running again', () => {
    const reads = new ReusedReads();
    let runs = 0;
    const run = () => ({ index: 7, value: [{ n: ++runs }], keys: [] });
    const a = reads.get(7, 'health.service', 't', { service: 'web' }, run);
    const b = reads.get(7, 'health.service', 't', { service: 'web' }, run);
    expect(b).toBe(a);
    expect(runs).toBe(1);
  });

  test('another token, other arguments or a newer store index run the read again', () => {
    const reads = new ReusedReads();
    let runs = 0;
    const run = () => ({ index: 7, value: [++runs], keys: [] });
    reads.get(7, 'health.service', 't', { service: 'web' }, run);
    reads.get(7, 'health.service', 'other', { service: 'web' }, run);
    reads.get(7, 'health.service', 't', { service: 'db' }, run);
    reads.get(8, 'health.service', 't', { service: 'web' }, run);
    expect(runs).toBe(4);
  });

  test('a shared value is encoded once, as bytes; after the store moves on it is encoded afresh', () => {
    const reads = new ReusedReads();
    const encodeJson = new JsonEncoder(reads).encode;
    const value = [{ a: 1 }];
    const first = reads.get(1, 'catalog.nodes', undefined, {}, () => ({ index: 1, value, keys: [] }));
    const bytes = encodeJson(first.value);
    expect(Buffer.isBuffer(bytes) && bytes.toString()).toBe('[{"a":1}]');
    value[0].a = 2; // never done by routes; shows the cached encoding is what is served
    expect(encodeJson(first.value)).toBe(bytes);
    reads.get(2, 'catalog.nodes', undefined, {}, () => ({ index: 2, value, keys: [] }));
    expect(String(encodeJson(value))).toBe('[{"a":2}]');
  });

  test('values that were not shared are encoded every time', () => {
    const encodeJson = new JsonEncoder(new ReusedReads()).encode;
    const value = { a: 1 };
    expect(encodeJson(value)).toBe('{"a":1}');
    value.a = 2;
    expect(encodeJson(value)).toBe('{"a":2}');
  });
});

describe('through HTTP', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startDevAgent();
  });
  afterAll(async () => {
    await t.stop();
  });

  const register = (node: string, tags: string[]) =>
    http(t.url, 'PUT', '/v1/catalog/register', { Node: node, Address: '10.0.0.1', Service: { Service: 'web', Tags: tags } });

  test.each(['?stale', '', '?consistent'])('a read%s after a write shows the write', async (mode) => {
    await register(`a${mode.length}`, ['v1']);
    const before = await http(t.url, 'GET', `/v1/health/service/web${mode}`);
    expect((await http(t.url, 'GET', `/v1/health/service/web${mode}`)).text).toBe(before.text);
    await register(`b${mode.length}`, ['v2']);
    const after = await http(t.url, 'GET', `/v1/health/service/web${mode}`);
    expect(after.json.length).toBe(before.json.length + 1);
    expect(Number(after.headers.get('x-registry-index'))).toBeGreaterThan(Number(before.headers.get('x-registry-index')));
  });

  test('reads with different filters are not mixed up, and ?pretty still indents', async () => {
    await register('c1', ['blue']);
    const all = await http(t.url, 'GET', '/v1/catalog/service/web?stale');
    const blue = await http(t.url, 'GET', '/v1/catalog/service/web?stale&tag=blue');
    expect(blue.json.map((s: any) => s.Node)).toEqual(['c1']);
    expect(all.json.length).toBeGreaterThan(1);
    const pretty = await http(t.url, 'GET', '/v1/catalog/service/web?stale&pretty');
    expect(pretty.text).toBe(JSON.stringify(all.json, null, 4) + '\n');
  });
});
