// The CLI's TLS flags and variables against an agent with an HTTPS listener (ports.https,
// cert_file, key_file, ca_file, verify_incoming_https): -ca-file / REGISTRY_CACERT, -ca-path,
// -client-cert / -client-key (and their REGISTRY_CLIENT_* variables), REGISTRY_HTTP_SSL,
// REGISTRY_HTTP_SSL_VERIFY=false and -tls-server-name — each as a real `registry` process.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { issue, makeCa, writePki } from '../../server/test/tls/test-pki';
import { cli } from './support/cli';

jest.setTimeout(60_000);

const ca = makeCa('registry cli CA');
// The agent's certificate names server.dc1.registry, localhost and 127.0.0.1.
const files = writePki(ca, issue(ca, 'server.dc1.registry', ['server.dc1.registry', 'localhost']));
const clientCert = join(files.dir, 'client.pem');
const clientKey = join(files.dir, 'client-key.pem');
const strangerCert = join(files.dir, 'stranger.pem');
const strangerKey = join(files.dir, 'stranger-key.pem');
const caDir = join(files.dir, 'cas');
{
  const client = issue(ca, 'client', ['client.dc1.registry']);
  writeFileSync(clientCert, client.certPem);
  writeFileSync(clientKey, client.keyPem, { mode: 0o600 });
  const stranger = issue(makeCa('stranger CA'), 'stranger', ['stranger']);
  writeFileSync(strangerCert, stranger.certPem);
  writeFileSync(strangerKey, stranger.keyPem, { mode: 0o600 });
  mkdirSync(caDir);
  writeFileSync(join(caDir, 'registry-ca.pem'), ca.certPem);
}
afterAll(() => rmSync(files.dir, { recursive: true, force: true }));

function startHttps(verifyIncomingHttps: boolean): Promise<TestAgent> {
  return startDevAgent((c) => {
    c.tls = { ...c.tls, certFile: files.certFile, keyFile: files.keyFile, caFile: files.caFile, httpsPort: 0, verifyIncomingHttps };
  });
}

describe('HTTPS without verify_incoming_https', () => {
  let t: TestAgent;
  let port: number;
  beforeAll(async () => {
    t = await startHttps(false);
    port = t.agent.httpsPort;
  });
  afterAll(() => t?.stop());

  test('-ca-file with an https:// address: kv put and get over TLS', async () => {
    const addr = `-http-addr=https://127.0.0.1:${port}`;
    expect(await cli(['kv', 'put', addr, `-ca-file=${files.caFile}`, 'tls/k', 'secret'])).toMatchObject({ code: 0, stdout: 'Success! Data written to: tls/k\n' });
    expect(await cli(['kv', 'get', addr, '-ca-file', files.caFile, 'tls/k'])).toMatchObject({ code: 0, stdout: 'secret\n' });
    // Written over HTTPS, visible over plain HTTP: the same agent.
    expect(await cli(['kv', 'get', `-http-addr=127.0.0.1:${t.agent.httpPort}`, 'tls/k'])).toMatchObject({ code: 0, stdout: 'secret\n' });
  });

  test('REGISTRY_HTTP_SSL=true makes a bare host:port https; REGISTRY_CACERT is the CA', async () => {
    const env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${port}`, REGISTRY_HTTP_SSL: 'true', REGISTRY_CACERT: files.caFile };
    expect(await cli(['catalog', 'datacenters'], { env })).toMatchObject({ code: 0, stdout: 'dc1\n' });
    expect(await cli(['members'], { env })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^test-agent\s+127\.0\.0\.1:\d+\s+alive\s+server/m) });
    // Without REGISTRY_HTTP_SSL the same address is spoken to in plain HTTP, which a TLS port refuses.
    const plain = await cli(['catalog', 'datacenters'], { env: { REGISTRY_HTTP_ADDR: `127.0.0.1:${port}` } });
    expect(plain).toMatchObject({ code: 1, stdout: '', stderr: `Error listing datacenters: connection reset by peer 127.0.0.1:${port}\n` });
  });

  test('-ca-path reads the CA from a directory', async () => {
    const r = await cli(['catalog', 'datacenters', `-http-addr=https://127.0.0.1:${port}`, '-ca-path', caDir]);
    expect(r).toMatchObject({ code: 0, stdout: 'dc1\n' });
  });

  test('without the CA the agent is not trusted: exit 1 naming the address and the x509 cause', async () => {
    const r = await cli(['kv', 'get', `-http-addr=https://127.0.0.1:${port}`, 'tls/k']);
    expect(r).toMatchObject({ code: 1, stderr: `Error querying Registry agent: x509: certificate signed by unknown authority 127.0.0.1:${port}\n` });
    const wrongCa = await cli(['kv', 'get', `-http-addr=https://127.0.0.1:${port}`, `-ca-file=${strangerCert}`, 'tls/k']);
    expect(wrongCa).toMatchObject({ code: 1, stderr: expect.stringMatching(/x509: certificate signed by unknown authority/) });
    // REGISTRY_HTTP_SSL_VERIFY=false skips verification (as Consul's CONSUL_HTTP_SSL_VERIFY).
    const unverified = await cli(['kv', 'get', 'tls/k'], { env: { REGISTRY_HTTP_ADDR: `https://127.0.0.1:${port}`, REGISTRY_HTTP_SSL_VERIFY: 'false' } });
    expect(unverified).toMatchObject({ code: 0, stdout: 'secret\n' });
  });

  test('-tls-server-name is the name checked against the certificate', async () => {
    const base = [`-http-addr=https://127.0.0.1:${port}`, `-ca-file=${files.caFile}`];
    expect(await cli(['catalog', 'datacenters', ...base, '-tls-server-name', 'server.dc1.registry'])).toMatchObject({ code: 0, stdout: 'dc1\n' });
    const wrong = await cli(['catalog', 'datacenters', ...base, '-tls-server-name', 'other.example']);
    expect(wrong).toMatchObject({ code: 1, stderr: `Error listing datacenters: x509: certificate is valid for server.dc1.registry, localhost, 127.0.0.1, not other.example 127.0.0.1:${port}\n` });
    expect(await cli(['catalog', 'datacenters', ...base], { env: { REGISTRY_TLS_SERVER_NAME: 'other.example' } })).toMatchObject({ code: 1 });
  });

  test('a CA file that cannot be read is reported before anything is sent', async () => {
    const r = await cli(['kv', 'get', `-http-addr=https://127.0.0.1:${port}`, '-ca-file', join(files.dir, 'missing.pem'), 'tls/k']);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error querying Registry agent: Error loading CA certificates: ENOENT.*missing\.pem/) });
  });
});

