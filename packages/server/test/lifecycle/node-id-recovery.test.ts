// Issue 35: a server whose node-id file was emptied (a power cut within the writeback window after
// its first start) must come back as the same member — its id recovered from what it recorded
// beside its Raft state — with its data readable, never as a new member that finds no leader. With
// neither the file nor the record, it refuses to start and names the file and the fix.
import { mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-nodeid-'));
const dataDir = join(dir, 'data');
let agent: AgentProc | undefined;

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const start = () => startAgentProc(['-server', '-bootstrap-expect', '1', '-node', 'ider', '-data-dir', dataDir], join(dir, 'agent.log'));
const selfId = async (a: AgentProc) => ((await (await fetch(`${a.url}/v1/agent/self`)).json()) as { Config: { NodeID: string } }).Config.NodeID;

test('an emptied node-id file is recovered from the Raft state; without any record the start is refused with the fix', async () => {
  agent = await start();
  await whenReady(agent, 'ider');
  const id = await selfId(agent);
  expect((await fetch(`${agent.url}/v1/kv/durable`, { method: 'PUT', body: 'yes' })).status).toBe(200);
  await agent.stop();

  truncateSync(join(dataDir, 'node-id'), 0);
  agent = await start();
  await whenReady(agent, 'ider');
  expect(await selfId(agent)).toBe(id);
  expect(await (await fetch(`${agent.url}/v1/kv/durable?raw`)).text()).toBe('yes');
  // Its Raft configuration still names only itself: it is the same member, not a new one.
  const peers = (await (await fetch(`${agent.url}/v1/operator/raft/configuration`)).json()) as { Servers: { ID: string }[] };
  expect(peers.Servers.map((s) => s.ID)).toEqual([id]);
  expect(readFileSync(join(dataDir, 'node-id'), 'utf8').trim()).toBe(id);
  expect(agent.log()).toMatch(/recovered this server's id from its Raft state/);
  await agent.stop();

  // A data dir from before the id was recorded (or whose record is gone), with the file lost too.
  const db = new Level<string, unknown>(join(dataDir, 'db'), { valueEncoding: 'view' });
  await db.open();
  await db.del('agent-node-id');
  await db.close();
  truncateSync(join(dataDir, 'node-id'), 0);
  agent = await start();
  expect(await agent.exited).toBe(1);
  expect(agent.log()).toContain(`${join(dataDir, 'node-id')} is missing or unreadable, but ${dataDir} holds Raft state`);
  expect(agent.log()).toContain('or set node_id in the configuration');
  // Nothing was minted in its place.
  expect(readFileSync(join(dataDir, 'node-id'), 'utf8')).toBe('');
});
