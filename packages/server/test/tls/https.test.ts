// The HTTPS listener (ports.https): served beside HTTP with the agent's certificate; with
// verify_incoming_https a client must present a certificate from ca_file, without it none is needed.
import { rmSync } from 'node:fs';
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { startDevAgent, type TestAgent } from '../support/dev-agent';
import { issue, makeCa, writePki, type Issued } from './test-pki';

jest.setTimeout(60_000);

const ca = makeCa('registry https CA');
const files = writePki(ca, issue(ca, 'server.dc1.registry', ['server.dc1.registry', 'localhost']));
const client = issue(ca, 'client', ['client.dc1.registry']);
const strangerCa = makeCa('stranger CA');
const stranger = issue(strangerCa, 'stranger', ['stranger']);
let agent: TestAgent | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});
afterAll(() => rmSync(files.dir, { recursive: true, force: true }));

async function start(verifyIncomingHttps: boolean): Promise<TestAgent> {
  return startDevAgent((c) => {
    c.tls = { ...c.tls, certFile: files.certFile, keyFile: files.keyFile, caFile: files.caFile, httpsPort: 0, verifyIncomingHttps };
  });
}

/** GET over HTTPS trusting the test CA; resolves with the status, or rejects with the TLS error. */
function get(port: number, path: string, cert?: Issued): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, ca: readFileSync(files.caFile), cert: cert?.certPem, key: cert?.keyPem, agent: false, timeout: 5_000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test('without verify_incoming_https, HTTPS answers any client and the server proves its certificate', async () => {
  agent = await start(false);
  const port = agent.agent.httpsPort;
  expect(port).toBeGreaterThan(0);
  const r = await get(port, '/v1/status/leader');
  expect(r.status).toBe(200);
  expect(JSON.parse(r.body)).toMatch(/^127\.0\.0\.1:\d+$/);
  // HTTP keeps serving beside it.
  expect((await fetch(`${agent.url}/v1/status/leader`)).status).toBe(200);
});

test('with verify_incoming_https, only clients with a certificate from ca_file get an answer', async () => {
  agent = await start(true);
  const port = agent.agent.httpsPort;
  await expect(get(port, '/v1/status/leader')).rejects.toThrow();
  await expect(get(port, '/v1/status/leader', stranger)).rejects.toThrow();
  const ok = await get(port, '/v1/kv/x', client);
  expect(ok.status).toBe(404);
  const put = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/kv/x', method: 'PUT', ca: readFileSync(files.caFile), cert: client.certPem, key: client.keyPem, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('over https');
  });
  expect(put).toBe(200);
  expect(await get(port, '/v1/kv/x?raw', client)).toEqual({ status: 200, body: 'over https' });
});
