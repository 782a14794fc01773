// A server killed with SIGKILL in the middle of a stream of writes comes back from its data dir
// with every write it acknowledged (Raft persists with a synced batch before it acknowledges).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';

jest.setTimeout(90_000);

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
