// The pure parts of agent checks, without sockets: definitions → specs, output capping, HTTP
// status mapping, the probe concurrency limit, and the catalog sync's write-only-on-change rule.
import type { Command } from '@registry/store';
import { createLogger } from '@registry/server';
import { CatalogSync } from '../../src/local/catalog-sync';
import { capOutput, statusOfHttpCode } from '../../src/checks/check-output';
import { catalogCheckOf, checkSpecOf, standaloneCheckSpec } from '../../src/checks/check-spec';
import { ConcurrencyLimit } from '../../src/checks/concurrency-limit';
import { startIntervalRunner } from '../../src/checks/check-runner';
import type { ProbeResult } from '../../src/checks/check-output';

const ids = { CheckID: 'c', Name: 'c', ServiceID: '' };

describe('check definitions', () => {
  test('TTL, HTTP and TCP kinds with durations in ms and Consul defaults', () => {
    expect(checkSpecOf({ TTL: '1m30s' }, ids).kind).toEqual({ type: 'ttl', ttlMs: 90_000 });
    expect(checkSpecOf({ HTTP: 'https://x/h', Interval: 5e9 }, ids).kind).toEqual({
      type: 'http', url: 'https://x/h', method: 'GET', header: {}, tlsSkipVerify: false, intervalMs: 5000, timeoutMs: 10_000,
    });
    expect(checkSpecOf({ TCP: 'db:5432', Interval: '10s', Timeout: '1s' }, ids).kind).toEqual({ type: 'tcp', address: 'db:5432', intervalMs: 10_000, timeoutMs: 1000 });
    expect(checkSpecOf({ TTL: '5s', DeregisterCriticalServiceAfter: '1m' }, ids).deregisterAfterMs).toBe(60_000);
    expect(checkSpecOf({ TTL: '5s' }, ids).Status).toBe('critical');
  });

  test('invalid definitions are 400 with the reasons joined', () => {
    expect(() => checkSpecOf({ HTTP: 'http://x', TCP: 'x:1', Interval: '1s' }, ids)).toThrow('Invalid check: HTTP and TCP cannot both be specified');
    // As Consul 1.4: the URL and address are not judged at registration; the probe reports them (issue 31).
    expect(checkSpecOf({ HTTP: 'ftp://x', Interval: '1s' }, ids).kind).toMatchObject({ type: 'http', url: 'ftp://x' });
    expect(checkSpecOf({ TCP: 'nohostport', Interval: '1s' }, ids).kind).toMatchObject({ type: 'tcp', address: 'nohostport' });
    // A duration beyond Go's int64 of nanoseconds (~292 years) does not decode, as in Consul.
    expect(() => checkSpecOf({ TTL: '3000000h' }, ids)).toThrow('Request decode failed: TTL: time: invalid duration "3000000h"');
    expect(() => checkSpecOf({ TCP: 'x:1', Interval: 1e30 }, ids)).toThrow('Request decode failed: Interval: time: invalid duration 1e+30');
    expect(checkSpecOf({ TTL: '2000000h' }, ids).kind).toEqual({ type: 'ttl', ttlMs: 2e6 * 3.6e6 });
    // gRPC: the server and the service asked about split at the first "/" (Consul's NewGrpcHealthProbe).
    expect(checkSpecOf({ GRPC: 'x:1/a/b', Interval: '1s' }, ids).kind).toMatchObject({ type: 'grpc', server: 'x:1', service: 'a/b', timeoutMs: 10_000 });
    expect(() => checkSpecOf({ GRPC: 'x:1' }, ids)).toThrow('Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks');
    // Script checks default to Consul's 30 s timeout; Args is ScriptArgs' other name.
    expect(checkSpecOf({ Args: ['/bin/true'], Interval: '1s' }, ids).kind).toEqual({ type: 'script', args: ['/bin/true'], intervalMs: 1000, timeoutMs: 30_000 });
    // Alias checks (Consul 1.3+): neither TTL nor interval checks, with CheckType.Validate's texts.
    expect(checkSpecOf({ AliasService: 'web' }, ids).kind).toEqual({ type: 'alias', node: '', serviceId: 'web' });
    expect(checkSpecOf({ AliasNode: 'n2', AliasService: 'web' }, ids).kind).toEqual({ type: 'alias', node: 'n2', serviceId: 'web' });
    expect(() => checkSpecOf({ AliasService: 'web', TCP: 'x:1', Interval: '1s' }, ids)).toThrow('Invalid check: Interval cannot be set for Alias checks');
    expect(() => checkSpecOf({ AliasNode: 'n2', TTL: '1s' }, ids)).toThrow('Invalid check: TTL must be not be set for Alias checks');
    expect(() => checkSpecOf({ Script: 'true', Interval: '1s' }, ids)).toThrow('Invalid check: Script checks are not supported');
    expect(() => standaloneCheckSpec({ Name: 'n', TTL: '1s', Status: 'maintenance' })).toThrow('Bad check status');
    expect(standaloneCheckSpec({ Name: 'n', TTL: '1s' }).CheckID).toBe('n');
    expect(standaloneCheckSpec({ Name: 'n', ID: 'i', TTL: '1s' }).CheckID).toBe('i');
  });

  test('the catalog row carries only the non-empty definition fields', () => {
    const spec = checkSpecOf({ HTTP: 'http://x/', Interval: '10s', TLSSkipVerify: true, Notes: 'n' }, ids);
    expect(catalogCheckOf(spec, 'node1', 'passing', 'ok')).toEqual({
      Node: 'node1', CheckID: 'c', Name: 'c', Status: 'passing', Notes: 'n', Output: 'ok', ServiceID: '',
      Definition: { HTTP: 'http://x/', TLSSkipVerify: true, Interval: '10s' },
    });
    expect(catalogCheckOf(checkSpecOf({ TTL: '10s' }, ids), 'node1', 'critical', '').Definition).toEqual({});
  });
});

