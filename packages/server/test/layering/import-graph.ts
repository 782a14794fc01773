// The import graph of a package's src/, read with TypeScript's own pre-processor (imports,
// re-exports and `import type` alike: a type import is still a dependency between layers).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

export interface ImportGraph {
  /** File (relative to src/, without extension) → the files it imports, same form. */
  edges: Map<string, Set<string>>;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

export function importGraph(srcDir: string): ImportGraph {
  const edges = new Map<string, Set<string>>();
  const id = (file: string) => relative(srcDir, file).replace(/\.ts$/, '');
  for (const file of sourceFiles(srcDir)) {
    const targets = new Set<string>();
    for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const base = resolve(dirname(file), ref.fileName);
      const candidates = [`${base}.ts`, join(base, 'index.ts')];
      const hit = candidates.find((c) => {
        try {
          return statSync(c).isFile();
        } catch {
          return false;
        }
      });
      if (hit) targets.add(id(hit));
    }
    edges.set(id(file), targets);
  }
  return { edges };
}

/** Strongly connected components with more than one file (or a self-import): the import circles. */
export function circles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.edges.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of graph.edges.keys()) if (!index.has(v)) visit(v);
  return found;
}
