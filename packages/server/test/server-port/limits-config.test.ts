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
  writeFileSync(config, JSON.stringify({ limits: { rpc_max_conns: 20, rpc_max_conns_per_client: 15, rpc_handshake_timeout: '6s', rpc_idle_timeout: '8s' } }));
  cluster = await ClusterHarness.start({ size: 1, extraArgs: ['-config-file', config] });
  await cluster.waitForLeader(40_000);
  expect(cluster.logs(0)).toMatch(/server port limits: maxConns=20 maxConnsPerClient=15 handshakeTimeoutMs=6000 idleTimeoutMs=8000/);
  const port = cluster.servers[0]!.serverPort;

  // 15 from one address (its cap), then 10 from another: the total cap (20) closes the oldest silent ones.
  // (The handshake timeout is long enough that none of the first 15 is closed by it before the other
  // 10 arrive on a loaded machine: with 2 s, a CI run saw it close some first, and only 2 made room.)
  const a = await openIdle(port, 30, { localAddress: '127.0.0.2', into: sockets });
  expect(await eventually(() => held(a).length <= 15, 5_000)).toBe(true);
  const b = await openIdle(port, 10, { localAddress: '127.0.0.3', into: sockets });
  expect(await eventually(async () => (await serverPortConnections(cluster!, 0)) === 20, 5_000)).toBe(true);
  expect(held(b).length).toBe(10); // the newest were kept: the oldest silent ones made room
  const refused = await refusalCounts(cluster, 0);
  expect(refused.max_conns_per_client).toBeGreaterThanOrEqual(15);
  expect(refused.max_conns).toBeGreaterThanOrEqual(5);
  // Nobody sent a frame: all closed by the handshake timeout.
  expect(await eventually(() => held(sockets).length === 0, 12_000)).toBe(true);

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
  // Past the handshake timeout (6 s): closed by the idle one (8 s).
  expect(closedAt - sentAt).toBeGreaterThanOrEqual(8_000 - 100);
  expect((await refusalCounts(cluster, 0)).idle_timeout).toBeGreaterThanOrEqual(1);
  expect(cluster.running(0)).toBe(true);
});
