// The Node flags an entry point asks for on its `#!/usr/bin/env -S node …` line (packages/cli/bin/
// registry.js), so that servers spawned as `node <flags> <bin>` run as an installed `registry` does.
import { readFileSync } from 'node:fs';

export function nodeFlagsOf(bin: string): string[] {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0]!;
  const m = /^#!\S*env -S node\b(.*)$/.exec(first);
  return m ? m[1]!.trim().split(/\s+/).filter(Boolean) : [];
}
