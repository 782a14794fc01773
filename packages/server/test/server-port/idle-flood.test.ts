// Issue 33: a server under `ulimit -n 1024` with 1,100 connections to its server port that send
// nothing. Before, they took every descriptor: the write-ahead log could not open a file and
// `PUT /v1/kv/y` got a reset or no answer. Now the port holds at most rpc_max_conns_per_client
// (Consul's 100) from one address — each new connection closes the oldest that has not sent a
// frame — the write and a read are answered, the refusals are counted and logged, and what is left
// is closed by the handshake timeout.
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { eventually } from '../support/wait';
import { held, nofileOf, openIdle, refusalCounts, type IdleSocket } from './support';

jest.setTimeout(90_000);

const FLOOD = 1_100;
const PER_CLIENT = 100; // the default limits.rpc_max_conns_per_client
const HANDSHAKE_S = 5; // the default limits.rpc_handshake_timeout

let cluster: ClusterHarness | undefined;
const sockets: IdleSocket[] = [];

afterAll(async () => {
  for (const s of sockets) s.socket.destroy();
  await cluster?.stop();
});

test('1,100 idle connections to the server port under ulimit -n 1024: writes and reads still answered', async () => {
  cluster = await ClusterHarness.start({ size: 1, nofile: { 0: 1024 } });
  await cluster.waitForLeader(20_000);
  expect(nofileOf(cluster.pid(0)!)).toBe(1024);
  expect((await cluster.http(0, 'PUT', '/v1/kv/x', 'before')).body).toBe('true');

  const floodStarted = Date.now();
  await openIdle(cluster.servers[0]!.serverPort, FLOOD, { into: sockets });

  const put = await cluster.http(0, 'PUT', '/v1/kv/y', 'during', { timeoutMs: 10_000 }).catch((err: Error) => ({ status: 0, body: err.message }));
  expect(put).toMatchObject({ status: 200, body: 'true' });
  const get = await cluster.http(0, 'GET', '/v1/kv/y?raw', undefined, { timeoutMs: 10_000 }).catch((err: Error) => ({ status: 0, body: err.message }));
  expect(get).toMatchObject({ status: 200, body: 'during' });
  // The server has dealt with every connection: at most the per-client cap is left open.
  expect(await eventually(() => held(sockets).length <= PER_CLIENT, 5_000)).toBe(true);
  // Still within the handshake timeout: the newest connections are the ones held, the rest were closed.
  expect(Date.now() - floodStarted).toBeLessThan(HANDSHAKE_S * 1000);
  expect(held(sockets).length).toBeGreaterThan(0);
  expect(sockets.filter((s) => s.closed).length).toBeGreaterThanOrEqual(FLOOD - PER_CLIENT);

  // Those that never sent a frame are closed once the handshake timeout has passed.
  expect(await eventually(() => held(sockets).length === 0, (HANDSHAKE_S + 5) * 1000)).toBe(true);
  const lastClose = Math.max(...sockets.map((s) => s.closedAt));
  expect(lastClose - floodStarted).toBeGreaterThanOrEqual(HANDSHAKE_S * 1000 - 200);

  const refused = await refusalCounts(cluster, 0);
  expect(refused.max_conns_per_client).toBeGreaterThanOrEqual(FLOOD - PER_CLIENT);
  expect(refused.handshake_timeout).toBeGreaterThan(0);
  expect(cluster.logs(0)).toMatch(/server port: refusing connections or frames/);
  expect((await cluster.http(0, 'PUT', '/v1/kv/z', 'after')).body).toBe('true');
  expect(cluster.running(0)).toBe(true);
});
