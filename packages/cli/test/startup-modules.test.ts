// Issue #12: the HTTP client commands start fast because they load only what they use. These tests
// run the built bin under a preload that records every CommonJS file and Node built-in the process
// loaded, and fail if `registry kv get` pulls in the server package, another command's modules or
// another command's bundle, or if plain `registry version` loads commander.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';
import { BIN, cleanEnv } from './support/cli';

const CLI = join(__dirname, '..');
const REPO = join(CLI, '..', '..');

let t: TestAgent;
let dir: string;
let hook: string;

interface Loaded {
  code: number;
  stdout: string;
  /** Files, relative to the repository (symlinks resolved, as Node keys its cache). */
  files: string[];
  builtins: string[];
}

function run(args: string[], env: Record<string, string> = {}): Promise<Loaded> {
  const out = join(dir, `loaded-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-r', hook, BIN, ...args],
      { env: cleanEnv({ ...env, LOADED_OUT: out, REGISTRY_HTTP_ADDR: `127.0.0.1:${t.agent.httpPort}` }), timeout: 20_000, encoding: 'utf8' },
      (err, stdout) => {
        try {
          const loaded = JSON.parse(readFileSync(out, 'utf8')) as { files: string[]; builtins: string[] };
          resolve({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, files: loaded.files.map((f) => relative(REPO, f)), builtins: loaded.builtins });
        } catch (e) {
          reject(e);
        }
      },
    );
  });
}

/** The files a run may load besides the package's own dist/: commander and lossless-json, nothing else. */
function outsideCli(files: string[]): string[] {
  return files.filter((f) => f !== relative(REPO, hook) && !f.startsWith('packages/cli/') && !/^node_modules\/(commander|lossless-json)\//.test(f));
}

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'cli-startup-')));
  hook = join(dir, 'record-loaded.js');
  writeFileSync(
    hook,
    "process.on('exit', () => require('fs').writeFileSync(process.env.LOADED_OUT, JSON.stringify({ files: Object.keys(require.cache), builtins: process.moduleLoadList })));\n",
  );
  t = await startDevAgent();
  await fetch(`${t.url}/v1/kv/app/name`, { method: 'PUT', body: 'registry' });
  // The bundle step, so that the bundled path is the one under test even after a bare `tsc -b`.
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, [join(CLI, 'scripts', 'build-bundles.js')], { timeout: 60_000 }, (err) => (err ? reject(err) : resolve())),
  );
}, 90_000);

afterAll(async () => {
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kv get runs from its own bundle alone: no server package, no other command, no child_process', async () => {
  for (let i = 0; i < 2; i++) {
    // The second run is the one with the V8 code cache the first wrote.
    const r = await run(['kv', 'get', 'app/name']);
    expect(r).toMatchObject({ code: 0, stdout: 'registry\n' });
    const cli = r.files.filter((f) => f.startsWith('packages/cli/'));
    expect(cli.sort()).toEqual(['packages/cli/bin/registry.js', 'packages/cli/dist/client-bundle.js', 'packages/cli/dist/kv.bundle.js', 'packages/cli/dist/main.js']);
    expect(outsideCli(r.files)).toEqual([]);
    // commander requires it for executable subcommands only; the bundle defers it to first use.
    expect(r.builtins).not.toContain('NativeModule child_process');
    expect(existsSync(join(CLI, 'dist', 'kv.bundle.cache'))).toBe(true);
  }
});

test('the kv bundle holds kv\'s own modules, commander and lossless-json: no server package, no other command', () => {
  const manifest = JSON.parse(readFileSync(join(CLI, 'dist', 'kv.bundle.json'), 'utf8')) as { inputs: [string, number, number][] };
  const inputs = manifest.inputs.map(([path]) => relative(REPO, join(CLI, 'dist', path)));
  expect(inputs).toContain('packages/cli/dist/commands/kv.js');
  expect(outsideCli(inputs)).toEqual([]);
  const commandModules = inputs.filter((f) => f.startsWith('packages/cli/dist/commands/') || /-command\.js$/.test(f));
  expect(commandModules.sort()).toEqual(['packages/cli/dist/commands/kv-transfer.js', 'packages/cli/dist/commands/kv.js']);
});

test('kv get from the compiled modules (no bundle) loads kv\'s modules only, never the server package', async () => {
  const r = await run(['kv', 'get', 'app/name'], { REGISTRY_CLI_NO_BUNDLE: '1' });
  expect(r).toMatchObject({ code: 0, stdout: 'registry\n' });
  expect(r.files.filter((f) => /\.bundle\.js$/.test(f))).toEqual([]);
  expect(outsideCli(r.files)).toEqual([]);
  expect(r.files).toContain('packages/cli/dist/commands/kv.js');
  const commandModules = r.files.filter((f) => f.startsWith('packages/cli/dist/commands/') || /-command\.js$/.test(f));
  expect(commandModules.sort()).toEqual(['packages/cli/dist/commands/kv-transfer.js', 'packages/cli/dist/commands/kv.js']);
});

test('`kv -h` and a typo\'s hint still see every kv subcommand (kv builds only the one asked for)', async () => {
  const envs: Record<string, string>[] = [{}, { REGISTRY_CLI_NO_BUNDLE: '1' }];
  for (const env of envs) {
    const help = await run(['kv', '-h'], env);
    for (const sub of ['get', 'put', 'delete', 'export', 'import']) expect(help.stdout).toMatch(new RegExp(`^  ${sub} `, 'm'));
    const typo = await new Promise<string>((resolve) =>
      execFile(process.execPath, [BIN, 'kv', 'gett'], { env: cleanEnv(env), encoding: 'utf8' }, (_err, _out, stderr) => resolve(stderr)),
    );
    expect(typo).toMatch(/unknown command 'gett'[\s\S]*Did you mean get\?/);
  }
});

test('plain `registry version` loads neither commander nor any command module', async () => {
  const r = await run(['version']);
  expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Registry v\d+\.\d+\.\d+\n/) });
  expect(r.files.sort()).toEqual([relative(REPO, hook), 'packages/cli/bin/registry.js', 'packages/cli/dist/cli-version.js', 'packages/cli/dist/main.js', 'packages/cli/dist/version-text.js'].sort());
});

test('lock and watch load no server or raft package index (it took `registry lock` seconds to start on a busy host)', async () => {
  const lock = await run(['lock', 'jobs/startup', 'true']);
  expect(lock.code).toBe(0);
  // A failing handler ends the watch (exit 1) at the first answer.
  const watch = await run(['watch', '-type', 'key', '-key', 'app/name', 'false']);
  expect(watch.code).toBe(1);
  for (const r of [lock, watch]) {
    const heavy = r.files.filter((f) => /^packages\/(server|raft|store)\/(dist|src)\/index\.js$/.test(f) || /^packages\/server\/dist\/agent\//.test(f));
    expect(heavy).toEqual([]);
  }
});
