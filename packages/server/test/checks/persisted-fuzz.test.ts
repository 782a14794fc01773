// Issue 31: a property harness for the agent endpoints that persist what they are given — service
// registration (with checks, sidecars, managed proxies) and check registration. Random and hostile
// bodies go to a real server process in batches; every answer must be 200 or a 4xx with a reason,
// and after each batch the agent is restarted from its data dir: it must start, list the same
// services and checks as before, set nothing aside (what it accepted, it can load), and serve
// writes. Bounded: 3 batches of 15 requests, no shrinking (each run restarts an agent); fast-check
// prints the seed of a failing run.
import fc from 'fast-check';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { persistingServer } from '../lifecycle/agent-process';
import { eventually } from '../support/wait';

jest.setTimeout(180_000);

const server = persistingServer('registry-persist-fuzz-', 'fuzzed', { configFile: true });
const { dataDir, configFile } = server;
const start = async (): Promise<void> => {
  await server.start();
};

// Most values are ones Consul accepts (so that much is persisted), hostile where they only matter
// when the check runs; the values Consul refuses at registration come less often.
const goodDuration = fc.constantFrom('1s', '10s', '100000h', '2562047h', '5ms', '1.5m', 5e9, 0);
const badDuration = fc.oneof(fc.constantFrom('-1s', '3000000h', '1e3s', 'abc', '', 1e30, -5e9), fc.integer({ min: -1e10, max: 1e12 }));
const duration = fc.oneof({ weight: 5, arbitrary: goodDuration }, { weight: 1, arbitrary: badDuration });
const positive = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('1s', '10s', '100000h', '2562047h', '1.5m', 5e9) }, { weight: 1, arbitrary: badDuration });
const url = fc.oneof(
  fc.constantFrom('http://[127.0.0.1]:1/health', 'http://127.0.0.1:1/', 'http://127.0.0.1:70000/', 'http://exa mple/', 'ftp://x/', 'http://[::1]:1/', 'http://[fe80::1%eth0]:1/', 'http://no-such-host.invalid/', 'https://127.0.0.1:1/', '::::'),
  fc.string({ minLength: 1, maxLength: 20 }),
);
const tcp = fc.oneof(
  fc.constantFrom('127.0.0.1:1', '127.0.0.1:0', '127.0.0.1:99999', '[::1]:1', 'nohostport', 'no-such-host.invalid:80', ':', '127.0.0.1:-1'),
  fc.string({ minLength: 1, maxLength: 20 }),
);
const headerName = fc.oneof(fc.constantFrom('X-Ok', 'bad name', '__proto__', 'constructor', 'Host', ''), fc.string({ maxLength: 8 }));
const header = fc.dictionary(headerName, fc.array(fc.oneof(fc.constant('a\nb'), fc.string({ maxLength: 6 })), { maxLength: 2 }), { maxKeys: 2 });
const checkFields = {
  Timeout: duration,
  DeregisterCriticalServiceAfter: duration,
  Status: fc.constantFrom('passing', 'warning', 'critical', 'critical', 'maintenance'),
  Notes: fc.string({ maxLength: 10 }),
};
const usableCheck = fc.oneof(
  fc.record({ TTL: positive, ...checkFields }, { requiredKeys: ['TTL'] }),
  fc.record({ HTTP: url, Interval: positive, Header: header, Method: fc.constantFrom('GET', 'GE T', 'PUT', 'ø'), TLSSkipVerify: fc.boolean(), ...checkFields }, { requiredKeys: ['HTTP', 'Interval'] }),
  fc.record({ TCP: tcp, Interval: positive, ...checkFields }, { requiredKeys: ['TCP', 'Interval'] }),
);
const proxyCommand = fc.constantFrom(['/nonexistent/proxy'], ['/bin/false'], [''], ['/bin/true', 'x\u0000y']);
const service = fc.record(
  {
    Name: fc.oneof(fc.constantFrom('web', 'db', 'api', 'x'), fc.string({ minLength: 1, maxLength: 10 })),
    ID: fc.oneof(fc.constantFrom('web-1', 'db-1', 's/1', 'a b'), fc.string({ minLength: 1, maxLength: 10 })),
    Port: fc.oneof(fc.integer({ min: 0, max: 70_000 }), fc.constant(-1)),
    Address: fc.constantFrom('127.0.0.1', '::1', 'not an address', ''),
    Tags: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    Meta: fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'ok', 'a-b'), fc.string({ minLength: 1, maxLength: 6 })), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
    Check: usableCheck,
    Checks: fc.array(usableCheck, { maxLength: 1 }),
    Connect: fc.oneof(
      fc.record({ Proxy: fc.record({ Command: proxyCommand, ExecMode: fc.constantFrom('daemon', 'daemon', 'script', 'other') }) }),
      fc.record({ SidecarService: fc.record({ Port: fc.integer({ min: -1, max: 70_000 }) }, { requiredKeys: [] }) }),
    ),
  },
  { requiredKeys: ['Name'] },
);
const request = fc.oneof(
  { weight: 3, arbitrary: service.map((body) => ({ path: '/v1/agent/service/register', body })) },
  { weight: 2, arbitrary: fc.tuple(usableCheck, fc.constantFrom('n1', 'n2', 'n3'), fc.constantFrom(undefined, 'web-1', 'db-1', 'missing')).map(([c, Name, ServiceID]) => ({ path: '/v1/agent/check/register', body: { ...c, Name, ...(ServiceID ? { ServiceID } : {}) } })) },
);

