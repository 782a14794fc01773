import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentArgs, dialMap, DIAL_MAP_ENV } from '../support/agent-args';
import { ClusterHarness, leaderByMajority } from '../support/cluster-harness';

describe('agentArgs', () => {
  it('builds the server command line of DECISIONS.md, one -retry-join per peer', () => {
    const args = agentArgs({
      node: 's1', dataDir: '/d/s1', httpPort: 8501, serverPort: 8301, bootstrapExpect: 3,
      retryJoin: ['127.0.0.1:8300', '127.0.0.1:8302'],
    });
    expect(args.join(' ')).toBe(
      'agent -server -node s1 -datacenter dc1 -data-dir /d/s1 -bind 127.0.0.1 -client 127.0.0.1 -http-port 8501 ' +
        '-server-port 8301 -bootstrap-expect 3 -retry-join 127.0.0.1:8300 -retry-join 127.0.0.1:8302 -log-level info',
    );
  });

  it('puts extra arguments last so they can override', () => {
    const args = agentArgs({ node: 'a', dataDir: 'd', httpPort: 1, serverPort: 2, bootstrapExpect: 1, retryJoin: [], extraArgs: ['-log-level', 'debug'] });
    expect(args.slice(-4)).toEqual(['-log-level', 'info', '-log-level', 'debug']);
  });
});

describe('dialMap', () => {
  it('maps each peer address to the proxy on the link towards it', () => {
    expect(JSON.parse(dialMap([{ peerAddress: '127.0.0.1:8301', proxyAddress: '127.0.0.1:40001' }]))).toEqual({
      '127.0.0.1:8301': '127.0.0.1:40001',
    });
  });
});

describe('leaderByMajority', () => {
  it('names the leader a majority of the cluster reports', () => {
    expect(leaderByMajority(['a:1', 'a:1', 'b:1'], 3)).toBe('a:1');
  });

  it('does not trust a deposed leader that is alone in naming itself', () => {
    expect(leaderByMajority(['a:1', '', undefined], 3)).toBeUndefined();
  });

  it('counts servers that did not answer against the majority', () => {
    expect(leaderByMajority(['a:1', undefined, undefined], 3)).toBeUndefined();
    expect(leaderByMajority(['a:1', 'a:1', undefined], 3)).toBe('a:1');
  });

  it('reports no leader when servers answer with the empty string', () => {
    expect(leaderByMajority(['', '', ''], 3)).toBeUndefined();
  });
});

// A stand-in for `registry agent`: answers /v1/status/leader with whatever the
// test wrote to FAKE_LEADER_FILE, and /args with its command line and dial map.
const FAKE_AGENT = `
const http = require('node:http');
const fs = require('node:fs');
const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
if (process.env.FAKE_IGNORE_TERM) process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
else process.on('SIGTERM', () => { console.log('SIGTERM: leaving'); process.exit(0); });
http.createServer((req, res) => {
  if (req.url === '/v1/status/leader') {
    let leader = '';
    try { leader = fs.readFileSync(process.env.FAKE_LEADER_FILE, 'utf8'); } catch {}
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(leader));
  } else if (req.url === '/args') {
    res.end(JSON.stringify({ args, dialMap: process.env.${DIAL_MAP_ENV} ?? null }));
  } else { res.statusCode = 404; res.end('not found'); }
}).listen(Number(flag('-http-port')), '127.0.0.1', () => console.log('fake agent ' + flag('-node') + ' listening'));
`;