describe('check runner', () => {
  test('a probe that throws makes its check critical with the reason, is reported, and is run less and less often', async () => {
    const results: ProbeResult[] = [];
    const failures: unknown[] = [];
    let runs = 0;
    const probe = (): Promise<ProbeResult> => {
      runs++;
      throw new Error('boom'); // a bug in a probe: thrown, not a rejected promise
    };
    const runner = startIntervalRunner(20, probe, (r) => results.push(r), new ConcurrencyLimit(4), (err) => failures.push(err), () => 0);
    await new Promise((r) => setTimeout(r, 700));
    runner.stop();
    expect(results[0]).toEqual({ status: 'critical', output: 'check failed to run: boom' });
    expect(failures.length).toBe(runs);
    // Without the backoff: ~35 runs in 700 ms; with it (40, 80, 160, 320 ms…) about five.
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(7);
  });
});

describe('check output', () => {
  test('up to 4096 bytes is kept; more is cut at 4096 bytes with the captured suffix', () => {
    expect(capOutput('a'.repeat(4096))).toBe('a'.repeat(4096));
    expect(capOutput('a'.repeat(4097))).toBe(`${'a'.repeat(4096)} ... (captured 4096 of 4097 bytes)`);
    // Bytes, not characters: 3000 two-byte characters are 6000 bytes.
    expect(capOutput('é'.repeat(3000))).toBe(`${'é'.repeat(2048)} ... (captured 4096 of 6000 bytes)`);
  });

  test.each([[200, 'passing'], [204, 'passing'], [299, 'passing'], [429, 'warning'], [301, 'critical'], [404, 'critical'], [503, 'critical']])('HTTP %i is %s', (code, status) => {
    expect(statusOfHttpCode(code)).toBe(status);
  });
});

test('the concurrency limit never runs more than its maximum at once and runs every task', async () => {
  const limit = new ConcurrencyLimit(3);
  let running = 0;
  let peak = 0;
  const task = async (i: number) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 2));
    running--;
    return i;
  };
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => limit.run(() => task(i))));
  expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect(peak).toBe(3);
  expect(limit.inFlight).toBe(0);
});

describe('catalog sync', () => {
  const spec = checkSpecOf({ TTL: '10s' }, ids);
  const logger = createLogger('silent', false);
  let now = 0;
  let sent: { Status: string; Output: string }[];
  let fail = false;
  const apply = async (cmd: Command) => {
    if (fail) throw new Error('No cluster leader');
    const check = (cmd as any).req.Check;
    sent.push({ Status: check.Status, Output: check.Output });
    return true;
  };
  const flush = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise((r) => setImmediate(r));
  };
  let sync: CatalogSync;
  beforeEach(() => {
    now = 1_000;
    sent = [];
    fail = false;
    sync = new CatalogSync({ node: 'n', apply, outputIntervalMs: 60_000, retryMs: 5, logger, now: () => now });
  });
  afterEach(() => sync.stop());

  test('writes nothing while the state equals what the catalog holds; a status change at once', async () => {
    sync.track(spec, { status: 'critical', output: '' }, { status: 'critical', output: '' });
    sync.set('c', { status: 'critical', output: '' });
    await flush();
    expect(sent).toEqual([]);
    sync.set('c', { status: 'passing', output: 'ok' });
    await flush();
    sync.set('c', { status: 'passing', output: 'ok' });
    await flush();
    expect(sent).toEqual([{ Status: 'passing', Output: 'ok' }]);
    expect(sync.writes).toBe(1);
  });

  test('an output-only change waits for the update interval; a status change does not', async () => {
    sync.track(spec, { status: 'passing', output: 'a' }, { status: 'passing', output: 'a' });
    sync.set('c', { status: 'passing', output: 'b' });
    await flush();
    expect(sent).toEqual([]);
    sync.set('c', { status: 'warning', output: 'c' });
    await flush();
    expect(sent).toEqual([{ Status: 'warning', Output: 'c' }]);
  });

  test('an unknown catalog state is written; a failed write is retried', async () => {
    fail = true;
    sync.track(spec, { status: 'passing', output: 'x' }, undefined);
    await flush();
    expect(sent).toEqual([]);
    fail = false;
    now += 10;
    await new Promise((r) => setTimeout(r, 20));
    await flush();
    expect(sent).toEqual([{ Status: 'passing', Output: 'x' }]);
  });

  test('set() resolves once the write carrying its state has committed, and rejects if it fails', async () => {
    sync.track(spec, { status: 'critical', output: '' }, { status: 'critical', output: '' });
    await sync.set('c', { status: 'passing', output: 'ok' });
    expect(sent).toEqual([{ Status: 'passing', Output: 'ok' }]);
    await expect(sync.set('c', { status: 'passing', output: 'ok' })).resolves.toBeUndefined(); // nothing to write
    fail = true;
    await expect(sync.set('c', { status: 'warning', output: '' })).rejects.toThrow('No cluster leader');
  });

  test('after untrack nothing more is written', async () => {
    sync.track(spec, { status: 'critical', output: '' }, { status: 'critical', output: '' });
    await sync.untrack('c');
    sync.set('c', { status: 'passing', output: '' });
    await flush();
    expect(sent).toEqual([]);
  });
});
