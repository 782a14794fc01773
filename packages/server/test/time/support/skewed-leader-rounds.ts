// Rounds of issue #36 finding 1 as it was found: creates (`PUT ?cas=0`) through every server, the
// leader's among them, are in flight while leadership moves to a server whose wall clock runs ten
// minutes ahead. Some of them were proposed by the old leader and not answered (its leadership
// ended, or it was killed), so the server they entered re-sends them, under the same request id, to
// the new leader. A dedup window aged by the leader's wall clock was emptied by the skewed leader's
// first entry, and those re-sends applied a second time: the copy found the key already created and
// answered `false` while the key held that very write.
import type { ClusterHarness } from '../../cluster/support/cluster-harness';
import { eventually, sleep } from '../../support/wait';

/**
 * How leadership reaches the skewed server in a round:
 * - `kill`: whoever else leads is killed, until the skewed server wins an election;
 * - `cut`: first, for `cutMs`, the leader's appends reach the skewed server but not the third,
 *   and no ack reaches the leader: the writes the third server forwards are in the skewed
 *   server's log, uncommitted and unanswered, as a leader's last writes are when it dies — only
 *   many of them at once. Then the leader is killed; the third server, behind, cannot win the
 *   election, and the skewed one commits those writes under its own term;
 * - `transfer`: /v1/operator/raft/transfer-leader. It leaves no write in doubt (the leader takes
 *   no proposal while it hands over and the new one has its whole log), so it cannot show a
 *   duplicate; it is here for completeness.
 */
export type Handover = 'transfer' | 'kill' | 'cut';

/** What one round saw. */
export interface RoundResult {
  round: number;
  handover: Handover;
  /** Leaders killed before the skewed server won an election. */
  kills: number;
  /** Writes forwarded to a leader that gave no answer (each is re-sent): registry_rpc_forward_errors_total{kind="write"} over the round. */
  unanswered: number;
  /** Writes sent, and how they were answered ("200 true", "200 false", "500 …", "error: …"). */
  sent: number;
  answers: Record<string, number>;
  /** Creates answered `false` although the key holds that very write: applied twice. */
  duplicates: string[];
  /** Plain PUTs whose key was modified after its creation: applied twice. */
  reapplied: string[];
  /** Writes answered `true` whose key does not hold them. */
  lost: string[];
  /** ms from the start of the load until the skewed server led, and the round's whole length. */
  ledAfterMs: number;
  tookMs: number;
}

export interface RoundOptions {
  /** The server whose clock runs ahead. */
  skewed: number;
  /** Concurrent writers (each sends one write at a time, through server `writer % size`). */
  writers: number;
  /** How long writes run before the handover starts, and after the skewed server leads. */
  beforeMs: number;
  afterMs: number;
  /** How long the leader's messages to the third server are dropped before it is killed (`cut`). */
  cutMs: number;
  /** Kills of other leaders before the round gives up on an election and transfers leadership. */
  maxKills: number;
}

const DEFAULTS: RoundOptions = { skewed: 0, writers: 24, beforeMs: 400, afterMs: 1_500, cutMs: 1_000, maxKills: 6 };

interface Sent {
  key: string;
  value: string;
  kind: 'create' | 'put';
  answer?: string;
}

/** The Raft id of server i (for a leadership transfer), as server `via` knows the configuration. */
async function raftId(cluster: ClusterHarness, i: number, via: number): Promise<string> {
  const config = (await cluster.http(via, 'GET', '/v1/operator/raft/configuration', undefined, { timeoutMs: 5_000 })).json<{ Servers: { ID: string; Node: string }[] }>();
  const id = config.Servers.find((s) => s.Node === `s${i}`)?.ID;
  if (!id) throw new Error(`s${i} is not in the Raft configuration`);
  return id;
}

/** The leader, once a majority names a running one other than `not` (a killed leader is named a while longer). */
async function runningLeader(cluster: ClusterHarness, not?: number): Promise<number> {
  let leader: number | undefined;
  const elected = await eventually(async () => {
    leader = await cluster.leader();
    return leader !== undefined && leader !== not && cluster.running(leader);
  }, 30_000, 100);
  if (!elected) throw new Error(`no running leader${not === undefined ? '' : ` but s${not}`} within 30 s\n${cluster.diagnostics()}`);
  return leader!;
}