describe('HTTPS with verify_incoming_https', () => {
  let t: TestAgent;
  let addr: string;
  beforeAll(async () => {
    t = await startHttps(true);
    addr = `-http-addr=https://127.0.0.1:${t.agent.httpsPort}`;
  });
  afterAll(() => t?.stop());

  test('-client-cert and -client-key from the agent CA are accepted', async () => {
    const tls = [`-ca-file=${files.caFile}`, `-client-cert=${clientCert}`, `-client-key=${clientKey}`];
    expect(await cli(['kv', 'put', addr, ...tls, 'mtls/k', 'v'])).toMatchObject({ code: 0, stdout: 'Success! Data written to: mtls/k\n' });
    expect(await cli(['kv', 'get', addr, ...tls, 'mtls/k'])).toMatchObject({ code: 0, stdout: 'v\n' });
  });

  test('REGISTRY_CLIENT_CERT and REGISTRY_CLIENT_KEY do the same', async () => {
    const env = { REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpsPort}`, REGISTRY_HTTP_SSL: '1', REGISTRY_CACERT: files.caFile, REGISTRY_CLIENT_CERT: clientCert, REGISTRY_CLIENT_KEY: clientKey };
    expect(await cli(['kv', 'get', 'mtls/k'], { env })).toMatchObject({ code: 0, stdout: 'v\n' });
  });

  test('no client certificate, or one from another CA, is refused with exit 1', async () => {
    const none = await cli(['kv', 'get', addr, `-ca-file=${files.caFile}`, 'mtls/k']);
    expect(none.code).toBe(1);
    expect(none).toMatchObject({ code: 1, stdout: '', stderr: `Error querying Registry agent: remote error: tls: certificate required 127.0.0.1:${t.agent.httpsPort}\n` });
    // TLS 1.3 sends the client's certificate after the handshake: the refusal arrives as an alert
    // or, when the agent closes first, as a reset.
    const stranger = await cli(['kv', 'get', addr, `-ca-file=${files.caFile}`, `-client-cert=${strangerCert}`, `-client-key=${strangerKey}`, 'mtls/k']);
    expect(stranger).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^Error querying Registry agent: (remote error: tls: \S.*|connection reset by peer) 127\.0\.0\.1:\d+\n$/) });
  });
});
