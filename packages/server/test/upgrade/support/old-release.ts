// An earlier commit of this repository, built as a release the tests can run: its tree from git
// (`git archive`, which leaves the repository's worktree list alone), dependencies, `tsc -b`. The
// build is kept under os.tmpdir()/registry-upgrade-<commit> and reused by later runs: only the
// first run on a machine pays for the compile (40–80 s on a loaded 2-core machine).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO } from '../../support/processes';

/** What a finished build wrote last (its absence means an interrupted build: it is redone). */
const BUILT = 'registry-upgrade-built.json';

interface BuiltMarker {
  commit: string;
  /** 'linked': node_modules is links into this checkout's; 'installed': its own `npm ci`. */
  deps: 'linked' | 'installed';
}

export interface OldRelease {
  commit: string;
  /** The release's root folder. */
  root: string;
  /** Its `registry` entry point, to run with `node`. */
  bin: string;
  deps: BuiltMarker['deps'];
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
}

function lockPackages(text: string): Record<string, LockEntry> {
  return (JSON.parse(text) as { packages?: Record<string, LockEntry> }).packages ?? {};
}

/**
 * Why `oldLock`'s dependencies cannot be served by this checkout's node_modules, or undefined when
 * they can: every package the old lock installs is installed here at the same version and hash.
 * Packages this checkout has on top (added since) are harmless: the old code never requires them.
 * A dependency nested under a workspace (packages/x/node_modules/…) would need its own folder in
 * the old tree, so it counts as a difference too.
 */
export function dependencyDifference(oldLock: string, newLock: string): string | undefined {
  const before = lockPackages(oldLock);
  const now = lockPackages(newLock);
  for (const [path, entry] of Object.entries(before)) {
    // The root and the workspace packages themselves come from the old tree.
    if (path === '' || /^packages\/[^/]+$/.test(path)) continue;
    if (path.startsWith('packages/')) return `${path} is installed inside a workspace`;
    const here = now[path];
    if (!here) return `${path} is not installed here`;
    if (entry.link || here.link) {
      if (entry.link !== here.link || entry.resolved !== here.resolved) return `${path} links elsewhere`;
      continue;
    }
    if (entry.version !== here.version || entry.integrity !== here.integrity) return `${path} is ${entry.version} there, ${here.version} here`;
  }
  return undefined;
}

/**
 * The old tree's node_modules as links: each top-level entry to this checkout's (Node resolves
 * a package to its real path, so its own dependencies come from there too), except the
 * workspace packages, node_modules/@registry/*, which must be the old tree's own, as npm makes
 * them: relative links into its packages/.
 */
function linkDependencies(root: string): void {
  const mine = join(REPO, 'node_modules');
  const theirs = join(root, 'node_modules');
  if (linkedTo(root) === mine) return; // already this checkout's: left alone, as a running old server may still load from it
  rmSync(theirs, { recursive: true, force: true }); // links only: rmSync does not follow them
  mkdirSync(join(theirs, '@registry'), { recursive: true });
  for (const entry of readdirSync(mine)) {
    if (entry === '@registry' || entry === '.package-lock.json') continue;
    symlinkSync(join(mine, entry), join(theirs, entry));
  }
  for (const pkg of readdirSync(join(root, 'packages'))) {
    if (existsSync(join(root, 'packages', pkg, 'package.json'))) symlinkSync(join('..', '..', 'packages', pkg), join(theirs, '@registry', pkg));
  }
}

/** Where the old tree's dependency links point (the node_modules they are in), if they are links. */
function linkedTo(root: string): string | undefined {
  try {
    return dirname(readlinkSync(join(root, 'node_modules', 'typescript')));
  } catch {
    return undefined;
  }
}

function run(cmd: string, args: string[], cwd: string): void {
  try {
    execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer; message: string };
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
  }
}

function readBuilt(root: string): BuiltMarker | undefined {
  try {
    return JSON.parse(readFileSync(join(root, BUILT), 'utf8')) as BuiltMarker;
  } catch {
    return undefined;
  }
}

/**
 * `commit` built and ready to run. It must be in this clone's history: a shallow clone lacks it,
 * and is told how to fetch it.
 */
export function oldRelease(commit: string): OldRelease {
  const root = join(tmpdir(), `registry-upgrade-${commit}`);
  const release = (deps: BuiltMarker['deps']): OldRelease => ({ commit, root, bin: join(root, 'packages/cli/bin/registry.js'), deps });
  const built = readBuilt(root);
  if (built?.commit === commit) {
    // The links point into whichever checkout built it, which may be gone (CI clones are
    // temporary): made again into this one, which has the same dependencies or it would not link.
    if (built.deps === 'linked') {
      const difference = dependencyDifference(readFileSync(join(root, 'package-lock.json'), 'utf8'), readFileSync(join(REPO, 'package-lock.json'), 'utf8'));
      if (difference === undefined) {
        linkDependencies(root);
        return release('linked');
      }
      // This checkout's dependencies moved on since: build again with an install of its own.
    } else {
      return release('installed');
    }
  }

  try {
    execFileSync('git', ['-C', REPO, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`commit ${commit} is not in ${REPO}'s git history (a shallow clone, or a tree without .git?): \`git fetch --unshallow\` and run again`);
  }
  // Built beside the cache folder and renamed into place when done, so an interrupted build is never taken for a finished one.
  const work = `${root}.partial-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    run('bash', ['-o', 'pipefail', '-c', 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', REPO, commit, work], REPO);
    const difference = dependencyDifference(readFileSync(join(work, 'package-lock.json'), 'utf8'), readFileSync(join(REPO, 'package-lock.json'), 'utf8'));
    let deps: BuiltMarker['deps'];
    if (difference === undefined) {
      linkDependencies(work);
      deps = 'linked';
    } else {
      // Its own install, from npm's cache where it can (its `prepare` script builds it too).
      run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], work);
      deps = 'installed';
    }
    run(process.execPath, [join(work, 'node_modules/typescript/bin/tsc'), '-b', 'packages/cli'], work);
    writeFileSync(join(work, BUILT), JSON.stringify({ commit, deps } satisfies BuiltMarker) + '\n');
    rmSync(root, { recursive: true, force: true });
    renameSync(work, root);
    // The @registry links are relative and survive the move; the others are absolute.
    return release(deps);
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
}
