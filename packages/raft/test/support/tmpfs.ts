// A small tmpfs for full-disk tests (root only): mount it, fill it with a file until ENOSPC, free
// the space again, unmount. Where mounting is not permitted, `skipReason` says why.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Tmpfs {
  private filler: string | undefined;

  private constructor(
    private readonly base: string,
    /** The mount point. */
    readonly dir: string,
    readonly mounted: boolean,
    /** Why the tests using it are skipped ('' when mounted). */
    readonly skipReason: string,
  ) {}

  static mount(prefix: string, sizeMb: number): Tmpfs {
    const base = mkdtempSync(join(tmpdir(), prefix));
    const dir = join(base, 'mnt');
    mkdirSync(dir);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
      return new Tmpfs(base, dir, true, '');
    } catch (err) {
      return new Tmpfs(base, dir, false, `skipping: cannot mount a tmpfs for the full disk (${(err as Error).message.split('\n')[0]})`);
    }
  }

  /** Fill the file system with one file, in shrinking chunks until not a byte more fits; returns its path. */
  fill(): string {
    const path = join(this.dir, 'filler');
    this.filler = path;
    const fd = openSync(path, 'w');
    try {
      for (const size of [1 << 20, 64 << 10, 4 << 10, 1]) {
        const chunk = Buffer.alloc(size, 7);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        }
      }
    } finally {
      closeSync(fd);
    }
    return path;
  }

  /** Delete the filler, if any. */
  free(): void {
    if (this.filler) rmSync(this.filler, { force: true });
    this.filler = undefined;
  }

  /** Free, unmount (lazily if still busy) and remove the folder. */
  unmount(): void {
    this.free();
    if (this.mounted) {
      try {
        execFileSync('umount', [this.dir], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', this.dir], { stdio: 'pipe' });
      }
    }
    rmSync(this.base, { recursive: true, force: true });
  }
}
