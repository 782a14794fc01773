// A snapshot restore ends every blocking query (issue #29 item 13, as Consul's restore abandons its
// watches): one already waiting returns at once instead of after its whole `wait`, and one that
// arrives later with an index from before the restore returns at once too, because every read
// after a restore answers at least the restore's index. A query holding an index from after the
// restore still waits.
import { startDevAgent, http, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => (a = await startDevAgent()));
afterAll(() => a.stop());

const indexOf = (r: Response) => Number(r.headers.get('x-registry-index'));

test('a restore wakes the blocked, and an index from before it does not block', async () => {
  expect((await http(a.url, 'PUT', '/v1/kv/app/x', 'saved')).status).toBe(200);
  const archive = Buffer.from(await (await fetch(`${a.url}/v1/snapshot`)).arrayBuffer());
  expect((await http(a.url, 'PUT', '/v1/kv/app/x', 'after')).status).toBe(200);
  const before = indexOf(await fetch(`${a.url}/v1/kv/app/x`));

  // Waiting on the newest index, for up to 30 s.
  const t0 = performance.now();
  const blocked = fetch(`${a.url}/v1/kv/app/x?index=${before}&wait=30s`);
  await new Promise((r) => setTimeout(r, 300));
  const restored = await fetch(`${a.url}/v1/snapshot`, { method: 'PUT', body: archive });
  expect(restored.status).toBe(200);
  const woken = await blocked;
  expect(performance.now() - t0).toBeLessThan(10_000);
  expect(woken.status).toBe(200);
  expect(indexOf(woken)).toBeGreaterThan(before);
  expect(Buffer.from(((await woken.json()) as { Value: string }[])[0]!.Value, 'base64').toString()).toBe('saved');

  // A client still holding the index from before the restore is answered at once, with the restored value.
  const t1 = performance.now();
  const late = await fetch(`${a.url}/v1/kv/app/x?index=${before}&wait=30s`);
  expect(performance.now() - t1).toBeLessThan(10_000);
  const after = indexOf(late);
  expect(after).toBeGreaterThan(before);
  expect(Buffer.from(((await late.json()) as { Value: string }[])[0]!.Value, 'base64').toString()).toBe('saved');

  // With the index it was just given, it waits again: here for its whole (short) wait.
  const t2 = performance.now();
  const waits = await fetch(`${a.url}/v1/kv/app/x?index=${after}&wait=1s`);
  expect(performance.now() - t2).toBeGreaterThanOrEqual(900);
  expect(indexOf(waits)).toBe(after);
  // And a change after the restore moves it on.
  const next = fetch(`${a.url}/v1/kv/app/x?index=${after}&wait=30s`);
  await new Promise((r) => setTimeout(r, 200));
  expect((await http(a.url, 'PUT', '/v1/kv/app/x', 'newer')).status).toBe(200);
  const moved = await next;
  expect(indexOf(moved)).toBeGreaterThan(after);
  expect(Buffer.from(((await moved.json()) as { Value: string }[])[0]!.Value, 'base64').toString()).toBe('newer');
});

test('every read after a restore answers at least its index, catalog reads too', async () => {
  const first = indexOf(await fetch(`${a.url}/v1/kv/app/x`));
  const archive = Buffer.from(await (await fetch(`${a.url}/v1/snapshot`)).arrayBuffer());
  expect((await fetch(`${a.url}/v1/snapshot`, { method: 'PUT', body: archive })).status).toBe(200);
  // Catalog reads too, not only the table the test wrote: every table's index is at least the restore's.
  const nodes = await fetch(`${a.url}/v1/catalog/nodes`);
  expect(indexOf(nodes)).toBeGreaterThan(first);
  await nodes.arrayBuffer();
});
