// SIGKILL a server mid-stream: every write it acknowledged must be there after it restarts.
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repoRoot = resolve(__dirname, '../../../..');
const child = join(__dirname, 'crash-child.js');
let dir: string;

beforeAll(() => {
  // The child runs the compiled package, as a real server would.
  execSync('npx tsc -b packages/raft', { cwd: repoRoot, stdio: 'pipe' });
  dir = mkdtempSync(join(tmpdir(), 'raft-crash-'));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(storage: string, mode: 'write' | 'verify', onLine: (line: string) => void, prefix = ''): { done: Promise<number | null>; kill: () => void } {
  const proc = spawn(process.execPath, [child, mode, join(dir, storage), prefix], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CRASH_STORAGE: storage } });
  let buffered = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    lines.forEach(onLine);
  });
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<number | null>((res) =>
    proc.on('exit', (code) => {
      if (code) process.stderr.write(stderr);
      res(code);
    }),
  );
  return { done, kill: () => proc.kill('SIGKILL') };
}

test.each(['level', 'wal'])('%s storage: every acknowledged write survives a SIGKILL, twice over', async (storage) => {
  const acked: string[] = [];
  for (let round = 0; round < 2; round++) {
    const before = acked.length;
    const writer = run(storage, 'write', (line) => {
      if (line.startsWith('ack ')) acked.push(line.slice(4));
    }, `r${round}-`);
    const deadline = Date.now() + 8000;
    while (acked.length < before + 400 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    writer.kill();
    await writer.done;
    expect(acked.length).toBeGreaterThan(before + 50);
  }
  let applied: string[] | undefined;
  const verifier = run(storage, 'verify', (line) => (applied = JSON.parse(line)));
  expect(await verifier.done).toBe(0);
  const present = new Set(applied);
  const missing = acked.filter((v) => !present.has(v));
  expect(missing).toEqual([]);
  // Nothing was applied twice.
  expect(present.size).toBe(applied!.length);
}, 30_000);
