// The bundle loader (src/client-bundle.ts): a command's bundle runs only while it and every file it
// was built from are unchanged, and its V8 code cache is written once and then reused.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleFiles, loadBundle, NO_BUNDLE_ENV, WRAP_HEAD, WRAP_TAIL, type BundleManifest } from '../src/client-bundle';

const BUILT_LOADER = join(__dirname, '..', 'dist', 'client-bundle.js');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-bundle-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const stamp = (path: string): [number, number] => {
  const s = statSync(path);
  return [s.size, s.mtimeMs];
};

/** A bundle `x` whose run() answers its words joined, built from one input file `input.js`. */
function writeBundle(source = "exports.run = async (argv) => 'ran ' + argv.join(' ');\n"): void {
  writeFileSync(join(dir, 'input.js'), 'module.exports = 1;\n');
  const files = bundleFiles(dir, 'x');
  writeFileSync(files.js, WRAP_HEAD + source + WRAP_TAIL);
  const manifest: BundleManifest = { bundle: stamp(files.js), inputs: [['input.js', ...stamp(join(dir, 'input.js'))]] };
  writeFileSync(files.manifest, JSON.stringify(manifest));
}

test('a fresh bundle is loaded and run', async () => {
  writeBundle();
  const bundle = loadBundle(dir, 'x');
  expect(bundle).toBeDefined();
  expect(await bundle!.run(['kv', 'get'])).toBe('ran kv get');
});

test('an input changed since the build (content or mtime) makes the bundle stale', () => {
  writeBundle();
  writeFileSync(join(dir, 'input.js'), 'module.exports = 22;\n');
  expect(loadBundle(dir, 'x')).toBeUndefined();
  writeBundle();
  const later = new Date(Date.now() + 5_000);
  utimesSync(join(dir, 'input.js'), later, later);
  expect(loadBundle(dir, 'x')).toBeUndefined();
});

test('a bundle rewritten after its manifest, a missing manifest and the opt-out are not loaded', () => {
  writeBundle();
  writeFileSync(bundleFiles(dir, 'x').js, `${WRAP_HEAD}exports.run = async () => 'other';\n${WRAP_TAIL}`);
  expect(loadBundle(dir, 'x')).toBeUndefined();
  writeBundle();
  rmSync(bundleFiles(dir, 'x').manifest);
  expect(loadBundle(dir, 'x')).toBeUndefined();
  writeBundle();
  process.env[NO_BUNDLE_ENV] = '1';
  try {
    expect(loadBundle(dir, 'x')).toBeUndefined();
  } finally {
    delete process.env[NO_BUNDLE_ENV];
  }
  expect(loadBundle(dir, 'x')).toBeDefined();
});

test('the code cache is written by the first run, kept by the next, replaced when it names another source', () => {
  writeBundle();
  const { js, cache } = bundleFiles(dir, 'x');
  // Each run is its own process: the cache is written as a process exits.
  const runOnce = () => execFileSync(process.execPath, ['-e', `require(${JSON.stringify(BUILT_LOADER)}).loadBundle(${JSON.stringify(dir)}, 'x').run(['a']).then((s) => process.stdout.write(s))`], { encoding: 'utf8' });
  expect(runOnce()).toBe('ran a');
  const [size, mtimeMs] = stamp(js);
  const key = `${process.version} ${size} ${mtimeMs}\n`;
  const first = readFileSync(cache);
  expect(first.subarray(0, key.length).toString('latin1')).toBe(key);
  expect(first.length).toBeGreaterThan(key.length);
  const written = statSync(cache).mtimeMs;

  expect(runOnce()).toBe('ran a');
  expect(statSync(cache).mtimeMs).toBe(written); // accepted by V8, so not written again

  writeFileSync(cache, Buffer.concat([Buffer.from(`${process.version} 1 2\n`), first.subarray(key.length)]));
  expect(runOnce()).toBe('ran a');
  expect(readFileSync(cache).subarray(0, key.length).toString('latin1')).toBe(key);
});
