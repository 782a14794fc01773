#!/usr/bin/env node
// The cli package's bundle step, run after `tsc -b` (npm run build): one CommonJS bundle per client
// command, dist/<command>.bundle.js, holding that command's modules, commander and the HTTP client,
// and beside it <command>.bundle.json, the size and mtime of the bundle and of every file that went
// into it. dist/main.js loads a command from its bundle only while all of those are unchanged
// (src/client-bundle.ts); the V8 code cache (<command>.bundle.cache) is written by the first run.
// Why: resolving and compiling ~20 separate modules was a third of `registry kv get`'s CPU.
// Bundles sit in dist/ itself, not a subfolder, so that `__dirname`-relative paths (cli-version.ts
// reads ../package.json) mean the same in a bundle as in the compiled module.
'use strict';
const { readdirSync, renameSync, statSync, unlinkSync, writeFileSync } = require('node:fs');
const { join, relative, resolve } = require('node:path');
const esbuild = require('esbuild');

const DIST = resolve(__dirname, '..', 'dist');
const { COMMAND_MODULES } = require(join(DIST, 'client-commands.js'));
const { WRAP_HEAD, WRAP_TAIL } = require(join(DIST, 'client-bundle.js'));

// Loaded by `import()` only where needed, and large: left to Node's resolution at run time.
const EXTERNAL = ['@registry/server', '@registry/server/*', '@registry/ca', 'js-hcl-parser'];

/**
 * commander requires node:child_process at its top for executable subcommands, which registry does
 * not use; loading it (and dgram, net's pipes, …) cost every command ~1.5 ms. In the bundles it is
 * required on first use instead.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'lazy' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, name) => require('node:child_process')[name] });",
      loader: 'js',
    }));
  },
};

function stamp(path) {
  const s = statSync(path);
  return [s.size, s.mtimeMs];
}

function writeAtomically(path, data) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** A file written while esbuild read it could be recorded with its new stamp but bundled old: retry. */
async function bundle(name, target) {
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    const built = await bundleOnce(name, target, started);
    if (built.newest < started - 1) return built;
    if (attempt === 3) throw new Error(`${name}: its input files kept changing while it was bundled`);
  }
}

async function bundleOnce(name, [modulePath, factory], started) {
  const entry = [
    "const { runClient } = require('./client-program.js');",
    `const { ${factory} } = require(${JSON.stringify(`${modulePath}.js`)});`,
    `exports.run = (argv) => runClient(argv, [${factory}(argv.slice(1))]);`,
  ].join('\n');
  const result = await esbuild.build({
    stdin: { contents: entry, resolveDir: DIST, sourcefile: `${name}.bundle-entry.js`, loader: 'js' }, // not on disk
    absWorkingDir: DIST,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    // `import()` becomes require(): a vm.Script (client-bundle.ts) has no module loader of its own
    // without an experimental flag. The packages imported so are CommonJS, so nothing else changes.
    supported: { 'dynamic-import': false },
    plugins: [lazyChildProcess],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((p) => p !== `${name}.bundle-entry.js` && !p.includes(':')) // the entry above, the plugin's virtual module
    .map((p) => {
      const abs = resolve(DIST, p);
      return [relative(DIST, abs), ...stamp(abs)];
    });
  // The table the entry was written from: a command moved to another module makes the bundle stale.
  inputs.push(['client-commands.js', ...stamp(join(DIST, 'client-commands.js'))]);
  const newest = Math.max(...inputs.map(([, , mtimeMs]) => mtimeMs));
  if (newest >= started - 1) return { newest };
  const js = join(DIST, `${name}.bundle.js`);
  // Stored inside Node's CommonJS wrapper (a function expression): only client-bundle.ts runs it.
  writeAtomically(js, WRAP_HEAD + result.outputFiles[0].text + WRAP_TAIL);
  // Written last: a manifest always describes a bundle that is complete on disk.
  writeAtomically(join(DIST, `${name}.bundle.json`), JSON.stringify({ bundle: stamp(js), inputs }));
  return { name, newest, bytes: result.outputFiles[0].contents.length };
}

async function main() {
  // Each bundle replaces its old one in place (a `registry` started meanwhile sees a stale manifest
  // and runs the compiled modules; an old code cache names the old bundle and is ignored, then
  // rewritten). Only the files of commands that are gone are removed.
  const built = await Promise.all(Object.entries(COMMAND_MODULES).map(([name, target]) => bundle(name, target)));
  for (const f of readdirSync(DIST)) {
    const m = /^(.+)\.bundle\.(js|json|cache)$/.exec(f);
    if (m && !Object.hasOwn(COMMAND_MODULES, m[1])) unlinkSync(join(DIST, f));
  }
  const kb = built.reduce((n, b) => n + b.bytes, 0) / 1024;
  console.log(`cli bundles: ${built.length} in ${relative(process.cwd(), DIST) || '.'} (${kb.toFixed(0)} KB)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
