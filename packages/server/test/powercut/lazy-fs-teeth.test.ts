// The power-cut disk has teeth (issue 35): a process that writes without fsync loses its file at a
// cut, one that syncs the file and its directory keeps it, a rename not followed by an fsync of the
// directory is undone, and O_DSYNC writes count as synced. Without this, power-cut.test.ts passing
// would say nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LazyFs, lazyFsUnavailable } from '../support/lazy-fs';

jest.setTimeout(60_000);

const unavailable = lazyFsUnavailable();
if (unavailable) console.warn(`power-cut disk unavailable, test skipped: ${unavailable}`);
const withFuse = unavailable ? test.skip : test;

const dir = mkdtempSync(join(tmpdir(), 'registry-lazyfs-'));
let fs: LazyFs | undefined;
afterAll(async () => {
  await fs?.unmount();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `code` in a separate node process (its files are written by a process that then exits). */
function inChild(code: string): void {
  const r = spawnSync(process.execPath, ['-e', `const fs = require('node:fs'); process.chdir(${JSON.stringify(fs!.mountpoint)});\n${code}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
}

withFuse('unsynced writes, names and renames are lost at a cut; synced ones are kept', async () => {
  fs = await LazyFs.mount(join(dir, 'disk'), join(dir, 'mnt'), join(dir, 'fs.log'));
  inChild(`
    const syncDir = () => { const d = fs.openSync('.', 'r'); fs.fsyncSync(d); fs.closeSync(d); };
    // Written and closed, never synced.
    fs.writeFileSync('lazy', 'gone');
    // Synced, and its name synced into the directory.
    const f = fs.openSync('kept', 'w'); fs.writeSync(f, 'kept'); fs.fsyncSync(f); fs.closeSync(f);
    // Written O_DSYNC: each write is synced.
    const d = fs.openSync('dsync', fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_DSYNC); fs.writeSync(d, 'dsync'); fs.closeSync(d);
    // Synced data, name never synced: a file that was never there.
    fs.mkdirSync('sub');
    syncDir();
    const o = fs.openSync('sub/orphan', 'w'); fs.writeSync(o, 'orphan'); fs.fsyncSync(o); fs.closeSync(o);
    // Appended to after the sync: the tail is lost, the synced part kept.
    fs.appendFileSync('kept', ' and more');
    // Renamed, without syncing the directory: the old name comes back.
    fs.renameSync('dsync', 'renamed');
  `);
  // Before the cut, the processes' view is the page cache: everything is there.
  expect(readdirSync(fs.mountpoint).sort()).toEqual(['kept', 'lazy', 'renamed', 'sub']);
  expect(readFileSync(join(fs.mountpoint, 'kept'), 'utf8')).toBe('kept and more');

  await fs.cut();
  expect(readdirSync(fs.mountpoint).sort()).toEqual(['dsync', 'kept', 'lazy', 'sub']);
  // The name of `lazy` was synced with the directory, its bytes never were.
  expect(readFileSync(join(fs.mountpoint, 'lazy'), 'utf8')).toBe('');
  expect(readFileSync(join(fs.mountpoint, 'kept'), 'utf8')).toBe('kept');
  expect(readFileSync(join(fs.mountpoint, 'dsync'), 'utf8')).toBe('dsync');
  expect(existsSync(join(fs.mountpoint, 'sub', 'orphan'))).toBe(false);
  // The disk underneath holds the same.
  expect(readdirSync(fs.disk).sort()).toEqual(['dsync', 'kept', 'lazy', 'sub']);

  // A file written the durable way (temp, fsync, rename, fsync of the directory) survives; one
  // written by writeFile alone, as node-id once was, does not.
  inChild(`
    fs.writeFileSync('node-id', 'plain');
    const t = fs.openSync('durable.tmp', 'w'); fs.writeSync(t, 'durable'); fs.fsyncSync(t); fs.closeSync(t);
    fs.renameSync('durable.tmp', 'durable');
    const d = fs.openSync('.', 'r'); fs.fsyncSync(d); fs.closeSync(d);
  `);
  await fs.cut();
  expect(readFileSync(join(fs.mountpoint, 'durable'), 'utf8')).toBe('durable');
  expect(readFileSync(join(fs.mountpoint, 'node-id'), 'utf8')).toBe('');
  expect(existsSync(join(fs.mountpoint, 'durable.tmp'))).toBe(false);
});
