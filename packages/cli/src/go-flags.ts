// Consul's flags are Go-style single-dash (`-dev`, `-retry-join=x`); commander wants `--`.
// Rewrite `-name[=value]` words to `--name[=value]` before parsing, leaving values alone. Go's
// boolean flags also take `-name=true|false`; commander's booleans take no value, so those words
// become `--name` (true) or are dropped (false, every such flag's default) — `-shell=false`, whose
// default is true, becomes `--no-shell`.
const BOOLEAN_FLAGS = new Set([
  'shell',
  'pass-stdin',
  'child-exit-code',
  'verbose',
  'stale',
  'detailed',
  'recurse',
  'base64',
  'keys',
  'cas',
  'passingonly',
  'tags',
  'enable',
  'disable',
  'allow',
  'deny',
  'replace',
  'local',
  'merge-policies',
  'merge-datacenters',
  'wan',
  'server',
  'client',
  'cli',
  'name-constraint',
]);
const DEFAULT_TRUE = new Set(['shell']);

export function goFlagsToLong(argv: string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    // Not a flag: as typed, without the patterns below (the first use of each costs start-up CPU).
    if (!a.startsWith('-')) {
      out.push(a);
      continue;
    }
    const bool = /^--?([a-zA-Z][a-zA-Z0-9-]*)=(true|false|1|0|t|f)$/i.exec(a);
    if (bool && BOOLEAN_FLAGS.has(bool[1])) {
      const on = /^(true|1|t)$/i.test(bool[2]);
      if (on) out.push(`--${bool[1]}`);
      else if (DEFAULT_TRUE.has(bool[1])) out.push(`--no-${bool[1]}`);
      continue;
    }
    const short = /^-([a-zA-Z])=(.*)$/.exec(a);
    if (short) {
      out.push(`-${short[1]}`, short[2]);
      continue;
    }
    out.push(/^-[a-zA-Z][a-zA-Z0-9-]+(=.*)?$/.test(a) ? '-' + a : a);
  }
  return out;
}

/**
 * For commands that run a child (`lock PREFIX CHILD...`): Go stops parsing flags at the first
 * argument that is not one, so the words from there on are the child's and must stay as typed.
 * Returns the rewritten flags and operand(s) before the child, then the child's words as typed
 * (the command parses with passThroughOptions, so nothing after its operand is read as a flag).
 */
export function splitChildWords(argv: string[], valueFlags: Set<string>, operandsBeforeChild: number): string[] {
  let i = 0;
  let operands = 0;
  while (i < argv.length) {
    const a = argv[i];
    if (a === '--') {
      i += 1;
      break;
    }
    const flag = /^--?([a-zA-Z][a-zA-Z0-9-]*)(=.*)?$/.exec(a);
    if (flag) {
      i += flag[2] === undefined && valueFlags.has(flag[1]) ? 2 : 1;
      continue;
    }
    operands += 1;
    i += 1;
    if (operands === operandsBeforeChild) break;
  }
  return [...goFlagsToLong(argv.slice(0, i).filter((w, k) => !(w === '--' && k === i - 1))), ...argv.slice(i)];
}
