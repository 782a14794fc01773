// Issue 31: a watch from the config file is a runner fed by input, and nothing it meets may end or
// stall the agent. One real `registry agent` process with ACLs on and watches whose handlers do not
// exist, exit non-zero, hang (killed after watch_handler_timeout, with their children), print
// megabytes, or post to endpoints that refuse, never answer, answer megabytes or cannot even be
// dialled; and watches on targets that fail (an unknown datacenter, a token that does not exist).
// The agent must stay up and serve reads and writes, a good watch beside them must keep firing,
// and each failure must be logged with the watch and the reason and counted as runner="watch".
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from '../lifecycle/agent-process';
import { freePorts } from '../support/ports';
import { eventually } from '../support/wait';

jest.setTimeout(180_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-hostile-watches-'));
const configFile = join(dir, 'agent.json');
const ROOT = 'b3a0f0a4-1b0c-4a55-9c6e-3f1d2f6e0a11';
let agent: AgentProc | undefined;
const servers: Server[] = [];
let hungPort = 0;
let hugePort = 0;
let failingPort = 0;
let closedPort = 0;

async function serve(port: number, handle: Parameters<typeof createServer>[1]): Promise<void> {
  const s = createServer(handle);
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', () => r()));
}

async function call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${agent!.url}${path}`, { method, body, headers: { 'X-Registry-Token': ROOT }, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: await res.text() };
}

const readIf = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  [hungPort, hugePort, failingPort, closedPort] = await freePorts(4);
  // Accepts and never answers.
  await serve(hungPort, () => undefined);
  // Answers 200 with 20 MB.
  await serve(hugePort, (_req, res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(1 << 20, 'y');
    let sent = 0;
    const more = () => {
      while (sent < 20 && res.write(chunk)) sent++;
      if (sent >= 20) res.end();
      else res.once('drain', () => (sent++, more()));
    };
    more();
    res.on('error', () => undefined);
  });
  // Answers 500.
  await serve(failingPort, (_req, res) => {
    res.writeHead(500);
    res.end('handler broke');
  });
  const good = join(dir, 'good.sh');
  writeFileSync(good, `cat >> "${dir}/good.log"\n`);
  chmodSync(good, 0o755);
  const http = (path: string, extra: Record<string, unknown> = {}) => ({ handler_type: 'http', http_handler_config: { path, ...extra } });
  writeFileSync(
    configFile,
    JSON.stringify({
      acl: { enabled: true, default_policy: 'allow', tokens: { initial_management: ROOT, agent: ROOT } },
      telemetry: { prometheus_retention_time: '1m' },
      watch_handler_timeout: '8s',
      watches: [
        { type: 'key', key: 'w/missing', token: ROOT, args: ['/nonexistent/watch-handler'] },
        { type: 'key', key: 'w/exit', token: ROOT, args: ['/bin/sh', '-c', 'cat >/dev/null; echo "going down" >&2; exit 3'] },
        { type: 'key', key: 'w/hang', token: ROOT, handler: `echo $$ > "${dir}/hang.pid"; sleep 600` },
        { type: 'key', key: 'w/loud', token: ROOT, args: ['/bin/sh', '-c', `head -c 5000000 /dev/zero; echo done > "${dir}/loud.done"`] },
        { type: 'key', key: 'w/refused', token: ROOT, ...http(`http://127.0.0.1:${closedPort}/`) },
        { type: 'key', key: 'w/silent', token: ROOT, ...http(`http://127.0.0.1:${hungPort}/`, { timeout: '1s' }) },
        { type: 'key', key: 'w/huge', token: ROOT, ...http(`http://127.0.0.1:${hugePort}/`) },
        { type: 'key', key: 'w/500', token: ROOT, ...http(`http://127.0.0.1:${failingPort}/`) },
        { type: 'key', key: 'w/badurl', token: ROOT, ...http('http://exa mple.com/', { header: { 'bad name': ['x'] } }) },
        { type: 'key', key: 'w/dc', token: ROOT, datacenter: 'nowhere', args: ['/bin/true'] },
        { type: 'key', key: 'w/token', token: 'no-such-token', args: ['/bin/true'] },
        { type: 'key', key: 'w/good', token: ROOT, args: ['/bin/sh', good] },
      ],
    }),
  );
  agent = await startAgentProc(['-dev', '-node', 'hostile-watches', '-config-file', configFile], join(dir, 'agent.log'));
  await whenReady(agent, 'hostile-watches', ROOT);
});

