// Issue #27, interoperability: registry's built-in proxy and Consul 1.4's `consul connect proxy`
// speak the same protocol (TLS with SPIFFE identities, no framing of their own), both configured
// by a registry agent (http_config.consul_compat, for Consul's X-Consul-* headers) and holding leaves
// of its CA. Traffic flows registry proxy → Consul proxy → app and Consul proxy → registry proxy →
// app, and a deny intention refuses new connections whichever proxy holds the public side.
// Needs a `consul` binary (1.4.x) on PATH; without one the suite is skipped, never passed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { echoServer, roundTrip, spawnProxy, type ProxyProcess, freeRange } from './mesh-support';

const consulVersion = spawnSync('consul', ['version'], { encoding: 'utf8' });
const hasConsul = consulVersion.status === 0 && /Consul v?1\.4\./.test(consulVersion.stdout);
const suite = hasConsul ? describe : describe.skip;

interface Stoppable {
  stop(): Promise<void>;
}

/** `consul connect proxy <args>` against the registry agent, logging to `logFile`, killed by its PID. */
function consulProxy(args: string[], httpAddr: string, logFile: string): Stoppable {
  const child: ChildProcess = spawn('consul', ['connect', 'proxy', '-log-level', 'debug', '-http-addr', httpAddr, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.on('close', () => log.end());
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

suite('registry proxy ⇄ consul connect proxy (Consul 1.4)', () => {
  let a: TestAgent;
  let dir: string;
  let httpAddr: string;
  const servers: Server[] = [];
  const running: (Stoppable | ProxyProcess)[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'registry-consul-interop-'));
    const base = await freeRange();
    a = await startDevAgent((c) => {
      c.consulCompat = true;
      c.connect.proxy.allowManagedApiRegistration = true;
      c.connect.proxyPorts = { min: base, max: base + 1 };
    });
    httpAddr = `127.0.0.1:${a.agent.httpPort}`;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    for (const s of servers) s.close();
    await a?.stop();
    if (!process.env.KEEP_PROXY_LOGS) rmSync(dir, { recursive: true, force: true });
  });

  const reg = async (body: unknown) => expect((await http(a.url, 'PUT', '/v1/agent/service/register', body)).status).toBe(200);
  const intention = async (src: string, dst: string, action: 'allow' | 'deny') =>
    expect((await http(a.url, 'POST', '/v1/connect/intentions', { SourceName: src, DestinationName: dst, Action: action })).status).toBe(200);

  test('registry proxy → Consul proxy → app; a deny intention makes the Consul proxy refuse', async () => {
    const [dbPort, dbPublic, up] = (await freePorts(3)) as [number, number, number];
    servers.push(await echoServer(dbPort, 'db:'));
    // db's sidecar is Consul's proxy, configured from its registration on the registry agent.
    await reg({ Name: 'db', Port: dbPort, Connect: { SidecarService: { Port: dbPublic } } });
    running.push(consulProxy(['-sidecar-for', 'db'], httpAddr, join(dir, 'consul-db.log')));
    // web's side is registry's proxy, with db as its upstream.
    running.push(spawnProxy(['-service', 'web', '-upstream', `db:${up}`, '-http-addr', httpAddr], join(dir, 'registry-web.log')));
    await waitFor(async () => (await roundTrip(up, 'hello', 1000)) === 'db:hello', 40_000, 250);

    await intention('web', 'db', 'deny');
    await waitFor(async () => (await roundTrip(up, 'denied', 1000)) === null, 20_000, 250);
    expect(await roundTrip(up, 'still', 1000)).toBeNull();
  }, 90_000);

  test('Consul proxy → registry proxy → app; a deny intention makes the registry proxy refuse', async () => {
    const [apiPort, apiPublic, up] = (await freePorts(3)) as [number, number, number];
    servers.push(await echoServer(apiPort, 'api:'));
    // api's sidecar is registry's proxy.
    await reg({ Name: 'api', Port: apiPort, Connect: { SidecarService: { Port: apiPublic } } });
    running.push(spawnProxy(['-sidecar-for', 'api', '-http-addr', httpAddr], join(dir, 'registry-api.log')));
    // cli's side is Consul's proxy, with api as its upstream.
    running.push(consulProxy(['-service', 'cli', '-upstream', `api:${up}`], httpAddr, join(dir, 'consul-cli.log')));
    await waitFor(async () => (await roundTrip(up, 'hello', 1000)) === 'api:hello', 40_000, 250);

    await intention('cli', 'api', 'deny');
    await waitFor(async () => (await roundTrip(up, 'denied', 1000)) === null, 20_000, 250);
    expect(await roundTrip(up, 'still', 1000)).toBeNull();
  }, 90_000);

  test('managed proxies: Consul\'s proxy as the Command of one (CONNECT_PROXY_ID/TOKEN, CONSUL_HTTP_ADDR), the built-in one for the other', async () => {
    const [storePort, up] = (await freePorts(2)) as [number, number];
    servers.push(await echoServer(storePort, 'store:'));
    await reg({ Name: 'store', Port: storePort, Connect: { Proxy: { Command: ['consul', 'connect', 'proxy', '-log-level', 'debug'] } } });
    await reg({ Name: 'shop', Port: 1, Connect: { Proxy: { Upstreams: [{ DestinationName: 'store', LocalBindPort: up }] } } });
    await waitFor(async () => (await roundTrip(up, 'hello', 1000)) === 'store:hello', 40_000, 250);

    await intention('shop', 'store', 'deny');
    await waitFor(async () => (await roundTrip(up, 'denied', 1000)) === null, 20_000, 250);
    expect(await roundTrip(up, 'still', 1000)).toBeNull();
    for (const id of ['store', 'shop']) expect((await http(a.url, 'PUT', `/v1/agent/service/deregister/${id}`)).status).toBe(200);
  }, 90_000);
});
