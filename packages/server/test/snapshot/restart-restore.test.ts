// Issue #34: a server restarted on a large state restores its stored Raft snapshot a piece at a
// time, into the tables, holding no second copy of the state: once restored, its anonymous memory
// (RssAnon; file-backed pages — LevelDB's mapped tables, the binary — are the page cache's) is
// within 1.1× (the bound) of what the same server held, above a fresh server, after getting the state by
// replication; and it says what it is doing meanwhile (progress lines at info). Before, the snapshot
// was read whole (every piece, then joined) and every value copied out of it, and the memory that
// took stayed with the process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/wait';
import { startAgentProc, type AgentProc } from '../lifecycle/agent-process';

jest.setTimeout(240_000);

const VALUE = 256 * 1024;
const COUNT = 320; // 80 MiB of values
const STATE = VALUE * COUNT;

let dir: string;
let agent: AgentProc | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-restart-restore-'));
});
afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const anonMiB = (pid: number) => Number(/^RssAnon:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Starts the server and samples RssAnon until `ready` holds; the highest sample, in MiB. */
async function startSampled(dataDir: string, config: string, log: string, ready: (a: AgentProc) => Promise<boolean>): Promise<{ agent: AgentProc; peak: number }> {
  const a = await startAgentProc(['-server', '-bootstrap-expect', '1', '-node', 'big', '-data-dir', dataDir, '-config-file', config], log);
  let peak = 0;
  const sample = setInterval(() => {
    try {
      peak = Math.max(peak, anonMiB(a.child.pid!));
    } catch {
      // exited
    }
  }, 20);
  try {
    expect(await eventually(() => ready(a), 180_000, 50)).toBe(true);
  } finally {
    clearInterval(sample);
  }
  peak = Math.max(peak, anonMiB(a.child.pid!));
  return { agent: a, peak };
}

test('a restart restores the stored snapshot piece by piece: no second copy of the state, progress logged', async () => {
  const config = join(dir, 'agent.json');
  // Snapshots soon and a short log after them: the restart restores from the snapshot, not the log.
  writeFileSync(config, JSON.stringify({ raft: { snapshot_threshold: 16, snapshot_interval_ms: 1000, trailing_logs: 8 } }));
  const leader = async (a: AgentProc) => (await (await fetch(`${a.url}/v1/status/leader`)).json()) !== '';

  // A fresh server's anonymous memory, for scale.
  const fresh = await startSampled(join(dir, 'fresh'), config, join(dir, 'fresh.log'), leader);
  const base = anonMiB(fresh.agent.child.pid!);
  await fresh.agent.stop();

  const dataDir = join(dir, 'data');
  const first = await startSampled(dataDir, config, join(dir, 'first.log'), leader);
  agent = first.agent;
  const value = Buffer.alloc(VALUE);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < COUNT) {
        const i = next++;
        value.writeUInt32BE(i, 0);
        const r = await fetch(`${agent!.url}/v1/kv/big/${String(i).padStart(4, '0')}`, { method: 'PUT', body: value });
        expect(r.status).toBe(200);
      }
    }),
  );
  // A snapshot that holds (nearly) all of it.
  const lastIndex = Number((await fetch(`${agent.url}/v1/kv/big/?keys`)).headers.get('x-registry-index'));
  const snapshotAt = () => Math.max(0, ...[...agent!.log().matchAll(/raft: took snapshot.*?index[=":]+(\d+)/g)].map((m) => Number(m[1])));
  expect(lastIndex).toBeGreaterThan(COUNT);
  const before = anonMiB(agent.child.pid!);
  // (Taken once 16 entries were applied since the last: the last ≤ 15 writes stay in the log.)
  if (!(await eventually(async () => snapshotAt() >= lastIndex - 16, 60_000, 200))) throw new Error(`no snapshot near index ${lastIndex}: last at ${snapshotAt()}\n${agent.log().slice(-2000)}`);
  await agent.stop();

  const last = `/v1/kv/big/${String(COUNT - 1).padStart(4, '0')}?raw`;
  const restarted = await startSampled(dataDir, config, join(dir, 'restart.log'), async (a) => (await fetch(`${a.url}${last}`)).status === 200);
  agent = restarted.agent;
  const body = Buffer.from(await (await fetch(`${agent.url}${last}`)).arrayBuffer());
  expect(body.length).toBe(VALUE);
  expect(body.readUInt32BE(0)).toBe(COUNT - 1);
  // Values on both sides of the restore's arena seams (32 MiB: every 128th value) read back whole.
  for (let i = 0; i < COUNT; i += 7) {
    const v = Buffer.from(await (await fetch(`${agent.url}/v1/kv/big/${String(i).padStart(4, '0')}?raw`)).arrayBuffer());
    expect([v.length, v.readUInt32BE(0), v.subarray(4).every((b) => b === 0)]).toEqual([VALUE, i, true]);
  }

  // Settled: what the restarted server keeps, against what the server that got the state by
  // replication held just before it stopped.
  await new Promise((r) => setTimeout(r, 3_000));
  const after = anonMiB(agent.child.pid!);
  const figures = { stateMiB: STATE / (1 << 20), freshMiB: Math.round(base), beforeMiB: Math.round(before), afterMiB: Math.round(after), peakMiB: Math.round(restarted.peak) };
  console.log(`restart at ${figures.stateMiB} MiB of state, RssAnon: ${JSON.stringify(figures)}`);
  expect(after - base).toBeLessThan(1.1 * (before - base));
  expect(agent.log()).toMatch(/raft: restoring the stored snapshot/);
  expect(agent.log()).toMatch(/raft: restored the stored snapshot.*ms[=":]+\d+/);
});
