// Moving a server's Raft log between stores (raft.log_store): a data dir whose log is in LevelDB
// (every data dir from before the write-ahead log became the default) keeps its data when the
// server starts with the default; a data dir already moved into the WAL is refused by
// log_store = "leveldb" with the reason, rather than started from snapshots only.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

let dir: string;
let agent: AgentProc | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-log-store-'));
});
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function configFile(name: string, logStore?: 'leveldb' | 'wal'): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(logStore ? { raft: { log_store: logStore } } : {}));
  return path;
}

const serverArgs = (dataDir: string, config: string) => ['-server', '-bootstrap-expect', '1', '-node', 'one', '-data-dir', dataDir, '-config-file', config];

test('a data dir with its log in LevelDB keeps every write when the server starts with the default (the WAL)', async () => {
  const dataDir = join(dir, 'data');
  agent = await startAgentProc(serverArgs(dataDir, configFile('level', 'leveldb')), join(dir, 'level.log'));
  await whenReady(agent, 'one');
  for (let i = 0; i < 50; i++) expect(await (await fetch(`${agent.url}/v1/kv/k${i}`, { method: 'PUT', body: `v${i}` })).text()).toBe('true');
  await agent.stop();
  expect(existsSync(join(dataDir, 'raft', 'wal'))).toBe(false); // (raft/snapshots holds its snapshot files)

  agent = await startAgentProc(serverArgs(dataDir, configFile('default')), join(dir, 'default.log'));
  await whenReady(agent, 'one');
  expect(readdirSync(join(dataDir, 'raft', 'wal')).some((n) => n.endsWith('.wal'))).toBe(true);
  const keys = (await (await fetch(`${agent.url}/v1/kv/?keys`)).json()) as string[];
  expect(keys.filter((k) => /^k\d+$/.test(k))).toHaveLength(50);
  expect(await (await fetch(`${agent.url}/v1/kv/k49?raw`)).text()).toBe('v49');
});

test('a data dir whose log is in the WAL is refused by log_store = "leveldb": exit 1 and the reason', async () => {
  const dataDir = join(dir, 'data');
  agent = await startAgentProc(serverArgs(dataDir, configFile('default')), join(dir, 'default.log'));
  await whenReady(agent, 'one');
  expect(await (await fetch(`${agent.url}/v1/kv/kept`, { method: 'PUT', body: 'yes' })).text()).toBe('true');
  await agent.stop();

  const refused = await startAgentProc(serverArgs(dataDir, configFile('level', 'leveldb')), join(dir, 'refused.log'));
  expect(await refused.exited).toBe(1);
  expect(refused.log()).toMatch(/raft\/wal holds this server's Raft log: start it with raft.log_store = "wal"/);

  // Nothing was lost: started as it should be, the write is there.
  agent = await startAgentProc(serverArgs(dataDir, configFile('wal', 'wal')), join(dir, 'wal.log'));
  await whenReady(agent, 'one');
  expect(await (await fetch(`${agent.url}/v1/kv/kept?raw`)).text()).toBe('yes');
});
