// `registry tls ca create` / `tls cert create` (Consul 1.4's command/tls): the files Consul makes,
// named as Consul names them (registry for consul), checked with openssl — and the proof that
// matters: two servers started with the CLI's CA and server certificates form a cluster over TLS
// with verify_incoming, verify_outgoing and verify_server_hostname, and their HTTPS API answers
// the CLI's own certificate and refuses a caller without one.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnAgent, type AgentProcess } from '../../server/test/support/processes';
import { waitFor } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

jest.setTimeout(180_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-tls-create-'));
const agents: AgentProcess[] = [];
afterAll(async () => {
  for (const a of agents) {
    if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
    await a.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const tls = (args: string[], cwd = dir) => cli(['tls', ...args], { cwd });
const text = (file: string) => execFileSync('openssl', ['x509', '-noout', '-text', '-in', file], { encoding: 'utf8' });
const verify = (ca: string, cert: string) => spawnSync('openssl', ['verify', '-CAfile', ca, cert], { encoding: 'utf8' });
const DAY_MS = 86_400_000;
function validDays(file: string): number {
  const [before, after] = ['-startdate', '-enddate'].map((f) => Date.parse(execFileSync('openssl', ['x509', '-noout', f, '-in', file], { encoding: 'utf8' }).split('=')[1]!));
  return Math.round((after! - before!) / DAY_MS);
}

const SERVER_WARNING = `==> WARNING: Server Certificates grants authority to become a
    server and access all state in the cluster including root keys
    and all ACL tokens. Do not distribute them to production hosts
    that are not server nodes. Store them as securely as CA keys.
`;

test('tls ca create: registry-agent-ca.pem and its EC P-256 key, a 5-year CA; never overwritten', async () => {
  expect(await tls(['ca', 'create'])).toEqual({ code: 0, stdout: '==> Saved registry-agent-ca.pem\n==> Saved registry-agent-ca-key.pem\n', stderr: '' });
  const ca = text(join(dir, 'registry-agent-ca.pem'));
  expect(ca).toMatch(/Subject: CN = Registry Agent CA \d+/);
  expect(ca).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
  expect(ca).toMatch(/NIST CURVE: P-256/);
  expect(ca).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
  expect(ca).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
  expect(ca).not.toMatch(/Name Constraints/);
  expect(validDays(join(dir, 'registry-agent-ca.pem'))).toBe(1825);
  expect(readFileSync(join(dir, 'registry-agent-ca-key.pem'), 'utf8')).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
  expect(statSync(join(dir, 'registry-agent-ca-key.pem')).mode & 0o077).toBe(0);
  const before = readFileSync(join(dir, 'registry-agent-ca.pem'), 'utf8');
  expect(await tls(['ca', 'create'])).toEqual({ code: 1, stdout: '', stderr: 'registry-agent-ca.pem already exists.\n' });
  expect(readFileSync(join(dir, 'registry-agent-ca.pem'), 'utf8')).toBe(before);
});

test('tls cert create: server, client and CLI certificates with Consul\'s names, SANs and usages; numbers go up', async () => {
  expect(await tls(['cert', 'create', '-server'])).toEqual({
    code: 0,
    stdout: `${SERVER_WARNING}==> Using registry-agent-ca.pem and registry-agent-ca-key.pem\n==> Saved dc1-server-registry-0.pem\n==> Saved dc1-server-registry-0-key.pem\n`,
    stderr: '',
  });
  expect((await tls(['cert', 'create', '-server', '-node', 's1', '-additional-dnsname', 'registry.example', '-additional-ipaddress', '10.1.2.3'])).stdout).toMatch(
    /==> Saved dc1-server-registry-1\.pem\n==> Saved dc1-server-registry-1-key\.pem\n$/,
  );
  expect((await tls(['cert', 'create', '-client'])).stdout).toBe('==> Using registry-agent-ca.pem and registry-agent-ca-key.pem\n==> Saved dc1-client-registry-0.pem\n==> Saved dc1-client-registry-0-key.pem\n');
  expect((await tls(['cert', 'create', '-cli', '-days=30'])).stdout).toMatch(/==> Saved dc1-cli-registry-0\.pem\n==> Saved dc1-cli-registry-0-key\.pem\n$/);

  const server = text(join(dir, 'dc1-server-registry-0.pem'));
  expect(server).toMatch(/Subject: CN = server\.dc1\.registry/);
  expect(server).toMatch(/Issuer: CN = Registry Agent CA \d+/);
  expect(server).toMatch(/Subject Alternative Name: \n\s+DNS:server\.dc1\.registry, DNS:localhost, IP Address:127\.0\.0\.1\n/);
  expect(server).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
  expect(server).toMatch(/Extended Key Usage: \n\s+TLS Web Server Authentication, TLS Web Client Authentication/);
  expect(server).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
  expect(server).toMatch(/NIST CURVE: P-256/);
  expect(validDays(join(dir, 'dc1-server-registry-0.pem'))).toBe(365);
  expect(text(join(dir, 'dc1-server-registry-1.pem'))).toMatch(
    /DNS:registry\.example, DNS:s1\.server\.dc1\.registry, DNS:server\.dc1\.registry, DNS:localhost, IP Address:10\.1\.2\.3, IP Address:127\.0\.0\.1\n/,
  );
  expect(text(join(dir, 'dc1-client-registry-0.pem'))).toMatch(/DNS:client\.dc1\.registry, DNS:localhost, IP Address:127\.0\.0\.1\n/);
  const cliCert = text(join(dir, 'dc1-cli-registry-0.pem'));
  expect(cliCert).toMatch(/Subject Alternative Name: \n\s+DNS:cli\.dc1\.registry, DNS:localhost\n/);
  expect(cliCert).not.toMatch(/Extended Key Usage/);
  expect(validDays(join(dir, 'dc1-cli-registry-0.pem'))).toBe(30);
  for (const f of ['dc1-server-registry-0', 'dc1-server-registry-1', 'dc1-client-registry-0', 'dc1-cli-registry-0']) {
    expect(verify(join(dir, 'registry-agent-ca.pem'), join(dir, `${f}.pem`)).stdout).toBe(`${join(dir, f)}.pem: OK\n`);
    expect(readFileSync(join(dir, `${f}-key.pem`), 'utf8')).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
  }
});

test('tls cert create: Consul\'s refusals, exit 1, nothing written', async () => {
  expect(await tls(['cert', 'create'])).toEqual({ code: 1, stdout: '', stderr: 'Please provide either -server, -client, or -cli\n' });
  expect(await tls(['cert', 'create', '-server', '-client'])).toEqual({ code: 1, stdout: '', stderr: 'Please provide either -server, -client, or -cli\n' });
  expect(await tls(['cert', 'create', '-client', '-node', 'x'])).toEqual({ code: 1, stdout: '', stderr: '-node requires -server\n' });
  expect(await tls(['cert', 'create', '-client', '-ca', 'missing.pem'])).toEqual({ code: 1, stdout: '', stderr: 'Error reading CA: open missing.pem: no such file or directory\n' });
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  expect(await tls(['cert', 'create', '-server', '-dc', 'dc2'], empty)).toEqual({ code: 1, stdout: '', stderr: 'Error reading CA: open registry-agent-ca.pem: no such file or directory\n' });
  expect(existsSync(join(empty, 'dc2-server-registry-0.pem'))).toBe(false);
});

test('-name-constraint: the CA permits only its domain and localhost (and what is added); openssl enforces it', async () => {
  const nc = join(dir, 'constrained');
  mkdirSync(nc);
  expect((await tls(['ca', 'create', '-name-constraint', '-domain', 'example', '-additional-name-constraint', 'extra.test'], nc)).code).toBe(0);
  expect(text(join(nc, 'example-agent-ca.pem'))).toMatch(/Name Constraints: critical\s+Permitted:\s+DNS:extra\.test\s+DNS:example\s+DNS:localhost/);
  expect((await tls(['cert', 'create', '-server', '-domain', 'example'], nc)).code).toBe(0);
  expect(verify(join(nc, 'example-agent-ca.pem'), join(nc, 'dc1-server-example-0.pem')).status).toBe(0);
  expect((await tls(['cert', 'create', '-server', '-domain', 'example', '-additional-dnsname', 'evil.other'], nc)).code).toBe(0);
  const refused = verify(join(nc, 'example-agent-ca.pem'), join(nc, 'dc1-server-example-1.pem'));
  expect(refused.status).not.toBe(0);
  expect(refused.stdout + refused.stderr).toMatch(/name constraints|permitted subtree/i);
});

test('the CLI\'s files run a TLS cluster: two servers with verify_incoming/outgoing/server_hostname, HTTPS with the CLI certificate', async () => {
  const ports = await Promise.all([0, 1].map(async () => ({ http: await freePort(), server: await freePort(), https: await freePort() })));
  for (const i of [0, 1]) {
    const config = join(dir, `s${i}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        ca_file: join(dir, 'registry-agent-ca.pem'),
        cert_file: join(dir, `dc1-server-registry-${i}.pem`),
        key_file: join(dir, `dc1-server-registry-${i}-key.pem`),
        verify_incoming: true,
        verify_outgoing: true,
        verify_server_hostname: true,
        ports: { https: ports[i]!.https },
      }),
    );
    const other = ports[1 - i]!.server;
    agents.push(
      spawnAgent(
        ['-server', '-bootstrap-expect', '2', '-node', `s${i}`, '-bind', '127.0.0.1', '-data-dir', join(dir, `data-s${i}`), '-config-file', config, '-dns-port', '-1', '-retry-join', `127.0.0.1:${other}`],
        ports[i]!.http,
        ports[i]!.server,
        join(dir, `s${i}.log`),
      ),
    );
  }
  // A leader needs the two servers' Raft traffic, which goes over TLS both ways with the names checked.
  await waitFor(async () => {
    const leaders = await Promise.all(ports.map(async (p) => (await fetch(`http://127.0.0.1:${p.http}/v1/status/leader`)).json()));
    return leaders[0] !== '' && leaders[0] === leaders[1];
  }, 90_000, 200);

  const https = `-http-addr=https://127.0.0.1:${ports[0]!.https}`;
  const ca = `-ca-file=${join(dir, 'registry-agent-ca.pem')}`;
  const asCli = [`-client-cert=${join(dir, 'dc1-cli-registry-0.pem')}`, `-client-key=${join(dir, 'dc1-cli-registry-0-key.pem')}`];
  expect(await cli(['kv', 'put', https, ca, ...asCli, 'tls/made-by', 'registry tls'])).toMatchObject({ code: 0, stdout: 'Success! Data written to: tls/made-by\n' });
  // Written through s0's HTTPS API, read through s1's (forwarded to the leader over the TLS server port).
  const other = `-http-addr=https://127.0.0.1:${ports[1]!.https}`;
  const asClient = [`-client-cert=${join(dir, 'dc1-client-registry-0.pem')}`, `-client-key=${join(dir, 'dc1-client-registry-0-key.pem')}`];
  expect(await cli(['kv', 'get', other, ca, ...asClient, 'tls/made-by'])).toMatchObject({ code: 0, stdout: 'registry tls\n' });
  const members = await cli(['members', https, ca, ...asCli]);
  expect(members.code).toBe(0);
  expect(members.stdout).toMatch(/^s0\s+127\.0\.0\.1:\d+\s+alive\s+server/m);
  expect(members.stdout).toMatch(/^s1\s+127\.0\.0\.1:\d+\s+alive\s+server/m);
  // verify_incoming: no client certificate, no answer.
  const refused = await cli(['kv', 'get', https, ca, 'tls/made-by']);
  expect(refused).toMatchObject({ code: 1, stdout: '', stderr: `Error querying Registry agent: remote error: tls: certificate required 127.0.0.1:${ports[0]!.https}\n` });
});
