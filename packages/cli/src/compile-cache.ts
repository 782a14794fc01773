// V8's code cache for the modules `registry agent` loads (issue #34: a restarted server spent 0.8–1.0 s
// loading ~1,060 modules before it opened its data dir; with their compiled code cached, 0.58–0.60 s).
// Node 20 has no module.enableCompileCache (Node 22 has), so this does what it does, as the
// v8-compile-cache package did for Node ≤ 20: CommonJS modules are compiled through vm.Script with
// `cachedData`, and when any was compiled afresh the code of all of them is written into one file once
// the agent has started (so that it holds the functions start-up compiled too, not only each top level).
//
// A module's cached code is used only while the file has the size and mtime it had when the code was
// made (V8 itself checks only the source's length) and V8 accepts it (same Node, same flags); a module
// whose source has `import(` is compiled the usual way (vm.Script would need a loader for it). The
// cache file sits beside the compiled CLI, as the client commands' bundle caches do (client-bundle.ts);
// where it cannot be written (a read-only install) the agent runs without one. Concurrent writers
// (servers started together) each write a whole file and rename it into place.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { Module } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** Set (to anything but empty) to load every module the usual way. */
export const NO_COMPILE_CACHE_ENV = 'REGISTRY_NO_COMPILE_CACHE';
export const COMPILE_CACHE_FILE = 'agent.compile-cache';

/** What the file starts with: a cache made by another Node or architecture is not read. */
const MAGIC = `registry-compile-cache 1 ${process.version} ${process.arch}\n`;
const DYNAMIC_IMPORT = /\bimport\s*\(/;

interface Entry {
  size: number;
  mtimeMs: number;
  data: Buffer;
}

/** Node's CommonJS internals the hook stands in for (stable since Node 12; v8-compile-cache uses the same). */
interface ModuleInternals {
  prototype: { _compile(this: any, content: string, filename: string, format?: string): unknown };
  wrap(source: string): string;
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: unknown): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

export interface CompileCacheStats {
  /** Modules whose cached code V8 took. */
  hits: number;
  /** Modules compiled afresh (none cached, a changed file, code V8 refused). */
  misses: number;
  /** Modules left to Node (`import(` in their source). */
  skipped: number;
}

let stats: CompileCacheStats | null = null;
/** The cache file's code by path, until start-up is over (it is a few MB). */
let cached = new Map<string, Entry>();
let compiled: Map<string, { script: Script; size: number; mtimeMs: number }> | null = null;
let cacheFile = '';

/** Installs the hook (once); `dir` holds the cache file. */
export function enableCompileCache(dir: string): void {
  if (stats || process.env[NO_COMPILE_CACHE_ENV]) return;
  const file = join(dir, COMPILE_CACHE_FILE);
  cached = readCache(file);
  const counts: CompileCacheStats = { hits: 0, misses: 0, skipped: 0 };
  stats = counts;
  compiled = new Map();
  const M = Module as unknown as ModuleInternals;
  const original = M.prototype._compile;
  M.prototype._compile = function compileCached(this: any, content: string, filename: string, format?: string): unknown {
    let size: number;
    let mtimeMs: number;
    let script: Script;
    let cachedData: Buffer | undefined;
    try {
      // An ES module required (Node 20.19's require(esm) says so with `format`), `import(`: Node's way.
      if ((format !== undefined && format !== 'commonjs') || DYNAMIC_IMPORT.test(content)) throw new Error('not plain CommonJS');
      ({ size, mtimeMs } = statSync(filename));
      const hit = cached.get(filename);
      cachedData = hit && hit.size === size && hit.mtimeMs === mtimeMs ? hit.data : undefined;
      // A syntax error (an ES module Node would detect as one) is left to Node, which says it or detects it.
      script = new Script(M.wrap(content), { filename, cachedData });
    } catch {
      counts.skipped++;
      return original.call(this, content, filename, format);
    }
    if (cachedData && !script.cachedDataRejected) counts.hits++;
    else counts.misses++;
    compiled?.set(filename, { script, size, mtimeMs });
    const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return fn.call(this.exports, this.exports, requireFor(M, this), this, filename, dirname(filename));
  };
  cacheFile = file;
}

/** How the modules loaded so far were compiled (null when the cache is off). */
export function compileCacheStats(): CompileCacheStats | null {
  return stats && { ...stats };
}

/**
 * Start-up is over: when a module was compiled afresh, the code of all of them (with the functions
 * start-up compiled) is written now (~50 ms for the agent's ~1,000 modules, once per install or
 * upgrade); then the file's code and the scripts are let go: modules loaded later are compiled
 * afresh, and not written.
 */
export function compileCacheSettled(): void {
  if (stats && stats.misses > 0 && compiled) writeCache(cacheFile, compiled);
  cached = new Map();
  compiled = null;
}

/** The `require` Node gives a module (lib/internal/modules/helpers makeRequireFunction). */
function requireFor(M: ModuleInternals, mod: any): NodeJS.Require {
  const require = ((id: string) => mod.require(id)) as NodeJS.Require;
  const resolve = ((request: string, options?: unknown) => M._resolveFilename(request, mod, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => M._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = M._extensions as NodeJS.Require['extensions'];
  require.cache = M._cache as NodeJS.Require['cache'];
  return require;
}

/** File: MAGIC · u32 LE index length · index (JSON: [path, size, mtimeMs, offset, length][]) · code. */
function readCache(file: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return out;
  }
  try {
    if (buf.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) return out;
    const indexLength = buf.readUInt32LE(MAGIC.length);
    const start = MAGIC.length + 4;
    const index = JSON.parse(buf.subarray(start, start + indexLength).toString('utf8')) as [string, number, number, number, number][];
    const base = start + indexLength;
    for (const [path, size, mtimeMs, offset, length] of index) out.set(path, { size, mtimeMs, data: buf.subarray(base + offset, base + offset + length) });
  } catch {
    out.clear(); // a damaged file: every module compiled afresh, and the file replaced once started
  }
  return out;
}

/** Best effort (see the top of the file). */
function writeCache(file: string, scripts: Map<string, { script: Script; size: number; mtimeMs: number }>): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const index: [string, number, number, number, number][] = [];
    const code: Buffer[] = [];
    let offset = 0;
    for (const [path, { script, size, mtimeMs }] of scripts) {
      const data = script.createCachedData();
      index.push([path, size, mtimeMs, offset, data.length]);
      code.push(data);
      offset += data.length;
    }
    const indexBytes = Buffer.from(JSON.stringify(index));
    const head = Buffer.alloc(MAGIC.length + 4);
    head.write(MAGIC, 0, 'latin1');
    head.writeUInt32LE(indexBytes.length, MAGIC.length);
    const fd = openSync(tmp, 'w');
    try {
      for (const part of [head, indexBytes, ...code]) {
        for (let at = 0; at < part.length; ) at += writeSync(fd, part, at);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
  }
}
