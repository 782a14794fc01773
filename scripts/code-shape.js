// The shape of the server package, as issue #26 counts it: folder pairs that import each other,
// imports into agent/ from other folders, and the largest files in packages/*/src.
// Usage: node scripts/code-shape.js [repository root]   (a tree of an older commit: git archive <rev> packages | tar -x -C <dir>)
const fs = require('fs'), path = require('path');
const root = path.resolve(process.argv[2] || '.');
const src = path.join(root, 'packages/server/src');
const files = [];
(function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.ts')) files.push(p); } })(src);
const folder = (f) => { const r = path.relative(src, f); return r.includes('/') ? r.split('/')[0] : r.replace(/\.ts$/, ''); };
const edges = new Map(); let up = [];
for (const f of files) {
  const text = fs.readFileSync(f, 'utf8');
  for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|require\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    const spec = m[1] || m[2] || m[3];
    const to = path.resolve(path.dirname(f), spec);
    if (!to.startsWith(src)) continue;
    const a = folder(f), b = folder(to.endsWith('.ts') ? to : to + '.ts');
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    edges.get(a).set(b, (edges.get(a).get(b) || 0) + 1);
    if (b === 'agent' && a !== 'index') up.push(`${path.relative(src, f)} -> ${spec}`);
  }
}
const pairs = [];
for (const [a, tos] of edges) for (const b of tos.keys()) if (a < b && edges.get(b)?.has(a)) pairs.push(`${a} <-> ${b}`);
console.log('server folders:', new Set(files.map(folder)).size, 'files:', files.length);
console.log('two-way folder pairs:', pairs.length, pairs.join(', '));
console.log('imports into agent/ from other folders:', up.length, up.slice(0, 10).join('; '));
const all = [];
for (const p of fs.readdirSync(path.join(root, 'packages'))) {
  const d = path.join(root, 'packages', p, 'src'); if (!fs.existsSync(d)) continue;
  (function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const q = path.join(d, e.name); if (e.isDirectory()) walk(q); else if (/\.tsx?$/.test(q)) all.push([fs.readFileSync(q, 'utf8').split('\n').length - 1, path.relative(root, q)]); } })(d);
}
all.sort((x, y) => y[0] - x[0]);
console.log('largest files:', all.slice(0, 8).map(([n, f]) => `${f} ${n}`).join(', '));
console.log('files over 600 lines:', all.filter(([n]) => n > 600).length);
