// No user pattern reaches a backtracking engine again (issue 33 finding 5): every source file of
// every package is scanned for the ways a string becomes a JavaScript RegExp — `RegExp(…)` with or
// without `new`, and `.match(…)` / `.matchAll(…)` / `.search(…)`, which compile a string argument —
// and each use must be a regular-expression literal, inside the one module for users' patterns
// (server/src/regexp/user-regexp.ts, RE2), or on the allow-list below with the reason it is safe.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const PACKAGES = resolve(__dirname, '../../..');
const THE_MODULE = 'server/src/regexp/user-regexp.ts';

/** Uses that are not users' patterns: file (relative to packages/), the line's text, and why. */
const ALLOWED: { file: string; contains: string; why: string }[] = [
  { file: 'store/src/intentions/intention-reads.ts', contains: 'table.match(side', why: "the intention table's own match method, not String.prototype.match" },
];

/** A use that compiles a pattern at run time: RegExp(…) always; match/matchAll/search unless given a literal. */
const DYNAMIC = [/\bRegExp\s*\(/, /\.(?:match|matchAll|search)\s*\(\s*(?!\/)/];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every line of code (comments dropped) that builds a RegExp from something other than a literal. */
function dynamicUses(file: string, text: string): { file: string; line: number; text: string }[] {
  const out: { file: string; line: number; text: string }[] = [];
  text.split('\n').forEach((raw, i) => {
    const code = raw.replace(/^\s*(\/\/|\*|\/\*).*$/, '').replace(/\s\/\/\s.*$/, '');
    if (DYNAMIC.some((re) => re.test(code))) out.push({ file, line: i + 1, text: raw.trim() });
  });
  return out;
}

function allUses() {
  const packages = readdirSync(PACKAGES).filter((p) => statSync(join(PACKAGES, p, 'src'), { throwIfNoEntry: false })?.isDirectory());
  return packages.flatMap((p) => sourceFiles(join(PACKAGES, p, 'src')).flatMap((f) => dynamicUses(relative(PACKAGES, f), readFileSync(f, 'utf8'))));
}

test('no source file outside the one regexp module builds a RegExp from a string', () => {
  const uses = allUses().filter((u) => u.file !== THE_MODULE);
  const unexplained = uses.filter((u) => !ALLOWED.some((a) => a.file === u.file && u.text.includes(a.contains)));
  expect(unexplained).toEqual([]);
});

test('every allow-list entry still names a real use (a stale entry would hide a new one)', () => {
  const uses = allUses();
  expect(ALLOWED.filter((a) => !uses.some((u) => u.file === a.file && u.text.includes(a.contains)))).toEqual([]);
});

test('the one module is the only place a user pattern is compiled, and it uses RE2, not RegExp', () => {
  const text = readFileSync(join(PACKAGES, THE_MODULE), 'utf8');
  expect(text).toMatch(/from 're2js'/);
  expect(dynamicUses(THE_MODULE, text)).toEqual([]);
});

test('the scanner sees the forms that compile a string (it would notice a new one)', () => {
  const sample = [
    'const a = new RegExp(source);',
    "const b = RegExp(`^${key}`, 'm');",
    'name.match(filter);',
    'name.search(userInput)',
    'const ok = /^literal$/.test(x);',
    "name.match(/^[a-z]+$/);",
    '// new RegExp(in a comment)',
  ].join('\n');
  expect(dynamicUses('x.ts', sample).map((u) => u.line)).toEqual([1, 2, 3, 4]);
});
