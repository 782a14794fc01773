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
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { TcpTransport } from '@registry/raft';
import { eventually } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(180_000);

const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find((p) => existsSync(p));

/** A process whose wall clock is `offset` (libfaketime's syntax: `+10m`, `-1h`) off, its monotonic clock not. */
function skewed(offset: string): Record<string, string> {
  return { LD_PRELOAD: LIBFAKETIME ?? '', FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

/** Why the clocks cannot be skewed here, or undefined when Node under libfaketime sees a skewed Date.now() and a true monotonic clock. */
function faketimeMissing(): string | undefined {
  if (!LIBFAKETIME) return 'libfaketime is not installed (Debian package libfaketime)';
  const script = 'const w=Date.now(),m=performance.now(),h=process.hrtime.bigint();setTimeout(()=>console.log(JSON.stringify({wall:w,wallRan:Date.now()-w,mono:performance.now()-m,hr:Number(process.hrtime.bigint()-h)/1e6})),300)';
  const before = Date.now();
  const probe = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...skewed('+10m') }, encoding: 'utf8', timeout: 20_000 });
  try {
    const seen = JSON.parse(probe.stdout) as { wall: number; wallRan: number; mono: number; hr: number };
    const skew = seen.wall - before;
    if (!(skew > 9 * 60_000 && skew < 11 * 60_000)) return `Node under libfaketime did not see a +10 min wall clock (off by ${skew} ms)`;
    if (!(seen.mono >= 250 && seen.mono < 5_000 && seen.hr >= 250 && seen.hr < 5_000)) return `libfaketime moved Node's monotonic clock (${seen.mono} ms, ${seen.hr} ms for a 300 ms timer)`;
    return undefined;
  } catch {
    return `libfaketime could not be loaded into Node: ${probe.stderr || probe.error?.message || probe.stdout}`;
  }
}

const missing = faketimeMissing();
if (missing) console.log(`SKIPPED: ${missing}`);
const withSkew = missing ? test.skip : test;

let cluster: ClusterHarness;
let transport: TcpTransport | undefined;
afterEach(async () => {
  await transport?.close();
  await cluster?.stop();
});

/** The raft id of server i (for a leadership transfer). */
async function raftId(i: number): Promise<string> {
  const config = (await cluster.http(i, 'GET', '/v1/operator/raft/configuration')).json<{ Servers: { ID: string; Node: string }[] }>();
  const id = config.Servers.find((s) => s.Node === `s${i}`)?.ID;
  if (!id) throw new Error(`s${i} is not in the Raft configuration`);
  return id;
}

/** Leadership moved to server i, and i has taken up its duties (its first own entries). */
async function makeLeader(i: number): Promise<void> {
  const id = await raftId(i);
  const moved = await eventually(async () => {
    if ((await cluster.leader()) !== i) await cluster.http(i, 'POST', `/v1/operator/raft/transfer-leader?id=${id}`, undefined, { timeoutMs: 10_000 });
    return (await cluster.leader()) === i;
  }, 60_000, 500);
  if (!moved) throw new Error(`s${i} did not become leader\n${cluster.diagnostics()}`);
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
  cluster = await ClusterHarness.start({ size: 3, envFor: (i) => (i === 0 ? skewed('+10m') : i === 1 ? skewed('-1h') : {}) });
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
