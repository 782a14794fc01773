// Issue 31: nothing a client or a config file puts into a check, a service or a managed proxy may
// end the agent — not when it is registered, not when it runs later on its own timer, and not on
// the next start, when what was persisted is loaded again. One real `registry agent -server`
// process, fed hostile definitions through the HTTP API and its config file; after each round it
// must be alive, serve reads and writes, and show each hostile check critical with the reason.
import { writeFileSync } from 'node:fs';
import { persistingServer } from '../lifecycle/agent-process';
import { eventually, sleep } from '../support/wait';

jest.setTimeout(120_000);

const server = persistingServer('registry-hostile-', 'hostile', { configFile: true });
const { configFile } = server;

interface Answer {
  status: number;
  text: string;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.agent!.url}${path}`, {
    method,
    body: body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, text: await res.text() };
}

async function checks(): Promise<Record<string, { Status: string; Output: string; ServiceID: string }>> {
  return JSON.parse((await call('GET', '/v1/agent/checks')).text);
}

const start = async (): Promise<void> => {
  await server.start();
};

/** The process is up and serves a write and a read of it. */
async function expectServing(round: string): Promise<void> {
  expect({ round, exitCode: server.agent!.child.exitCode, signal: server.agent!.child.signalCode }).toEqual({ round, exitCode: null, signal: null });
  const key = `hostile/${round}`;
  expect(await call('PUT', `/v1/kv/${key}`, round)).toEqual({ status: 200, text: 'true' });
  const read = await call('GET', `/v1/kv/${key}?raw`);
  expect(read).toEqual({ status: 200, text: round });
}

// Definitions Consul 1.4 accepts and runs: each must end up critical with a reason (no crash).
const critical: Record<string, Record<string, unknown>> = {
  // The two one-line reproductions (fabio's self-registration, and a port out of range).
  'repro-http': { HTTP: 'http://[127.0.0.1]:1/health', Interval: '1s' },
  'repro-tcp': { TCP: '127.0.0.1:99999', Interval: '1s' },
  'url-space': { HTTP: 'http://exa mple.com/', Interval: '1s' },
  'url-port-huge': { HTTP: 'http://127.0.0.1:70000/', Interval: '1s' },
  'url-ftp': { HTTP: 'ftp://127.0.0.1/x', Interval: '1s' },
  'url-zone': { HTTP: 'http://[fe80::1%eth0]:1/', Interval: '1s' },
  'url-ipv6': { HTTP: 'http://[::1]:1/health', Interval: '1s' },
  'url-unresolvable': { HTTP: 'http://no-such-host.invalid/', Interval: '1s', Timeout: '3s' },
  'bad-method': { HTTP: 'http://127.0.0.1:1/', Method: 'GE T', Interval: '1s' },
  'bad-header-name': { HTTP: 'http://127.0.0.1:1/', Header: { 'bad name': ['x'] }, Interval: '1s' },
  'bad-header-value': { HTTP: 'http://127.0.0.1:1/', Header: { 'X-Ok': ['a\nb'] }, Interval: '1s' },
  'proto-header': { HTTP: 'http://127.0.0.1:1/', Header: { ['__proto__']: ['x'] }, Interval: '1s' },
  'tcp-port-0': { TCP: '127.0.0.1:0', Interval: '1s' },
  'tcp-no-port': { TCP: 'nohostport', Interval: '1s' },
  'tcp-ipv6': { TCP: '[::1]:1', Interval: '1s' },
  'tcp-unresolvable': { TCP: 'no-such-host.invalid:80', Interval: '1s', Timeout: '3s' },
  'timeout-zero': { TCP: '127.0.0.1:1', Interval: '1s', Timeout: '0s' },
  'timeout-negative': { TCP: '127.0.0.1:1', Interval: '1s', Timeout: '-5s' },
  'timeout-huge': { TCP: '127.0.0.1:1', Interval: '1s', Timeout: '100000h' },
};

test('hostile check definitions leave the agent up, the checks critical with the reason, before and after a restart', async () => {
  writeFileSync(
    configFile,
    JSON.stringify({
      connect: { enabled: true, proxy: { allow_managed_api_registration: true } },
      telemetry: { prometheus_retention_time: '1m' },
      services: [{ name: 'cfg-svc', port: 1, check: { http: 'http://[127.0.0.1]:1/cfg', interval: '1s' } }],
      checks: [{ name: 'cfg-tcp', tcp: '127.0.0.1:99999', interval: '1s' }, { name: 'cfg-ttl-long', ttl: '100000h', status: 'passing' }],
    }),
  );
  await start();

  // The reproductions, literally: service registrations with the check inside.
  expect(await call('PUT', '/v1/agent/service/register', { Name: 'x', Port: 1, Check: { HTTP: 'http://[127.0.0.1]:19998/health', Interval: '1s' } })).toEqual({ status: 200, text: '' });
  expect(await call('PUT', '/v1/agent/service/register', { Name: 'y', Port: 1, Check: { TCP: '127.0.0.1:99999', Interval: '1s' } })).toEqual({ status: 200, text: '' });
  for (const [name, def] of Object.entries(critical)) {
    expect({ name, ...(await call('PUT', '/v1/agent/check/register', { Name: name, ...def })) }).toEqual({ name, status: 200, text: '' });
  }
  // Huge but valid durations: the check must not run in a hot loop, the TTL not expire at once,
  // and the service not be deregistered at once (Node fires a timer over 24.8 days after 1 ms).
  expect((await call('PUT', '/v1/agent/check/register', { Name: 'interval-huge', TCP: '127.0.0.1:1', Interval: '100000h' })).status).toBe(200);
  expect((await call('PUT', '/v1/agent/check/register', { Name: 'ttl-huge', TTL: '100000h', Status: 'passing' })).status).toBe(200);
  expect((await call('PUT', '/v1/agent/service/register', { Name: 'keep', Port: 1, Check: { TTL: '1s', DeregisterCriticalServiceAfter: '100000h' } })).status).toBe(200);
  // What Consul refuses at registration is a 400 with the reason.
  const refused: [Record<string, unknown>, string][] = [
    [{ Name: 'ttl-overflow', TTL: '3000000h' }, 'Request decode failed: TTL: time: invalid duration "3000000h"'],
    [{ Name: 'interval-overflow', TCP: '127.0.0.1:1', Interval: 1e30 }, 'Request decode failed: Interval: time: invalid duration'],
    [{ Name: 'interval-negative', TCP: '127.0.0.1:1', Interval: '-1s' }, 'Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks'],
    [{ Name: 'ttl-zero', TTL: '0s' }, 'Invalid check: TTL must be > 0 for TTL checks'],
  ];
  for (const [def, reason] of refused) {
    const answer = await call('PUT', '/v1/agent/check/register', def);
    expect({ name: def.Name, status: answer.status, reason: answer.text.includes(reason) }).toEqual({ name: def.Name, status: 400, reason: true });
  }
  // Managed proxies whose command does not exist, or exits at once.
  for (const [name, command] of [['ghost', ['/nonexistent/registry-proxy']], ['quitter', ['/bin/false']]] as const) {
    expect((await call('PUT', '/v1/agent/service/register', { Name: name, Port: 1, Connect: { Proxy: { Command: command } } })).status).toBe(200);
  }
  // User events: huge, binary, odd names — refused with a 4xx or accepted, never a crash.
  for (const [name, payload] of [['big', 'x'.repeat(2 << 20)], ['bin', new Uint8Array([0, 255, 1, 254, 0])], ['%00%ff', 'p'], ['a'.repeat(4096), 'p']] as const) {
    const answer = await call('PUT', `/v1/event/fire/${name}`, payload);
    expect({ name: name.slice(0, 10), ok: answer.status === 200 || (answer.status >= 400 && answer.status < 500 && answer.text.length > 0) }).toEqual({ name: name.slice(0, 10), ok: true });
  }

  const expected = ['repro-http', 'repro-tcp', 'cfg-tcp', 'service:x', 'service:y', 'service:cfg-svc', ...Object.keys(critical)];
  const allCritical = async () => {
    const now = await checks();
    return expected.every((id) => now[id]?.Status === 'critical' && now[id]!.Output !== '');
  };
  expect(await eventually(allCritical, 20_000, 250)).toBe(true);
  let now = await checks();
  expect(now['service:x']!.Output).toContain('ECONNREFUSED 127.0.0.1:19998'); // the bracketed IPv4 URL is dialled, as Go does
  expect(now['repro-tcp']!.Output).toBe('TCP connect 127.0.0.1:99999: address 99999: invalid port');
  expect(now['url-ftp']!.Output).toContain('unsupported protocol scheme "ftp"');
  expect(now['tcp-no-port']!.Output).toContain('missing port in address');
  for (const id of ['timeout-zero', 'timeout-negative', 'timeout-huge']) expect(now[id]!.Output).toContain('ECONNREFUSED');
  expect(now['interval-huge']!.Output).toBe(''); // never probed yet: its first run is somewhere in 100000 h
  expect(now['ttl-huge']!.Status).toBe('passing');
  expect(now['cfg-ttl-long']!.Status).toBe('passing');
  await expectServing('registered');
  expect(JSON.parse((await call('GET', '/v1/agent/services')).text)).toHaveProperty('keep');
  // The proxies' failures are counted and the agent keeps retrying them with a backoff.
  const metrics = (await call('GET', '/v1/agent/metrics?format=prometheus')).text;
  expect(metrics).toMatch(/registry_runner_failures_total\{runner="managed-proxy"\} [1-9]/);
  expect(server.agent!.log()).toMatch(/managed-proxy ghost-proxy failed.*ENOENT/);

  // The same after a restart: what was persisted loads, runs and fails the same way.
  await server.agent!.stop();
  await start();
  expect(await eventually(allCritical, 20_000, 250)).toBe(true);
  now = await checks();
  expect(now['repro-tcp']!.Output).toBe('TCP connect 127.0.0.1:99999: address 99999: invalid port');
  expect(now['ttl-huge']!.Status).toBe('passing');
  await sleep(1_500);
  await expectServing('restarted');
  expect(JSON.parse((await call('GET', '/v1/agent/services')).text)).toHaveProperty('keep');
  expect(server.agent!.log()).not.toMatch(/BUG:/);
});
