// A leader that steps down says how long ago each follower last answered: the line that tells a
// lost quorum (followers silent) from a phantom voter (one never heard at all) in a CI log.
import { Cluster, waitFor } from './cluster-harness';

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
});

test('a leader that loses its followers logs when it last heard each of them', async () => {
  const lines: Array<{ o: Record<string, unknown>; msg?: string }> = [];
  const logger = { info: (o: object, msg?: string) => lines.push({ o: o as Record<string, unknown>, msg }), warn: () => undefined, debug: () => undefined };
  cluster = await Cluster.start(3, { tickMs: 20, logger });
  await cluster.leader();
  // Answers come in with every heartbeat; then both followers of the leader of that moment go (on a
  // loaded machine an earlier leader may have stepped down already: only the lines after count).
  await new Promise((r) => setTimeout(r, 300));
  const leader = await cluster.leader();
  const followers = cluster.members.filter((m) => m !== leader);
  const from = lines.length;
  for (const f of followers) await cluster.stop(f);
  const stepDown = () => lines.slice(from).find((l) => l.msg === 'raft: no longer leader');
  await waitFor(() => stepDown() !== undefined, 15_000, 'the step-down line');
  const said = String(stepDown()!.o.followersLastHeard);
  for (const f of followers) expect(said).toMatch(new RegExp(`${f.address} \\d+ ms ago`));
  expect(said).not.toMatch(/never/);
}, 30_000);
