// A server's wall clock steps (issue #36) and nothing changes but the timestamps it prints: a
// blocking query still returns at its wait, a released lock is still held back for exactly its
// lock-delay, and leaf signing is not rate-limited for an hour. One real dev agent under
// libfaketime, its CLOCK_REALTIME stepped while it runs; its monotonic clock untouched.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, libfaketime } from '../support/fake-clock';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';
import { eventually, sleep } from '../support/wait';

const lib = libfaketime();
if ('missing' in lib) console.warn(`clock-step tests skipped: ${lib.missing}`);
const maybe = 'path' in lib ? describe : describe.skip;

maybe('a wall-clock step on a running server', () => {
  let dir: string;
  let clock: FakeClock;
  let agent: AgentProcess;

  const call = async (method: string, path: string, body?: unknown, timeoutMs = 15_000) => {
    const res = await fetch(agent.url + path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as any) : undefined };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'registry-clock-step-'));
    clock = new FakeClock((lib as { path: string }).path, join(dir, 'faketime'));
    agent = spawnAgent(['-dev', '-node', 'clocky', '-dns-port', '-1'], await freePort(), await freePort(), join(dir, 'agent.log'), clock.env);
    const up = await eventually(async () => (await call('GET', '/v1/status/leader')).json !== '', 20_000);
    if (!up) throw new Error(`agent did not start: see ${join(dir, 'agent.log')}`);
    // Its own node and serfHealth are in the catalog: sessions can be made on it.
    await eventually(async () => (await call('GET', '/v1/health/node/clocky')).json?.some((c: any) => c.CheckID === 'serfHealth' && c.Status === 'passing'), 20_000);
  }, 60_000);

  afterEach(() => clock.set('+0'));

  afterAll(async () => {
    agent?.child.kill('SIGKILL');
    await agent?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test('a blocking query that spans a backward step returns at its wait', async () => {
    const put = await call('PUT', '/v1/kv/blocked', 'x');
    expect(put.status).toBe(200);
    const index = Number((await call('GET', '/v1/kv/blocked')).headers.get('x-registry-index'));
    const started = performance.now();
    const blocked = call('GET', `/v1/kv/blocked?index=${index}&wait=2s`, undefined, 30_000);
    const hashed = (async () => {
      const first = await call('GET', '/v1/agent/services');
      return call('GET', `/v1/agent/services?hash=${first.headers.get('x-registry-contenthash')}&wait=2s`, undefined, 30_000);
    })();
    await sleep(500);
    clock.set('-1h');
    const [kv, services] = await Promise.all([blocked, hashed]);
    const tookMs = performance.now() - started;
    expect(kv.status).toBe(200);
    expect(services.status).toBe(200);
    // wait=2s plus up to wait/16 of jitter: far below the hour the step would add.
    expect(tookMs).toBeLessThan(8_000);
  }, 40_000);

  test('a lock released just before a forward step is still held back for its lock-delay', async () => {
    const s1 = (await call('PUT', '/v1/session/create', { LockDelay: '5s' })).json.ID;
    expect((await call('PUT', `/v1/kv/lock-fwd?acquire=${s1}`, 'a')).json).toBe(true);
    expect((await call('PUT', `/v1/session/destroy/${s1}`)).status).toBe(200);
    clock.set('+1h');
    const s2 = (await call('PUT', '/v1/session/create', { LockDelay: '5s' })).json.ID;
    // Within the 5 s lock-delay of the released lock, however far the wall clock jumped.
    expect((await call('PUT', `/v1/kv/lock-fwd?acquire=${s2}`, 'b')).json).toBe(false);
  }, 30_000);

  test('a lock released just before a backward step is free again once its lock-delay has passed', async () => {
    const s1 = (await call('PUT', '/v1/session/create', { LockDelay: '3s' })).json.ID;
    expect((await call('PUT', `/v1/kv/lock-back?acquire=${s1}`, 'a')).json).toBe(true);
    expect((await call('PUT', `/v1/session/destroy/${s1}`)).status).toBe(200);
    clock.set('-1h');
    const s2 = (await call('PUT', '/v1/session/create', { LockDelay: '3s' })).json.ID;
    expect((await call('PUT', `/v1/kv/lock-back?acquire=${s2}`, 'b')).json).toBe(false);
    await sleep(3_500);
    // Not an hour and 3 s later: 3 s later.
    expect((await call('PUT', `/v1/kv/lock-back?acquire=${s2}`, 'b')).json).toBe(true);
  }, 30_000);

  test('leaf certificates are signed after a backward step, not rate-limited for an hour', async () => {
    expect((await call('GET', '/v1/agent/connect/ca/leaf/before-step')).status).toBe(200);
    clock.set('-1h');
    const after = await call('GET', '/v1/agent/connect/ca/leaf/after-step', undefined, 20_000);
    expect(after.text).not.toMatch(/rate limited/);
    expect(after.status).toBe(200);
  }, 40_000);
});
