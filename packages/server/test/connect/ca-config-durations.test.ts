// PUT /v1/connect/ca/configuration takes durations as Go's client sends them (a time.Duration is
// JSON integer nanoseconds) as well as strings ("72h"); the same duration in either spelling is no
// change; a negative or fractional number is 400.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';

const HOUR_NS = 3_600_000_000_000;
let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
  await waitFor(async () => (await http(a.url, 'GET', '/v1/connect/ca/roots')).json?.ActiveRootID !== '', 10_000);
});
afterAll(() => a.stop());

const config = async () => (await http(a.url, 'GET', '/v1/connect/ca/configuration')).json;
const put = (body: unknown) => http(a.url, 'PUT', '/v1/connect/ca/configuration', body);

test('integer nanoseconds are accepted and stored as Go prints the duration', async () => {
  const r = await put({ Provider: 'registry', Config: { LeafCertTTL: 24 * HOUR_NS, RotationPeriod: 1000 * HOUR_NS } });
  expect(r.status).toBe(200);
  expect((await config()).Config).toMatchObject({ LeafCertTTL: '24h0m0s', RotationPeriod: '1000h0m0s' });
});

test('the same duration spelled as a string or in nanoseconds changes nothing', async () => {
  const before = await config();
  expect((await put({ Provider: 'registry', Config: { LeafCertTTL: '24h', RotationPeriod: 1000 * HOUR_NS } })).status).toBe(200);
  expect((await config()).ModifyIndex).toBe(before.ModifyIndex);
});

test('the ranges apply to nanoseconds too, and a leaf is issued with the new TTL', async () => {
  expect((await put({ Config: { LeafCertTTL: 30 * 60 * 1e9 } })).text).toContain('LeafCertTTL must be at least 1h');
  expect((await put({ Config: { LeafCertTTL: 2 * HOUR_NS } })).status).toBe(200);
  const leaf = (await http(a.url, 'GET', '/v1/agent/connect/ca/leaf/durations')).json;
  const ms = Date.parse(leaf.ValidBefore) - Date.parse(leaf.ValidAfter);
  // NotAfter = NotBefore + LeafCertTTL.
  expect(Math.abs(ms - 2 * 3600 * 1000)).toBeLessThan(5_000);
});

test.each([[{ LeafCertTTL: -5 }], [{ LeafCertTTL: 1.5 }], [{ RotationPeriod: true }]])('Config %j is 400 and changes nothing', async (c) => {
  const before = await config();
  const r = await put({ Config: c });
  expect(r.status).toBe(400);
  expect(r.text.length).toBeGreaterThan(0);
  expect((await config()).ModifyIndex).toBe(before.ModifyIndex);
});
