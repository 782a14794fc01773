// The proxy's TLS choices that cost CPU (docs/connect.md "TLS details", docs/benchmarks.md): an
// upstream resumes the TLS session of an endpoint it dialled before (no signatures, no chain check
// on the next connection), and the public listener settles on AES-128-GCM, holding to its own order
// against a client (Node's default) that prefers AES-256.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, createServer as tlsServer, type TLSSocket } from 'node:tls';
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { freePorts } from '../support/ports';
import { echoServer, roundTrip, spawnProxy, type ProxyProcess } from './mesh-support';

let a: TestAgent;
let dir: string;
const servers: Server[] = [];
const proxies: ProxyProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-proxy-tls-'));
  a = await startDevAgent();
}, 60_000);
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  for (const s of servers) s.close();
  await a?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const reg = async (body: unknown) => expect((await http(a.url, 'PUT', '/v1/agent/service/register', body)).status).toBe(200);
const leafOf = async (svc: string) => (await http(a.url, 'GET', `/v1/agent/connect/ca/leaf/${svc}`)).json as { CertPEM: string; PrivateKeyPEM: string };
const roots = async () => ((await http(a.url, 'GET', '/v1/agent/connect/ca/roots')).json.Roots as { RootCert: string }[]).map((r) => r.RootCert);

test('an upstream resumes its TLS session with an endpoint', async () => {
  const [nativePort, webProxy, up] = (await freePorts(3)) as [number, number, number];
  // A Connect-native "store": a TLS server with store's leaf that notes each handshake.
  const leaf = await leafOf('store');
  const seen: { reused: boolean }[] = [];
  const native = tlsServer({ key: leaf.PrivateKeyPEM, cert: leaf.CertPEM, ca: await roots(), requestCert: true, rejectUnauthorized: true }, (s) => {
    seen.push({ reused: s.isSessionReused() });
    s.on('error', () => undefined);
    s.on('data', (d) => s.write(`store:${d}`));
  });
  await new Promise<void>((r) => native.listen(nativePort, '127.0.0.1', () => r()));
  servers.push(native);
  await reg({ Name: 'store', Port: nativePort, Connect: { Native: true } });
  await reg({ Name: 'shop', Port: 1, Connect: { SidecarService: { Port: webProxy, Proxy: { Upstreams: [{ DestinationName: 'store', LocalBindPort: up }] } } } });
  proxies.push(spawnProxy(['-sidecar-for', 'shop', '-http-addr', `127.0.0.1:${a.agent.httpPort}`], join(dir, 'shop.log')));
  await waitFor(async () => (await roundTrip(up, 'one', 1000)) === 'store:one', 30_000, 200);
  for (const m of ['two', 'three']) expect(await roundTrip(up, m)).toBe(`store:${m}`);
  expect(seen.length).toBeGreaterThanOrEqual(3);
  // The first is a full handshake; the later ones resume it.
  expect(seen[0]!.reused).toBe(false);
  expect(seen.slice(-2).map((h) => h.reused)).toEqual([true, true]);
}, 60_000);

test('the public listener chooses AES-128-GCM even for a client that prefers AES-256', async () => {
  const [appPort, pub] = (await freePorts(2)) as [number, number];
  servers.push(await echoServer(appPort, 'app:'));
  await reg({ Name: 'app', Port: appPort, Connect: { SidecarService: { Port: pub } } });
  proxies.push(spawnProxy(['-sidecar-for', 'app', '-http-addr', `127.0.0.1:${a.agent.httpPort}`], join(dir, 'app.log')));
  const client = await leafOf('caller');
  const ca = await roots();
  const handshake = () =>
    new Promise<string>((resolve, reject) => {
      // Node's default order: AES-256-GCM first.
      const s: TLSSocket = tlsConnect({ host: '127.0.0.1', port: pub, key: client.PrivateKeyPEM, cert: client.CertPEM, ca, checkServerIdentity: () => undefined }, () => {
        const name = s.getCipher().name;
        s.destroy();
        resolve(name);
      });
      s.once('error', reject);
    });
  let cipher = '';
  await waitFor(async () => {
    cipher = await handshake();
    return true;
  }, 20_000, 200);
  expect(cipher).toBe('TLS_AES_128_GCM_SHA256');
}, 60_000);
