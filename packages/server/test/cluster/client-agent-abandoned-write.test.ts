// Issue 31, finding 4: through a client agent, a write that a paused server holds unread. The
// client agent's server is paused (SIGSTOP) and the leader killed; `PUT k=old` through the client
// agent must be answered "outcome unknown" (it was `500 no registry server reachable`, though the
// paused server held the write); a newer write is acknowledged by the next leader; when the paused
// server resumes, the write it held has no budget left and is not forwarded (it was, with a fresh
// 7 s budget, and `old` landed over `new` 40 s later).
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';
import { ClientAgents } from './support/client-agents';

jest.setTimeout(240_000);

let cluster: ClusterHarness;
let clients: ClientAgents | undefined;
let paused: number | undefined;
afterEach(async () => {
  const pid = paused === undefined ? undefined : cluster?.pid(paused);
  if (pid !== undefined) process.kill(pid, 'SIGCONT');
  await clients?.stop();
  await cluster?.stop();
});

test('a write held by a paused server is answered "outcome unknown" and is not applied over a newer write when that server resumes', async () => {
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-dns-port', '-1'] });
  const leader = await cluster.waitForLeader(30_000);
  // The survivors elect only once each has caught up (cluster-harness.ts, waitAllCaughtUp).
  await cluster.waitAllCaughtUp();
  const held = (leader + 1) % 3;
  // The client agent knows only the server about to be paused, so its write goes there first.
  clients = new ClientAgents(cluster.dir, [cluster.servers[held].serverAddress]);
  await clients.start(1);
  const joined = await eventually(async () => (await clients!.http(0, 'PUT', '/v1/kv/k', 'first')).body === 'true', 30_000, 250);
  if (!joined) throw new Error(`the client agent did not join\n${clients.diagnostics()}`);

  const pid = cluster.pid(held);
  if (pid === undefined) throw new Error(`s${held} is not running`);
  process.kill(pid, 'SIGSTOP');
  paused = held;
  await cluster.kill(leader, 'SIGKILL');

  const answer = await clients.http(0, 'PUT', '/v1/kv/k', 'old', 60_000);
  expect(answer.status).toBe(500);
  expect(answer.body).toMatch(/^outcome unknown, the write may have been applied: /);

  // The killed leader comes back; with the third server it elects a leader, which takes a newer write.
  await cluster.restart(leader);
  const next = await cluster.waitForLeader(60_000);
  expect(next).not.toBe(held);
  const fresh = await cluster.http(next, 'PUT', '/v1/kv/k', 'new', { timeoutMs: 15_000 });
  expect(`${fresh.status} ${fresh.body}`).toBe('200 true');

  // The paused server resumes with the client's write unread in its socket; a copy it forwarded
  // would be applied within a second or two of this.
  process.kill(pid, 'SIGCONT');
  paused = undefined;
  await sleep(10_000);
  // Every server, the resumed one included, holds the newer write.
  for (const i of [0, 1, 2]) {
    await eventually(async () => (await cluster.http(i, 'GET', '/v1/kv/k?stale&raw')).body === 'new', 20_000, 200);
    expect((await cluster.http(i, 'GET', '/v1/kv/k?stale&raw', undefined, { timeoutMs: 10_000 })).body).toBe('new');
  }
});
