import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
});
afterAll(() => a.stop());

const reg = (node: string, service: string) =>
  http(a.url, 'PUT', '/v1/catalog/register', { Node: node, Address: '10.0.0.1', Service: { Service: service, Port: 80 } });

describe.each(['/v1/catalog/service/web', '/v1/health/service/web'])('%s?cached', (path) => {
  test('MISS then HIT with Age 0; without ?cached no X-Cache header', async () => {
    await reg('n1', 'web');
    const plain = await http(a.url, 'GET', path);
    expect(plain.headers.get('x-cache')).toBeNull();
    const first = await http(a.url, 'GET', `${path}?cached&tag=none`);
    const second = await http(a.url, 'GET', `${path}?cached&tag=none`);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('age')).toBe('0');
    expect(second.json).toEqual(first.json);
    expect(first.headers.get('x-registry-index')).toBeTruthy();
  });

  test('the background refresh picks up a new instance, and a blocking cached request wakes for it', async () => {
    const first = await http(a.url, 'GET', `${path}?cached`);
    const index = first.headers.get('x-registry-index');
    const blocked = http(a.url, 'GET', `${path}?cached&index=${index}&wait=10s`);
    await new Promise((r) => setTimeout(r, 100));
    const node = `n-${path.length}-${Date.now()}`;
    await reg(node, 'web');
    const woke = await blocked;
    expect(woke.headers.get('x-cache')).toBe('HIT');
    expect(Number(woke.headers.get('x-registry-index'))).toBeGreaterThan(Number(index));
    const nodes = (woke.json as any[]).map((e) => e.Node?.Node ?? e.Node);
    expect(nodes).toContain(node);
  });

  test('?cached with ?consistent is 400', async () => {
    const r = await http(a.url, 'GET', `${path}?cached&consistent`);
    expect(r.status).toBe(400);
  });
});

test('cached answers for different tokens or arguments are separate entries', async () => {
  await reg('n1', 'api');
  const all = await http(a.url, 'GET', '/v1/catalog/service/api?cached');
  const tagged = await http(a.url, 'GET', '/v1/catalog/service/api?cached&tag=x');
  expect(all.json).toHaveLength(1);
  expect(tagged.json).toEqual([]);
  expect(tagged.headers.get('x-cache')).toBe('MISS');
  await waitFor(async () => (await http(a.url, 'GET', '/v1/catalog/service/api?cached&tag=x')).headers.get('x-cache') === 'HIT', 2_000);
});
