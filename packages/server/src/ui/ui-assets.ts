// Where the web UI's files are: the built-in bundle of @registry/ui (its static/ folder and tsc's
// dist/), or the one folder `ui_dir` names. Found through the package, not a path relative to
// this file, so it works the same from src/ under jest and from dist/ when installed.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface UiAssets {
  /** Folders served at /ui/, first match wins. */
  dirs: string[];
  /** Why the UI cannot be served (the bundle was not built), to be logged once at start. */
  problem?: string;
}

export function uiAssets(uiDir?: string): UiAssets {
  if (uiDir !== undefined) {
    const dir = resolve(uiDir);
    return existsSync(join(dir, 'index.html')) ? { dirs: [dir] } : { dirs: [dir], problem: `ui_dir ${dir} has no index.html` };
  }
  let root: string;
  try {
    root = dirname(require.resolve('@registry/ui/package.json'));
  } catch {
    return { dirs: [], problem: 'the @registry/ui package is not installed' };
  }
  const dirs = [join(root, 'static'), join(root, 'dist')];
  if (!existsSync(join(root, 'dist', 'app.js'))) return { dirs, problem: `the UI bundle is not built (${join(root, 'dist')}): run npm run build` };
  return { dirs };
}
