// Issue 35: the files an agent needs to be itself after a power cut — the data format marker (issue #34), node-id, its own service and
// check definitions, persisted tokens — are written durably, and this is shown rather than assumed:
// a real server runs under strace, and for each file the trace must hold, in order, the temporary
// file opened for writing, an fsync of it, its rename over the file, then an fsync of the
// directory; a removal (deregistration) is followed by an fsync of the directory too.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, freePort } from '../support/processes';
import { eventually } from '../support/wait';

jest.setTimeout(90_000);

const strace = spawnSync('strace', ['-V'], { encoding: 'utf8' });
const missing = strace.error || strace.status !== 0 ? 'strace is not installed (apt-get install -y strace); the durable-file trace test is skipped' : undefined;
if (missing) console.warn(missing);
const withStrace = missing ? test.skip : test;

const dir = mkdtempSync(join(tmpdir(), 'registry-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The node process strace started (its only child), by PID. */
function tracee(stracePid: number): number | undefined {
  try {
    const kids = readFileSync(`/proc/${stracePid}/task/${stracePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return kids.length > 0 ? Number(kids[0]) : undefined;
  } catch {
    return undefined;
  }
}

/** The agent under strace stopped: SIGTERM to the traced node process (strace then exits with it). */
async function stopTraced(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const pid = tracee(child.pid!);
  if (pid) process.kill(pid, 'SIGTERM');
  else child.kill('SIGTERM');
  await exited;
}

/**
 * strace's output as lines; find(re, from): index of the first line at or after `from` matching `re`, -1 if none.
 * A call that another thread's call interrupted in the trace is printed as `fsync(23</dir> <unfinished ...>`
 * and later `<... fsync resumed>) = 0` (the agent syncs two directories at once when it removes a
 * check): the first line, which names the arguments, is read as the whole call.
 */
function traceOf(trace: string) {
  const lines = readFileSync(trace, 'utf8')
    .split('\n')
    .map((l) => l.replace(/ <unfinished \.\.\.>$/, ')'));
  const find = (re: RegExp, from = 0) => {
    for (let i = from; i < lines.length; i++) if (re.test(lines[i]!)) return i;
    return -1;
  };
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { lines, find, esc };
}

withStrace('node-id, definitions and tokens: temp file, fsync, rename, fsync of the directory', async () => {
  const dataDir = join(dir, 'data');
  const trace = join(dir, 'trace.txt');
  const httpPort = await freePort();
  const serverPort = await freePort();
  const config = join(dir, 'acl.json');
  writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: 'allow', enable_token_persistence: true, tokens: { master: 'durable-root' } } }));
  const child = spawn(
    'strace',
    ['-f', '-y', '-qq', '-e', 'trace=openat,fsync,fdatasync,rename,unlink,unlinkat', '-o', trace, process.execPath, CLI, 'agent', '-server', '-bootstrap-expect', '1', '-node', 'durable',
      '-data-dir', dataDir, '-config-file', config, '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', '-1'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${httpPort}`;
  try {
    expect(await eventually(async () => (await fetch(`${url}/v1/catalog/node/durable`)).status === 200 && (await (await fetch(`${url}/v1/catalog/node/durable`)).json()) !== null, 40_000, 200)).toBe(true);
    expect((await fetch(`${url}/v1/agent/service/register`, { method: 'PUT', body: JSON.stringify({ Name: 'web', Port: 80, Check: { TTL: '1h' } }) })).status).toBe(200);
    expect((await fetch(`${url}/v1/agent/check/register`, { method: 'PUT', body: JSON.stringify({ Name: 'disk', TTL: '1h' }) })).status).toBe(200);
    expect((await fetch(`${url}/v1/agent/token/default`, { method: 'PUT', body: JSON.stringify({ Token: 'a-default-token' }), headers: { 'X-Registry-Token': 'durable-root' } })).status).toBe(200);
    expect((await fetch(`${url}/v1/agent/check/deregister/disk`, { method: 'PUT', headers: { 'X-Registry-Token': 'durable-root' } })).status).toBe(200);
  } finally {
    await stopTraced(child, exited);
  }

  const { lines, find, esc } = traceOf(trace);
  const durable = (file: string) => {
    const d = join(file, '..');
    const open = find(new RegExp(`openat\\(.*"${esc(file)}\\.tmp", O_WRONLY\\|O_CREAT`));
    const sync = find(new RegExp(`fsync\\(\\d+<${esc(file)}\\.tmp>\\)`), open);
    const rename = find(new RegExp(`rename\\("${esc(file)}\\.tmp", "${esc(file)}"\\)`), sync);
    const dirSync = find(new RegExp(`fsync\\(\\d+<${esc(d)}>\\)`), rename);
    return { file: file.slice(dataDir.length + 1), ordered: open >= 0 && sync > open && rename > sync && dirSync > rename };
  };
  const services = readdirSync(join(dataDir, 'services'));
  expect(services).toHaveLength(1);
  const files = [join(dataDir, 'data-format'), join(dataDir, 'node-id'), join(dataDir, 'services', services[0]!), join(dataDir, 'acl-tokens.json')];
  // The deregistered check's file was written once and removed since: find it in the trace.
  const checkFile = lines.map((l) => /rename\("([^"]*\/checks\/[0-9a-f]{32})\.tmp"/.exec(l)?.[1]).find((f) => f !== undefined);
  expect(checkFile).toBeDefined();
  files.push(checkFile!);
  expect(files.map(durable)).toEqual(files.map((f) => ({ file: f.slice(dataDir.length + 1), ordered: true })));
  const unlink = find(new RegExp(`unlink(at)?\\(.*"${esc(checkFile!)}"`));
  expect(unlink).toBeGreaterThan(0);
  expect(find(new RegExp(`fsync\\(\\d+<${esc(join(checkFile!, '..'))}>\\)`), unlink)).toBeGreaterThan(unlink);
});

// Issue #34: a Raft snapshot is a file, written under a temporary name, fsynced, renamed into place,
// the folder fsynced — and only after that is the previous snapshot's file removed.
withStrace('Raft snapshot files: temp file, fsync, rename, fsync of the folder, then the previous one removed', async () => {
  const dataDir = join(dir, 'snapshots-data');
  const trace = join(dir, 'snapshots-trace.txt');
  const httpPort = await freePort();
  const serverPort = await freePort();
  const config = join(dir, 'snapshots.json');
  writeFileSync(config, JSON.stringify({ raft: { snapshot_threshold: 16, snapshot_interval_ms: 300, trailing_logs: 4 } }));
  const child = spawn(
    'strace',
    ['-f', '-y', '-qq', '-e', 'trace=openat,fsync,fdatasync,rename,unlink,unlinkat', '-o', trace, process.execPath, CLI, 'agent', '-server', '-bootstrap-expect', '1', '-node', 'snaps',
      '-data-dir', dataDir, '-config-file', config, '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', '-1'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${httpPort}`;
  const snapDir = join(dataDir, 'raft', 'snapshots');
  const renamed = () => (readFileSync(trace, 'utf8').match(/rename\("[^"]*\/raft\/snapshots\/tmp-\d+\.snap\.tmp"/g) ?? []).length;
  try {
    expect(await eventually(async () => (await fetch(`${url}/v1/status/leader`)).ok && (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 40_000, 200)).toBe(true);
    // Two snapshots at least: the second replaces the first.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 40; i++) expect((await fetch(`${url}/v1/kv/k${round}-${i}`, { method: 'PUT', body: 'v' })).status).toBe(200);
      const want = round + 1;
      expect(await eventually(async () => renamed() >= want, 30_000, 200)).toBe(true);
    }
    expect(await eventually(async () => readdirSync(snapDir).filter((n) => n.endsWith('.snap')).length === 1, 10_000, 100)).toBe(true);
  } finally {
    await stopTraced(child, exited);
  }

  const { lines, find, esc } = traceOf(trace);
  const renames = lines.flatMap((l, i) => {
    const m = /rename\("([^"]*\/tmp-\d+\.snap\.tmp)", "([^"]*\.snap)"\)/.exec(l);
    return m ? [{ at: i, temp: m[1]!, name: m[2]! }] : [];
  });
  expect(renames.length).toBeGreaterThanOrEqual(2);
  for (const r of renames.slice(0, 2)) {
    const open = find(new RegExp(`openat\\(.*"${esc(r.temp)}", O_WRONLY\\|O_CREAT`));
    const sync = find(new RegExp(`fsync\\(\\d+<${esc(r.temp)}>\\)`), open);
    expect(open).toBeGreaterThanOrEqual(0);
    expect(sync).toBeGreaterThan(open);
    expect(r.at).toBeGreaterThan(sync);
    expect(find(new RegExp(`fsync\\(\\d+<${esc(snapDir)}>\\)`), r.at)).toBeGreaterThan(r.at);
  }
  // The first snapshot's file is removed only after the second's name is durable.
  const [first, second] = renames;
  const secondDurable = find(new RegExp(`fsync\\(\\d+<${esc(snapDir)}>\\)`), second!.at);
  const removed = find(new RegExp(`unlink(at)?\\(.*"${esc(first!.name)}"`));
  expect(removed).toBeGreaterThan(secondDurable);
});
