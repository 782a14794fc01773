// limits.rpc_* (issue 33) as a config file sets them, on a real server process: a lower total cap
// and per-client cap, a short handshake timeout and a short idle timeout, each seen from outside.
// Bad values are refused at load, naming the key.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FrameEncoder } from '@registry/raft';
import { buildConfig } from '@registry/server';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { errorsOf } from '../support/config-errors';
import { eventually } from '../support/wait';
import { held, openIdle, refusalCounts, serverPortConnections, type IdleSocket } from './support';

jest.setTimeout(90_000);

let cluster: ClusterHarness | undefined;
let dir: string | undefined;
const sockets: IdleSocket[] = [];

afterAll(async () => {
  for (const s of sockets) s.socket.destroy();
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('bad limits.rpc_* values are refused at load, naming the key', () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-rpc-limits-'));
  const path = join(dir, 'bad.json');
  writeFileSync(path, JSON.stringify({ data_dir: dir, limits: { rpc_max_conns: 0, rpc_max_conns_per_client: -1, rpc_handshake_timeout: 'soon', rpc_idle_timeout: '-1s' } }));
  const errors = errorsOf(() => buildConfig({ configFile: [path] }));
  expect(errors.join('\n')).toMatch(/limits\.rpc_(max_conns|handshake_timeout|idle_timeout|max_conns_per_client)/);
  const good = join(dir, 'good.json');
  writeFileSync(good, JSON.stringify({ data_dir: dir, limits: { rpc_max_conns: 7, rpc_max_conns_per_client: 0, rpc_handshake_timeout: '2s', rpc_idle_timeout: '0s' } }));
  expect(buildConfig({ configFile: [good] }).rpc).toEqual({ maxConns: 7, maxConnsPerClient: 0, handshakeTimeoutMs: 2000, idleTimeoutMs: 0 });
});

test('a server holds at most rpc_max_conns, closes silent ones after rpc_handshake_timeout and idle ones after rpc_idle_timeout', async () => {
  dir ??= mkdtempSync(join(tmpdir(), 'registry-rpc-limits-'));
  const config = join(dir, 'limits.json');
  // The caps are seen first, with a handshake timeout no stalled machine reaches between the two
  // bursts below (CI saw 2 s and then 6 s close some of the first burst before the second arrived,
  // so fewer than 5 were left for the total cap to close). The timeouts are then shortened by a
  // reload, which applies them to the connections already open.
  writeFileSync(config, JSON.stringify({ limits: { rpc_max_conns: 20, rpc_max_conns_per_client: 15, rpc_handshake_timeout: '10m', rpc_idle_timeout: '10m' } }));
  cluster = await ClusterHarness.start({ size: 1, extraArgs: ['-config-file', config] });
  await cluster.waitForLeader(40_000);
  expect(cluster.logs(0)).toMatch(/server port limits: maxConns=20 maxConnsPerClient=15 handshakeTimeoutMs=600000 idleTimeoutMs=600000/);
  const port = cluster.servers[0]!.serverPort;

  // 15 from one address (its cap), then 10 from another: the total cap (20) closes the oldest silent ones.
  const a = await openIdle(port, 30, { localAddress: '127.0.0.2', into: sockets });
  expect(await eventually(() => held(a).length <= 15, 5_000)).toBe(true);
  const b = await openIdle(port, 10, { localAddress: '127.0.0.3', into: sockets });
  expect(await eventually(async () => (await serverPortConnections(cluster!, 0)) === 20, 5_000)).toBe(true);
  expect(held(b).length).toBe(10); // the newest were kept: the oldest silent ones made room
  expect(await eventually(() => held(a).length === 10, 5_000)).toBe(true);
  const refused = await refusalCounts(cluster, 0);
  expect(refused.max_conns_per_client).toBe(15);
  expect(refused.max_conns).toBe(5);
  expect(refused.handshake_timeout ?? 0).toBe(0);

  // Shorter timeouts by reload: nobody sent a frame, so all are closed by the handshake timeout.
  writeFileSync(config, JSON.stringify({ limits: { rpc_max_conns: 20, rpc_max_conns_per_client: 15, rpc_handshake_timeout: '2s', rpc_idle_timeout: '4s' } }));
  const reloads = () => cluster!.logs(0).split('configuration reloaded').length - 1;
  const before = reloads();
  process.kill(cluster.pid(0)!, 'SIGHUP');
  expect(await eventually(() => reloads() > before, 15_000)).toBe(true);
  expect(await eventually(() => held(sockets).length === 0, 12_000)).toBe(true);
  expect((await refusalCounts(cluster, 0)).handshake_timeout).toBe(20);

  // A connection that sends one valid request is a client: kept past the handshake timeout, closed
  // once silent for the idle timeout.
  const client = connect({ host: '127.0.0.1', port });
  let closedAt = 0;
  let answer = Buffer.alloc(0);
  client.on('error', () => undefined);
  client.on('data', (d: Buffer) => (answer = Buffer.concat([answer, d])));
  client.on('close', () => (closedAt = Date.now()));
  await new Promise<void>((resolve) => client.on('connect', () => resolve()));
  const sentAt = Date.now();
  client.write(new FrameEncoder().encode([1, 1, 'no.such.method', null]));
  expect(await eventually(() => answer.length > 0, 5_000)).toBe(true);
  expect(answer.toString('latin1')).toMatch(/unknown rpc method/);
  expect(await eventually(() => closedAt > 0, 20_000)).toBe(true);
  // Past the handshake timeout (2 s): closed by the idle one (4 s).
  expect(closedAt - sentAt).toBeGreaterThanOrEqual(4_000 - 100);
  expect((await refusalCounts(cluster, 0)).idle_timeout).toBeGreaterThanOrEqual(1);
  expect(cluster.running(0)).toBe(true);
});
