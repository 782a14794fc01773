// A wall clock that a test can step while the process runs, as an NTP step, a resumed VM or a bad
// RTC steps it: Debian's libfaketime preloaded into the agent, reading its offset from a file on
// every call (FAKETIME_NO_CACHE), with the monotonic clock left alone (FAKETIME_DONT_FAKE_MONOTONIC)
// — only CLOCK_REALTIME moves, exactly the fault of issue #36.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';

const CANDIDATES = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/faketime/libfaketime.so.1'];

/** The libfaketime library, or why a clock test cannot run here (it must then skip, saying so). */
export function libfaketime(): { path: string } | { missing: string } {
  const path = CANDIDATES.find((p) => existsSync(p));
  if (!path) return { missing: `libfaketime is not installed (apt-get install libfaketime); looked in ${CANDIDATES.join(', ')}` };
  // Node must really see the offset on Date.now() and not on performance.now().
  const file = `/tmp/registry-fake-clock-probe-${process.pid}`;
  writeFileSync(file, '+10d\n');
  const probe = spawnSync(process.execPath, ['-e', `console.log(Date.now() - ${Date.now()})`], {
    env: { ...process.env, ...envFor(path, file) },
    encoding: 'utf8',
  });
  const skew = Number(probe.stdout.trim());
  if (!(skew > 9 * 86_400_000)) return { missing: `libfaketime at ${path} does not move Node's Date.now() (probe said ${probe.stdout.trim() || probe.stderr.trim()})` };
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
