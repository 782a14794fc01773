// A distributed lock on three real servers: two clients, each through its own follower, compete for
// one key with sessions while the leader is SIGKILLed. From the recorded history, no two clients ever
// held the lock at the same time, and the lock keeps being acquired after the failover.
//
// A client holds the lock from the moment its acquire is acknowledged `true` until the moment it
// starts releasing (it stops acting as holder then, whatever the release's fate). An acquire whose
// outcome is unknown (error, timeout) is never counted as held; the client releases before trying
// again, so a lock it may have taken without knowing is given back.
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness;
afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEY = '/v1/kv/service/leader-lock';

interface Hold {
  client: number;
  from: number;
  to: number;
}

test('two clients compete for a lock while the leader is killed: never two holders, usable after failover', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  // The survivors elect only once each has caught up (cluster-harness.ts, waitAllCaughtUp).
  await cluster.waitAllCaughtUp();
  const followers = [0, 1, 2].filter((i) => i !== leader);

  // One session per client, on its own server's node, tied to no check (the kill must not end it).
  // A session needs its node in the catalog: the new leader registers the servers' nodes shortly
  // after its election, and until then the answer is a prompt 400 "Missing node registration".
  for (const server of followers) {
    const registered = async () => (await cluster.http(server, 'GET', `/v1/catalog/node/s${server}?consistent`)).body.trim() !== 'null';
    const deadline = Date.now() + 15_000;
    while (!(await registered()) && Date.now() < deadline) await sleep(100);
  }
  const sessions: string[] = [];
  for (const server of followers) {
    const r = await cluster.http(server, 'PUT', '/v1/session/create', { Checks: [], LockDelay: '1s', Name: `client-on-s${server}` }, { timeoutMs: 10_000 });
    expect(r.status).toBe(200);
    sessions.push(r.json<{ ID: string }>().ID);
  }

  const holds: Hold[] = [];
  const errors: string[] = [];
  let stop = false;
  let killedAt = Number.POSITIVE_INFINITY;

  const client = async (c: number) => {
    const server = followers[c];
    const id = sessions[c];
    const call = async (path: string, body: string) => {
      const r = await cluster.http(server, 'PUT', path, body, { timeoutMs: 3_000 });
      if (r.status !== 200) throw new Error(`${r.status} ${r.body}`);
      return r.json<boolean>();
    };
    /** Release until a definite answer (also after the test asked clients to stop). */
    const release = async () => {
      for (let i = 0; i < 100; i++) {
        try {
          await call(`${KEY}?release=${id}`, '');
          return;
        } catch (err) {
          errors.push(`release c${c}: ${(err as Error).message}`);
          await sleep(100);
        }
      }
    };
    while (!stop) {
      let acquired: boolean;
      try {
        acquired = await call(`${KEY}?acquire=${id}`, `client ${c}`);
      } catch (err) {
        errors.push(`acquire c${c}: ${(err as Error).message}`);
        await release();
        continue;
      }
      if (!acquired) {
        await sleep(20 + Math.random() * 30);
        continue;
      }
      const from = Date.now();
      await sleep(50 + Math.random() * 100);
      holds.push({ client: c, from, to: Date.now() });
      await release();
      await sleep(Math.random() * 20);
    }
  };

  const running = [0, 1].map(client);
  await sleep(2_500);
  const beforeKill = holds.length;
  killedAt = Date.now();
  await cluster.kill(leader, 'SIGKILL');
  // Keep competing until both clients hold the lock after the failover (bounded).
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline) {
    const after = holds.filter((h) => h.from > killedAt);
    if (new Set(after.map((h) => h.client)).size === 2 && after.length >= 6) break;
    await sleep(200);
  }
  stop = true;
  await Promise.all(running);

  expect(beforeKill).toBeGreaterThan(2);
  // Never two holders at once.
  const sorted = [...holds].sort((a, b) => a.from - b.from);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1];
    const cur = sorted[i];
    expect(cur.from).toBeGreaterThanOrEqual(prev.to);
  }
  // The lock is usable again after the failover, by both clients.
  const after = holds.filter((h) => h.from > killedAt);
  expect(new Set(after.map((h) => h.client))).toEqual(new Set([0, 1]));
  // The servers agree with the last release: nobody holds the lock.
  const survivor = followers[0];
  const entry = await cluster.http(survivor, 'GET', `${KEY}?consistent`, undefined, { timeoutMs: 10_000 });
  expect(entry.status).toBe(200);
  expect(entry.json<{ Session?: string }[]>()[0].Session).toBeUndefined();
});