afterAll(async () => {
  await agent?.stop();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  const pid = Number(readIf(join(dir, 'hang.pid')).trim());
  if (pid > 0 && alive(pid)) process.kill(-pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The process is up and serves a write and a read of it. */
async function expectServing(round: string): Promise<void> {
  expect({ round, exitCode: agent!.child.exitCode, signal: agent!.child.signalCode }).toEqual({ round, exitCode: null, signal: null });
  expect(await call('PUT', `/v1/kv/serving/${round}`, round)).toEqual({ status: 200, text: 'true' });
  expect(await call('GET', `/v1/kv/serving/${round}?raw`)).toEqual({ status: 200, text: round });
}

const failureLine = (label: string, reason: RegExp) => new RegExp(`watch watches\\[\\d+\\] \\(key ${label}[^)]*\\) failed.*${reason.source}`);

test('hostile handlers and targets leave the agent serving, a good watch firing, and each failure logged and counted', async () => {
  // Every watch fires once at start (the key is absent: null); a change makes each fire again.
  for (const key of ['missing', 'exit', 'hang', 'loud', 'refused', 'silent', 'huge', '500', 'badurl', 'good']) {
    expect((await call('PUT', `/v1/kv/w/${key}`, key)).status).toBe(200);
  }
  const expected: Array<[string, RegExp]> = [
    ['w/missing', /handler failed: failed to start: spawn \/nonexistent\/watch-handler ENOENT/],
    ['w/exit', /handler failed: exit status 3; output: going down/],
    ['w/hang', /handler failed: did not finish within 8000 ms \(watch_handler_timeout\); killed/],
    ['w/refused', /handler failed: .*ECONNREFUSED/],
    ['w/silent', /handler failed: no answer within 1000 ms/],
    ['w/500', /handler failed: answered 500 Internal Server Error: handler broke/],
    ['w/badurl', /handler failed: Invalid URL/],
    ['w/dc', /query failed: Unexpected response code: 500 \(No path to datacenter\); retrying in 5 s/],
    ['w/token', /query failed: Unexpected response code: 403 \(ACL not found\)/],
  ];
  const missing = () => expected.filter(([label, reason]) => !failureLine(label, reason).test(agent!.log())).map(([label]) => label);
  await eventually(() => missing().length === 0, 60_000, 250);
  expect(missing()).toEqual([]);

  // The hung handler was killed with its child (its process group), not left behind.
  const hung = Number(readIf(join(dir, 'hang.pid')).trim());
  expect(hung).toBeGreaterThan(0);
  expect(await eventually(() => !alive(hung), 5_000)).toBe(true);
  // Megabytes of output, and a 20 MB answer, are not handler failures: read and dropped. (Their
  // queries may fail once at start, as every watch's may: until the new leader has written the
  // initial management token, a query with it is 403 ACL not found, as in Consul; seen in CI under load.)
  expect(await eventually(() => readIf(join(dir, 'loud.done')).includes('done'), 20_000)).toBe(true);
  expect(agent!.log()).not.toMatch(failureLine('w/loud', /handler failed/));
  expect(agent!.log()).not.toMatch(failureLine('w/huge', /handler failed/));

  await expectServing('after-handlers');
  // The good watch fired for its change beside all of them, and fires again.
  expect(await eventually(() => readIf(join(dir, 'good.log')).includes(Buffer.from('good').toString('base64')), 15_000)).toBe(true);
  expect((await call('PUT', '/v1/kv/w/good', 'again')).status).toBe(200);
  expect(await eventually(() => readIf(join(dir, 'good.log')).includes(Buffer.from('again').toString('base64')), 15_000)).toBe(true);

  // Failing handlers run again on the next change (after a backoff), still without harm.
  expect((await call('PUT', '/v1/kv/w/exit', 'twice')).status).toBe(200);
  expect(await eventually(() => /exit status 3; output: going down \(2 in a row; next run in 2 s/.test(agent!.log()), 20_000)).toBe(true);

  const metrics = (await call('GET', '/v1/agent/metrics?format=prometheus')).text;
  const count = Number(/registry_runner_failures_total\{runner="watch"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  expect(count).toBeGreaterThanOrEqual(expected.length + 1);
  await expectServing('after-all');
  expect(agent!.log()).not.toMatch(/BUG:/);
});
