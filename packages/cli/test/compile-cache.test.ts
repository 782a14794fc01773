// The agent's compile cache (src/compile-cache.ts), in child Node processes (Jest loads modules its own
// way, so the hook on Node's CommonJS loader is only seen in a plain `node`): the first run compiles
// every module afresh and writes their code into the cache file once started; the next run takes every
// module from it and behaves the same; a module whose file changed is compiled afresh (its new code
// runs); `require.resolve` and friends work in cached modules; a module with `import(` is left to
// Node; a damaged cache file is replaced; the opt-out variable turns it off.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BUILT = join(__dirname, '..', 'dist', 'compile-cache.js');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-compile-cache-'));
  writeFileSync(join(dir, 'a.js'), "const b = require('./b');\nmodule.exports = () => `a+${b()}+${require.resolve('./b').endsWith('b.js')}+${typeof require.cache}`;\n");
  writeFileSync(join(dir, 'b.js'), "module.exports = () => 'b1';\n");
  writeFileSync(join(dir, 'dyn.js'), "module.exports = () => import('node:os').then((os) => typeof os.cpus);\n");
  writeFileSync(
    join(dir, 'run.js'),
    `const cc = require(${JSON.stringify(BUILT)});
cc.enableCompileCache(${JSON.stringify(dir)});
const a = require('./a')();
require('./dyn')().then((d) => {
  const stats = cc.compileCacheStats();
  cc.compileCacheSettled(); // as the agent does once started
  process.stdout.write(JSON.stringify({ a, d, stats }));
});
`,
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const run = (env: Record<string, string> = {}) =>
  JSON.parse(execFileSync(process.execPath, [join(dir, 'run.js')], { encoding: 'utf8', env: { ...process.env, ...env } })) as {
    a: string;
    d: string;
    stats: { hits: number; misses: number; skipped: number } | null;
  };

test('the first run writes the cache, the next takes every module from it and behaves the same', () => {
  const first = run();
  expect(first.a).toBe('a+b1+true+object');
  expect(first.d).toBe('function');
  expect(first.stats).toEqual({ hits: 0, misses: 2, skipped: 1 }); // a, b; dyn.js has import(
  expect(existsSync(join(dir, 'agent.compile-cache'))).toBe(true);
  const second = run();
  expect(second).toEqual({ ...first, stats: { hits: 2, misses: 0, skipped: 1 } });
});

test('a module whose file changed is compiled afresh, and its new code runs', () => {
  run();
  writeFileSync(join(dir, 'b.js'), "module.exports = () => 'b2';\n"); // same length, new mtime
  const later = new Date(Date.now() + 5_000);
  utimesSync(join(dir, 'b.js'), later, later);
  const after = run();
  expect(after.a).toBe('a+b2+true+object');
  expect(after.stats).toEqual({ hits: 1, misses: 1, skipped: 1 });
  expect(run().stats).toEqual({ hits: 2, misses: 0, skipped: 1 }); // and written again
});

test('a damaged cache file is ignored and replaced; the opt-out loads every module the usual way', () => {
  run();
  writeFileSync(join(dir, 'agent.compile-cache'), 'not a cache');
  expect(run().stats).toEqual({ hits: 0, misses: 2, skipped: 1 });
  expect(run().stats).toEqual({ hits: 2, misses: 0, skipped: 1 });
  const off = run({ REGISTRY_NO_COMPILE_CACHE: '1' });
  expect(off.a).toBe('a+b1+true+object');
  expect(off.stats).toBeNull();
});
