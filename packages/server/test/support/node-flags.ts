// How an entry point asks to be run, on its `#!/usr/bin/env -S [NAME=value …] node …` line
// (packages/cli/bin/registry.js): the environment it sets and the Node flags it passes, so that
// servers spawned as `node <flags> <bin>` run as an installed `registry` does.
import { readFileSync } from 'node:fs';

export interface EntryRuntime {
  /** NAME=value assignments before `node` (e.g. glibc's tunables). */
  env: Record<string, string>;
  /** The flags after `node`. */
  flags: string[];
}

export function entryRuntimeOf(bin: string): EntryRuntime {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0]!;
  const m = /^#!\S*env -S (.*)$/.exec(first);
  const words = m ? m[1]!.trim().split(/\s+/).filter(Boolean) : [];
  const at = words.indexOf('node');
  if (at < 0) return { env: {}, flags: [] };
  const env: Record<string, string> = {};
  for (const word of words.slice(0, at)) {
    const eq = word.indexOf('=');
    if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { env, flags: words.slice(at + 1) };
}
