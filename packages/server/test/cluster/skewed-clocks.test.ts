// Issue 36, findings 1 and 2, on three real servers whose wall clocks disagree (Debian's
// libfaketime preloaded, the monotonic clock left alone): s0 runs 10 minutes ahead, s1 an hour
// behind, s2 on time.
//  1. The dedup window: creates (`?cas=0`) committed under another leader and re-sent, with the
//     same request id, after s0 became leader are answered from the window — not applied again
//     (stamped with the leader's Date.now(), s0's first entry aged the whole window out, and the
//     copy answered `false` while the key held that very write).
//  2. The write budget: every write through a follower succeeds whichever of them leads (a
//     deadline fixed on the entering server's clock and checked on the leader's refused them all
//     with `request expired before it reached the leader`).
// Skipped, saying why, where libfaketime cannot be loaded into Node.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TcpTransport } from '@registry/raft';
import { FakeClock, libfaketime } from '../support/fake-clock';
import { makeLeader as transferTo } from '../time/support/skewed-leader-rounds';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(180_000);

const lib = libfaketime();
if ('missing' in lib) console.log(`SKIPPED: ${lib.missing}`);
const withSkew = 'path' in lib ? test : test.skip;

let clockDir: string | undefined;
/** A process whose wall clock is `offset` (libfaketime's syntax: `+10m`, `-1h`) off, its monotonic clock not. */
function skewed(name: string, offset: string): Record<string, string> {
  clockDir ??= mkdtempSync(join(tmpdir(), 'registry-clocks-'));
  return new FakeClock((lib as { path: string }).path, join(clockDir, name), offset).env;
}

let cluster: ClusterHarness;
let transport: TcpTransport | undefined;
afterEach(async () => {
  await transport?.close();
  await cluster?.stop();
  if (clockDir) rmSync(clockDir, { recursive: true, force: true });
  clockDir = undefined;
});

/** Leadership moved to server i, and i has taken up its duties (its first own entries). */
async function makeLeader(i: number): Promise<void> {
  await transferTo(cluster, i);
  // A write it proposes itself: its stamp is the one that aged the window out.
  expect((await cluster.http(i, 'PUT', `/v1/kv/led-by/s${i}`, 'x', { timeoutMs: 10_000 })).body).toBe('true');
}

/**
 * A `?cas=0` create as a client agent sends it (cluster/client-gateway.ts): with a request id of
 * our choosing, so that the same write can be sent again as a re-send after a lost answer is.
 */
async function create(server: number, key: string, requestId: string): Promise<{ ok: boolean; value?: unknown; message?: string }> {
  const op = { Verb: 'cas', Key: key, Value: new Uint8Array(Buffer.from(requestId)), Flags: 0, Index: 0 };
  return (await transport!.call(cluster.servers[server].serverAddress, 'client.apply', { cmd: { type: 'kv.apply', op }, token: undefined, internal: false, requestId }, 20_000)) as {
    ok: boolean;
    value?: unknown;
    message?: string;
  };
}

withSkew('a leader 10 minutes ahead answers re-sent creates from the window, and writes through followers 1 h behind or on time are not refused as expired', async () => {
  cluster = await ClusterHarness.start({ size: 3, envFor: (i) => (i === 0 ? skewed('s0', '+10m') : i === 1 ? skewed('s1', '-1h') : {}) });
  let leader = await cluster.waitForLeader(60_000);
  // The servers really run on those clocks (Node's HTTP Date header is its wall clock).
  const dateOf = async (i: number) => Date.parse(String((await cluster.http(i, 'GET', '/v1/status/leader')).headers.date));
  expect((await dateOf(0)) - Date.now()).toBeGreaterThan(9 * 60_000);
  expect(Date.now() - (await dateOf(1))).toBeGreaterThan(59 * 60_000);

  // First copies, committed under a leader other than s0 (its stamps are its own clock's).
  if (leader === 0) {
    await makeLeader(2);
    leader = 2;
  }
  transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
  const ids = Array.from({ length: 10 }, (_, n) => `skew${process.pid}.${n}`);
  for (const [n, id] of ids.entries()) {
    const first = await create(n % 3, `created/${n}`, id);
    expect(first).toEqual({ ok: true, value: true });
  }

  // s0 (+10 min) leads and proposes; then every create is sent again, half of them to the leader
  // itself, half through the followers (s1 −1 h, s2 on time).
  await makeLeader(0);
  const again = await Promise.all(ids.map((id, n) => create(n % 2 === 0 ? 0 : 1 + ((n >> 1) % 2), `created/${n}`, id)));
  expect(again.map((a) => (a.ok ? a.value : a.message))).toEqual(ids.map(() => true));
  // Each key holds its create, applied once.
  for (const n of ids.keys()) {
    const [entry] = (await cluster.http(0, 'GET', `/v1/kv/created/${n}`)).json<{ CreateIndex: number; ModifyIndex: number }[]>();
    expect(entry.ModifyIndex).toBe(entry.CreateIndex);
  }

  // Ordinary writes through each follower while s0 (+10 min) leads, then while s1 (−1 h) leads.
  for (const i of [1, 2]) {
    const r = await cluster.http(i, 'PUT', `/v1/kv/through/s${i}/to/s0?cas=0`, 'v', { timeoutMs: 10_000 });
    expect(`${r.status} ${r.body}`).toBe('200 true');
  }
  await makeLeader(1);
  for (const i of [0, 2]) {
    const r = await cluster.http(i, 'PUT', `/v1/kv/through/s${i}/to/s1?cas=0`, 'v', { timeoutMs: 10_000 });
    expect(`${r.status} ${r.body}`).toBe('200 true');
  }
});
