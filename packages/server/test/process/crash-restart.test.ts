// A server killed with SIGKILL in the middle of a stream of writes comes back from its data dir
// with every write it acknowledged (Raft persists with a synced batch before it acknowledges).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';

jest.setTimeout(240_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-crash-'));
let proc: AgentProcess | null = null;

afterEach(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
});

async function start(httpPort: number, serverPort: number): Promise<AgentProcess> {
  const p = spawnAgent(
    ['-server', '-bootstrap-expect', '1', '-node', 'crashy', '-data-dir', join(dir, 'data')],
    httpPort,
    serverPort,
    join(dir, 'agent.log'),
  );
  await waitFor(async () => (await (await fetch(`${p.url}/v1/status/leader`)).json()) !== '', 20_000, 100);
  return p;
}

test('every acknowledged write survives SIGKILL and restart', async () => {
  const httpPort = await freePort();
  const serverPort = await freePort();
  proc = await start(httpPort, serverPort);

  const acked: string[] = [];
  let stop = false;
  const writer = async (w: number) => {
    for (let i = 0; !stop && i < 5_000; i++) {
      const node = `crash-${w}-${i}`;
      try {
        const res = await fetch(`${proc!.url}/v1/catalog/register`, {
          method: 'PUT',
          body: JSON.stringify({ Node: node, Address: '10.0.0.1' }),
        });
        if (res.status === 200 && (await res.json()) === true) acked.push(node);
      } catch {
        return; // the server is gone
      }
    }
  };
  const writers = [0, 1, 2, 3, 4, 5, 6, 7].map(writer);
  await waitFor(() => acked.length >= 200, 30_000);
  proc.child.kill('SIGKILL');
  stop = true;
  await Promise.all(writers);
  await proc.exited;
  expect(acked.length).toBeGreaterThanOrEqual(200);

  proc = await start(httpPort, serverPort);
  const nodes = new Set(
    ((await (await fetch(`${proc.url}/v1/catalog/nodes`)).json()) as { Node: string }[]).map((n) => n.Node),
  );
  const lost = acked.filter((n) => !nodes.has(n));
  expect(lost).toEqual([]);
  // And the node identity is kept across restarts.
  const self = (await (await fetch(`${proc.url}/v1/agent/self`)).json()) as { Config: { NodeName: string } };
  expect(self.Config.NodeName).toBe('crashy');
});

// Issue #34: snapshots are files (written under a temporary name, synced, renamed, the previous one
// removed after). SIGKILLed at random moments while snapshots are taken all the time (a low
// threshold, 8 KiB values so each one takes a while to write), the server comes back every time with
// every write it acknowledged, from exactly one snapshot file.
test('SIGKILLs while snapshots are taken: every acknowledged write survives each restart, from one snapshot file', async () => {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const dataDir = join(dir, 'snapshotting');
  const config = join(dir, 'snapshotting.json');
  writeFileSync(config, JSON.stringify({ raft: { snapshot_threshold: 32, snapshot_interval_ms: 100, trailing_logs: 8, wal_segment_bytes: 65536 } }));
  const startSnapshotting = async () => {
    const p = spawnAgent(['-server', '-bootstrap-expect', '1', '-node', 'snappy', '-data-dir', dataDir, '-config-file', config], httpPort, serverPort, join(dir, 'snapshotting.log'));
    await waitFor(async () => (await (await fetch(`${p.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
    return p;
  };
  const acked = new Map<string, string>();
  const value = (key: string) => key.padEnd(8192, '.');
  for (let round = 0; round < 4; round++) {
    proc = await startSnapshotting();
    const p = proc;
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop && i < 2_000; i++) {
        const key = `r${round}/w${w}/${i}`;
        try {
          const res = await fetch(`${p.url}/v1/kv/${key}`, { method: 'PUT', body: value(key) });
          if (res.status === 200 && (await res.json()) === true) acked.set(key, value(key));
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = [0, 1, 2, 3, 4, 5].map(writer);
    const before = acked.size;
    await waitFor(() => acked.size >= before + 100 + Math.floor(Math.random() * 150), 60_000);
    p.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await p.exited;

    proc = await startSnapshotting();
    const keys = new Set((await (await fetch(`${proc.url}/v1/kv/?keys`)).json()) as string[]);
    expect([...acked.keys()].filter((k) => !keys.has(k))).toEqual([]);
    const sample = [...acked.keys()][Math.floor(Math.random() * acked.size)]!;
    expect(await (await fetch(`${proc.url}/v1/kv/${sample}?raw`)).text()).toBe(acked.get(sample));
    // One snapshot file. The restarted server may be taking a snapshot of the log it replayed: the
    // previous file goes right after the new one is installed (CI once looked in between and saw two).
    const snapFiles = () => readdirSync(join(dataDir, 'raft', 'snapshots')).filter((n) => n.endsWith('.snap'));
    await waitFor(() => snapFiles().length === 1, 10_000).catch(() => undefined);
    expect(snapFiles()).toHaveLength(1);
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
  expect(readFileSync(join(dir, 'snapshotting.log'), 'utf8')).toMatch(/raft: took snapshot/);
});
