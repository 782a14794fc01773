// A client command loaded from its bundle (scripts/build-bundles.js): one file holding the command,
// commander and the client code, instead of ~20 modules resolved and compiled one by one (resolving
// commander's package `exports` alone starts Node's ESM resolver), compiled with a V8 code cache
// kept beside it. Node 20 has no module.enableCompileCache, hence vm.Script and its cachedData.
//
// A bundle is used only while it is fresh: the bundle and every input file the build step recorded
// still have the size and mtime it saw. Otherwise (a `tsc -b` without the bundle step, an edited
// file, a reinstalled dependency) the answer is undefined and main.ts loads the compiled modules,
// so a stale bundle never runs.
import { closeSync, fstatSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { Module, createRequire } from 'node:module';
import { isAbsolute, resolve, sep } from 'node:path';
import { Script } from 'node:vm';

/** What a bundle's entry exports (the entry the build step writes for each command). */
export interface ClientBundle {
  run(argv: string[]): Promise<void>;
}

/** `<name>.bundle.json`, written after the bundle; paths are relative to the bundle's folder. */
export interface BundleManifest {
  bundle: [size: number, mtimeMs: number];
  inputs: [path: string, size: number, mtimeMs: number][];
}

/** Set (to anything but empty) to run the compiled modules even where a fresh bundle exists. */
export const NO_BUNDLE_ENV = 'REGISTRY_CLI_NO_BUNDLE';

export function bundleFiles(dir: string, name: string): { js: string; manifest: string; cache: string } {
  const base = `${dir}${sep}${name}.bundle`;
  return { js: `${base}.js`, manifest: `${base}.json`, cache: `${base}.cache` };
}

function unchanged(path: string, size: number, mtimeMs: number): boolean {
  const s = statSync(path, { throwIfNoEntry: false });
  return s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
}

/**
 * What the build step writes around a bundle: Node's own CommonJS wrapper, on the first line so that
 * line numbers match. Wrapped on disk rather than here: joining 170 KB of source to a wrapper makes
 * V8 copy it into a new young-generation string, enough to bring on a scavenge.
 */
export const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
export const WRAP_TAIL = '\n})';

export function loadBundle(dir: string, name: string): ClientBundle | undefined {
  if (process.env[NO_BUNDLE_ENV]) return undefined;
  if (!isAbsolute(dir)) dir = resolve(dir);
  const files = bundleFiles(dir, name);
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(readFileSync(files.manifest, 'utf8')) as BundleManifest;
  } catch {
    return undefined;
  }
  // Joined by hand: path.join's normalising of `../../../node_modules/…` cost more than the stats.
  for (const [path, size, mtimeMs] of manifest.inputs) if (!unchanged(dir + sep + path, size, mtimeMs)) return undefined;
  // The bundle's size and mtime from the descriptor it is read through: they name the source the
  // code cache was made from (V8 itself checks only the source's length).
  let source: string;
  let key: string;
  try {
    const fd = openSync(files.js, 'r');
    try {
      const st = fstatSync(fd);
      if (st.size !== manifest.bundle[0] || st.mtimeMs !== manifest.bundle[1]) return undefined;
      source = readFileSync(fd, 'utf8');
      key = `${process.version} ${st.size} ${st.mtimeMs}\n`;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const cachedData = readCache(files.cache, key);
  const script = new Script(source, {
    filename: files.js,
    cachedData,
  });
  // Written at exit, so that it also holds the functions this run compiled, not only the top level.
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => writeCache(files.cache, key, script));
  // A module like any other in require.cache, so that what a run loaded can be listed the usual way.
  const module = new Module(files.js);
  module.filename = files.js;
  require.cache[files.js] = module;
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(files.js), module, files.js, dir);
  module.loaded = true;
  return module.exports as ClientBundle;
}

function readCache(file: string, key: string): Buffer | undefined {
  try {
    const buf = readFileSync(file);
    return buf.subarray(0, key.length).toString('latin1') === key ? buf.subarray(key.length) : undefined;
  } catch {
    return undefined;
  }
}

/** Best effort: a read-only install runs without a cache; a rename keeps concurrent writers whole. */
function writeCache(file: string, key: string, script: Script): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(key, 'latin1'), script.createCachedData()]));
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
  }
}