describe('ClusterHarness (driving a fake agent)', () => {
  let scratch: string;
  let bin: string;
  let leaderFile: string;
  let cluster: ClusterHarness | undefined;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'harness-kit-'));
    bin = join(scratch, 'fake-agent.js');
    leaderFile = join(scratch, 'leader');
    writeFileSync(bin, FAKE_AGENT);
  });

  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
    rmSync(leaderFile, { force: true });
  });

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  async function whenAnswering(c: ClusterHarness, i: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        if ((await c.http(i, 'GET', '/args', undefined, { timeoutMs: 500 })).status === 200) return;
      } catch {
        if (Date.now() > deadline) throw new Error(`s${i} never answered\n${c.diagnostics()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function argsOf(c: ClusterHarness, i: number): Promise<{ args: string[]; dialMap: string | null }> {
    return (await c.http(i, 'GET', '/args')).json();
  }

  const retryJoins = (args: string[]): string[] => args.flatMap((a, i) => (a === '-retry-join' ? [args[i + 1] as string] : []));

  it('starts servers on distinct loopback ports that join each other, and finds the leader a majority names', async () => {
    cluster = await ClusterHarness.start({ bin, env: { FAKE_LEADER_FILE: leaderFile } });
    const c = cluster;
    const ports = c.servers.flatMap((s) => [s.httpPort, s.serverPort]);
    expect(new Set(ports).size).toBe(6);
    await Promise.all(c.servers.map((s) => whenAnswering(c, s.index)));

    const { args, dialMap: map } = await argsOf(c, 0);
    expect(retryJoins(args)).toEqual([c.servers[1]?.serverAddress, c.servers[2]?.serverAddress]);
    expect(args).toEqual(expect.arrayContaining(['-node', 's0', '-bootstrap-expect', '3', '-data-dir', c.servers[0]?.dataDir]));
    expect(map).toBeNull();

    expect(await c.leader()).toBeUndefined();
    writeFileSync(leaderFile, c.servers[2]?.serverAddress as string);
    expect(await c.waitForLeader(5000)).toBe(2);
  });

  it('kills only the chosen server and restarts it on the same ports and data dir', async () => {
    cluster = await ClusterHarness.start({ bin, env: { FAKE_LEADER_FILE: leaderFile } });
    const c = cluster;
    await Promise.all(c.servers.map((s) => whenAnswering(c, s.index)));
    const pid = c.pid(1) as number;

    await c.kill(1);
    expect(c.running(1)).toBe(false);
    expect(c.pid(1)).toBeUndefined();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(c.running(0) && c.running(2)).toBe(true);
    expect(c.logs(1)).toMatch(/exited \(code null, signal SIGKILL\)/);
    await expect(c.http(1, 'GET', '/args', undefined, { timeoutMs: 500 })).rejects.toThrow();

    writeFileSync(leaderFile, c.servers[0]?.serverAddress as string);
    expect(await c.leader()).toBe(0); // two of three still agree

    await c.restart(1);
    await whenAnswering(c, 1);
    expect(c.pid(1)).not.toBe(pid);
    expect((await argsOf(c, 1)).args).toEqual(expect.arrayContaining(['-data-dir', c.servers[1]?.dataDir]));
    await expect(c.restart(1)).rejects.toThrow(/still running/);
  });

  it('stops every server it started and removes its folder', async () => {
    cluster = await ClusterHarness.start({ bin, env: { FAKE_LEADER_FILE: leaderFile } });
    const c = cluster;
    await Promise.all(c.servers.map((s) => whenAnswering(c, s.index)));
    const pids = c.servers.map((s) => c.pid(s.index) as number);
    await c.stop();
    cluster = undefined;
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(existsSync(c.dir)).toBe(false);
    expect(c.logs(0)).toBe('');
  });

  it('SIGKILLs a server that ignores SIGTERM and reports it', async () => {
    cluster = await ClusterHarness.start({ bin, size: 1, env: { FAKE_IGNORE_TERM: '1' } });
    const c = cluster;
    await whenAnswering(c, 0);
    await expect(c.kill(0, 'SIGTERM', 300)).rejects.toThrow(/did not exit within 300 ms of SIGTERM/);
    expect(c.running(0)).toBe(false);
  });

  it('routes each server\'s joins and peer dials through its own link proxies, which partitions cut', async () => {
    cluster = await ClusterHarness.start({ bin, proxied: true });
    const c = cluster;
    await Promise.all(c.servers.map((s) => whenAnswering(c, s.index)));

    const { args, dialMap: map } = await argsOf(c, 0);
    expect(retryJoins(args)).toEqual([c.link(0, 1).address, c.link(0, 2).address]);
    expect(JSON.parse(map as string)).toEqual({
      [c.servers[1]?.serverAddress as string]: c.link(0, 1).address,
      [c.servers[2]?.serverAddress as string]: c.link(0, 2).address,
    });
    expect(c.link(0, 1).target).toBe(c.servers[1]?.serverAddress);
    expect(() => c.link(0, 0)).toThrow(/no proxy/);

    c.partition([0], [1, 2]);
    expect([c.link(0, 1).mode.kind, c.link(1, 0).mode.kind, c.link(2, 0).mode.kind]).toEqual(['blackhole', 'blackhole', 'blackhole']);
    expect([c.link(1, 2).mode.kind, c.link(2, 1).mode.kind]).toEqual(['pass', 'pass']);

    c.heal();
    c.cutOneWay(1, 2);
    expect(c.link(1, 2).mode).toEqual({ kind: 'drop-one-direction', direction: 'out' });
    expect(c.link(2, 1).mode).toEqual({ kind: 'drop-one-direction', direction: 'in' });
    c.heal();
    expect(c.link(1, 2).mode.kind).toBe('pass');
  });
});