/** registry_rpc_forward_errors_total{kind="write"} of every running server (a restarted one counts from 0). */
async function forwardErrors(cluster: ClusterHarness): Promise<number[]> {
  return Promise.all(
    cluster.servers.map(async (s) => {
      if (!cluster.running(s.index)) return 0;
      const text = await cluster.http(s.index, 'GET', '/v1/agent/metrics?format=prometheus', undefined, { timeoutMs: 5_000 }).then((r) => r.body, () => '');
      return Number(/^registry_rpc_forward_errors_total\{kind="write"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    }),
  );
}

/** Server i names a leader and has applied what the leader had when asked (after a restart). */
async function caughtUp(cluster: ClusterHarness, i: number): Promise<void> {
  const leader = await runningLeader(cluster);
  if (leader === i) return;
  const index = Number((await cluster.http(leader, 'GET', '/v1/kv/?keys', undefined, { timeoutMs: 5_000 })).headers['x-registry-index']);
  const back = await eventually(async () => {
    const r = await cluster.http(i, 'GET', '/v1/kv/?keys&stale', undefined, { timeoutMs: 2_000 }).catch(() => undefined);
    return r !== undefined && r.headers['x-registry-knownleader'] === 'true' && Number(r.headers['x-registry-index']) >= index;
  }, 60_000, 200);
  if (!back) throw new Error(`s${i} did not catch up with the leader s${leader}\n${cluster.diagnostics()}`);
}

/** Leadership moved to server i (by transfers from whoever leads), within `timeoutMs`. */
export async function makeLeader(cluster: ClusterHarness, i: number, timeoutMs = 60_000): Promise<void> {
  const id = await raftId(cluster, i, i);
  const moved = await eventually(
    async () => {
      if ((await cluster.leader()) === i) return true;
      // Any server forwards the call to the leader; the answer may be a timeout while the move settles.
      await cluster.http(i, 'POST', `/v1/operator/raft/transfer-leader?id=${id}`, undefined, { timeoutMs: 10_000 }).catch(() => undefined);
      return (await cluster.leader()) === i;
    },
    timeoutMs,
    300,
  );
  if (!moved) throw new Error(`s${i} did not become leader\n${cluster.diagnostics()}`);
}

/**
 * One round: someone other than the skewed server leads; writers start; leadership goes to the
 * skewed server (a transfer, or kills of whoever else leads until it wins); writes go on while it
 * leads; then every write's answer is checked against what the store holds.
 */
export async function skewedLeaderRound(cluster: ClusterHarness, round: number, handover: Handover, options: Partial<RoundOptions> = {}): Promise<RoundResult> {
  const o = { ...DEFAULTS, ...options };
  const size = cluster.servers.length;
  const others = cluster.servers.map((s) => s.index).filter((i) => i !== o.skewed);
  const started = performance.now();
  // Every server is in (one killed last round was restarted at once) and someone else leads.
  for (const s of cluster.servers) await caughtUp(cluster, s.index);
  if ((await runningLeader(cluster)) === o.skewed) await makeLeader(cluster, others[round % others.length]);

  const errorsBefore = await forwardErrors(cluster);
  const prefix = `round${round}/`;
  const sent: Sent[] = [];
  let stop = false;
  const writer = async (w: number): Promise<void> => {
    for (let k = 0; !stop; k++) {
      const kind = k % 3 === 2 ? 'put' : 'create';
      const s: Sent = { key: `${prefix}w${w}/${k}`, value: `r${round}.w${w}.${k}.${process.pid}`, kind };
      // Each writer keeps to one server: writers cycling through the servers would all end up
      // waiting on the one whose answers are late, and the new leader would see no fresh write.
      const server = w % size;
      if (!cluster.running(server)) {
        await sleep(50);
        continue;
      }
      try {
        const r = await cluster.http(server, 'PUT', `/v1/kv/${s.key}${kind === 'create' ? '?cas=0' : ''}`, s.value, { timeoutMs: 15_000 });
        s.answer = `${r.status} ${r.status === 200 ? r.body.trim() : r.body.trim().slice(0, 60)}`;
      } catch (err) {
        const message = (err as Error).message;
        // A server down or restarting: the write never reached it, and is not counted.
        if (/ECONNREFUSED/.test(message)) {
          await sleep(50);
          continue;
        }
        s.answer = `error: ${message.slice(0, 60)}`;
      }
      sent.push(s);
    }
  };
  const writers = Array.from({ length: o.writers }, (_, w) => writer(w));
  let kills = 0;
  let ledAfterMs = -1;
  try {
    await sleep(o.beforeMs);
    const loadFrom = performance.now();
    if (handover === 'transfer') {
      await makeLeader(cluster, o.skewed);
    } else if (handover === 'cut') {
      const leader = await runningLeader(cluster);
      const third = others.find((i) => i !== leader)!;
      // Each server sends its Raft messages and its requests on the connection it dialled. The
      // leader's appends no longer reach the third server, and the skewed one's acks no longer
      // reach the leader: the writes the third server forwards are appended and replicated to
      // the skewed server, but not committed, and their answers wait.
      cluster.link(leader, third).dropOneDirection('out');
      cluster.link(o.skewed, leader).dropOneDirection('out');
      await sleep(o.cutMs);
      await cluster.kill(leader, 'SIGKILL');
      // What the cut links held is lost with the leader, not delivered late.
      for (const i of others) if (i !== leader) cluster.link(leader, i).reset();
      for (const i of cluster.servers.map((x) => x.index)) if (i !== leader) cluster.link(i, leader).reset();
      cluster.link(leader, o.skewed).reset();
      cluster.heal();
      kills++;
      await runningLeader(cluster, leader);
      await cluster.restart(leader);
    } else {
      // Kill whoever else leads until the skewed server wins an election: each kill leaves the
      // writes forwarded to the killed leader unanswered, and the servers they entered re-send them
      // to the next leader. The killed server is restarted at once, and is back in before the next
      // kill, so that two of three always run.
      for (let n = 0, leader = await runningLeader(cluster); n < o.maxKills && leader !== o.skewed; n++) {
        for (const s of cluster.servers) await caughtUp(cluster, s.index);
        await cluster.kill(leader, 'SIGKILL');
        kills++;
        const killed = leader;
        leader = await runningLeader(cluster, killed);
        await cluster.restart(killed);
      }
      // Unlucky elections: the round still ends with it leading, by a transfer.
      if ((await runningLeader(cluster)) !== o.skewed) await makeLeader(cluster, o.skewed);
    }
    ledAfterMs = Math.round(performance.now() - loadFrom);
    await sleep(o.afterMs);
  } finally {
    stop = true;
    await Promise.all(writers);
  }

  const errorsAfter = await forwardErrors(cluster);
  const unanswered = errorsAfter.reduce((sum, n, i) => sum + (n >= errorsBefore[i] ? n - errorsBefore[i] : n), 0);

  // What the store holds, read from the leader (every answered write is committed by now).
  const held = new Map<string, { value: string; createIndex: number; modifyIndex: number }>();
  const r = await cluster.http(o.skewed, 'GET', `/v1/kv/${prefix}?recurse`, undefined, { timeoutMs: 15_000 });
  if (r.status !== 200 && r.status !== 404) throw new Error(`reading round ${round}'s keys: ${r.status} ${r.body}`);
  if (r.status === 200) {
    for (const e of r.json<{ Key: string; Value: string | null; CreateIndex: number; ModifyIndex: number }[]>()) {
      held.set(e.Key, { value: Buffer.from(e.Value ?? '', 'base64').toString(), createIndex: e.CreateIndex, modifyIndex: e.ModifyIndex });
    }
  }
  const answers: Record<string, number> = {};
  const result: RoundResult = { round, handover, kills, unanswered, sent: sent.length, answers, duplicates: [], reapplied: [], lost: [], ledAfterMs, tookMs: 0 };
  for (const s of sent) {
    const answer = s.answer ?? 'unanswered';
    answers[answer] = (answers[answer] ?? 0) + 1;
    const h = held.get(s.key);
    if (s.kind === 'create' && answer === '200 false' && h?.value === s.value) result.duplicates.push(s.key);
    if (s.kind === 'put' && h !== undefined && h.modifyIndex !== h.createIndex) result.reapplied.push(`${s.key} (created ${h.createIndex}, modified ${h.modifyIndex})`);
    if (answer === '200 true' && h?.value !== s.value) result.lost.push(s.key);
  }
  result.tookMs = Math.round(performance.now() - started);
  return result;
}
