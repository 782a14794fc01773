// TLS on the server port (Raft + RPC + area links): a three-server cluster works end to end over
// TLS, a plain client is refused on that port, and a server holding a certificate from another CA
// cannot join.
import { rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Packr } from 'msgpackr';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { issue, makeCa, writePki } from './test-pki';

jest.setTimeout(180_000);

const dirs: string[] = [];
let cluster: ClusterHarness | undefined;
let rogue: AgentProcess | undefined;
afterAll(async () => {
  if (rogue && rogue.child.exitCode === null) {
    rogue.child.kill('SIGKILL');
    await rogue.exited;
  }
  await cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A config file turning on TLS both ways on the server port, with the server-name check. */
function tlsConfig(files: { dir: string; caFile: string; certFile: string; keyFile: string }): string {
  const path = join(files.dir, 'tls.json');
  writeFileSync(
    path,
    JSON.stringify({
      ca_file: files.caFile,
      cert_file: files.certFile,
      key_file: files.keyFile,
      verify_incoming_rpc: true,
      verify_outgoing: true,
      verify_server_hostname: true,
    }),
  );
  return path;
}

/** What a plain TCP client gets back for an RPC request frame: the bytes, until the server closes. */
function plainRequest(port: number): Promise<{ bytes: Buffer; closed: boolean }> {
  const body = new Packr({ useRecords: false }).pack([1, 1, 'cluster.info', null]);
  const frame = Buffer.alloc(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed: false });
    }, 5_000);
    socket.on('connect', () => socket.write(frame));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(chunks), closed: true });
    });
  });
}

test('a cluster over TLS: writes through a follower are read back everywhere; plain clients and another CA are refused', async () => {
  const ca = makeCa('registry test CA');
  const good = writePki(ca, issue(ca, 'server.dc1.registry', ['server.dc1.registry', 'localhost']));
  dirs.push(good.dir);
  const c = (cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-config-file', tlsConfig(good)] }));
  const leader = await c.waitForLeader(30_000);
  const follower = (leader + 1) % 3;

  // End to end: a write through a follower is forwarded to the leader over TLS and replicated.
  const w = await c.http(follower, 'PUT', '/v1/kv/tls/check', 'over-tls');
  expect([w.status, w.body]).toEqual([200, 'true']);
  for (const i of [0, 1, 2]) {
    expect(await eventually(async () => (await c.http(i, 'GET', '/v1/kv/tls/check?raw&stale')).body === 'over-tls', 10_000)).toBe(true);
  }
  const conf = (await c.http(follower, 'GET', '/v1/operator/raft/configuration')).json<{ Servers: unknown[] }>();
  expect(conf.Servers).toHaveLength(3);

  // A plain client on the TLS port gets no answer: the handshake fails and the port closes on it
  // (at most a TLS alert record, content type 0x15, comes back — never an RPC frame).
  const plain = await plainRequest(c.servers[leader].serverPort);
  expect(plain.closed).toBe(true);
  if (plain.bytes.length > 0) expect(plain.bytes[0]).toBe(0x15);

  // A server whose certificate (and CA) is another one cannot join: it retries and stays outside.
  const other = makeCa('another CA');
  const bad = writePki(other, issue(other, 'server.dc1.registry', ['server.dc1.registry', 'localhost']));
  dirs.push(bad.dir);
  const [httpPort, serverPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-rogue-'));
  dirs.push(dataDir);
  rogue = spawnAgent(
    ['-server', '-node', 'rogue', '-data-dir', dataDir, '-bind', '127.0.0.1', '-client', '127.0.0.1', '-retry-join', c.servers[leader].serverAddress, '-config-file', tlsConfig(bad)],
    httpPort,
    serverPort,
    join(bad.dir, 'rogue.log'),
  );
  expect(await eventually(async () => (await fetch(`${rogue!.url}/v1/status/leader`)).status === 200, 15_000)).toBe(true);
  await sleep(6_000);
  const after = (await c.http(leader, 'GET', '/v1/operator/raft/configuration')).json<{ Servers: { Node: string }[] }>();
  expect(after.Servers.map((s) => s.Node).sort()).toEqual(['s0', 's1', 's2']);
  expect(await (await fetch(`${rogue.url}/v1/status/leader`)).json()).toBe('');
  // The cluster still works.
  const w2 = await c.http(follower, 'PUT', '/v1/kv/tls/after', 'still');
  expect([w2.status, w2.body]).toEqual([200, 'true']);
});
