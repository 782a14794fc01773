// A wall clock that a test can step while the process runs, as an NTP step, a resumed VM or a bad
// RTC steps it: Debian's libfaketime preloaded into the agent, reading its offset from a file on
// every call (FAKETIME_NO_CACHE), with the monotonic clock left alone (FAKETIME_DONT_FAKE_MONOTONIC)
// — only CLOCK_REALTIME moves, exactly the fault of issue #36.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';

const CANDIDATES = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/faketime/libfaketime.so.1'];

let probed: { path: string } | { missing: string } | undefined;

/**
 * The libfaketime library, or why a clock test cannot run here (it must then skip, saying so).
 * Probed once per test file: Node under it must see the offset on Date.now() and must not see it
 * on its monotonic clocks (performance.now() and process.hrtime, which the server's timers read).
 */
export function libfaketime(): { path: string } | { missing: string } {
  probed ??= probe();
  return probed;
}

function probe(): { path: string } | { missing: string } {
  const path = CANDIDATES.find((p) => existsSync(p));
  if (!path) return { missing: `libfaketime is not installed (apt-get install libfaketime); looked in ${CANDIDATES.join(', ')}` };
  const file = `/tmp/registry-fake-clock-probe-${process.pid}`;
  writeFileSync(file, '+10d\n');
  // A 300 ms timer, measured by each clock: the wall clock's offset shows, the monotonic ones run true.
  const script =
    'const w=Date.now(),m=performance.now(),h=process.hrtime.bigint();' +
    'setTimeout(()=>console.log(JSON.stringify({wall:w,mono:performance.now()-m,hr:Number(process.hrtime.bigint()-h)/1e6})),300)';
  const before = Date.now();
  const run = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...envFor(path, file) }, encoding: 'utf8', timeout: 20_000 });
  rmSync(file, { force: true });
  let seen: { wall: number; mono: number; hr: number };
  try {
    seen = JSON.parse(run.stdout) as typeof seen;
  } catch {
    return { missing: `libfaketime at ${path} could not be loaded into Node: ${run.stderr.trim() || run.error?.message || run.stdout.trim()}` };
  }
  const skew = seen.wall - before;
  if (!(skew > 9 * 86_400_000 && skew < 11 * 86_400_000)) return { missing: `libfaketime at ${path} does not move Node's Date.now() by +10 days (off by ${skew} ms)` };
  const monotonic = (ms: number) => ms >= 250 && ms < 5_000;
  if (!monotonic(seen.mono) || !monotonic(seen.hr)) return { missing: `libfaketime at ${path} moved Node's monotonic clock (${seen.mono} ms by performance.now(), ${seen.hr} ms by hrtime, for a 300 ms timer)` };
  return { path };
}

function envFor(lib: string, file: string): Record<string, string> {
  return { LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

/** One process's wall clock: `env` goes into its environment, `set('+1h')` / `set('-10m')` steps it. */
export class FakeClock {
  constructor(
    private readonly lib: string,
    private readonly file: string,
    offset = '+0',
  ) {
    this.set(offset);
  }

  get env(): Record<string, string> {
    return envFor(this.lib, this.file);
  }

  /** libfaketime's relative offset syntax: `+0`, `+10m`, `-1h`, `+2d`. Takes effect at the process's next clock read. */
  set(offset: string): void {
    writeFileSync(this.file, `${offset}\n`);
  }
}
