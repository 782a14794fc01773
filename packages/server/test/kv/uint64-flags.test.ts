// KV Flags are Go uint64s (issue 15): values beyond 2^53 — the Go client's lock and semaphore flag
// values — are stored and answered exactly, as digits in the JSON text, on every path that carries
// them: PUT ?flags, GET, ?recurse, ?pretty, blocking reads, /v1/txn (written and read), locks
// taken with ?acquire, and the Raft log replayed after a restart. Out-of-range values are 400.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, createLogger } from '@registry/server';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePort } from '../support/processes';

const LOCK_FLAGS = '3304740253564472344'; // api.LockFlagValue
const SEMAPHORE_FLAGS = '16210313421097356768'; // api.SemaphoreFlagValue, above 2^63
const MAX = '18446744073709551615';

let t: TestAgent;
const get = (path: string) => http(t.url, 'GET', path);
const put = (path: string, body?: string) => http(t.url, 'PUT', path, body);
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  t = await startDevAgent();
});
afterAll(async () => {
  await t.stop();
});

describe('PUT /v1/kv ?flags', () => {
  test.each([LOCK_FLAGS, SEMAPHORE_FLAGS, MAX, '9007199254740993'])('%s is stored and answered with its exact digits', async (flags) => {
    expect((await put(`/v1/kv/big/${flags}?flags=${flags}`, 'v')).json).toBe(true);
    const r = await get(`/v1/kv/big/${flags}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`"Flags":${flags},`);
  });

  test('small flags stay ordinary JSON numbers', async () => {
    await put('/v1/kv/small?flags=42', 'v');
    expect((await get('/v1/kv/small')).json[0].Flags).toBe(42);
  });

  test('?recurse and ?pretty carry the exact digits too', async () => {
    await put(`/v1/kv/tree/a?flags=${LOCK_FLAGS}`, 'a');
    await put('/v1/kv/tree/b?flags=7', 'b');
    const r = await get('/v1/kv/tree/?recurse');
    expect(r.text).toContain(`"Key":"tree/a","Flags":${LOCK_FLAGS},`);
    expect(r.text).toContain('"Key":"tree/b","Flags":7,');
    const pretty = await get('/v1/kv/tree/a?pretty');
    expect(pretty.text).toContain(`"Flags": ${LOCK_FLAGS},`);
    expect(pretty.text.endsWith('\n')).toBe(true);
  });

  test('?raw still answers the bytes', async () => {
    await put(`/v1/kv/rawbig?flags=${MAX}`, 'bytes');
    expect((await get('/v1/kv/rawbig?raw')).text).toBe('bytes');
  });

  test.each([
    ['18446744073709551616', 'value out of range'],
    ['99999999999999999999999', 'value out of range'],
    ['-1', 'invalid syntax'],
    ['1.5', 'invalid syntax'],
    ['abc', 'invalid syntax'],
  ])('flags=%s is 400 (%s) and writes nothing', async (flags, why) => {
    const r = await put(`/v1/kv/refused?flags=${flags}`, 'v');
    expect(r.status).toBe(400);
    expect(r.text).toBe(`strconv.ParseUint: parsing ${JSON.stringify(flags)}: ${why}`);
    expect((await get('/v1/kv/refused')).status).toBe(404);
  });

  test('a blocking read wakes with the exact flags of the new write', async () => {
    await put('/v1/kv/watched?flags=1', 'old');
    const first = await get('/v1/kv/watched');
    const index = first.headers.get('x-registry-index');
    const woken = get(`/v1/kv/watched?index=${index}&wait=10s`);
    await new Promise((r) => setTimeout(r, 200));
    await put(`/v1/kv/watched?flags=${SEMAPHORE_FLAGS}`, 'new');
    const r = await woken;
    expect(r.text).toContain(`"Flags":${SEMAPHORE_FLAGS},`);
    expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(Number(index));
  });

  test('a lock taken with ?acquire keeps the lock flag value, and a release keeps it too', async () => {
    const session = (await put('/v1/session/create', JSON.stringify({ Name: 'lock' }))).json.ID as string;
    expect((await put(`/v1/kv/service/leader/.lock?flags=${LOCK_FLAGS}&acquire=${session}`, 'holder')).json).toBe(true);
    let r = await get('/v1/kv/service/leader/.lock');
    expect(r.text).toContain(`"Flags":${LOCK_FLAGS},`);
    expect(r.json[0].Session).toBe(session);
    expect((await put(`/v1/kv/service/leader/.lock?flags=${LOCK_FLAGS}&release=${session}`, 'holder')).json).toBe(true);
    r = await get('/v1/kv/service/leader/.lock');
    expect(r.text).toContain(`"Flags":${LOCK_FLAGS},`);
    expect(r.json[0].Session).toBeUndefined();
  });
});

describe('/v1/txn with uint64 flags', () => {
  const txn = (body: string) => http(t.url, 'PUT', '/v1/txn', body);

  test('a set with flags beyond 2^53 answers and stores them exactly; get and get-tree read them back', async () => {
    const body = `[{"KV":{"Verb":"set","Key":"txn/big","Value":"${b64('x')}","Flags":${SEMAPHORE_FLAGS}}}]`;
    const w = await txn(body);
    expect(w.status).toBe(200);
    expect(w.text).toContain(`"Flags":${SEMAPHORE_FLAGS},`);
    const r = await txn('[{"KV":{"Verb":"get","Key":"txn/big"}},{"KV":{"Verb":"get-tree","Key":"txn/"}}]');
    expect(r.status).toBe(200);
    expect(r.text.split(`"Flags":${SEMAPHORE_FLAGS},`).length - 1).toBe(2);
    expect(r.json.Results[0].KV.Value).toBe(b64('x'));
    expect((await get('/v1/kv/txn/big')).text).toContain(`"Flags":${SEMAPHORE_FLAGS},`);
  });

  test.each([['18446744073709551616'], ['-5'], ['1.5'], ['"12"']])('Flags %s is 400 and writes nothing', async (flags) => {
    const r = await txn(`[{"KV":{"Verb":"set","Key":"txn/refused","Flags":${flags}}}]`);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/Flags/);
    expect((await get('/v1/kv/txn/refused')).status).toBe(404);
  });

  test('a lock op without a session says "missing session" and the transaction writes nothing', async () => {
    const r = await txn(`[{"KV":{"Verb":"set","Key":"txn/before","Value":"${b64('v')}"}},{"KV":{"Verb":"lock","Key":"txn/locked","Flags":${LOCK_FLAGS}}}]`);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ Results: null, Errors: [{ OpIndex: 1, What: 'missing session' }] });
    expect((await get('/v1/kv/txn/before')).status).toBe(404);
  });

  test('an unlock op without a session says "missing session" too', async () => {
    const r = await txn('[{"KV":{"Verb":"unlock","Key":"txn/locked"}}]');
    expect(r.status).toBe(409);
    expect(r.json.Errors).toEqual([{ OpIndex: 0, What: 'missing session' }]);
  });
});

describe('the exact flags survive a restart (the Raft log is replayed)', () => {
  test('written, restarted on the same data dir, read back exactly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'uint64-flags-'));
    const serverPort = await freePort();
    const start = async () => {
      const config = buildConfig({ dev: true, httpPort: 0, serverPort, node: 'flags-node', dataDir });
      const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
      const url = `http://127.0.0.1:${agent.httpPort}`;
      await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 15_000);
      return { agent, url };
    };
    try {
      let a = await start();
      try {
        expect((await http(a.url, 'PUT', `/v1/kv/persisted?flags=${SEMAPHORE_FLAGS}`, 'v')).json).toBe(true);
      } finally {
        await a.agent.stop();
      }
      a = await start();
      try {
        await waitFor(async () => (await http(a.url, 'GET', '/v1/kv/persisted')).status === 200, 15_000);
        expect((await http(a.url, 'GET', '/v1/kv/persisted')).text).toContain(`"Flags":${SEMAPHORE_FLAGS},`);
      } finally {
        await a.agent.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
