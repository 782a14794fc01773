// A write copy held in a cut link, delivered after its client was told the outcome, must not be
// applied — also when the leader's latest entry took long from its stamp to its apply (CI, with
// the disk loaded: partition.test.ts saw the minority's refused write in the catalog after the
// heal). The leader measures a copy's time on its way by the log's time: the copy carries the
// sender's, the leader compares it with its own. Its own was its latest stamp applied plus the time
// since, which runs behind the leader's stamping clock by that entry's stamp-to-apply time, so a
// held copy looked that much younger than it was.
//
// Here that time is made long on purpose: the leader is cut off from both followers while it
// stamps an entry, and the link back comes only after the minority has answered its client; the
// held copy arrives right after that entry is applied.
import { sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** When the leader's entry is stamped, ms after the minority got its write (its budget is 7 s). */
const STAMP_AT_MS = 6_550;
/** How long the leader stays cut off from both followers: short of its check-quorum step-down (~0.75 s). */
const ALONE_MS = 450;

/**
 * One round; false when the leader did not stay leader through it (the copy then met a follower,
 * which proposes nothing, and the round shows nothing).
 */
async function round(c: ClusterHarness, n: number): Promise<boolean> {
  const leader = await c.waitForLeader(15_000);
  await c.waitAllCaughtUp();
  const minority = (leader + 1) % 3;
  const other = (leader + 2) % 3;
  expect((await c.http(leader, 'PUT', `/v1/kv/before-${n}`, 'b')).body).toBe('true');

  c.partition([minority], [leader, other]);
  const sentAt = Date.now();
  const lonely = c.http(minority, 'PUT', `/v1/kv/held-${n}`, 'lost', { timeoutMs: 20_000 }).catch(() => null);

  // The leader alone: its next entry is stamped now and cannot commit until the link back.
  await sleep(STAMP_AT_MS - (Date.now() - sentAt));
  c.partition([minority], [leader], [other]);
  const slow = c.http(leader, 'PUT', `/v1/kv/slow-${n}`, 'x', { timeoutMs: 20_000 }).catch(() => null);
  await sleep(ALONE_MS);
  // The entry commits and is applied, stamped ALONE_MS before.
  c.partition([minority], [leader, other]);
  const committed = await slow;

  // The minority's budget runs out: its client is told the write failed (or that its outcome is unknown).
  const answer = await lonely;
  expect(answer === null || answer.status >= 500).toBe(true);
  // Right after, the held copy reaches the leader.
  c.heal();

  if (committed?.status !== 200 || (await c.waitForLeader(15_000)) !== leader) return false;
  await sleep(3_000);
  const held = await c.http(leader, 'GET', `/v1/kv/held-${n}?consistent`, undefined, { timeoutMs: 10_000 });
  expect({ key: `held-${n}`, status: held.status }).toEqual({ key: `held-${n}`, status: 404 });
  return true;
}

test('a copy held while the leader stamped an entry it applied only later is not applied when the link heals', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3, proxied: true }));
  let shown = 0;
  for (let n = 0; n < 3 && shown === 0; n++) if (await round(c, n)) shown++;
  expect(shown).toBe(1);
});
