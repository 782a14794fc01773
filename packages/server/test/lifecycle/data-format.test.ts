// Issue #34: a data dir says which format it holds. The first start writes `<data-dir>/data-format`;
// a data dir from before the marker existed is format 1, migrated (its snapshot moved out of LevelDB),
// keeps its data and gets the marker; a data dir of a newer format is refused — exit 1, a message naming both formats —
// and left as it was, by a server and by a client agent alike.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

let dir: string;
let agent: AgentProc | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-data-format-'));
});
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const serverArgs = (dataDir: string) => ['-server', '-bootstrap-expect', '1', '-node', 'one', '-data-dir', dataDir];
const marker = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, 'data-format'), 'utf8')) as { format: number; written_by: string };

test('the first start writes the marker; a data dir without it keeps its data and gets it', async () => {
  const dataDir = join(dir, 'data');
  agent = await startAgentProc(serverArgs(dataDir), join(dir, 'first.log'));
  await whenReady(agent, 'one');
  expect(marker(dataDir)).toEqual({ format: 2, written_by: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  expect(await (await fetch(`${agent.url}/v1/kv/kept`, { method: 'PUT', body: 'yes' })).text()).toBe('true');
  await agent.stop();

  // A data dir written before the marker existed.
  rmSync(join(dataDir, 'data-format'));
  agent = await startAgentProc(serverArgs(dataDir), join(dir, 'unmarked.log'));
  await whenReady(agent, 'one');
  expect(await (await fetch(`${agent.url}/v1/kv/kept?raw`)).text()).toBe('yes');
  expect(marker(dataDir).format).toBe(2);
});

test('a server refuses a data dir of a newer format: exit 1, both formats named, nothing touched', async () => {
  const dataDir = join(dir, 'data');
  agent = await startAgentProc(serverArgs(dataDir), join(dir, 'first.log'));
  await whenReady(agent, 'one');
  expect(await (await fetch(`${agent.url}/v1/kv/kept`, { method: 'PUT', body: 'yes' })).text()).toBe('true');
  await agent.stop();

  const newer = JSON.stringify({ format: 3, written_by: '9.9.9' }) + '\n';
  writeFileSync(join(dataDir, 'data-format'), newer);
  const before = readdirSync(dataDir).sort();
  const refused = await startAgentProc(serverArgs(dataDir), join(dir, 'refused.log'));
  expect(await refused.exited).toBe(1);
  expect(refused.log()).toMatch(/data dir .* is in data format 3 \(written by registry 9\.9\.9\), newer than this registry \S+ reads \(data format 2\)/);
  expect(readFileSync(join(dataDir, 'data-format'), 'utf8')).toBe(newer);
  expect(readdirSync(dataDir).sort()).toEqual(before);

  // Put back as this binary's format, the data is all there.
  writeFileSync(join(dataDir, 'data-format'), JSON.stringify({ format: 2 }));
  agent = await startAgentProc(serverArgs(dataDir), join(dir, 'back.log'));
  await whenReady(agent, 'one');
  expect(await (await fetch(`${agent.url}/v1/kv/kept?raw`)).text()).toBe('yes');
});

test('a client agent refuses a data dir of a newer format too, and a marker that is not one', async () => {
  const dataDir = join(dir, 'client');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'data-format'), JSON.stringify({ format: 3 }));
  const refused = await startAgentProc(['-node', 'c1', '-data-dir', dataDir, '-retry-join', '127.0.0.1:1'], join(dir, 'client.log'));
  expect(await refused.exited).toBe(1);
  expect(refused.log()).toMatch(/is in data format 3, newer than this registry \S+ reads \(data format 2\)/);
  expect(existsSync(join(dataDir, 'node-id'))).toBe(false);

  writeFileSync(join(dataDir, 'data-format'), 'garbage');
  const garbled = await startAgentProc(['-node', 'c1', '-data-dir', dataDir, '-retry-join', '127.0.0.1:1'], join(dir, 'garbled.log'));
  expect(await garbled.exited).toBe(1);
  expect(garbled.log()).toMatch(/data-format is not a data format marker/);
});
