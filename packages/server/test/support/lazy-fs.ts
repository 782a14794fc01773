// A disk that loses what was not synced: lazy-fs.py (its header says the model) mounted over FUSE,
// and cut — the daemon SIGKILLed, its mount lazily unmounted, a new daemon mounted on what it had
// written through — as a power cut would. Cut only after the processes using the mount are dead
// (killed with SIGKILL: a power cut gives them no chance to sync either).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from './wait';

const SCRIPT = join(__dirname, 'lazy-fs.py');
// Debian's python3-fusepy lands under the system python, whatever python3 comes first on PATH.
const PYTHON = '/usr/bin/python3';

/** Why lazy-fs cannot run here (undefined: it can). */
export function lazyFsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux: no FUSE';
  if (process.getuid?.() !== 0) return 'not root: mounting the power-cut file system needs root';
  if (!existsSync('/dev/fuse')) return '/dev/fuse is missing: no FUSE on this machine';
  const probe = spawnSync(PYTHON, ['-c', 'import fusepy'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `${PYTHON} cannot import fusepy (apt-get install -y python3-fusepy fuse3)`;
  return undefined;
}

function mounted(mountpoint: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === mountpoint && / - fuse lazyfs /.test(line));
}

export class LazyFs {
  private daemon: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  cuts = 0;

  private constructor(
    /** What is durable: the disk. */
    readonly disk: string,
    /** Where processes read and write. */
    readonly mountpoint: string,
    private readonly logFile: string,
  ) {}

  static async mount(disk: string, mountpoint: string, logFile: string): Promise<LazyFs> {
    mkdirSync(disk, { recursive: true });
    mkdirSync(mountpoint, { recursive: true });
    const fs = new LazyFs(disk, mountpoint, logFile);
    await fs.start();
    return fs;
  }

  private async start(): Promise<void> {
    const child = spawn(PYTHON, [SCRIPT, this.disk, this.mountpoint], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(this.logFile, { flags: 'a' });
    // Neither stream may end the shared file (see processes.ts spawnAgent): it ends once the child closed both.
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    child.on('close', () => log.end());
    this.daemon = child;
    this.exited = new Promise((r) => child.on('exit', () => r()));
    let gone = false;
    void this.exited.then(() => (gone = true));
    if (!(await eventually(() => gone || mounted(this.mountpoint), 10_000, 20)) || gone) {
      throw new Error(`lazy-fs did not mount ${this.mountpoint}:\n${readFileSync(this.logFile, 'utf8').slice(-2000)}`);
    }
  }

  private async kill(): Promise<void> {
    const d = this.daemon;
    this.daemon = null;
    if (d && d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
    await this.exited;
    if (mounted(this.mountpoint)) spawnSync('umount', ['-l', this.mountpoint]);
  }

  /** The power cut: everything not synced is gone; the mount then shows exactly the disk. */
  async cut(): Promise<void> {
    await this.kill();
    this.cuts += 1;
    await this.start();
  }

  async unmount(): Promise<void> {
    await this.kill();
  }
}
