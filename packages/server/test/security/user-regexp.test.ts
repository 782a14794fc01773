// Users' regular expressions run on an RE2 engine (issue 31 finding 1, issue 33 finding 5): a
// prepared-query template's Regexp and a user event's filters are matched in time linear in the
// name, so patterns that make a backtracking engine take seconds (`^geo-(a+)+$`, `^(.*){10}Z$`)
// answer in milliseconds — over DNS, over HTTP — and the agent goes on serving; a pattern RE2
// cannot run (a backreference, lookahead) is refused with a 400 when it is saved or fired.
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, waitFor } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { spawnAgent, type AgentProcess } from '../support/processes';

// dns-packet ships no types; the few used here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const packet = require('dns-packet') as { encode(p: object): Buffer; decode(b: Buffer): { rcode?: string }; RECURSION_DESIRED: number };

jest.setTimeout(90_000);

const NODE = 'ip-10-20-30-40.ec2.internal';
/** Generous: RE2 answers these in milliseconds, the old backtracking engine in seconds. */
const FAST_MS = 1_000;

const dir = mkdtempSync(join(tmpdir(), 'registry-regexp-'));
let agent: AgentProcess;
let dnsPort: number;

beforeAll(async () => {
  const [httpPort, serverPort, dns] = await freePorts(3);
  dnsPort = dns;
  agent = spawnAgent(['-dev', '-node', NODE, '-dns-port', String(dnsPort)], httpPort, serverPort, join(dir, 'agent.log'));
  await waitFor(async () => (await (await fetch(`${agent.url}/v1/status/leader`)).json()) !== '', 20_000, 100);
  await waitFor(async () => (await http(agent.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Node?.Node === NODE, 20_000, 100);
});

afterAll(async () => {
  if (agent && agent.child.exitCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** One UDP DNS question to the agent; resolves with the answer's rcode and how long it took. */
function askDns(name: string): Promise<{ rcode: string; ms: number }> {
  const started = Date.now();
  const sock = createSocket('udp4');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no DNS answer for ${name} within 20 s`));
    }, 20_000);
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      resolve({ rcode: packet.decode(msg).rcode ?? '', ms: Date.now() - started });
    });
    sock.send(packet.encode({ type: 'query', id: 7, flags: packet.RECURSION_DESIRED, questions: [{ type: 'SRV', name }] }), dnsPort, '127.0.0.1');
  });
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await f();
  return { value, ms: Date.now() - started };
}

/** The agent still answers and still has its leader (itself): nothing held its event loop. */
async function stillServing(): Promise<void> {
  const { value, ms } = await timed(() => http(agent.url, 'GET', '/v1/status/leader'));
  expect(value.status).toBe(200);
  expect(value.json).not.toBe('');
  expect(ms).toBeLessThan(FAST_MS);
  expect(agent.child.exitCode).toBeNull();
}

describe('prepared-query template Regexp', () => {
  const EVIL = `geo-${'a'.repeat(29)}!`;

  beforeAll(async () => {
    await http(agent.url, 'PUT', '/v1/agent/service/register', { Name: 'geo-db', Port: 5432 });
    const created = await http(agent.url, 'POST', '/v1/query', {
      Name: 'geo-',
      Template: { Type: 'name_prefix_match', Regexp: '^geo-(a+)+$' },
      Service: { Service: 'geo-db' },
    });
    expect(created.status).toBe(200);
  });

  test('a DNS lookup that makes a backtracking engine take seconds answers in milliseconds', async () => {
    const probe = stillServing(); // asked while the lookup runs
    const answer = await askDns(`${EVIL}.query.registry`);
    await probe;
    expect(answer.ms).toBeLessThan(FAST_MS);
    expect(answer.rcode).toBe('NOERROR');
    await stillServing();
  });

  test('GET /v1/query/<name>/execute of the same name answers in milliseconds', async () => {
    const { value, ms } = await timed(() => http(agent.url, 'GET', `/v1/query/${encodeURIComponent(EVIL)}/execute`));
    expect(value.status).toBe(200);
    expect(ms).toBeLessThan(FAST_MS);
    await stillServing();
  });

  test('the template still renders its matches (RE2 submatches)', async () => {
    const created = await http(agent.url, 'POST', '/v1/query', {
      Name: 'pick-',
      Template: { Type: 'name_prefix_match', Regexp: '^pick-(?P<svc>[a-z]+)$' },
      Service: { Service: '${match(1)}' },
    });
    expect(created.status).toBe(200);
    const r = await http(agent.url, 'GET', '/v1/query/pick-geo/execute');
    expect(r.status).toBe(200);
    expect(r.json.Service).toBe('geo');
  });

  test.each([
    ['a backreference', '^(a)\\1$', /invalid escape sequence/],
    ['lookahead', '^geo-(?=x)', /Perl syntax/],
  ])('a Regexp with %s is refused at create and at update with a one-line 400', async (_what, regexp, reason) => {
    const body = { Name: 'bad-', Template: { Type: 'name_prefix_match', Regexp: regexp }, Service: { Service: 'geo-db' } };
    const created = await http(agent.url, 'POST', '/v1/query', body);
    expect(created.status).toBe(400);
    expect(created.text).toMatch(/^failed compiling template: Bad Regexp: /);
    expect(created.text).toMatch(reason);
    expect(created.text.trim()).not.toContain('\n');

    const ok = await http(agent.url, 'POST', '/v1/query', { ...body, Name: 'fine-', Template: { Type: 'name_prefix_match', Regexp: '^fine-' } });
    expect(ok.status).toBe(200);
    const updated = await http(agent.url, 'PUT', `/v1/query/${ok.json.ID}`, { ...body, Name: 'fine-' });
    expect(updated.status).toBe(400);
    expect(updated.text).toMatch(reason);
    await http(agent.url, 'DELETE', `/v1/query/${ok.json.ID}`);
  });
});

describe('user event filters', () => {
  test('a node filter that makes a backtracking engine take seconds: /v1/event/list answers in milliseconds', async () => {
    const fired = await http(agent.url, 'PUT', `/v1/event/fire/deploy?node=${encodeURIComponent('^(.*){10}Z$')}`);
    expect(fired.status).toBe(200);
    const other = await http(agent.url, 'PUT', `/v1/event/fire/here?node=${encodeURIComponent('^ip-10-.*\\.internal$')}`);
    expect(other.status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const { value, ms } = await timed(() => http(agent.url, 'GET', '/v1/event/list'));
      expect(value.status).toBe(200);
      expect(ms).toBeLessThan(FAST_MS);
      const names = (value.json as { Name: string }[]).map((e) => e.Name);
      expect(names).toContain('here'); // the filter that matches this node still delivers
      expect(names).not.toContain('deploy'); // `Z$` never matches this node's name
    }
    await stillServing();
  });

  test.each([
    ['node', 'node=(a)\\1'],
    ['service', 'service=(?!web)'],
    ['tag', 'service=web&tag=(?<=x)y'],
  ])('a %s filter RE2 cannot run is refused at fire with a one-line 400', async (what, query) => {
    const [k, v] = query.split('&').at(-1)!.split('=');
    const q = query.split('&').map((p) => (p.startsWith(`${k}=`) ? `${k}=${encodeURIComponent(v)}` : p)).join('&');
    const r = await http(agent.url, 'PUT', `/v1/event/fire/bad?${q}`);
    expect(r.status).toBe(400);
    expect(r.text.toLowerCase()).toMatch(`invalid ${what} filter: error parsing regexp: `);
    expect(r.text.trim()).not.toContain('\n');
  });
});