async function state(): Promise<{ services: string[]; checks: string[] }> {
  const services = Object.keys((await (await fetch(`${server.agent!.url}/v1/agent/services`)).json()) as object).sort();
  const checks = Object.keys((await (await fetch(`${server.agent!.url}/v1/agent/checks`)).json()) as object).sort();
  return { services, checks };
}

const setAside = () => ['services', 'checks'].flatMap((d) => {
  try {
    return readdirSync(join(dataDir, d)).filter((f) => f.endsWith('.bad')).map((f) => `${d}/${f}`);
  } catch {
    return [];
  }
});

test('every state the persisting endpoints accept starts again: same services and checks, nothing set aside', async () => {
  writeFileSync(configFile, JSON.stringify({ connect: { enabled: true, proxy: { allow_managed_api_registration: true } } }));
  await start();
  let batch = 0;
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 15, maxLength: 15 }), async (requests) => {
      batch++;
      for (const { path, body } of requests) {
        const res = await fetch(`${server.agent!.url}${path}`, { method: 'PUT', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        // A refusal is a 4xx that says why; anything else must be a plain success.
        const fine = res.status === 200 || (res.status >= 400 && res.status < 500 && text.trim().length > 0);
        if (!fine) throw new Error(`batch ${batch}: PUT ${path} ${JSON.stringify(body)} → ${res.status} ${text}`);
        if (res.status === 200) accepted++;
      }
      const before = await state();
      await server.agent!.stop();
      await start();
      const restored = await eventually(async () => JSON.stringify(await state()) === JSON.stringify(before), 20_000, 200);
      if (!restored) throw new Error(`batch ${batch}: after a restart ${JSON.stringify(await state())}, before ${JSON.stringify(before)}`);
      expect(setAside()).toEqual([]);
      expect(server.agent!.child.exitCode).toBeNull();
      expect((await fetch(`${server.agent!.url}/v1/kv/fuzz/${batch}`, { method: 'PUT', body: 'ok' })).status).toBe(200);
    }),
    { numRuns: 3, endOnFailure: true },
  );
  // The harness means something only if a fair part of what it sent was accepted and persisted.
  // About a third is, varying with the random cases (a CI run saw 14 of 45): the bound is set
  // where a run of fair cases does not fall below it, but a generator that only makes refusals does.
  expect(accepted).toBeGreaterThanOrEqual(6);
  expect(server.agent!.log()).not.toMatch(/BUG:/);
});
